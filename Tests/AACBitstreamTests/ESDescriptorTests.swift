import AACBitstream
import MediaCore
import Testing

@Suite struct ESDescriptorTests {
    /// An ES_Descriptor as FFmpeg's mov muxer writes it (4-byte size fields), checked by hand:
    /// ES_ID 1, no flags; DecoderConfigDescriptor 0x40/audio, buffer 0, max 128000, avg 96000;
    /// DecoderSpecificInfo 12 10; SLConfigDescriptor predefined 2.
    static let ffmpegStyle: [UInt8] = [
        0x03, 0x80, 0x80, 0x80, 0x22, 0x00, 0x01, 0x00,
        0x04, 0x80, 0x80, 0x80, 0x14, 0x40, 0x15, 0x00, 0x00, 0x00, 0x00, 0x01, 0xF4, 0x00, 0x00, 0x01, 0x77, 0x00,
        0x05, 0x80, 0x80, 0x80, 0x02, 0x12, 0x10,
        0x06, 0x80, 0x80, 0x80, 0x01, 0x02,
    ]

    /// The same content with minimal (1-byte) size fields, as Apple and GPAC write it.
    static let compact: [UInt8] = [
        0x03, 0x19, 0x00, 0x01, 0x00,
        0x04, 0x11, 0x40, 0x15, 0x00, 0x00, 0x00, 0x00, 0x01, 0xF4, 0x00, 0x00, 0x01, 0x77, 0x00,
        0x05, 0x02, 0x12, 0x10,
        0x06, 0x01, 0x02,
    ]

    @Test(arguments: [ffmpegStyle, compact])
    func parsesEveryFieldAndWritesTheSameBytes(bytes: [UInt8]) throws {
        let descriptor = try ESDescriptor(bytes: bytes)
        #expect(descriptor.esID == 1)
        #expect(descriptor.streamPriority == 0)
        #expect(descriptor.dependsOnESID == nil && descriptor.url == nil && descriptor.ocrESID == nil)
        let config = descriptor.decoderConfig
        #expect(config.objectTypeIndication == 0x40)
        #expect(config.streamType == 5 && !config.upStream && config.reservedBit)
        #expect(config.bufferSizeDB == 0)
        #expect(config.maxBitrate == 128_000)
        #expect(config.averageBitrate == 96_000)
        #expect(config.decoderSpecificInfo == [0x12, 0x10])
        #expect(descriptor.slConfig?.predefined == 2)
        #expect(try descriptor.audioSpecificConfig()?.samplingFrequency == 44100)
        #expect(try descriptor.serialized() == bytes)
        #expect(try ESDescriptor(esdsBoxPayload: [0, 0, 0, 0] + bytes).esdsBoxPayload() == [0, 0, 0, 0] + bytes)
    }

    @Test func keepsTheOptionalFieldsAndUnknownDescriptors() throws {
        let bytes: [UInt8] = [
            0x03, 0x1F, 0x00, 0x07, 0xE3,          // ES_ID 7; dependence, URL, OCR flags; priority 3
            0x00, 0x02,                            // dependsOn_ES_ID 2
            0x02, 0x61, 0x62,                      // URL "ab"
            0x00, 0x09,                            // OCR_ES_Id 9
            0x04, 0x0D, 0x40, 0x15, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // no DSI
            0x06, 0x01, 0x02,
            0x0A, 0x01, 0x65,                      // an unknown descriptor, kept
        ]
        let descriptor = try ESDescriptor(bytes: bytes)
        #expect(descriptor.esID == 7 && descriptor.streamPriority == 3)
        #expect(descriptor.dependsOnESID == 2 && descriptor.url == Array("ab".utf8) && descriptor.ocrESID == 9)
        #expect(descriptor.decoderConfig.bufferSizeDB == 0x1000)
        #expect(descriptor.decoderConfig.decoderSpecificInfo == nil)
        #expect(try descriptor.audioSpecificConfig() == nil)
        #expect(descriptor.otherDescriptors == [OpaqueDescriptor(tag: 0x0A, payload: [0x65])])
        #expect(try descriptor.serialized() == bytes)
    }

    // MARK: - Overstated lengths, read as Firefox's MP4 parser (mp4parse-rust) reads them

    /// ``ffmpegStyle`` with the DecoderConfigDescriptor's size (20, at byte 12) raised by `extra`:
    /// the descriptor takes `extra` bytes of the 6-byte SLConfigDescriptor after it.
    static func overstated(by extra: Int) -> [UInt8] {
        var bytes = ffmpegStyle
        bytes[12] = UInt8(0x14 + extra)
        return bytes
    }

    @Test(arguments: 1...5)
    func anOverstatedDecoderConfigDescriptorIsReadAfterAWholeDecoderSpecificInfo(extra: Int) throws {
        let bytes = Self.overstated(by: extra)
        let descriptor = try ESDescriptor(bytes: bytes, baseOffset: 1000)
        #expect(descriptor.decoderConfig.decoderSpecificInfo == [0x12, 0x10])
        #expect(try descriptor.audioSpecificConfig()?.samplingFrequency == 44100)
        #expect(descriptor.decoderConfig.unparsedTrailingBytes == Array(Self.ffmpegStyle[33..<(33 + extra)]))
        let first = try #require(descriptor.damage.first)
        #expect(first.kind == .overstatedLength(declared: Int64(20 + extra), used: 20))
        #expect(first.offset == 1008, "the DecoderConfigDescriptor's tag is at byte 8")
        #expect(first.message.contains("DecoderConfigDescriptor at byte 1008 declares \(20 + extra) bytes"), "\(first.message)")
        #expect(descriptor.decoderConfig.damage == [first])
        // The bytes are kept: writing gives the input back.
        #expect(try descriptor.serialized() == bytes)
    }

    @Test func theBytesTheOverstatedLengthLeavesInTheESDescriptorAreSkipped() throws {
        // Five bytes of the SLConfigDescriptor (06 80 80 80 01) are taken; its last byte (02)
        // is left alone in the ES_Descriptor.
        let descriptor = try ESDescriptor(bytes: Self.overstated(by: 5))
        #expect(descriptor.slConfig == nil)
        #expect(descriptor.unparsedTrailingBytes == [0x02])
        // The byte left over is configuration, not media: the ES_Descriptor overstates what it
        // holds by one byte, and no media is lost.
        #expect(descriptor.damage.first?.kind == .overstatedLength(declared: 25, used: 20))
        guard case .overstatedLength(let declared, let used)? = descriptor.damage.last?.kind, descriptor.damage.count == 2 else {
            Issue.record("\(descriptor.damage)")
            return
        }
        #expect(declared - used == 1)
        #expect(descriptor.damage.allSatisfy { !$0.losesData })
        #expect(descriptor.damage.last?.offset == 38)
    }

    @Test func anSLConfigDescriptorTakenWholeIsKeptAndReported() throws {
        let bytes = Self.overstated(by: 6)
        let descriptor = try ESDescriptor(bytes: bytes)
        #expect(descriptor.decoderConfig.decoderSpecificInfo == [0x12, 0x10])
        #expect(descriptor.decoderConfig.otherDescriptors == [OpaqueDescriptor(tag: 0x06, payload: [0x02], sizeFieldLength: 4)])
        #expect(descriptor.damage.map(\.kind) == [.overstatedLength(declared: 26, used: 20)])
        #expect(try descriptor.serialized() == bytes)
    }

    @Test func mp4parseRedundantDescriptorExample() throws {
        // mp4parse-rust's read_esds_redundant_descriptor: the DecoderConfigDescriptor declares 19
        // bytes, its contents take 17; "the '2' at the end is redundant data".
        let bytes: [UInt8] = [3, 25, 0, 1, 0, 4, 19, 64, 21, 0, 0, 0, 0, 0, 0, 0, 0, 1, 119, 0, 5, 2, 18, 16, 6, 1, 2]
        let descriptor = try ESDescriptor(bytes: bytes)
        #expect(try descriptor.audioSpecificConfig()?.audioObjectType == .aacLC)
        #expect(descriptor.damage.first?.kind == .overstatedLength(declared: 19, used: 17))
        #expect(try descriptor.serialized() == bytes)
    }

    @Test func wellFormedDescriptorsReportNoDamage() throws {
        for bytes in [Self.ffmpegStyle, Self.compact] {
            let descriptor = try ESDescriptor(bytes: bytes)
            #expect(descriptor.damage.isEmpty && descriptor.unparsedTrailingBytes.isEmpty)
        }
    }

    @Test func anOverstatedLengthWithoutAWholeDecoderSpecificInfoStillThrows() {
        // No DecoderSpecificInfo before the bytes that do not parse: nothing to read.
        var bytes = Self.compact
        bytes[6] = 0x11 + 2        // the DecoderConfigDescriptor takes 06 01 of the SLConfigDescriptor
        bytes[20] = 0x0A           // and its DecoderSpecificInfo is now an unknown descriptor
        #expect(throws: AACBitstreamError.self) { try ESDescriptor(bytes: bytes) }
        // A length past the ES_Descriptor's end is refused, as Firefox refuses it.
        #expect(throws: AACBitstreamError.self) { try ESDescriptor(bytes: Self.overstated(by: 7)) }
    }

    @Test func theMuxerDescriptorCarriesTheConfig() throws {
        let asc = try AudioSpecificConfig(bytes: [0x12, 0x10, 0x56, 0xE5, 0x00])
        let descriptor = try ESDescriptor(audioSpecificConfig: asc, maxBitrate: 128_000, averageBitrate: 96_000)
        let parsed = try ESDescriptor(esdsBoxPayload: try descriptor.esdsBoxPayload())
        #expect(parsed == descriptor)
        #expect(try parsed.audioSpecificConfig() == asc)
        #expect(parsed.slConfig?.predefined == 2)
    }

    @Test func magicCookieGivesTheAudioSpecificConfig() throws {
        #expect(try AudioSpecificConfig(magicCookie: Self.ffmpegStyle).serialized() == [0x12, 0x10])
        #expect(try AudioSpecificConfig(magicCookie: Array(Self.compact[5...])).serialized() == [0x12, 0x10])
        #expect(throws: AACBitstreamError.self) { try AudioSpecificConfig(magicCookie: [0x12, 0x10]) }
    }

    @Test func expandableSizesUseOneToFourBytes() throws {
        for (size, expected) in [(0, [0x05, 0x00]), (127, [0x05, 0x7F]), (128, [0x05, 0x81, 0x00]),
                                 (16383, [0x05, 0xFF, 0x7F]), (16384, [0x05, 0x81, 0x80, 0x00]), ((1 << 28) - 1, [0x05, 0xFF, 0xFF, 0xFF, 0x7F])] {
            var writer = ByteWriter()
            try DescriptorHeader(tag: 5, size: size).write(to: &writer)
            #expect(writer.bytes == expected.map { UInt8($0) })
        }
        var writer = ByteWriter()
        #expect(throws: AACBitstreamError.self) { try DescriptorHeader(tag: 5, size: 1 << 28).write(to: &writer) }
    }

    @Test func badDescriptorsNameTheFieldAndOffset() {
        func error(_ bytes: [UInt8]) -> AACBitstreamError? {
            do { _ = try ESDescriptor(bytes: bytes, baseOffset: 1000); return nil } catch { return error }
        }
        // A size larger than the bytes that remain.
        guard case .invalidField(_, "sizeOfInstance", 0x40, 1001, _)? = error([0x03, 0x40, 0x00, 0x01]) else {
            Issue.record("oversized descriptor not reported"); return
        }
        // Five size bytes.
        guard case .invalidField(_, "sizeOfInstance", _, 1001, _)? = error([0x03, 0x80, 0x80, 0x80, 0x80, 0x01]) else {
            Issue.record("5-byte size not reported"); return
        }
        guard case .invalidField(_, "tag", 0x04, 1000, _)? = error(Array(Self.compact[5...])) else {
            Issue.record("wrong tag not reported"); return
        }
        // The DecoderConfigDescriptor is cut short inside its fixed fields.
        guard case .truncated? = error([0x03, 0x08, 0x00, 0x01, 0x00, 0x04, 0x03, 0x40, 0x15, 0x00]) else {
            Issue.record("short DecoderConfigDescriptor not reported"); return
        }
        #expect(throws: AACBitstreamError.self) { try ESDescriptor(esdsBoxPayload: [1, 0, 0, 0] + Self.compact) }
        #expect(throws: AACBitstreamError.self) { try ESDescriptor(esdsBoxPayload: [0, 0]) }
    }
}
