import Foundation
import Testing
import TestSupport

/// Issue 20, item 3: M4As written by others. `scripts/foreign-m4a.py` makes them once into
/// `.build/foreign-m4a/` (again when the script or a tool's version changes): FFmpeg in its
/// `-movflags` layouts and with timestamps that jitter or jump, GStreamer's mp4mux and qtmux,
/// files tagged by AtomicParsley and mutagen, and an `stsc` whose second entry repeats the first
/// chunk number. On each:
/// - `probe --json` counts its packets, and reports the damage it has and no other;
/// - `decode` presents exactly the frames the file's tables say (its edit; the media's own end
///   where the edit is that end rounded to the movie timescale; else the `stts`/`trun` sum), and
///   where the timestamps are regular, FFmpeg's samples from the first to the last;
/// - `tag` and `chapters` leave the audio alone and keep the tags that were there; mutagen,
///   AtomicParsley and ffprobe read what they wrote;
/// - `cut`, `split` then `join` and `package --hls` give the whole file's samples, bit for bit,
///   and FFmpeg plays each output without a word at lag 0.
/// ffprobe and ffmpeg are silent on every output apart from `PeerQuirk`s; `keyframe validate`
/// finds no error in any cut, part or join (`ValidationCheck`, errors only).
@Suite(.blocking) struct ForeignM4ATests {
    /// One entry of the script's manifest.json.
    struct Foreign: Decodable, Sendable {
        var name: String
        var file: String
        var recipe: String
        var fragmented: Bool
        var packets: Int
        var expectedFrames: Int
        /// The single media edit's media_time (0 where there is no edit list).
        var priming: Int
        var sampleRate: Int
        var channels: Int
        var quirks: [String]
        var damage: Bool
        var timing: String
        var inputWarnings: [String]

        /// The FFmpeg 5.1 lines its outputs may draw: a cover, a chapter track.
        var peerQuirks: [PeerQuirk] { [.chapterTrackCodec] + (quirks.contains("cover") ? [.coverHasNoTimescale] : []) }
    }

    /// The recipes, as the script names them (one test case each; the script's list must match).
    static let names = [
        "ffmpeg-plain", "ffmpeg-faststart", "ffmpeg-frag", "ffmpeg-frag-1s", "ffmpeg-dash", "ffmpeg-cmaf",
        "ffmpeg-separate-moof", "ffmpeg-default-base-moof", "ffmpeg-omit-tfhd-offset", "ffmpeg-metadata-tags",
        "ffmpeg-negative-cts", "ffmpeg-ts-offset", "ffmpeg-jitter", "ffmpeg-gap-2048", "ffmpeg-gap-2964",
        "ffmpeg-chapters-cover", "gst-mp4mux-avenc", "gst-mp4mux-voaac", "gst-qtmux-voaac", "gst-mp4mux-fragmented",
        "atomicparsley-tagged", "mutagen-tagged", "mutagen-tagged-gst", "stsc-repeated-chunk",
    ]

    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The set, made (or found up to date) once per test process.
    static let set: Result<[String: Foreign], ExternalTool.ToolFailure> = {
        do {
            let script = repositoryRoot.appendingPathComponent("scripts/foreign-m4a.py").path
            let folder = repositoryRoot.appendingPathComponent(".build/foreign-m4a").path
            let run = try ExternalTool.succeed("python3", [script, folder])
            let manifest = URL(fileURLWithPath: run.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))
            let entries = try JSONDecoder().decode([Foreign].self, from: Data(contentsOf: manifest))
            return .success(Dictionary(entries.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first }))
        } catch {
            return .failure(ExternalTool.ToolFailure(description: "scripts/foreign-m4a.py: \(error)"))
        }
    }()

    static func foreign(_ name: String) throws -> Foreign {
        guard let entry = try set.get()[name] else { throw ExternalTool.ToolFailure(description: "\(name) is not in the manifest") }
        return entry
    }

    @Test func theScriptMakesEveryRecipeTested() throws {
        let made = try Self.set.get()
        #expect(Set(made.keys) == Set(Self.names), "the script's recipes and the tests' list differ")
        for entry in made.values {
            #expect(FileManager.default.fileExists(atPath: entry.file), "\(entry.name)")
        }
        // The timestamps the jitter and gap recipes promise.
        let deltas = { (name: String) in try Self.sttsDeltas(try Self.foreign(name).file) }
        #expect(Set(try deltas("ffmpeg-jitter")).isSuperset(of: [1022, 1024, 1025]))
        #expect(try deltas("ffmpeg-gap-2048").contains(2048) && (try deltas("ffmpeg-gap-2964")).contains(2964))
    }

    // MARK: - Helpers

    /// The `stts` deltas of a file's first track, one per sample.
    static func sttsDeltas(_ path: String) throws -> [Int] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        guard let at = bytes.indices.first(where: { $0 + 16 <= bytes.count && bytes[$0..<$0 + 4].elementsEqual("stts".utf8) }) else { return [] }
        let word = { (offset: Int) in bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (0..<word(at + 8)).flatMap { index in [Int](repeating: word(at + 16 + 8 * index), count: word(at + 12 + 8 * index)) }
    }

    static func decode(_ path: String, in directory: URL) throws -> GaplessTests.PCM {
        try RealMediaTests.ourDecode(path, channels: 2, in: directory)
    }

    static func ffmpegDecode(_ path: String, in directory: URL) throws -> GaplessTests.PCM {
        let wav = directory.appendingPathComponent("ffmpeg-\(UUID().uuidString).wav").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", path, "-map", "0:a", "-c:a", "pcm_s16le", wav])
        return try GaplessTests.pcm(wav, channels: 2)
    }

    static func copy(_ foreign: Foreign, to directory: URL, as name: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try FileManager.default.copyItem(atPath: foreign.file, toPath: path)
        return path
    }

    /// ffprobe and ffmpeg on an output: nothing but the quirks its kind draws (and, for an edit
    /// in place, what they say about the input's own tables, which the edit keeps).
    static func expectPeersSilent(on path: String, _ foreign: Foreign, keepsInputTables: Bool = false, _ what: String,
                                  sourceLocation: SourceLocation = #_sourceLocation) throws {
        var probe = try PeerQuirk.ffprobeWarnings(path, quirks: foreign.peerQuirks)
        var play = try PeerQuirk.ffmpegWarnings(path, map: "0:a", quirks: foreign.peerQuirks)
        if keepsInputTables {
            for known in foreign.inputWarnings {
                probe = PeerQuirk.filter(probe.split(separator: "\n").filter { !$0.contains(known) }.joined(separator: "\n"), quirks: [])
                play = PeerQuirk.filter(play.split(separator: "\n").filter { !$0.contains(known) }.joined(separator: "\n"), quirks: [])
            }
        }
        #expect(probe.isEmpty, "\(foreign.name), \(what): ffprobe says \(probe)", sourceLocation: sourceLocation)
        #expect(play.isEmpty, "\(foreign.name), \(what): ffmpeg says \(play)", sourceLocation: sourceLocation)
    }

    /// `cut`, `split`, `join`: FFmpeg plays `path` from its first sample, as we decode it
    /// (5.1 keeps the padding at the end).
    static func expectFFmpegLinesUp(_ path: String, with ours: GaplessTests.PCM, in directory: URL, _ what: String,
                                    sourceLocation: SourceLocation = #_sourceLocation) throws {
        let theirs = try ffmpegDecode(path, in: directory)
        let linesUp = theirs.frames >= ours.frames && theirs.samples.prefix(ours.samples.count) == ours.samples[...]
        #expect(linesUp, "\(what): FFmpeg decodes \(theirs.frames) frames that do not start with our \(ours.frames)", sourceLocation: sourceLocation)
    }

    /// An edit of a file others wrote must succeed, fragmented ones included (they are rewritten
    /// with their fragments' offsets shifted); a refusal is a failure.
    static func expectEdited(_ run: ExternalTool.Result, _ foreign: Foreign, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(run.status == 0, "\(foreign.name): refused: \(run.standardError)", sourceLocation: sourceLocation)
    }

    /// The `moof_offset`s of every `tfra` in the top-level `mfra` (ISO/IEC 14496-12 8.8.10).
    static func moofOffsets(_ bytes: [UInt8]) -> [Int] {
        func u32(_ at: Int) -> Int { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        func u64(_ at: Int) -> Int { bytes[at..<(at + 8)].reduce(0) { $0 << 8 | Int($1) } }
        var position = 0
        var offsets: [Int] = []
        while position + 8 <= bytes.count {
            let size = u32(position)
            guard size >= 8, position + size <= bytes.count else { break }
            if String(decoding: bytes[(position + 4)..<(position + 8)], as: UTF8.self) == "mfra" {
                var child = position + 8
                while child + 8 <= position + size {
                    let childSize = u32(child)
                    guard childSize >= 8 else { break }
                    if String(decoding: bytes[(child + 4)..<(child + 8)], as: UTF8.self) == "tfra" {
                        let wide = bytes[child + 8] == 1
                        let sizes = Int(bytes[child + 19])
                        let tail = ((sizes >> 4) & 3) + ((sizes >> 2) & 3) + (sizes & 3) + 3
                        let count = u32(child + 20)
                        var entry = child + 24
                        for _ in 0..<count where entry + (wide ? 16 : 8) <= child + childSize {
                            offsets.append(wide ? u64(entry + 8) : u32(entry + 4))
                            entry += (wide ? 16 : 8) + tail
                        }
                    }
                    child += childSize
                }
            }
            position += size
        }
        return offsets
    }

    // MARK: - probe and decode

    @Test(arguments: names)
    func probeCountsThePacketsAndDecodeTheFrames(_ name: String) throws {
        let foreign = try Self.foreign(name)
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let probe = try ExternalTool.probeJSON(foreign.file)
        let audio = (probe["tracks"] as? [[String: Any]])?.first { $0["type"] as? String == "audio" } ?? [:]
        #expect(probe["format"] as? String == "mp4" && audio["codec"] as? String == "aac", "\(name): \(probe)")
        #expect(audio["sampleCount"] as? Int == foreign.packets, "\(name): \(audio["sampleCount"] ?? "-") packets, the file has \(foreign.packets)")
        #expect(audio["sampleRate"] as? Int == foreign.sampleRate && audio["channels"] as? Int == foreign.channels, "\(name): \(audio)")
        #expect(probe["fragmented"] as? Bool == foreign.fragmented, "\(name): fragmented \(probe["fragmented"] ?? "-")")
        let damage = probe["damage"] as? [Any] ?? []
        if foreign.damage {
            #expect(damage.contains { "\($0)".contains("stsc") }, "\(name): the repeated stsc chunk is reported: \(damage)")
        } else if foreign.timing == "gap" {
            #expect(damage.contains { "\($0)".contains("stts") && "\($0)".contains("back to back") },
                    "\(name): the timestamp gap is reported: \(damage)")
        } else {
            #expect(damage.isEmpty, "\(name): \(damage)")
        }
        let text = try ExternalTool.run(try ExternalTool.keyframe, ["probe", foreign.file])
        #expect(text.status == 0 && text.standardOutput.contains("\(foreign.packets) packets"), "\(name): \(text.standardError)\(text.standardOutput)")

        let ours = try Self.decode(foreign.file, in: directory)
        #expect(ours.frames == foreign.expectedFrames, "\(name) (\(foreign.recipe)): decodes to \(ours.frames) frames, its tables say \(foreign.expectedFrames)")
        if foreign.timing == "regular" {
            // libavcodec both: FFmpeg's samples from the edit's start, up to our end.
            try Self.expectFFmpegLinesUp(foreign.file, with: ours, in: directory, "\(name): decode")
        }
    }

    // MARK: - tag and chapters

    @Test(arguments: names)
    func tagsAreSetAndTheOthersKept(_ name: String) throws {
        let foreign = try Self.foreign(name)
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try Self.copy(foreign, to: directory, as: "tagged.m4a")
        let before = try Self.decode(file, in: directory)
        // A fragmented file has no padding after its moov: it is rewritten, its fragments moved.
        let run = try ExternalTool.run(try ExternalTool.keyframe, ["tag", file, "--set", "title=Retitled", "--set", "track=3/12"])
        Self.expectEdited(run, foreign)
        guard run.status == 0 else { return }
        if foreign.fragmented {
            // Every moof_offset of the fragment random access box still names a moof (but
            // GStreamer's closing entry of 0, which names none in the original either).
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
            for offset in Self.moofOffsets(bytes) where offset != 0 {
                #expect(offset + 8 <= bytes.count && String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self) == "moof",
                        "\(name): tfra names byte \(offset), not a moof")
            }
        }
        let old = try ConvertTagsTests.mutagenTags(foreign.file)
        let new = try ConvertTagsTests.mutagenTags(file)
        #expect((new["©nam"] as? [String]) == ["Retitled"] && (new["trkn"] as? [[Int]]) == [[3, 12]], "\(name): mutagen reads \(new)")
        for (key, value) in old where key != "©nam" && key != "trkn" && key != "----:com.apple.iTunes:iTunSMPB" {
            #expect(new[key].map { "\($0)" } == "\(value)", "\(name): \(key) kept")
        }
        // mutagen's length is the movie's (0 for FFmpeg's fragmented files): as it was.
        let length = { (path: String) in
            try ExternalTool.succeed("python3", ["-c", "import sys, mutagen.mp4 as m; print(m.MP4(sys.argv[1]).info.length)", path])
                .standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(try length(file) == (try length(foreign.file)), "\(name): mutagen's length")
        // AtomicParsley refuses QuickTime movies (qtmux's brand "qt  ") by design.
        if try ExternalTool.run("AtomicParsley", [foreign.file, "-t"]).status == 0 {
            let atomic = try ExternalTool.succeed("AtomicParsley", [file, "-t"]).standardOutput
            #expect(atomic.contains("Atom \"©nam\" contains: Retitled"), "\(name): AtomicParsley reads \(atomic)")
        }
        let after = try Self.decode(file, in: directory)
        let untouched = after.samples == before.samples
        #expect(untouched, "\(name): the audio is untouched (\(before.frames) → \(after.frames) frames)")
        try Self.expectPeersSilent(on: file, foreign, keepsInputTables: true, "tag")
    }

    @Test(arguments: names)
    func chaptersAreWrittenAndPeersReadThem(_ name: String) throws {
        let foreign = try Self.foreign(name)
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        if name == "ffmpeg-chapters-cover" {
            let listed = try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", foreign.file]).standardOutput
            #expect(listed == "00:00:00.000 Eins\n00:00:02.500 Zwei\n", "FFmpeg's chapters: \(listed)")
        }
        let file = try Self.copy(foreign, to: directory, as: "chapters.m4a")
        let before = try Self.decode(file, in: directory)
        let list = directory.appendingPathComponent("chapters.txt").path
        try "0 One\n0:02.500 Two\n0:04 Three\n".write(toFile: list, atomically: true, encoding: .utf8)
        let run = try ExternalTool.run(try ExternalTool.keyframe, ["chapters", file, "--import", list])
        Self.expectEdited(run, foreign)
        guard run.status == 0 else { return }
        let chapters = try EditCommandTests.ffprobeChapters(file)
        #expect(chapters.map(\.title) == ["One", "Two", "Three"], "\(name): ffprobe reads \(chapters)")
        #expect(chapters.count == 3 && abs(chapters[1].start - 2.5) < 0.0005 && abs(chapters[2].start - 4) < 0.0005, "\(name): \(chapters)")
        #expect(try EditCommandTests.mutagenChapters(file).map(\.title) == ["One", "Two", "Three"], "\(name): mutagen reads the chpl")
        let export = try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", file, "--export"]).standardOutput
        #expect(export == "00:00:00.000 One\n00:00:02.500 Two\n00:00:04.000 Three\n", "\(name): \(export)")
        let untouched = try Self.decode(file, in: directory).samples == before.samples
        #expect(untouched, "\(name): the audio is untouched")
        try Self.expectPeersSilent(on: file, foreign, keepsInputTables: true, "chapters")
    }

    // MARK: - cut, split, join, package

    @Test(arguments: names)
    func aCutIsTheWholeFilesSamples(_ name: String) throws {
        let foreign = try Self.foreign(name)
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let whole = try Self.decode(foreign.file, in: directory)
        let output = directory.appendingPathComponent("cut.m4a").path
        let run = try ExternalTool.run(try ExternalTool.keyframe, ["cut", foreign.file, "-o", output, "--start", "1.3", "--end", "4.2"])
        #expect(run.status == 0, "\(name) (\(foreign.recipe)): cut: \(run.standardError)")
        guard run.status == 0 else { return }
        let range = 57330..<185_220 // 1.3 s to 4.2 s at 44.1 kHz
        let cut = try Self.decode(output, in: directory)
        #expect(cut.frames == range.count, "\(name): the cut decodes to \(cut.frames) frames")
        let exact = whole.frames >= range.upperBound && cut.samples[...] == whole.samples[(range.lowerBound * 2)..<(range.upperBound * 2)]
        #expect(exact, "\(name): the cut is the whole file's samples \(range), bit for bit")
        try Self.expectFFmpegLinesUp(output, with: cut, in: directory, "\(name): cut")
        try Self.expectPeersSilent(on: output, foreign, "cut")
        // Errors only: a foreign file without its priming signalled gives a cut without it (a warning).
        try ValidationCheck.expectSilent([output], "\(name): cut", errorsOnly: true)
    }

    @Test(arguments: names)
    func splitThenJoinGivesBackTheWhole(_ name: String) throws {
        let foreign = try Self.foreign(name)
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let whole = try Self.decode(foreign.file, in: directory)
        let parts = directory.appendingPathComponent("parts")
        try FileManager.default.createDirectory(at: parts, withIntermediateDirectories: true)
        let split = try ExternalTool.run(try ExternalTool.keyframe, ["split", foreign.file, "--at", "2,4", "-o", parts.path + "/", "--json"])
        #expect(split.status == 0, "\(name) (\(foreign.recipe)): split: \(split.standardError)")
        guard split.status == 0 else { return }
        let files = (try JSONSerialization.jsonObject(with: split.outputData) as? [[String: Any]] ?? []).compactMap { $0["output"] as? String }
        #expect(files.count == 3, "\(name): \(files)")
        var offset = 0
        for file in files {
            let part = try Self.decode(file, in: directory)
            let exact = offset + part.frames <= whole.frames && part.samples[...] == whole.samples[(offset * 2)..<((offset + part.frames) * 2)]
            #expect(exact, "\(name): \(URL(fileURLWithPath: file).lastPathComponent) is the whole file's samples from \(offset)")
            offset += part.frames
            try Self.expectPeersSilent(on: file, foreign, "split part")
        }
        #expect(offset == whole.frames, "\(name): the parts hold \(offset) frames, the whole \(whole.frames)")
        let joined = directory.appendingPathComponent("joined.m4a").path
        let join = try ExternalTool.run(try ExternalTool.keyframe, ["join"] + files + ["-o", joined])
        #expect(join.status == 0, "\(name): join: \(join.standardError)")
        guard join.status == 0 else { return }
        let again = try Self.decode(joined, in: directory)
        let joinIsWhole = again.samples == whole.samples
        #expect(joinIsWhole, "\(name): the join decodes to the whole file (\(again.frames) vs \(whole.frames) frames)")
        // FFmpeg honours each part's edit start and inner end; it keeps the last part's padding.
        try Self.expectFFmpegLinesUp(joined, with: again, in: directory, "\(name): join")
        try Self.expectPeersSilent(on: joined, foreign, "join")
        try ValidationCheck.expectSilent(files + [joined], "\(name): split/join", errorsOnly: true)
        // probe reads the join's edit list whole: the track lasts as long as its parts.
        let probe = try ExternalTool.probeJSON(joined)
        let track = (probe["tracks"] as? [[String: Any]])?.first { $0["type"] as? String == "audio" } ?? [:]
        let seconds = track["duration"] as? Double ?? -1
        #expect(abs(seconds - Double(whole.frames) / Double(foreign.sampleRate)) < 0.5 / Double(foreign.sampleRate),
                "\(name): probe says the joined track lasts \(seconds) s (remainder \(track["remainder"] ?? "-")), its parts \(whole.frames) frames")
        // Each part keeps its own chapters (a split keeps those that fall in it): a file with
        // chapters gets them back; without, a chapter per part named by its file, or none when
        // the parts share a title (the source's, as an iTunes item: FFmpeg's mdta keys are not
        // read as one).
        let sourceChapters = try EditCommandTests.mutagenChapters(foreign.file).count
        let tags = try CaptureCheck.json(try ExternalTool.succeed(try ExternalTool.keyframe, ["tag", foreign.file, "--json"]), "tag --json")
        let titled = (tags["tags"] as? [String: Any])?["©nam"] != nil
        #expect(try EditCommandTests.mutagenChapters(joined).count == (sourceChapters > 0 ? sourceChapters : titled ? 0 : 3),
                "\(name): chapters")
        // The whole file joined to a part of itself: join takes the foreign file as it is. Exact
        // only where the file declares its encoder's priming (an edit from 1024 on): a part with
        // none overlaps the previous part's last frame when decoded.
        guard foreign.priming >= 1024 else { return }
        let twice = directory.appendingPathComponent("twice.m4a").path
        let joinWhole = try ExternalTool.run(try ExternalTool.keyframe, ["join", foreign.file, files[0], "-o", twice])
        #expect(joinWhole.status == 0, "\(name): join of the whole file: \(joinWhole.standardError)")
        if joinWhole.status == 0 {
            let first = try Self.decode(files[0], in: directory)
            let exact = try Self.decode(twice, in: directory).samples == whole.samples + first.samples
            #expect(exact, "\(name): the whole file then its first part")
        }
    }

    @Test(arguments: names)
    func packageForHLSIsTheWholeFile(_ name: String) throws {
        let foreign = try Self.foreign(name)
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let whole = try Self.decode(foreign.file, in: directory)
        let hls = directory.appendingPathComponent("hls").path
        let run = try ExternalTool.run(try ExternalTool.keyframe, ["package", foreign.file, "--hls", hls, "--segment-duration", "2"])
        #expect(run.status == 0, "\(name) (\(foreign.recipe)): package: \(run.standardError)")
        guard run.status == 0 else { return }
        let playlist = hls + "/index.m3u8"
        let ours = try Self.decode(playlist, in: directory)
        let exact = ours.samples == whole.samples
        #expect(exact, "\(name): the package decodes to the whole file (\(ours.frames) vs \(whole.frames) frames)")
        let play = try PeerQuirk.ffmpegWarnings(playlist)
        #expect(play.isEmpty, "\(name): ffmpeg plays the package saying \(play)")
        try Self.expectFFmpegLinesUp(playlist, with: ours, in: directory, "\(name): package")
        // No error: a table that jitters or skips is packaged with a frame per sample (the
        // validator found it copied as it was). A warning stays where the input signals no priming.
        try ValidationCheck.expectSilent([hls], "\(name): package", errorsOnly: true)
    }
}
