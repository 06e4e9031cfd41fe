import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// An output that replaces an existing file is committed atomically: `commit-probe` (a small
/// executable around MediaCore's `FileByteSink`, in Tests/CommitProbe) commits the same file
/// over and over and is SIGKILLed at varied moments; after every kill the file is the one from
/// before or a complete new one, never missing and never partial.
@Suite(.blocking) struct AtomicCommitTests {
    /// Bytes per committed file.
    static let size = 1024
    /// Kills per run: each costs a process start and up to 2 ms of committing (about 12 s in
    /// all, debug build). How sensitive this is, measured on ext4: the old commit (FileManager
    /// remove, then move) left no file after 4 to 348 kills (13 runs of 13); an `unlink(2)`
    /// slipped in before the `rename(2)` of today's commit, after 1 to 44 (16 of 16); writing in
    /// place left a partial file within 5 kills.
    static let kills = 600

    /// The bytes `commit-probe` writes for `generation` (the same function as in
    /// Tests/CommitProbe/main.swift).
    static func content(generation: UInt64, size: Int) -> [UInt8] {
        var bytes = (0..<8).map { UInt8(truncatingIfNeeded: generation >> (8 * UInt64($0))) }
        bytes.reserveCapacity(size)
        for offset in 8..<max(8, size) {
            bytes.append(UInt8(truncatingIfNeeded: generation &* 131 &+ UInt64(offset) &* 7 &+ UInt64(offset >> 8)))
        }
        return bytes
    }

    /// The `commit-probe` executable: `$COMMIT_PROBE_BIN`, or the one built beside the tests.
    static var probe: String {
        get throws {
            if let path = ProcessInfo.processInfo.environment["COMMIT_PROBE_BIN"], !path.isEmpty { return path }
            var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            for _ in 0..<4 {
                let candidate = directory.appendingPathComponent("commit-probe").path
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
                directory.deleteLastPathComponent()
            }
            throw Subprocess.Failure(description: "commit-probe not found next to the tests; build it (swift build) or set COMMIT_PROBE_BIN")
        }
    }

    @Test func aKillDuringACommitLeavesTheOldFileOrTheNewNeverNeitherNorAPart() throws {
        let directory = try ExternalTool.scratchDirectory().path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let destination = directory + "/out.bin"
        #expect(FileManager.default.createFile(atPath: destination, contents: Data(Self.content(generation: 0, size: Self.size))))
        let probe = try Self.probe
        var generation: UInt64 = 0
        for kill in 1...Self.kills {
            let child = try SpawnedProcess(probe, ["loop", destination, "\(Self.size)", "\(generation + 1)"])
            let ready = child.readLine()
            guard ready == "ready" else {
                let status = child.waitForExit()
                Issue.record("kill \(kill): commit-probe did not start committing (\(status)); printed \(ready ?? "nothing")")
                return
            }
            // Somewhere in the next commits: each takes well under a millisecond to a few.
            var delay = timespec(tv_sec: 0, tv_nsec: Int.random(in: 0...2_000_000))
            nanosleep(&delay, nil)
            let status = child.killAndWait()
            #expect(status == .killed, "kill \(kill): commit-probe ended by itself (\(status))")

            guard let bytes = FileManager.default.contents(atPath: destination).map(Array.init) else {
                Issue.record("kill \(kill): neither the old file nor the new one is at \(destination)")
                return
            }
            guard bytes.count == Self.size else {
                Issue.record("kill \(kill): \(destination) has \(bytes.count) bytes, a complete one has \(Self.size)")
                return
            }
            let found = bytes[0..<8].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            // Each run prints "ready" after its first commit: it left at least that one.
            #expect(found > generation, "kill \(kill): generation \(found), but this run committed \(generation + 1) or later")
            guard bytes == Self.content(generation: found, size: Self.size) else {
                Issue.record("kill \(kill): \(destination) is not a complete file of generation \(found)")
                return
            }
            generation = found
            // Temporary files of killed commits (hidden, `.out.bin.partial-…`) are all that may be left.
            for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name != "out.bin" {
                #expect(name.hasPrefix(".out.bin.partial-"), "kill \(kill): unexpected \(name)")
                try FileManager.default.removeItem(atPath: directory + "/" + name)
            }
        }
    }

    @Test func aDirectoryThatIsNotWritableIsATypedErrorNamingTheOutput() throws {
        let scratch = try ExternalTool.scratchDirectory().path
        defer {
            chmod(scratch + "/locked", 0o755)
            try? FileManager.default.removeItem(atPath: scratch)
        }
        let directory = scratch + "/locked"
        let destination = directory + "/out.wav"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        #expect(FileManager.default.createFile(atPath: destination, contents: Data("old".utf8)))
        #expect(chmod(directory, 0o555) == 0)
        #expect(chmod(scratch, 0o755) == 0)
        // Root writes anywhere: run the probe as nobody then (the directory is not writable to
        // it either way).
        let command = geteuid() == 0
            ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", try Self.probe]
            : [try Self.probe]
        let result = try Subprocess.run(command[0], Array(command.dropFirst()) + ["commit", destination, "new"])
        #expect(result.status == 1)
        // commit-probe prints the ByteStreamError's fields: operation, path, errno.
        #expect(result.standardError == "create\t\(destination)\t\(EACCES)\n")
        #expect(FileManager.default.contents(atPath: destination) == Data("old".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["out.wav"])
    }
}

/// A child process started with posix_spawn, its standard output on a pipe: the kill test
/// needs to know when the child is committing and to reap it as soon as it dies.
private final class SpawnedProcess {
    enum Status: Equatable, CustomStringConvertible {
        case exited(Int32)
        case killed
        case signalled(Int32)

        var description: String {
            switch self {
            case .exited(let code): "exit status \(code)"
            case .killed: "SIGKILL"
            case .signalled(let signal): "signal \(signal)"
            }
        }
    }

    private let pid: pid_t
    private let output: Int32
    private var status: Status?

    init(_ path: String, _ arguments: [String]) throws {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw Subprocess.Failure(description: "pipe: errno \(errno)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
        posix_spawn_file_actions_addclose(&actions, pipeEnds[1])
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environment: [UnsafeMutablePointer<CChar>?] = [nil]
        var child: pid_t = 0
        let result = posix_spawn(&child, path, &actions, nil, argv, environment)
        close(pipeEnds[1])
        guard result == 0 else {
            close(pipeEnds[0])
            throw Subprocess.Failure(description: "posix_spawn \(path): errno \(result)")
        }
        pid = child
        output = pipeEnds[0]
    }

    deinit {
        if status == nil { _ = killAndWait() }
        close(output)
    }

    /// The first line the child prints, without its newline; nil if it closed its output first.
    func readLine() -> String? {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(output, &byte, 1)
            if count == 1 {
                if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
                line.append(byte)
            } else if count == -1, errno == EINTR {
                continue
            } else {
                return line.isEmpty ? nil : String(decoding: line, as: UTF8.self)
            }
        }
    }

    /// SIGKILL, then how it ended (a child that had already exited is reaped as it was).
    func killAndWait() -> Status {
        if let status { return status }
        kill(pid, SIGKILL)
        return waitForExit()
    }

    /// Waits for the child to end.
    func waitForExit() -> Status {
        if let status { return status }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) == -1, errno == EINTR {}
        let signal = raw & 0x7f
        let ended: Status = signal == 0 ? .exited((raw >> 8) & 0xff) : signal == SIGKILL ? .killed : .signalled(signal)
        status = ended
        return ended
    }
}
