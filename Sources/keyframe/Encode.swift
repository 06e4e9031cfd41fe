import ArgumentParser
import KeyFrameKit

/// `keyframe encode INPUT -o OUTPUT [--bitrate 96k]`: PCM to AAC-LC (seed 003's encoder).
struct Encode: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Encode a WAV or raw PCM file to AAC-LC.",
        discussion: """
            INPUT is a .wav (8/16/24/32-bit integer or 32/64-bit float, WAVE_FORMAT_EXTENSIBLE, RF64) \
            or raw interleaved .pcm (give --sample-rate, --channels, --format). OUTPUT .aac is ADTS; \
            .m4a/.mp4 is MP4 with a sample-exact edit list (the encoder's priming and the input's exact \
            length), so decoding it gives back exactly the input's samples. The encoder is libavcodec's native AAC encoder; sample \
            rate and channels come from the input. Nothing is left under OUTPUT if encoding fails.
            """
    )

    @Argument(help: "The .wav or .pcm file to encode.")
    var input: String

    @Option(name: .shortAndLong, help: "The output file: .aac (ADTS) or .m4a (MP4).")
    var output: String

    @Option(help: "Target bitrate: 96000, 96k or 0.128M.")
    var bitrate = Bitrate(argument: "96k")!

    @Option(help: ArgumentHelp(
        "AAC scale-factor search (ffmpeg's -aac_coder): twoloop (ffmpeg's default; the same bytes as ffmpeg) or fast (half the CPU).",
        valueName: "coder"))
    var coder: CoderArgument = .twoloop

    @Flag(help: "With .m4a: fragmented, crash-safe output (moof+mdat every second, written in place).")
    var fragmented = false

    @Flag(help: "Encode what there is of a WAV that ends before its data chunk says (a cut recording).")
    var allowTruncated = false

    @OptionGroup var layout: PCMLayoutOptions

    func run() throws {
        try checkDistinct(input: input, output: output)
        let toMP4: Bool
        switch fileExtension(output) {
        case "aac", "adts": toMP4 = false
        case "m4a", "mp4", "mov": toMP4 = true
        default: throw CommandFailure("\(output): unknown output type; use .aac or .m4a")
        }
        var reader: PCMFileReader
        switch fileExtension(input) {
        case "wav", "wave":
            do {
                reader = try PCMFileReader(wavPath: input, allowTruncated: allowTruncated)
            } catch PipelineError.wav(let error) {
                if case .dataBeyondFile = error {
                    throw CommandFailure("\(input): \(error) (a cut recording? --allow-truncated encodes what is there)")
                }
                throw CommandFailure("\(input): \(error)")
            }
        case "pcm", "raw": reader = try PCMFileReader(rawPath: input, format: try layout.rawLayout(for: input))
        default: throw CommandFailure("\(input): unknown input type; use .wav or .pcm")
        }
        let line = ProgressLine(label: "encoding")
        let report: (Transcode.Progress) -> Void = { progress in
            line.update(mediaSeconds: progress.mediaSeconds, totalSeconds: progress.totalSeconds)
        }
        let summary = toMP4
            ? try Transcode.encodeToM4A(&reader, outputPath: output, bitrate: bitrate.bitsPerSecond, coder: coder.coder,
                                        fragmentDuration: fragmented ? MediaTime(value: 1, timescale: 1) : nil, progress: report)
            : try Transcode.encodeToADTS(&reader, outputPath: output, bitrate: bitrate.bitsPerSecond, coder: coder.coder, progress: report)
        let seconds = Double(summary.inputFrames) / Double(reader.format.sampleRate)
        line.finish(mediaSeconds: seconds, totalSeconds: seconds)
        for warning in summary.warnings { Terminal.warning("\(input): \(warning)") }
        print("\(output): \(Terminal.fixed(seconds, digits: 3)) s, \(reader.format.sampleRate) Hz, \(reader.format.channelCount) ch → "
              + "\(summary.packets) AAC packets at \(bitrate.bitsPerSecond) b/s (priming \(summary.priming), padding \(summary.padding))")
    }
}
