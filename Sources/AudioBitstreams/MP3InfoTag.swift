internal import MediaCore

/// What an MP3's first frame says about its length and its encoder's delay and padding: the
/// Xing/Info header (its frame count, byte count and seek table) and the LAME extension after it
/// (the LAME project's "Mp3 Info Tag", rev. 1: the encoder delay and padding, 12 bits each, at
/// byte 21 of the extension; the music's length and CRC; the tag's own CRC), as LAME and
/// libavformat write them. The frame itself codes silence: a decoder that does not know the tag
/// plays it as one frame of silence.
///
/// FFmpeg's MP3 reader, mpg123 and LAME's decoder drop the delay plus the decoder's own 529
/// samples at the start, and the padding less those 529 at the end; so do ``priming`` and
/// ``remainder``.
public struct MP3InfoTag: Sendable, Hashable {
    /// MPEG audio frames in the stream after the Info frame.
    public var frameCount: Int
    /// Samples per frame: 1152 (MPEG-1 layer II and III), 576 (MPEG-2/2.5 layer III), 384 (layer I).
    public var samplesPerFrame: Int
    /// The encoder's delay, in samples (12 bits).
    public var encoderDelay: Int
    /// The encoder's padding at the end, in samples (12 bits).
    public var padding: Int
    /// Bytes of the stream from the Info frame to the last frame's end, when the tag says.
    public var byteCount: Int?
    /// The seek table: for each percent of the duration, the offset into ``byteCount`` as a
    /// fraction of 256, when the tag has one.
    public var tableOfContents: [UInt8]?
    /// Whether the header says `Xing` (a variable bitrate) rather than `Info` (a constant one).
    public var isVariableBitrate = false
    /// The encoder's name and version, nine characters (`LAME3.100`, `Lavc60.31`).
    public var encoderVersion = "LAME3.100"
    /// The CRC-16 of the audio frames after the Info frame, as the tag says.
    public var musicCRC: UInt16 = 0
    /// Whether the tag's CRC-16 matches (of the frame's first 190 bytes, as FFmpeg computes it,
    /// or of the bytes before the CRC field, as LAME does); `true` for a tag made here, `false`
    /// for a frame cut before the CRC.
    public var tagCRCMatches = true

    /// The decoder's delay that decoders count with the encoder's (MP3 synthesis, 528 + 1).
    public static let decoderDelay = 529
    /// The most a 12-bit delay or padding field holds.
    public static let fieldLimit = 4095

    /// Samples the frames decode to.
    public var decodedSamples: Int64 { Int64(frameCount) * Int64(samplesPerFrame) }
    /// Samples dropped at the start of the decoded output.
    public var priming: Int { encoderDelay + Self.decoderDelay }
    /// Samples dropped at the end of the decoded output.
    public var remainder: Int { max(0, padding - Self.decoderDelay) }
    /// Samples presented: what `ffmpeg -i FILE` and `keyframe convert` give.
    public var validSamples: Int64 { max(0, decodedSamples - Int64(priming) - Int64(remainder)) }

    /// A tag for `frameCount` frames of `samplesPerFrame` samples, whose decode presents
    /// `validSamples` after `priming` samples (each as decoders count them: LAME's delay plus
    /// 529). The delay and padding are clamped to their 12 bits.
    public init(frameCount: Int, samplesPerFrame: Int, priming: Int, validSamples: Int64) {
        self.frameCount = frameCount
        self.samplesPerFrame = samplesPerFrame
        encoderDelay = min(Self.fieldLimit, max(0, priming - Self.decoderDelay))
        let end = Int64(frameCount) * Int64(samplesPerFrame) - Int64(priming) - validSamples
        padding = Int(min(Int64(Self.fieldLimit), max(0, end + Int64(Self.decoderDelay))))
    }

    /// Bytes of the Xing header and LAME extension after the side information: the name, the
    /// flags, the frame and byte counts, the seek table, the quality, then 36 bytes of LAME tag.
    public static let length = 4 + 4 + 4 + 4 + 100 + 4 + 36

    /// Whether `frame` is a tag frame rather than audio: a Xing or Info header after the side
    /// information (with or without a LAME extension), or Fraunhofer's VBRI header 32 bytes
    /// after the frame header. Decoders (FFmpeg, mpg123) skip such a frame.
    public static func isTagFrame(_ frame: [UInt8]) -> Bool {
        guard let header = MPEGAudioFrameHeader(frame, at: 0), header.layer == 3 else { return false }
        let xing = 4 + header.sideInformationLength, vbri = 4 + 32
        for (offset, names) in [(xing, ["Xing", "Info"]), (vbri, ["VBRI"])] where offset + 4 <= frame.count {
            if names.contains(where: { Array($0.utf8) == Array(frame[offset..<(offset + 4)]) }) { return true }
        }
        return false
    }

    /// Reads the tag from the frame header at the start of `frame` (ISO/IEC 11172-3 2.4.1.3:
    /// the header, the side information, then the Info header in the main data); `nil` when the
    /// frame holds no Xing/Info header with a frame count, or no LAME extension.
    public init?(frame: [UInt8]) {
        // Layer III only; the header sits after the side information whether or not the frame
        // has a CRC (as LAME, FFmpeg and mpg123 place and look for it).
        guard let header = MPEGAudioFrameHeader(frame, at: 0), header.layer == 3 else { return nil }
        var reader = ByteReader(frame)
        guard (try? reader.skip(4 + header.sideInformationLength)) != nil,
              let name = try? reader.readBytes(4), name == Array("Xing".utf8) || name == Array("Info".utf8),
              let flags = try? reader.readUInt32(), flags & 0x1 != 0, let frames = try? reader.readUInt32() else { return nil }
        samplesPerFrame = header.samplesPerFrame
        isVariableBitrate = name == Array("Xing".utf8)
        frameCount = Int(frames)
        // The optional fields after the count: bytes (0x2), the seek table (0x4), quality (0x8).
        if flags & 0x2 != 0 { guard let bytes = try? reader.readUInt32() else { return nil }; byteCount = Int(bytes) }
        if flags & 0x4 != 0 { guard let table = try? reader.readBytes(100) else { return nil }; tableOfContents = table }
        if flags & 0x8 != 0 { guard (try? reader.skip(4)) != nil else { return nil } }
        let tagStart = Int(reader.offset)
        guard let version = try? reader.readBytes(9), [Array("LAME".utf8), Array("Lavc".utf8), Array("Lavf".utf8)].contains(Array(version.prefix(4))),
              (try? reader.skip(21 - 9)) != nil, let fields = try? reader.readUInt24() else { return nil }
        encoderVersion = String(decoding: version.prefix { $0 != 0 }, as: UTF8.self)
        encoderDelay = Int(fields >> 12)
        padding = Int(fields & 0xFFF)
        // Music CRC at 32, the tag's CRC at 34 of the 36 bytes.
        if tagStart + 36 <= frame.count {
            musicCRC = UInt16(frame[tagStart + 32]) << 8 | UInt16(frame[tagStart + 33])
            let stored = UInt16(frame[tagStart + 34]) << 8 | UInt16(frame[tagStart + 35])
            // FFmpeg's CRC covers the first 190 bytes of its buffer, zeros past a frame shorter
            // than that (a low-bitrate mono or MPEG-2 frame); LAME's the bytes before the CRC
            // field (the same 190 for MPEG-1 stereo): either is the tag's.
            tagCRCMatches = Self.tagCRC(frame, at: tagStart + 34) == stored
                || CyclicRedundancyCheck.crc16(frame[0..<(tagStart + 34)]) == stored
        } else {
            tagCRCMatches = false
        }
    }

    /// The whole Info frame: `header` (its bitrate as is: see ``infoFrameHeader(like:)``),
    /// silent side information, the Xing header with every field, and the LAME extension with
    /// the music's length (``byteCount``) and CRC and the tag's CRC-16.
    public func frame(header: MPEGAudioFrameHeader) -> [UInt8] {
        var writer = ByteWriter()
        var header = header
        header.hasCRC = false
        writer.write(contentsOf: header.bytes)
        writer.write(contentsOf: [UInt8](repeating: 0, count: header.sideInformationLength))
        writer.write(contentsOf: Array((isVariableBitrate ? "Xing" : "Info").utf8))
        writer.write(UInt32(0x0F))
        writer.write(UInt32(clamping: frameCount))
        writer.write(UInt32(clamping: byteCount ?? 0))
        writer.write(contentsOf: tableOfContents ?? Self.linearTableOfContents)
        writer.write(UInt32(0))  // quality
        // The LAME extension: version, revision and method, lowpass, peak, two gains, flags,
        // bitrate, delay and padding, misc, MP3 gain, preset, music length, music CRC, tag CRC.
        let version = Array(encoderVersion.utf8.prefix(9))
        writer.write(contentsOf: version + [UInt8](repeating: 0x20, count: 9 - version.count))
        writer.write(contentsOf: [UInt8](repeating: 0, count: 1 + 1 + 4 + 2 + 2 + 1 + 1))
        writer.writeBigEndian(UInt64(clamping: min(encoderDelay, Self.fieldLimit)) << 12 | UInt64(clamping: min(padding, Self.fieldLimit)),
                              byteCount: 3)
        writer.write(contentsOf: [UInt8](repeating: 0, count: 1 + 1 + 2))
        writer.write(UInt32(clamping: byteCount ?? 0))
        writer.write(musicCRC)
        let crcAt = writer.bytes.count
        writer.write(UInt16(0))
        var bytes = writer.bytes
        bytes += [UInt8](repeating: 0, count: max(0, header.frameLength - bytes.count))
        let crc = Self.tagCRC(bytes, at: crcAt)
        bytes[crcAt] = UInt8(crc >> 8)
        bytes[crcAt + 1] = UInt8(crc & 0xFF)
        return bytes
    }

    /// The tag's CRC-16: of the frame's first 190 bytes (zeros past a shorter frame's end), the
    /// CRC field itself read as zero wherever it falls in them (a mono or MPEG-2 frame's tag ends
    /// before byte 190).
    static func tagCRC(_ frame: [UInt8], at field: Int) -> UInt16 {
        var head = Array(frame.prefix(190))
        head += [UInt8](repeating: 0, count: 190 - head.count)
        for index in [field, field + 1] where index < head.count { head[index] = 0 }
        return CyclicRedundancyCheck.crc16(head)
    }

    /// The header of an Info frame for a stream whose first frame has `header`: the same version,
    /// rate and mode, no CRC, no padding, at the stream's bitrate or the least above it that
    /// holds the tag and the 190 bytes its CRC covers (FFmpeg and LAME do likewise).
    public static func infoFrameHeader(like header: MPEGAudioFrameHeader) -> MPEGAudioFrameHeader {
        var info = header
        info.hasCRC = false
        info.isPadded = false
        info.modeExtension = 0
        let needed = max(190, 4 + info.sideInformationLength + length)
        while info.bitrateIndex < 14, info.frameLength < needed { info.bitrateIndex += 1 }
        return info
    }

    /// A seek table for a constant bitrate: each percent at that fraction of the bytes.
    static let linearTableOfContents: [UInt8] = (0..<100).map { UInt8($0 * 256 / 100) }
}
