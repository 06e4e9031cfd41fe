import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The inputs `keyframe play` takes, and a format to make them in.
struct PlayInput: Sendable, CustomTestStringConvertible {
    var container: RecordContainer
    var rate: Int
    var channels: Int
    var testDescription: String { "\(container) \(rate) Hz \(channels) ch" }

    static let all = [RecordContainer.wav, .aac, .m4a].flatMap { container in
        [PlayInput(container: container, rate: 44100, channels: 2), PlayInput(container: container, rate: 48000, channels: 1)]
    }
}

/// Issue 6, "Done means" 5: `keyframe play X --device kf_out --alsa-config cfg` (ALSA's `file`
/// plugin writing raw s16 to a file: no sound card, unpaced) renders exactly the PCM bytes that
/// `keyframe decode X -o x.pcm` gives (edit list applied) for an .m4a and an .aac we wrote, and
/// exactly the samples of a .wav, at the file's own rate and channel count (stereo 44.1 kHz and
/// mono 48 kHz); the `--json` summary says so, and stderr stays empty when it is not a terminal.
///
/// `PlayCommandTests.PulseAudio` plays into a real-time device (a PulseAudio null sink) and checks
/// that the whole tone reaches the sink: nothing cut at the end, nothing dropped.
@Suite(.blocking) struct PlayCommandTests {
    @Test(.hangGuard(minutes: 15), arguments: PlayInput.all)
    func playRendersTheDecodedPCM(input: PlayInput) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let what = "play \(input)"
        let wav = directory.appendingPathComponent("in.wav").path
        try CodecInteropTests.makeWAV(rate: input.rate, channels: input.channels, seconds: 1.3, to: wav, frequency: 1000)
        let file: String
        let expected: Data
        if input.container == .wav {
            file = wav
            expected = try CodecInteropTests.wavPayload(wav)
        } else {
            file = directory.appendingPathComponent("ours.\(input.container.rawValue)").path
            try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", file])
            let decoded = directory.appendingPathComponent("decoded.pcm").path
            try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", file, "-o", decoded])
            expected = try Data(contentsOf: URL(fileURLWithPath: decoded))
        }
        try #require(expected.count > 0)

        let rendered = directory.appendingPathComponent("out.raw").path
        let configuration = try CaptureCheck.alsaConfiguration(in: directory, output: rendered)
        let result = try Subprocess.run(try ExternalTool.keyframe, ["play", file, "--device", "kf_out", "--alsa-config", configuration, "--json"],
                                        environment: ProcessInfo.processInfo.environment, timeout: .seconds(60))
        try #require(result.status == 0, "\(what) exited \(result.status): \(result.standardError)")
        #expect(result.standardError.isEmpty, "\(what): stderr is not a terminal, yet it says: \(result.standardError)")

        let bytes = try Data(contentsOf: URL(fileURLWithPath: rendered))
        let first = zip(bytes, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(bytes == expected,
                "\(what): kf_out got \(bytes.count) bytes, keyframe decode gives \(expected.count); first difference at byte \(first.map { "\($0)" } ?? "-")")

        let frames = expected.count / (2 * input.channels)
        let summary = try CaptureCheck.json(result, what)
        #expect(summary["input"] as? String == file && summary["device"] as? String == "kf_out", "\(what): summary \(summary)")
        #expect(summary["sampleRate"] as? Int == input.rate && summary["channels"] as? Int == input.channels,
                "\(what): summary \(summary); the file is \(input.rate) Hz \(input.channels) ch")
        let seconds = (summary["seconds"] as? NSNumber)?.doubleValue ?? -1
        #expect(summary["frames"] as? Int == frames && abs(seconds - Double(frames) / Double(input.rate)) < 0.001,
                "\(what): summary \(summary); \(frames) frames were decoded")
        #expect(summary["underruns"] is Int, "\(what): summary \(summary)")
    }
}

extension PlayCommandTests {
    /// Issue 22: `decode` and `play` open their input through the library's one format table, so
    /// they take what `convert` takes: FLAC, Ogg Vorbis, MP3 (libavformat) and an HLS playlist of
    /// our CMAF segments. `play` renders exactly what `decode` writes; FLAC decodes to FFmpeg's
    /// own samples, and the playlist to its source M4A's.
    @Test(.hangGuard(minutes: 15), arguments: ["flac", "ogg", "mp3", "m3u8"])
    func decodeAndPlayTakeEveryInputTheLibraryReads(kind: String) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let what = "decode and play .\(kind)"
        let wav = directory.appendingPathComponent("in.wav").path
        try CodecInteropTests.makeWAV(rate: 44100, channels: 2, seconds: 1.3, to: wav, frequency: 1000)
        let file: String
        var reference: String?
        switch kind {
        case "m3u8":
            let m4a = directory.appendingPathComponent("in.m4a").path
            try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", m4a])
            try ExternalTool.succeed(try ExternalTool.keyframe, ["package", m4a, "--hls", directory.appendingPathComponent("hls").path,
                                                                 "--segment-duration", "0.5"])
            file = directory.appendingPathComponent("hls/index.m3u8").path
            reference = m4a
        default:
            file = directory.appendingPathComponent("in.\(kind)").path
            try ExternalTool.succeed("ffmpeg", ["-v", "error", "-i", wav] + (kind == "ogg" ? ["-c:a", "libvorbis"] : []) + [file])
        }
        let decoded = directory.appendingPathComponent("decoded.pcm").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", file, "-o", decoded])
        let expected = try Data(contentsOf: URL(fileURLWithPath: decoded))
        try #require(expected.count > 0, "\(what): decode wrote nothing")
        if let reference {
            let direct = directory.appendingPathComponent("reference.pcm").path
            try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", reference, "-o", direct])
            #expect(try Data(contentsOf: URL(fileURLWithPath: direct)) == expected, "\(what): the playlist decodes to its source M4A's samples")
        } else if kind == "flac" {
            let theirs = directory.appendingPathComponent("ffmpeg.pcm").path
            try ExternalTool.succeed("ffmpeg", ["-v", "error", "-i", file, "-f", "s16le", theirs])
            #expect(try Data(contentsOf: URL(fileURLWithPath: theirs)) == expected, "\(what): FFmpeg's samples")
        }
        let rendered = directory.appendingPathComponent("out.raw").path
        let configuration = try CaptureCheck.alsaConfiguration(in: directory, output: rendered)
        let result = try Subprocess.run(try ExternalTool.keyframe, ["play", file, "--device", "kf_out", "--alsa-config", configuration, "--json"],
                                        environment: ProcessInfo.processInfo.environment, timeout: .seconds(60))
        try #require(result.status == 0, "\(what) exited \(result.status): \(result.standardError)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: rendered))
        #expect(bytes == expected, "\(what): kf_out got \(bytes.count) bytes, keyframe decode gives \(expected.count)")
        guard kind == "m3u8" else { return }
        // A playlist our reader refuses is refused, never handed to libavformat's HLS reader
        // (which would decode around the hole, without the gapless trim, and exit 0).
        try FileManager.default.removeItem(atPath: directory.appendingPathComponent("hls/segment-00002.m4s").path)
        for command in [["decode", file, "-o", directory.appendingPathComponent("holed.pcm").path],
                        ["convert", file, "-o", directory.appendingPathComponent("holed.wav").path],
                        ["play", file, "--device", "kf_out", "--alsa-config", configuration]] {
            let refused = try ExternalTool.run(try ExternalTool.keyframe, command)
            #expect(refused.status != 0 && refused.standardError.contains("segment-00002.m4s"),
                    "\(command[0]) of a playlist with a missing segment: \(refused.status) \(refused.standardError)")
        }
    }

    /// `keyframe play tone.wav --device pulse` into a PulseAudio null sink of the test's own,
    /// recorded off the sink's monitor by parec: the 2 s tone arrives whole (1.85–2.05 s of tone in
    /// 10 ms blocks: drained at the end, no periods dropped), at its frequency and level.
    @Suite(.realTime, .serialized) struct PulseAudio {
        @Test(.hangGuard(minutes: 15))
        func playReachesTheSinkWhole() throws {
            let server = try PulseAudioServer(sinkName: "kf_sink", sampleRate: 48000, channels: 2)
            defer { server.stop() }
            let directory = try ExternalTool.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let tone = directory.appendingPathComponent("tone.wav").path
            let samples = CaptureCheck.tone(frames: 96000, rate: 48000, frequencies: PulseTone.frequencies)
            try CaptureCheck.writeWAV(samples, rate: 48000, channels: 2, to: tone)

            let monitor = try server.start("parec", ["-d", "kf_sink.monitor", "--latency-msec=20", "--raw", "--format=s16le", "--rate=48000", "--channels=2"])
            defer { monitor.stop() }
            try server.waitForStreams("source-outputs", while: monitor)

            let what = "play --device pulse (2 s tone)"
            let result = try server.run(try ExternalTool.keyframe, ["play", tone, "--device", "pulse", "--json"], timeout: .seconds(60))
            try #require(result.status == 0, "\(what) exited \(result.status): \(result.standardError)")
            let summary = try CaptureCheck.json(result, what)
            #expect(summary["frames"] as? Int == 96000 && summary["sampleRate"] as? Int == 48000 && summary["channels"] as? Int == 2
                    && summary["device"] as? String == "pulse" && summary["underruns"] is Int,
                    "\(what): summary \(summary)")

            // Let the monitor catch the sink's last period, then stop parec.
            Subprocess.sleep(.milliseconds(700))
            monitor.stop()
            let heard = CaptureCheck.samples(monitor.standardOutputSoFar)
            let blocks = heard.count / 2 / 480
            let loud = (0..<blocks).filter { block in
                let left = CaptureCheck.channel(Array(heard[(block * 960)..<((block + 1) * 960)]), 0, of: 2)[...]
                return CaptureCheck.rmsDBFS(left) > -30
            }.count
            // The monitor misses the very end of any stream through ALSA's pulse plugin (measured:
            // aplay 1.90–1.92 s, keyframe 1.94 s, paplay 1.98 s of a 2 s file); a player that does
            // not drain loses its whole buffer, one that drops periods loses more.
            #expect(loud >= 185 && loud <= 205,
                    "\(what): the sink's monitor heard \(Double(loud) / 100) s of tone in \(Double(blocks) / 100) s; the file holds 2 s (want 1.85–2.05 s)")
            PulseTone.expectTone(heard, rate: 48000, seconds: 1.5, what)
        }
    }
}
