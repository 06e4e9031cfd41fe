public import SystemPackage
public import AudioBitstreams

/// The MPEG audio frames of an MP3 file, one packet each, as stored: the ID3v2 tag read first
/// (the tags, cover and chapters) and any zero bytes after it stepped over, the Info/Xing frame
/// read for its gapless numbers (``info``: LAME's delay and padding, ISO/IEC 11172-3 frames
/// otherwise) and not given as audio, then each frame by its header's length, up to an ID3v1
/// tag or the end.
///
/// Memory holds one read window (1 MiB).
public struct MP3FrameInput: PacketFileSource {
    /// The file read.
    public let path: FilePath
    /// ``MediaFileFormat/mp3``.
    public var format: MediaFileFormat { .mp3 }
    /// MP3 at the first frame's rate and channels.
    public var audioFormat: EncodedAudioFormat? { stream }
    /// The Info frame's delay and padding; none without one.
    public var trim: GaplessTrim {
        info.map { GaplessTrim(priming: $0.priming, validFrameCount: $0.validSamples) } ?? .none
    }
    /// The ID3v2 tag's tags, cover and chapters.
    public let metadata: StreamMetadata
    /// The Info/Xing frame with its LAME extension, when the stream starts with one.
    public let info: MP3InfoTag?
    /// The first audio frame's header.
    public let firstHeader: MPEGAudioFrameHeader
    /// The stream as its first audio frame describes it.
    public let stream: EncodedAudioFormat
    /// Where the first frame (the tag frame, when there is one) starts.
    public let firstFrameOffset: Int64
    /// The tag frame's length in bytes (Xing, Info or VBRI; its gapless numbers are ``info``); 0
    /// without one.
    public let infoLength: Int
    /// Where the next frame starts.
    public private(set) var offset: Int64
    /// Audio frames read so far.
    public private(set) var framesRead = 0
    private var samplesRead: Int64 = 0

    private let source: FileByteSource
    private let size: Int64
    private var window: [UInt8] = []
    private var windowStart: Int64 = 0
    private var damage: [DamageEvent] = []
    private var ended = false

    /// Opens the MP3 at `path`: its tag and its first frames.
    ///
    /// - Throws: `PipelineError.unsupported` for a file with no MPEG audio frame after its tag.
    public init(path: FilePath) throws(PipelineError) {
        self.path = path
        let tag = try MP3Tag(path: path)
        source = tag.source
        size = source.byteCount
        metadata = StreamMetadata(id3: tag.tag)
        offset = tag.length
        windowStart = offset
        // Zero bytes some taggers leave after the tag.
        while offset < size, try Self.byte(at: offset, source: source, window: &window, windowStart: &windowStart) == 0 { offset += 1 }
        firstFrameOffset = offset
        let head = try Self.bytes(at: offset, count: 4, source: source, window: &window, windowStart: &windowStart)
        guard let header = MPEGAudioFrameHeader(Array(head), at: 0), offset + Int64(header.frameLength) <= size else {
            throw .unsupported("\(path): no MPEG audio frame at byte \(offset), after its tag", path: path)
        }
        let frame = Array(try Self.bytes(at: offset, count: header.frameLength, source: source, window: &window, windowStart: &windowStart))
        if MP3InfoTag.isTagFrame(frame) {
            // A Xing/Info frame (its LAME extension's delay and padding, when it has one) or a
            // VBRI frame: not audio.
            info = MP3InfoTag(frame: frame)
            infoLength = header.frameLength
            offset += Int64(header.frameLength)
            let next = try Self.bytes(at: offset, count: 4, source: source, window: &window, windowStart: &windowStart)
            firstHeader = MPEGAudioFrameHeader(Array(next), at: 0) ?? header
        } else {
            info = nil
            infoLength = 0
            firstHeader = header
        }
        stream = EncodedAudioFormat(codec: .mp3, sampleRate: firstHeader.sampleRate, channelCount: firstHeader.channelCount,
                                    framesPerPacket: firstHeader.samplesPerFrame, decoderConfiguration: [])
    }

    /// The next audio frame, `nil` at an ID3v1 tag or the end. Bytes that are neither a frame
    /// nor a tag end the stream, told as damage.
    public mutating func next() throws(PipelineError) -> MediaSample? {
        guard !ended, offset < size else { return nil }
        let head = try Self.bytes(at: offset, count: 4, source: source, window: &window, windowStart: &windowStart)
        guard let header = MPEGAudioFrameHeader(Array(head), at: 0), offset + Int64(header.frameLength) <= size else {
            ended = true
            let rest = size - offset
            if try endsWithTags(from: offset) { return nil }
            damage.append(DamageEvent(.skippedBytes(count: rest), at: offset,
                                      message: "\(path): the last \(rest) bytes, from byte \(offset), are neither an MPEG audio frame nor an APEv2 or ID3v1 tag"))
            return nil
        }
        let frame = Array(try Self.bytes(at: offset, count: header.frameLength, source: source, window: &window, windowStart: &windowStart))
        // Times on the stream's first rate, each frame after the last: a frame of another rate or
        // length (a damaged or spliced file) does not take the time back.
        let rate = Int32(clamping: firstHeader.sampleRate)
        let sample = MediaSample(data: frame, presentationTime: MediaTime(value: samplesRead, timescale: rate),
                                 duration: MediaTime(value: Int64(firstHeader.samplesPerFrame), timescale: rate), format: .audio(stream))
        offset += Int64(header.frameLength)
        framesRead += 1
        samplesRead += Int64(firstHeader.samplesPerFrame)
        return sample
    }

    /// Whether the bytes from `start` to the file's end are tags that follow the frames: an
    /// APEv2 tag (its 32-byte footer `APETAGEX` last, its size the items and the footer, and a
    /// header of 32 more when its flags say so), an ID3v1 tag (128 bytes from `TAG`), or the one
    /// and then the other, as MP3Gain and foobar2000 write them.
    private mutating func endsWithTags(from start: Int64) throws(PipelineError) -> Bool {
        var end = size
        if end - start >= 128, Array(try Self.bytes(at: end - 128, count: 3, source: source, window: &window, windowStart: &windowStart)) == Array("TAG".utf8) {
            end -= 128
        }
        if end == start { return true }
        guard end - start >= 32 else { return false }
        let footer = Array(try Self.bytes(at: end - 32, count: 32, source: source, window: &window, windowStart: &windowStart))
        guard footer.count == 32, footer.prefix(8).elementsEqual("APETAGEX".utf8) else { return false }
        func word(_ at: Int) -> Int64 { Int64(footer[at]) | Int64(footer[at + 1]) << 8 | Int64(footer[at + 2]) << 16 | Int64(footer[at + 3]) << 24 }
        let hasHeader = word(20) & (1 << 31) != 0
        return end - start == word(12) + (hasHeader ? 32 : 0)
    }

    private static func byte(at position: Int64, source: FileByteSource, window: inout [UInt8], windowStart: inout Int64) throws(PipelineError) -> UInt8? {
        try bytes(at: position, count: 1, source: source, window: &window, windowStart: &windowStart).first
    }

    /// `count` bytes at `position` (fewer at the file's end), from the window, read again when
    /// they lie outside it.
    private static func bytes(at position: Int64, count: Int, source: FileByteSource, window: inout [UInt8],
                              windowStart: inout Int64) throws(PipelineError) -> ArraySlice<UInt8> {
        if position < windowStart || position + Int64(count) > windowStart + Int64(window.count) {
            do { window = try source.read(at: position, count: max(count, 1 << 20)) } catch { throw .stream(error) }
            windowStart = position
        }
        let start = Int(position - windowStart)
        return window[min(start, window.count)..<min(window.count, start + count)]
    }

    /// How far through the file.
    public var progress: MediaProgress {
        MediaProgress(mediaSeconds: Double(framesRead * firstHeader.samplesPerFrame) / Double(max(firstHeader.sampleRate, 1)),
                      totalSeconds: info.map { Double($0.decodedSamples) / Double(max(firstHeader.sampleRate, 1)) })
    }

    /// Bytes at the end that were no frame.
    public mutating func takeDamage() -> [DamageEvent] {
        defer { damage = [] }
        return damage
    }
}
