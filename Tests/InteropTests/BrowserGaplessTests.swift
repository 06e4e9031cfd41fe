import Foundation
import Testing
import TestSupport

/// Issue 23, item 1: what headless Chromium plays of a package, measured frame by frame by
/// `scripts/browser-gapless.py` (Chromium over the DevTools protocol, the page
/// `scripts/browser/gapless.html`, an AudioWorklet behind `createMediaElementSource` that keeps
/// every frame played). The probe is a chirp with seeded noise (one lag lines it up), mono,
/// 48 kHz, 2.49 s: short, since playback is real time. `chromium` and the venv's
/// websocket-client come from `make deps`; a missing one is a failure, not a skip.
///
/// Chromium keeps times in microseconds (`base::TimeDelta`), so a sample duration that is not a
/// whole number of microseconds is rounded down: what it trims by a duration can be a frame
/// short. The numbers each path gives are pinned, so that a change in Chromium is noticed (and
/// the DocC article Players.md's "Chromium" section updated).
extension RealTimeTests {
@Suite(.serialized) struct BrowserGaplessTests {
    static let rate = 48000
    static let priming = 1024

    /// What the driver measured, by path.
    static func measure(_ package: String, source: String, paths: [String]) throws -> [String: Any] {
        let script = MP4Check.repositoryRoot.appendingPathComponent("scripts/browser-gapless.py").path
        let run = try ExternalTool.succeed(try MP4Check.venvPython, [script, package, source, "--paths", paths.joined(separator: ",")])
        return try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any], "\(run.standardOutput)")
    }

    /// A package of a mono probe of `frames` frames (the encode path), its source WAV, and the
    /// frames FFmpeg decodes of it (the padding included: FFmpeg ignores the short last sample).
    static func package(frames: Int, in directory: URL, copying: Bool = false) throws -> (hls: String, wav: String) {
        let wav = directory.appendingPathComponent("probe\(frames).wav").path
        if !FileManager.default.fileExists(atPath: wav) { try GaplessTests.makeSignal(rate: rate, channels: 1, frames: frames, to: wav) }
        let hls = directory.appendingPathComponent((copying ? "copy" : "hls") + "\(frames)").path
        var input = wav
        if copying {
            input = directory.appendingPathComponent("probe\(frames).m4a").path
            try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", input])
        }
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", input, "--hls", hls, "--segment-duration", "1"])
        return (hls, wav)
    }

    static func number(_ object: [String: Any], _ path: String...) -> Double? {
        var value: Any? = object
        for key in path { value = (value as? [String: Any])?[key] }
        return (value as? NSNumber)?.doubleValue
    }

    /// The buffered ranges of a `buffered` measurement.
    static func ranges(_ object: [String: Any], _ key: String) -> [[Double]] {
        ((object[key] as? [String: Any])?["ranges"] as? [[NSNumber]] ?? []).map { $0.map(\.doubleValue) }
    }

    /// (a) decodeAudioData of the init and the segments, (c) MSE's buffered range without an
    /// append window: the valid length, to Chromium's microsecond.
    @Test(.hangGuard(minutes: 15))
    func decodeAudioDataAndTheBufferedRangeEndAtTheValidLength() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // 119 552 frames: the last sample lasts 768 (16 000 µs exactly). 119 520: 736 (15 333.3
        // µs, which Chromium's AudioFileReader::OnNewFrame rounds down to 15 333, a frame short).
        for (frames, copying, decoded) in [(119_552, false, 119_552), (119_552, true, 119_552), (119_520, false, 119_519)] {
            let (hls, wav) = try Self.package(frames: frames, in: directory, copying: copying)
            let what = "\(copying ? "package in.m4a" : "package in.wav"), \(frames) frames"
            let measured = try Self.measure(hls, source: wav, paths: ["decode", "buffered"])
            #expect(Self.number(measured, "decode", "frames") == Double(decoded), "\(what): decodeAudioData \(measured["decode"] ?? "")")
            let ranges = Self.ranges(measured, "buffered")
            let end = Double(frames) / Double(Self.rate)
            #expect(ranges.count == 1 && ranges.first?.first == 0 && abs((ranges.first?.last ?? 0) - end) <= 1.0001e-6,
                    "\(what): MSE buffered \(ranges), expected [0, \(end)] to the microsecond")
            #expect(abs((Self.number(measured, "buffered", "duration") ?? 0) - end) <= 1.0001e-6, "\(what): \(measured["buffered"] ?? "")")
        }
    }

    /// (b) MSE as a gapless player uses it: appendWindowEnd at the valid length, the last
    /// segment's last sample given its whole frame back (Chromium trims a frame by how far its
    /// own duration crosses the window): exactly the source, from its first frame. The same
    /// window on the segments as packaged: the padding is heard, since the short last sample
    /// no longer crosses it. (d) Native HLS: the priming and the padding are heard (sequence
    /// mode: the DocC article Players.md).
    @Test(.hangGuard(minutes: 15))
    func whatEachPlaybackPathPlays() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let frames = 119_552
        let padding = 256
        let (hls, wav) = try Self.package(frames: frames, in: directory)
        // The padding decodes to sound (not digital silence), so that hearing it shows.
        let ffmpeg = try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-i", hls + "/index.m3u8", "-f", "f32le", "-"]).outputData
        let decoded = ffmpeg.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        try #require(decoded.count == frames + padding && decoded.suffix(padding).allSatisfy { $0 != 0 },
                     "FFmpeg decodes \(decoded.count) frames, the padding audible: the probe measures what is heard")
        let measured = try Self.measure(hls, source: wav, paths: ["mse-player", "mse-window", "native"])
        func expectHeard(_ key: String, before: Int, after: Int, sourceLocation: SourceLocation = #_sourceLocation) {
            let result = measured[key] as? [String: Any] ?? [:]
            let span = Self.number(result, "span").map(Int.init)
            let heardBefore = Self.number(result, "heardBefore").map(Int.init)
            let heardAfter = Self.number(result, "heardAfter").map(Int.init)
            #expect(span == before + frames + after && heardBefore == before && heardAfter == after,
                    "\(key): heard \(span ?? -1) frames, \(heardBefore ?? -1) before the source and \(heardAfter ?? -1) after; expected \(before) and \(after): \(result)",
                    sourceLocation: sourceLocation)
            // Lined up (one lag) and continuous: no 1024-frame block is far off the source.
            #expect((Self.number(result, "correlation") ?? 0) > 0.8 && (Self.number(result, "leastBlockSNR") ?? 0) > 3,
                    "\(key): correlation \(Self.number(result, "correlation") ?? 0), least block SNR \(Self.number(result, "leastBlockSNR") ?? 0) dB",
                    sourceLocation: sourceLocation)
        }
        expectHeard("msePlayer", before: 0, after: 0)
        expectHeard("mseWindow", before: 0, after: padding)
        expectHeard("native", before: Self.priming, after: padding)
    }
}
}

typealias BrowserGaplessTests = RealTimeTests.BrowserGaplessTests
