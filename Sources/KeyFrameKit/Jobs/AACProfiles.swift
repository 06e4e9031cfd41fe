internal import AACBitstream
internal import AudioCodec
internal import MediaFormats
internal import SpectralBandReplication

/// What the jobs need to know of an AAC profile's encoder, in one place: the rates it takes,
/// its default bitrate, its frame length. HE-AAC v1 and v2 (``/AACBitstream/AudioObjectType/usesSpectralBandReplication``)
/// are alike in all three.
enum AACProfiles {
    /// HE-AAC v2's bitrate when none is given: 32 kb/s (one coded channel plus the stereo
    /// parameters; the middle of TN2236's range).
    static let parametricStereoDefaultBitrate = 32_000

    /// The output rates an encoder of `profile` takes: HE-AAC's 16–48 kHz (v1 and v2), else
    /// every rate AAC-LC carries.
    static func sampleRates(of profile: AudioObjectType) -> [Int] {
        profile.usesSpectralBandReplication ? SBRTuning.supportedOutputSampleRates : AACEncoder.supportedSampleRates
    }

    /// The bitrate an encoder of `profile` is asked for when none is given (it is then fitted to
    /// the input: `lowersBitrateToFit`): HE-AAC v2 32 kb/s, HE-AAC v1
    /// ``/AudioCodec/HEAACEncoder/defaultBitrate`` (64 kb/s stereo, 32 kb/s mono once fitted),
    /// AAC-LC `lc`.
    static func defaultBitrate(of profile: AudioObjectType, lc: Int = Transcode.defaultBitrate) -> Int {
        switch profile {
        case .ps: parametricStereoDefaultBitrate
        case .sbr: HEAACEncoder.defaultBitrate
        default: lc
        }
    }

    /// The resampler in front of an encoder of `profile`: to `sampleRate` and `channelCount`
    /// where asked (a downmix with ITU-R BS.775 coefficients), else to the input's rate or the
    /// nearest one the profile takes (``sampleRates(of:)``), as interleaved float.
    ///
    /// - Throws: ``/MediaCore/PipelineError`` for a rate the profile does not take or a channel
    ///   count outside 1–8, naming what is allowed.
    static func resampler(to sampleRate: Int?, channelCount: Int?, for profile: AudioObjectType) throws(PipelineError) -> PCMResampler {
        try Packaging.resampler(to: sampleRate, channelCount: channelCount, sampleFormat: .float32, rates: sampleRates(of: profile))
    }

    /// Samples per packet of an encoder of `profile` at the output rate: 2048 for HE-AAC, 1024
    /// for AAC-LC.
    static func framesPerPacket(of profile: AudioObjectType) -> Int {
        profile.usesSpectralBandReplication ? HEAACEncoder.framesPerPacket : AACEncoder.framesPerPacket
    }

    /// `profile` resolved for an output of `channelCount` channels (when known) at `bitrate`
    /// (`nil`: the default): ``/MediaFormats/AACProfileChoice/resolved(channelCount:bitrate:sampleRate:)``,
    /// or an error when `auto` has a bitrate to choose by but the channels are not known yet.
    static func resolve(_ profile: AACProfileChoice, channelCount: Int?, bitrate: Int?, sampleRate: Int? = nil,
                        input: String) throws(PipelineError) -> AudioObjectType {
        if let fixed = profile.objectType { return fixed }
        guard bitrate != nil else { return AACProfileChoice.automaticObjectType(channelCount: channelCount ?? 2, bitrate: nil) }
        guard let channelCount else {
            throw .unsupported("\(input): the input's channel count is not known before decoding (an ADTS file), and --profile auto "
                               + "chooses by it; give a profile (lc, he-aac, he-aac-v2), or with convert --channels")
        }
        return profile.resolved(channelCount: channelCount, bitrate: bitrate, sampleRate: sampleRate)
    }
}
