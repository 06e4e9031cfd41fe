import Foundation
import Testing
import TestSupport

/// Issue 36: a crash-safe output written over an existing file writes beside it
/// (`NAME.partial.EXT`) and replaces it only when finished; a fragmented file rewritten as a
/// fast-start one at its end (`mux --defragment`) ends as the fast-start one, with no partial left.
@Suite struct CrashSafeOutputTests {
    @Test func aFinishedCrashSafeOutputReplacesTheOldOneAndLeavesNothingBeside() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=3", "-ar", "48000", "-ac", "2", wav])
        let adts = directory.appendingPathComponent("in.aac").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", adts])
        let output = directory.appendingPathComponent("out.m4a").path
        try Data("an older output".utf8).write(to: URL(fileURLWithPath: output))
        try ExternalTool.succeed(try ExternalTool.keyframe, ["mux", adts, "-o", output, "--fragmented", "--defragment"])
        let boxes = try ExternalTool.succeed(try ExternalTool.keyframe, ["probe", "--boxes", output]).standardOutput
        #expect(!boxes.contains("moof"), "defragmented: \(boxes.prefix(600))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["in.aac", "in.wav", "out.m4a"])
        // Fragmented, over the fast-start file: written beside, renamed over it at the end.
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", output, "--fragmented"])
        let fragmented = try ExternalTool.succeed(try ExternalTool.keyframe, ["probe", "--boxes", output]).standardOutput
        #expect(fragmented.contains("moof"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["in.aac", "in.wav", "out.m4a"])
    }
}
