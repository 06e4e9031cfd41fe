import ArgumentParser
import KeyFrameKit

/// `keyframe encode INPUT -o OUTPUT [--bitrate 96k]`: PCM to AAC-LC (seed 003's encoder).
struct Encode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encode",
        abstract: "Encode a WAV or raw PCM file to AAC-LC, HE-AAC or HE-AAC v2.",
        discussion: """
            INPUT is a .wav (8/16/24/32-bit integer or 32/64-bit float, WAVE_FORMAT_EXTENSIBLE, RF64) \
            or raw interleaved .pcm (give --sample-rate, --channels, --format). OUTPUT .aac is ADTS; \
            .m4a/.mp4 is MP4 with a sample-exact edit list (the encoder's priming and the input's exact \
            length), so decoding it gives back exactly the input's samples. The encoder is libavcodec's native AAC encoder; sample \
            rate and channels come from the input. --profile he-aac and he-aac-v2 put KeyFrameKit's SBR \
            (and parametric stereo) encoder over it; --profile auto chooses by the input's channels and \
            --bitrate (stereo: he-aac-v2 up to 40k, he-aac up to 64k; mono: he-aac up to 32k; lc above, \
            for more channels, and without --bitrate). Nothing is left under OUTPUT if encoding fails.
            """
    )

    @Argument(help: "The .wav or .pcm file to encode.")
    var input: String

    @Option(name: .shortAndLong, help: "The output file: .aac (ADTS) or .m4a (MP4).")
    var output: String

    @Option(help: "Target bitrate: 96000, 96k or 0.128M; default 96k, or the most AAC carries at the input's rate and channels.")
    var bitrate: Bitrate?

    @Option(help: ArgumentHelp(
        "AAC scale-factor search (ffmpeg's -aac_coder): twoloop (ffmpeg's default; the same bytes as ffmpeg) or fast (half the CPU).",
        valueName: "coder"))
    var coder: CoderArgument = .twoloop

    @Option(help: ProfileArgument.help)
    var profile: ProfileArgument = .lc

    @Flag(help: "With .m4a: fragmented, crash-safe output (moof+mdat every second, written in place).")
    var fragmented = false

    @Flag(help: "Encode what there is of a WAV that ends before its data chunk says (a cut recording).")
    var allowTruncated = false

    @OptionGroup var layout: PCMLayoutOptions

    func run() throws {
        try checkDistinct(input: input, output: output)
        guard [.adts, .mp4].contains(MediaFileFormat(nameOf: FilePath(output))) else {
            throw CommandFailure("\(output): unknown output type; use \(MediaFileFormat.extensionList(holding: .aac))")
        }
        let inputPath = FilePath(input)
        let reader: PCMFileReader
        do {
            let raw = MediaFileFormat.detect(inputPath) == .rawPCM ? try layout.rawLayout(for: input) : nil
            reader = try PCMFileReader(path: inputPath, rawFormat: raw, allowTruncated: allowTruncated)
        } catch let failure as PipelineError where failure.code == .pcmFile {
            let error: any Error = failure.underlying ?? failure
            if case .dataBeyondFile? = failure.underlying(as: WAVError.self) {
                throw CommandFailure("\(input): \(error) (a cut recording? --allow-truncated encodes what is there)")
            }
            throw CommandFailure("\(input): \(error)")
        }
        let format = reader.format
        let line = ProgressLine(label: "encoding")
        let options = Transcode.EncodeOptions(bitrate: bitrate?.bitsPerSecond, coder: coder.coder,
                                              fragmentDuration: fragmented ? MediaTime(value: 1, timescale: 1) : nil, preferredBitrate: 96_000,
                                              profile: profile.choice)
        let summary = try Transcode.encode(reader, to: FilePath(output), options: options, control: StopSignals.cancellingControl(),
                                           progress: line.update)
        let seconds = Double(summary.inputFrames) / Double(summary.sampleRate)
        line.finish(mediaSeconds: seconds, totalSeconds: seconds)
        for damage in summary.damage { Terminal.warning("\(input): \(damage)") }
        print("\(output): \(Terminal.fixed(seconds, digits: 3)) s, \(summary.sampleRate) Hz, \(format.channelCount) ch → "
              + "\(summary.packets) AAC packets\(ProfileArgument.tag(summary.profile)) at \(summary.bitrate) b/s (priming \(summary.priming), padding \(summary.padding))")
    }
}
