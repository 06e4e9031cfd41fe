import ArgumentParser
import KeyFrameKit

/// `keyframe play INPUT`: decode and render in real time on ALSA (the series' last step).
struct Play: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play a .wav, .aac or .m4a/.mp4 file on an ALSA playback device.",
        discussion: """
            The PCM played is exactly what `keyframe decode` writes for the same file: for .m4a/.mp4 the \
            edit list is applied (no encoder priming or padding), ADTS is played whole, WAV as stored. \
            The device is opened in the stream's rate and channel count (16-bit for AAC) and paces the \
            decoding; underruns are recovered from and counted. On a terminal a progress line shows the \
            position.
            """
    )

    @Argument(help: "The .wav, .aac or .m4a/.mp4 file to play.")
    var input: String

    @OptionGroup var audioDevice: AudioDeviceOptions

    @Flag(help: "Print the summary as JSON on stdout.")
    var json = false

    func run() throws {
        try RemoteObjects.requireLocal([input], command: "play")
        let line = ProgressLine(label: "playing")
        let summary: Playback.Summary
        do {
            summary = try Playback.play(FilePath(input), device: audioDevice.device, alsaConfiguration: try audioDevice.configuration(),
                                        control: StopSignals.cancellingControl(), progress: line.update)
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            // Pipeline errors name the file or the device.
            throw CommandFailure(error, naming: input)
        }
        line.finish(mediaSeconds: summary.seconds, totalSeconds: summary.seconds)
        if summary.underruns > 0 {
            Terminal.warning("\(summary.underruns) underrun\(summary.underruns == 1 ? "" : "s") on '\(audioDevice.device)' (decoding fell behind; recovered)")
        }
        if json {
            try JSONOutput.print(PlayReport(input: input, device: audioDevice.device, sampleRate: summary.format.sampleRate,
                                            channels: summary.format.channelCount, frames: summary.frames,
                                            seconds: summary.seconds, underruns: summary.underruns))
        } else {
            print("\(input): played \(Terminal.fixed(summary.seconds, digits: 3)) s, \(summary.format.sampleRate) Hz, "
                  + "\(summary.format.channelCount) ch on '\(audioDevice.device)', \(summary.underruns) underruns")
        }
        try ExitStatus.finish(damage: summary.damage, in: input)
    }
}

/// `play --json`.
struct PlayReport: Encodable {
    var input: String
    var device: String
    var sampleRate: Int
    var channels: Int
    var frames: Int64
    var seconds: Double
    var underruns: Int
}
