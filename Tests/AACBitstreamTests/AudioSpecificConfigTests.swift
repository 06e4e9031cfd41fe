import AACBitstream
import MediaCore
import Testing

@Suite struct AudioSpecificConfigTests {
    @Test func plainLowComplexity() throws {
        // 00010 0100 0010 000 = AAC-LC, 44100 Hz, 2 channels, GASpecificConfig all zero.
        let config = try AudioSpecificConfig(bytes: [0x12, 0x10])
        #expect(config.audioObjectType == .aacLC)
        #expect(config.samplingFrequency == 44100)
        #expect(config.channelConfiguration == 2)
        #expect(config.channelCount == 2)
        #expect(config.specificConfig == .generalAudio(GASpecificConfig()))
        #expect(config.syncExtension == nil && config.explicitExtension == nil)
        #expect(config.trailingBits.count == 0)
        #expect(config.framesPerPacket == 1024)
        #expect(config.profileName == "LC")
        #expect(try config.serialized() == [0x12, 0x10])
        #expect(try AudioSpecificConfig(sampleRate: 44100, channelCount: 2).serialized() == [0x12, 0x10])
    }

    /// libavcodec's native encoder extradata: the 2-byte ASC, then the 0x2B7 sync extension
    /// naming SBR with sbrPresentFlag = 0 (so decoders do not look for implicit SBR).
    @Test func libavcodecFiveByteExtradata() throws {
        let bytes: [UInt8] = [0x12, 0x10, 0x56, 0xE5, 0x00]
        let config = try AudioSpecificConfig(bytes: bytes)
        #expect(config.audioObjectType == .aacLC)
        #expect(config.samplingFrequency == 44100 && config.channelCount == 2)
        #expect(config.syncExtension == AudioSpecificConfig.SyncExtension(objectType: .sbr, sbrPresent: false))
        #expect(config.trailingBits.count == 7 && config.trailingBits.isAllZero)
        #expect(!config.sbrPresent && !config.psPresent)
        #expect(config.outputSampleRate == 44100)
        #expect(config.profileName == "LC")
        #expect(try config.serialized() == bytes)
    }

    @Test func explicitHierarchicalSBR() throws {
        // 00101 0111 0010 0100 00010 000: SBR, core 22050 Hz stereo, SBR at 44100 Hz, core LC.
        let bytes: [UInt8] = [0x2B, 0x92, 0x08, 0x00]
        let config = try AudioSpecificConfig(bytes: bytes)
        #expect(config.explicitExtension?.signalledObjectType == .sbr)
        #expect(config.audioObjectType == .aacLC)
        #expect(config.samplingFrequency == 22050)
        #expect(config.outputSampleRate == 44100)
        #expect(config.sbrPresent && !config.psPresent)
        #expect(config.profileName == "HE-AAC")
        #expect(config.framesPerPacket == 2048)
        #expect(try config.serialized() == bytes)
    }

    @Test func explicitParametricStereo() throws {
        // 11101 0111 0001 0100 00010 000: PS, core 22050 Hz mono, SBR at 44100 Hz.
        let bytes: [UInt8] = [0xEB, 0x8A, 0x08, 0x00]
        let config = try AudioSpecificConfig(bytes: bytes)
        #expect(config.explicitExtension?.signalledObjectType == .ps)
        #expect(config.channelConfiguration == 1)
        #expect(config.channelCount == 2)
        #expect(config.profileName == "HE-AACv2")
        #expect(try config.serialized() == bytes)
    }

    @Test func backwardCompatibleSBRAndPS() throws {
        var writer = BitWriter()
        writer.write(2, bits: 5); writer.write(7, bits: 4); writer.write(1, bits: 4)   // LC, 22050, mono
        writer.write(0, bits: 3)                                                        // GASpecificConfig
        writer.write(0x2B7, bits: 11); writer.write(5, bits: 5); writer.writeFlag(true) // SBR present
        writer.write(4, bits: 4)                                                        // at 44100
        writer.write(0x548, bits: 11); writer.writeFlag(true)                           // PS present
        writer.alignToByte()
        let config = try AudioSpecificConfig(bytes: writer.bytes)
        #expect(config.syncExtension?.sbrPresent == true)
        #expect(config.syncExtension?.samplingFrequencyIndex?.frequency == 44100)
        #expect(config.syncExtension?.psPresent == true)
        #expect(config.outputSampleRate == 44100 && config.channelCount == 2)
        #expect(config.profileName == "HE-AACv2")
        #expect(try config.serialized() == writer.bytes)
    }

    @Test func escapedObjectTypeIsKeptOpaque() throws {
        // 11111 001010 = object type 42 (USAC / xHE-AAC), 48000 Hz, mono, then its config.
        let bytes: [UInt8] = [0xF9, 0x46, 0x20, 0xAB, 0xCD]
        let config = try AudioSpecificConfig(bytes: bytes)
        #expect(config.audioObjectType == .usac)
        #expect(config.samplingFrequency == 48000 && config.channelConfiguration == 1)
        guard case .opaque(let bits) = config.specificConfig else { Issue.record("USAC config not opaque"); return }
        #expect(bits.count == 40 - 19)   // 5 + 6 + 4 + 4 header bits
        #expect(config.profileName == "xHE-AAC")
        #expect(try config.serialized() == bytes)
    }

    @Test func explicitSamplingFrequency() throws {
        var writer = BitWriter()
        writer.write(2, bits: 5); writer.write(15, bits: 4); writer.write(50_000, bits: 24); writer.write(1, bits: 4)
        writer.write(0, bits: 3)
        writer.alignToByte()
        let config = try AudioSpecificConfig(bytes: writer.bytes)
        #expect(config.samplingFrequencyIndex == .escape)
        #expect(config.samplingFrequency == 50_000)
        #expect(try config.serialized() == writer.bytes)
        #expect(try AudioSpecificConfig(sampleRate: 50_000, channelCount: 1).serialized() == writer.bytes)
    }

    @Test func programConfigElementGivesTheChannels() throws {
        let pce = ProgramConfigElement(
            samplingFrequencyIndex: SamplingFrequencyIndex(rawValue: 3),
            front: [.init(isChannelPair: false, tag: 0), .init(isChannelPair: true, tag: 0)],
            back: [.init(isChannelPair: true, tag: 1)], lowFrequencyEffects: [0],
            matrixMixdown: .init(index: 2, pseudoSurround: true), comment: Array("5.1".utf8))
        var config = try AudioSpecificConfig(sampleRate: 48000, channelCount: 2)
        config.channelConfiguration = 0
        config.specificConfig = .generalAudio(GASpecificConfig(programConfigElement: pce))
        let bytes = try config.serialized()
        let parsed = try AudioSpecificConfig(bytes: bytes)
        #expect(parsed.channelCount == 6)
        guard case .generalAudio(let general) = parsed.specificConfig, let read = general.programConfigElement else {
            Issue.record("PCE lost"); return
        }
        #expect(read.front == pce.front && read.back == pce.back && read.lowFrequencyEffects == [0])
        #expect(read.comment == Array("5.1".utf8))
        #expect(read.matrixMixdown == pce.matrixMixdown)
        #expect(try parsed.serialized() == bytes)
    }

    @Test func badConfigsAreTypedErrorsWithOffsets() {
        #expect(throws: AACBitstreamError.self) { try AudioSpecificConfig(bytes: []) }
        #expect(throws: AACBitstreamError.self) { try AudioSpecificConfig(bytes: [0x12]) }
        do {
            _ = try AudioSpecificConfig(bytes: [0x00, 0x10], baseOffset: 77)
            Issue.record("object type 0 accepted")
        } catch {
            guard case .invalidField(_, "audioObjectType", 0, 77, _) = error else { Issue.record("\(error)"); return }
        }
        // Index 13 is reserved.
        #expect(throws: AACBitstreamError.self) { try AudioSpecificConfig(bytes: [0x16, 0x90]) }
        #expect(throws: AACBitstreamError.self) { try AudioSpecificConfig(sampleRate: 44100, channelCount: 7) }
        #expect(throws: AACBitstreamError.self) { try AudioSpecificConfig(sampleRate: 1 << 24, channelCount: 2) }
        // A PCE that claims more elements than the bytes hold.
        #expect(throws: AACBitstreamError.self) { try AudioSpecificConfig(bytes: [0x11, 0x80, 0x4F, 0xFF]) }
    }
}
