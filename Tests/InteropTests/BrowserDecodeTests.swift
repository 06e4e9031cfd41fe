import Foundation
import Testing
import TestSupport

/// Issue 38: what headless Chromium's `decodeAudioData` gives for each codec we write, from a
/// 10-s stereo 44.1 kHz source (`scripts/browser-decode.py`: an OfflineAudioContext at the
/// codec's rate, the decode against the source's samples). FLAC, native and in MP4, is the
/// source to the sample; MP3 (its LAME tag read) and Ogg Opus are the source's length and line up
/// with it at lag 0. Pinned, so that a change in Chromium is noticed (KnownLimits.md): Opus in
/// MP4 loses its first pre-skip's worth (Chromium drops the pre-skip after the edit list has,
/// FFmpeg's own Opus MP4 alike), and ALAC is not decoded at all.
extension RealTimeTests {
@Suite(.serialized) struct BrowserDecodeTests {
    /// Chromium's decode of `file` against `reference` (s16 at `rate`, stereo).
    static func decode(_ file: String, reference: String, rate: Int) throws -> [String: Any] {
        let script = MP4Check.repositoryRoot.appendingPathComponent("scripts/browser-decode.py").path
        let run = try ExternalTool.succeed(try MP4Check.venvPython, [script, file, reference, "--rate", "\(rate)", "--channels", "2"])
        return try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any], "\(run.standardOutput)")
    }

    /// The SNR (dB) of `report` at `lag`.
    static func snr(_ report: [String: Any], _ lag: Int) -> Double {
        ((report["snr"] as? [String: Any])?["\(lag)"] as? NSNumber)?.doubleValue ?? -.infinity
    }

    @Test(.hangGuard(minutes: 15))
    func decodeAudioDataOfEachCodec() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try CodecInteropTests.makeWAV(rate: 44100, channels: 2, seconds: 10, to: wav)
        let reference44 = directory.appendingPathComponent("ref44.raw").path
        let reference48 = directory.appendingPathComponent("ref48.raw").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", wav, "-f", "s16le", reference44])
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", wav, "-af", "aresample=48000:resampler=soxr:precision=28",
                                            "-f", "s16le", reference48])
        func made(_ name: String, _ extra: [String] = []) throws -> String {
            let path = directory.appendingPathComponent(name).path
            try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", wav, "-o", path] + extra)
            return path
        }
        for file in [try made("native.flac"), try made("flac.m4a", ["--codec", "flac"])] {
            let report = try Self.decode(file, reference: reference44, rate: 44100)
            #expect(report["frames"] as? Int == 441_000 && report["exact"] as? Bool == true, "\(file): \(report)")
        }
        for (file, reference, rate, frames) in [(try made("native.mp3"), reference44, 44100, 441_000),
                                                (try made("native.opus"), reference48, 48000, 480_000)] {
            let report = try Self.decode(file, reference: reference, rate: rate)
            #expect(report["frames"] as? Int == frames, "\(file): \(report)")
            #expect([-2, -1, 1, 2].allSatisfy { Self.snr(report, 0) > Self.snr(report, $0) }, "\(file): lag 0 fits best: \(report)")
        }
        let opus = try Self.decode(try made("opus.m4a", ["--codec", "opus"]), reference: reference48, rate: 48000)
        #expect(opus["frames"] as? Int == 480_000 - 312, "Chromium drops an MP4 Opus track's pre-skip twice: \(opus)")
        let alac = try Self.decode(try made("alac.m4a", ["--codec", "alac"]), reference: reference44, rate: 44100)
        #expect((alac["error"] as? String)?.contains("Unable to decode") == true, "Chromium decodes no ALAC: \(alac)")
    }
}
}
