import MediaCore
import Testing

@Suite struct ByteReaderTests {
    @Test func readsBigAndLittleEndian() throws {
        var reader = ByteReader([0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09], baseOffset: 100)
        #expect(try reader.readUInt8() == 0x01)
        #expect(try reader.readUInt16() == 0x0203)
        #expect(try reader.readUInt24() == 0x040506)
        #expect(reader.offset == 106)
        #expect(try reader.readLittleEndian(byteCount: 2) == 0x0807)
        #expect(reader.remaining == 1)
    }

    @Test func aReadPastTheEndNamesTheOffsetAndDoesNotMove() throws {
        var reader = ByteReader([1, 2, 3], baseOffset: 1000)
        try reader.skip(2)
        #expect(throws: BinaryReadError(offset: 1002, needed: 4, available: 1, unit: .bytes)) { try reader.readUInt32() }
        #expect(reader.offset == 1002)
        #expect(try reader.readUInt8() == 3)
        #expect(reader.isAtEnd)
    }

    @Test func hostileCountsAreRefusedBeforeAllocating() {
        var reader = ByteReader([0, 1, 2, 3])
        #expect(throws: BinaryReadError.self) { try reader.readBytes(Int.max) }
        #expect(throws: BinaryReadError.self) { try reader.readBytes(-1) }
        #expect(throws: BinaryReadError.self) { try reader.readReader(5) }
        #expect(throws: BinaryReadError.self) { try reader.skip(.max) }
    }

    @Test func subReadersKeepAbsoluteOffsets() throws {
        var reader = ByteReader(Array(0..<16), baseOffset: 50)
        try reader.skip(4)
        var box = try reader.readReader(8)
        #expect(box.offset == 54)
        #expect(box.remaining == 8)
        try box.skip(7)
        #expect(throws: BinaryReadError(offset: 61, needed: 2, available: 1, unit: .bytes)) { try box.readUInt16() }
        #expect(reader.offset == 62)
    }

    @Test func writerIsTheInverse() {
        var writer = ByteWriter()
        writer.write(UInt8(0xAB))
        writer.write(UInt16(0x1234))
        writer.writeBigEndian(0x56789A, byteCount: 3)
        writer.write(UInt32(0xDEADBEEF))
        writer.writeLittleEndian(0x0102, byteCount: 2)
        writer.patchBigEndian(0xFFFF, byteCount: 2, at: 1)
        #expect(writer.bytes == [0xAB, 0xFF, 0xFF, 0x56, 0x78, 0x9A, 0xDE, 0xAD, 0xBE, 0xEF, 0x02, 0x01])
    }
}

@Suite struct BitReaderTests {
    @Test func readsAcrossByteBoundaries() throws {
        var reader = BitReader([0b1010_1100, 0b0101_0011, 0xFF])
        #expect(try reader.readBits(3) == 0b101)
        #expect(try reader.readBits(7) == 0b0_1100_01)
        #expect(try reader.readFlag() == false)
        #expect(try reader.readBits(13) == 0b1_0011_1111_1111)
        #expect(reader.bitsRemaining == 0)
    }

    @Test func readsSixtyFourBitsAtOnce() throws {
        var reader = BitReader([0x80, 1, 2, 3, 4, 5, 6, 7, 0xF0])
        #expect(try reader.readBits(1) == 1)
        #expect(try reader.readBits(64) == 0x0002_0406_080A_0C0F)
    }

    @Test func errorsNameTheByteAndCountBits() throws {
        var reader = BitReader([0xFF, 0xFF], baseOffset: 10)
        try reader.skipBits(12)
        #expect(throws: BinaryReadError(offset: 11, needed: 5, available: 4, unit: .bits)) { try reader.readBits(5) }
        #expect(reader.peekBits(4) == 0xF)
        #expect(reader.peekBits(5) == nil)
    }

    @Test func alignsRelativeToTheWindowAndKeepsTheBits() throws {
        var reader = BitReader([0xFF, 0b1011_0110, 0x01], range: 1..<3)
        #expect(try reader.readBits(3) == 0b101)
        let padding = reader.alignToByte()
        #expect(padding.count == 5)
        #expect(padding.description == "10110")
        #expect(try reader.readBits(8) == 1)
    }

    @Test func writerIsTheInverse() throws {
        var writer = BitWriter()
        writer.write(0b101, bits: 3)
        writer.writeFlag(true)
        writer.write(0x2B7, bits: 11)
        var kept = BitString()
        kept.append(0b011, bitCount: 3)
        writer.write(kept)
        #expect(writer.bitCount == 18)
        writer.alignToByte()
        var reader = BitReader(writer.bytes)
        #expect(try reader.readBits(3) == 0b101)
        #expect(try reader.readFlag())
        #expect(try reader.readBits(11) == 0x2B7)
        #expect(try reader.readBits(3) == 0b011)
        #expect(try reader.readBits(6) == 0)
    }
}

@Suite struct AudioConfigurationTests {
    @Test func defaultsAreTheSeeds() {
        let config = AudioConfiguration.default
        #expect(config.channelCount == 2)
        #expect(config.sampleRate == 44100)
        #expect(config.bitDepth == 16)
        #expect(config.pcmFormat == PCMFormat(sampleRate: 44100, channelCount: 2, sampleFormat: .int16))
        #expect(config.pcmFormat.bytesPerFrame == 4)
    }

    @Test func unsupportedValuesAreClearErrors() {
        #expect(throws: AudioConfigurationError.unsupportedChannelCount(0)) { try AudioConfiguration(channelCount: 0) }
        #expect(throws: AudioConfigurationError.unsupportedSampleRate(44000)) { try AudioConfiguration(sampleRate: 44000) }
        #expect(throws: AudioConfigurationError.unsupportedBitDepth(12)) { try AudioConfiguration(bitDepth: 12) }
        #expect(AudioConfigurationError.unsupportedSampleRate(1).description.contains("44100"))
    }

    @Test func mediaTypesAndSamples() {
        #expect(MediaType.audioVideo.contains(.audio))
        #expect(MediaType.audioVideo.contains(.video))
        let format = FormatDescription.pcm(AudioConfiguration.default.pcmFormat)
        #expect(format.mediaType == .audio)
        let sample = MediaSample(data: [0, 0, 0, 0], presentationTime: MediaTime(value: 10, timescale: 44100),
                                 duration: MediaTime(value: 1, timescale: 44100), format: format)
        #expect(sample.decodeTime == sample.presentationTime)
        #expect(sample.trackID == 1)
        #expect(FourCharacterCode("mp4a").rawValue == 0x6D70_3461)
        #expect(FourCharacterCode("mp4a").description == "mp4a")
        #expect(FourCharacterCode(rawValue: 0x00A9_7A7F).description == "\\x0\\xa9z\\x7f")
    }
}

@Suite struct ConcatenatedByteSourceTests {
    /// Reads inside one part, across parts, past the end and over empty parts give the bytes of
    /// the parts end to end.
    @Test func readsAreThoseOfThePartsEndToEnd() throws {
        let parts: [[UInt8]] = [Array(0..<10), [], Array(10..<13), Array(13..<40)]
        let whole = parts.flatMap { $0 }
        let source = ConcatenatedByteSource(parts.map(ArrayRandomAccessSource.init))
        #expect(source.byteCount == Int64(whole.count))
        for offset in 0...whole.count {
            for count in [0, 1, 2, 3, 9, 17, 40, 50] {
                let end = min(whole.count, offset + count)
                #expect(try source.read(at: Int64(offset), count: count) == Array(whole[offset..<end]), "at \(offset), \(count) bytes")
            }
        }
        #expect(try source.read(at: Int64(whole.count) + 5, count: 4) == [], "past the end")
        #expect(try source.read(at: Int64.max, count: 1) == [], "no overflow at the largest offset")
        #expect(try source.read(at: 3, count: Int.max) == Array(whole[3...]), "no overflow at the largest count")
        let trailingEmpty = ConcatenatedByteSource([ArrayRandomAccessSource([1, 2]), ArrayRandomAccessSource([])])
        #expect(try trailingEmpty.read(at: 0, count: 5) == [1, 2])
        #expect(try trailingEmpty.read(at: 2, count: 1) == [])
        #expect(throws: ByteStreamError.self) { try source.read(at: -1, count: 1) }
    }

    /// Parts read several times in a row read as the same parts listed that many times, and a
    /// repeat count past Int64.max bytes neither traps nor reads past the parts.
    @Test func repeatedPartsReadAsTheirRepetitions() throws {
        let runs: [([UInt8], Int)] = [(Array(0..<7), 3), ([], 5), (Array(50..<53), 1), ([9], 0), (Array(60..<64), 4)]
        let whole = runs.flatMap { part, repeats in Array(repeating: part, count: repeats).flatMap { $0 } }
        let source = ConcatenatedByteSource(runs: runs.map { (ArrayRandomAccessSource($0.0), $0.1) })
        #expect(source.byteCount == Int64(whole.count))
        for offset in 0...whole.count {
            for count in [0, 1, 2, 6, 7, 8, 15, 40, 60] {
                let end = min(whole.count, offset + count)
                #expect(try source.read(at: Int64(offset), count: count) == Array(whole[offset..<end]), "at \(offset), \(count) bytes")
            }
        }
        let endless = ConcatenatedByteSource(runs: [(ArrayRandomAccessSource([1, 2, 3]), Int.max), (ArrayRandomAccessSource([4]), Int.max)])
        #expect(endless.byteCount == Int64.max)
        #expect(try endless.read(at: Int64.max - 2, count: 4) == [(Int64.max - 2) % 3 + 1, (Int64.max - 1) % 3 + 1].map(UInt8.init))
        #expect(try endless.read(at: Int64.max, count: 1) == [])
        #expect(try endless.read(at: Int64.max - 1, count: 2).count == 1, "within one repeat, still not past the total")
    }

    /// A part that reads shorter than it measured (a file cut while it is read) ends the stream
    /// there, in whichever repeat it is read.
    @Test func aPartThatReadsShortEndsTheRead() throws {
        struct ShortPart: RandomAccessByteSource {
            var byteCount: Int64 { 10 }
            func read(at offset: Int64, count: Int) throws(ByteStreamError) -> [UInt8] {
                Array([UInt8](0..<6).dropFirst(Int(min(offset, 6))).prefix(count))
            }
        }
        let source = ConcatenatedByteSource(runs: [(ShortPart(), 3)])
        #expect(source.byteCount == 30)
        #expect(try source.read(at: 2, count: 20) == [2, 3, 4, 5], "stops at the first short read")
        #expect(try source.read(at: 12, count: 20) == [2, 3, 4, 5], "in a later repeat too")
        #expect(try source.read(at: 17, count: 2) == [], "past what the part gives")
    }
}

/// A list that keeps a run of equal elements once.
@Suite struct RunLengthArrayTests {
    @Test func runsMergeAndReadAsTheElements() {
        let elements = ["a", "a", "b", "a", "a", "a", "c", "c"]
        var list = RunLengthArray(elements)
        #expect(Array(list) == elements && list.count == 8)
        #expect(list.runs.map(\.element) == ["a", "b", "a", "c"] && list.runs.map(\.count) == [2, 1, 3, 2])
        #expect(elements.indices.allSatisfy { list[$0] == elements[$0] })
        list.append("c", count: 1_000_000)
        list.append("d", count: 0)
        #expect(list.count == 1_000_008 && list.runs.count == 4 && list.last == "c")
        let joined = list + ["c", "e"]
        #expect(joined.runs.map(\.count) == [2, 1, 3, 1_000_003, 1] && joined.last == "e")
        var copied = RunLengthArray<String>()
        copied.append(contentsOf: joined)
        #expect(copied == joined && copied != list && RunLengthArray<String>() == [])
        #expect(Array(RunLengthArray([1, 2, 2]).reversed()) == [2, 2, 1])
        #expect((RunLengthArray(["a"]) + RunLengthArray(["a", "b"])).runs.map(\.count) == [2, 1], "runs merge where two lists meet")
    }
}
