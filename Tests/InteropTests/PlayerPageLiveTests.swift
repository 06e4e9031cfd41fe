import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport
import Glibc

/// The player page (`GET /`) in headless Chromium for a few seconds, through
/// `scripts/browser-page-live.py`: what it appended, whether sound was heard (the capture worklet
/// behind the page's `<audio>`, no reference), its latency line and its chapter buttons.
/// `chromium` and the venv's websocket-client come from `make deps`; a missing one is a failure,
/// not a skip.
enum PlayerPageLive {
    /// The driver's report of the page at `url` (`arguments`: --live, --play, --rate, ...).
    static func listen(_ url: String, _ arguments: [String]) throws -> [String: Any] {
        let script = MP4Check.repositoryRoot.appendingPathComponent("scripts/browser-page-live.py").path
        let run = try ExternalTool.succeed(try MP4Check.venvPython, [script, url] + arguments)
        return try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any], "\(run.standardOutput)")
    }

    static func object(_ report: [String: Any], _ key: String) -> [String: Any] { report[key] as? [String: Any] ?? [:] }

    static func number(_ report: [String: Any], _ path: String...) -> Double? {
        var value: Any? = report
        for key in path { value = (value as? [String: Any])?[key] }
        return (value as? NSNumber)?.doubleValue
    }
}

extension RecordCommandTests.PulseAudio {
    /// A live recording (`record --hls --serve`, segments of 1 s, parts of 0.5 s, program
    /// date-times) played by the origin's own page: ready and live, at least two segments
    /// appended while it plays 6 s (after the three it starts from), the tone heard (1 kHz on the
    /// left, the channel captured), and a latency behind live shown ("N s behind live"). The
    /// latency is a figure, printed; the only bound on it is a sanity one (under 30 s).
    @Test(.hangGuard(minutes: 15))
    func thePlayerPageFollowsALiveRecording() throws {
        let pulse = try PulseTone()
        defer { pulse.close() }
        let hls = pulse.directory.appendingPathComponent("live").path
        let port = try HTTPProbe.freePort()
        let base = "http://127.0.0.1:\(port)"
        let recording = try pulse.startRecording(["--hls", hls, "--serve", "127.0.0.1:\(port)", "--segment-duration", "1", "--part-duration", "0.5",
                                                  "--device", "pulse", "--sample-rate", "48000"])
        defer { _ = recording.send(SIGINT) }
        try pulse.server.waitForStreams("source-outputs", while: recording)
        var playlist = HTTPProbe.get(base + "/index.m3u8")
        for _ in 0..<60 where playlist.status != 200 {
            Subprocess.sleep(.milliseconds(100))
            playlist = HTTPProbe.get(base + "/index.m3u8")
        }
        try #require(playlist.status == 200, "the playlist: \(playlist.status) \(playlist.body)")
        // Three whole segments (blocking reloads, one segment ahead at a time): the page starts
        // three behind the end.
        for msn in 0...2 {
            playlist = HTTPProbe.get(base + "/index.m3u8?_HLS_msn=\(msn)")
            try #require(playlist.status == 200, "_HLS_msn=\(msn): \(playlist.status) \(playlist.body)")
        }
        // Whole segments carry their program date-times (what the latency is measured from).
        try #require(playlist.body.contains("segment-00003.m4s") && playlist.body.contains("#EXT-X-PROGRAM-DATE-TIME:"), "\(playlist.body)")

        let screenshot = pulse.directory.appendingPathComponent("live.png").path
        let report = try PlayerPageLive.listen(base + "/", ["--live", "--play", "6", "--rate", "48000", "--screenshot", screenshot])
        let player = PlayerPageLive.object(report, "player")
        try #require(player["state"] as? String == "ready" && player["live"] as? Bool == true, "the page: \(player)")
        let played = PlayerPageLive.object(report, "played")
        let heard = PlayerPageLive.object(report, "heard")
        let latency = PlayerPageLive.object(report, "latency")
        let page = PlayerPageLive.object(report, "page")

        let before = Int(PlayerPageLive.number(played, "appendedBefore") ?? -1)
        let during = Int(PlayerPageLive.number(played, "appendedWhilePlaying") ?? -1)
        #expect(before >= 1, "segments appended before playing: \(played)")
        #expect(during >= 2, "segments appended while playing 6 s: \(played)")
        #expect(played["ended"] as? Bool == false && played["paused"] as? Bool == false && played["error"] is NSNull,
                "still playing after 6 s: \(played)")
        let advanced = (PlayerPageLive.number(played, "currentTimeAfter") ?? 0) - (PlayerPageLive.number(played, "currentTimeBefore") ?? 0)
        #expect(advanced > 5, "currentTime moved \(advanced) s in 6 s: \(played)")

        // Sound: most of 6 s not silent, at the tone's level and roughly its frequency (a loaded
        // machine's PulseAudio may leave gaps in the recording itself: counted, printed).
        let nonSilent = PlayerPageLive.number(heard, "nonSilent") ?? 0
        let loud = PlayerPageLive.number(heard, "loudRMSDBFS") ?? -200
        let frequency = PlayerPageLive.number(heard, "frequency") ?? 0
        #expect(nonSilent > 48000 * 4, "non-silent frames heard: \(heard)")
        #expect(abs(loud - PulseTone.rms) < 3 && abs(frequency - PulseTone.frequencies[0]) < 20, "the tone heard: \(heard)")

        let value = PlayerPageLive.number(latency, "value")
        let text = latency["text"] as? String ?? ""
        #expect(value.map { $0 > 0 && $0 < 30 } == true, "keyframePlayer.latency: \(latency)")
        #expect(text.hasSuffix(" s behind live") && latency["shown"] as? Bool == true && latency["live"] as? String == "polite",
                "the #latency line: \(latency)")
        #expect(page["status"] as? String == "Live.", "\(page)")
        let png = try Data(contentsOf: URL(fileURLWithPath: screenshot))
        #expect(png.count > 1000 && png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "the screenshot is \(png.count) bytes")

        let samples = (latency["samples"] as? [[String: Any]] ?? []).compactMap { PlayerPageLive.number($0, "latency") }
        let distinct = samples.reduce(into: [Double]()) { if $0.last != $1 { $0.append($1) } }
        print("Player page, live (segments 1 s, parts 0.5 s): ready after \(PlayerPageLive.number(report, "readyAfter") ?? -1) s with \(before) segments, "
              + "\(during) appended while playing 6 s; heard \(Int(nonSilent)) non-silent frames of \(Int(PlayerPageLive.number(heard, "captured") ?? 0)), "
              + String(format: "%.1f dBFS, %.0f Hz, ", loud, frequency) + "\(Int(PlayerPageLive.number(heard, "silentRunCount") ?? 0)) silent runs ≥ 1 ms; "
              + "latency \(distinct.map { String(format: "%.2f", $0) }.joined(separator: " → ")) s (\"\(text)\")")

        try #require(recording.send(SIGINT))
        let finished = try recording.wait(timeout: .seconds(60))
        #expect(finished.result.status == 0, "\(finished.result.standardError)")

        // Each gap heard is one the recording has (within 60 ms: the page's clock against
        // FFmpeg's decode, which keeps the encoder's priming): the page itself never stalled.
        let decoded = try CaptureCheck.ffmpegSamples(hls + "/index.m3u8", in: pulse.directory)
        var recorded: [Double] = []
        var run = 0
        for frame in 0...(decoded.count / 2) {
            if frame < decoded.count / 2, decoded[2 * frame] == 0 { run += 1; continue }
            if run >= 48 { recorded.append(Double(frame - run) / 48000) }
            run = 0
        }
        let start = PlayerPageLive.number(played, "currentTimeBefore") ?? 0
        // A run at the capture's very start or end is the worklet listening before the first
        // sound reached it or after the last (a loaded machine starts and stops late), not a gap.
        let captured = PlayerPageLive.number(heard, "captured") ?? 0
        let heardGaps = (heard["silentRuns"] as? [[Any]] ?? []).compactMap { run -> Double? in
            guard let at = (run.first as? NSNumber)?.doubleValue, let frames = (run.last as? NSNumber)?.doubleValue,
                  at > 0, at + frames < captured else { return nil }
            return start + at / 48000
        }
        let unexplained = heardGaps.filter { gap in !recorded.contains { abs($0 - gap) < 0.06 } }
        let listed = { (times: [Double]) in times.map { String(format: "%.3f", $0) }.joined(separator: ", ") }
        #expect(unexplained.isEmpty, "gaps heard at \(listed(unexplained)) s that the recording does not have (it has \(listed(recorded)))")
    }
}
