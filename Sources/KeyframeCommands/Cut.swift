import ArgumentParser
import KeyFrameKit

/// `keyframe cut IN -o OUT.m4a --start T [--end T]`: a sample-exact cut without re-encoding.
struct Cut: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cut",
        abstract: "Cut an M4A, ADTS, MP3, Ogg Opus or FLAC file to [start, end), exact to the sample, without re-encoding.",
        discussion: """
            AAC: keeps whole packets, from the one before START (the decoder needs its overlap) to the \
            one after END, and writes an edit list so that a player honouring it plays exactly the \
            samples from START up to END; iTunSMPB says the same. MP3 keeps the frame before START's and \
            a silent frame ahead holding the bit reservoir the kept frames read, so the decode is the \
            source's to the sample; the Info frame's delay and padding trim the rest. Opus (Ogg or \
            MP4) keeps 200 ms before START (RFC 7845's pre-roll) behind the pre-skip, and the last \
            granule position (or the edit) trims the end. FLAC and ALAC (native FLAC, or \
            either in MP4): whole frames are copied and only the frames START and END fall inside are \
            encoded again, which is lossless, so every player decodes exactly those samples; native \
            FLAC gets a new STREAMINFO with the MD5 of the cut. HE-AAC keeps frames back to one a \
            decoder may start at (an SBR header), and its ends fall on the core's samples: START and \
            END move back to an even sample, so an HE-AAC cut is exact to two samples. Tags are kept \
            (but MP3's TLEN, the source's length); chapters are shifted to the cut and clipped to \
            it. Times are seconds (12.5), H:MM:SS.mmm (1:02:03.5) or samples at the output rate \
            (48000s); an END past the input's end is its end. The output is of the input's container (.m4a, .m4b \
            or .mp4 for MP4 and ADTS input; .flac, .mp3, .opus/.ogg for those), written under a temporary name and \
            renamed when complete.
            """
    )

    @Argument(help: "The .m4a/.mp4/.m4b, .aac (ADTS), .mp3, .opus/.ogg or .flac file.")
    var input: String

    @Option(name: .shortAndLong, help: "The output: .m4a, .m4b or .mp4; for MP3, Ogg Opus or FLAC input, that container.")
    var output: String

    @Option(help: "The first sample kept: seconds, H:MM:SS.mmm, or Ns for samples.")
    var start = PositionArgument(.samples(0))

    @Option(help: "The sample after the last kept (default: the end of the input).")
    var end: PositionArgument?

    @Flag(help: "Print what was written as JSON.")
    var json = false

    /// An end before the start, in the same unit, is the command line's mistake (64).
    func validate() throws {
        let backwards: Bool
        switch (start.position, end?.position) {
        case (.seconds(let from), .seconds(let to)?): backwards = to <= from
        case (.samples(let from), .samples(let to)?): backwards = to <= from
        default: backwards = false
        }
        if backwards, let end { throw ValidationError("--end \(end.position) is not after --start \(start.position)") }
    }

    func run() throws {
        try RemoteObjects.requireLocal([input], command: "cut")
        try checkDistinct(input: input, output: output)
        let line = ProgressLine(label: "cutting")
        let summary: AudioEditing.Summary
        do {
            summary = try AudioEditing.cut(FilePath(input), to: FilePath(output), from: start.position, to: end?.position,
                                           formats: Keyframe.formats, control: StopSignals.cancellingControl(), progress: line.update)
        } catch {
            throw CommandFailure(error, naming: input)
        }
        line.finish(mediaSeconds: 0, totalSeconds: nil)
        try EditSummaryOutput.report([summary], json: json, array: false)
    }
}
