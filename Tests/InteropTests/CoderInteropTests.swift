import Foundation
import Testing
import TestSupport

/// `--coder`: both of libavcodec's scale-factor searches give the bytes `ffmpeg -aac_coder` gives,
/// so `record`'s default (fast, for its CPU) is as interoperable as `encode`'s (twoloop).
@Suite(.blocking) struct CoderInteropTests {
    @Test(arguments: ["twoloop", "fast"])
    func encodeMatchesFFmpegByteForByte(coder: String) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        let ours = directory.appendingPathComponent("ours.aac").path
        let theirs = directory.appendingPathComponent("theirs.aac").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "anoisesrc=d=3:a=0.2:r=48000:seed=3",
                                            "-f", "lavfi", "-i", "sine=f=440:d=3:sample_rate=48000",
                                            "-filter_complex", "[0][1]amerge=inputs=2", "-c:a", "pcm_s16le", wav])
        try ExternalTool.succeed(ExternalTool.keyframe, ["encode", wav, "-o", ours, "--bitrate", "128k", "--coder", coder])
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-i", wav, "-c:a", "aac", "-b:a", "128k",
                                            "-aac_coder", coder, "-f", "adts", theirs])
        let a = try Data(contentsOf: URL(fileURLWithPath: ours)), b = try Data(contentsOf: URL(fileURLWithPath: theirs))
        #expect(a.count > 10_000)
        #expect(a == b, "\(coder): \(a.count) bytes from keyframe, \(b.count) from ffmpeg")
    }

    @Test func theTwoCodersDiffer() throws {
        // Guards the test above: if --coder were ignored, both runs would give the twoloop bytes.
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "anoisesrc=d=2:a=0.2:r=44100:seed=4",
                                            "-ac", "2", "-c:a", "pcm_s16le", wav])
        var outputs: [Data] = []
        for coder in ["twoloop", "fast"] {
            let out = directory.appendingPathComponent("\(coder).aac").path
            try ExternalTool.succeed(ExternalTool.keyframe, ["encode", wav, "-o", out, "--coder", coder])
            outputs.append(try Data(contentsOf: URL(fileURLWithPath: out)))
        }
        #expect(outputs[0] != outputs[1])
    }
}
