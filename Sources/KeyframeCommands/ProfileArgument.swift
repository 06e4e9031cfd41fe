import ArgumentParser
import KeyFrameKit

/// `--profile lc|he-aac`: the AAC profile an encoding command writes.
enum ProfileArgument: String, ExpressibleByArgument, CaseIterable {
    /// AAC-LC (object type 2), libavcodec's encoder: the default.
    case lc
    /// HE-AAC v1 (SBR, object type 5) over an AAC-LC core at half the rate: 16–48 kHz, mono or
    /// stereo (``SBRTuning/allowedBitrates(channelCount:outputSampleRate:)``).
    case heAAC = "he-aac"
    /// HE-AAC v2 (parametric stereo, object type 29): a stereo input coded as a mono downmix in
    /// HE-AAC v1 plus the stereo parameters.
    case heAACv2 = "he-aac-v2"

    /// The MPEG-4 audio object type the registry files the encoder under.
    var objectType: AudioObjectType {
        switch self {
        case .lc: .aacLC
        case .heAAC: .sbr
        case .heAACv2: .ps
        }
    }

    /// The option's help.
    static let help = ArgumentHelp(
        "AAC profile: lc (AAC-LC, the default) or he-aac (HE-AAC v1: SBR over an AAC-LC core at half the rate; "
            + "16–48 kHz mono or stereo, best at 32–64 kb/s stereo; default bitrate 64k stereo, 32k mono).",
        valueName: "profile")
}
