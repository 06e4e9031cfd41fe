import KeyFrameKit
import Testing

/// Issue 26, item 3: `--profile auto`, the AAC profile chosen by the output's channels and
/// bitrate after Apple's TN2236 (``AACProfileChoice/automaticObjectType(channelCount:bitrate:sampleRate:)``),
/// at the edges of its ranges.
@Suite struct AACProfileChoiceTests {
    @Test(arguments: [
        // Stereo: HE-AAC v2 up to 40k, HE-AAC v1 up to 64k, AAC-LC above.
        (2, 16_000, AudioObjectType.ps), (2, 32_000, .ps), (2, 40_000, .ps), (2, 41_000, .sbr), (2, 40_001, .sbr),
        (2, 48_000, .sbr), (2, 64_000, .sbr), (2, 65_000, .aacLC), (2, 64_001, .aacLC), (2, 128_000, .aacLC),
        // Mono: HE-AAC v1 up to 32k, AAC-LC above; never v2.
        (1, 16_000, .sbr), (1, 32_000, .sbr), (1, 33_000, .aacLC), (1, 32_001, .aacLC), (1, 64_000, .aacLC),
        // More than two channels: AAC-LC at any rate (HE-AAC here codes one or two channels).
        (6, 32_000, .aacLC), (6, 64_000, .aacLC), (6, 384_000, .aacLC), (3, 40_000, .aacLC), (8, 16_000, .aacLC),
    ])
    func automaticFollowsTheRanges(channels: Int, bitrate: Int, expected: AudioObjectType) {
        #expect(AACProfileChoice.automaticObjectType(channelCount: channels, bitrate: bitrate) == expected,
                "\(channels) ch at \(bitrate) b/s")
        #expect(AACProfileChoice.automatic.resolved(channelCount: channels, bitrate: bitrate) == expected)
    }

    /// Below what HE-AAC takes (12 kb/s; an output rate under 16 kHz, where the SBR band would be
    /// empty), `auto` is AAC-LC; above 48 kHz HE-AAC resamples, so it stays.
    @Test func belowHEAACsFloorsIsAACLC() {
        #expect(AACProfileChoice.automaticObjectType(channelCount: 2, bitrate: 11_999) == .aacLC)
        #expect(AACProfileChoice.automaticObjectType(channelCount: 2, bitrate: 12_000) == .ps)
        #expect(AACProfileChoice.automaticObjectType(channelCount: 1, bitrate: 10_000) == .aacLC)
        #expect(AACProfileChoice.automaticObjectType(channelCount: 2, bitrate: 24_000, sampleRate: 8000) == .aacLC)
        #expect(AACProfileChoice.automaticObjectType(channelCount: 2, bitrate: 24_000, sampleRate: 11025) == .aacLC)
        #expect(AACProfileChoice.automaticObjectType(channelCount: 2, bitrate: 24_000, sampleRate: 16000) == .ps)
        #expect(AACProfileChoice.automaticObjectType(channelCount: 2, bitrate: 48_000, sampleRate: 96000) == .sbr)
        #expect(AACProfileChoice.automatic.resolved(channelCount: 1, bitrate: 24_000, sampleRate: 8000) == .aacLC)
    }

    /// No bitrate given: AAC-LC, whose default applies, whatever the channels.
    @Test(arguments: [1, 2, 6])
    func noBitrateIsAACLC(channels: Int) {
        #expect(AACProfileChoice.automaticObjectType(channelCount: channels, bitrate: nil) == .aacLC)
        #expect(AACProfileChoice.automatic.resolved(channelCount: channels, bitrate: nil) == .aacLC)
    }

    /// A fixed profile is kept whatever the channels and bitrate (its encoder refuses what it
    /// cannot code: v2 of a mono input, in words).
    @Test func fixedProfilesAreKept() {
        for choice in [AACProfileChoice.aacLC, .sbr, .ps] {
            #expect(!choice.isAutomatic)
            for (channels, bitrate) in [(1, 24_000), (2, 32_000), (2, 128_000), (6, 256_000)] {
                #expect(choice.resolved(channelCount: channels, bitrate: bitrate) == choice.objectType)
            }
        }
        #expect(AACProfileChoice.automatic.isAutomatic && AACProfileChoice.automatic.objectType == nil)
        #expect(["\(AACProfileChoice.aacLC)", "\(AACProfileChoice.sbr)", "\(AACProfileChoice.ps)", "\(AACProfileChoice.automatic)"]
                == ["lc", "he-aac", "he-aac-v2", "auto"])
    }

    /// One predicate for "coded with SBR": HE-AAC v1 and v2, nothing else.
    @Test func spectralBandReplicationIsV1AndV2() {
        #expect(AudioObjectType.sbr.usesSpectralBandReplication && AudioObjectType.ps.usesSpectralBandReplication)
        #expect(![AudioObjectType.aacLC, .aacMain, .usac, .erAACELD].contains { $0.usesSpectralBandReplication })
    }

    /// A ladder's renditions resolve each on its own bitrate: 32k, 64k and 128k stereo are v2, v1
    /// and LC (the target), whether `auto` is the ladder's profile or each rendition's.
    @Test func aLadderResolvesEachRendition() {
        let bitrates = [32_000, 64_000, 128_000]
        let ladderWide = Packaging.Options(bitrates: bitrates, profile: .automatic)
        let perRendition = Packaging.Options(bitrates: bitrates, ladderProfiles: Dictionary(uniqueKeysWithValues: bitrates.map { ($0, .automatic) }))
        for options in [ladderWide, perRendition] {
            let profiles = bitrates.map { options.profile(ofRendition: $0).resolved(channelCount: 2, bitrate: $0) }
            #expect(profiles == [.ps, .sbr, .aacLC])
        }
    }
}
