import ArgumentParser
import KeyFrameKit

/// `--profile lc|he-aac|he-aac-v2|auto`: the AAC profile an encoding command writes.
enum ProfileArgument: String, ExpressibleByArgument, CaseIterable {
    /// AAC-LC (object type 2), libavcodec's encoder: the default.
    case lc
    /// HE-AAC v1 (SBR, object type 5) over an AAC-LC core at half the rate: 16–48 kHz, mono or
    /// stereo (``SBRTuning/allowedBitrates(channelCount:outputSampleRate:parametricStereo:)``).
    case heAAC = "he-aac"
    /// HE-AAC v2 (parametric stereo, object type 29): a stereo input coded as a mono downmix in
    /// HE-AAC v1 plus the stereo parameters.
    case heAACv2 = "he-aac-v2"
    /// Chosen by the output's channels and bitrate, once the job knows them
    /// (``AACProfileChoice/automaticObjectType(channelCount:bitrate:sampleRate:)``).
    case auto

    /// The profile the job is asked for.
    var choice: AACProfileChoice {
        switch self {
        case .lc: .aacLC
        case .heAAC: .sbr
        case .heAACv2: .ps
        case .auto: .automatic
        }
    }

    /// The name a command prints for a profile encoded: `AAC-LC`, `HE-AAC`, `HE-AAC v2`.
    static func name(of objectType: AudioObjectType) -> String {
        switch objectType {
        case .aacLC: "AAC-LC"
        case .sbr: "HE-AAC"
        case .ps: "HE-AAC v2"
        default: objectType.description
        }
    }

    /// What a command adds after "AAC packets" for a profile encoded: ` (HE-AAC)`,
    /// ` (HE-AAC v2)`; nothing for AAC-LC, the default.
    static func tag(_ objectType: AudioObjectType) -> String {
        objectType == .aacLC ? "" : " (\(name(of: objectType)))"
    }

    /// The option's help.
    static let help = ArgumentHelp(
        "AAC profile: lc (AAC-LC, the default); he-aac (HE-AAC v1: SBR over an AAC-LC core at half the rate; "
            + "16–48 kHz mono or stereo, best at 32–64 kb/s stereo; default bitrate 64k stereo, 32k mono); "
            + "he-aac-v2 (HE-AAC v2: a mono HE-AAC core plus parametric stereo; stereo input only, 16–48 kHz, "
            + "best at 16–40 kb/s; default 32k); or auto, chosen by the output's channels and bitrate as Apple's "
            + "TN2236 advises: stereo he-aac-v2 up to 40k, he-aac up to 64k, lc above; mono he-aac up to 32k, lc above; "
            + "more than 2 channels lc (HE-AAC here codes 1 or 2 channels); no bitrate given: lc at its default.",
        valueName: "profile")
}
