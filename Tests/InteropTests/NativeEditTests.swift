import Foundation
import Testing
import TestSupport

/// `cut`, `split` and `join` of MP3 and Ogg Opus without re-encoding, judged by FFmpeg, mpg123,
/// opusdec and opusinfo: a cut decodes to exactly its length from the first sample, and (MP3,
/// whose kept frames decode as in the source with their reservoir restored) to the source's very
/// samples; (Opus, which converges over its pre-roll) within 30 dB of them at the seam. Parts of
/// a split join back to the source's samples, bit for bit.
@Suite(.blocking) struct NativeEditTests {
    /// `decoder`'s 16-bit interleaved output of `file`.
    static func decode(_ file: String, with decoder: String, in directory: URL) throws -> [Int16] {
        let raw = directory.appendingPathComponent(UUID().uuidString + ".raw").path
        defer { try? FileManager.default.removeItem(atPath: raw) }
        switch decoder {
        case "mpg123": try ExternalTool.succeed("mpg123", ["-q", "-s", "-w", raw + ".wav", file])
            try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", raw + ".wav", "-f", "s16le", raw])
            try? FileManager.default.removeItem(atPath: raw + ".wav")
        case "opusdec": try ExternalTool.succeed("opusdec", ["--quiet", file, raw + ".wav"])
            try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", raw + ".wav", "-f", "s16le", raw])
            try? FileManager.default.removeItem(atPath: raw + ".wav")
        default: try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", file, "-f", "s16le", raw])
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: raw))
        return data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// A WAV of `keyframe decode`'s output for `file`.
    static func keyframeDecoded(_ file: String, in directory: URL) throws -> String {
        let wav = directory.appendingPathComponent(UUID().uuidString + ".wav").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", file, "-o", wav])
        return wav
    }

    /// The SNR of `decoded` against `reference` over stereo frames `frames`.
    static func snr(_ reference: [Int16], _ decoded: [Int16], frames: Range<Int>) -> Double {
        var signal = 0.0, noise = 0.0
        for index in (frames.lowerBound * 2)..<min(frames.upperBound * 2, reference.count, decoded.count) {
            let x = Double(reference[index]), y = Double(decoded[index])
            signal += x * x
            noise += (x - y) * (x - y)
        }
        return 10 * log10(signal / max(noise, 1e-9))
    }

    @Test(arguments: ["ffmpeg", "keyframe"])
    func mp3CutSplitAndJoinAreTheSourcesSamples(writer: String) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try CodecInteropTests.makeWAV(rate: 44100, channels: 2, seconds: 10, to: wav)
        let mp3 = directory.appendingPathComponent("src.mp3").path
        if writer == "ffmpeg" {
            try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", wav, "-c:a", "libmp3lame", "-b:a", "128k", mp3])
        } else {
            try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", wav, "-o", mp3, "--bitrate", "96k"])
        }
        let cut = directory.appendingPathComponent("cut.mp3").path
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["cut", mp3, "-o", cut, "--start", "1.2345", "--end", "7.5"])
        #expect(run.standardOutput.contains("276309 samples"), "\(run.standardOutput)")
        #expect(run.standardOutput.contains("MP3 packets"), "\(run.standardOutput)")
        for decoder in ["ffmpeg", "mpg123"] {
            let source = try Self.decode(mp3, with: decoder, in: directory)
            #expect(source.count == 441_000 * 2, "\(decoder) presents the source's 441,000 samples")
            let decoded = try Self.decode(cut, with: decoder, in: directory)
            #expect(decoded.count == 276_309 * 2, "\(decoder) presents the cut's 276,309 samples")
            #expect(Array(source[(54_441 * 2)..<(330_750 * 2)]) == decoded, "\(decoder)'s decode of the cut is its decode of the source there")
        }
        let validate = try ExternalTool.run(try ExternalTool.keyframe, ["validate", cut])
        #expect(validate.status == 0, "\(validate.standardOutput)\(validate.standardError)")
        #expect(try PeerQuirk.ffmpegWarnings(cut).isEmpty)

        let parts = directory.appendingPathComponent("parts").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["split", mp3, "--at", "3.3", "--at", "6.1", "-o", parts])
        let joined = directory.appendingPathComponent("joined.mp3").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["join", "\(parts)/src-01.mp3", "\(parts)/src-02.mp3", "\(parts)/src-03.mp3", "-o", joined])
        #expect(try Self.decode(joined, with: "ffmpeg", in: directory) == Self.decode(mp3, with: "ffmpeg", in: directory),
                "the parts join into the source's samples")
        let chapters = try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", joined]).standardOutput
        #expect(chapters.contains("00:00:03.300 src-02") && chapters.contains("00:00:06.100 src-03"), "\(chapters)")
    }

    /// MPEG-2 layer III at 32 kb/s (mono, 22.05 kHz): small frames, whose main data reaches back
    /// through many of them (up to 255 bytes), still decode as in the source after a cut.
    @Test func lowBitrateMPEG2CutIsTheSourcesSamples() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let mp3 = directory.appendingPathComponent("low.mp3").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "anoisesrc=d=6:a=0.2:r=22050:seed=5", "-ac", "1",
                                            "-c:a", "libmp3lame", "-b:a", "32k", mp3])
        let cut = directory.appendingPathComponent("cut.mp3").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["cut", mp3, "-o", cut, "--start", "33333s", "--end", "100000s"])
        let source = try Self.decode(mp3, with: "ffmpeg", in: directory), decoded = try Self.decode(cut, with: "ffmpeg", in: directory)
        // Mono, decoded as mono.
        #expect(decoded.count == 66_667)
        #expect(Array(source[33_333..<100_000]) == decoded, "FFmpeg's decode of the cut is its decode of the source there")
    }

    @Test func unrelatedMP3sJoinWithTheirSeam() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = directory.appendingPathComponent("a.mp3").path, b = directory.appendingPathComponent("b.mp3").path
        for (file, frequency) in [(a, 440), (b, 660)] {
            try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=f=\(frequency):d=2", "-ar", "44100",
                                                "-ac", "2", "-c:a", "libmp3lame", "-b:a", "128k", file])
        }
        let joined = directory.appendingPathComponent("ab.mp3").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["join", a, b, "-o", joined])
        let decoded = try Self.decode(joined, with: "ffmpeg", in: directory)
        // Two seconds each, and between them a's padding and b's delay: less than two frames.
        #expect(decoded.count / 2 > 176_400 && decoded.count / 2 < 176_400 + 2 * 1152, "\(decoded.count / 2)")
        let validate = try ExternalTool.run(try ExternalTool.keyframe, ["validate", joined])
        #expect(validate.status == 0, "\(validate.standardOutput)\(validate.standardError)")
        let other = directory.appendingPathComponent("mono.mp3").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=d=1", "-ar", "32000", "-ac", "1",
                                            "-c:a", "libmp3lame", other])
        let refused = try ExternalTool.run(try ExternalTool.keyframe, ["join", a, other, "-o", directory.appendingPathComponent("no.mp3").path])
        #expect(refused.status != 0)
        #expect(refused.standardError.contains("32000 Hz") && refused.standardError.contains("without re-encoding"), "\(refused.standardError)")
    }

    @Test func oggOpusCutSplitAndJoin() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try CodecInteropTests.makeWAV(rate: 48000, channels: 2, seconds: 10, to: wav)
        let opus = directory.appendingPathComponent("src.opus").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", wav, "-o", opus])
        let cut = directory.appendingPathComponent("cut.opus").path
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["cut", opus, "-o", cut, "--start", "1.2345", "--end", "7.5"])
        #expect(run.standardOutput.contains("300744 samples"), "\(run.standardOutput)")
        for decoder in ["ffmpeg", "opusdec"] {
            let source = try Self.decode(opus, with: decoder, in: directory)
            let decoded = try Self.decode(cut, with: decoder, in: directory)
            #expect(decoded.count == 300_744 * 2, "\(decoder) presents the cut's 300,744 samples")
            let reference = Array(source.dropFirst(59_256 * 2))
            let start = Self.snr(reference, decoded, frames: 0..<2048), whole = Self.snr(reference, decoded, frames: 0..<300_744)
            #expect(start >= 30 && whole >= 30, "\(decoder): \(start) dB over the first 2,048 samples, \(whole) dB in all")
        }
        let info = try ExternalTool.run("opusinfo", [cut])
        #expect(info.status == 0 && !info.standardOutput.contains("WARNING") && !info.standardError.contains("WARNING"),
                "\(info.standardOutput)\(info.standardError)")
        let validate = try ExternalTool.run(try ExternalTool.keyframe, ["validate", cut])
        #expect(validate.status == 0, "\(validate.standardOutput)\(validate.standardError)")

        let parts = directory.appendingPathComponent("parts").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["split", opus, "--at", "3.3", "--at", "6.1", "-o", parts])
        let joined = directory.appendingPathComponent("joined.ogg").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["join", "\(parts)/src-01.opus", "\(parts)/src-02.opus", "\(parts)/src-03.opus", "-o", joined])
        #expect(try Self.decode(joined, with: "opusdec", in: directory) == Self.decode(opus, with: "opusdec", in: directory),
                "the parts join into the source's samples")
        let refused = try ExternalTool.run(try ExternalTool.keyframe, ["cut", opus, "-o", directory.appendingPathComponent("x.m4a").path, "--start", "1"])
        #expect(refused.status != 0 && refused.standardError.contains("keyframe convert"), "\(refused.standardError)")
    }
}
