import ArgumentParser
import KeyFrameKit

/// What an AAC encoder gets from the command line, with one meaning on `encode`, `convert`,
/// `record`, `package` and `publish`: `--bitrate` and `--profile`.
///
/// One default: 128k for AAC-LC (FFmpeg's default for stereo), lowered to the most AAC carries
/// at the output's rate and channels; HE-AAC's own defaults (64k stereo, 32k mono; HE-AAC v2
/// 32k). A bitrate given is checked against the range of the output's rate and channels, and
/// the error names that range.
struct EncoderOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Bitrate of a lossy codec: 128000, 128k or 0.128M. Default: 128k for AAC-LC (lowered to the most AAC carries at the output's "
            + "rate and channels), MP3 and Opus; HE-AAC 64k stereo, 32k mono; HE-AAC v2 32k; FLAC and ALAC take none. "
            + "package copies an AAC input (and an M4A of Opus, FLAC or ALAC, or an Ogg Opus file), publish an AAC input, "
            + "unless a bitrate or an HE-AAC profile is given.",
        valueName: "bitrate"))
    var bitrate: Bitrate?

    @Option(help: ProfileArgument.help)
    var profile: ProfileArgument = .lc

    /// The bitrate asked, in bits per second; `nil` for the default.
    var bitsPerSecond: Int? { bitrate?.bitsPerSecond }
}

/// `--sample-rate` and `--channels`: the layout encoded when it is not the input's, with one
/// meaning on `convert`, `package` and `publish` (on `record` the same names give the capture's,
/// which is what is encoded). Either one given re-encodes an AAC input that would be copied.
struct OutputLayoutOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Output sample rate in Hz (resampled with soxr at 28-bit precision); default: the input's, or the "
                               + "nearest rate the profile takes.",
                               valueName: "hz"))
    var sampleRate: Int?

    @Option(help: ArgumentHelp("Output channels: 1 or 2 downmix with ITU-R BS.775 coefficients; default: the input's.", valueName: "n"))
    var channels: Int?

    /// For an AAC output: a rate or channel count no AAC encoder takes is a usage error (64);
    /// which rates the profile takes is checked once it is known. (`convert` to WAV takes any.)
    func checkForAAC() throws {
        try check(sampleRates: 8000...96000, described: "a rate AAC carries, 8000 to 96000 Hz")
    }

    /// 1 to 8 channels and a rate in `sampleRates` (said as `described`), else a usage error.
    func check(sampleRates: ClosedRange<Int>, described: String) throws {
        if let channels, !(1...8).contains(channels) { throw ValidationError("--channels \(channels): give 1 to 8") }
        if let sampleRate, !sampleRates.contains(sampleRate) { throw ValidationError("--sample-rate \(sampleRate): give \(described)") }
    }
}

/// `--input-sample-rate`, `--input-channels` and `--input-format`: the layout of raw `.pcm`
/// input, which has no header (the same names on `encode` and `convert`).
struct RawInputOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Sample rate of raw .pcm input, in Hz.", valueName: "hz"))
    var inputSampleRate: Int?

    @Option(help: ArgumentHelp("Channels of raw .pcm input.", valueName: "n"))
    var inputChannels: Int?

    @Option(help: ArgumentHelp("Sample type of raw .pcm input: s16le or f32le.", valueName: "format"))
    var inputFormat: RawSampleFormat = .s16le

    /// The layout for the raw file `path`, from these options or, where one is not given, from
    /// the value of an older name (`encode --sample-rate`); an error naming what is missing or
    /// out of range.
    func rawLayout(for path: String, sampleRate olderRate: Int? = nil, channels olderChannels: Int? = nil,
                   format olderFormat: RawSampleFormat? = nil) throws -> PCMFormat {
        guard let sampleRate = inputSampleRate ?? olderRate, let channels = inputChannels ?? olderChannels else {
            throw CommandFailure("\(path): raw PCM has no header: give --input-sample-rate and --input-channels "
                                 + "(and --input-format, default s16le)", status: .usage)
        }
        guard (1...768_000).contains(sampleRate), (1...64).contains(channels) else {
            throw CommandFailure("--input-sample-rate \(sampleRate) / --input-channels \(channels) out of range "
                                 + "(1–768000 Hz, 1–64 channels)", status: .usage)
        }
        let format = olderFormat.map { inputFormat == .s16le ? $0 : inputFormat } ?? inputFormat
        return PCMFormat(sampleRate: sampleRate, channelCount: channels, sampleFormat: format.sampleFormat)
    }
}
