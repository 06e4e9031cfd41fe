import AACBitstream
import MediaCore
import Testing

/// AAC's description: what the MP4 muxer and the manifests write for it.
@Suite struct AudioCodecDescriptionTests {
    /// A stream of `config` (AudioSpecificConfig bytes).
    func format(_ config: [UInt8], rate: Int, channels: Int, framesPerPacket: Int = 0) -> EncodedAudioFormat {
        EncodedAudioFormat(codec: .aac, sampleRate: rate, channelCount: channels, framesPerPacket: framesPerPacket, decoderConfiguration: config)
    }

    @Test("CODECS names the profile: LC 2, SBR 5, PS 29 (RFC 6381 3.3)")
    func codecsParameter() {
        // AAC-LC 44.1 kHz stereo; HE-AAC (explicit SBR, 24 → 48 kHz); HE-AAC v2 (explicit PS).
        #expect(AudioCodecDescription.aac.codecsParameter(format([0x12, 0x10], rate: 44_100, channels: 2)) == "mp4a.40.2")
        #expect(AudioCodecDescription.aac.codecsParameter(format([0x2B, 0x09, 0x88, 0x00], rate: 48_000, channels: 1)) == "mp4a.40.5")
        #expect(AudioCodecDescription.aac.codecsParameter(format([0xEB, 0x09, 0x88, 0x00], rate: 48_000, channels: 2)) == "mp4a.40.29")
    }

    @Test("packets: the config's frame length, doubled by SBR; a roll of -1")
    func packetsAndRoll() {
        #expect(AudioCodecDescription.aac.fixedPacketDuration(format([0x12, 0x10], rate: 44_100, channels: 2)) == 1024)
        #expect(AudioCodecDescription.aac.fixedPacketDuration(format([0x12, 0x14], rate: 44_100, channels: 2)) == 960)
        #expect(AudioCodecDescription.aac.fixedPacketDuration(format([0x2B, 0x09, 0x88, 0x00], rate: 48_000, channels: 1)) == 2048)
        #expect(AudioCodecDescription.aac.roll(format([0x12, 0x10], rate: 44_100, channels: 2)) == -1)
    }

    @Test("the sample entry is mp4a with an esds carrying the config and the track's figures")
    func sampleEntry() throws {
        let stream = format([0x12, 0x10], rate: 44_100, channels: 1)
        let entry = AudioCodecDescription.aac.sampleEntry(stream, .init(trackID: 3, largestPacket: 700, averageBitrate: 96_000, peakBitrate: 128_000))
        #expect(AudioCodecDescription.aac.sampleEntryType == "mp4a")
        #expect(entry.channelCount == 1)
        #expect(entry.sampleRate == 44_100)
        #expect(entry.boxes.map(\.type) == ["esds"])
        let descriptor = try ESDescriptor(esdsBoxPayload: entry.boxes[0].payload)
        #expect(descriptor.esID == 3)
        #expect(descriptor.decoderConfig.averageBitrate == 96_000)
        #expect(descriptor.decoderConfig.maxBitrate == 128_000)
        #expect(descriptor.decoderConfig.bufferSizeDB == 700)
        #expect(try descriptor.audioSpecificConfig()?.serialized() == [0x12, 0x10])
        #expect(AudioCodecDescription.aac.sampleEntry(format([0x12, 0x10], rate: 44_100, channels: 6), .init(
            trackID: 1, largestPacket: 0, averageBitrate: 0, peakBitrate: 0)).channelCount == 2, "14496-14: 2 unless mono")
    }

    @Test("a config that does not parse is refused before a track is made")
    func refusal() {
        #expect(throws: AudioSampleEntry.Refusal.self) { try AudioCodecDescription.aac.check(format([], rate: 44_100, channels: 2)) }
        #expect([AudioCodecDescription.aac].matching(.opus) == nil)
        #expect([AudioCodecDescription.aac].matching(sampleEntryType: "mp4a")?.codec == .aac)
    }
}
