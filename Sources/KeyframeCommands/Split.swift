import ArgumentParser
import KeyFrameKit

/// `keyframe split IN --at T,T… | --chapters -o DIR/`: consecutive gapless parts.
struct Split: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "split",
        abstract: "Split an M4A, ADTS, MP3, Ogg Opus or FLAC file into gapless parts at times or at its chapters.",
        discussion: """
            Each part is cut as `keyframe cut` cuts, so joining the parts (`keyframe join`) gives \
            back the input's samples, and its chapters (and its packets bit for bit, but FLAC and \
            ALAC frames a split point fell inside, which were encoded again). Parts are named after the input: NAME-01.m4a, \
            NAME-02.m4a, … (.m4b for an .m4b input; the input's own for MP3, Ogg Opus and FLAC) in DIR; an existing part is not overwritten, and \
            if one part fails the parts written are removed. With --chapters each part takes its \
            chapter's title as its title tag and its number as its track number.
            """
    )

    @Argument(help: "The .m4a/.mp4/.m4b, .aac (ADTS), .mp3, .opus/.ogg or .flac file.")
    var input: String

    @Option(parsing: .upToNextOption, help: "Split points, comma-separated or repeated: seconds, H:MM:SS.mmm, or Ns for samples.")
    var at: [String] = []

    @Flag(help: "Split at every chapter.")
    var chapters = false

    @Option(name: .shortAndLong, help: "The directory the parts go into (made, with its parents, when missing).")
    var output: String

    @Flag(help: "Print what was written as JSON.")
    var json = false

    func validate() throws {
        guard chapters != !at.isEmpty else { throw ValidationError("give either --at T,T… or --chapters") }
        if output == "-" { throw ValidationError(standardOutputRefusal) }
    }

    func run() throws {
        try RemoteObjects.requireLocal([input], command: "split")
        var positions: [AudioEditing.Position] = []
        for text in at.flatMap({ $0.split(separator: ",") }) {
            guard let position = AudioEditing.Position(positionArgument: String(text)) else {
                throw CommandFailure("--at \(text): give seconds (12.5), H:MM:SS.mmm or samples (48000s)")
            }
            positions.append(position)
        }
        let line = ProgressLine(label: "splitting")
        let summaries: [AudioEditing.Summary]
        do {
            summaries = try AudioEditing.split(FilePath(input), into: FilePath(output), at: chapters ? .chapters : .positions(positions),
                                               formats: Keyframe.formats, control: StopSignals.cancellingControl(), progress: line.update)
        } catch {
            throw CommandFailure(error, naming: input)
        }
        line.finish(mediaSeconds: 0, totalSeconds: nil)
        try EditSummaryOutput.report(summaries, json: json, array: true)
    }
}
