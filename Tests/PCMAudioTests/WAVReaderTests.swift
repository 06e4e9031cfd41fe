import Foundation
import MediaCore
import PCMAudio
import Testing
import TestSupport

/// WAVReader on hand-built files: every chunk arrangement and header field it reads, the
/// leniencies FFmpeg has, and a typed error naming chunk, field and offset for every lie.
@Suite(.blocking) struct WAVReaderTests {
    // MARK: - Well-formed files

    @Test func readsAPlainPCMFile() throws {
        let data = WAVBytes.noise(400)
        let file = WAVBytes.simple(data: data)
        let result = try PCMRead.wav(file)
        #expect(result.format == PCMFormat(sampleRate: 44100, channelCount: 2, sampleFormat: .int16))
        #expect(result.frameCount == 100)
        #expect(result.bytes == data)
        #expect(result.warnings.isEmpty)
        let reader = try #require(result.reader)
        #expect(reader.dataOffset == 44)
        #expect(reader.formatTag == 1)
        #expect(reader.channelMask == nil)
        #expect(reader.validBitsPerSample == 16)
        #expect(!reader.isRF64)
        #expect(reader.framesRead == 100)
    }

    @Test func skipsChunksInAnyOrderWithPadBytes() throws {
        let data = WAVBytes.noise(6 * 3 * 10)
        let file = WAVBytes.riff(
            WAVBytes.chunk("JUNK", [UInt8](repeating: 0, count: 28)),
            WAVBytes.chunk("LIST", Array("INFOISFT".utf8) + WAVBytes.le32(5) + Array("odd!\0".utf8)),   // odd: pad byte follows
            WAVBytes.chunk("bext", WAVBytes.noise(3)),                                                  // odd again
            WAVBytes.chunk("fmt ", WAVBytes.extensible(channels: 6, rate: 48000, bits: 24, validBits: 20, mask: 0x3F)),
            WAVBytes.chunk("fact", WAVBytes.le32(10)),
            WAVBytes.chunk("cue ", WAVBytes.noise(7)),
            WAVBytes.chunk("data", data),
            WAVBytes.chunk("LIST", WAVBytes.noise(12)))                                                // after data: not read
        let result = try PCMRead.wav(file)
        #expect(result.format == PCMFormat(sampleRate: 48000, channelCount: 6, sampleFormat: .int24))
        #expect(result.bytes == data)
        #expect(result.frameCount == 10)
        #expect(result.warnings.isEmpty)
        #expect(result.reader?.channelMask == 0x3F)
        #expect(result.reader?.validBitsPerSample == 20)
        #expect(result.reader?.formatTag == 0xFFFE)
    }

    @Test(arguments: [(1, 8, PCMSampleFormat.uint8), (1, 16, .int16), (1, 24, .int24), (1, 32, .int32), (3, 32, .float32), (3, 64, .float64),
                      (1, 12, .int16), (1, 20, .int24), (1, 4, .uint8)])
    func mapsFormatTagAndBitsToSampleFormat(tag: Int, bits: Int, expected: PCMSampleFormat) throws {
        let width = expected.bytesPerSample
        let plain = WAVBytes.simple(format: WAVBytes.fmt(tag: tag, channels: 3, rate: 22050, bits: bits), data: WAVBytes.noise(width * 3 * 5))
        let result = try PCMRead.wav(plain)
        #expect(result.format.sampleFormat == expected)
        #expect(result.frameCount == 5)
        #expect(result.reader?.validBitsPerSample == bits)

        let extensible = WAVBytes.simple(format: WAVBytes.extensible(subFormat: tag, channels: 3, rate: 22050, bits: width * 8,
                                                                     validBits: bits, mask: 7), data: WAVBytes.noise(width * 3 * 5))
        let fromExtensible = try PCMRead.wav(extensible)
        #expect(fromExtensible.format == result.format)
        #expect(fromExtensible.reader?.channelMask == 7)
        #expect(fromExtensible.reader?.validBitsPerSample == bits)
    }

    @Test func acceptsAWaveFormatExWithCbSizeAndAmbisonicGUID() throws {
        // An 18-byte fmt (WAVEFORMATEX with cbSize 0), as many writers emit for IEEE float.
        let floatFile = WAVBytes.simple(format: WAVBytes.fmt(tag: 3, channels: 1, rate: 8000, bits: 32) + WAVBytes.le16(0), data: WAVBytes.noise(40))
        #expect(try PCMRead.wav(floatFile).format == PCMFormat(sampleRate: 8000, channelCount: 1, sampleFormat: .float32))
        let ambisonicTail: [UInt8] = [0x21, 0x07, 0xD3, 0x11, 0x86, 0x44, 0xC8, 0xC1, 0xCA, 0x00, 0x00, 0x00]
        let ambisonic = WAVBytes.simple(format: WAVBytes.extensible(channels: 4, bits: 16, validBits: 16, mask: 0, guidTail: ambisonicTail),
                                        data: WAVBytes.noise(32))
        #expect(try PCMRead.wav(ambisonic).format == PCMFormat(sampleRate: 48000, channelCount: 4, sampleFormat: .int16))
    }

    @Test(arguments: [0, 0xFFFF_FFFF])
    func streamingDataSizeReadsToTheEnd(size: Int) throws {
        let data = WAVBytes.noise(64)
        let result = try PCMRead.wav(WAVBytes.simple(data: data, dataSize: size))
        #expect(result.frameCount == nil)
        #expect(result.reader?.declaredDataByteCount == nil)
        #expect(result.bytes == data)
        #expect(result.warnings.isEmpty)
    }

    @Test func readsRF64WithDS64SizesAndTable() throws {
        let data = WAVBytes.noise(4 * 25)
        // ds64: RIFF size, data size, sample count, a table naming the 64-bit size of a JUNK chunk.
        let ds64 = WAVBytes.le(0, 8) + WAVBytes.le(UInt64(data.count), 8) + WAVBytes.le(25, 8) + WAVBytes.le32(1)
            + Array("JUNK".utf8) + WAVBytes.le(6, 8)
        let body = Array("WAVE".utf8) + WAVBytes.chunk("ds64", ds64) + WAVBytes.chunk("JUNK", WAVBytes.noise(6), size: 0xFFFF_FFFF)
            + WAVBytes.chunk("fmt ", WAVBytes.fmt()) + WAVBytes.chunk("data", data, size: 0xFFFF_FFFF)
        let file = Array("RF64".utf8) + WAVBytes.le32(0xFFFF_FFFF) + body
        let result = try PCMRead.wav(file)
        #expect(result.reader?.isRF64 == true)
        #expect(result.frameCount == 25)
        #expect(result.reader?.ds64SampleCount == 25)
        #expect(result.bytes == data)
        #expect(result.warnings.isEmpty)

        // BW64 (ITU-R BS.2088) is the same layout.
        let bw64 = Array("BW64".utf8) + WAVBytes.le32(0xFFFF_FFFF) + body
        #expect(try PCMRead.wav(bw64).bytes == data)
    }

    @Test(arguments: [1, 2, 3, 7, 4096, Int.max, 0, -5])
    func readSizeDoesNotChangeTheFrames(maxFrames: Int) throws {
        let data = WAVBytes.noise(6 * 1001)
        let file = WAVBytes.simple(format: WAVBytes.fmt(channels: 2, bits: 24), data: data)
        var reader = try WAVReader(source: ArrayByteSource(file))
        var collected: [UInt8] = []
        var calls = 0
        while let chunk = try reader.read(maxFrames: maxFrames) {
            #expect(chunk.count % 6 == 0)
            #expect(chunk.count / 6 <= max(1, maxFrames))
            collected += chunk
            calls += 1
        }
        #expect(collected == data)
        let step = max(1, maxFrames)
        #expect(calls == 1001 / step + (1001 % step == 0 ? 0 : 1))
        #expect(try reader.read(maxFrames: 10) == nil, "nil stays nil")
    }

    // MARK: - Leniency

    @Test func dataBeyondTheFileIsDeliveredWithAWarning() throws {
        let data = WAVBytes.noise(400)
        let file = WAVBytes.simple(data: data, dataSize: 100_000)
        for maxFrames in [1, 4096] {
            let result = try PCMRead.wav(file, maxFrames: maxFrames)
            #expect(result.bytes == data)
            #expect(result.frameCount == 25_000, "a generic source cannot know the file is short until its end")
            #expect(result.warnings.map(\.message) == ["WAV file at byte 36: data chunk declares 100000 bytes, file ends after 400"])
            #expect(result.warnings.map(\.offset) == [36] && result.warnings.allSatisfy { $0.kind == .inconsistentHeader })
        }
    }

    @Test func dataBeyondTheFileIsSeenAtOnceInAFile() throws {
        let directory = try Tool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("short.wav").path
        let data = WAVBytes.noise(402)   // 100 frames and 2 bytes
        try Data(WAVBytes.simple(data: data, dataSize: 100_000)).write(to: URL(fileURLWithPath: path))
        let (reader, bytes) = try PCMRead.wavFile(path)
        #expect(reader.frameCount == 100)
        #expect(reader.declaredDataByteCount == 100_000)
        #expect(bytes == Array(data[..<400]))
        #expect(reader.warnings.map(\.message) == ["WAV file at byte 36: data chunk declares 100000 bytes, file ends after 402",
                                                "PCM data at byte 444: 2 trailing bytes do not make a whole 4-byte frame; dropped"])
        #expect(reader.warnings.map(\.offset) == [36, 444])
    }

    @Test func trailingPartialFrameIsDroppedWithAWarning() throws {
        // The data size is not a multiple of the block align (and a chunk follows).
        let data = WAVBytes.noise(4 * 10 + 3)
        let declared = try PCMRead.wav(WAVBytes.simple(data: data) + WAVBytes.chunk("LIST", WAVBytes.noise(8)))
        #expect(declared.frameCount == 10)
        #expect(declared.bytes == Array(data[..<40]))
        #expect(declared.warnings.map(\.message) == ["PCM data at byte 84: 3 trailing bytes do not make a whole 4-byte frame; dropped"])

        // A streamed file that stops inside a frame.
        let streamedFile = WAVBytes.riff(WAVBytes.chunk("fmt ", WAVBytes.fmt()), WAVBytes.chunk("data", data, size: 0, pad: false))
        let streamed = try PCMRead.wav(streamedFile)
        #expect(streamed.bytes == Array(data[..<40]))
        #expect(streamed.warnings.map(\.message) == ["PCM data at byte 84: 3 trailing bytes do not make a whole 4-byte frame; dropped"])
        #expect(streamed.warnings.map(\.offset) == [84])
    }

    @Test func secondFmtAndOversizedValidBitsAreWarnings() throws {
        let file = WAVBytes.riff(WAVBytes.chunk("fmt ", WAVBytes.extensible(channels: 1, bits: 16, validBits: 20, mask: 4)),
                                 WAVBytes.chunk("fmt ", WAVBytes.fmt(channels: 2, bits: 8)),
                                 WAVBytes.chunk("data", WAVBytes.noise(8)))
        let result = try PCMRead.wav(file)
        #expect(result.format == PCMFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .int16))
        #expect(result.reader?.validBitsPerSample == 16)
        #expect(result.warnings.count == 2)
        #expect(result.warnings.first?.message.contains("20 valid bits in 16-bit samples") == true)
        #expect(result.warnings.last?.message == "WAV file at byte 60: a second fmt chunk is ignored")
        #expect(result.warnings.last?.offset == 60)
    }

    // MARK: - Errors

    /// Offsets in a plain file: fmt body at 20; channels 22, rate 24, block align 32, bits 34.
    @Test func inconsistentHeadersThrowNamingFieldAndOffset() throws {
        func failure(_ fmt: [UInt8]) -> WAVError? {
            PCMRead.error { () throws(WAVError) in try PCMRead.wav(WAVBytes.simple(format: fmt, data: WAVBytes.noise(16))) }
        }
        #expect(failure(WAVBytes.fmt(channels: 0, blockAlign: 2)) == .invalidField(chunk: "fmt ", field: "channels", value: 0, offset: 22, allowed: "1...64"))
        #expect(failure(WAVBytes.fmt(channels: 65)) == .invalidField(chunk: "fmt ", field: "channels", value: 65, offset: 22, allowed: "1...64"))
        #expect(failure(WAVBytes.fmt(rate: 0)) == .invalidField(chunk: "fmt ", field: "sample rate", value: 0, offset: 24, allowed: "1...768000 Hz"))
        #expect(failure(WAVBytes.fmt(rate: 768_001)) == .invalidField(chunk: "fmt ", field: "sample rate", value: 768_001, offset: 24, allowed: "1...768000 Hz"))
        #expect(failure(WAVBytes.fmt(rate: 0xFFFF_FFFF, byteRate: 0)) == .invalidField(chunk: "fmt ", field: "sample rate", value: 0xFFFF_FFFF, offset: 24, allowed: "1...768000 Hz"))
        #expect(failure(WAVBytes.fmt(channels: 2, bits: 16, blockAlign: 3)) == .blockAlignMismatch(blockAlign: 3, channels: 2, bytesPerSample: 2, offset: 32))
        #expect(failure(WAVBytes.fmt(channels: 2, bits: 24, blockAlign: 8)) == .blockAlignMismatch(blockAlign: 8, channels: 2, bytesPerSample: 3, offset: 32))
        #expect(failure(WAVBytes.fmt(bits: 0, blockAlign: 4)) == .invalidField(chunk: "fmt ", field: "bits per sample", value: 0, offset: 34, allowed: "1...32"))
        #expect(failure(WAVBytes.fmt(bits: 40)) == .unsupportedBitDepth(formatTag: 1, bitsPerSample: 40, offset: 34))
        #expect(failure(WAVBytes.fmt(tag: 3, bits: 16)) == .unsupportedBitDepth(formatTag: 3, bitsPerSample: 16, offset: 34))
        #expect(failure(WAVBytes.fmt(tag: 0x55)) == .unsupportedFormatTag(tag: 0x55, offset: 20))
        #expect(failure(WAVBytes.fmt(tag: 2, bits: 4)) == .unsupportedFormatTag(tag: 2, offset: 20))
        #expect(failure(Array(WAVBytes.fmt().prefix(14))) == .invalidField(chunk: "fmt ", field: "size", value: 14, offset: 16, allowed: "16 or more"))
        // WAVE_FORMAT_EXTENSIBLE: the SubFormat at 44, cbSize at 36, a body of 40 bytes.
        #expect(failure(WAVBytes.extensible(subFormat: 0x0092)) == .unsupportedFormatTag(tag: 0x92, offset: 44))
        #expect(failure(WAVBytes.extensible(guidTail: [UInt8](repeating: 0x11, count: 12))) == .unsupportedFormatTag(tag: 1, offset: 44))
        #expect(failure(WAVBytes.extensible(cbSize: 0)) == .invalidField(chunk: "fmt ", field: "cbSize", value: 0, offset: 36, allowed: "22 or more for WAVE_FORMAT_EXTENSIBLE"))
        #expect(failure(WAVBytes.fmt(tag: 0xFFFE) + WAVBytes.le16(0)) == .invalidField(chunk: "fmt ", field: "size", value: 18, offset: 16, allowed: "40 or more for WAVE_FORMAT_EXTENSIBLE"))
    }

    @Test func errorMessagesNameChunkFieldAndOffset() {
        let zero = PCMRead.error { () throws(WAVError) in
            try PCMRead.wav(WAVBytes.simple(format: WAVBytes.fmt(channels: 0, blockAlign: 2), data: []))
        }
        #expect(zero?.description == "WAV file at byte 22: fmt chunk declares channels 0, allowed 1...64")
        let align = PCMRead.error { () throws(WAVError) in
            try PCMRead.wav(WAVBytes.simple(format: WAVBytes.fmt(channels: 6, bits: 16, blockAlign: 4), data: []))
        }
        #expect(align?.description == "WAV file at byte 32: fmt chunk declares block align 4, but 6 channels × 2 bytes is 12")
        let adts = PCMRead.error { () throws(WAVError) in try PCMRead.wav([0xFF, 0xF1, 0x50, 0x80, 0x01, 0x1F, 0xFC, 0x21, 0x21]) }
        #expect(adts?.description == "not a WAV file: starts with '\\xff\\xf1P\\x80' at byte 0, expected 'RIFF', 'RF64' or 'BW64'")
    }

    @Test func structuralErrors() throws {
        let fmt = WAVBytes.chunk("fmt ", WAVBytes.fmt())
        let data = WAVBytes.chunk("data", WAVBytes.noise(8))
        func failure(_ bytes: [UInt8]) -> WAVError? { PCMRead.error { () throws(WAVError) in try PCMRead.wav(bytes) } }

        #expect(failure([]) == .truncated(structure: "RIFF header", offset: 0, needed: 12, available: 0))
        #expect(failure(Array("RIFF".utf8) + [0, 0]) == .truncated(structure: "RIFF header", offset: 0, needed: 12, available: 6))
        #expect(failure(Array("ID3\u{3}\0\0\0\0\0\0".utf8)) == .notRIFF(found: "ID3\\x3", offset: 0))
        #expect(failure(WAVBytes.riff(fmt, data, form: "AVI ")) == .notWAVE(formType: "AVI ", offset: 8))
        #expect(failure(WAVBytes.riff(data, fmt)) == .missingChunk(id: "fmt ", offset: 12, reason: "the data chunk at byte 12 comes before any fmt chunk"))
        #expect(failure(WAVBytes.riff(fmt)) == .missingChunk(id: "data", offset: 36, reason: "the file ends after 36 bytes"))
        #expect(failure(WAVBytes.riff(WAVBytes.chunk("LIST", WAVBytes.noise(4)))) == .missingChunk(id: "fmt ", offset: 24, reason: "the file ends after 24 bytes"))
        #expect(failure(WAVBytes.riff(fmt, WAVBytes.chunk("LIST", WAVBytes.noise(10), size: 5000), data))
                == .missingChunk(id: "data", offset: 70, reason: "the file ends after 70 bytes; the 'LIST' chunk at byte 36 declares 5000 bytes"))
        #expect(failure(Array(WAVBytes.riff(WAVBytes.chunk("fmt ", WAVBytes.extensible())).prefix(30)))
                == .truncated(structure: "fmt chunk", offset: 20, needed: 40, available: 10))
        // RF64 without ds64 first, or with a ds64 too short for its three sizes.
        let rf64 = Array("RF64".utf8) + WAVBytes.le32(0xFFFF_FFFF) + Array("WAVE".utf8)
        #expect(failure(rf64 + fmt + data) == .missingChunk(id: "ds64", offset: 12, reason: "the first chunk of an RF64 file is 'fmt ' (EBU Tech 3306 § 3)"))
        #expect(failure(rf64 + WAVBytes.chunk("ds64", WAVBytes.noise(16)) + fmt + data)
                == .invalidField(chunk: "ds64", field: "size", value: 16, offset: 16, allowed: "24 or more"))
        #expect(failure(rf64 + WAVBytes.chunk("ds64", WAVBytes.noise(28), size: 28).prefix(30))
                == .truncated(structure: "ds64 chunk", offset: 20, needed: 28, available: 22))
    }

    @Test func randomBytesAndADTSAreNotWAV() throws {
        for seed in 1...50 as ClosedRange<UInt64> {
            let bytes = WAVBytes.noise(Int(seed) * 7, seed: seed)
            let error = PCMRead.error { () throws(WAVError) in try PCMRead.wav(bytes) }
            switch error {
            case .notRIFF, .truncated: break
            default: Issue.record("random bytes gave \(String(describing: error))")
            }
        }
        let adts: [UInt8] = [0xFF, 0xF1, 0x50, 0x80, 0x2E, 0x7F, 0xFC] + [UInt8](repeating: 0x21, count: 364)
        #expect(PCMRead.error { () throws(WAVError) in try PCMRead.wav(adts) } == .notRIFF(found: "\\xff\\xf1P\\x80", offset: 0))
    }

    /// Every prefix and every single-byte change of valid files: an error or frames, never a trap;
    /// whole frames and no more than the input; the same whatever the read size.
    @Test func everyTruncationAndByteFlipIsSafe() throws {
        let rf64Data = WAVBytes.noise(12)
        let rf64 = Array("RF64".utf8) + WAVBytes.le32(0xFFFF_FFFF) + Array("WAVE".utf8)
            + WAVBytes.chunk("ds64", WAVBytes.le(0, 8) + WAVBytes.le(12, 8) + WAVBytes.le(3, 8) + WAVBytes.le32(0))
            + WAVBytes.chunk("fmt ", WAVBytes.fmt(tag: 3, channels: 1, bits: 32)) + WAVBytes.chunk("data", rf64Data, size: 0xFFFF_FFFF)
        let files = [
            WAVBytes.simple(data: WAVBytes.noise(24)),
            WAVBytes.riff(WAVBytes.chunk("LIST", WAVBytes.noise(5)), WAVBytes.chunk("fmt ", WAVBytes.extensible(channels: 2, bits: 24)),
                          WAVBytes.chunk("data", WAVBytes.noise(18))),
            rf64,
        ]
        for file in files {
            var variants = (0...file.count).map { Array(file.prefix($0)) }
            for index in file.indices {
                for mask: UInt8 in [0x01, 0x80, 0xFF] {
                    var changed = file
                    changed[index] ^= mask
                    variants.append(changed)
                }
            }
            for variant in variants {
                guard let one = try? PCMRead.wav(variant, maxFrames: 1) else { continue }
                let many = try PCMRead.wav(variant, maxFrames: 4096)
                #expect(one.bytes == many.bytes)
                #expect(one.warnings == many.warnings)
                #expect(one.bytes.count % one.format.bytesPerFrame == 0)
                #expect(one.bytes.count <= variant.count)
            }
        }
    }
}
