import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Issue 5, "Done means" 3: a fragmented encode killed part-way leaves a file that plays up to
/// its last complete fragment.
///
/// `keyframe encode LONG.wav -o out.m4a --fragmented` (10 minutes of noise: tens of seconds of
/// work, one-second fragments) is sent SIGKILL once the file has passed 100 KB. Then
/// `ffmpeg -v error` decodes it with nothing to say, ffprobe counts exactly the samples of the
/// complete moof+mdat pairs (whole fragments of 44 packets, fewer than the full encode's), and
/// `keyframe probe --json` and `keyframe decode` read it.
@Suite(.blocking) struct CrashSafeTests {
    static let rate = 44100
    static let seconds = 600
    /// One-second fragments at 44.1 kHz: a fragment is cut at the first packet ≥ 1 s after its start.
    static let packetsPerFragment = (rate + 1023) / 1024

    @Test(.hangGuard(minutes: 15))
    func killedFragmentedEncodeLeavesAPlayableFile() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("long.wav").path
        let out = directory.appendingPathComponent("out.m4a").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=d=\(Self.seconds):a=0.3:r=\(Self.rate):seed=5",
                             "-ac", "2", "-c:a", "pcm_s16le", wav])

        let process = Process()
        process.executableURL = URL(fileURLWithPath: try ExternalTool.keyframe)
        process.arguments = ["encode", wav, "-o", out, "--fragmented"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let started = Date()
        var size = 0
        // Poll until the file passes 100 KB (about 8 fragments), for at most 40 s of a loaded machine.
        while process.isRunning && Date().timeIntervalSince(started) < 40 {
            size = (try? FileManager.default.attributesOfItem(atPath: out)[.size] as? Int) ?? 0
            if size > 100_000 { break }
            usleep(20_000)
        }
        let wasRunning = process.isRunning
        if wasRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try #require(wasRunning && size > 100_000,
                     "encode was \(wasRunning ? "still running" : "no longer running (status \(process.terminationStatus))") with \(size) bytes written after \(Date().timeIntervalSince(started)) s")
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL,
                "encode ended with \(process.terminationReason) \(process.terminationStatus), not SIGKILL")
        try #require(FileManager.default.fileExists(atPath: out), "the killed encode left no \(out)")

        // FFmpeg decodes it to the end without a word.
        let decode = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", out, "-f", "null", "-"])
        #expect(decode.status == 0, "ffmpeg exited \(decode.status): \(decode.standardError)")
        #expect(!decode.standardError.contains("Invalid data"), "ffmpeg: \(decode.standardError)")
        #expect(decode.standardError.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "ffmpeg -v error said: \(decode.standardError)")

        // Packets: those of the complete fragments, whole fragments only, fewer than a full encode's.
        let packets = try ExternalTool.ffprobeAudio(out).packets
        let fragments = try MuxCheck.completeFragments(of: out)
        let fullEncode = (Self.seconds * Self.rate + 1024 + 1023) / 1024 + 1
        #expect(packets > 0 && packets < fullEncode, "ffprobe counts \(packets) packets; a full encode has about \(fullEncode)")
        #expect(packets == fragments.samples.reduce(0, +),
                "ffprobe counts \(packets) packets, the \(fragments.fragments) complete fragments hold \(fragments.samples.reduce(0, +))")
        #expect(packets % Self.packetsPerFragment == 0 && fragments.samples.allSatisfy { $0 == Self.packetsPerFragment },
                "fragments of \(fragments.samples) packets; want whole fragments of \(Self.packetsPerFragment)")

        // Our own reader agrees, and finds no damage.
        let report = try ExternalTool.probeJSON(out)
        #expect(report["format"] as? String == "mp4" && report["fragmented"] as? Bool == true, "probe: \(report)")
        #expect(report["damageCount"] as? Int == 0, "probe found damage: \(report["damage"] ?? "")")
        let track = (report["tracks"] as? [[String: Any]])?.first ?? [:]
        #expect(track["sampleCount"] as? Int == packets, "probe: sampleCount \(track["sampleCount"] ?? "nil"), ffprobe \(packets)")
        let wavOut = directory.appendingPathComponent("decoded.wav").path
        let ours = try ExternalTool.run(try ExternalTool.keyframe, ["decode", out, "-o", wavOut])
        #expect(ours.status == 0, "keyframe decode of the killed file: \(ours.standardError)")
    }
}
