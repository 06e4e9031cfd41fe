import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyFrameKit

/// `keyframe chapters FILE [--import FILE | --remove | --from-silence S] [--export [--format F]] [--json]`.
struct Chapters: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chapters",
        abstract: "List, import, export or remove the chapters of an M4A/MP4/M4B, MP3, FLAC or Ogg Opus file, without re-encoding.",
        discussion: """
            Chapters are read from the QuickTime chapter track (a text track the audio track \
            references with tref/chap), else from the Nero chpl. --import writes both, as FFmpeg \
            does, so Apple's players and everything else see them. The edit is written in place \
            when it fits in the movie's padding, else by a streamed rewrite committed with one \
            rename; every other box is kept. MP3: ID3v2 CHAP frames under a top-level CTOC (in \
            place in the tag's padding when they fit); FLAC and Ogg Opus: CHAPTERxxx and \
            CHAPTERxxxNAME Vorbis comments. Chapters are sorted, the first starts at 0, and those \
            past the end are dropped.

            --import reads any of these, by the file's extension or its first bytes: text lines \
            `HH:MM:SS.mmm Title` (or `MM:SS.mmm`, or seconds); JSON, an array of {"start": SECONDS \
            or "HH:MM:SS.mmm", "title": …} (--json's output); Podlove Simple Chapters (XML, \
            start, title, href, image); Podcasting 2.0 JSON chapters ({"version", "chapters": \
            [{"startTime", "endTime", "title", "img", "url"}]}); FFmpeg's FFMETADATA ([CHAPTER] \
            TIMEBASE, START, END, title); a CUE sheet (TRACK, TITLE, INDEX 01 MM:SS:FF); WebVTT \
            (a cue a chapter). --export prints the chapters in --format (text, json, podlove, \
            podcast-json, ffmetadata, cue, webvtt). FILE may itself be a chapter file: --export \
            then converts it. A file's chapters hold a start and a title; a field the target \
            cannot hold (an end, a URL, an image) is named on stderr as dropped.

            --from-silence MIN_SECONDS proposes chapters where the sound comes back after a silence \
            of at least that long (RMS under --silence-threshold, -50 dBFS by default, over 20 ms), \
            printed in --format: save them and --import them.
            """
    )

    @Argument(help: "The .m4a/.m4b/.mp4, .mp3, .flac or .opus/.ogg file (or, with --export, a chapter file to convert).")
    var file: String

    @Option(name: .customLong("import"), help: ArgumentHelp("Replace the chapters by those of a chapter file (any format --format names).",
                                                            valueName: "FILE"))
    var importFile: String?

    @Flag(help: "Remove every chapter.")
    var remove = false

    @Flag(help: "Print the chapters in --format (by default `HH:MM:SS.mmm Title` lines, the form --import reads).")
    var export = false

    @Option(help: ArgumentHelp("The format --export and --from-silence print.", valueName: "text|json|podlove|podcast-json|ffmetadata|cue|webvtt"))
    var format: ChapterFile.Format = .text

    @Option(help: ArgumentHelp("Propose chapters after silences of at least this many seconds.", valueName: "MIN_SECONDS"))
    var fromSilence: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp("What --from-silence takes for silence: RMS below this, in dBFS.", valueName: "dBFS"))
    var silenceThreshold = -50.0

    @Flag(help: "Print the chapters as JSON.")
    var json = false

    func validate() throws {
        if importFile != nil && remove { throw ValidationError("give --import or --remove, not both") }
        if export && json { throw ValidationError("give --export or --json, not both") }
        if (export || json) && remove { throw ValidationError("--remove leaves no chapters to print; give it without --export or --json") }
        if let fromSilence {
            guard fromSilence > 0, fromSilence < 1e6 else { throw ValidationError("--from-silence takes seconds above 0") }
            guard importFile == nil, !remove else { throw ValidationError("--from-silence proposes chapters; give it without --import or --remove") }
        }
        guard (-120.0 ... 0).contains(silenceThreshold) else { throw ValidationError("--silence-threshold is -120 to 0 dBFS") }
    }

    /// Whether `path` names a chapter file rather than audio, by its extension.
    static func isChapterFile(_ path: String) -> Bool {
        let lower = path.lowercased()
        return [".txt", ".json", ".xml", ".psc", ".cue", ".vtt", ".ffmeta", ".ffmetadata", ".chapters"].contains { lower.hasSuffix($0) }
    }

    func run() throws {
        try RemoteObjects.requireLocal([file], command: "chapters")
        let path = FilePath(file)
        if let fromSilence {
            let silences = try SilenceChapters.silences(in: path, minimumSeconds: fromSilence, thresholdDBFS: silenceThreshold,
                                                        formats: Keyframe.formats)
            let duration = (try? ProbeReport(libavformatSummaryOf: path))?.duration ?? .infinity
            let starts = SilenceChapters.chapterStarts(silences, duration: duration)
            var entries = starts.enumerated().map { ChapterFile.Entry(start: $1, title: "Chapter \($0 + 1)") }
            // The last lasts to the end.
            if duration.isFinite, !entries.isEmpty { entries[entries.count - 1].end = duration }
            print(ChapterFile.render(entries, format: json ? .json : format).text, terminator: "")
            return
        }
        if Self.isChapterFile(file) {
            // A chapter file converted to --format.
            guard importFile == nil, !remove else { throw CommandFailure("\(file) is a chapter file: --import and --remove edit audio files", status: .usage) }
            let entries = try Self.entries(fromFile: file)
            output(entries)
            return
        }
        if let importFile {
            let entries = try Self.entries(fromFile: importFile)
            let dropped = ChapterFile.dropped(entries, holds: [])
            if !dropped.isEmpty {
                Terminal.warning("\(importFile): \(ChapterFile.describe(dropped)) dropped: \(file)'s chapters hold a start and a title")
            }
            let summary: Tagging.WriteSummary
            do { summary = try Tagging.writeChapters(entries.map { MovieChapter(seconds: $0.start, title: $0.title) }, to: path, formats: Keyframe.formats) } catch {
                throw CommandFailure(error, naming: file)
            }
            let written = try Tagging.readChapters(path, formats: Keyframe.formats).count
            if !json && !export { print("\(file): \(written) chapters written \(summary.inPlace ? "in place" : "by a rewrite")") }
        } else if remove {
            let summary: Tagging.WriteSummary
            do { summary = try Tagging.writeChapters([], to: path, formats: Keyframe.formats) } catch { throw CommandFailure(error, naming: file) }
            if !json && !export { print("\(file): chapters removed \(summary.inPlace ? "in place" : "by a rewrite")") }
        }
        guard importFile == nil && !remove || json || export else { return }
        let chapters: [MovieChapter]
        do { chapters = try Tagging.readChapters(path, formats: Keyframe.formats) } catch { throw CommandFailure(error, naming: file) }
        if json {
            try JSONOutput.print(chapters.map { ChapterLine(start: ($0.seconds * 1000).rounded() / 1000, title: $0.title) })
        } else {
            // The last chapter lasts to the end of the audio.
            var entries = chapters.map { ChapterFile.Entry(start: $0.seconds, title: $0.title) }
            if !entries.isEmpty, let duration = (try? ProbeReport(libavformatSummaryOf: path))?.duration, duration > entries[entries.count - 1].start {
                entries[entries.count - 1].end = duration
            }
            output(entries)
        }
    }

    /// Prints `entries` in --format (JSON with --json), naming what it drops on stderr.
    private func output(_ entries: [ChapterFile.Entry]) {
        let rendered = ChapterFile.render(entries, format: json ? .json : format)
        if !rendered.dropped.isEmpty {
            let held = (["start", "title"] + format.holds.sorted().map(\.rawValue)).joined(separator: ", ")
            Terminal.warning("\(ChapterFile.describe(rendered.dropped)) dropped: \(format.rawValue) holds a chapter's \(held)")
        }
        print(rendered.text, terminator: "")
    }

    /// The chapters of a chapter file, in the format its name or first bytes say.
    static func entries(fromFile path: String) throws -> [ChapterFile.Entry] {
        guard let data = FileManager.default.contents(atPath: path) else { throw CommandFailure("\(path): cannot be read", status: .unreadableInput) }
        let text = String(decoding: data, as: UTF8.self)
        return try ChapterFile.parse(text, format: ChapterFile.Format.detect(path: path, text: text), source: path)
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
