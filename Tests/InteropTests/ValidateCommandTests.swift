import Foundation
import Testing
import TestSupport

/// `keyframe validate` (issue 21, its first part: the gapless signals of an M4A): silent on what
/// we write (converted, cut, joined), on FFmpeg's M4A; a warning where the priming is not
/// signalled; an error where the edit list and iTunSMPB disagree; exit 2 for what it cannot read.
@Suite struct ValidateCommandTests {
    static func validate(_ paths: [String], json: Bool = false) throws -> ExternalTool.Result {
        try ExternalTool.run(try ExternalTool.keyframe, ["validate"] + paths + (json ? ["--json"] : []))
    }

    @Test func whatWeAndFFmpegWriteValidatesAndDisagreementsAreNamed() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try CodecInteropTests.makeWAV(rate: 44100, channels: 2, seconds: 3, to: wav)
        let ours = directory.appendingPathComponent("ours.m4a").path
        let cut = directory.appendingPathComponent("cut.m4a").path
        let joined = directory.appendingPathComponent("joined.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", wav, "-o", ours])
        try ExternalTool.succeed(try ExternalTool.keyframe, ["cut", ours, "-o", cut, "--start", "0.5", "--end", "2.25"])
        try ExternalTool.succeed(try ExternalTool.keyframe, ["join", ours, cut, "-o", joined])
        let ffmpeg = directory.appendingPathComponent("ffmpeg.m4a").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-i", wav, "-c:a", "aac", ffmpeg])

        let clean = try Self.validate([ours, cut, joined, ffmpeg])
        #expect(clean.status == 0, "\(clean.standardOutput)\(clean.standardError)")
        #expect(clean.standardOutput == [ours, cut, joined, ffmpeg].map { "\($0): ok\n" }.joined(), "\(clean.standardOutput)")

        // No edit list and no iTunSMPB: a warning, not an error.
        let unsignalled = directory.appendingPathComponent("no-edit.m4a").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-i", wav, "-c:a", "aac", "-use_editlist", "0", unsignalled])
        let warned = try Self.validate([unsignalled])
        #expect(warned.status == 0, "\(warned.standardError)")
        #expect(warned.standardOutput.contains("warning: moov/trak[1]: encoder priming not signalled"), "\(warned.standardOutput)")

        // iTunSMPB that says another priming than the edit list: an error naming both.
        let disagreeing = directory.appendingPathComponent("disagree.m4a").path
        try FileManager.default.copyItem(atPath: ours, toPath: disagreeing)
        try ExternalTool.succeed("python3", ["-c", """
            import sys, mutagen.mp4 as m
            f = m.MP4(sys.argv[1])
            f["----:com.apple.iTunes:iTunSMPB"] = [m.MP4FreeForm(b" 00000000 00000840 00000000 0000000000020000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000")]
            f.save()
            """, disagreeing])
        let failed = try Self.validate([disagreeing], json: true)
        #expect(failed.status == 1, "\(failed.standardError)")
        let objects = failed.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String]
        }
        #expect(objects.contains { $0["severity"] == "error" && $0["rule"] == "elst against iTunSMPB: priming"
                                   && $0["expected"]?.contains("2112") == true && $0["found"] == "media_time 1024" }, "\(objects)")
        #expect(objects.contains { $0["rule"] == "elst against iTunSMPB: valid length" }, "\(objects)")

        // What it cannot read: exit 2, said.
        let unreadable = try Self.validate([wav])
        #expect(unreadable.status == 2 && unreadable.standardError.contains("not an MP4"), "\(unreadable.standardError)")
    }
}
