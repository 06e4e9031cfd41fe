import Foundation
import Testing
import TestSupport

/// Issue 12, items 2–4: `keyframe chapters`, `cut`, `split` and `join`. Cuts are exact to the
/// sample (the cut decodes to the same samples as the whole file, bit for bit, for a source
/// without PNS), split then join gives back the original, FFmpeg plays every output without a
/// warning at lag 0, ffprobe and mutagen read the chapters, and `keyframe validate` says nothing
/// on any cut, part or join (issue 21; ADTS outputs are not MP4 and are not validated).
@Suite(.blocking) struct EditCommandTests {
    static let rate = 48000

    /// An M4A from FFmpeg's encoder with PNS off (PNS draws noise from a generator whose state
    /// runs on from packet to packet, so a decoder that starts elsewhere draws other noise).
    static func makeSource(in directory: URL, seconds: Double = 12, name: String = "source", rate: Int = rate) throws -> String {
        let wav = directory.appendingPathComponent("\(name).wav").path
        try GaplessTests.makeSignal(rate: rate, channels: 2, frames: Int(seconds * Double(rate)), to: wav)
        let m4a = directory.appendingPathComponent("\(name).m4a").path
        try MP4Check.ffmpeg(["-i", wav, "-c:a", "aac", "-aac_pns", "0", "-b:a", "128k", m4a])
        return m4a
    }

    static func decode(_ file: String, in directory: URL) throws -> GaplessTests.PCM {
        let wav = directory.appendingPathComponent(UUID().uuidString + ".wav").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", file, "-o", wav])
        return try GaplessTests.pcm(wav, channels: 2)
    }

    static func ffmpegDecode(_ file: String, in directory: URL, map: String = "0:a") throws -> GaplessTests.PCM {
        let wav = directory.appendingPathComponent(UUID().uuidString + ".wav").path
        let run = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", file, "-map", map, "-c:a", "pcm_s16le", wav])
        #expect(run.status == 0 && run.standardError.isEmpty, "ffmpeg on \(file): \(run.standardError)")
        return try GaplessTests.pcm(wav, channels: 2)
    }

    static func frames(_ pcm: GaplessTests.PCM, _ range: Range<Int>) -> ArraySlice<Int16> {
        pcm.samples[(range.lowerBound * 2)..<(range.upperBound * 2)]
    }

    static func ffprobeChapters(_ file: String) throws -> [(start: Double, end: Double, title: String)] {
        let run = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_chapters", "-of", "json", file])
        let object = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
        return (object?["chapters"] as? [[String: Any]] ?? []).map { chapter in
            (Double(chapter["start_time"] as? String ?? "") ?? -1, Double(chapter["end_time"] as? String ?? "") ?? -1,
             (chapter["tags"] as? [String: Any])?["title"] as? String ?? "")
        }
    }

    static func mutagenChapters(_ file: String) throws -> [(start: Double, title: String)] {
        let script = "import sys, json, mutagen.mp4 as m\nf = m.MP4(sys.argv[1])\nprint(json.dumps([[c.start, c.title] for c in (f.chapters or [])]))"
        let run = try ExternalTool.succeed("python3", ["-c", script, file])
        let list = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [[Any]] ?? []
        return list.map { (($0.first as? Double) ?? ($0.first as? Int).map(Double.init) ?? -1, $0.last as? String ?? "") }
    }

    @Test func aCutDecodesToTheSameSamplesAsTheWholeFileAndKeepsTagsAndChapters() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.makeSource(in: directory)
        try ExternalTool.succeed(try ExternalTool.keyframe, ["tag", source, "--set", "title=Whole", "--set", "artist=Someone"])
        let chapterList = directory.appendingPathComponent("chapters.txt").path
        try "00:00:00.000 One\n00:00:02.000 Two\n00:00:05.500 Three\n00:00:09.000 Four\n".write(toFile: chapterList, atomically: true, encoding: .utf8)
        try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", source, "--import", chapterList])
        let whole = try Self.decode(source, in: directory)
        // Cuts at odd samples, on a packet boundary, from the very start, and to the very end.
        let cuts: [(start: String, end: String?, range: Range<Int>)] = [
            ("3.1", "7.25", 148_800..<348_000), ("48000s", "96001s", 48000..<96001), ("0", "1025s", 0..<1025),
            ("1024s", "2048s", 1024..<2048), ("11.5", nil, 552_000..<576_000),
        ]
        for (index, cut) in cuts.enumerated() {
            let output = directory.appendingPathComponent("cut\(index).m4a").path
            try ExternalTool.succeed(try ExternalTool.keyframe, ["cut", source, "-o", output, "--start", cut.start] + (cut.end.map { ["--end", $0] } ?? []))
            let decoded = try Self.decode(output, in: directory)
            #expect(decoded.frames == cut.range.count, "cut \(cut): \(decoded.frames) frames")
            let cutIsExact = decoded.samples[...] == Self.frames(whole, cut.range)
            #expect(cutIsExact, "cut \(cut) equals the whole file's samples bit for bit")
            // FFmpeg plays it from the right sample (5.1 keeps the padding at the end).
            let theirs = try Self.ffmpegDecode(output, in: directory)
            let shared = min(theirs.frames, cut.range.count)
            let ffmpegLinesUp = theirs.frames >= cut.range.count && theirs.samples[..<(shared * 2)] == decoded.samples[..<(shared * 2)]
            #expect(ffmpegLinesUp, "FFmpeg lines up at lag 0")
            // iTunSMPB agrees with the edit list.
            let probe = try ExternalTool.probeJSON(output)
            let track = (probe["tracks"] as? [[String: Any]])?.first
            let tags = try ConvertTagsTests.mutagenTags(output)
            let smpb = (tags["----:com.apple.iTunes:iTunSMPB"] as? [String])?.first?.split(separator: " ").map(String.init) ?? []
            #expect(smpb.count >= 4 && Int(smpb[1], radix: 16) == track?["priming"] as? Int && Int(smpb[3], radix: 16) == cut.range.count,
                    "iTunSMPB \(smpb) for priming \(String(describing: track?["priming"]))")
            #expect((tags["©nam"] as? [String]) == ["Whole"] && (tags["©ART"] as? [String]) == ["Someone"], "tags kept")
        }
        try ValidationCheck.expectSilent(cuts.indices.map { directory.appendingPathComponent("cut\($0).m4a").path }, "cut source.m4a (tagged, chaptered)")
        // Chapters shifted and clipped: the cut 3.1–7.25 s starts inside "Two".
        let chapters = try Self.ffprobeChapters(directory.appendingPathComponent("cut0.m4a").path)
        #expect(chapters.map(\.title) == ["Two", "Three"], "\(chapters)")
        #expect(chapters.count == 2 && abs(chapters[0].start) < 0.0005 && abs(chapters[1].start - 2.4) < 0.0005 && abs(chapters[1].end - 4.15) < 0.0005,
                "\(chapters)")
    }

    @Test func aCutFromADTSIsAnM4AOfTheSameSamples() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try GaplessTests.makeSignal(rate: 44100, channels: 2, frames: 44100 * 6, to: wav)
        let adts = directory.appendingPathComponent("in.aac").path
        try MP4Check.ffmpeg(["-i", wav, "-c:a", "aac", "-aac_pns", "0", adts])
        let whole = try Self.decode(adts, in: directory)
        let output = directory.appendingPathComponent("cut.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["cut", adts, "-o", output, "--start", "1.5", "--end", "4.000023"])
        let decoded = try Self.decode(output, in: directory)
        let range = 66150..<176401
        #expect(decoded.frames == range.count)
        let adtsCutIsExact = decoded.samples[...] == Self.frames(whole, range)
        #expect(adtsCutIsExact, "the cut equals the ADTS stream's samples")
        let theirs = try Self.ffmpegDecode(output, in: directory)
        let ffmpegLinesUpOnTheADTSCut = theirs.samples.prefix(range.count * 2) == decoded.samples[...].prefix(range.count * 2)
        #expect(ffmpegLinesUpOnTheADTSCut, "FFmpeg lines up at lag 0")
        try ValidationCheck.expectSilent([output], "cut in.aac -o cut.m4a --start 1.5 --end 4.000023")
    }

    @Test func splitThenJoinGivesBackTheOriginalAndFFmpegPlaysTheJoin() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.makeSource(in: directory, seconds: 10)
        let whole = try Self.decode(source, in: directory)
        let parts = directory.appendingPathComponent("parts")
        try FileManager.default.createDirectory(at: parts, withIntermediateDirectories: true)
        let split = try ExternalTool.succeed(try ExternalTool.keyframe, ["split", source, "--at", "2.5,4.0001,4.02,300000s", "-o", parts.path + "/", "--json"])
        let summaries = try JSONSerialization.jsonObject(with: Data(split.standardOutput.utf8)) as? [[String: Any]] ?? []
        let files = summaries.compactMap { $0["output"] as? String }
        #expect(files.count == 5 && files.allSatisfy { $0.hasSuffix(".m4a") && FileManager.default.fileExists(atPath: $0) }, "\(files)")
        // Each part is gapless: its samples are the original's.
        var offset = 0
        for file in files {
            let part = try Self.decode(file, in: directory)
            let partIsExact = part.samples[...] == Self.frames(whole, offset..<(offset + part.frames))
            #expect(partIsExact, "\(file) at \(offset)")
            offset += part.frames
        }
        #expect(offset == whole.frames)
        let joined = directory.appendingPathComponent("joined.m4b").path
        let join = try ExternalTool.succeed(try ExternalTool.keyframe, ["join"] + files + ["-o", joined])
        #expect(join.standardOutput.contains("5 chapters"), "\(join.standardOutput)")
        let decoded = try Self.decode(joined, in: directory)
        let roundTripIsExact = decoded.samples == whole.samples
        #expect(roundTripIsExact, "split then join gives back the original, bit for bit")
        // FFmpeg honours every edit's start and inner end; it keeps the last part's padding.
        let theirs = try Self.ffmpegDecode(joined, in: directory)
        let ffmpegPlaysTheJoin = theirs.frames >= whole.frames && theirs.samples[..<whole.samples.count] == whole.samples[...]
        #expect(ffmpegPlaysTheJoin, "FFmpeg plays the join at lag 0")
        // A chapter per part, named after the file; an audiobook brand for .m4b.
        let chapters = try Self.ffprobeChapters(joined)
        #expect(chapters.map(\.title) == files.map { URL(fileURLWithPath: $0).deletingPathExtension().lastPathComponent })
        #expect(zip(chapters.dropFirst(), [2.5, 4.0001, 4.02, 6.25]).allSatisfy { abs($0.start - $1) < 0.0005 }, "\(chapters)")
        #expect(try Self.mutagenChapters(joined).map(\.title) == chapters.map(\.title))
        // Parts out of order, and a whole file twice (its last packet is short: 1024 samples
        // decode from it all the same): the join is the parts' audio one after another.
        let shuffled = directory.appendingPathComponent("shuffled.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["join", files[2], files[0], files[3], "-o", shuffled])
        let pieces = try [files[2], files[0], files[3]].map { try Self.decode($0, in: directory).samples }
        let shuffledIsExact = try Self.decode(shuffled, in: directory).samples == pieces.flatMap { $0 }
        #expect(shuffledIsExact, "parts out of order")
        let twice = directory.appendingPathComponent("twice.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["join", source, source, "-o", twice])
        let twiceIsExact = try Self.decode(twice, in: directory).samples == whole.samples + whole.samples
        #expect(twiceIsExact, "a file joined to itself")
        // FFmpeg 5.1 plays it without a warning, the first part at lag 0; at the join it plays
        // the rest of the packet that holds the first part's end (512 samples here: the DocC
        // article EditingWithoutReencoding.md).
        let theirsTwice = try Self.ffmpegDecode(twice, in: directory)
        let firstPartLinesUp = theirsTwice.samples.prefix(whole.samples.count) == whole.samples[...]
        #expect(firstPartLinesUp && theirsTwice.frames >= 2 * whole.frames && theirsTwice.frames < 2 * whole.frames + 3 * 1024,
                "FFmpeg: \(theirsTwice.frames) frames")
        try ValidationCheck.expectSilent(files + [joined, shuffled, twice], "split source.m4a --at 2.5,4.0001,4.02,300000s, then join (in order, shuffled, twice)")
        let brand = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "format_tags=major_brand", "-of", "csv=p=0", joined])
        #expect(brand.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "M4B")
    }

    @Test func splitAtChaptersMakesAPartPerChapterTitledByIt() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.makeSource(in: directory, seconds: 6, name: "book")
        let m4b = directory.appendingPathComponent("book.m4b").path
        try FileManager.default.moveItem(atPath: source, toPath: m4b)
        let list = directory.appendingPathComponent("chapters.txt").path
        try "0 Opening\n00:00:01.500 Middle\n0:04.25 End\n".write(toFile: list, atomically: true, encoding: .utf8)
        try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", m4b, "--import", list])
        let whole = try Self.decode(m4b, in: directory)
        let parts = directory.appendingPathComponent("chapters")
        try FileManager.default.createDirectory(at: parts, withIntermediateDirectories: true)
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["split", m4b, "--chapters", "-o", parts.path, "--json"])
        let files = (try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [[String: Any]] ?? []).compactMap { $0["output"] as? String }
        #expect(files.map { URL(fileURLWithPath: $0).lastPathComponent } == ["book-01.m4b", "book-02.m4b", "book-03.m4b"])
        var samples: [Int16] = []
        for (number, file) in files.enumerated() {
            let tags = try TagCommandTests.ourTags(file)
            #expect(tags["©nam"] == ["Opening", "Middle", "End"][number] && tags["trkn"] == "\(number + 1)/3", "\(file): \(tags)")
            samples += try Self.decode(file, in: directory).samples
        }
        let partsAreTheWhole = samples == whole.samples
        #expect(partsAreTheWhole, "the parts are the book's samples, in order")
        let middleFrames = try Self.decode(files[1], in: directory).frames
        #expect(middleFrames == 132_000, "4.25 s − 1.5 s at 48 kHz")
        // Joined back, the chapters are the parts' titles again.
        let again = directory.appendingPathComponent("again.m4b").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["join"] + files + ["-o", again])
        #expect(try Self.ffprobeChapters(again).map(\.title) == ["Opening", "Middle", "End"])
        let joinedIsTheBook = try Self.decode(again, in: directory).samples == whole.samples
        #expect(joinedIsTheBook)
        try ValidationCheck.expectSilent(files + [again], "split book.m4b --chapters, then join")
    }

    @Test func inputsThatCannotBeJoinedLosslesslyNameTheField() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = try Self.makeSource(in: directory, seconds: 1, name: "a")
        let b = try Self.makeSource(in: directory, seconds: 1, name: "b", rate: 44100)
        let output = directory.appendingPathComponent("out.m4a").path
        let run = try ExternalTool.run(try ExternalTool.keyframe, ["join", a, b, "-o", output])
        #expect(run.status != 0 && run.standardError.contains("sampling frequency (48000 Hz vs 44100 Hz)"), "\(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test func chaptersAreWrittenBothWaysAndPeersReadThem() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.makeSource(in: directory, seconds: 8)
        let json = directory.appendingPathComponent("chapters.json").path
        try #"[{"start": 0, "title": "Opening"}, {"start": "00:00:03.141", "title": "Pï"}, {"start": 6.5, "title": "End"}]"#
            .write(toFile: json, atomically: true, encoding: .utf8)
        let before = try Self.decode(source, in: directory)
        try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", source, "--import", json])
        let chapters = try Self.ffprobeChapters(source)
        #expect(chapters.map(\.title) == ["Opening", "Pï", "End"])
        #expect(chapters.count == 3 && abs(chapters[1].start - 3.141) < 0.0005 && abs(chapters[2].start - 6.5) < 0.0005 && abs(chapters[2].end - 8) < 0.0005)
        let nero = try Self.mutagenChapters(source)
        #expect(nero.map(\.title) == ["Opening", "Pï", "End"] && nero.count == 3 && abs(nero[1].start - 3.141) < 0.0005, "mutagen reads the chpl: \(nero)")
        let audioIsUntouched = try Self.decode(source, in: directory).samples == before.samples
        #expect(audioIsUntouched, "the audio is untouched")
        let export = try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", source, "--export"]).standardOutput
        #expect(export == "00:00:00.000 Opening\n00:00:03.141 Pï\n00:00:06.500 End\n")
        // A second import goes in place (the padding holds the new track), a removal too.
        let text = directory.appendingPathComponent("chapters.txt").path
        try "0:00 A\n0:04.000 B\n".write(toFile: text, atomically: true, encoding: .utf8)
        let again = try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", source, "--import", text])
        #expect(again.standardOutput.contains("in place"), "\(again.standardOutput)")
        #expect(try Self.ffprobeChapters(source).map(\.title) == ["A", "B"])
        let removal = try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", source, "--remove"])
        #expect(removal.standardOutput.contains("in place"))
        #expect(try Self.ffprobeChapters(source).isEmpty && (try Self.mutagenChapters(source)).isEmpty)
        let check = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", source, "-f", "null", "-"])
        #expect(check.status == 0 && check.standardError.isEmpty, "\(check.standardError)")
    }

    @Test func chaptersFFmpegWritesAreRead() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try GaplessTests.makeSignal(rate: 44100, channels: 2, frames: 44100 * 5, to: wav)
        let metadata = directory.appendingPathComponent("meta.txt").path
        try ";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=1500\ntitle=Un\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=1500\nEND=5000\ntitle=Deux\n"
            .write(toFile: metadata, atomically: true, encoding: .utf8)
        let m4b = directory.appendingPathComponent("book.m4b").path
        try MP4Check.ffmpeg(["-i", wav, "-i", metadata, "-map_metadata", "1", "-map_chapters", "1", "-c:a", "aac", m4b])
        let listed = try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", m4b]).standardOutput
        #expect(listed == "00:00:00.000 Un\n00:00:01.500 Deux\n", "\(listed)")
    }

    @Test func aBrokenChapterListIsAClearErrorAndTheFileIsUntouched() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.makeSource(in: directory, seconds: 2)
        try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", source, "--import", {
            let path = directory.appendingPathComponent("c.txt").path
            try? "0 A\n1 B\n".write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }()])
        // Make the chapter track's second title claim 300 bytes of its 15-byte sample.
        var text = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source)))
        let encd = try #require(text.indices.last { text[$0..<min($0 + 4, text.count)].elementsEqual(Array("encd".utf8)) })
        // The sample before `encd`'s size field is "B" with length 1: claim 300 bytes.
        text[encd - 4 - 1 - 2] = 0x01
        text[encd - 4 - 1 - 1] = 0x2C
        let badText = directory.appendingPathComponent("badtext.m4a").path
        try Data(text).write(to: URL(fileURLWithPath: badText))
        // The Nero list is read instead, as a player would.
        let fallback = try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", badText]).standardOutput
        #expect(fallback == "00:00:00.000 A\n00:00:01.000 B\n", "\(fallback)")
        // With the chpl broken too (a count past its bytes), a clear error.
        let chpl = try #require(text.indices.first { text[$0..<min($0 + 4, text.count)].elementsEqual(Array("chpl".utf8)) })
        text[chpl + 4 + 8] = 200
        try Data(text).write(to: URL(fileURLWithPath: badText))
        let textSum = try TagCommandTests.sha(badText)
        let list = try ExternalTool.run(try ExternalTool.keyframe, ["chapters", badText])
        #expect(list.status != 0 && list.standardError.contains("text length of chapter"), "\(list.standardError)")
        // A cut carries no chapters it cannot read, and leaves the source alone.
        let cutPath = directory.appendingPathComponent("o.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["cut", badText, "-o", cutPath, "--start", "0.5"])
        #expect(try Self.ffprobeChapters(cutPath).isEmpty)
        try ValidationCheck.expectSilent([cutPath], "cut badtext.m4a (its chapters unreadable) --start 0.5")
        #expect(try TagCommandTests.sha(badText) == textSum)
        let rewrite = try ExternalTool.run(try ExternalTool.keyframe, ["chapters", badText, "--import", directory.appendingPathComponent("c.txt").path])
        #expect(rewrite.status == 0, "new chapters replace broken ones: \(rewrite.standardError)")
        #expect(try TagCommandTests.sha(badText) != textSum)
        let listed = try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", badText]).standardOutput
        #expect(listed == "00:00:00.000 A\n00:00:01.000 B\n")
        // A chapter file that is not one: an error naming the line, the file unchanged.
        let junk = directory.appendingPathComponent("junk.txt").path
        try "0 A\nlater B\n".write(toFile: junk, atomically: true, encoding: .utf8)
        let before = try TagCommandTests.sha(badText)
        let refused = try ExternalTool.run(try ExternalTool.keyframe, ["chapters", badText, "--import", junk])
        #expect(refused.status != 0 && refused.standardError.contains("line 2"), "\(refused.standardError)")
        #expect(try TagCommandTests.sha(badText) == before)
    }
}
