import AACBitstream
import AudioCodec
import MediaCore
import Testing

/// Issue 22: encoders and decoders are found by codec and profile, ready for HE-AAC.
@Suite struct AudioCodecRegistryTests {
    @Test func aacLCIsLibavcodecsEncoderOrSeveralAtOnce() throws {
        let single = try AudioCodecRegistry.encoder(for: .aac, profile: .aacLC, settings: .init(bitrate: 96_000))
        #expect(single is AACEncoder)
        let parallel = try AudioCodecRegistry.encoder(for: .aac, profile: .aacLC, settings: .init(bitrate: 96_000, threads: 2))
        #expect((parallel as? ParallelAACEncoder)?.threadCount == 2)
        let format = PCMFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .float32)
        let opened = try AudioCodecRegistry.encoder(for: .aac, profile: .aacLC, settings: .init(bitrate: 64_000, format: format))
        #expect(opened.inputFormat == format && opened.priming == 1024, "opened at once, given the format")
    }

    @Test func aProfileWithNoEncoderIsAnErrorNamingWhatThereIs() {
        #expect {
            _ = try AudioCodecRegistry.encoder(for: .aac, profile: .sbr, settings: .init(bitrate: 48_000))
        } throws: { error in
            guard case .codecNotFound(let what)? = error as? CodecError else { return false }
            return what.contains("aac HE-AAC") && what.contains("encodes aac LC")
        }
        #expect(throws: CodecError.self) { _ = try AudioCodecRegistry.encoder(for: .opus, settings: .init(bitrate: 48_000)) }
    }

    @Test func decodersCoverTheAACProfilesLibavcodecDecodes() {
        #expect(AudioCodecRegistry.decodes(.aac, profile: .aacLC) && AudioCodecRegistry.decodes(.aac, profile: .sbr)
                && AudioCodecRegistry.decodes(.aac, profile: .ps))
        #expect(!AudioCodecRegistry.decodes(.aac, profile: .usac) && !AudioCodecRegistry.decodes(.opus, profile: .aacLC))
    }
}
