import Foundation
import Testing
import TestSupport

/// Runs peer tools (ffmpeg, ffprobe, mediainfo) and our own `keyframe` as subprocesses.
/// A missing tool is a failure, not a skip: `make test` installs them.
enum ExternalTool {
    typealias Result = Subprocess.Result
    typealias ToolFailure = Subprocess.Failure

    /// Runs `executable` (a path, or a name looked up on PATH) and waits for it.
    static func run(_ executable: String, _ arguments: [String]) throws -> Result { try Subprocess.run(executable, arguments) }

    /// Runs a tool that must succeed; its stderr is part of the failure message.
    @discardableResult
    static func succeed(_ executable: String, _ arguments: [String]) throws -> Result { try Subprocess.succeed(executable, arguments) }

    static func path(of executable: String) throws -> String { try Subprocess.path(of: executable) }

    /// The `keyframe` executable: `$KEYFRAME_BIN`, or the one built beside the test bundle.
    static var keyframe: String {
        get throws {
            if let path = ProcessInfo.processInfo.environment["KEYFRAME_BIN"], !path.isEmpty { return path }
            var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            for _ in 0..<4 {
                let candidate = directory.appendingPathComponent("keyframe").path
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
                directory.deleteLastPathComponent()
            }
            throw ToolFailure(description: "keyframe executable not found next to the tests; build it (swift build) or set KEYFRAME_BIN")
        }
    }

    /// A new empty directory for one test's files.
    static func scratchDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("keyframe-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// `keyframe probe --json FILE`, decoded.
    static func probeJSON(_ file: String) throws -> [String: Any] {
        let result = try succeed(try keyframe, ["probe", "--json", file])
        guard let object = try JSONSerialization.jsonObject(with: result.outputData) as? [String: Any] else {
            throw ToolFailure(description: "probe --json did not print an object: \(result.standardOutput)")
        }
        return object
    }

    /// ffprobe's view of the first AAC audio stream: sample rate, channels, profile, packet count.
    static func ffprobeAudio(_ file: String) throws -> (sampleRate: Int, channels: Int, profile: String, packets: Int) {
        let result = try succeed("ffprobe", ["-v", "error", "-select_streams", "a", "-count_packets",
                                             "-show_entries", "stream=codec_name,sample_rate,channels,profile,nb_read_packets", "-of", "json", file])
        let object = try JSONSerialization.jsonObject(with: result.outputData) as? [String: Any]
        guard let stream = (object?["streams"] as? [[String: Any]])?.first(where: { $0["codec_name"] as? String == "aac" }) else {
            throw ToolFailure(description: "ffprobe found no AAC stream in \(file)")
        }
        return (Int(stream["sample_rate"] as? String ?? "") ?? -1, stream["channels"] as? Int ?? -1,
                stream["profile"] as? String ?? "", Int(stream["nb_read_packets"] as? String ?? "") ?? -1)
    }
}

/// The `esds` boxes inside the `moov` box of an ISO BMFF file, found by walking the top-level
/// boxes and scanning moov (the MP4 demuxer of issue 4 will replace this test-only walk).
enum ESDSLocator {
    static func payloads(in bytes: [UInt8]) -> [(offset: Int, payload: [UInt8])] {
        var position = 0
        var found: [(Int, [UInt8])] = []
        while position + 8 <= bytes.count {
            var size = Int(bytes[position..<position + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            let type = String(decoding: bytes[position + 4..<position + 8], as: UTF8.self)
            if size == 1, position + 16 <= bytes.count {
                size = Int(bytes[position + 8..<position + 16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            } else if size == 0 {
                size = bytes.count - position
            }
            guard size >= 8 else { break }
            let end = min(position + size, bytes.count)
            if type == "moov" {
                var index = position + 8
                while index + 4 <= end {
                    if bytes[index..<index + 4].elementsEqual("esds".utf8), index >= 4 {
                        let boxSize = Int(bytes[index - 4..<index].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
                        if boxSize >= 12, index - 4 + boxSize <= end {
                            found.append((index + 4, Array(bytes[(index + 4)..<(index - 4 + boxSize)])))
                        }
                    }
                    index += 1
                }
            }
            position += size
        }
        return found
    }
}
