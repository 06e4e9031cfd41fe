import Foundation
import Testing
import TestSupport

/// `keyframe tag` and `keyframe chapters` on MP3 (ID3v2), FLAC (Vorbis comments and PICTURE)
/// and Ogg Opus (OpusTags), without re-encoding: mutagen and ffprobe read the edit back, and
/// FFmpeg's decode of the audio is the same bytes before and after. A small edit is written in
/// place in the tag's padding (MP3, FLAC); a cover larger than the padding rewrites the file.
@Suite(.blocking) struct NativeTaggingTests {
    static let formats = ["mp3", "flac", "opus"]

    @Test(arguments: formats)
    func tagsAndChaptersAreEditedWithoutTouchingTheAudio(format: String) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try MP3FileTests.taggedSource(in: directory)
        let file = directory.appendingPathComponent("out.\(format)").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", source.m4a, "-o", file])
        let audio = try CodecsBeyondAACTests.ffmpegPCM(file, in: directory, name: "before.raw")

        // A small edit: in place where the format keeps padding.
        let small = try ExternalTool.succeed(try ExternalTool.keyframe, ["tag", file, "--set", "title=Neap Tides", "--set", "mood=calm",
                                                                         "--remove", "comment"]).standardOutput
        #expect(small.contains(format == "opus" ? "by rewriting the file" : "in place"), "\(small)")
        // A cover larger than the padding: a rewrite.
        let cover = directory.appendingPathComponent("large.png").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=640x480", "-frames:v", "1", cover])
        let large = try ExternalTool.succeed(try ExternalTool.keyframe, ["tag", file, "--cover", cover]).standardOutput
        #expect(large.contains("by rewriting the file"), "\(large)")
        let chapters = directory.appendingPathComponent("chapters.txt").path
        try "00:00:00.000 Slack water\n00:00:06.250 Flood\n".write(toFile: chapters, atomically: true, encoding: .utf8)
        try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", file, "--import", chapters])
        let exported = try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", file, "--export"]).standardOutput
        #expect(exported == "00:00:00.000 Slack water\n00:00:06.250 Flood\n", "\(exported)")

        #expect(try CodecsBeyondAACTests.ffmpegPCM(file, in: directory, name: "after.raw") == audio, "the audio is untouched")
        #expect(try PeerQuirk.ffprobeWarnings(file).isEmpty)
        let mutagen = try ExternalTool.succeed(try MP4Check.venvPython, ["-c", """
            import mutagen, mutagen.flac, base64, hashlib, sys
            f = mutagen.File(sys.argv[1])
            if sys.argv[2] == "mp3":
                t = f.tags
                title, mood, comments = t["TIT2"].text[0], t["TXXX:mood"].text[0], len(t.getall("COMM"))
                artist = t["TPE1"].text[0]
                covers = [p.data for p in t.getall("APIC")]
                chapters = [(c.start_time, c.end_time, c.sub_frames["TIT2"].text[0]) for c in sorted(t.getall("CHAP"), key=lambda c: c.start_time)]
            else:
                title, mood, comments, artist = f["title"][0], f["mood"][0], len(f.get("comment", [])), f["artist"][0]
                if sys.argv[2] == "flac":
                    covers = [p.data for p in f.pictures]
                else:
                    covers = [mutagen.flac.Picture(base64.b64decode(v)).data for v in f["METADATA_BLOCK_PICTURE"]]
                chapters = [(f["CHAPTER001"][0], f["CHAPTER001NAME"][0]), (f["CHAPTER002"][0], f["CHAPTER002NAME"][0])]
                chapters.append("CHAPTER003" in f)
            print(title, "|", mood, "|", comments, "|", artist)
            print(len(covers), hashlib.sha256(covers[0]).hexdigest())
            print(chapters)
            """, file, format]).standardOutput
        let coverHash = try ExternalTool.succeed("sha256sum", [cover]).standardOutput.prefix(64)
        let chapterLine = format == "mp3" ? "[(0, 6250, 'Slack water'), (6250, 10000, 'Flood')]"
            : "[('00:00:00.000', 'Slack water'), ('00:00:06.250', 'Flood'), False]"
        #expect(mutagen == "Neap Tides | calm | 0 | Harbour Radio\n1 \(coverHash)\n\(chapterLine)\n", "\(mutagen)")
        let probe = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_chapters", "-of", "compact", file]).standardOutput
        #expect(probe.contains("start_time=6.250000") && probe.contains("tag:title=Flood"), "\(probe)")
    }

    /// Chapters imported into an MP3 follow the MP4 rules: sorted, the first from 0, those past
    /// the end dropped (an ID3 CHAP past the end is what FFmpeg warns of).
    @Test func importedChaptersAreSortedStartAtZeroAndStopAtTheEnd() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        let mp3 = directory.appendingPathComponent("out.mp3").path
        try CodecInteropTests.makeWAV(rate: 44100, channels: 2, seconds: 6, to: wav)
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", wav, "-o", mp3])
        let chapters = directory.appendingPathComponent("chapters.txt").path
        try "00:00:05 B\n00:00:01.000 A\n99:00:00 Past the end\n".write(toFile: chapters, atomically: true, encoding: .utf8)
        try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", mp3, "--import", chapters])
        let exported = try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", mp3, "--export"]).standardOutput
        #expect(exported == "00:00:00.000 A\n00:00:05.000 B\n", "\(exported)")
        #expect(try PeerQuirk.ffmpegWarnings(mp3).isEmpty)
    }

    /// A file whose tags no entry edits is refused, naming the formats that are edited.
    @Test func aFormatWithoutAnEditorIsRefused() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try CodecInteropTests.makeWAV(rate: 44100, channels: 2, seconds: 0.5, to: wav)
        let adts = directory.appendingPathComponent("in.aac").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", adts])
        let chapters = directory.appendingPathComponent("chapters.txt").path
        try "00:00:00.000 One\n".write(toFile: chapters, atomically: true, encoding: .utf8)
        let before = try Data(contentsOf: URL(fileURLWithPath: adts))
        for arguments in [["chapters", adts, "--import", chapters], ["tag", adts, "--set", "title=x"]] {
            let run = try ExternalTool.run(try ExternalTool.keyframe, arguments)
            #expect(run.status != 0)
            #expect(run.standardError.contains("ADTS") && run.standardError.contains(".m4a, .flac, .mp3, .opus"), "\(run.standardError)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: adts)) == before)
    }
    /// An ID3v2.3 tag edited is written as 2.4, its dates with it: `TYER` (not a 2.4 frame)
    /// becomes `TDRC`, so a date set later replaces it rather than standing beside it.
    @Test func anID3v23DateBecomesTDRC() throws {
        let scratch = try CodecInteropTests.scratchWAV(rate: 44100, channels: 2, seconds: 1)
        defer { scratch.remove() }
        let mp3 = scratch.directory.appendingPathComponent("v23.mp3").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", scratch.wav, "-c:a", "libmp3lame", "-id3v2_version", "3",
                                            "-metadata", "date=2019", "-metadata", "title=T", mp3])
        try ExternalTool.succeed(try ExternalTool.keyframe, ["tag", mp3, "--set", "artist=X"])
        let frames = """
            import mutagen.id3, sys
            tag = mutagen.id3.ID3(sys.argv[1])
            print(tag.version[1], sorted(tag.keys()), str(tag.get("TDRC", "")))
            """
        let upgraded = try ExternalTool.succeed(try MP4Check.venvPython, ["-c", frames, mp3]).standardOutput
        #expect(upgraded == "4 ['TDRC', 'TIT2', 'TPE1', 'TSSE'] 2019\n", "\(upgraded)")
        try ExternalTool.succeed(try ExternalTool.keyframe, ["tag", mp3, "--set", "date=2021"])
        let dated = try ExternalTool.succeed(try MP4Check.venvPython, ["-c", frames, mp3]).standardOutput
        #expect(dated == "4 ['TDRC', 'TIT2', 'TPE1', 'TSSE'] 2021\n", "\(dated)")
        let ffprobe = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "format_tags=date", "-of", "csv=p=0", mp3]).standardOutput
        #expect(ffprobe.trimmingCharacters(in: .whitespacesAndNewlines) == "2021")
        // The frames as written (mutagen reads TYER as TDRC whatever the file holds).
        let head = try Data(contentsOf: URL(fileURLWithPath: mp3)).prefix(4096)
        #expect(head.range(of: Data("TDRC".utf8)) != nil && head.range(of: Data("TYER".utf8)) == nil)
        // A TYER that is no year stays as it is rather than be lost.
        let odd = scratch.directory.appendingPathComponent("odd.mp3").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", scratch.wav, "-c:a", "libmp3lame", odd])
        try ExternalTool.succeed(try MP4Check.venvPython, ["-c", """
            import mutagen.id3, sys
            tag = mutagen.id3.ID3()
            tag.add(mutagen.id3.TYER(encoding=1, text="circa 1990"))
            tag.save(sys.argv[1], v2_version=3)
            """, odd])
        try ExternalTool.succeed(try ExternalTool.keyframe, ["tag", odd, "--set", "artist=X"])
        let oddHead = try Data(contentsOf: URL(fileURLWithPath: odd)).prefix(4096)
        #expect(oddHead.range(of: Data("TYER".utf8)) != nil && oddHead.range(of: Data("TDRC".utf8)) == nil)
    }
}
