import ArgumentParser
import KeyFrameKit

/// `keyframe mux IN.aac [--video IN.h264|IN.h265 [--frame-rate 30]] -o OUT.m4a|OUT.mp4 [--fragmented]`.
struct Mux: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mux",
        abstract: "Put an ADTS stream (and an H.264/HEVC stream) into an MP4/M4A.",
        discussion: """
            Combines elementary streams into one MP4 without re-encoding. Audio comes from ADTS (one AAC \
            packet per frame; ADTS carries no priming, so no gapless edit list is written), video from \
            an Annex-B elementary stream with --frame-rate (presentation order from the slice headers' \
            picture order count, so B-frames get correct pts and ctts). The file is \
            faststart (moov first) unless --no-fast-start, and appears under its name only when \
            complete. --fragmented writes moof+mdat every --fragment-duration seconds in place, so \
            a killed process leaves a file that plays up to the last fragment.
            """
    )

    @Argument(help: "The ADTS audio (.aac); optional when --video is given.")
    var input: String?

    @Option(help: "An Annex-B video stream (.h264, .h265, .hevc).")
    var video: String?

    @Option(help: "Frames per second of the video stream (30, 29.97, 30000/1001).")
    var frameRate = "30"

    @Option(name: .shortAndLong, help: "The output (.m4a, .mp4, .mov).")
    var output: String

    @Flag(inversion: .prefixedNo, help: "Write moov before mdat.")
    var fastStart = true

    @Flag(help: "Fragmented, crash-safe output.")
    var fragmented = false

    @Option(help: "Seconds per fragment with --fragmented.")
    var fragmentDuration = 1.0

    @Flag(help: "With --fragmented: on a clean finish, rewrite the file as a normal faststart MP4.")
    var defragment = false

    func validate() throws {
        guard fragmentDuration.isFinite, (0.1...3600).contains(fragmentDuration) else {
            throw ValidationError("--fragment-duration \(fragmentDuration): give 0.1 to 3600 seconds")
        }
        _ = try Self.frameDuration(frameRate)
    }

    func run() throws {
        try RemoteObjects.requireLocal([input, video].compactMap { $0 }, command: "mux")
        for path in [input, video].compactMap({ $0 }) { try checkDistinct(input: path, output: output) }
        guard input != nil || video != nil else { throw ValidationError("give an ADTS file and/or --video") }
        let videoInput = try video.map { path in
            let format = Keyframe.formats.detect(FilePath(path))
            guard format == .h264 || format == .hevc else {
                throw CommandFailure("\(path): not an Annex-B H.264 or HEVC stream (\(format.map { "\($0)" } ?? "unknown"))")
            }
            return Remux.VideoInput(path: FilePath(path), codec: format == .hevc ? .hevc : .h264, frameDuration: try Self.frameDuration(frameRate))
        }
        let fragment = fragmented ? MediaTime(value: Int64((fragmentDuration * 1000).rounded()), timescale: 1000) : nil
        let summary: Remux.MuxSummary
        let options = Remux.MuxOptions(fastStart: fastStart, fragmentDuration: fragment, defragment: defragment, formats: Keyframe.formats)
        do {
            summary = try Remux.mux(audio: input.map { FilePath($0) }, video: videoInput, to: FilePath(output),
                                    options: options, control: StopSignals.cancellingControl())
        } catch {
            let named = PipelineError(error).path?.string ?? input ?? video ?? output
            throw CommandFailure(error, naming: named)
        }
        var parts: [String] = []
        if input != nil { parts.append("\(summary.audioPackets) AAC packets") }
        if video != nil { parts.append("\(summary.videoSamples) video samples") }
        print("\(output): " + parts.joined(separator: ", "))
        try ExitStatus.finish(damage: summary.damage)
    }

    /// `30`, `29.97`, `30000/1001` → the duration of one frame.
    static func frameDuration(_ text: String) throws -> MediaTime {
        if let slash = text.firstIndex(of: "/"), let num = Int64(text[..<slash]), let den = Int64(text[text.index(after: slash)...]), num > 0, den > 0 {
            return try MediaTime(validatingValue: den, timescale: num)
        }
        guard let rate = Double(text), rate.isFinite, rate >= 1, rate <= 1000 else { throw ValidationError("--frame-rate \(text): give e.g. 30, 29.97 or 30000/1001") }
        if abs(rate - 29.97) < 0.001 { return MediaTime(value: 1001, timescale: 30000) }
        if abs(rate - 59.94) < 0.001 { return MediaTime(value: 1001, timescale: 60000) }
        if abs(rate - 23.976) < 0.001 { return MediaTime(value: 1001, timescale: 24000) }
        if rate == rate.rounded() { return MediaTime(value: 1, timescale: Int32(rate)) }
        return MediaTime(value: 1000, timescale: Int32((rate * 1000).rounded()))
    }
}
