public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A subprocess left running in the background: a test can signal it, watch it, and then wait for
/// it with a time limit. Its output goes to temporary files (a chatty process never blocks on a
/// full pipe) and its wall time is measured from just before launch to the moment it is seen to
/// have exited.
public final class RunningProcess {
    /// How a process ended.
    public struct Finished: Sendable {
        /// Exit status and output (for a process killed by a signal, `status` is the signal).
        public var result: Subprocess.Result
        /// The signal that ended the process, or nil when it exited by itself.
        public var signal: Int32?
        /// From just before launch to when the exit was seen (polled every 5 ms).
        public var wallTime: Duration
    }

    /// The command line, for messages.
    public let commandLine: String
    private let process: Process
    private let outURL: URL
    private let errURL: URL
    private let output: FileHandle
    private let error: FileHandle
    private let launched: ContinuousClock.Instant
    private var finished: Finished?

    /// Starts `name` (a path, or a name looked up on PATH) with `environment` (the whole
    /// environment; nil inherits the test's).
    public init(_ name: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        commandLine = ([name] + arguments).joined(separator: " ")
        process = Process()
        process.executableURL = URL(fileURLWithPath: try Subprocess.path(of: name))
        process.arguments = arguments
        if let environment { process.environment = environment }
        let directory = FileManager.default.temporaryDirectory
        outURL = directory.appendingPathComponent("keyframe-bg-\(UUID().uuidString).out")
        errURL = directory.appendingPathComponent("keyframe-bg-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        output = try FileHandle(forWritingTo: outURL)
        error = try FileHandle(forWritingTo: errURL)
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        launched = ContinuousClock.now
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? output.close()
        try? error.close()
        try? FileManager.default.removeItem(at: outURL)
        try? FileManager.default.removeItem(at: errURL)
    }

    /// The process id.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Whether it is still running.
    public var isRunning: Bool { process.isRunning }

    /// Time since launch.
    public var elapsed: Duration { ContinuousClock.now - launched }

    /// What it has written to standard output so far.
    public var standardOutputSoFar: Data { (try? Data(contentsOf: outURL)) ?? Data() }

    /// What it has written to standard error so far.
    public var standardErrorSoFar: String { String(decoding: (try? Data(contentsOf: errURL)) ?? Data(), as: UTF8.self) }

    /// Sends `signal` if the process is still running; returns whether it was.
    @discardableResult
    public func send(_ signal: Int32) -> Bool {
        guard process.isRunning else { return false }
        return kill(process.processIdentifier, signal) == 0
    }

    /// Waits for the process to exit. Past `timeout` it is killed (SIGKILL) and this throws, so a
    /// hung process fails the test instead of hanging it.
    @discardableResult
    public func wait(timeout: Duration = .seconds(120)) throws -> Finished {
        if let finished { return finished }
        while process.isRunning && elapsed < timeout { usleep(5_000) }
        let wallTime = elapsed
        let timedOut = process.isRunning
        if timedOut { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let outData = (try? Data(contentsOf: outURL)) ?? Data()
        let errData = (try? Data(contentsOf: errURL)) ?? Data()
        let result = Subprocess.Result(status: process.terminationStatus, standardOutput: String(decoding: outData, as: UTF8.self),
                                       standardError: String(decoding: errData, as: UTF8.self), outputData: outData)
        if timedOut {
            throw Subprocess.Failure(description: "`\(commandLine)` was still running after \(timeout); killed. stderr: \(result.standardError)")
        }
        let done = Finished(result: result, signal: process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil,
                            wallTime: wallTime)
        finished = done
        return done
    }

    /// SIGTERM, then SIGKILL if it is still running `grace` later; waits for it either way.
    public func stop(grace: Duration = .seconds(5)) {
        if finished != nil { return }
        send(SIGTERM)
        let deadline = ContinuousClock.now + grace
        while process.isRunning && ContinuousClock.now < deadline { usleep(5_000) }
        send(SIGKILL)
        _ = try? wait()
    }

    /// Polls `condition` every 20 ms until it holds; throws `what` if it does not within `timeout`.
    public static func waitUntil(_ what: String, timeout: Duration, _ condition: () throws -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            if try condition() { return }
            guard ContinuousClock.now < deadline else {
                throw Subprocess.Failure(description: "timed out after \(timeout) waiting for \(what)")
            }
            usleep(20_000)
        }
    }
}

extension Subprocess {
    /// Runs `name` with the whole `environment` and waits (at most `timeout`; then it is killed
    /// and this throws).
    public static func run(_ name: String, _ arguments: [String], environment: [String: String],
                           timeout: Duration = .seconds(120)) throws -> Result {
        try RunningProcess(name, arguments, environment: environment).wait(timeout: timeout).result
    }

    /// Sleeps the calling thread (the tests are synchronous and wait on subprocesses anyway).
    public static func sleep(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}
