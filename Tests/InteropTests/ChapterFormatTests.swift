import Foundation
import Testing
import TestSupport

/// Issue 39, item 7: `chapters` reads and writes Podlove Simple Chapters, Podcasting 2.0 JSON,
/// FFMETADATA, CUE, WebVTT, text and JSON. Each format round-trips every field it holds, a field
/// it cannot hold is named as dropped, FFmpeg reads the FFMETADATA and WebVTT written, and
/// `--from-silence` proposes a chapter where the sound comes back.
@Suite struct ChapterFormatTests {
    static let source = """
        {"version": "1.2.0", "chapters": [
         {"startTime": 0, "title": "Intro", "img": "https://example.com/a.jpg", "url": "https://example.com/a"},
         {"startTime": 12.5, "endTime": 30, "title": "Main & <more> \\"quoted\\"", "url": "https://example.com/b"},
         {"startTime": 30, "endTime": 40, "title": "Outro"}]}
        """

    /// (format, extension, fields besides start and title it holds).
    static let formats: [(String, String, Set<String>)] = [
        ("text", "txt", []), ("json", "json", []), ("podlove", "xml", ["url", "image"]), ("podcast-json", "json", ["end", "url", "image"]),
        ("ffmetadata", "ffmeta", ["end"]), ("cue", "cue", []), ("webvtt", "vtt", ["end"]),
    ]

    @Test func everyFormatRoundTripsWhatItHoldsAndNamesWhatItDrops() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("chapters.json").path
        try Data(Self.source.utf8).write(to: URL(fileURLWithPath: input))
        for (format, ext, holds) in Self.formats {
            let first = directory.appendingPathComponent("first-\(format).\(ext)").path
            let run = try ExternalTool.run(try ExternalTool.keyframe, ["chapters", input, "--export", "--format", format])
            #expect(run.status == 0, "\(format): \(run.standardError)")
            try Data(run.standardOutput.utf8).write(to: URL(fileURLWithPath: first))
            // What the source has and the format does not hold is named.
            for (field, words) in [("url", "2 chapter URLs"), ("image", "1 chapter image")] where !holds.contains(field) {
                #expect(run.standardError.contains(words), "\(format) drops \(field): \(run.standardError)")
            }
            if holds.contains("url") { #expect(!run.standardError.contains("URL"), "\(format) holds URLs: \(run.standardError)") }
            // Read back and written again: the same text (every field it holds kept).
            let again = try ExternalTool.run(try ExternalTool.keyframe, ["chapters", first, "--export", "--format", format])
            #expect(again.status == 0 && again.standardOutput == run.standardOutput, "\(format): \(again.standardOutput) \(again.standardError)")
            // And through JSON, the titles and starts (CUE's to 1/75 s).
            let json = try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", first, "--export", "--format", "json"])
            let lines = try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [[String: Any]] ?? []
            #expect(lines.map { $0["title"] as? String } == ["Intro", "Main & <more> \"quoted\"", "Outro"] || format == "cue",
                    "\(format): \(lines)")
            let starts = lines.map { $0["start"] as? Double ?? -1 }
            #expect(zip(starts, [0, 12.5, 30]).allSatisfy { abs($0 - $1) <= (format == "cue" ? 1 / 75.0 : 0.0005) }, "\(format): \(starts)")
        }
        // Peers: the Podcasting 2.0 JSON and Podlove XML parse, with their fields.
        let podcast = try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", input, "--export", "--format", "podcast-json"])
        let object = try JSONSerialization.jsonObject(with: Data(podcast.standardOutput.utf8)) as? [String: Any]
        let chapters = object?["chapters"] as? [[String: Any]] ?? []
        #expect(object?["version"] as? String == "1.2.0" && chapters.first?["img"] as? String == "https://example.com/a.jpg"
                && chapters[1]["endTime"] as? Double == 30, "\(podcast.standardOutput)")
        let podlove = directory.appendingPathComponent("first-podlove.xml").path
        let parsed = try ExternalTool.succeed("python3", ["-c", """
            import sys, xml.etree.ElementTree as ET
            ns = {'psc': 'http://podlove.org/simple-chapters'}
            print('|'.join(c.get('title') + '@' + c.get('start') + '@' + (c.get('href') or '') for c in ET.parse(sys.argv[1]).getroot().findall('psc:chapter', ns)))
            """, podlove])
        #expect(parsed.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
                == "Intro@00:00:00.000@https://example.com/a|Main & <more> \"quoted\"@00:00:12.500@https://example.com/b|Outro@00:00:30.000@",
                "\(parsed.standardOutput)")
    }

    @Test func aMediaFileTakesStartsAndTitlesAndFFmpegReadsTheExports() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let audio = directory.appendingPathComponent("episode.m4a").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=40:r=44100", "-c:a", "aac", audio])
        let input = directory.appendingPathComponent("chapters.json").path
        try Data(Self.source.utf8).write(to: URL(fileURLWithPath: input))
        let imported = try ExternalTool.run(try ExternalTool.keyframe, ["chapters", audio, "--import", input])
        #expect(imported.status == 0 && imported.standardError.contains("2 chapter URLs") && imported.standardError.contains("dropped"),
                "the media file holds starts and titles: \(imported.standardError)")
        // FFMETADATA and WebVTT exports, read by FFmpeg: the chapters (the last to the end) and cues.
        let ffmeta = directory.appendingPathComponent("chapters.ffmeta").path
        try Data(try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", audio, "--export", "--format", "ffmetadata"]).standardOutput.utf8)
            .write(to: URL(fileURLWithPath: ffmeta))
        let remuxed = directory.appendingPathComponent("remuxed.mka").path
        try MP4Check.ffmpeg(["-i", audio, "-i", ffmeta, "-map", "0:a", "-map_chapters", "1", "-c", "copy", remuxed])
        let probe = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_chapters", "-of", "json", remuxed])
        let listed = (try JSONSerialization.jsonObject(with: Data(probe.standardOutput.utf8)) as? [String: Any])?["chapters"] as? [[String: Any]] ?? []
        #expect(listed.map { ($0["tags"] as? [String: Any])?["title"] as? String } == ["Intro", "Main & <more> \"quoted\"", "Outro"], "\(listed)")
        #expect(listed.map { $0["start_time"] as? String } == ["0.000000", "12.500000", "30.000000"], "\(listed)")
        let vtt = directory.appendingPathComponent("chapters.vtt").path
        try Data(try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", audio, "--export", "--format", "webvtt"]).standardOutput.utf8)
            .write(to: URL(fileURLWithPath: vtt))
        let cues = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "packet=pts_time,duration_time", "-of", "csv=p=0", vtt])
        // (A packet's side data adds a comma to each line.)
        let timings = cues.standardOutput.split(whereSeparator: \.isNewline).map { $0.split(separator: ",").prefix(2).joined(separator: ",") }
        #expect(timings == ["0.000000,12.500000", "12.500000,17.500000", "30.000000,10.000000"], "\(cues.standardOutput)")
    }

    @Test func silencesProposeChapters() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let audio = directory.appendingPathComponent("book.wav").path
        // 3 s of tone, 2 s of silence, 4 s of tone, 0.5 s of silence, 2 s of tone.
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=f=300:d=3,apad=pad_dur=2[a];sine=f=500:d=4,apad=pad_dur=0.5[b];sine=f=700:d=2[c];[a][b][c]concat=n=3:v=0:a=1",
                             audio])
        let proposed = try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", audio, "--from-silence", "1.5", "--format", "json"])
        let lines = try JSONSerialization.jsonObject(with: Data(proposed.standardOutput.utf8)) as? [[String: Any]] ?? []
        let starts = lines.map { $0["start"] as? Double ?? -1 }
        #expect(starts.count == 2 && starts[0] == 0 && abs(starts[1] - 5) < 0.03, "a chapter where the sound comes back after 2 s: \(starts)")
        let finer = try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", audio, "--from-silence", "0.4", "--format", "text"])
        #expect(finer.standardOutput.split(whereSeparator: \.isNewline).count == 3, "\(finer.standardOutput)")
    }
}
