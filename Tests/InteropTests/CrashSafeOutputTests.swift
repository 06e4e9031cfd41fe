import Foundation
import Testing
import TestSupport

/// Issue 36: a crash-safe output written over an existing file writes beside it
/// (`NAME.partial.EXT`) and replaces it only when finished; a fragmented file rewritten as a
/// fast-start one at its end (`mux --defragment`) ends as the fast-start one, with no partial left.
@Suite(.blocking) struct CrashSafeOutputTests {
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

    /// A write that fails part-way (here `EFBIG` from a 200 KiB `RLIMIT_FSIZE`, the same path as
    /// `ENOSPC` or `EIO`: the write(2) fails and the sink gives up) leaves an existing output as
    /// it was. An atomic output leaves nothing else; a crash-safe one keeps what it wrote beside
    /// the old output, names it in the error, and FFmpeg plays it.
    @Test func aWriteThatFailsPartWayLeavesTheOldOutputAsItWas() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=30", "-ar", "44100", "-ac", "2", wav])
        let output = directory.appendingPathComponent("out.m4a").path
        let old = Data("an older output".utf8)
        let keyframe = try ExternalTool.keyframe
        for fragmented in [false, true] {
            try old.write(to: URL(fileURLWithPath: output))
            // SIGXFSZ ignored (as it stays across exec), so the write fails with EFBIG instead.
            let result = try ExternalTool.run("/bin/sh", ["-c", "trap '' XFSZ; ulimit -f 200; exec \"$0\" \"$@\"",
                                                          keyframe, "encode", wav, "-o", output] + (fragmented ? ["--fragmented"] : []))
            #expect(result.status != 0)
            #expect(result.standardError.contains("File too large"), "\(result.standardError)")
            #expect(FileManager.default.contents(atPath: output) == old, "the old output is as it was")
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            if fragmented {
                #expect(names == ["in.wav", "out.m4a", "out.partial.m4a"])
                let partial = directory.appendingPathComponent("out.partial.m4a").path
                #expect(result.standardError.contains("out.m4a is kept as it was; what was written stays playable in) \(partial)"),
                        "\(result.standardError)")
                let probe = try ExternalTool.succeed(try ExternalTool.path(of: "ffmpeg"),
                                                     ["-v", "error", "-i", partial, "-f", "null", "-"])
                #expect(probe.standardError.isEmpty, "FFmpeg plays the partial without a word: \(probe.standardError)")
                try FileManager.default.removeItem(atPath: partial)
            } else {
                #expect(names == ["in.wav", "out.m4a"], "the temporary file is removed")
            }
        }
    }
}
