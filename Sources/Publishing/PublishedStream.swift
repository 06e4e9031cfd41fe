public import AACBitstream
public import MediaCore

/// What a destination announces before the first frame: the stream's codec and configuration
/// (the RTMP sequence header, the MPEG-TS program, the Icecast content type) and its
/// descriptive names.
public struct PublishedStream: Sendable, Hashable {
    /// The stream's codec, rate, channels and configuration bytes, as its packets carry them.
    public var format: EncodedAudioFormat
    /// For AAC, the stream's AudioSpecificConfig (ISO/IEC 14496-3 1.6.2.1), sent as RTMP's AAC
    /// sequence header and used for ADTS headers; `nil` for another codec.
    public var audioSpecificConfig: AudioSpecificConfig?
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
    /// Whether the stream carries timed metadata (ID3 tags): SRT's transport stream lists a
    /// timed ID3 stream in its PMT. `false` by default.
    public var carriesTimedMetadata = false

    /// A stream of `format`, its AudioSpecificConfig parsed from the configuration bytes for AAC.
    ///
    /// - Throws: ``PublishingError/Reason/invalidDestination`` for an AAC configuration that does
    ///   not parse.
    public init(format: EncodedAudioFormat, bitrate: Int, title: String? = nil, description: String? = nil,
                genre: String? = nil) throws(PublishingError) {
        self.format = format
        if format.codec == .aac {
            do { audioSpecificConfig = try AudioSpecificConfig(bytes: format.decoderConfiguration) } catch {
                throw PublishingError(.invalidDestination, "the stream's AudioSpecificConfig: \(error)")
            }
        } else {
            audioSpecificConfig = nil
        }
        sampleRate = format.sampleRate
        channelCount = format.channelCount
        self.bitrate = bitrate
        self.title = title
        self.description = description
        self.genre = genre
    }

    /// An AAC stream of `audioSpecificConfig` at `sampleRate` with `channelCount` channels.
    public init(audioSpecificConfig: AudioSpecificConfig, sampleRate: Int, channelCount: Int, bitrate: Int,
                title: String? = nil, description: String? = nil, genre: String? = nil) {
        let bytes = (try? audioSpecificConfig.serialized()) ?? []
        format = EncodedAudioFormat(codec: .aac, sampleRate: sampleRate, channelCount: channelCount, framesPerPacket: 1024,
                                    decoderConfiguration: bytes)
        self.audioSpecificConfig = audioSpecificConfig
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.bitrate = bitrate
        self.title = title
        self.description = description
        self.genre = genre
    }

    /// The AudioSpecificConfig of an AAC stream, for a protocol that carries AAC alone.
    ///
    /// - Throws: ``PublishingError/Reason/invalidDestination`` for another codec.
    package func aacConfiguration(for protocolName: String) throws(PublishingError) -> AudioSpecificConfig {
        guard let audioSpecificConfig else {
            throw PublishingError(.invalidDestination, "\(protocolName) carries AAC here; the stream is \(format.codec)")
        }
        return audioSpecificConfig
    }
}

/// One session with one server: connect and announce the stream, send frames, end. A
/// destination (``LiveDestination``) opens a new session after each passing failure.
///
/// Sessions are used by one thread; ``abort()`` may come from another.
public protocol PublishingSession: AnyObject, Sendable {
    /// Connects, announces the stream (RTMP `connect` … `publish` and the AAC sequence header;
    /// Icecast's PUT headers; SRT's PAT and PMT) and returns when frames may be sent.
    func open(_ stream: PublishedStream, deadline: ContinuousClock.Instant) throws(PublishingError)
    /// Sends one packet (for AAC a raw frame, no ADTS header) that starts `timestamp` samples after the
    /// stream's first (the sample clock, continuing across reconnects).
    func send(frame: ArraySlice<UInt8>, timestamp: Int64, deadline: ContinuousClock.Instant) throws(PublishingError)
    /// Sends frames that are due together (a capture's period brings several), in order, in as
    /// few writes as the protocol allows; by default one ``send(frame:timestamp:deadline:)`` each.
    func send(frames: [QueuedFrame], deadline: ContinuousClock.Instant) throws(PublishingError)
    /// A new title while live (Icecast's metadata update, RTMP's `onMetaData`); by default ignored.
    func update(title: String, deadline: ContinuousClock.Instant) throws(PublishingError)
    /// An ID3 tag of timed metadata at `timestamp` on the sample clock (SRT: a PES packet of the
    /// timed ID3 stream); by default ignored.
    func send(timedMetadata tag: [UInt8], timestamp: Int64, deadline: ContinuousClock.Instant) throws(PublishingError)
    /// Ends the stream in the protocol's way (RTMP `FCUnpublish`/`deleteStream`, Icecast's end
    /// of the PUT body, SRT's flush) and closes the connection.
    func finish(deadline: ContinuousClock.Instant) throws(PublishingError)
    /// Drops the connection at once (from any thread).
    func abort()
}

/// A packet (for AAC a raw frame) and its time on the stream's sample clock.
public struct QueuedFrame: Sendable {
    /// The packet's bytes (for AAC no ADTS header).
    public var data: [UInt8]
    /// Samples from the stream's first.
    public var timestamp: Int64

    /// A frame of `data` at `timestamp`.
    public init(data: [UInt8], timestamp: Int64) {
        self.data = data
        self.timestamp = timestamp
    }
}

extension PublishingSession {
    /// Sends each frame in turn.
    public func send(frames: [QueuedFrame], deadline: ContinuousClock.Instant) throws(PublishingError) {
        for frame in frames { try send(frame: frame.data[...], timestamp: frame.timestamp, deadline: deadline) }
    }

    /// Ignores the title.
    public func update(title: String, deadline: ContinuousClock.Instant) throws(PublishingError) {}

    /// Ignores the tag.
    public func send(timedMetadata tag: [UInt8], timestamp: Int64, deadline: ContinuousClock.Instant) throws(PublishingError) {}
}
