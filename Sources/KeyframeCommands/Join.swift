import ArgumentParser
import KeyFrameKit

/// `keyframe join A B … -o OUT.m4a|.m4b`: a gapless join without re-encoding.
struct Join: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "join",
        abstract: "Join M4A, ADTS, MP3, Ogg Opus or FLAC files that share one stream configuration, gaplessly, without re-encoding.",
        discussion: """
            The packets are put one after another in one track, and the edit list gets an entry per \
            part that skips that part's priming and padding: a player honouring it plays exactly the \
            parts' audio one after another. Parts that follow each other in one stream (as `keyframe \
            split` makes them) join into that stream again: the packets a part repeats from the one \
            before are dropped and their edits become one, so the output holds the source's packets \
            and decodes to its samples. Each part keeps its own chapters; a part without any becomes \
            one chapter, titled by its title tag or else its file name. The output takes the first \
            part's tags but its title and track number. \
            Inputs whose AudioSpecificConfig differs are refused with the field that differs. Players \
            that read only iTunSMPB cannot skip the priming inside the file: the output carries no \
            iTunSMPB (it can describe only one part). FLAC files of one rate, channel count and bit \
            depth join into one FLAC stream, their frames renumbered and a new STREAMINFO with the \
            MD5 of the whole; FLAC and ALAC in MP4 join frame to frame, exactly. MP3 and Ogg Opus \
            parts of one stream (as split makes them) join back into it, exactly; unrelated MP3 or \
            Ogg Opus files join into one stream whose seam keeps what the next file's priming \
            holds (its encoder delay: for MP3 under two frames, about 50 ms, for Opus its pre-skip; \
            for a file cut from another, also the frames it kept before its first sample) and the \
            first file's padding, as players that play them one after the other without gapless \
            support do.
            """
    )

    @Argument(help: "The parts, in order (.m4a/.mp4/.m4b or .aac; or .mp3, .opus/.ogg, .flac).")
    var inputs: [String]

    @Option(name: .shortAndLong, help: "The output: .m4a, .m4b or .mp4; for MP3, Ogg Opus or FLAC parts, that container.")
    var output: String

    @Flag(help: "Print what was written as JSON.")
    var json = false

    func run() throws {
        try RemoteObjects.requireLocal(inputs, command: "join")
        for input in inputs { try checkDistinct(input: input, output: output) }
        let line = ProgressLine(label: "joining")
        let summary: AudioEditing.Summary
        do {
            summary = try AudioEditing.join(inputs.map { FilePath($0) }, to: FilePath(output),
                                            formats: Keyframe.formats, control: StopSignals.cancellingControl(), progress: line.update)
        } catch {
            // The error names the part it is about.
            let part = PipelineError(error).path?.string ?? inputs.first { "\(error)".contains($0) } ?? inputs[0]
            throw CommandFailure(error, naming: part)
        }
        line.finish(mediaSeconds: 0, totalSeconds: nil)
        try EditSummaryOutput.report([summary], json: json, array: false)
    }
}
