public import AACBitstream

/// The AAC profile an encoding job writes (`--profile lc|he-aac|he-aac-v2|auto`): one object
/// type, or ``automatic``: the one Apple's TN2236 recommends for the output's channels and
/// bitrate, chosen by ``automaticObjectType(channelCount:bitrate:sampleRate:)`` once the job knows them
/// (after any downmix; per rendition in a ladder, per bitrate for live destinations).
///
/// ```swift
/// AACProfileChoice.automatic.resolved(channelCount: 2, bitrate: 32_000)   // .ps (HE-AAC v2)
/// AACProfileChoice.automatic.resolved(channelCount: 2, bitrate: 64_000)   // .sbr (HE-AAC v1)
/// AACProfileChoice.sbr.resolved(channelCount: 2, bitrate: 128_000)        // .sbr: fixed
/// ```
public struct AACProfileChoice: Sendable, Hashable, CustomStringConvertible {
    /// The object type written, or `nil` for ``automatic``.
    public let objectType: AudioObjectType?

    /// A fixed profile: `objectType` whatever the channels and bitrate.
    public init(_ objectType: AudioObjectType) { self.objectType = objectType }

    private init() { objectType = nil }

    /// AAC-LC (object type 2).
    public static let aacLC = AACProfileChoice(.aacLC)
    /// HE-AAC v1: SBR (object type 5) over an AAC-LC core.
    public static let sbr = AACProfileChoice(.sbr)
    /// HE-AAC v2: parametric stereo (object type 29) over SBR over AAC-LC; stereo inputs only.
    public static let ps = AACProfileChoice(.ps)
    /// Chosen by the output's channels and bitrate (``automaticObjectType(channelCount:bitrate:sampleRate:)``).
    public static let automatic = AACProfileChoice()

    /// Whether the profile is chosen by the channels and bitrate.
    public var isAutomatic: Bool { objectType == nil }

    /// The object type to encode for an output of `channelCount` channels at `bitrate` bits per
    /// second (`nil`: no bitrate asked, the encoder's default): the fixed one, or for
    /// ``automatic`` ``automaticObjectType(channelCount:bitrate:sampleRate:)``.
    /// `sampleRate`, when known, is the output's rate (before any resampling HE-AAC does).
    public func resolved(channelCount: Int, bitrate: Int?, sampleRate: Int? = nil) -> AudioObjectType {
        objectType ?? Self.automaticObjectType(channelCount: channelCount, bitrate: bitrate, sampleRate: sampleRate)
    }

    /// The lowest bitrate `auto` gives HE-AAC (v1 or v2): below it, AAC-LC (whose encoder takes
    /// 8 kb/s), since HE-AAC's core needs 8 kb/s plus the SBR and PS data (about 11.8 kb/s at
    /// 48 kHz for v2).
    public static let automaticHEAACMinimumBitrate = 12_000
    /// The lowest output rate `auto` gives HE-AAC: below 16 kHz the SBR band would be empty
    /// (HE-AAC is refused there), so AAC-LC. Rates above 48 kHz are fine: HE-AAC resamples them.
    public static let automaticHEAACMinimumSampleRate = 16_000

    /// The profile `auto` picks, after the ranges of Apple's TN2236 (HLS authoring: HE-AAC v2
    /// for stereo up to 40 kb/s, HE-AAC above it to 64 kb/s, AAC-LC beyond):
    ///
    /// | channels | HE-AAC v2 (`.ps`) | HE-AAC v1 (`.sbr`) | AAC-LC (`.aacLC`) |
    /// |---|---|---|---|
    /// | 2 | ≤ 40 000 b/s | 40 001–64 000 b/s | > 64 000 b/s |
    /// | 1 | — | ≤ 32 000 b/s | > 32 000 b/s |
    /// | 3 or more | — | — | always |
    ///
    /// The bounds are inclusive: 40 000 b/s stereo is v2, 40 001 v1; 64 000 is v1, 64 001 LC;
    /// 32 000 mono is v1, 32 001 LC. More than two channels are AAC-LC at any rate:
    /// KeyFrameKit's HE-AAC codes one or two channels (one SCE or one CPE), not a multichannel
    /// layout of channel pairs. No bitrate (`nil`: the default) is AAC-LC, whose default
    /// (128 kb/s, fitted to the output) applies. A bitrate too low for the profile chosen is
    /// refused by its encoder, in its words. Below ``automaticHEAACMinimumBitrate``, or at an
    /// output rate (when known) below ``automaticHEAACMinimumSampleRate``, it is AAC-LC.
    public static func automaticObjectType(channelCount: Int, bitrate: Int?, sampleRate: Int? = nil) -> AudioObjectType {
        guard let bitrate, bitrate >= automaticHEAACMinimumBitrate,
              (sampleRate ?? automaticHEAACMinimumSampleRate) >= automaticHEAACMinimumSampleRate else { return .aacLC }
        switch channelCount {
        case 1: return bitrate <= 32_000 ? .sbr : .aacLC
        case 2: return bitrate <= 40_000 ? .ps : bitrate <= 64_000 ? .sbr : .aacLC
        default: return .aacLC
        }
    }

    /// `lc`, `he-aac`, `he-aac-v2`, `auto` (the command line's names), or the object type's name.
    public var description: String {
        switch objectType {
        case nil: "auto"
        case .aacLC?: "lc"
        case .sbr?: "he-aac"
        case .ps?: "he-aac-v2"
        case let other?: other.name
        }
    }
}
