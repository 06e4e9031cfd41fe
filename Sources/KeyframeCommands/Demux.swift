import ArgumentParser
import KeyFrameKit

/// `keyframe demux INPUT -o OUTPUT.aac [--video-output OUTPUT.h264|.h265]`: the tracks as elementary streams.
struct Demux: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demux",
        abstract: "Write the audio of an MP4/M4A/MOV as ADTS, and its video as Annex-B.",
        discussion: """
            The audio track (the first AAC track, or --track) is written as ADTS, byte-identical to \
            `ffmpeg -i IN -map 0:a:N -c:a copy -f adts OUT`. ADTS cannot carry the encoder priming \
            and end trim of the edit list; a warning says how many samples that is. --video-output \
            writes the first video track (H.264 or HEVC) as an Annex-B stream with the parameter sets \
            before each sync sample. Fragmented MP4 and CMAF (init segment then media segments, \
            concatenated) are read too. Nothing is left under an output name if demuxing fails. \
            An output named - is written to standard output as it is made (the summary then goes \
            to stderr): `keyframe demux IN.m4a -o - | ffplay -`.
            """
    )

    @Argument(help: "The .mp4, .m4a or .mov file.")
    var input: String

    @Option(name: .shortAndLong, help: "The ADTS output (.aac); - for standard output.")
    var output: String?

    @Option(help: "The Annex-B video output (.h264, .h265, .hevc); - for standard output.")
    var videoOutput: String?

    @Option(name: .customLong("segment"), help: "A CMAF/DASH media segment to read after INPUT (its init segment); repeatable.")
    var segments: [String] = []

    @Option(help: "The audio track id to write (default: the first AAC track).")
    var track: UInt32?

    func validate() throws {
        guard output != nil || videoOutput != nil else { throw ValidationError("give -o OUTPUT.aac and/or --video-output OUTPUT.h264") }
        guard !(output == "-" && videoOutput == "-") else { throw ValidationError("only one output can be - (standard output)") }
    }

    func run() throws {
        try RemoteObjects.requireLocal([input], command: "demux")
        for path in [output, videoOutput].compactMap({ $0 }) { try checkDistinct(input: input, output: path, streamable: true) }
        let line = ProgressLine(label: "demuxing")
        let summary: Remux.DemuxSummary
        do {
            summary = try Remux.demux(FilePath(input), segments: segments.map { FilePath($0) }, audioOutput: output.map { FilePath($0) },
                                      videoOutput: videoOutput.map { FilePath($0) }, audioTrackID: track,
                                      formats: Keyframe.formats, control: StopSignals.cancellingControl(), progress: line.update)
        } catch {
            throw CommandFailure(error, naming: input)
        }
        line.finish(mediaSeconds: 0, totalSeconds: nil)
        if let output, let track = summary.audioTrackID {
            if let (priming, remainder) = summary.droppedGapless, priming > 0 || remainder > 0 {
                Terminal.error("warning: ADTS cannot carry the edit list: \(output) keeps the \(priming) samples " +
                    "of priming at the start and \(remainder) of padding at the end (decode the MP4 itself for sample-exact audio)\n")
            }
            printSummary("\(summaryName(of: output)): track \(track), \(summary.audioPackets) AAC packets", outputs: [output, videoOutput])
        }
        if let videoOutput, let track = summary.videoTrackID {
            printSummary("\(summaryName(of: videoOutput)): track \(track), \(summary.videoSamples) video samples",
                         outputs: [output, videoOutput])
        }
        try ExitStatus.finish(damage: summary.damage, in: input)
    }
}
