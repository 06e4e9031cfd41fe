import Foundation
import Testing
import TestSupport

/// Issue 23, item 2: the player page `keyframe serve` answers `/` with plays a package
/// gaplessly in headless Chromium, and a screenshot shows it. `scripts/browser-page.py` opens the
/// origin's own page (not a harness page), waits for `window.keyframePlayer.state` to leave
/// "loading", puts the capture worklet behind the page's `<audio id="player">`, plays it to its
/// end and compares what was heard with the source (BrowserGaplessTests' probe: a mono 48 kHz
/// chirp with seeded noise, so that one lag lines it up). `chromium` and the venv's
/// websocket-client come from `make deps`; a missing one is a failure, not a skip.
@Suite(.serialized) struct PlayerPageTests {
    /// 2.49 s: the last sample lasts 768 of its 1024 frames, so the padding is there to be heard.
    static let frames = 119_552

    /// The probe's WAV and a package of it (`extra`: more `package` options, e.g. a ladder).
    static func package(_ name: String, in directory: URL, _ extra: [String] = []) throws -> (hls: String, wav: String) {
        let wav = directory.appendingPathComponent("probe.wav").path
        if !FileManager.default.fileExists(atPath: wav) {
            try GaplessTests.makeSignal(rate: BrowserGaplessTests.rate, channels: 1, frames: frames, to: wav)
        }
        let hls = directory.appendingPathComponent(name).path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", wav, "--hls", hls, "--segment-duration", "1"] + extra)
        return (hls, wav)
    }

    /// `keyframe serve PACKAGE` on a loopback port, the page measured by the driver.
    static func playPage(of package: String, source: String, screenshot: String) throws -> [String: Any] {
        let port = try HTTPProbe.freePort()
        let server = try RunningProcess(try ExternalTool.keyframe, ["serve", package, "--address", "127.0.0.1:\(port)"])
        defer { server.stop() }
        try CDNCacheTests.waitUntilServed("http://127.0.0.1:\(port)/")
        let script = MP4Check.repositoryRoot.appendingPathComponent("scripts/browser-page.py").path
        let run = try ExternalTool.succeed(try MP4Check.venvPython, [script, "http://127.0.0.1:\(port)/", source, "--screenshot", screenshot])
        return try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any], "\(run.standardOutput)")
    }

    static func object(_ report: [String: Any], _ key: String) -> [String: Any] { report[key] as? [String: Any] ?? [:] }

    /// Ready, and exactly the source heard: its first frame first, not one frame after its last,
    /// lined up (one lag) and continuous (no 1024-frame block far off the source).
    static func expectExact(_ report: [String: Any], _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let player = object(report, "player")
        let heard = object(report, "heard")
        #expect(player["state"] as? String == "ready", "\(what): the page is \(player)", sourceLocation: sourceLocation)
        let span = BrowserGaplessTests.number(heard, "span").map(Int.init)
        let before = BrowserGaplessTests.number(heard, "heardBefore").map(Int.init)
        let after = BrowserGaplessTests.number(heard, "heardAfter").map(Int.init)
        #expect(span == frames && before == 0 && after == 0,
                "\(what): heard \(span ?? -1) frames, \(before ?? -1) before the source's first and \(after ?? -1) after its last; expected \(frames), 0 and 0: \(heard), page \(player)",
                sourceLocation: sourceLocation)
        #expect((BrowserGaplessTests.number(heard, "correlation") ?? 0) > 0.8 && (BrowserGaplessTests.number(heard, "leastBlockSNR") ?? 0) > 3,
                "\(what): correlation \(BrowserGaplessTests.number(heard, "correlation") ?? 0), least block SNR \(BrowserGaplessTests.number(heard, "leastBlockSNR") ?? 0) dB",
                sourceLocation: sourceLocation)
    }

    @Test(.timeLimit(.minutes(3)))
    func thePagePlaysAPackageGaplesslyAndShowsItself() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (hls, wav) = try Self.package("hls", in: directory)
        let screenshot = directory.appendingPathComponent("page.png").path
        let report = try Self.playPage(of: hls, source: wav, screenshot: screenshot)
        Self.expectExact(report, "index.m3u8")
        // The window ends at the valid length, not at the EXTINF sum (which holds the priming).
        let validLength = BrowserGaplessTests.number(Self.object(report, "player"), "validLength") ?? 0
        #expect(abs(validLength - Double(Self.frames) / Double(BrowserGaplessTests.rate)) < 1e-9, "\(report["player"] ?? "")")

        let page = Self.object(report, "page")
        #expect(page["controls"] as? Bool == true && page["autoplayAttribute"] as? Bool == false, "\(page)")
        #expect(page["accessibleName"] as? String == "Stream", "the audio element's accessible name: \(page)")
        #expect(page["status"] as? String == "Ready: 0:02." && page["statusRole"] as? String == "status"
                && page["statusLive"] as? String == "polite" && page["latencyLive"] as? String == "polite", "\(page)")

        let png = try Data(contentsOf: URL(fileURLWithPath: screenshot))
        #expect(png.count > 1000 && png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
                "the screenshot is \(png.count) bytes: \(png.prefix(8).map { String(format: "%02x", $0) }.joined())")
        #expect(BrowserGaplessTests.number(Self.object(report, "screenshot"), "bytes") == Double(png.count), "\(report["screenshot"] ?? "")")
    }

    /// A ladder: the page is given master.m3u8, takes the highest rendition and plays it exactly.
    @Test(.timeLimit(.minutes(3)))
    func thePagePlaysALadderFromItsMasterPlaylist() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (hls, wav) = try Self.package("ladder", in: directory, ["--bitrates", "64k,96k"])
        try #require(FileManager.default.fileExists(atPath: hls + "/master.m3u8"))
        let report = try Self.playPage(of: hls, source: wav, screenshot: directory.appendingPathComponent("page.png").path)
        #expect(Self.object(report, "page")["playlist"] as? String == "master.m3u8", "\(report["page"] ?? "")")
        #expect((Self.object(report, "player")["playlist"] as? String)?.hasSuffix("/96k/index.m3u8") == true, "\(report["player"] ?? "")")
        Self.expectExact(report, "master.m3u8")
    }
}
