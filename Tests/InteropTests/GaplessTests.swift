import Foundation
import Testing
import TestSupport

/// Issue 5, "Done means" 2: gapless M4A. A WAV of exactly N samples (a chirp plus noise, so the
/// cross-correlation has one sharp peak) → `keyframe encode -o x.m4a`:
/// - `keyframe decode x.m4a` gives exactly N samples, lined up with the input (the
///   cross-correlation over lags −64…64 peaks at 0);
/// - `ffmpeg -i x.m4a z.wav` lines up at lag 0 too and holds all N samples (N…N+1023: FFmpeg 5.1
///   applies the edit list's start but not its end);
/// - the edit list is one edit, media_time 1024 (the encoder's priming), segment_duration N in a
///   movie timescale equal to the sample rate; iTunSMPB says priming 1024 and original length N,
///   and `keyframe probe --json` reads both.
@Suite(.blocking) struct GaplessTests {
    static let lengths = [1024 * 40, 1024 * 40 + 1, 44100, 12345, 100]

    @Test(arguments: lengths, [GaplessLayout(rate: 44100, channels: 1), GaplessLayout(rate: 44100, channels: 2),
                               GaplessLayout(rate: 48000, channels: 1), GaplessLayout(rate: 48000, channels: 2)])
    func encodeDecodeIsSampleExact(frames: Int, layout: GaplessLayout) throws {
        try Self.expectGapless(frames: frames, layout: layout, fragmented: false)
    }

    /// `keyframe encode --fragmented` promises the same sample-exact M4A (Encode.swift's help:
    /// ".m4a/.mp4 is MP4 with a sample-exact edit list"), so a clean finish must carry the trim too:
    /// the edit list, iTunSMPB, and our own decode of exactly N samples. (FFmpeg 5.1 and mediainfo
    /// ignore an edit list in a fragmented file — checked by adding one to our output by hand — so
    /// ffmpeg's decode is only required to hold the N samples here.)
    @Test func fragmentedEncodeDecodeIsSampleExact() throws {
        try Self.expectGapless(frames: 44100, layout: GaplessLayout(rate: 44100, channels: 2), fragmented: true)
    }

    static func expectGapless(frames: Int, layout: GaplessLayout, fragmented: Bool,
                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (rate, channels) = (layout.rate, layout.channels)
        let what = "\(frames) samples, \(layout)\(fragmented ? ", fragmented" : "")"
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        let m4a = directory.appendingPathComponent("x.m4a").path
        let ours = directory.appendingPathComponent("y.wav").path
        let theirs = directory.appendingPathComponent("z.wav").path
        try makeSignal(rate: rate, channels: channels, frames: frames, to: wav)
        let input = try pcm(wav, channels: channels)
        try #require(input.frames == frames, "\(what): the input WAV has \(input.frames) samples", sourceLocation: sourceLocation)

        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", m4a] + (fragmented ? ["--fragmented"] : []))
        let packets = MuxCheck.packetsPrinted(run.standardOutput) ?? -1
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", m4a, "-o", ours])
        try MP4Check.ffmpeg(["-i", m4a, theirs])
        let y = try pcm(ours, channels: channels)
        let z = try pcm(theirs, channels: channels)
        #expect(y.frames == frames, "\(what): keyframe decode gave \(y.frames) samples", sourceLocation: sourceLocation)
        #expect(z.frames >= frames && (fragmented || z.frames <= frames + 1023), "\(what): ffmpeg gave \(z.frames) samples",
                sourceLocation: sourceLocation)
        for channel in Set([0, channels - 1]).sorted() {
            let lagOurs = peakLag(input, y, channel: channel)
            #expect(lagOurs == 0, "\(what), channel \(channel): keyframe decode lines up at lag \(lagOurs)", sourceLocation: sourceLocation)
            if !fragmented {
                let lagTheirs = peakLag(input, z, channel: channel)
                #expect(lagTheirs == 0, "\(what), channel \(channel): ffmpeg's decode lines up at lag \(lagTheirs)", sourceLocation: sourceLocation)
            }
        }

        // The edit list, read by the tests' own walker.
        let (timescale, edits) = try MuxCheck.editList(of: m4a)
        #expect(timescale == rate, "\(what): movie timescale \(timescale)", sourceLocation: sourceLocation)
        #expect(edits.count == 1 && edits.first?.mediaTime == 1024 && edits.first?.segmentDuration == Int64(frames)
                && edits.first?.rate == 0x1_0000,
                "\(what): edit list \(edits), want one edit (segment_duration \(frames), media_time 1024, rate 1)", sourceLocation: sourceLocation)

        // iTunSMPB and probe's priming/remainder.
        let report = try ExternalTool.probeJSON(m4a)
        let track = (report["tracks"] as? [[String: Any]])?.first ?? [:]
        let priming = track["priming"] as? Int ?? -1, remainder = track["remainder"] as? Int ?? -1
        let decoded = track["decodedFrames"] as? Int ?? -1
        #expect(priming == 1024 && decoded - priming - remainder == frames && decoded == packets * 1024,
                "\(what): probe says decodedFrames \(decoded), priming \(priming), remainder \(remainder); \(packets) packets",
                sourceLocation: sourceLocation)
        let tags = report["tags"] as? [String: String] ?? [:]
        let smpb = tags["----:com.apple.iTunes:iTunSMPB"]?.split(separator: " ").compactMap { UInt64($0, radix: 16) } ?? []
        #expect(smpb.count >= 4 && smpb[1] == 1024 && smpb[3] == UInt64(frames) && Int(smpb[2]) == remainder,
                "\(what): iTunSMPB \(tags["----:com.apple.iTunes:iTunSMPB"] ?? "missing"), want priming 400, padding \(remainder), length \(frames)",
                sourceLocation: sourceLocation)
    }

    /// N samples of a chirp plus white noise (seeded: `random(k)` keeps its state in variable k),
    /// a different chirp on the second channel.
    static func makeSignal(rate: Int, channels: Int, frames: Int, to path: String) throws {
        let left = "0.3*sin(2*PI*(150*t+1800*t*t))+0.25*(2*random(0)-1)"
        let right = "0.3*sin(2*PI*(260*t+1100*t*t))+0.25*(2*random(1)-1)"
        let expression = channels == 1 ? left : left + "|" + right
        let seconds = Double(frames) / Double(rate) + 0.1
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "aevalsrc='\(expression)':s=\(rate):d=\(seconds)",
                             "-af", "atrim=end_sample=\(frames)", "-c:a", "pcm_s16le", path])
    }

    /// A 16-bit WAV's samples, interleaved.
    struct PCM {
        var samples: [Int16]
        var channels: Int
        var frames: Int { samples.count / channels }
    }

    static func pcm(_ path: String, channels: Int) throws -> PCM {
        let data = try CodecInteropTests.wavPayload(path)
        var samples = [Int16](repeating: 0, count: data.count / 2)
        samples.withUnsafeMutableBytes { raw in _ = data.copyBytes(to: raw) }
        return PCM(samples: samples.map { Int16(littleEndian: $0) }, channels: channels)
    }

    /// `pcm` from frame `start` on.
    static func tail(_ pcm: PCM, from start: Int) -> PCM {
        PCM(samples: Array(pcm.samples.dropFirst(min(pcm.samples.count, start * pcm.channels))), channels: pcm.channels)
    }

    /// The first of `offsets` (frames) at which `y` no longer lines up with `x` at lag 0 (samples
    /// lost or repeated before it), or `nil` when it lines up at every one.
    static func continuity(_ x: PCM, _ y: PCM, at offsets: [Int]) -> Int? {
        offsets.first { peakLag(tail(x, from: $0), tail(y, from: $0), channel: 0, window: 4096, maxLag: 1100) != 0 }
    }

    /// The lag in −64…64 at which Σ x[n]·y[n+lag] over the first 8192 samples of x is largest.
    static func peakLag(_ x: PCM, _ y: PCM, channel: Int, window: Int = 8192, maxLag: Int = 64) -> Int {
        let a = stride(from: channel, to: min(x.samples.count, window * x.channels), by: x.channels).map { Double(x.samples[$0]) }
        let b = stride(from: channel, to: y.samples.count, by: y.channels).map { Double(y.samples[$0]) }
        var best = (lag: Int.min, value: -Double.infinity)
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                for lag in -maxLag...maxLag {
                    var sum = 0.0
                    let (low, high) = (max(0, -lag), min(a.count, b.count - lag))
                    if low < high { for n in low..<high { sum += a[n] * b[n + lag] } }
                    if sum > best.value { best = (lag, sum) }
                }
            }
        }
        return best.lag
    }
}

struct GaplessLayout: Sendable, CustomTestStringConvertible {
    var rate: Int
    var channels: Int
    var testDescription: String { "\(rate) Hz \(channels) ch" }
}
