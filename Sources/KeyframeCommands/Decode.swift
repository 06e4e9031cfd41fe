import ArgumentParser
import KeyFrameKit

/// The format of a PCM output written to standard output.
enum PCMStreamFormat: String, ExpressibleByArgument, CaseIterable {
    case wav
    case pcm

    var fileFormat: MediaFileFormat { self == .wav ? .wav : .rawPCM }
}

/// `keyframe decode INPUT -o OUTPUT`: AAC to PCM (the series' decode step).
struct Decode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode an AAC file (or any audio file FFmpeg reads) to WAV or raw PCM.",
        discussion: """
            INPUT .aac (ADTS) is decoded whole, like `ffmpeg -i IN.aac OUT.wav`: ADTS cannot say how \
            much of the start is encoder priming. INPUT .m4a/.mp4/.mov has its edit list applied: the \
            encoder's priming is dropped and decoding ends where the edit ends, so our own files \
            decode to exactly the samples encoded. OUTPUT .wav is 16-bit (or 32-bit float with --format f32le); \
            .pcm is raw interleaved. OUTPUT - writes to standard output as a stream, WAV (its sizes \
            0xFFFFFFFF, "read to the end", as FFmpeg writes a WAV to a pipe) or raw PCM with \
            --output-format pcm; the summary then goes to stderr. Damage in the input is reported on stderr. Nothing is left under \
            OUTPUT if decoding fails. INPUT .m3u8 is an HLS media playlist of CMAF segments (as \
            `keyframe package` writes): its init segment and segments are read in order, the \
            priming edit and iTunSMPB applied. Any other audio file (FLAC, MP3, Ogg, an ADPCM or \
            A-law WAV, ALAC, …) is decoded by libavformat and libavcodec, as `keyframe convert` reads it.
            """
    )

    @Argument(help: "The .aac, .m4a, .mp4 or .m3u8 (HLS media playlist) to decode, or any audio file FFmpeg reads.")
    var input: String

    @Option(name: .shortAndLong, help: "The output file: .wav or .pcm; - for standard output (WAV unless --output-format pcm).")
    var output: String

    @Option(help: "The output's format when it is - (standard output): wav or pcm.")
    var outputFormat: PCMStreamFormat?

    @Option(name: .customLong("segment"), help: "A CMAF/DASH media segment to read after INPUT (its init segment); repeatable.")
    var segments: [String] = []

    @Option(help: "Output sample type.")
    var format: RawSampleFormat = .s16le

    func run() throws {
        try RemoteObjects.requireLocal([input], command: "decode")
        try checkDistinct(input: input, output: output, streamable: true)
        let fileFormat: MediaFileFormat
        if output == "-" {
            fileFormat = outputFormat?.fileFormat ?? .wav
        } else {
            guard let named = Keyframe.formats.format(nameOf: FilePath(output)), [.wav, .rawPCM].contains(named) else {
                throw CommandFailure("\(output): unknown output type; use \(Keyframe.formats.extensionList(holding: .pcm)), or - for standard output")
            }
            fileFormat = named
            if let outputFormat, outputFormat.fileFormat != fileFormat {
                throw CommandFailure("--output-format \(outputFormat.rawValue) is for -o -; \(output) is written as its name says", status: .usage)
            }
        }
        let line = ProgressLine(label: "decoding")
        // An HLS playlist is one of the library's inputs (its init segment, then its segments).
        let summary: Transcode.DecodeSummary
        do {
            summary = try Transcode.decode(FilePath(input), segments: segments.map { FilePath($0) }, to: FilePath(output),
                                           outputFormat: fileFormat, sampleFormat: format.sampleFormat, control: StopSignals.cancellingControl(),
                                           progress: line.update)
        } catch {
            throw CommandFailure(error, naming: input)
        }
        let seconds = Double(summary.frames) / Double(summary.format.sampleRate)
        line.finish(mediaSeconds: seconds, totalSeconds: seconds)
        printSummary("\(summaryName(of: output)): \(Terminal.fixed(seconds, digits: 3)) s, "
                     + "\(summary.format.sampleRate) Hz, \(summary.format.channelCount) ch, "
                     + "\(summary.frames) frames" + (summary.packets > 0 ? " from \(summary.packets) packets" : ""), outputs: [output])
        try ExitStatus.finish(damage: summary.damage, in: input)
    }
}
