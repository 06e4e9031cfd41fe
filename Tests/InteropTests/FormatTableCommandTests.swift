import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// One format table for every command: what the bytes say wins over the name, so `probe`,
/// `decode`, `play`'s input side and `demux` agree on the same file.
@Suite(.blocking) struct FormatTableCommandTests {
    @Test func anM4ANamedAACProbesAndDecodesAsTheMP4ItIs() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let m4a = directory.appendingPathComponent("tone.m4a").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=f=440:d=1.5",
                                            "-c:a", "aac", "-b:a", "96k", m4a])
        let misnamed = directory.appendingPathComponent("tone.aac").path
        try FileManager.default.copyItem(atPath: m4a, toPath: misnamed)
        let keyframe = try ExternalTool.keyframe

        let probe = try ExternalTool.succeed(keyframe, ["probe", misnamed, "--json"])
        #expect(probe.standardOutput.contains("\"format\" : \"mp4\""), "\(probe.standardOutput)")

        let fromMisnamed = directory.appendingPathComponent("a.pcm").path
        let fromProper = directory.appendingPathComponent("b.pcm").path
        try ExternalTool.succeed(keyframe, ["decode", misnamed, "-o", fromMisnamed])
        try ExternalTool.succeed(keyframe, ["decode", m4a, "-o", fromProper])
        let a = try Data(contentsOf: URL(fileURLWithPath: fromMisnamed))
        let b = try Data(contentsOf: URL(fileURLWithPath: fromProper))
        // The edit list applied: exactly 1.5 s of 44.1 kHz mono s16.
        #expect(a.count == 66_150 * 2 && a == b)

        let adts = directory.appendingPathComponent("demuxed.adts").path
        try ExternalTool.succeed(keyframe, ["demux", misnamed, "-o", adts])
        #expect(FileManager.default.fileExists(atPath: adts))
    }

    @Test func aWAVNamedPCMEncodesAsTheWAVItIs() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("tone.pcm").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=f=440:d=1", "-ar", "48000",
                                            "-f", "wav", wav])
        let output = directory.appendingPathComponent("out.m4a").path
        // No --sample-rate/--channels: the WAV header says them.
        let result = try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", output])
        #expect(result.standardOutput.contains("48000 Hz, 1 ch"), "\(result.standardOutput)")
    }

    @Test func anUnknownOutputNameIsRefusedBeforeAnyWork() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("tone.wav").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=f=440:d=1", wav])
        let result = try ExternalTool.run(try ExternalTool.keyframe, ["encode", wav, "-o", directory.appendingPathComponent("x.wma").path])
        #expect(result.status != 0)
        #expect(result.standardError.contains("x.wma: unknown output type; use .aac, .m4a"), "\(result.standardError)")
    }
}

/// Ctrl-C during a file job: the pump stops at the next packet and removes the half-written
/// output, so nothing is left, not even the hidden temporary file.
@Suite(.blocking) struct InterruptedJobTests {
    @Test(arguments: ["out.m4a", "out.aac"])
    func sigintDuringAnEncodeLeavesNothing(output name: String) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("long.wav").path
        // 20 minutes of stereo: far longer than the half second before the signal.
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "anoisesrc=d=1200:a=0.1", "-ac", "2", wav])
        let output = directory.appendingPathComponent(name).path
        let process = try RunningProcess(try ExternalTool.keyframe, ["encode", wav, "-o", output])
        Subprocess.sleep(.milliseconds(700))
        #expect(process.send(SIGINT), "the encode ended before the signal")
        let finished = try process.wait(timeout: .seconds(30))
        #expect(finished.result.status != 0)
        #expect(finished.result.standardError.contains("cancelled"), "\(finished.result.standardError)")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0 != "long.wav" }
        #expect(left.isEmpty, "left behind: \(left)")
    }
}
