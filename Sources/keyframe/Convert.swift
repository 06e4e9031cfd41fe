import ArgumentParser
import KeyFrameKit

/// `keyframe convert INPUT -o OUTPUT`: any audio to gapless AAC, or to WAV/PCM.
struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert any audio (FLAC, MP3, Ogg, Opus, ALAC, AIFF, WAV, AAC…) to AAC, WAV or PCM.",
        discussion: """
            INPUT is whatever FFmpeg reads (FLAC, MP3, Ogg Vorbis, Opus in Ogg or WebM, ALAC, AIFF, \
            W64, the audio track of a video); WAV, ADTS and MP4 AAC are read by KeyFrameKit's own \
            readers. What the file declares about encoder delay and padding (MP3's LAME header, Opus \
            pre-skip, Vorbis end trimming, an edit list) is honoured, so OUTPUT holds exactly the \
            frames INPUT decodes to. OUTPUT .m4a/.mp4 is gapless AAC-LC with faststart; .aac is ADTS; \
            .wav/.pcm is PCM in the decoded sample type (or --format). A rate AAC cannot carry (above \
            96 kHz) is resampled to 48 kHz (44.1 kHz for its multiples) with soxr. Nothing is left \
            under OUTPUT if the conversion fails.
            """
    )

    @Argument(help: "The file to convert.")
    var input: String

    @Option(name: .shortAndLong, help: "The output file: .m4a/.mp4 (gapless AAC), .aac (ADTS), .wav or .pcm.")
    var output: String

    @Option(help: "AAC bitrate: 128000, 128k or 0.128M.")
    var bitrate = Bitrate(argument: "128k")!

    @Option(help: ArgumentHelp(
        "AAC scale-factor search: twoloop (ffmpeg's default; the same bytes as ffmpeg) or fast.", valueName: "coder"))
    var coder: CoderArgument = .twoloop

    @Option(help: "Output sample rate in Hz (resampled with soxr at 28-bit precision); default: the input's.")
    var sampleRate: Int?

    @Option(help: "Output channels: 1 or 2 downmix with ITU-R BS.775 coefficients; default: the input's.")
    var channels: Int?

    @Option(help: ArgumentHelp("Sample type of .wav/.pcm output: s16le, s24le, s32le or f32le; default: the decoded one.",
                               valueName: "format"))
    var format: ConvertSampleFormat?

    @Option(parsing: .unconditional, help: ArgumentHelp("Normalise to this EBU R 128 integrated loudness (e.g. -16 or -23), measured in a first pass; "
                               + "the gain is limited so the true peak stays at or below -1 dBTP.", valueName: "LUFS"))
    var normalize: Double?

    @Option(help: "Sample rate of raw .pcm input, in Hz.")
    var inputSampleRate: Int?

    @Option(help: "Channels of raw .pcm input.")
    var inputChannels: Int?

    @Option(help: "Sample type of raw .pcm input.")
    var inputFormat: RawSampleFormat = .s16le

    func run() throws {
        try checkDistinct(input: input, output: output)
        var raw: PCMFormat?
        if MediaFileFormat.detect(FilePath(input)) == .rawPCM {
            guard let rate = inputSampleRate, let count = inputChannels else {
                throw CommandFailure("\(input): raw PCM has no header: give --input-sample-rate and --input-channels (and --input-format)")
            }
            raw = PCMFormat(sampleRate: rate, channelCount: count, sampleFormat: inputFormat.sampleFormat)
        }
        let options = Transcode.ConvertOptions(bitrate: bitrate.bitsPerSecond, coder: coder.coder, sampleRate: sampleRate,
                                               channelCount: channels, pcmSampleFormat: format?.sampleFormat, rawInputFormat: raw,
                                               normalizeTo: normalize)
        let line = ProgressLine(label: "converting")
        let summary = try convert(options: options, progress: line.update)
        let rate = summary.outputFormat?.sampleRate ?? 1
        let seconds = Double(summary.outputFrames) / Double(rate)
        line.finish(mediaSeconds: seconds, totalSeconds: seconds)
        for damage in summary.damage { Terminal.warning("\(input): \(damage)") }
        let layout = summary.outputFormat.map { "\($0.sampleRate) Hz, \($0.channelCount) ch" } ?? "no audio"
        var text = "\(output): \(Terminal.fixed(seconds, digits: 3)) s from \(summary.input) (\(summary.inputFrames) frames) → \(layout)"
        if summary.packets > 0 {
            text += ", \(summary.packets) AAC packets at \(bitrate.bitsPerSecond) b/s (priming \(summary.priming), padding \(summary.padding))"
        } else {
            text += ", \(summary.outputFrames) frames"
        }
        print(text)
        if let (measured, gain) = summary.normalization {
            print("normalised: \(Probe.loudnessText(measured)) → gain \(Terminal.fixed(gain, digits: 2)) dB")
        }
    }

    /// Runs the conversion; an error names INPUT (libavformat's errors do not by themselves).
    private func convert(options: Transcode.ConvertOptions, progress: @escaping (MediaProgress) -> Void) throws -> Transcode.ConvertSummary {
        do {
            return try Transcode.convert(FilePath(input), to: FilePath(output), options: options,
                                         control: StopSignals.cancellingControl(), progress: progress)
        } catch {
            let text = "\(error)"
            throw CommandFailure(text.contains(input) ? text : "\(input): \(text)")
        }
    }
}

/// `--format` of `convert`'s PCM output.
enum ConvertSampleFormat: String, ExpressibleByArgument, CaseIterable {
    case s16le, s24le, s32le, f32le

    var sampleFormat: PCMSampleFormat {
        switch self {
        case .s16le: .int16
        case .s24le: .int24
        case .s32le: .int32
        case .f32le: .float32
        }
    }
}
