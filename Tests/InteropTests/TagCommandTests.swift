import Foundation
import Testing
import TestSupport

/// Issue 12, item 1 (first part): `keyframe tag`. mutagen and AtomicParsley read what we write;
/// we keep what mutagen writes; edits go in place when they fit the padding every M4A we write
/// now carries, else by a rewrite; the gapless edit list and iTunSMPB survive; a failed edit
/// leaves the file as it was.
@Suite(.blocking) struct TagCommandTests {
    static func sha(_ path: String) throws -> Data {
        try ExternalTool.succeed("sha256sum", [path]).outputData
    }

    static func makeM4A(in directory: URL, frames: Int = 44100 * 2 + 17) throws -> String {
        let wav = directory.appendingPathComponent("in.wav").path
        try GaplessTests.makeSignal(rate: 44100, channels: 2, frames: frames, to: wav)
        let m4a = directory.appendingPathComponent("song.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", wav, "-o", m4a])
        return m4a
    }

    @Test func tagsGoInPlaceThenARewriteForCoversAndPeersReadThem() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let frames = 44100 * 2 + 17
        let m4a = try Self.makeM4A(in: directory, frames: frames)
        let size = try FileManager.default.attributesOfItem(atPath: m4a)[.size] as? Int
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, [
            "tag", m4a, "--set", "title=Tïtle", "--set", "artist=The Artist", "--set", "track=3/12", "--set", "disc=1/2",
            "--set", "media_kind=podcast", "--set", "compilation=yes", "--set", "tempo=98", "--set", "lyrics=la la",
            "--set", "sort_artist=Artist, The", "--set", "com.apple.iTunes:ISRC=USRC17607839",
        ])
        #expect(run.standardOutput.contains("in place"), "\(run.standardOutput)")
        #expect(try FileManager.default.attributesOfItem(atPath: m4a)[.size] as? Int == size, "an in-place edit keeps the size")
        var tags = try ConvertTagsTests.mutagenTags(m4a)
        #expect((tags["©nam"] as? [String]) == ["Tïtle"] && (tags["©ART"] as? [String]) == ["The Artist"])
        #expect((tags["trkn"] as? [[Int]]) == [[3, 12]] && (tags["disk"] as? [[Int]]) == [[1, 2]])
        #expect((tags["stik"] as? [Int]) == [21] && (tags["tmpo"] as? [Int]) == [98] && (tags["©lyr"] as? [String]) == ["la la"])
        #expect((tags["soar"] as? [String]) == ["Artist, The"] && tags["cpil"] as? Bool == true)
        #expect((tags["----:com.apple.iTunes:ISRC"] as? [String]) == ["USRC17607839"])
        #expect(tags["----:com.apple.iTunes:iTunSMPB"] != nil, "iTunSMPB kept")
        let atomic = try ExternalTool.succeed("AtomicParsley", [m4a, "-t"]).standardOutput
        #expect(atomic.contains("Atom \"©nam\" contains: Tïtle") && atomic.contains("Atom \"trkn\" contains: 3 of 12"), "\(atomic)")

        // Two covers do not fit the padding: a rewrite, committed whole.
        let jpeg = directory.appendingPathComponent("big.jpg").path
        let png = directory.appendingPathComponent("small.png").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "cellauto=s=320x320", "-frames:v", "1", "-q:v", "2", jpeg])
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "color=c=red:s=16x16", "-frames:v", "1", png])
        let rewrite = try ExternalTool.succeed(try ExternalTool.keyframe, ["tag", m4a, "--cover", jpeg, "--cover", png])
        #expect(rewrite.standardOutput.contains("rewriting"), "\(rewrite.standardOutput)")
        tags = try ConvertTagsTests.mutagenTags(m4a)
        let covers = tags["covr"] as? [[Any]] ?? []
        let hex = { (path: String) in try Data(contentsOf: URL(fileURLWithPath: path)).map { String(format: "%02x", $0) }.joined() }
        let (jpegHex, pngHex) = (try hex(jpeg), try hex(png))
        let firstMatches = covers.count == 2 && covers[0].first as? Int == 13 && covers[0].last as? String == jpegHex
        let secondMatches = covers.count == 2 && covers[1].first as? Int == 14 && covers[1].last as? String == pngHex
        #expect(firstMatches && secondMatches, "covers as mutagen reads them")
        #expect((tags["©nam"] as? [String]) == ["Tïtle"], "the other tags survive the rewrite")
        #expect(try ExternalTool.succeed("AtomicParsley", [m4a, "-t"]).standardOutput.contains("2 pieces of artwork"))
        // The media moved: every sample is still found, gapless.
        let decoded = directory.appendingPathComponent("decoded.wav").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", m4a, "-o", decoded])
        #expect(try GaplessTests.pcm(decoded, channels: 2).frames == frames)
        let check = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", m4a, "-map", "0:a", "-f", "null", "-"])
        #expect(check.status == 0 && check.standardError.isEmpty, "\(check.standardError)")
        // The rewrite left fresh padding: the next edit goes in place.
        let again = try ExternalTool.succeed(try ExternalTool.keyframe, ["tag", m4a, "--set", "title=Again", "--remove", "lyrics"])
        #expect(again.standardOutput.contains("in place"), "\(again.standardOutput)")
        tags = try ConvertTagsTests.mutagenTags(m4a)
        #expect((tags["©nam"] as? [String]) == ["Again"] && tags["©lyr"] == nil)
    }

    @Test func whatMutagenWritesIsReadAndKept() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let m4a = try Self.makeM4A(in: directory)
        let script = """
            import sys, mutagen.mp4 as m
            f = m.MP4(sys.argv[1])
            f['©nam'] = ['From Mutagen']
            f['----:com.apple.iTunes:MOOD'] = [m.MP4FreeForm(b'Happy')]
            f['covr'] = [m.MP4Cover(b'\\xff\\xd8\\xff\\xe0fakejpeg', m.MP4Cover.FORMAT_JPEG), m.MP4Cover(b'\\x89PNGfake', m.MP4Cover.FORMAT_PNG)]
            f.save()
            """
        try ExternalTool.succeed("python3", ["-c", script, m4a])
        let listed = try ExternalTool.succeed(try ExternalTool.keyframe, ["tag", m4a, "--json"]).standardOutput
        #expect(listed.contains("From Mutagen") && listed.contains("----:com.apple.iTunes:MOOD") && listed.contains("Happy"), "\(listed)")
        try ExternalTool.succeed(try ExternalTool.keyframe, ["tag", m4a, "--set", "album=Ours"])
        let tags = try ConvertTagsTests.mutagenTags(m4a)
        #expect((tags["©alb"] as? [String]) == ["Ours"] && (tags["©nam"] as? [String]) == ["From Mutagen"])
        #expect((tags["----:com.apple.iTunes:MOOD"] as? [String]) == ["Happy"])
        #expect((tags["covr"] as? [[Any]])?.count == 2, "both of mutagen's covers kept")
    }

    /// `tag --json` of one file, `--import-json` into another: the same tags (but iTunSMPB, which
    /// belongs to each file's audio, and covers).
    static func ourTags(_ path: String) throws -> [String: String] {
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["tag", path, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
        return object?["tags"] as? [String: String] ?? [:]
    }

    @Test func whatAtomicParsleyAndFFmpegWriteIsRead() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let m4a = try Self.makeM4A(in: directory)
        let jpeg = directory.appendingPathComponent("a.jpg").path
        let png = directory.appendingPathComponent("b.png").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "color=c=blue:s=16x16", "-frames:v", "1", jpeg])
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "color=c=red:s=16x16", "-frames:v", "1", png])
        // AtomicParsley, one kind of item per call (it rewrites the file each time).
        for arguments in [["--title", "AP Tïtle", "--artist", "AP Artist", "--tracknum", "4/9"], ["--artwork", jpeg, "--artwork", png],
                          ["--genre", "Jazz", "--disk", "1/2"], ["--compilation", "true", "--stik", "Audiobook"],
                          ["--rDNSatom", "USRC1", "name=ISRC", "domain=com.apple.iTunes"]] {
            try ExternalTool.succeed("AtomicParsley", [m4a, "--overWrite"] + arguments)
        }
        let listed = try ExternalTool.succeed("AtomicParsley", [m4a, "-t"]).standardOutput
        #expect(listed.contains("2 pieces of artwork") && listed.contains("USRC1"), "AtomicParsley wrote them: \(listed)")
        var tags = try Self.ourTags(m4a)
        #expect(tags["©nam"] == "AP Tïtle" && tags["©ART"] == "AP Artist" && tags["trkn"] == "4/9" && tags["disk"] == "1/2")
        #expect(tags["gnre"] == "9" && tags["cpil"] == "1" && tags["stik"] == "2", "\(tags)")
        #expect(tags["----:com.apple.iTunes:ISRC"] == "USRC1")
        #expect(tags["covr"]?.hasPrefix("JPEG image") == true && tags["covr"]?.contains("; PNG image") == true, "both covers: \(tags["covr"] ?? "")")
        // An edit keeps what AtomicParsley wrote.
        try ExternalTool.succeed(try ExternalTool.keyframe, ["tag", m4a, "--set", "album=Ours"])
        tags = try Self.ourTags(m4a)
        #expect(tags["©alb"] == "Ours" && tags["©nam"] == "AP Tïtle" && tags["----:com.apple.iTunes:ISRC"] == "USRC1")
        #expect(try ExternalTool.succeed("AtomicParsley", [m4a, "-t"]).standardOutput.contains("2 pieces of artwork"))
        // FFmpeg's tags.
        let wav = directory.appendingPathComponent("in.wav").path
        let ffmpegFile = directory.appendingPathComponent("ffmpeg.m4a").path
        try MP4Check.ffmpeg(["-i", wav, "-c:a", "aac", "-metadata", "title=FF Title", "-metadata", "artist=FF Artist", "-metadata", "album=FF Album",
                             "-metadata", "track=3/10", "-metadata", "date=2021", "-metadata", "comment=FF comment", ffmpegFile])
        tags = try Self.ourTags(ffmpegFile)
        #expect(tags["©nam"] == "FF Title" && tags["©ART"] == "FF Artist" && tags["©alb"] == "FF Album" && tags["trkn"] == "3/10")
        #expect(tags["©day"] == "2021" && tags["©cmt"] == "FF comment" && tags["©too"]?.hasPrefix("Lavf") == true, "\(tags)")
    }

    @Test func exportedTagsImportIntoAnotherFile() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.makeM4A(in: directory)
        try ExternalTool.succeed(try ExternalTool.keyframe, [
            "tag", source, "--set", "title=Exported", "--set", "track=7/9", "--set", "media_kind=audiobook", "--set", "compilation=yes",
            "--set", "tempo=120", "--set", "com.apple.iTunes:ISRC=GBAYE0601498",
        ])
        let exported = directory.appendingPathComponent("tags.json").path
        let json = try ExternalTool.succeed(try ExternalTool.keyframe, ["tag", source, "--json"]).outputData
        try json.write(to: URL(fileURLWithPath: exported))
        let target = directory.appendingPathComponent("other.m4a").path
        try FileManager.default.copyItem(atPath: try Self.makeM4A(in: directory.appendingPathComponent("sub", isDirectory: true)
            .also { try FileManager.default.createDirectory(at: $0, withIntermediateDirectories: true) }), toPath: target)
        let targetGapless = try ConvertTagsTests.mutagenTags(target)["----:com.apple.iTunes:iTunSMPB"] as? [String]
        try ExternalTool.succeed(try ExternalTool.keyframe, ["tag", target, "--import-json", exported])
        let a = try ConvertTagsTests.mutagenTags(source), b = try ConvertTagsTests.mutagenTags(target)
        for key in ["©nam", "trkn", "stik", "cpil", "tmpo", "----:com.apple.iTunes:ISRC", "©too"] {
            #expect(String(describing: a[key]) == String(describing: b[key]), "\(key): \(String(describing: a[key])) → \(String(describing: b[key]))")
        }
        #expect(b["----:com.apple.iTunes:iTunSMPB"] as? [String] == targetGapless, "the target keeps its own gapless tag")
    }

    @Test func aFailedEditLeavesTheFileAsItWas() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let m4a = try Self.makeM4A(in: directory)
        let before = try Self.sha(m4a)
        let text = directory.appendingPathComponent("notes.txt").path
        _ = FileManager.default.createFile(atPath: text, contents: Data("not an image".utf8))
        let run = try ExternalTool.run(try ExternalTool.keyframe, ["tag", m4a, "--cover", text])
        #expect(run.status != 0 && run.standardError.contains("notes.txt"), "\(run.standardError)")
        let unknown = try ExternalTool.run(try ExternalTool.keyframe, ["tag", m4a, "--set", "nonsense_key=1"])
        #expect(unknown.status != 0 && unknown.standardError.contains("nonsense_key"))
        let wav = directory.appendingPathComponent("in.wav").path
        let notMP4 = try ExternalTool.run(try ExternalTool.keyframe, ["tag", wav, "--set", "title=x"])
        #expect(notMP4.status != 0 && notMP4.standardError.contains("WAV; tags are edited in .m4a, .flac, .mp3, .opus files"),
                "\(notMP4.standardError)")
        #expect(try Self.sha(m4a) == before, "the file is unchanged")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).allSatisfy { !$0.contains(".partial-") })
    }
}

extension URL {
    /// `self`, after `body` ran on it.
    func also(_ body: (URL) throws -> Void) rethrows -> URL {
        try body(self)
        return self
    }
}
