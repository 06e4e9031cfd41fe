import MediaCore
import PCMAudio
import Testing

/// WAVWriter: round trips through WAVReader, header bytes checked by hand, RF64 conversion,
/// pad bytes and misuse.
@Suite struct WAVWriterTests {
    static let channelCounts = [1, 2, 6]

    @Test(arguments: PCMSampleFormat.allCases, channelCounts)
    func roundTripsThroughWAVReader(sampleFormat: PCMSampleFormat, channels: Int) throws {
        let format = PCMFormat(sampleRate: 44100, channelCount: channels, sampleFormat: sampleFormat)
        let frames = 1001
        let data = WAVBytes.noise(frames * format.bytesPerFrame, seed: UInt64(channels * 31 + format.bytesPerFrame))
        var writer = try WAVWriter(sink: ArrayByteSink(), format: format)
        var written = 0
        for (index, size) in [1, 7, 300, 693].enumerated() {
            let bytes = Array(data[(written * format.bytesPerFrame)..<((written + size) * format.bytesPerFrame)])
            if index % 2 == 0 { try writer.write(bytes) } else { try bytes.withUnsafeBytes { buffer in try writer.write(buffer) } }
            written += size
        }
        #expect(writer.framesWritten == Int64(frames))
        try writer.finish()
        let file = writer.sink.bytes
        #expect(file.count % 2 == 0, "RIFF files have an even length (pad byte)")

        let result = try PCMRead.wav(file)
        #expect(result.format == format)
        #expect(result.frameCount == Int64(frames))
        #expect(result.bytes == data)
        #expect(result.warnings.isEmpty)
        let reader = try #require(result.reader)
        let extensible = channels > 2 || sampleFormat.bytesPerSample > 2
        #expect(reader.formatTag == (extensible ? 0xFFFE : 1))
        #expect(reader.channelMask == (extensible ? WAVChannelMask.defaultMask(channelCount: channels) : nil))
        #expect(writer.channelMask == reader.channelMask)
        #expect(!reader.isRF64)
    }

    @Test func stereo16BitHeaderIsByteForByteFFmpegs() throws {
        var writer = try WAVWriter(sink: ArrayByteSink(), format: PCMFormat(sampleRate: 44100, channelCount: 2, sampleFormat: .int16))
        try writer.write([1, 2, 3, 4, 5, 6, 7, 8])
        try writer.finish()
        let expected: [UInt8] = Array("RIFF".utf8) + [0x50, 0, 0, 0] + Array("WAVE".utf8)
            + Array("JUNK".utf8) + [28, 0, 0, 0] + [UInt8](repeating: 0, count: 28)
            + Array("fmt ".utf8) + [16, 0, 0, 0,
                                    0x01, 0x00,               // WAVE_FORMAT_PCM
                                    0x02, 0x00,               // 2 channels
                                    0x44, 0xAC, 0x00, 0x00,   // 44100 Hz
                                    0x10, 0xB1, 0x02, 0x00,   // 176400 bytes/s
                                    0x04, 0x00,               // block align 4
                                    0x10, 0x00]               // 16 bits
            + Array("data".utf8) + [8, 0, 0, 0] + [1, 2, 3, 4, 5, 6, 7, 8]
        #expect(writer.sink.bytes == expected)
    }

    @Test func floatHeaderIsExtensibleWithFact() throws {
        var writer = try WAVWriter(sink: ArrayByteSink(), format: PCMFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .float32))
        try writer.write([UInt8](repeating: 0, count: 12))
        try writer.finish()
        let bytes = writer.sink.bytes
        #expect(bytes.count == 116 + 12)
        #expect(Array(bytes[0..<8]) == Array("RIFF".utf8) + [120, 0, 0, 0])
        #expect(Array(bytes[48..<96]) == Array("fmt ".utf8) + [40, 0, 0, 0,
                                                                0xFE, 0xFF,               // WAVE_FORMAT_EXTENSIBLE
                                                                0x01, 0x00,               // mono
                                                                0x80, 0xBB, 0x00, 0x00,   // 48000 Hz
                                                                0x00, 0xEE, 0x02, 0x00,   // 192000 bytes/s
                                                                0x04, 0x00, 0x20, 0x00,   // block align 4, 32 bits
                                                                22, 0, 32, 0,             // cbSize, valid bits
                                                                0x04, 0x00, 0x00, 0x00,   // SPEAKER_FRONT_CENTER
                                                                0x03, 0x00, 0x00, 0x00,   // KSDATAFORMAT_SUBTYPE_IEEE_FLOAT
                                                                0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71])
        #expect(Array(bytes[96..<116]) == Array("fact".utf8) + [4, 0, 0, 0, 3, 0, 0, 0] + Array("data".utf8) + [12, 0, 0, 0])
    }

    @Test func oddDataGetsAPadByteCountedInRIFFOnly() throws {
        var writer = try WAVWriter(sink: ArrayByteSink(), format: PCMFormat(sampleRate: 8000, channelCount: 1, sampleFormat: .uint8))
        try writer.write([0x80, 0x81, 0x82])
        try writer.finish()
        let bytes = writer.sink.bytes
        #expect(bytes.count == 84)
        #expect(Array(bytes[4..<8]) == [76, 0, 0, 0])
        #expect(Array(bytes[76..<84]) == [3, 0, 0, 0, 0x80, 0x81, 0x82, 0x00])
        let result = try PCMRead.wav(bytes)
        #expect(result.bytes == [0x80, 0x81, 0x82])
        #expect(result.warnings.isEmpty)
    }

    @Test func passingTheThresholdMakesRF64() throws {
        var writer = try WAVWriter(sink: ArrayByteSink(), format: PCMFormat(sampleRate: 8000, channelCount: 1, sampleFormat: .int16), rf64Threshold: 0)
        try writer.write([1, 0, 2, 0, 3, 0])
        try writer.finish()
        #expect(writer.isRF64)
        let bytes = writer.sink.bytes
        #expect(bytes.count == 86)
        #expect(Array(bytes[0..<12]) == Array("RF64".utf8) + [0xFF, 0xFF, 0xFF, 0xFF] + Array("WAVE".utf8))
        #expect(Array(bytes[12..<48]) == Array("ds64".utf8) + [28, 0, 0, 0]
            + WAVBytes.le(78, 8) + WAVBytes.le(6, 8) + WAVBytes.le(3, 8) + [0, 0, 0, 0])
        #expect(Array(bytes[72..<80]) == Array("data".utf8) + [0xFF, 0xFF, 0xFF, 0xFF])
        let result = try PCMRead.wav(bytes)
        #expect(result.reader?.isRF64 == true)
        #expect(result.frameCount == 3)
        #expect(result.bytes == [1, 0, 2, 0, 3, 0])

        // Float: fact's 32-bit count becomes 0xFFFFFFFF too (ds64 holds it), as FFmpeg writes.
        var float = try WAVWriter(sink: ArrayByteSink(), format: PCMFormat(sampleRate: 8000, channelCount: 2, sampleFormat: .float64), rf64Threshold: 100)
        try float.write(WAVBytes.noise(16 * 10))
        try float.finish()
        #expect(float.isRF64)
        #expect(Array(float.sink.bytes[96..<108]) == Array("fact".utf8) + [4, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(try PCMRead.wav(float.sink.bytes).frameCount == 10)
    }

    @Test func thresholdIsInclusive() throws {
        // 80-byte header, 4 bytes of data: RIFF size 76.
        for (threshold, rf64) in [(76, false), (75, true)] {
            var writer = try WAVWriter(sink: ArrayByteSink(), format: PCMFormat(sampleRate: 8000, channelCount: 2, sampleFormat: .int16),
                                       rf64Threshold: Int64(threshold))
            try writer.write([1, 2, 3, 4])
            try writer.finish()
            #expect(writer.isRF64 == rf64)
        }
    }

    @Test func updateHeaderMakesAFileCutShortReadable() throws {
        var writer = try WAVWriter(sink: ArrayByteSink(), format: PCMFormat(sampleRate: 8000, channelCount: 2, sampleFormat: .int16))
        let before = try PCMRead.wav(writer.sink.bytes)
        #expect(before.frameCount == nil, "sizes are 'unknown' until patched")
        try writer.write(WAVBytes.noise(40))
        try writer.updateHeader()
        let crashed = writer.sink.bytes + WAVBytes.noise(6)   // a partial write after the update
        let result = try PCMRead.wav(crashed)
        #expect(result.frameCount == 10)
        #expect(result.bytes == WAVBytes.noise(40))
        try writer.write(WAVBytes.noise(4))
        try writer.finish()
        #expect(try PCMRead.wav(writer.sink.bytes).frameCount == 11)
    }

    @Test func writesAfterWhatTheSinkAlreadyHolds() throws {
        var sink = ArrayByteSink()
        try sink.write([0xAA, 0xBB, 0xCC])
        var writer = try WAVWriter(sink: sink, format: PCMFormat(sampleRate: 8000, channelCount: 1, sampleFormat: .int16))
        try writer.write([1, 2])
        try writer.finish()
        let bytes = writer.sink.bytes
        #expect(Array(bytes[0..<3]) == [0xAA, 0xBB, 0xCC])
        #expect(try PCMRead.wav(Array(bytes[3...])).bytes == [1, 2])
    }

    @Test func misuseIsATypedError() throws {
        let format = PCMFormat(sampleRate: 8000, channelCount: 2, sampleFormat: .int24)
        var writer = try WAVWriter(sink: ArrayByteSink(), format: format)
        #expect(PCMRead.error { () throws(WAVError) in try writer.write([1, 2, 3]) } == .partialFrameWrite(byteCount: 3, bytesPerFrame: 6))
        #expect(writer.framesWritten == 0)
        try writer.finish()
        #expect(PCMRead.error { () throws(WAVError) in try writer.write([1, 2, 3, 4, 5, 6]) } == .writerFinished)
        #expect(PCMRead.error { () throws(WAVError) in try writer.finish() } == .writerFinished)

        let bad: [(PCMFormat, WAVError)] = [
            (PCMFormat(sampleRate: 8000, channelCount: 2, sampleFormat: .int16, isInterleaved: false),
             .unsupportedFormat(field: "isInterleaved", value: 0, allowed: "interleaved (1)")),
            (PCMFormat(sampleRate: 8000, channelCount: 0, sampleFormat: .int16), .unsupportedFormat(field: "channelCount", value: 0, allowed: "1...64")),
            (PCMFormat(sampleRate: 8000, channelCount: 65, sampleFormat: .int16), .unsupportedFormat(field: "channelCount", value: 65, allowed: "1...64")),
            (PCMFormat(sampleRate: 0, channelCount: 1, sampleFormat: .int16), .unsupportedFormat(field: "sampleRate", value: 0, allowed: "1...768000")),
            (PCMFormat(sampleRate: 800_000, channelCount: 1, sampleFormat: .int16), .unsupportedFormat(field: "sampleRate", value: 800_000, allowed: "1...768000")),
        ]
        for (format, expected) in bad {
            #expect(PCMRead.error { () throws(WAVError) in try WAVWriter(sink: ArrayByteSink(), format: format) } == expected)
        }
    }

    @Test(arguments: 1...8)
    func defaultMasksAreFFmpegsDefaultLayouts(channels: Int) {
        let masks: [UInt32] = [0x4, 0x3, 0xB, 0x107, 0x37, 0x3F, 0x70F, 0x63F]
        #expect(WAVChannelMask.defaultMask(channelCount: channels) == masks[channels - 1])
        #expect(WAVChannelMask.defaultMask(channelCount: channels).nonzeroBitCount == channels)
    }
}
