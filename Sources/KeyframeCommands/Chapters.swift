import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyFrameKit

/// `keyframe chapters FILE [--import FILE | --remove] [--export] [--json]`.
struct Chapters: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chapters",
        abstract: "List, import or remove the chapters of an M4A/MP4/M4B, MP3, FLAC or Ogg Opus file, without re-encoding.",
        discussion: """
            Chapters are read from the QuickTime chapter track (a text track the audio track \
            references with tref/chap), else from the Nero chpl. --import writes both, as FFmpeg \
            does, so Apple's players and everything else see them: from text lines \
            `HH:MM:SS.mmm Title` (or `MM:SS.mmm`, or seconds), or from JSON (an array of \
            {"start": SECONDS or "HH:MM:SS.mmm", "title": …}, or --json's output). Chapters are \
            sorted, the first starts at 0, and those past the end are dropped. The edit is written \
            in place when it fits in the movie's padding, else by a streamed rewrite committed with \
            one rename; every other box is kept. MP3: ID3v2 CHAP frames under a top-level CTOC \
            (in place in the tag's padding when they fit); FLAC and Ogg Opus: CHAPTERxxx and \
            CHAPTERxxxNAME Vorbis comments.
            """
    )

    @Argument(help: "The .m4a/.m4b/.mp4, .mp3, .flac or .opus/.ogg file.")
    var file: String

    @Option(name: .customLong("import"), help: ArgumentHelp("Replace the chapters by those of a text or JSON file.", valueName: "FILE"))
    var importFile: String?

    @Flag(help: "Remove every chapter.")
    var remove = false

    @Flag(help: "Print the chapters as `HH:MM:SS.mmm Title` lines, the form --import reads.")
    var export = false

    @Flag(help: "Print the chapters as JSON.")
    var json = false

    func validate() throws {
        if importFile != nil && remove { throw ValidationError("give --import or --remove, not both") }
        if export && json { throw ValidationError("give --export or --json, not both") }
    }

    func run() throws {
        let path = FilePath(file)
        if let importFile {
            let chapters = try Self.chapters(fromFile: importFile)
            let summary = try Tagging.writeChapters(chapters, to: path, formats: Keyframe.formats)
            let written = try Tagging.readChapters(path, formats: Keyframe.formats).count
            if !json && !export { print("\(file): \(written) chapters written \(summary.inPlace ? "in place" : "by a rewrite")") }
        } else if remove {
            let summary = try Tagging.writeChapters([], to: path, formats: Keyframe.formats)
            if !json && !export { print("\(file): chapters removed \(summary.inPlace ? "in place" : "by a rewrite")") }
        }
        guard importFile == nil && !remove || json || export else { return }
        let chapters = try Tagging.readChapters(path, formats: Keyframe.formats)
        if json {
            try JSONOutput.print(chapters.map { ChapterLine(start: ($0.seconds * 1000).rounded() / 1000, title: $0.title) })
        } else {
            for chapter in chapters { print("\(Self.clock(chapter.seconds)) \(chapter.title)") }
        }
    }

    /// One chapter in `--json` and in a JSON import.
    struct ChapterLine: Codable {
        var start: Double
        var title: String

        init(start: Double, title: String) {
            self.start = start
            self.title = title
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            title = try container.decodeIfPresent(String.self, forKey: .title) ?? ""
            if let seconds = try? container.decode(Double.self, forKey: .start) {
                start = seconds
            } else {
                let text = try container.decode(String.self, forKey: .start)
                guard let seconds = Chapters.seconds(text) else {
                    throw DecodingError.dataCorruptedError(forKey: .start, in: container, debugDescription: "\(text): not a time")
                }
                start = seconds
            }
        }
    }

    /// The chapters of a JSON or text file.
    static func chapters(fromFile path: String) throws -> [MovieChapter] {
        guard let data = FileManager.default.contents(atPath: path) else { throw CommandFailure("\(path): cannot be read") }
        let text = String(decoding: data, as: UTF8.self)
        if text.drop(while: \.isWhitespace).first == "[" {
            do {
                return try JSONDecoder().decode([ChapterLine].self, from: data).map { MovieChapter(seconds: $0.start, title: $0.title) }
            } catch {
                throw CommandFailure("\(path): not a JSON array of {\"start\", \"title\"} (\(error))")
            }
        }
        var chapters: [MovieChapter] = []
        for (number, line) in text.split(whereSeparator: \.isNewline).enumerated() {
            let trimmed = line.drop(while: \.isWhitespace)
            guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { continue }
            let time = trimmed.prefix { !$0.isWhitespace }
            guard let seconds = seconds(String(time)) else {
                throw CommandFailure("\(path), line \(number + 1): \(time) is not a time; write `HH:MM:SS.mmm Title`")
            }
            let title = trimmed.dropFirst(time.count).drop(while: \.isWhitespace)
            chapters.append(MovieChapter(seconds: seconds, title: String(title)))
        }
        return chapters
    }

    /// Seconds of `12.5`, `02:03.5` or `1:02:03.500`.
    static func seconds(_ text: String) -> Double? {
        guard case .seconds(let seconds)? = AudioEditing.Position(positionArgument: text) else { return nil }
        return seconds
    }

    /// `HH:MM:SS.mmm`.
    static func clock(_ seconds: Double) -> String {
        let milliseconds = Int((max(0, seconds) * 1000).rounded())
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let fraction = milliseconds % 1000
        return "\(two(milliseconds / 3_600_000)):\(two(milliseconds / 60_000 % 60)):\(two(milliseconds / 1000 % 60))."
            + String(repeating: "0", count: fraction < 10 ? 2 : fraction < 100 ? 1 : 0) + "\(fraction)"
    }
}
