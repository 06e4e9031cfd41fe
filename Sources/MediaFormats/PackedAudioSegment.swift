public import MediaCore
public import SystemPackage
internal import AACBitstream
internal import AudioBitstreams

/// A packed-audio HLS segment read (RFC 8216 3.4): the ID3 tag it starts with, whose `PRIV`
/// frame `com.apple.streaming.transportStreamTimestamp` gives its first frame's 90 kHz
/// timestamp, then ADTS frames (ISO/IEC 14496-3 1.A.2.2) with ID3 tags of timed metadata
/// between them (Apple's "Timed Metadata for HTTP Live Streaming").
///
/// Every length is checked against the bytes that remain; a byte that starts neither a frame
/// nor a tag is an error naming its offset.
public struct PackedAudioSegment: Sendable, Hashable {
    /// The owner of the timestamp's `PRIV` frame.
    public static let timestampOwner = "com.apple.streaming.transportStreamTimestamp"

    /// The first frame's timestamp, 90 kHz (33 bits); `nil` when the segment has no timestamp.
    public var timestamp: UInt64?
    /// ADTS frames.
    public var frameCount: Int
    /// The frames' sample rate (their first header's).
    public var sampleRate: Int
    /// Each ID3 tag after the first: its bytes and how many frames precede it.
    public var timedMetadata: [(tag: [UInt8], afterFrames: Int)]

    /// The frames' duration in samples (1024 per raw data block).
    public var sampleCount: Int64
    /// The frames' duration in seconds.
    public var seconds: Double { Double(sampleCount) / Double(max(sampleRate, 1)) }

    /// Reads a whole segment.
    ///
    /// - Throws: ``/MediaCore/PipelineError/Code/unsupported`` naming the offset of what does
    ///   not read: no leading ID3 tag, a tag or frame past the end, a byte that starts neither.
    public init(bytes: [UInt8]) throws(PipelineError) {
        guard let first = ID3v2Tag.length(ofTagStarting: bytes), first <= bytes.count else {
            throw .unsupported("byte 0: no ID3 tag with the timestamp (RFC 8216 3.4: a packed audio segment starts with one)")
        }
        timestamp = nil
        if let tag = try? ID3v2Tag(bytes: Array(bytes[..<first])) {
            for frame in tag.frames {
                guard case .other("PRIV", _, let body) = frame else { continue }
                let owner = Array(Self.timestampOwner.utf8) + [0]
                if body.count == owner.count + 8, Array(body.prefix(owner.count)) == owner {
                    timestamp = body.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } & ((1 << 33) - 1)
                }
            }
        }
        var offset = first
        var frames = 0
        var samples: Int64 = 0
        var rate = 0
        var tags: [([UInt8], Int)] = []
        while offset < bytes.count {
            if let length = ID3v2Tag.length(ofTagStarting: bytes[offset...]) {
                guard length <= bytes.count - offset else {
                    throw .unsupported("byte \(offset): an ID3 tag of \(length) bytes runs past the segment's end")
                }
                tags.append((Array(bytes[offset..<(offset + length)]), frames))
                offset += length
                continue
            }
            let header: ADTSHeader
            do { header = try ADTSHeader(bytes: Array(bytes[offset..<min(bytes.count, offset + 9)]), baseOffset: Int64(offset)) } catch {
                throw .unsupported("byte \(offset): neither an ADTS frame nor an ID3 tag: \(error)")
            }
            guard header.frameLength <= bytes.count - offset else {
                throw .unsupported("byte \(offset): an ADTS frame of \(header.frameLength) bytes runs past the segment's end")
            }
            if rate == 0 { rate = header.samplingFrequencyIndex.frequency ?? 0 }
            frames += 1
            samples += 1024 * (Int64(header.rawDataBlockCountMinusOne) + 1)
            offset += header.frameLength
        }
        frameCount = frames
        sampleCount = samples
        sampleRate = rate
        timedMetadata = tags
    }

    /// The largest segment read: 64 MiB.
    public static let maximumSize: Int64 = 64 << 20

    /// Reads the segment at `path` (whole, at most ``maximumSize`` bytes).
    ///
    /// - Throws: the read's errors, a file too big, and ``init(bytes:)``'s.
    public init(path: FilePath) throws(PipelineError) {
        let source: FileByteSource
        do { source = try FileByteSource(regularFileAt: path) } catch { throw .stream(error) }
        guard source.byteCount <= Self.maximumSize else { throw .unsupported("\(path): \(source.byteCount) bytes is not a packed audio segment") }
        let bytes: [UInt8]
        do { bytes = try source.read(at: 0, count: Int(source.byteCount)) } catch { throw .stream(error) }
        try self.init(bytes: bytes)
    }

    /// Segments are equal when their numbers and tags are.
    public static func == (lhs: PackedAudioSegment, rhs: PackedAudioSegment) -> Bool {
        lhs.timestamp == rhs.timestamp && lhs.frameCount == rhs.frameCount && lhs.sampleRate == rhs.sampleRate
            && lhs.sampleCount == rhs.sampleCount && lhs.timedMetadata.map(\.tag) == rhs.timedMetadata.map(\.tag)
            && lhs.timedMetadata.map(\.afterFrames) == rhs.timedMetadata.map(\.afterFrames)
    }

    /// Hashes the numbers.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(timestamp)
        hasher.combine(frameCount)
        hasher.combine(sampleCount)
    }
}
