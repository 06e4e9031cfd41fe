import AACBitstream
import AudioCodec
import MediaCore
import Testing

/// Issue 22: encoders and decoders are found by codec and profile, ready for HE-AAC.
@Suite struct AudioCodecRegistryTests {
    @Test func aacLCIsLibavcodecsEncoderOrSeveralAtOnce() throws {
        let single = try AudioCodecRegistry.standard.encoder(for: .aac, profile: .aacLC, settings: .init(bitrate: 96_000))
        #expect(single is AACEncoder)
        let parallel = try AudioCodecRegistry.standard.encoder(for: .aac, profile: .aacLC, settings: .init(bitrate: 96_000, threads: 2))
        #expect((parallel as? ParallelAACEncoder)?.threadCount == 2)
        let format = PCMFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .float32)
        let opened = try AudioCodecRegistry.standard.encoder(for: .aac, profile: .aacLC, settings: .init(bitrate: 64_000, format: format))
        #expect(opened.inputFormat == format && opened.priming == 1024, "opened at once, given the format")
    }

    /// Issue 25: HE-AAC v1 is one more entry, one encoder or several at once.
    @Test func heAACIsOursOverLibavcodecsCore() throws {
        let single = try AudioCodecRegistry.standard.encoder(for: .aac, profile: .sbr, settings: .init(bitrate: 48_000))
        #expect(single is HEAACEncoder)
        let parallel = try AudioCodecRegistry.standard.encoder(for: .aac, profile: .sbr, settings: .init(bitrate: 48_000, threads: 2))
        #expect((parallel as? ParallelAACEncoder)?.profile == .sbr)
        let format = PCMFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .float32)
        let opened = try AudioCodecRegistry.standard.encoder(for: .aac, profile: .sbr, settings: .init(bitrate: 48_000, format: format))
        #expect(opened.priming == 3010 && opened.audioSpecificConfig?.outputSampleRate == 48000
                && opened.audioSpecificConfig?.sbrPresent == true, "opened at once, given the format")
    }

    /// Issue 26: HE-AAC v2 is one more entry; a stereo input opens as PS over SBR over LC.
    @Test func heAACv2IsOursToo() throws {
        let single = try AudioCodecRegistry.standard.encoder(for: .aac, profile: .ps, settings: .init(bitrate: 32_000))
        #expect((single as? HEAACEncoder)?.parametricStereo == true)
        let parallel = try AudioCodecRegistry.standard.encoder(for: .aac, profile: .ps, settings: .init(bitrate: 32_000, threads: 2))
        #expect((parallel as? ParallelAACEncoder)?.profile == .ps)
        let format = PCMFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .float32)
        let opened = try AudioCodecRegistry.standard.encoder(for: .aac, profile: .ps, settings: .init(bitrate: 32_000, format: format))
        #expect(opened.priming == 3588 && opened.audioSpecificConfig?.psPresent == true
                && opened.audioSpecificConfig?.channelConfiguration == 1, "opened at once, given the format")
    }

    @Test func aProfileWithNoEncoderIsAnErrorNamingWhatThereIs() {
        #expect {
            _ = try AudioCodecRegistry.standard.encoder(for: .aac, profile: .aacMain, settings: .init(bitrate: 32_000))
        } throws: { error in
            guard case .codecNotFound(let what)? = error as? CodecError else { return false }
            return what.contains("encodes aac LC") && what.contains("aac HE-AAC")
        }
        #expect(throws: CodecError.self) { _ = try AudioCodecRegistry.standard.encoder(for: .ac3, settings: .init(bitrate: 48_000)) }
    }

    @Test func decodersCoverTheAACProfilesLibavcodecDecodes() {
        #expect(AudioCodecRegistry.standard.decodes(.aac, profile: .aacLC) && AudioCodecRegistry.standard.decodes(.aac, profile: .sbr)
                && AudioCodecRegistry.standard.decodes(.aac, profile: .ps))
        #expect(!AudioCodecRegistry.standard.decodes(.aac, profile: .usac) && !AudioCodecRegistry.standard.decodes(.ac3, profile: .aacLC))
        #expect([.mp3, .opus, .flac, .alac].allSatisfy { AudioCodecRegistry.standard.decodes($0, profile: .aacLC) })
    }
}
