import Foundation
import Testing
import TestSupport

/// Issue 11, item 4: `probe --loudness` agrees with FFmpeg's `ebur128` filter (libavfilter's own
/// EBU R 128 implementation) within 0.2 LU, and `convert --normalize` reaches its target with the
/// true peak held at or below −1 dBTP.
@Suite(.blocking) struct LoudnessTests {
    /// FFmpeg's summary: integrated (LUFS), range (LU), true peak (dBFS, 4× oversampled).
    static func ffmpegLoudness(_ path: String) throws -> (integrated: Double, range: Double, truePeak: Double) {
        let run = try ExternalTool.run("ffmpeg", ["-nostdin", "-hide_banner", "-i", path, "-af", "ebur128=peak=true", "-f", "null", "-"])
        let summary = run.standardError.components(separatedBy: "Summary:").last ?? ""
        func value(_ label: String) -> Double? {
            summary.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(label) }
                .flatMap { $0.split(separator: " ").compactMap { Double($0) }.first }
        }
        let integrated = try #require(value("I:"), "no integrated loudness in ffmpeg's output: \(run.standardError.suffix(800))")
        return (integrated, try #require(value("LRA:")), try #require(value("Peak:")))
    }

    static func ours(_ path: String) throws -> (integrated: Double, range: Double, truePeak: Double) {
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["probe", "--loudness", "--json", path])
        let object = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
        let loudness = try #require(object?["loudness"] as? [String: Double], "no loudness in \(run.standardOutput)")
        return (try #require(loudness["integrated"]), try #require(loudness["range"]), try #require(loudness["truePeak"]))
    }

    @Test func probeAgreesWithFFmpegsEBUR128Filter() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A programme with a loudness range: a quiet then a loud passage, in stereo; a mono
        // file; and an AAC file (read by our own MP4 reader and decoder).
        let music = directory.appendingPathComponent("music.flac").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "aevalsrc='(0.05+0.4*gte(t,10))*sin(2*PI*440*t)+0.02*(2*random(0)-1)|(0.05+0.3*gte(t,10))*sin(2*PI*550*t)':s=48000:d=20",
                             "-c:a", "flac", music])
        let mono = directory.appendingPathComponent("mono.mp3").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "aevalsrc='0.3*sin(2*PI*1000*t)*sin(2*PI*0.5*t)':s=44100:d=12", "-c:a", "libmp3lame", mono])
        let aac = directory.appendingPathComponent("speech.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", music, "-o", aac])
        for path in [music, mono, aac] {
            let a = try Self.ours(path), b = try Self.ffmpegLoudness(path)
            let name = URL(fileURLWithPath: path).lastPathComponent
            #expect(abs(a.integrated - b.integrated) <= 0.2, "\(name): integrated \(a.integrated) LUFS, ffmpeg \(b.integrated)")
            #expect(abs(a.range - b.range) <= 0.2, "\(name): range \(a.range) LU, ffmpeg \(b.range)")
            #expect(abs(a.truePeak - b.truePeak) <= 0.2, "\(name): true peak \(a.truePeak) dBTP, ffmpeg \(b.truePeak)")
        }
    }

    /// Silence measures −∞ LUFS: JSON `null`, not a failure; `--replaygain` writes no gain then.
    @Test func silenceIsMeasuredAsNothingAndGetsNoReplayGain() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let silence = directory.appendingPathComponent("silence.flac").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "anullsrc=r=44100:cl=stereo", "-t", "2", "-c:a", "flac", silence])
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["probe", "--loudness", "--json", silence])
        let object = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
        let loudness = try #require(object?["loudness"] as? [String: Any], "\(run.standardOutput)")
        #expect(loudness["integrated"] is NSNull, "\(loudness)")
        let m4a = directory.appendingPathComponent("silence.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", silence, "-o", m4a, "--replaygain"])
        let tags = try ConvertTagsTests.mutagenTags(m4a)
        #expect(tags["----:com.apple.iTunes:replaygain_track_gain"] == nil)
        // ReplayGain needs an MP4 to carry it: refused for WAV before any work.
        let wav = directory.appendingPathComponent("silence.wav").path
        let refused = try ExternalTool.run(try ExternalTool.keyframe, ["convert", silence, "-o", wav, "--replaygain"])
        #expect(refused.status != 0 && refused.standardError.contains("ReplayGain"))
        #expect(!FileManager.default.fileExists(atPath: wav))
    }

    @Test func normalizeReachesTheTargetAndHoldsTheTruePeak() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let quiet = directory.appendingPathComponent("quiet.flac").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "aevalsrc='0.05*sin(2*PI*440*t)+0.01*(2*random(0)-1)|0.04*sin(2*PI*660*t)':s=48000:d=15",
                             "-c:a", "flac", quiet])
        // Room to reach the target: WAV output lands on it, AAC within coding error.
        for (output, tolerance) in [("quiet-16.wav", 0.1), ("quiet-16.m4a", 0.3)] {
            let path = directory.appendingPathComponent(output).path
            let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", quiet, "-o", path, "--normalize", "-16", "--format", "f32le"])
            #expect(run.standardOutput.contains("normalised:"), "\(run.standardOutput)")
            let measured = try Self.ffmpegLoudness(path)
            #expect(abs(measured.integrated - -16) <= tolerance, "\(output): ffmpeg measures \(measured.integrated) LUFS")
        }
        // A loud sine (-0.9 dBTP, -4.6 LUFS): reaching -3 LUFS would push the peak past -1 dBTP;
        // the limiter holds it there, and a sine held at its peak cannot get louder.
        let loud = directory.appendingPathComponent("loud.flac").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "aevalsrc='0.9*sin(2*PI*997*t)':s=44100:d=8", "-c:a", "flac", loud])
        let limited = directory.appendingPathComponent("limited.wav").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", loud, "-o", limited, "--normalize", "-3", "--format", "f32le"])
        let measured = try Self.ffmpegLoudness(limited)
        #expect(measured.truePeak <= -0.95 && measured.truePeak >= -1.2, "true peak \(measured.truePeak) dBTP, want -1")
        #expect(measured.integrated < -3.5, "integrated \(measured.integrated): the gain was not limited")
    }
}
