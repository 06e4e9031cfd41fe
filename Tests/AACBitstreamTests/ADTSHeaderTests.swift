import AACBitstream
import MediaCore
import Testing

@Suite struct ADTSHeaderTests {
    /// A header FFmpeg writes for a 371-byte stereo 44.1 kHz AAC-LC frame, checked bit by bit:
    /// FFF | 0 | 00 | 1 | 01 | 0100 | 0 | 010 | 0 | 0 | 0 | 0 | 0000101110011 | 11111111111 | 00
    static let ffmpegHeader: [UInt8] = [0xFF, 0xF1, 0x50, 0x80, 0x2E, 0x7F, 0xFC]

    @Test func parsesEveryField() throws {
        let header = try ADTSHeader(bytes: Self.ffmpegHeader)
        #expect(header.mpegVersion == .mpeg4)
        #expect(header.layer == 0)
        #expect(header.protectionAbsent)
        #expect(header.profile == 1)
        #expect(header.audioObjectType == .aacLC)
        #expect(header.samplingFrequencyIndex.rawValue == 4)
        #expect(header.sampleRate == 44100)
        #expect(!header.privateBit)
        #expect(header.channelConfiguration == 2)
        #expect(!header.originalCopy && !header.home)
        #expect(!header.copyrightIdentificationBit && !header.copyrightIdentificationStart)
        #expect(header.frameLength == 371)
        #expect(header.bufferFullness == 0x7FF)
        #expect(header.rawDataBlockCount == 1)
        #expect(header.crc == nil)
        #expect(header.headerLength == 7)
        #expect(header.payloadLength == 364)
        #expect(try header.serialized() == Self.ffmpegHeader)
    }

    @Test func everyBitSurvivesARoundTrip() throws {
        let header = ADTSHeader(
            mpegVersion: .mpeg2, protectionAbsent: false, profile: 3, samplingFrequencyIndex: SamplingFrequencyIndex(rawValue: 11),
            privateBit: true, channelConfiguration: 7, originalCopy: true, home: true, copyrightIdentificationBit: true,
            copyrightIdentificationStart: true, frameLength: 8191, bufferFullness: 0x123, rawDataBlockCountMinusOne: 3,
            rawDataBlockPositions: [0x0102, 0x0304, 0x0506], crc: 0xBEEF)
        let bytes = try header.serialized()
        #expect(bytes.count == 15)
        #expect(header.headerLength == 15)
        #expect(try ADTSHeader(bytes: bytes + [0, 0]) == header)
        #expect(header.sampleCount == 4096)
    }

    /// The seed's `adtsDataWithChannels:sampleRate:rawDataLength:` computed with its own arithmetic.
    static func seedBytes(channels: Int, sampleRateIndex: Int, rawDataLength: Int) -> [UInt8] {
        let profile = 2
        let fullLength = 7 + rawDataLength
        return [
            0xFF, 0xF9,
            UInt8(truncatingIfNeeded: ((profile - 1) << 6) + (sampleRateIndex << 2) + (channels >> 2)),
            UInt8(truncatingIfNeeded: ((channels & 3) << 6) + (fullLength >> 11)),
            UInt8(truncatingIfNeeded: (fullLength & 0x7FF) >> 3),
            UInt8(truncatingIfNeeded: ((fullLength & 7) << 5) + 0x1F),
            0xFC,
        ]
    }

    @Test(arguments: [(1, 8000, 0), (2, 44100, 364), (2, 48000, 8184), (6, 96000, 1000), (7, 7350, 1)])
    func seedConvenienceMatchesTheSeedByteForByte(channels: Int, rate: Int, length: Int) throws {
        let index = SamplingFrequencyIndex.frequencies.firstIndex(of: rate)!
        #expect(try ADTSHeader.adtsData(channels: channels, sampleRate: rate, rawDataLength: length)
            == Self.seedBytes(channels: channels, sampleRateIndex: index, rawDataLength: length))
    }

    @Test func seedConvenienceRefusesWhatTheSeedWroteWrong() {
        // The seed would write index 15 (or 0) for 44000 Hz and wrap the 13-bit length.
        #expect(throws: AACBitstreamError.self) { try ADTSHeader.adtsData(channels: 2, sampleRate: 44000, rawDataLength: 100) }
        #expect(throws: AACBitstreamError.self) { try ADTSHeader.adtsData(channels: 2, sampleRate: 44100, rawDataLength: 8185) }
        #expect(throws: AACBitstreamError.self) { try ADTSHeader.adtsData(channels: 8, sampleRate: 44100, rawDataLength: 10) }
        #expect(throws: AACBitstreamError.self) { try ADTSHeader.adtsData(channels: 0, sampleRate: 44100, rawDataLength: 10) }
        var header = try! ADTSHeader(bytes: Self.ffmpegHeader)
        header.frameLength = 8192
        #expect(throws: AACBitstreamError.self) { try header.serialized() }
    }

    @Test func invalidHeadersNameTheFieldAndOffset() {
        func error(_ bytes: [UInt8]) -> AACBitstreamError? {
            do { _ = try ADTSHeader(bytes: bytes, baseOffset: 500); return nil } catch { return error }
        }
        guard case .invalidField(_, "layer", 1, 501, _)? = error([0xFF, 0xF3, 0x50, 0x80, 0x2E, 0x7F, 0xFC]) else {
            Issue.record("layer 1 not reported"); return
        }
        guard case .invalidField(_, "sampling_frequency_index", 13, 502, _)? = error([0xFF, 0xF1, 0x74, 0x80, 0x2E, 0x7F, 0xFC]) else {
            Issue.record("index 13 not reported"); return
        }
        guard case .invalidField(_, "aac_frame_length", 6, 503, _)? = error([0xFF, 0xF1, 0x50, 0x80, 0x00, 0xDF, 0xFC]) else {
            Issue.record("frame length 6 not reported"); return
        }
        guard case .invalidField(_, "syncword", _, 500, _)? = error([0xFF, 0xE1, 0x50, 0x80, 0x2E, 0x7F, 0xFC]) else {
            Issue.record("bad sync not reported"); return
        }
        guard case .truncated(_, let read)? = error([0xFF, 0xF1, 0x50]) else { Issue.record("truncation not reported"); return }
        #expect(read.offset == 500)
        // A protected header needs its CRC bytes.
        guard case .truncated? = error([0xFF, 0xF0, 0x50, 0x80, 0x2E, 0x7F, 0xFC, 0x12]) else {
            Issue.record("missing CRC not reported"); return
        }
    }
}

@Suite struct ADTSCRCTests {
    /// An independent CRC-16/CMS (poly 0x8005, init 0xFFFF, MSB first) over a bit list.
    static func referenceCRC(_ bits: [UInt8]) -> UInt16 {
        var crc: UInt32 = 0xFFFF
        for bit in bits {
            let feedback = ((crc >> 15) & 1) ^ UInt32(bit)
            crc = (crc << 1) & 0xFFFF
            if feedback == 1 { crc ^= 0x8005 }
        }
        return UInt16(crc)
    }

    static func bits(of bytes: [UInt8], count: Int? = nil) -> [UInt8] {
        let all = bytes.flatMap { byte in (0..<8).map { (byte >> (7 - $0)) & 1 } }
        return Array(all.prefix(count ?? all.count))
    }

    @Test func engineHasThePublishedCheckValue() {
        var crc = ADTSCRC()
        crc.update(bytes: Array("123456789".utf8))
        #expect(crc.value == 0xAEE7)
        #expect(Self.referenceCRC(Self.bits(of: Array("123456789".utf8))) == 0xAEE7)
    }

    @Test func multiBlockHeaderCRCIsChecked() throws {
        var header = ADTSHeader(protectionAbsent: false, profile: 1, samplingFrequencyIndex: SamplingFrequencyIndex(rawValue: 4),
                                channelConfiguration: 2, frameLength: 11 + 40, rawDataBlockCountMinusOne: 1,
                                rawDataBlockPositions: [20], crc: 0)
        let first7 = Array(try header.serialized().prefix(7))
        header.crc = Self.referenceCRC(Self.bits(of: first7) + Self.bits(of: [0, 20]))
        let frame = try header.serialized() + [UInt8](repeating: 0x55, count: 40)
        #expect(ADTSCRC.status(of: header, frame: frame[...]) == .valid)
        var damaged = header
        damaged.rawDataBlockPositions = [21]
        guard case .mismatch = ADTSCRC.status(of: damaged, frame: (try damaged.serialized() + [UInt8](repeating: 0x55, count: 40))[...]) else {
            Issue.record("a wrong header CRC was not found"); return
        }
    }

    @Test func singleChannelElementCRCIsCheckedOverItsRegion() throws {
        // A mono frame: id_syn_ele 0 (SCE) followed by 250 bits of element data.
        var payloadBits = BitWriter()
        payloadBits.write(0, bits: 3)
        for index in 0..<250 { payloadBits.writeFlag(index % 3 == 0) }
        payloadBits.alignToByte()
        let payload = payloadBits.bytes
        var header = ADTSHeader(protectionAbsent: false, profile: 1, samplingFrequencyIndex: SamplingFrequencyIndex(rawValue: 3),
                                channelConfiguration: 1, frameLength: 9 + payload.count, crc: 0)
        let first7 = Array(try header.serialized().prefix(7))
        let region = Array(Self.bits(of: payload).dropFirst(3).prefix(192))
        header.crc = Self.referenceCRC(Self.bits(of: first7) + region)
        #expect(ADTSCRC.status(of: header, frame: (try header.serialized() + payload)[...]) == .valid)
        // A channel pair cannot be checked without a Huffman parse: honestly unverified.
        var pair = payload
        pair[0] |= 0x20
        #expect(ADTSCRC.status(of: header, frame: (try header.serialized() + pair)[...]) == .unverified)
        // Unprotected frames have no CRC.
        #expect(ADTSCRC.status(of: try ADTSHeader(bytes: ADTSHeaderTests.ffmpegHeader), frame: ADTSHeaderTests.ffmpegHeader[...]) == .absent)
    }
}
