import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Issue 36, signals: decode and demux reading a FIFO with no writer ignored SIGTERM (they had
/// set it aside to cancel at the next packet, and no packet came). Every file job now ends on
/// SIGINT, SIGTERM or SIGHUP even when blocked on a read, "cancelled" with status 1 as any
/// cancelled job, and leaves no temporary output behind.
@Suite(.blocking) struct BlockedReadSignalTests {
    @Test(arguments: [(["decode"], "in.m4a", "out.wav", SIGTERM), (["decode"], "in.aac", "out.wav", SIGHUP),
                      (["mux"], "in.aac", "out.m4a", SIGINT), (["encode"], "in.wav", "out.m4a", SIGTERM),
                      (["convert"], "in.aac", "out.wav", SIGINT)])
    func aJobBlockedOnAFIFOWithNoWriterEndsOnASignal(command: [String], input: String, output: String, signal: Int32) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent(input).path
        try #require(mkfifo(fifo, 0o644) == 0)
        let process = try RunningProcess(try ExternalTool.keyframe,
                                         [command[0], fifo] + command.dropFirst() + ["-o", directory.appendingPathComponent(output).path])
        Subprocess.sleep(.milliseconds(500))
        #expect(process.send(signal), "still waiting for a writer when signalled")
        let finished = try process.wait(timeout: .seconds(10))
        #expect(finished.result.status == 1 && finished.result.standardError.contains("cancelled"),
                "status \(finished.result.status): \(finished.result.standardError)")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0 != URL(fileURLWithPath: fifo).lastPathComponent }
        #expect(left.isEmpty, "left behind: \(left)")
    }

    /// A writer that sends part of a stream and then nothing: the output's temporary file
    /// exists when the signal comes, and is removed.
    @Test func aDecodeStalledPartWayEndsOnSIGTERMAndRemovesItsTemporaryOutput() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=5", "-ar", "48000", "-ac", "2", wav])
        let adts = directory.appendingPathComponent("in.aac").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", adts])
        let fifo = directory.appendingPathComponent("stalled.aac").path
        try #require(mkfifo(fifo, 0o644) == 0)
        // Part of the stream, then the writer holds the FIFO open and sends nothing.
        let writer = try RunningProcess("/bin/sh", ["-c", "exec 3> \"$1\"; head -c 20000 \"$0\" >&3; exec sleep 30", adts, fifo])
        defer { writer.stop(grace: .milliseconds(100)) }
        let output = directory.appendingPathComponent("out.wav").path
        let process = try RunningProcess(try ExternalTool.keyframe, ["decode", fifo, "-o", output])
        try RunningProcess.waitUntil("the decode's temporary output", timeout: .seconds(20)) {
            try FileManager.default.contentsOfDirectory(atPath: directory.path).contains { $0.hasPrefix(".out.wav.partial-") }
        }
        #expect(process.send(SIGTERM))
        let finished = try process.wait(timeout: .seconds(10))
        #expect(finished.result.status == 1 && finished.result.standardError.contains("cancelled"),
                "status \(finished.result.status): \(finished.result.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["in.aac", "in.wav", "stalled.aac"])
    }
}

extension BlockedReadSignalTests {
    /// A FIFO named where a container must be read at any offset (an M4A) is refused at once,
    /// instead of waiting for a writer.
    @Test(arguments: [["demux"], ["cut", "--start", "1"], ["tag", "--json"]])
    func aFIFONamedAsAnM4AIsRefusedAtOnce(command: [String]) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("in.m4a").path
        try #require(mkfifo(fifo, 0o644) == 0)
        let output = command[0] == "tag" ? [] : ["-o", directory.appendingPathComponent("out.m4a").path]
        let process = try RunningProcess(try ExternalTool.keyframe, [command[0], fifo] + command.dropFirst() + output)
        let finished = try process.wait(timeout: .seconds(10))
        // tag reads many files and says 1 when one cannot be read; the others, 2.
        #expect(finished.result.status == (command[0] == "tag" ? 1 : 2), "status \(finished.result.status): \(finished.result.standardError)")
        #expect(finished.result.standardError.contains("not a regular file"), "\(finished.result.standardError)")
    }
}

extension BlockedReadSignalTests {
    /// `publish` from a FIFO whose writer stalls: a stop waits for the next packet, which never
    /// comes; 0.3 s after the signal a pump still waiting for its input ends the process,
    /// "cancelled" with status 1 (a stop that closes its destinations in their own time is not
    /// cut short: only a pump blocked on its input is).
    @Test func aPublishStalledOnItsInputEndsOnSIGTERM() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=5", "-ar", "48000", "-ac", "2", wav])
        let fifo = directory.appendingPathComponent("live.wav").path
        try #require(mkfifo(fifo, 0o644) == 0)
        // A WAV header and 0.1 s of it, then the writer holds the FIFO open and sends nothing.
        let writer = try RunningProcess("/bin/sh", ["-c", "exec 3> \"$1\"; head -c 20000 \"$0\" >&3; exec sleep 60", wav, fifo])
        defer { writer.stop(grace: .milliseconds(100)) }
        // Nothing listens on the port: the destination retries while the input is read.
        let port = try HTTPProbe.freePort()
        let process = try RunningProcess(try ExternalTool.keyframe, ["publish", fifo, "icecast://source:hackme@127.0.0.1:\(port)/live.aac"])
        Subprocess.sleep(.seconds(2))
        #expect(process.send(SIGTERM), "publish ended before the signal")
        let finished = try process.wait(timeout: .seconds(10))
        #expect(finished.signal == nil && finished.result.status == 1 && finished.result.standardError.contains("cancelled"),
                "status \(finished.result.status), signal \(String(describing: finished.signal)): \(finished.result.standardError)")
    }
}
