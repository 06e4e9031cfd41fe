import AudioBitstreams
import MediaCore
import Testing

/// The decoder configurations of Opus, FLAC and ALAC against the boxes FFmpeg 5.1's MP4 muxer
/// writes for a 0.5-s stereo 44.1 kHz sine (`ffmpeg -c:a libopus|flac|alac -strict -2 x.mp4`,
/// the payloads after each box's header): each parses to the fields FFmpeg meant, and writes
/// back to the same bytes in the same form.
@Suite struct CodecConfigurationTests {
    /// `dOps`: version 0, 2 channels, pre-skip 312, input rate 48000, gain 0, family 0.
    static let ffmpegDOps: [UInt8] = [0x00, 0x02, 0x01, 0x38, 0x00, 0x00, 0xBB, 0x80, 0x00, 0x00, 0x00]
    /// `dfLa`: version 0, then STREAMINFO as the last block (4608-sample blocks, 44.1 kHz,
    /// 2 channels, 16 bits, 22,050 samples, the MD5).
    static let ffmpegDfLa: [UInt8] = [
        0x00, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x22, 0x12, 0x00, 0x12, 0x00, 0x00, 0x04, 0x07, 0x00, 0x05, 0x0A, 0x0A, 0xC4, 0x42,
        0xF0, 0x00, 0x00, 0x56, 0x22, 0x8E, 0xB4, 0xF3, 0x8C, 0x6D, 0x95, 0xC2, 0x0E, 0xFD, 0xC6, 0xBE, 0xEE, 0x63, 0x2A, 0x27, 0x7B,
    ]
    /// The `alac` box inside the `alac` entry: version 0, then ALACSpecificConfig (4096-sample
    /// frames, 16 bits, 2 channels, 44.1 kHz).
    static let ffmpegALAC: [UInt8] = [
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x10, 0x28, 0x0A, 0x0E, 0x02, 0x00, 0x00, 0x00, 0x00, 0x40, 0x04, 0x00,
        0x15, 0x88, 0x80, 0x00, 0x00, 0xAC, 0x44,
    ]

    @Test func dOpsReadsAsFFmpegWroteItAndWritesBack() throws {
        let header = try OpusHeader(dOpsPayload: Self.ffmpegDOps)
        #expect(header.channelCount == 2)
        #expect(header.preSkip == 312)
        #expect(header.inputSampleRate == 48000)
        #expect(header.mappingFamily == 0)
        #expect(header.dOpsPayload == Self.ffmpegDOps)
        // The same fields as an OpusHead (RFC 7845 5.1): magic, version 1, little-endian.
        #expect(header.bytes == Array("OpusHead".utf8) + [1, 2, 0x38, 0x01, 0x80, 0xBB, 0x00, 0x00, 0, 0, 0])
        #expect(try OpusHeader(bytes: header.bytes) == header)
    }

    @Test func opusHeadsThatNoStreamHasAreRefused() {
        #expect(throws: AudioBitstreamError.self) { try OpusHeader(bytes: Array("OpusHeaX".utf8) + [1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0]) }
        #expect(throws: AudioBitstreamError.self) { try OpusHeader(bytes: Array("OpusHead".utf8) + [0x10, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0]) }
        // Three channels need a mapping table (family 1).
        #expect(throws: AudioBitstreamError.self) { try OpusHeader(dOpsPayload: [0, 3, 0, 0, 0, 0, 0xBB, 0x80, 0, 0, 0]) }
        #expect(throws: AudioBitstreamError.self) { try OpusHeader(dOpsPayload: [0, 6, 0, 0, 0, 0, 0xBB, 0x80, 0, 0, 1, 4, 2]) }
    }

    @Test func dfLaReadsAsFFmpegWroteItAndWritesBack() throws {
        let info = try FLACStreamInfo(dfLaPayload: Self.ffmpegDfLa)
        #expect(info.minimumBlockSize == 4608 && info.maximumBlockSize == 4608)
        #expect(info.sampleRate == 44100)
        #expect(info.channelCount == 2)
        #expect(info.bitsPerSample == 16)
        #expect(info.totalSamples == 22050)
        #expect(info.md5 != Array(repeating: 0, count: 16))
        #expect(info.dfLaPayload == Self.ffmpegDfLa)
        #expect(try FLACStreamInfo(bytes: info.bytes) == info)
    }

    @Test func aMetadataBlockLongerThanItsBytesIsRefusedBeforeAllocating() {
        // A block header that declares 16 MiB in 8 bytes.
        var reader = ByteReader([0x84, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4])
        #expect(throws: AudioBitstreamError.self) { try FLACMetadataBlock.read(&reader, structure: "test") }
        #expect(throws: AudioBitstreamError.self) { try FLACStreamInfo(dfLaPayload: [0, 0, 0, 0, 0x84, 0, 0, 0]) }
    }

    @Test func alacReadsAsFFmpegWroteItAndWritesBack() throws {
        let config = try ALACSpecificConfig(bytes: Self.ffmpegALAC.dropFirst(4))
        #expect(config.frameLength == 4096)
        #expect(config.bitDepth == 16)
        #expect(config.channelCount == 2)
        #expect(config.sampleRate == 44100)
        #expect(config.alacBoxPayload == Self.ffmpegALAC)
        // libavcodec's magic cookie: the whole 36-byte box.
        #expect(config.cookie == [0, 0, 0, 36] + Array("alac".utf8) + Self.ffmpegALAC)
        #expect(try ALACSpecificConfig(cookie: config.cookie) == config)
    }
}
