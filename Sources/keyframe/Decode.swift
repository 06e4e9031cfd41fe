import ArgumentParser
import KeyFrameKit

/// `keyframe decode INPUT -o OUTPUT`: AAC to PCM (the series' decode step).
struct Decode: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decode an AAC file to WAV or raw PCM.",
        discussion: """
            INPUT .aac (ADTS) is decoded whole, like `ffmpeg -i IN.aac OUT.wav`: ADTS cannot say how \
            much of the start is encoder priming. INPUT .m4a/.mp4/.mov has its edit list applied: the \
            encoder's priming is dropped and decoding ends where the edit ends, so our own files \
            decode to exactly the samples encoded. OUTPUT .wav is 16-bit (or 32-bit float with --format f32le); \
            .pcm is raw interleaved. Damage in the input is reported on stderr. Nothing is left under \
            OUTPUT if decoding fails.
            """
    )

    @Argument(help: "The .aac, .m4a or .mp4 file to decode.")
    var input: String

    @Option(name: .shortAndLong, help: "The output file: .wav or .pcm.")
    var output: String

    @Option(name: .customLong("segment"), help: "A CMAF/DASH media segment to read after INPUT (its init segment); repeatable.")
    var segments: [String] = []

    @Option(help: "Output sample type.")
    var format: RawSampleFormat = .s16le

    func run() throws {
        try checkDistinct(input: input, output: output)
        let isMP4: Bool
        switch fileExtension(input) {
        case "aac", "adts": isMP4 = false
        case "m4a", "mp4", "mov", "m4v", "3gp": isMP4 = true
        default: isMP4 = try Probe.isContainer(input) || !segments.isEmpty
        }
        let destination: Transcode.PCMDestination
        switch fileExtension(output) {
        case "wav", "wave": destination = .wav(path: output)
        case "pcm", "raw": destination = .raw(path: output)
        default: throw CommandFailure("\(output): unknown output type; use .wav or .pcm")
        }
        let line = ProgressLine(label: "decoding")
        let report: (Transcode.Progress) -> Void = { progress in
            line.update(mediaSeconds: progress.mediaSeconds, totalSeconds: progress.totalSeconds)
        }
        let summary = isMP4
            ? try Transcode.decodeMP4(inputPath: input, segments: segments, to: destination, sampleFormat: format.sampleFormat, progress: report)
            : try Transcode.decodeADTS(inputPath: input, to: destination, sampleFormat: format.sampleFormat, progress: report)
        let seconds = Double(summary.frames) / Double(summary.format.sampleRate)
        line.finish(mediaSeconds: seconds, totalSeconds: seconds)
        for damage in summary.damage { Terminal.warning("\(input): \(damage)") }
        print("\(output): \(Terminal.fixed(seconds, digits: 3)) s, \(summary.format.sampleRate) Hz, \(summary.format.channelCount) ch, "
              + "\(summary.frames) frames from \(summary.packets) AAC packets")
    }
}
