import AACBitstream
import MediaCore
import Testing

/// Builds ADTS streams with the writer, so the reader is checked against known frames.
struct ADTSStreamFixture {
    var payloads: [[UInt8]]
    var bytes: [UInt8]
    var frameOffsets: [Int]

    init(frameCount: Int, channels: Int = 2, rate: Int = 44100, firstPayloadByte: UInt8 = 0x21) throws {
        let config = try AudioSpecificConfig(sampleRate: rate, channelCount: channels)
        var writer = try ADTSWriter(sink: ArrayByteSink(), audioSpecificConfig: config)
        payloads = []
        frameOffsets = []
        for index in 0..<frameCount {
            // Payloads avoid 0xFF so that only real headers carry a sync byte.
            let payload = (0..<(50 + index * 7 % 300)).map { UInt8(truncatingIfNeeded: Int(firstPayloadByte) + $0 + index) & 0x7F }
            frameOffsets.append(Int(writer.byteCount))
            try writer.write(rawDataBlock: payload)
            payloads.append(payload)
        }
        bytes = writer.sink.bytes
    }

    static func read(_ bytes: [UInt8], chunkSize: Int = 64 * 1024) throws -> (frames: [ADTSFrame], events: [ADTSStreamEvent], statistics: ADTSReader<ArrayByteSource>.Statistics) {
        var reader = ADTSReader(source: ArrayByteSource(bytes), chunkSize: chunkSize)
        var frames: [ADTSFrame] = []
        var events: [ADTSStreamEvent] = []
        while let frame = try reader.nextFrame() {
            frames.append(frame)
            events += reader.takeEvents()
        }
        events += reader.takeEvents()
        return (frames, events, reader.statistics)
    }
}

@Suite struct ADTSReaderTests {
    @Test(arguments: [1, 3, 7, 100, 65536])
    func readsEveryFrameWhateverTheChunkSize(chunkSize: Int) throws {
        let stream = try ADTSStreamFixture(frameCount: 40)
        let result = try ADTSStreamFixture.read(stream.bytes, chunkSize: chunkSize)
        #expect(result.frames.map { Array($0.payload) } == stream.payloads)
        #expect(result.frames.map { Int($0.offset) } == stream.frameOffsets)
        #expect(result.events.isEmpty)
        #expect(result.statistics.frameCount == 40)
        #expect(result.statistics.sampleCount == 40 * 1024)
        #expect(result.statistics.frameBytes == Int64(stream.bytes.count))
        #expect(result.frames.allSatisfy { $0.crcStatus == .absent })
    }

    @Test func resynchronisesAfterGarbageAndSaysWhere() throws {
        let stream = try ADTSStreamFixture(frameCount: 10)
        let junk: [UInt8] = [0x00, 0xFF, 0xF1, 0x13, 0xFF, 0x42] + [UInt8](repeating: 0x5A, count: 31)   // 37 bytes, two fake syncs
        let middle: [UInt8] = [0xFF, 0xF1, 0x4C, 0x80, 0x01, 0x1F, 0xFC, 0x99, 0x98, 0x97, 0x96, 0x95, 0x94]  // a header of another rate + junk
        let cut = stream.frameOffsets[5]
        let bytes = junk + stream.bytes[..<cut] + middle + stream.bytes[cut...]
        for chunkSize in [1, 5, 4096] {
            let result = try ADTSStreamFixture.read(bytes, chunkSize: chunkSize)
            #expect(result.frames.map { Array($0.payload) } == stream.payloads)
            #expect(result.events == [
                .skippedBytes(offset: 0, count: 37),
                .skippedBytes(offset: Int64(37 + cut), count: 13),
            ])
            #expect(result.statistics.skippedBytes == 50)
            #expect(result.statistics.damageCount == 2)
        }
    }

    @Test func skipsAnID3v2TagAtTheStart() throws {
        let stream = try ADTSStreamFixture(frameCount: 5)
        let tagBody = [UInt8](repeating: 0xFF, count: 255)   // sync-like bytes inside the tag must not matter
        let tag: [UInt8] = Array("ID3".utf8) + [4, 0, 0, 0x00, 0x00, 0x01, 0x7F] + tagBody
        let result = try ADTSStreamFixture.read(tag + stream.bytes, chunkSize: 16)
        #expect(result.frames.count == 5)
        #expect(result.events == [.id3Tag(offset: 0, length: 265)])
        #expect(result.statistics.id3Bytes == 265)
        #expect(result.statistics.damageCount == 0)
        #expect(result.frames.first?.offset == 265)
    }

    @Test func findsTheSameThingsWhateverTheChunking() throws {
        // Garbage, an ID3v2 tag after it, protected headers: nothing may depend on chunk size.
        let stream = try ADTSStreamFixture(frameCount: 4)
        let tag: [UInt8] = Array("ID3".utf8) + [3, 0, 0x10, 0, 0, 0, 5] + [1, 2, 3, 4, 5] + Array("3DI".utf8) + [3, 0, 0, 0, 0, 0, 5]
        let protected = ADTSHeader(protectionAbsent: false, profile: 1, samplingFrequencyIndex: SamplingFrequencyIndex(rawValue: 4),
                                   channelConfiguration: 2, frameLength: 15 + 20, rawDataBlockCountMinusOne: 3,
                                   rawDataBlockPositions: [1, 2, 3], crc: 0x1234)
        let protectedFrame = try protected.serialized() + [UInt8](repeating: 0x22, count: 20)
        let bytes = [0x49, 0x49, 0x44] + tag + stream.bytes + [0x13, 0x49] + protectedFrame + protectedFrame
        let reference = try ADTSStreamFixture.read(bytes)
        #expect(reference.frames.count == 6)
        #expect(reference.events.first == .skippedBytes(offset: 0, count: 3))      // "IID"
        #expect(reference.events.dropFirst().first == .id3Tag(offset: 3, length: 25))  // 10 + 5 + footer 10
        for chunkSize in 1...17 {
            let result = try ADTSStreamFixture.read(bytes, chunkSize: chunkSize)
            #expect(result.frames == reference.frames, "chunk size \(chunkSize)")
            #expect(result.events == reference.events, "chunk size \(chunkSize)")
        }
    }

    @Test func reportsATruncatedLastFrameInsteadOfInventingData() throws {
        let stream = try ADTSStreamFixture(frameCount: 6)
        let last = stream.frameOffsets[5]
        let declared = stream.bytes.count - last
        let bytes = Array(stream.bytes.dropLast(10))
        let result = try ADTSStreamFixture.read(bytes, chunkSize: 3)
        #expect(result.frames.count == 5)
        #expect(result.events == [.truncatedFrame(offset: Int64(last), declaredLength: declared, availableLength: declared - 10)])
        #expect(result.statistics.damageCount == 1)
    }

    @Test func tinyAndEmptyInputsEndCleanly() throws {
        #expect(try ADTSStreamFixture.read([]).frames.isEmpty)
        let junk = try ADTSStreamFixture.read([0xFF, 0xF1, 0x50])
        #expect(junk.frames.isEmpty)
        #expect(junk.events == [.skippedBytes(offset: 0, count: 3)])
    }

    @Test func framesWithSeveralRawDataBlocksCountAllTheirSamples() throws {
        var header = ADTSHeader(profile: 1, samplingFrequencyIndex: SamplingFrequencyIndex(rawValue: 3), channelConfiguration: 1,
                                frameLength: 7 + 100, rawDataBlockCountMinusOne: 2)
        let frame = try header.serialized() + [UInt8](repeating: 0x11, count: 100)
        header.rawDataBlockCountMinusOne = 0
        let result = try ADTSStreamFixture.read(frame + frame)
        #expect(result.frames.count == 2)
        #expect(result.frames.allSatisfy { $0.header.sampleCount == 3072 })
        #expect(result.statistics.sampleCount == 6144)
    }

    @Test func aRunIsWrittenAsTheFramesOfItsPacketsOneByOne() throws {
        let config = try AudioSpecificConfig(sampleRate: 44100, channelCount: 2)
        let payloads = (0..<50).map { index in [UInt8](repeating: UInt8(index), count: index * 37 % 700 + 1) }
        var single = try ADTSWriter(sink: ArrayByteSink(), audioSpecificConfig: config)
        for payload in payloads { try single.write(rawDataBlock: payload) }
        let run = MediaSampleRun(data: payloads.flatMap { $0 }, entries: payloads.map { .init(size: $0.count, duration: 1024) },
                                 firstDecodeTime: 0, timescale: 44100, format: try config.formatDescription())
        var batched = try ADTSWriter(sink: ArrayByteSink(), audioSpecificConfig: config)
        try batched.write(rawDataBlock: payloads[0])
        try batched.write(rawDataBlocksOf: run)
        #expect(batched.sink.bytes == single.sink.bytes[...].prefix(payloads[0].count + 7) + single.sink.bytes)
        #expect(batched.frameCount == 51 && batched.byteCount == Int64(batched.sink.bytes.count))
        // A packet too long for a frame refuses the whole run, before anything is written.
        let long = MediaSampleRun(data: [UInt8](repeating: 0, count: 8200), entries: [.init(size: 10, duration: 1024), .init(size: 8190, duration: 1024)],
                                  firstDecodeTime: 0, timescale: 44100, format: try config.formatDescription())
        #expect(throws: AACBitstreamError.self) { try batched.write(rawDataBlocksOf: long) }
        #expect(batched.frameCount == 51)
    }

    @Test func writerRefusesWhatADTSCannotCarry() throws {
        let config = try AudioSpecificConfig(sampleRate: 44100, channelCount: 2)
        var writer = try ADTSWriter(sink: ArrayByteSink(), audioSpecificConfig: config)
        #expect(throws: AACBitstreamError.self) { try writer.write(rawDataBlock: [UInt8](repeating: 0, count: 8185)) }
        try writer.write(rawDataBlock: [UInt8](repeating: 0, count: 8184))
        #expect(writer.byteCount == 8191)
        let heAAC = try AudioSpecificConfig(bytes: [0x2B, 0x92, 0x08, 0x00])
        // Explicit SBR signalling has an ADTS form: the core LC at the core rate.
        let template = try ADTSHeader(audioSpecificConfig: heAAC, frameLength: 7)
        #expect(template.profile == 1 && template.sampleRate == 22050)
        #expect(throws: AACBitstreamError.self) {
            try ADTSWriter(sink: ArrayByteSink(), audioSpecificConfig: try AudioSpecificConfig(bytes: [0xF9, 0x46, 0x20]))
        }
        var protected = template
        protected.protectionAbsent = false
        #expect(throws: AACBitstreamError.self) { try ADTSWriter(sink: ArrayByteSink(), template: protected) }
    }
}
