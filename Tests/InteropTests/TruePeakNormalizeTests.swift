import Foundation
import Testing
import TestSupport

/// Issue 35, item 4: `convert --normalize -16` reaches the target within ±0.5 LU on speech whose
/// true peak already sits at the −1 dBTP ceiling, the look-ahead limiter holding the peak there,
/// as FFmpeg's `ebur128=peak=true` measures the decoded output; `--no-limiter` refuses a target
/// the peak leaves short, in words, instead of stopping short in silence.
@Suite(.blocking) struct TruePeakNormalizeTests {
    /// Speech peaking at −1 dBTP: espeak-ng's voice (about −20 LUFS, ~19 dB of crest) and recorded
    /// words of ktuberling-data (~17 dB), each scaled so that FFmpeg measures its true peak at −1.
    static func speech(in directory: URL) throws -> [String] {
        var programmes: [String] = []
        let spoken = directory.appendingPathComponent("spoken.wav").path
        try ExternalTool.succeed(try ExternalTool.path(of: "espeak-ng"), [
            "-w", spoken, "The quick brown fox jumps over the lazy dog. Loudness normalisation must reach its target, "
                + "and the true peak limiter holds the ceiling. Speech has a high crest factor, so its peaks come first."])
        programmes.append(spoken)
        let words = try FileManager.default.contentsOfDirectory(atPath: "/usr/share/ktuberling/sounds/en")
            .filter { $0.hasSuffix(".ogg") }.sorted().prefix(16).map { "/usr/share/ktuberling/sounds/en/" + $0 }
        try #require(words.count == 16, "ktuberling-data's words are missing (make test installs them)")
        let recorded = directory.appendingPathComponent("recorded.flac").path
        try MP4Check.ffmpeg(words.flatMap { ["-i", $0] } + [
            "-filter_complex", (0..<words.count).map { "[\($0):a]" }.joined() + "concat=n=\(words.count):v=0:a=1,aresample=44100",
            "-ac", "2", "-c:a", "flac", recorded])
        programmes.append(recorded)
        return try programmes.enumerated().map { index, path in
            let measured = try LoudnessTests.ffmpegLoudness(path)
            let scaled = directory.appendingPathComponent("speech-\(index).flac").path
            try MP4Check.ffmpeg(["-i", path, "-af", "volume=\(-1 - measured.truePeak)dB", "-c:a", "flac", scaled])
            return scaled
        }
    }

    @Test func normalizeReachesTheTargetWithTheTruePeakAtTheCeiling() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for input in try Self.speech(in: directory) {
            let before = try LoudnessTests.ffmpegLoudness(input)
            let name = URL(fileURLWithPath: input).lastPathComponent
            // The premise: at the ceiling already, and more than 2 LU under the target.
            #expect(abs(before.truePeak - -1) <= 0.15 && before.integrated < -18, "\(name): \(before)")
            for output in ["normalized.m4a", "normalized.wav"] {
                let path = directory.appendingPathComponent(output).path
                let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", input, "-o", path, "--normalize", "-16"])
                #expect(run.standardOutput.contains("limited by up to"), "\(run.standardOutput)")
                #expect(!run.standardError.contains("warning"), "\(run.standardError)")
                let after = try LoudnessTests.ffmpegLoudness(path)
                #expect(abs(after.integrated - -16) <= 0.5, "\(name) → \(output): \(after.integrated) LUFS (was \(before.integrated))")
                #expect(after.truePeak <= -1, "\(name) → \(output): true peak \(after.truePeak) dBTP")
            }
        }
    }

    @Test func jsonReportsTheGainAndTheLimiter() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try Self.speech(in: directory)[0]
        let path = directory.appendingPathComponent("normalized.m4a").path
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", input, "-o", path, "--normalize", "-16",
                                                                       "--true-peak", "-2", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
        let normalization = try #require(object?["normalization"] as? [String: Any], "\(run.standardOutput)")
        let gain = try #require(normalization["gain"] as? Double)
        let limiter = try #require(normalization["limiter"] as? [String: Any])
        let reduction = try #require(limiter["maxGainReduction"] as? Double)
        let reached = try #require(normalization["reached"] as? [String: Double])
        #expect(gain > 3 && reduction > 1, "\(normalization)")
        let limitedSeconds = try #require(limiter["limitedSeconds"] as? Double)
        #expect(limitedSeconds > 0)
        let integrated = try #require(reached["integrated"]), truePeak = try #require(reached["truePeak"])
        // `reached` is the output decoded, as FFmpeg measures it below.
        #expect(abs(integrated - -16) <= 0.5 && truePeak <= -2, "\(reached)")
        #expect(normalization["encodes"] as? Int ?? 0 >= 1, "\(normalization)")
        let after = try LoudnessTests.ffmpegLoudness(path)
        #expect(abs(after.integrated - -16) <= 0.5 && after.truePeak <= -2, "\(after)")
    }

    @Test func withoutTheLimiterATargetThePeakForbidsIsAnError() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try Self.speech(in: directory)[0]
        let path = directory.appendingPathComponent("refused.m4a").path
        let run = try ExternalTool.run(try ExternalTool.keyframe, ["convert", input, "-o", path, "--normalize", "-16", "--no-limiter"])
        #expect(run.status == 1, "exit \(run.status): \(run.standardError)")
        for words in ["-16.0 LUFS", "-1.0 dBTP", "--no-limiter", "--true-peak", "LUFS with its true peak"] {
            #expect(run.standardError.contains(words), "\(words) missing from: \(run.standardError)")
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        // A target the peak allows needs no limiter.
        let quiet = directory.appendingPathComponent("quiet.wav").path
        let allowed = try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", input, "-o", quiet, "--normalize", "-23", "--no-limiter"])
        #expect(allowed.standardOutput.contains("normalised:"))
        #expect(abs(try LoudnessTests.ffmpegLoudness(quiet).integrated - -23) <= 0.2)
        // The options go with --normalize.
        #expect(try ExternalTool.run(try ExternalTool.keyframe, ["convert", input, "-o", quiet, "--no-limiter"]).status == 64)
    }

    /// At low bitrates and with SBR the codec adds peaks of its own (up to 3 dB over the
    /// limiter's aim on this speech) and moves the loudness: the output is measured decoded and
    /// encoded again, fitted to what the decode measured, until both hold; so FFmpeg's decode
    /// measures the target and the ceiling for HE-AAC, HE-AAC v2 and AAC-LC at 48 kb/s, and the
    /// summary says how many encodes it took. A plain gain (`--no-limiter`) is lowered the same way.
    @Test(arguments: [["--profile", "he-aac", "--bitrate", "32k"], ["--profile", "he-aac-v2", "--bitrate", "32k"],
                      ["--bitrate", "48k"], ["--profile", "he-aac", "--bitrate", "32k", "--no-limiter", "--normalize", "-18.5"]])
    func aLowBitrateOutputHoldsTheCeilingDecoded(_ settings: [String]) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("speech.wav").path
        try MP4Check.ffmpeg(["-i", try Self.speech(in: directory)[0], "-ar", "48000", "-ac", "2", input])
        let path = directory.appendingPathComponent("low.m4a").path
        let target = settings.contains("-18.5") ? -18.5 : -16
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", input, "-o", path, "--normalize", "-16", "--threads", "1"]
                                                                         + settings)
        #expect(run.standardOutput.contains("dBTP decoded"), "\(run.standardOutput)")
        #expect(!run.standardError.contains("warning"), "\(run.standardError)")
        let after = try LoudnessTests.ffmpegLoudness(path)
        // FFmpeg's true-peak meter and libebur128's differ by a few hundredths of a dB.
        #expect(after.truePeak <= -0.95, "\(settings): true peak \(after.truePeak) dBTP decoded by FFmpeg\n\(run.standardOutput)")
        #expect(abs(after.integrated - target) <= 0.5, "\(settings): \(after.integrated) LUFS\n\(run.standardOutput)")
    }
}
