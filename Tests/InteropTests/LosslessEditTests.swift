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
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try CodecInteropTests.makeWAV(rate: 44100, channels: 2, seconds: 10, to: wav)
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
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try CodecInteropTests.makeWAV(rate: 48000, channels: 2, seconds: 10, to: wav)
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
