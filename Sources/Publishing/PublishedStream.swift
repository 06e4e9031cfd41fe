public import AACBitstream

/// What a destination announces before the first frame: the AAC stream's configuration (the
/// RTMP sequence header, the MPEG-TS program, the Icecast content type) and its descriptive
/// names.
public struct PublishedStream: Sendable, Hashable {
    /// The stream's AudioSpecificConfig (ISO/IEC 14496-3 1.6.2.1), sent as RTMP's AAC sequence
    /// header and used for ADTS headers.
    public var audioSpecificConfig: AudioSpecificConfig
    /// Samples per second at the output (the sample clock the timestamps count).
    public var sampleRate: Int
    /// Channels.
    public var channelCount: Int
    /// Bits per second, as announced (`onMetaData`'s `audiodatarate`, Icecast's `ice-bitrate`).
    public var bitrate: Int
    /// The stream's title (Icecast's `ice-name` and first song title; RTMP `onMetaData`'s `title`).
    public var title: String?
    /// A description (Icecast's `ice-description`).
    public var description: String?
    /// A genre (Icecast's `ice-genre`).
    public var genre: String?

    /// A stream of `audioSpecificConfig` at `sampleRate` with `channelCount` channels.
    public init(audioSpecificConfig: AudioSpecificConfig, sampleRate: Int, channelCount: Int, bitrate: Int,
                title: String? = nil, description: String? = nil, genre: String? = nil) {
        self.audioSpecificConfig = audioSpecificConfig
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.bitrate = bitrate
        self.title = title
        self.description = description
        self.genre = genre
    }
}

/// One session with one server: connect and announce the stream, send frames, end. A
/// destination (``LiveDestination``) opens a new session after each passing failure.
///
/// Sessions are used by one thread; ``abort()`` may come from another.
package protocol PublishingSession: AnyObject, Sendable {
    /// Connects, announces the stream (RTMP `connect` … `publish` and the AAC sequence header;
    /// Icecast's PUT headers; SRT's PAT and PMT) and returns when frames may be sent.
    func open(_ stream: PublishedStream, deadline: ContinuousClock.Instant) throws(PublishingError)
    /// Sends one raw AAC frame (no ADTS header) that starts `timestamp` samples after the
    /// stream's first (the sample clock, continuing across reconnects).
    func send(frame: ArraySlice<UInt8>, timestamp: Int64, deadline: ContinuousClock.Instant) throws(PublishingError)
    /// Sends frames that are due together (a capture's period brings several), in order, in as
    /// few writes as the protocol allows; by default one ``send(frame:timestamp:deadline:)`` each.
    func send(frames: [QueuedFrame], deadline: ContinuousClock.Instant) throws(PublishingError)
    /// A new title while live (Icecast's metadata update, RTMP's `onMetaData`); by default ignored.
    func update(title: String, deadline: ContinuousClock.Instant) throws(PublishingError)
    /// Ends the stream in the protocol's way (RTMP `FCUnpublish`/`deleteStream`, Icecast's end
    /// of the PUT body, SRT's flush) and closes the connection.
    func finish(deadline: ContinuousClock.Instant) throws(PublishingError)
    /// Drops the connection at once (from any thread).
    func abort()
}

/// A raw AAC frame and its time on the stream's sample clock.
package struct QueuedFrame: Sendable {
    /// The frame's bytes (no ADTS header).
    package var data: [UInt8]
    /// Samples from the stream's first.
    package var timestamp: Int64

    package init(data: [UInt8], timestamp: Int64) {
        self.data = data
        self.timestamp = timestamp
    }
}

extension PublishingSession {
    /// Sends each frame in turn.
    package func send(frames: [QueuedFrame], deadline: ContinuousClock.Instant) throws(PublishingError) {
        for frame in frames { try send(frame: frame.data[...], timestamp: frame.timestamp, deadline: deadline) }
    }

    /// Ignores the title.
    package func update(title: String, deadline: ContinuousClock.Instant) throws(PublishingError) {}
}
