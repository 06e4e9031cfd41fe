import ArgumentParser
import Foundation
import KeyFrameKit

/// `keyframe probe INPUT [--json]`: describes a media file.
struct Probe: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Describe a media file: format, tracks, exact duration, damage.",
        discussion: """
            ADTS (.aac, .adts) is read frame by frame: the duration is computed from the frames, \
            not estimated from the bitrate; bytes skipped while resynchronising, ID3v2 tags and a \
            truncated last frame are reported. MP4/M4A/MOV probing arrives with the demuxer.
            """
    )

    @Argument(help: "The file to describe.")
    var input: String

    @Flag(help: "Print one JSON object (format, duration, tracks, damage) instead of text.")
    var json = false

    func run() throws {
        let report = try Self.report(for: input)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print(Self.text(of: report, path: input), terminator: "")
        }
    }

    static func report(for path: String) throws -> ProbeReport {
        let source: FileByteSource
        do { source = try FileByteSource(path: path) } catch { throw CommandFailure(error.description) }
        if let kind = try containerKind(path) {
            throw CommandFailure("\(path): \(kind) files are not supported by probe yet (the MP4 demuxer is issue 4)")
        }
        do {
            return try ADTSProbe.probe(source)
        } catch {
            throw CommandFailure("\(path): \(error)")
        }
    }

    /// Recognises ISO BMFF / QuickTime by their first box, so they get an honest message.
    private static func containerKind(_ path: String) throws -> String? {
        let source: FileByteSource
        do { source = try FileByteSource(path: path) } catch { throw CommandFailure(error.description) }
        var head: [UInt8] = []
        while head.count < 8, (try? source.read(into: &head, maxCount: 8 - head.count)) ?? 0 > 0 {}
        guard head.count == 8 else { return nil }
        let type = String(decoding: head[4..<8], as: UTF8.self)
        return ["ftyp", "moov", "mdat", "free", "wide", "skip", "styp"].contains(type) ? "MP4/MOV" : nil
    }

    static func text(of report: ProbeReport, path: String) -> String {
        var lines = ["\(path): \(report.format.uppercased()), \(formatSeconds(report.duration))"]
        for track in report.tracks {
            var parts = ["track \(track.id)", track.type, track.codec]
            if let profile = track.profile { parts.append(profile) }
            if let rate = track.sampleRate { parts.append("\(rate) Hz") }
            if let channels = track.channels { parts.append("\(channels) ch") }
            parts.append("\(track.sampleCount) packets")
            parts.append(formatSeconds(track.duration))
            if let bitrate = track.bitrate { parts.append(String(format: "%.1f kb/s", Double(bitrate) / 1000)) }
            lines.append("  " + parts.joined(separator: "  "))
        }
        if report.tagBytes > 0 { lines.append("  tags: \(report.tagBytes) bytes skipped") }
        if report.bytesSkipped > 0 { lines.append("  skipped: \(report.bytesSkipped) bytes that are not \(report.format.uppercased())") }
        if report.damageCount == 0 {
            lines.append("  damage: none")
        } else {
            lines.append("  damage: \(report.damageCount) event(s)")
            lines += report.damage.map { "    - \($0)" }
            if report.damageCount > report.damage.count {
                lines.append("    … and \(report.damageCount - report.damage.count) more")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func formatSeconds(_ seconds: Double) -> String {
        String(format: "%.6f s", seconds)
    }
}
