import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyFrameKit
import MediaCore

/// The sample type of raw PCM on the command line.
enum RawSampleFormat: String, ExpressibleByArgument, CaseIterable {
    case s16le
    case f32le

    var sampleFormat: PCMSampleFormat { self == .s16le ? .int16 : .float32 }
}

/// The lower-cased extension of a path.
func fileExtension(_ path: String) -> String {
    guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return "" }
    return path[path.index(after: dot)...].lowercased()
}

/// Refuses to write over the input: the same name, or another name for the same file (a
/// symbolic or hard link to it). (Every file output refuses any file the job has opened as an
/// input, too: this names the mistake before any work starts, for inputs libavformat reads.)
/// `-` (standard output) is refused unless the command's output is `streamable` there (decode's
/// WAV and raw PCM, demux's ADTS): a file named `-` is never what was meant.
func checkDistinct(input: String, output: String, streamable: Bool = false) throws {
    if output == "-" {
        guard streamable else { throw CommandFailure(standardOutputRefusal, status: .usage) }
        return
    }
    if URLPath.same(input, output) || FileSystemCalls.sameFile(FilePath(input), FilePath(output)) {
        throw CommandFailure("the output \(output) is the input: choose another name", status: .usage)
    }
}

/// What a command whose output is not a stream says to `-o -` (a usage error).
let standardOutputRefusal = "-o -: this output cannot be written to standard output (it is not a stream); name a file"

/// An output as a summary names it: its path, or "standard output" for `-`.
func summaryName(of output: String) -> String {
    output == "-" ? "standard output" : output
}

/// Prints a command's summary: on standard output, unless one of the command's `outputs` went
/// there (`-o -`); then on standard error, so that the stream stays whole.
func printSummary(_ text: String, outputs: [String?]) {
    if outputs.contains("-") {
        Terminal.error(text + "\n")
    } else {
        print(text)
    }
}

enum URLPath {
    /// Whether `path` names an existing directory.
    static func isDirectory(_ path: String) -> Bool {
        var isDirectory: Bool = false
        return FileManager.default.fileExists(atPath: path.isEmpty ? "." : path, isDirectory: &isDirectory) && isDirectory
    }

    static func same(_ a: String, _ b: String) -> Bool {
        func normal(_ path: String) -> String {
            let absolute = path.hasPrefix("/") ? path : FileSystemPath.current + "/" + path
            var parts: [Substring] = []
            for part in absolute.split(separator: "/") {
                if part == "." { continue }
                if part == ".." { _ = parts.popLast() } else { parts.append(part) }
            }
            return "/" + parts.joined(separator: "/")
        }
        return normal(a) == normal(b)
    }
}
