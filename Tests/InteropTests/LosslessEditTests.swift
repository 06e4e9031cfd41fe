import Foundation
import Testing
import TestSupport

/// `cut`, `split` and `join` of lossless audio, judged by FFmpeg, `flac` and `metaflac`: native
/// FLAC, and FLAC and ALAC in MP4, cut at samples inside frames, decode (in FFmpeg, which
/// honours no edit's end) to exactly the source's samples in that range; the parts of a split
/// join back to the source's samples; native FLAC passes `flac -t` and its STREAMINFO's MD5 is
/// that of the samples. The frames the cut falls inside are encoded again, the rest copied.
@Suite(.blocking) struct LosslessEditTests {
    /// The 16-bit stereo 44.1-kHz WAV's samples `range` (in frames), as bytes.
    static func slice(_ source: Data, _ range: Range<Int>) -> Data {
        source.subdata(in: (source.startIndex + range.lowerBound * 4)..<(source.startIndex + range.upperBound * 4))
    }

    @Test(arguments: ["flac", "flac.m4a", "alac.m4a"])
    func cutSplitAndJoinAreExact(kind: String) throws {
        let scratch = try CodecInteropTests.scratchWAV(rate: 44100, channels: 2, seconds: 10)
        defer { scratch.remove() }
        let (directory, wav) = (scratch.directory, scratch.wav)
        let codec = kind.hasPrefix("alac") ? "alac" : "flac"
        let ext = kind == "flac" ? "flac" : "m4a"
        let encoded = directory.appendingPathComponent("src.\(ext)").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", encoded, "--codec", codec])
        let source = try CodecInteropTests.wavPayload(wav)
        #expect(try CodecsBeyondAACTests.ffmpegPCM(encoded, in: directory, name: "src.raw") == source)

        // A cut whose ends lie inside frames (1.2345 s is sample 54,441; 7.5 s is 330,750).
        let cut = directory.appendingPathComponent("cut.\(ext)").path
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["cut", encoded, "-o", cut, "--start", "1.2345", "--end", "7.5"])
        #expect(run.standardOutput.contains("276309 samples"), "\(run.standardOutput)")
        #expect(run.standardOutput.contains("\(codec.uppercased()) packets"), "\(run.standardOutput)")
        #expect(try CodecsBeyondAACTests.ffmpegPCM(cut, in: directory, name: "cut.raw") == Self.slice(source, 54441..<330750),
                "FFmpeg's decode of the cut is the source's samples 54,441..<330,750")
        try expectValid(cut, native: kind == "flac", samples: 276_309)

        // A cut of a few samples, inside one frame.
        let tiny = directory.appendingPathComponent("tiny.\(ext)").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["cut", encoded, "-o", tiny, "--start", "100000s", "--end", "100010s"])
        #expect(try CodecsBeyondAACTests.ffmpegPCM(tiny, in: directory, name: "tiny.raw") == Self.slice(source, 100_000..<100_010))

        // Split, then join the parts: the source again; a cut of the joined file is exact too.
        let parts = directory.appendingPathComponent("parts").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["split", encoded, "--at", "3.3", "--at", "6.1", "-o", parts])
        let names = try FileManager.default.contentsOfDirectory(atPath: parts).sorted()
        #expect(names == ["src-01.\(ext)", "src-02.\(ext)", "src-03.\(ext)"])
        #expect(try CodecsBeyondAACTests.ffmpegPCM("\(parts)/src-02.\(ext)", in: directory, name: "p2.raw") == Self.slice(source, 145_530..<269_010))
        let joined = directory.appendingPathComponent("joined.\(ext)").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["join"] + names.map { "\(parts)/\($0)" } + ["-o", joined])
        #expect(try CodecsBeyondAACTests.ffmpegPCM(joined, in: directory, name: "joined.raw") == source, "the parts join into the source")
        try expectValid(joined, native: kind == "flac", samples: 441_000)
        let again = directory.appendingPathComponent("again.\(ext)").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["cut", joined, "-o", again, "--start", "3", "--end", "5"])
        #expect(try CodecsBeyondAACTests.ffmpegPCM(again, in: directory, name: "again.raw") == Self.slice(source, 132_300..<220_500))
    }

    /// `validate` passes; a native FLAC passes `flac -t` (which checks the MD5) and its MD5 and
    /// length are those of the samples.
    func expectValid(_ path: String, native: Bool, samples: Int) throws {
        let validate = try ExternalTool.run(try ExternalTool.keyframe, ["validate", path])
        #expect(validate.status == 0, "\(validate.standardOutput)\(validate.standardError)")
        guard native else { return }
        try ExternalTool.succeed("flac", ["-t", "-s", path])
        // metaflac prints the total samples, then the MD5.
        let info = try ExternalTool.succeed("metaflac", ["--show-total-samples", "--show-md5sum", path]).standardOutput.split(separator: "\n")
        #expect(info.first == "\(samples)")
        let md5 = try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-f", "md5", "-"]).standardOutput
        #expect(md5.trimmingCharacters(in: .whitespacesAndNewlines) == "MD5=\(info.dropFirst().first ?? "")", "STREAMINFO's MD5 is the samples'")
    }

    /// Opus in MP4, cut: 200 ms of pre-roll kept, the pre-skip in `dOps` is the edit's start (so
    /// `validate` agrees), and the decode is the cut's length and lines up with the source.
    @Test func opusInMP4CutKeepsItsPreRollBehindTheEdit() throws {
        let scratch = try CodecInteropTests.scratchWAV(rate: 48000, channels: 2, seconds: 10)
        defer { scratch.remove() }
        let (directory, wav) = (scratch.directory, scratch.wav)
        let encoded = directory.appendingPathComponent("src.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", encoded, "--codec", "opus"])
        let cut = directory.appendingPathComponent("cut.m4a").path
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["cut", encoded, "-o", cut, "--start", "2.5", "--end", "7.25"])
        #expect(run.standardOutput.contains("228000 samples"), "\(run.standardOutput)")
        let validate = try ExternalTool.run(try ExternalTool.keyframe, ["validate", cut])
        #expect(validate.status == 0, "\(validate.standardOutput)\(validate.standardError)")
        let decoded = directory.appendingPathComponent("cut.wav").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", cut, "-o", decoded])
        let ours = try CodecInteropTests.wavPayload(decoded)
        #expect(ours.count == 228_000 * 4)
        // FFmpeg skips the same pre-skip: its decode starts with ours.
        let theirs = try CodecsBeyondAACTests.ffmpegPCM(cut, in: directory, name: "theirs.raw")
        #expect(theirs.prefix(ours.count) == ours)
        // Against the source's own decode from 2.5 s: the cut lines up at lag 0.
        let full = directory.appendingPathComponent("full.wav").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", encoded, "-o", full])
        let reference = try CodecInteropTests.wavPayload(full)
        let expected = Self.slice(reference, 120_000..<348_000)
        func snr(_ a: Data, _ b: Data) -> Double {
            let x = a.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }, y = b.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
            var signal = 0.0, noise = 0.0
            for index in 0..<min(x.count, y.count) {
                signal += Double(x[index]) * Double(x[index])
                noise += Double(Int(x[index]) - Int(y[index])) * Double(Int(x[index]) - Int(y[index]))
            }
            return 10 * log10(signal / max(noise, 1))
        }
        #expect(snr(expected, ours) >= 30, "the cut decodes as the source does from 2.5 s")
    }
}

/// The corners of lossless edits: a cut that begins fewer than 16 samples before a frame's end
/// (FLAC frames but the last hold at least 16), 24-bit FLAC, and a FLAC file ending in an ID3v1
/// tag; each decodes to exactly the source's samples and passes `flac -t`.
@Suite(.blocking) struct LosslessEditCornerTests {
    /// A cut that begins 5 samples before a frame's end: those 5 are encoded again with the next
    /// frame's samples. A part that ends 8 samples into a frame, joined before another: the 8 are
    /// encoded again with samples beside them (native FLAC: the next part's first; FLAC in MP4:
    /// the frame before). Either way no block but the last is shorter than 16, and `validate`
    /// (which flags one in native FLAC) and `flac -t` pass.
    @Test(arguments: ["flac", "m4a"])
    func boundariesShorterThanSixteenSamplesAreEncodedWithTheirNeighbours(ext: String) throws {
        let scratch = try CodecInteropTests.scratchWAV(rate: 44100, channels: 2, seconds: 2)
        defer { scratch.remove() }
        let (directory, wav, source) = (scratch.directory, scratch.wav, scratch.source)
        func path(_ name: String) -> String { directory.appendingPathComponent("\(name).\(ext)").path }
        func cut(_ range: [String], to name: String) throws {
            try ExternalTool.succeed(try ExternalTool.keyframe, ["cut", path("src"), "-o", path(name)] + range)
        }
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", path("src"), "--codec", "flac"])
        // FLAC is encoded in blocks of 4,096: 8,187 is 5 before the second's end.
        let durationsIn = try CodecInteropTests.packetDurations(path("src"))
        #expect(durationsIn.prefix(2) == [4096, 4096], "frames of \(durationsIn.prefix(3))")
        try cut(["--start", "8187s", "--end", "20000s"], to: "cut")
        try cut(["--end", "4104s"], to: "head")
        try cut(["--start", "12288s", "--end", "20000s"], to: "tail")
        try ExternalTool.succeed(try ExternalTool.keyframe, ["join", path("head"), path("tail"), "-o", path("joined")])
        let expected = ["cut": LosslessEditTests.slice(source, 8187..<20000),
                        "joined": LosslessEditTests.slice(source, 0..<4104) + LosslessEditTests.slice(source, 12288..<20000)]
        for (name, samples) in expected {
            #expect(try CodecsBeyondAACTests.ffmpegPCM(path(name), in: directory, name: "\(name)-\(ext).raw") == samples, "\(name)")
            let durations = try CodecInteropTests.packetDurations(path(name))
            #expect(durations.dropLast().allSatisfy { $0 >= 16 }, "\(name): frames of \(durations)")
            try LosslessEditTests().expectValid(path(name), native: ext == "flac", samples: samples.count / 4)
        }
    }

    /// Split at points that are not chapter starts, then joined: the source's chapters again (a
    /// chapter a split cut in two is one again), its title kept; a source without chapters joins
    /// back without any, not with a chapter per part.
    @Test(arguments: ["flac", "flac.m4a", "alac.m4a"])
    func splitThenJoinGivesBackTheChaptersAndTitle(kind: String) throws {
        let scratch = try CodecInteropTests.scratchWAV(rate: 44100, channels: 2, seconds: 2)
        defer { scratch.remove() }
        func path(_ name: String) -> String { scratch.directory.appendingPathComponent(name).path }
        let ext = kind == "flac" ? "flac" : "m4a"
        let source = path("src.\(ext)")
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", scratch.wav, "-o", source, "--codec", String(kind.prefix(4))])
        try ExternalTool.succeed(try ExternalTool.keyframe, ["tag", source, "--set", "title=Song"])
        try "00:00:00.000 Intro\n00:00:00.800 Verse\n".write(toFile: path("chapters.txt"), atomically: true, encoding: .utf8)
        for chaptered in [true, false] {
            try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", source] + (chaptered ? ["--import", path("chapters.txt")] : ["--remove"]))
            // Into a directory whose parent is missing too: split makes both.
            let parts = path("parts/\(chaptered)")
            try ExternalTool.succeed(try ExternalTool.keyframe, ["split", source, "--at", "0.5,1.2", "-o", parts + "/"])
            let names = try FileManager.default.contentsOfDirectory(atPath: parts).sorted()
            #expect(names.count == 3, "\(names)")
            let joined = path("joined-\(chaptered).\(ext)")
            try ExternalTool.succeed(try ExternalTool.keyframe, ["join"] + names.map { parts + "/" + $0 } + ["-o", joined])
            let chapters = try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", joined, "--export"]).standardOutput
            #expect(chapters == (chaptered ? "00:00:00.000 Intro\n00:00:00.800 Verse\n" : ""), "\(kind), chapters \(chaptered): \(chapters)")
            let title = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "format_tags=title", "-of", "csv=p=0", joined]).standardOutput
            #expect(title.trimmingCharacters(in: .whitespacesAndNewlines) == "Song", "\(kind): \(title)")
        }
    }

    @Test func twentyFourBitFLACAndAnID3v1Tag() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "anoisesrc=d=3:a=0.3:r=48000:seed=3", "-ac", "2",
                                            "-c:a", "pcm_s24le", wav])
        let flac = directory.appendingPathComponent("src.flac").path
        try ExternalTool.succeed("flac", ["--silent", "-f", "-o", flac, wav])
        // An ID3v1 tag after the last frame, as some taggers append one.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: flac))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("TAG".utf8) + Data(repeating: 0x20, count: 124) + Data([0xFF]))
        try handle.close()
        func pcm(_ path: String) throws -> Data {
            let raw = directory.appendingPathComponent(UUID().uuidString).path
            try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", path, "-f", "s32le", raw])
            return try Data(contentsOf: URL(fileURLWithPath: raw))
        }
        let whole = try pcm(flac)
        let cut = directory.appendingPathComponent("cut.flac").path
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["cut", flac, "-o", cut, "--start", "12345s"])
        #expect(!run.standardError.contains("no whole FLAC frame"), "\(run.standardError)")
        #expect(try pcm(cut) == whole.dropFirst(12345 * 8), "the 24-bit cut is the source's samples to its end")
        try ExternalTool.succeed("flac", ["-t", "-s", cut])
    }
}
