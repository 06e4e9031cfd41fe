public import SystemPackage

/// What an MP3's first frame says about its length and its encoder's delay and padding: the
/// Xing/Info header (its frame count) and the LAME extension after it (the LAME project's "Mp3
/// Info Tag", rev. 1: the encoder delay and padding, 12 bits each, at byte 21 of the extension),
/// as LAME and libavcodec (`Lavc`, `Lavf`) write them. FFmpeg's MP3 reader and LAME's decoder
/// drop the delay plus the decoder's own 529 samples at the start, and the padding less those 529
/// at the end; so do ``priming`` and ``remainder``.
public struct MP3InfoTag: Sendable, Hashable {
    /// MPEG audio frames in the stream, the Info frame included.
    public var frameCount: Int
    /// Samples per frame: 1152 (MPEG-1 layer II and III), 576 (MPEG-2/2.5 layer III), 384 (layer I).
    public var samplesPerFrame: Int
    /// The encoder's delay, in samples.
    public var encoderDelay: Int
    /// The encoder's padding at the end, in samples.
    public var padding: Int

    /// The decoder's delay that decoders count with the encoder's (MP3 synthesis, 528 + 1).
    public static let decoderDelay = 529

    /// Samples the frames decode to.
    public var decodedSamples: Int64 { Int64(frameCount) * Int64(samplesPerFrame) }
    /// Samples dropped at the start of the decoded output.
    public var priming: Int { encoderDelay + Self.decoderDelay }
    /// Samples dropped at the end of the decoded output.
    public var remainder: Int { max(0, padding - Self.decoderDelay) }
    /// Samples presented: what `ffmpeg -i FILE` and `keyframe convert` give.
    public var validSamples: Int64 { max(0, decodedSamples - Int64(priming) - Int64(remainder)) }

    /// Reads the tag from the frame header at the start of `frame` (ISO/IEC 11172-3 2.4.1.3:
    /// the header, the side information, then the Info header in the main data); `nil` when the
    /// frame holds no Xing/Info header with a frame count, or no LAME extension.
    public init?(frame: [UInt8]) {
        var reader = ByteReader(frame)
        guard let header = try? reader.readUInt32(), header >> 21 == 0x7FF else { return nil }
        let version = (header >> 19) & 0x3   // 3: MPEG-1
        let layer = (header >> 17) & 0x3     // 1: III
        let mono = (header >> 6) & 0x3 == 3
        guard version != 1, layer != 0 else { return nil }
        samplesPerFrame = layer == 3 ? 384 : (layer == 2 || version == 3 ? 1152 : 576)
        let sideInformation = version == 3 ? (mono ? 17 : 32) : (mono ? 9 : 17)
        guard (try? reader.skip(sideInformation)) != nil, let name = try? reader.readBytes(4),
              name == Array("Xing".utf8) || name == Array("Info".utf8), let flags = try? reader.readUInt32(),
              flags & 0x1 != 0, let frames = try? reader.readUInt32() else { return nil }
        frameCount = Int(frames)
        // The optional fields after the count: bytes (0x2), the seek table (0x4), quality (0x8).
        let optional = (flags & 0x2 != 0 ? 4 : 0) + (flags & 0x4 != 0 ? 100 : 0) + (flags & 0x8 != 0 ? 4 : 0)
        guard (try? reader.skip(optional)) != nil, let encoder = try? reader.readBytes(4),
              [Array("LAME".utf8), Array("Lavc".utf8), Array("Lavf".utf8)].contains(encoder),
              (try? reader.skip(21 - 4)) != nil, let fields = try? reader.readUInt24() else { return nil }
        encoderDelay = Int(fields >> 12)
        padding = Int(fields & 0xFFF)
    }

    /// The tag of the MP3 at `path`: its first frame after any ID3v2 tag and zero padding;
    /// `nil` when the file is not one or its first frame has no tag.
    public init?(path: FilePath) {
        guard let source = FileByteSource.regularFile(at: path), let head = try? source.read(at: 0, count: MediaFileFormat.sniffLength),
              head.count >= 4 else { return nil }
        let start = MediaFileFormat.id3v2TagEnd(head) ?? 0
        guard let after = try? source.read(at: start, count: 8192), let first = after.firstIndex(where: { $0 != 0 }) else { return nil }
        self.init(frame: Array(after[first...]))
    }
}
