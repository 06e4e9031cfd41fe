import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyFrameKit

/// The sample type of raw PCM on the command line.
enum RawSampleFormat: String, ExpressibleByArgument, CaseIterable {
    case s16le
    case f32le

    var sampleFormat: PCMSampleFormat { self == .s16le ? .int16 : .float32 }
}

/// `--sample-rate`, `--channels` and `--format`: the layout of raw `.pcm` input, which has no header.
struct PCMLayoutOptions: ParsableArguments {
    @Option(help: "Sample rate of raw .pcm input, in Hz.")
    var sampleRate: Int?

    @Option(help: "Channels of raw .pcm input.")
    var channels: Int?

    @Option(help: "Sample type of raw .pcm input (and of .pcm output).")
    var format: RawSampleFormat = .s16le

    /// The layout for a raw file, or an error naming what is missing.
    func rawLayout(for path: String) throws -> PCMFormat {
        try Self.rawLayout(for: path, sampleRate: sampleRate, channels: channels, format: format, options: "--sample-rate", "--channels", "--format")
    }

    /// The layout of raw PCM from its options (named as the command names them), or an error
    /// naming what is missing or out of range.
    static func rawLayout(for path: String, sampleRate: Int?, channels: Int?, format: RawSampleFormat,
                          options rate: String, _ count: String, _ type: String) throws -> PCMFormat {
        guard let sampleRate, let channels else {
            throw CommandFailure("\(path): raw PCM has no header: give \(rate) and \(count) (and \(type), default s16le)")
        }
        guard (1...768_000).contains(sampleRate), (1...64).contains(channels) else {
            throw CommandFailure("\(rate) \(sampleRate) / \(count) \(channels) out of range")
        }
        return PCMFormat(sampleRate: sampleRate, channelCount: channels, sampleFormat: format.sampleFormat)
    }
}

/// The lower-cased extension of a path.
func fileExtension(_ path: String) -> String {
    guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return "" }
    return path[path.index(after: dot)...].lowercased()
}

/// Refuses to write over the input.
func checkDistinct(input: String, output: String) throws {
    if URLPath.same(input, output) { throw CommandFailure("the output \(output) is the input: choose another name") }
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
