public import Foundation

/// Runs the peer tools (ffmpeg, ffprobe, mediainfo, mutagen) and our own `keyframe` as
/// subprocesses for every test target. A missing tool is a failure, never a skip: `make test`
/// installs them.
///
/// `run` waits for the tool on the calling thread: a suite that runs tools takes the `.blocking`
/// trait (``BlockingTestTrait``), so that the wait holds a thread of its own, never one of the
/// cooperative pool's few (two on a 2-core machine) that every other test needs. The suites'
/// time limits (15 minutes) guard against hangs only, never time a job.
public enum Subprocess {
    /// What a finished process left.
    public struct Result: Sendable {
        /// The exit status.
        public var status: Int32
        /// Standard output as text.
        public var standardOutput: String
        /// Standard error as text.
        public var standardError: String
        /// Standard output as bytes.
        public var outputData: Data
    }

    /// A tool that is missing or failed.
    public struct Failure: Error, CustomStringConvertible {
        /// What happened, with the command and its standard error.
        public var description: String

        /// A failure.
        public init(description: String) { self.description = description }
    }

    /// The executable `name` (a path, or a name looked up on PATH).
    public static func path(of name: String) throws -> String {
        if name.contains("/") { return name }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw Failure(description: "\(name) is not installed (make test installs it: run `make deps`)")
    }

    /// Runs `name` and waits; output goes through temporary files, so a chatty tool can never
    /// block on a full pipe.
    public static func run(_ name: String, _ arguments: [String]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try path(of: name))
        process.arguments = arguments
        let directory = FileManager.default.temporaryDirectory
        let outURL = directory.appendingPathComponent("keyframe-tool-\(UUID().uuidString).out")
        let errURL = directory.appendingPathComponent("keyframe-tool-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        let output = try FileHandle(forWritingTo: outURL)
        let error = try FileHandle(forWritingTo: errURL)
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try output.close()
        try error.close()
        let outData = try Data(contentsOf: outURL)
        let errData = try Data(contentsOf: errURL)
        return Result(status: process.terminationStatus, standardOutput: String(decoding: outData, as: UTF8.self),
                      standardError: String(decoding: errData, as: UTF8.self), outputData: outData)
    }

    /// Runs a tool that must succeed; a non-zero exit throws with its standard error.
    @discardableResult
    public static func succeed(_ name: String, _ arguments: [String]) throws -> Result {
        let result = try run(name, arguments)
        guard result.status == 0 else {
            throw Failure(description: "\(name) \(arguments.joined(separator: " ")) exited \(result.status): \(result.standardError)")
        }
        return result
    }
}
