public import SystemPackage
public import AudioBitstreams

/// The frames of a native FLAC file (RFC 9639), one packet each, as stored: the metadata
/// blocks read first (STREAMINFO for the format, the tags, pictures and chapters), then each
/// frame found where its header begins and ending where the next header begins after bytes
/// whose CRC-16 its footer holds (RFC 9639 9.3). FLAC frames say no length, so that check is
/// what tells a frame's end from a sync code inside its data.
///
/// Memory holds a read window (1 to 2 MiB) and the frame being found; a frame past
/// ``maximumFrameBytes`` is refused.
public struct FLACFrameInput: PacketFileSource {
    /// The file read.
    public let path: FilePath
    /// ``MediaFileFormat/flac``.
    public var format: MediaFileFormat { .flac }
    /// FLAC, its STREAMINFO as the configuration.
    public var audioFormat: EncodedAudioFormat? { stream }
    /// None: a FLAC stream starts at its first sample.
    public var trim: GaplessTrim { .none }
    /// The tags, cover and chapters of the VORBIS_COMMENT and PICTURE blocks.
    public let metadata: StreamMetadata
    /// The STREAMINFO block.
    public let streamInfo: FLACStreamInfo
    /// The stream as its STREAMINFO describes it.
    public let stream: EncodedAudioFormat
    /// The sample number of the next frame's first sample.
    public private(set) var nextSample: Int64 = 0
    /// Frames read so far.
    public private(set) var framesRead = 0

    /// The most bytes one frame may take (the format allows about 16 MiB at 32 bits, 8 channels
    /// and 65,535 samples uncompressed).
    public static let maximumFrameBytes = 16 << 20
    private let source: FileByteSource
    private let size: Int64
    private var window: [UInt8] = []
    /// Where in `window` the next frame starts.
    private var read = 0
    /// Whether the stream's bytes are all in the window.
    private var atEndOfFile = false
    /// Where the stream ends: the file's end, or an ID3v1 tag's start.
    private var streamEnd: Int64 = .max
    /// The file offset of `window[0]`.
    private var windowStart: Int64
    private var damage: [DamageEvent] = []

    /// Opens the FLAC file at `path` and reads its metadata blocks.
    ///
    /// - Throws: `PipelineError.unsupported` for a file without `fLaC` and STREAMINFO, or blocks
    ///   that run past its end.
    public init(path: FilePath) throws(PipelineError) {
        self.path = path
        let blocks = try FLACMetadata(path: path)
        source = blocks.source
        size = source.byteCount
        do { streamInfo = try FLACStreamInfo(bytes: blocks.blocks[0].body) } catch { throw .unsupported("\(path): \(error)", path: path) }
        stream = EncodedAudioFormat(codec: .flac, sampleRate: streamInfo.sampleRate, channelCount: streamInfo.channelCount,
                                    framesPerPacket: streamInfo.maximumBlockSize, decoderConfiguration: streamInfo.bytes)
        metadata = StreamMetadata(vorbisComment: blocks.comment, pictures: blocks.pictures)
        windowStart = blocks.audioStart
    }

    /// The next frame, `nil` after the last.
    ///
    /// - Throws: `PipelineError.unsupported` for bytes that are no frame header where a frame
    ///   should begin, or a frame longer than ``maximumFrameBytes``, naming the offset.
    public mutating func next() throws(PipelineError) -> MediaSample? {
        // A frame whose CRC-16 no later header matches is damage: it is stepped over to the first
        // later header, and the next frame read from there.
        while true {
            try fill(atLeast: read + 16)
            guard read < window.count else { return nil }
            let frameStart = windowStart + Int64(read)
            guard let header = FLACFrameHeader(window, at: read) else {
                throw .unsupported("\(path): no FLAC frame header at byte \(frameStart) (frame \(framesRead + 1))", path: path)
            }
            switch try frameEnd(from: read, header: header) {
            case .end(let end):
                return frame(read..<end, header: header)
            case .skip(to: let next):
                let count = Int64(next - read)
                damage.append(DamageEvent(.skippedBytes(count: count), at: frameStart,
                                          message: "\(path): the frame at byte \(frameStart) (after frame \(framesRead)) does not match its CRC-16; "
                                              + "\(count) bytes skipped to the next frame header"))
                read = next
                discardRead()
            case .none:
                let rest = Int64(window.count - read)
                damage.append(DamageEvent(.skippedBytes(count: rest), at: frameStart,
                                          message: "\(path): the last \(rest) bytes, from byte \(frameStart), are no whole FLAC frame (frame \(framesRead + 1))"))
                window = []
                read = 0
                windowStart = frameStart + rest
                return nil
            }
        }
    }

    /// Where a frame ends, or where to go on when it does not.
    private enum FrameEnd {
        /// The frame ends here (its CRC-16 checks).
        case end(Int)
        /// The frame does not check; the first later header is here.
        case skip(to: Int)
        /// The frame does not check, and no header follows it.
        case none
    }

    /// Where the frame at `start` (of `header`) ends: at the first later header (of the same
    /// rate and depth) that its footer's CRC-16 reaches, or at the file's end; no further than
    /// the longest frame its block can make (every subframe verbatim, RFC 9639 9.2.5, the side
    /// channel a bit wider), so that a damaged frame costs a bounded scan and a CRC-16 that
    /// happens to match far away is not taken for its end.
    private mutating func frameEnd(from start: Int, header: FLACFrameHeader) throws(PipelineError) -> FrameEnd {
        var crc = CyclicRedundancyCheck.crc16MostSignificantFirst(window[start..<(start + header.byteCount)])
        var checked = start + header.byteCount
        var position = checked + 2
        var firstLaterHeader: Int?
        let channels = max(streamInfo.channelCount, 1), bits = max(streamInfo.bitsPerSample, 4) + 1
        // (Past the longest frame, 130 bytes more: an ID3v1 tag after the last frame, and its own
        // check at the file's end below, are still reached.)
        let limit = start + header.byteCount + (header.blockSize * channels * bits + 7) / 8 + 8 * channels + 2 + 130
        while true {
            if position + 16 > window.count, !atEndOfFile {
                guard window.count - start < Self.maximumFrameBytes else {
                    if let firstLaterHeader { return .skip(to: firstLaterHeader) }
                    throw .unsupported("\(path): the frame at byte \(windowStart + Int64(start)) runs past \(Self.maximumFrameBytes) bytes without an end",
                                       path: path)
                }
                let before = window.count
                try fill(atLeast: window.count + (1 << 20))
                // A file that stopped growing (or shrank) ends here.
                if window.count == before { atEndOfFile = true }
                continue
            }
            if position > limit {
                // Longer than any frame of the block: damage, to the next header.
                if let firstLaterHeader { return .skip(to: firstLaterHeader) }
                if position + 1 < window.count, window[position] == 0xFF, window[position + 1] & 0xFE == 0xF8,
                   let next = FLACFrameHeader(window, at: position), next.sampleRateCode == header.sampleRateCode,
                   next.bitDepthCode == header.bitDepthCode {
                    return .skip(to: position)
                }
                if position + 1 >= window.count { return .none }
                position += 1
                continue
            }
            if position + 1 >= window.count {
                // The last frame ends with the file, when its CRC says so, or before an ID3v1
                // tag some taggers append (128 bytes from `TAG`).
                let tagged = window.count - start >= 128 + header.byteCount + 2 && window[(window.count - 128)..<(window.count - 125)].elementsEqual("TAG".utf8)
                for candidate in tagged ? [window.count, window.count - 128] : [window.count] where candidate - 2 >= checked {
                    let sum = CyclicRedundancyCheck.crc16MostSignificantFirst(window[checked..<(candidate - 2)], preset: crc)
                    if sum == UInt16(window[candidate - 2]) << 8 | UInt16(window[candidate - 1]) {
                        if candidate < window.count {
                            // The tag is not audio: the stream ends with the frame.
                            window.removeLast(window.count - candidate)
                            streamEnd = windowStart + Int64(candidate)
                        }
                        return .end(candidate)
                    }
                }
                return firstLaterHeader.map { .skip(to: $0) } ?? .none
            }
            if window[position] == 0xFF, window[position + 1] & 0xFE == 0xF8,
               let next = FLACFrameHeader(window, at: position), next.sampleRateCode == header.sampleRateCode,
               next.bitDepthCode == header.bitDepthCode, next.isVariableBlockSize == header.isVariableBlockSize {
                crc = CyclicRedundancyCheck.crc16MostSignificantFirst(window[checked..<(position - 2)], preset: crc)
                checked = position - 2
                if crc == UInt16(window[position - 2]) << 8 | UInt16(window[position - 1]) { return .end(position) }
                firstLaterHeader = firstLaterHeader ?? position
            }
            position += 1
        }
    }

    /// The frame `range` of the window, of `header`, counted; the bytes read go once they are a
    /// megabyte.
    private mutating func frame(_ range: Range<Int>, header: FLACFrameHeader) -> MediaSample {
        let bytes = Array(window[range])
        read = range.upperBound
        discardRead()
        let first = nextSample
        nextSample += Int64(header.blockSize)
        framesRead += 1
        let rate = Int32(clamping: streamInfo.sampleRate)
        return MediaSample(data: bytes, presentationTime: MediaTime(value: first, timescale: rate),
                           duration: MediaTime(value: Int64(header.blockSize), timescale: rate), format: .audio(stream))
    }

    /// Lets the bytes read go once they are a megabyte.
    private mutating func discardRead() {
        guard read >= 1 << 20 else { return }
        window.removeFirst(read)
        windowStart += Int64(read)
        read = 0
    }

    /// Reads on until the window holds `count` bytes or the file ends.
    private mutating func fill(atLeast count: Int) throws(PipelineError) {
        while window.count < count {
            let offset = windowStart + Int64(window.count), end = min(size, streamEnd)
            guard offset < end else {
                atEndOfFile = true
                return
            }
            let bytes: [UInt8]
            do { bytes = try source.read(at: offset, count: Int(min(Int64(1 << 20), end - offset))) } catch { throw .stream(error) }
            guard !bytes.isEmpty else {
                atEndOfFile = true
                return
            }
            window += bytes
        }
    }

    /// How far through the file.
    public var progress: MediaProgress {
        MediaProgress(mediaSeconds: Double(nextSample) / Double(max(streamInfo.sampleRate, 1)),
                      totalSeconds: streamInfo.totalSamples > 0 ? Double(streamInfo.totalSamples) / Double(max(streamInfo.sampleRate, 1)) : nil)
    }

    /// Bytes at the end that were no frame.
    public mutating func takeDamage() -> [DamageEvent] {
        defer { damage = [] }
        return damage
    }
}
