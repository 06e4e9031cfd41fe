import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyFrameKit
import XMLReader

/// A file of chapters in one of the forms podcast tools exchange, read and written by
/// `keyframe chapters`: each format holds some of a chapter's fields, and a field a format
/// cannot hold is reported as dropped, never lost in silence.
///
/// | format | fields |
/// |---|---|
/// | `text` | start, title (`HH:MM:SS.mmm Title` lines) |
/// | `json` | start, title (`[{"start", "title"}]`, `--json`'s) |
/// | `podlove` | start, title, url (`href`), image (Podlove Simple Chapters 1.2, XML) |
/// | `podcast-json` | start, end, title, url, image (Podcasting 2.0 JSON chapters 1.2.0) |
/// | `ffmetadata` | start, end, title (FFmpeg's `;FFMETADATA1`, `TIMEBASE=1/1000`) |
/// | `cue` | start (to 1/75 s), title (a CUE sheet's `TRACK … TITLE … INDEX 01`) |
/// | `webvtt` | start, end, title (W3C WebVTT cues) |
enum ChapterFile {
    /// One chapter with every field any format holds.
    struct Entry: Equatable, Codable {
        /// Seconds from the start.
        var start: Double
        /// Seconds from the start, when the format says.
        var end: Double?
        /// The title.
        var title: String
        /// A link (Podcasting 2.0 `url`, Podlove `href`).
        var url: String?
        /// An image's URL (Podcasting 2.0 `img`, Podlove `image`).
        var image: String?
    }

    /// The formats.
    enum Format: String, CaseIterable, ExpressibleByArgument {
        case text, json, podlove
        case podcastJSON = "podcast-json"
        case ffmetadata, cue, webvtt

        /// The fields it holds besides the start and title.
        var holds: Set<Field> {
            switch self {
            case .text, .json, .cue: []
            case .podlove: [.url, .image]
            case .podcastJSON: [.end, .url, .image]
            case .ffmetadata, .webvtt: [.end]
            }
        }

        /// The format a file's name says (`.xml`/`.psc` Podlove, `.cue`, `.vtt`, `.ffmeta`/
        /// `.ffmetadata`), else what its text starts with; `text` when nothing says.
        static func detect(path: String, text: String) -> Format {
            let lower = path.lowercased()
            if lower.hasSuffix(".cue") { return .cue }
            if lower.hasSuffix(".vtt") { return .webvtt }
            if lower.hasSuffix(".ffmeta") || lower.hasSuffix(".ffmetadata") { return .ffmetadata }
            let head = text.drop { $0.isWhitespace || $0 == "\u{FEFF}" }
            if head.hasPrefix(";FFMETADATA") { return .ffmetadata }
            if head.hasPrefix("WEBVTT") { return .webvtt }
            if head.hasPrefix("<") { return .podlove }
            if head.hasPrefix("{") { return .podcastJSON }
            if head.hasPrefix("[") { return .json }
            if head.hasPrefix("FILE ") || head.hasPrefix("REM ") || head.hasPrefix("TITLE ") || head.hasPrefix("PERFORMER ") { return .cue }
            return .text
        }
    }

    /// A field beyond the start and title.
    enum Field: String, CaseIterable, Comparable {
        case end, url, image

        static func < (lhs: Field, rhs: Field) -> Bool { lhs.rawValue < rhs.rawValue }

        /// Whether `entry` has it.
        func isSet(in entry: Entry) -> Bool {
            switch self {
            case .end: entry.end != nil
            case .url: entry.url != nil
            case .image: entry.image != nil
            }
        }
    }

    /// The fields of `entries` a holder of `holds` drops, each with how many chapters have it
    /// (an end that is the next chapter's start, or the last chapter's, which a reader takes
    /// for the end of the audio, is no field of its own).
    static func dropped(_ entries: [Entry], holds: Set<Field>) -> [(field: Field, count: Int)] {
        Field.allCases.filter { !holds.contains($0) }.compactMap { field in
            let count = entries.enumerated().filter { index, entry in
                guard field.isSet(in: entry) else { return false }
                if field == .end, index + 1 == entries.count { return false }
                if field == .end, let end = entry.end, index + 1 < entries.count, abs(end - entries[index + 1].start) < 0.0005 { return false }
                return true
            }.count
            return count > 0 ? (field, count) : nil
        }
    }

    /// Words for `dropped`: `3 ends, 2 URLs`.
    static func describe(_ dropped: [(field: Field, count: Int)]) -> String {
        dropped.map { "\($0.count) chapter \($0.field == .url ? "URL" : $0.field.rawValue)\($0.count == 1 ? "" : "s")" }.joined(separator: ", ")
    }

    // MARK: Reading

    /// The chapters of `text` in `format`, in time order.
    ///
    /// - Throws: ``CommandFailure`` naming `source` and what does not read.
    static func parse(_ text: String, format: Format, source: String) throws -> [Entry] {
        let entries: [Entry]
        switch format {
        case .text: entries = try parseText(text, source: source)
        case .json: entries = try parseOwnJSON(text, source: source)
        case .podlove: entries = try parsePodlove(text, source: source)
        case .podcastJSON: entries = try parsePodcastJSON(text, source: source)
        case .ffmetadata: entries = try parseFFMetadata(text, source: source)
        case .cue: entries = try parseCue(text, source: source)
        case .webvtt: entries = try parseWebVTT(text, source: source)
        }
        return entries.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map(\.element)
    }

    private static func parseText(_ text: String, source: String) throws -> [Entry] {
        var entries: [Entry] = []
        for (number, line) in text.split(whereSeparator: \.isNewline).enumerated() {
            let trimmed = line.drop(while: \.isWhitespace)
            guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { continue }
            let time = trimmed.prefix { !$0.isWhitespace }
            guard let seconds = Chapters.seconds(String(time)) else {
                throw CommandFailure("\(source), line \(number + 1): \(time) is not a time; write `HH:MM:SS.mmm Title`")
            }
            entries.append(Entry(start: seconds, title: String(trimmed.dropFirst(time.count).drop(while: \.isWhitespace))))
        }
        return entries
    }

    private static func parseOwnJSON(_ text: String, source: String) throws -> [Entry] {
        do {
            return try JSONDecoder().decode([Chapters.ChapterLine].self, from: Data(text.utf8)).map { Entry(start: $0.start, title: $0.title) }
        } catch {
            throw CommandFailure("\(source): not a JSON array of {\"start\", \"title\"} (\(error))")
        }
    }

    /// Podlove Simple Chapters 1.2 (`http://podlove.org/simple-chapters`): `<psc:chapters>` of
    /// `<psc:chapter start="HH:MM:SS.mmm" title="…" href="…" image="…"/>`.
    private static func parsePodlove(_ text: String, source: String) throws -> [Entry] {
        let tree: XMLElementTree
        do { tree = try XMLElementTree(bytes: Array(text.utf8)) } catch { throw CommandFailure("\(source): \(error)") }
        var entries: [Entry] = []
        func visit(_ element: XMLElementTree.Element) throws {
            if element.localName == "chapter" {
                guard let start = element[attribute: "start"], let seconds = Chapters.seconds(start) else {
                    throw CommandFailure("\(source), line \(element.line): a chapter without a start time (start=\"HH:MM:SS.mmm\")")
                }
                entries.append(Entry(start: seconds, title: element[attribute: "title"] ?? "", url: element[attribute: "href"],
                                     image: element[attribute: "image"]))
            }
            for child in element.children { try visit(child) }
        }
        try visit(tree.root)
        return entries
    }

    /// Podcasting 2.0 JSON chapters (`{"version": "1.2.0", "chapters": [{"startTime", "endTime",
    /// "title", "img", "url", "toc"}]}`); a chapter with `"toc": false` is kept too.
    private static func parsePodcastJSON(_ text: String, source: String) throws -> [Entry] {
        struct File: Decodable {
            struct Chapter: Decodable {
                var startTime: Double
                var endTime: Double?
                var title: String?
                var img: String?
                var url: String?
            }

            var chapters: [Chapter]
        }
        do {
            return try JSONDecoder().decode(File.self, from: Data(text.utf8)).chapters.map {
                Entry(start: $0.startTime, end: $0.endTime, title: $0.title ?? "", url: $0.url, image: $0.img)
            }
        } catch {
            throw CommandFailure("\(source): not Podcasting 2.0 JSON chapters ({\"version\", \"chapters\": [{\"startTime\", …}]}): \(error)")
        }
    }

    /// FFmpeg's metadata file: `[CHAPTER]` sections of `TIMEBASE=num/den`, `START`, `END` and
    /// `title` (backslash escapes undone).
    private static func parseFFMetadata(_ text: String, source: String) throws -> [Entry] {
        var entries: [Entry] = []
        var current: [String: String]?
        var line = 0
        func close() throws {
            guard let fields = current else { return }
            let base = (fields["TIMEBASE"] ?? "1/1000").split(separator: "/").compactMap { Double($0) }
            guard base.count == 2, base[1] > 0, let start = fields["START"].flatMap(Double.init) else {
                throw CommandFailure("\(source), line \(line): a [CHAPTER] without TIMEBASE=num/den and START")
            }
            let unit = base[0] / base[1]
            entries.append(Entry(start: start * unit, end: fields["END"].flatMap(Double.init).map { $0 * unit }, title: fields["title"] ?? ""))
        }
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            line = number + 1
            let text = raw.hasSuffix("\r") ? raw.dropLast() : raw
            if text.hasPrefix("[") {
                try close()
                current = text == "[CHAPTER]" ? [:] : nil
                continue
            }
            guard current != nil, !text.hasPrefix(";"), !text.hasPrefix("#"), let equals = text.firstIndex(of: "=") else { continue }
            var value = ""
            var escaped = false
            for character in text[text.index(after: equals)...] {
                if escaped { value.append(character); escaped = false } else if character == "\\" { escaped = true } else { value.append(character) }
            }
            current?[String(text[..<equals])] = value
        }
        try close()
        return entries
    }

    /// A CUE sheet: each `TRACK` a chapter, its `TITLE` and its `INDEX 01 MM:SS:FF` (75 frames a
    /// second).
    private static func parseCue(_ text: String, source: String) throws -> [Entry] {
        var entries: [Entry] = []
        var inTrack = false
        var title = ""
        var start: Double?
        func close() {
            if inTrack, let start { entries.append(Entry(start: start, title: title)) }
        }
        for (number, line) in text.split(whereSeparator: \.isNewline).enumerated() {
            let words = line.drop(while: \.isWhitespace)
            if words.hasPrefix("TRACK ") {
                close()
                inTrack = true
                title = ""
                start = nil
            } else if inTrack, words.hasPrefix("TITLE ") {
                title = unquoted(words.dropFirst(6))
            } else if inTrack, words.hasPrefix("INDEX 01 ") {
                let parts = words.dropFirst(9).trimmingSpaces.split(separator: ":").compactMap { Int($0) }
                guard parts.count == 3, parts[1] < 60, parts[2] < 75 else {
                    throw CommandFailure("\(source), line \(number + 1): INDEX 01 is MM:SS:FF (75 frames a second)")
                }
                start = Double(parts[0] * 60 + parts[1]) + Double(parts[2]) / 75
            }
        }
        close()
        return entries
    }

    /// WebVTT (W3C WebVTT 4): each cue a chapter, its first text line the title.
    private static func parseWebVTT(_ text: String, source: String) throws -> [Entry] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) }
        guard lines.first?.hasPrefix("WEBVTT") == true || lines.first?.hasPrefix("\u{FEFF}WEBVTT") == true else {
            throw CommandFailure("\(source): a WebVTT file starts with WEBVTT")
        }
        var entries: [Entry] = []
        var index = 1
        while index < lines.count {
            let line = lines[index]
            let halves = line.split(separator: "-->", maxSplits: 1, omittingEmptySubsequences: false)
            if halves.count == 2 {
                let from = halves[0].trimmingSpaces
                let to = halves[1].trimmingSpaces.split(separator: " ").first.map(String.init) ?? ""
                guard let start = Chapters.seconds(from), let end = Chapters.seconds(to) else {
                    throw CommandFailure("\(source), line \(index + 1): a cue's times are HH:MM:SS.mmm --> HH:MM:SS.mmm")
                }
                let title = index + 1 < lines.count ? lines[index + 1] : ""
                entries.append(Entry(start: start, end: end, title: title.replacing("&lt;", with: "<").replacing("&gt;", with: ">")
                    .replacing("&amp;", with: "&")))
            }
            index += 1
        }
        return entries
    }

    private static func unquoted(_ text: Substring) -> String {
        let trimmed = text.trimmingSpaces
        guard trimmed.hasPrefix("\""), trimmed.hasSuffix("\""), trimmed.count >= 2 else { return trimmed }
        return String(trimmed.dropFirst().dropLast())
    }

    // MARK: Writing

    /// `entries` in `format`, and the fields it drops.
    static func render(_ entries: [Entry], format: Format) -> (text: String, dropped: [(field: Field, count: Int)]) {
        let dropped = dropped(entries, holds: format.holds)
        let text: String
        switch format {
        case .text:
            text = entries.map { "\(Chapters.clock($0.start)) \($0.title)\n" }.joined()
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let lines = entries.map { Chapters.ChapterLine(start: ($0.start * 1000).rounded() / 1000, title: $0.title) }
            text = (try? String(decoding: encoder.encode(lines), as: UTF8.self)).map { $0 + "\n" } ?? "[]\n"
        case .podlove:
            func attribute(_ name: String, _ value: String?) -> String {
                value.map { " \(name)=\"\($0.replacing("&", with: "&amp;").replacing("\"", with: "&quot;").replacing("<", with: "&lt;"))\"" } ?? ""
            }
            text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<psc:chapters version=\"1.2\" xmlns:psc=\"http://podlove.org/simple-chapters\">\n"
                + entries.map { "  <psc:chapter" + attribute("start", Chapters.clock($0.start)) + attribute("title", $0.title)
                    + attribute("href", $0.url) + attribute("image", $0.image) + "/>\n" }.joined()
                + "</psc:chapters>\n"
        case .podcastJSON:
            struct File: Encodable {
                struct Chapter: Encodable {
                    var startTime: Double
                    var endTime: Double?
                    var title: String
                    var img: String?
                    var url: String?
                }

                var version = "1.2.0"
                var chapters: [Chapter]
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let file = File(chapters: entries.map {
                File.Chapter(startTime: ($0.start * 1000).rounded() / 1000, endTime: $0.end.map { ($0 * 1000).rounded() / 1000 }, title: $0.title,
                             img: $0.image, url: $0.url)
            })
            text = (try? String(decoding: encoder.encode(file), as: UTF8.self)).map { $0 + "\n" } ?? "{}\n"
        case .ffmetadata:
            func escaped(_ value: String) -> String {
                var out = ""
                for character in value {
                    if "=;#\\\n".contains(character) { out.append("\\") }
                    out.append(character)
                }
                return out
            }
            text = ";FFMETADATA1\n" + entries.enumerated().map { index, entry in
                let end = entry.end ?? (index + 1 < entries.count ? entries[index + 1].start : entry.start)
                return "[CHAPTER]\nTIMEBASE=1/1000\nSTART=\(Int64((entry.start * 1000).rounded()))\nEND=\(Int64((end * 1000).rounded()))\n"
                    + "title=\(escaped(entry.title))\n"
            }.joined()
        case .cue:
            text = "FILE \"audio\" WAVE\n" + entries.enumerated().map { index, entry in
                let frames = Int64((entry.start * 75).rounded())
                func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
                let number = index + 1
                return "  TRACK \(number < 10 ? "0\(number)" : "\(number)") AUDIO\n    TITLE \"\(entry.title.replacing("\"", with: "'"))\"\n"
                    + "    INDEX 01 \(two(frames / 4500)):\(two(frames / 75 % 60)):\(two(frames % 75))\n"
            }.joined()
        case .webvtt:
            text = "WEBVTT\n" + entries.enumerated().map { index, entry in
                let end = entry.end ?? (index + 1 < entries.count ? entries[index + 1].start : entry.start)
                let title = entry.title.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
                    .split(whereSeparator: \.isNewline).joined(separator: " ")
                return "\n\(index + 1)\n\(Chapters.clock(entry.start)) --> \(Chapters.clock(end))\n\(title)\n"
            }.joined()
        }
        return (text, dropped)
    }
}
