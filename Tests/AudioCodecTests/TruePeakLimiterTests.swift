import AudioCodec
import Foundation
import MediaCore
import TestSupport
import Testing

/// Issue 35: the look-ahead true-peak limiter of `convert --normalize` keeps the input's frames
/// exactly, passes what needs no limiting untouched, and holds the true peak (ITU-R BS.1770-4)
/// at its ceiling on the signals that defeat a sample-peak limiter.
@Suite struct TruePeakLimiterTests {
    static let rate = 48000

    /// Interleaved float PCM of `frames` frames: `sample(frame, channel)`.
    static func signal(frames: Int, channels: Int, _ sample: (Int, Int) -> Double) -> [Float] {
        var samples = [Float](repeating: 0, count: frames * channels)
        for frame in 0..<frames {
            for channel in 0..<channels { samples[frame * channels + channel] = Float(sample(frame, channel)) }
        }
        return samples
    }

    static func buffer(_ samples: ArraySlice<Float>, channels: Int) -> PCMBuffer {
        let bytes = samples.withUnsafeBytes { [UInt8]($0) }
        return PCMBuffer(format: PCMFormat(sampleRate: rate, channelCount: channels, sampleFormat: .float32), bytes: bytes)
    }

    static func floats(_ buffers: [PCMBuffer]) -> [Float] {
        buffers.flatMap { buffer in buffer.bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) } }
    }

    /// `samples` through `limiter` in buffers of the sizes `chunks` gives (cycled).
    static func run(_ limiter: TruePeakLimiter, _ samples: [Float], channels: Int, chunks: [Int] = [4096]) throws -> [Float] {
        var output: [PCMBuffer] = []
        var start = 0, turn = 0
        while start < samples.count {
            let frames = min(chunks[turn % chunks.count], (samples.count - start) / channels)
            turn += 1
            output += try limiter.transform(buffer(samples[start..<start + frames * channels], channels: channels))
            start += frames * channels
        }
        output += try limiter.finish()
        return floats(output)
    }

    /// The true peak in dBTP, by an interpolator finer than the limiter's: 16× with a
    /// Blackman-windowed sinc of 64 taps, and the samples themselves.
    static func referenceTruePeak(_ samples: [Float], channels: Int) -> Double {
        let frames = samples.count / channels, factor = 16, half = 32, length = 2 * half
        var kernel = [Double](repeating: 0, count: factor * length)
        for phase in 0..<factor {
            for index in 0..<length {
                // The weight of x[n + k], k = index − half + 1, at n + phase/16.
                let t = Double(index - half + 1) - Double(phase) / Double(factor)
                let sinc = t == 0 ? 1 : sin(Double.pi * t) / (Double.pi * t)
                let position = (t + Double(half)) / Double(length)
                kernel[phase * length + index] = sinc * (0.42 - 0.5 * cos(2 * Double.pi * position) + 0.08 * cos(4 * Double.pi * position))
            }
        }
        var peak = 0.0
        samples.withUnsafeBufferPointer { x in
            kernel.withUnsafeBufferPointer { h in
                for channel in 0..<channels {
                    for frame in 0..<frames {
                        peak = max(peak, Double(abs(x[frame * channels + channel])))
                        for phase in 1..<factor {
                            var sum = 0.0
                            let first = max(0, half - 1 - frame), last = min(length, frames - frame + half - 1)
                            for index in first..<last {
                                sum += Double(x[(frame + index - half + 1) * channels + channel]) * h[phase * length + index]
                            }
                            peak = max(peak, abs(sum))
                        }
                    }
                }
            }
        }
        return 20 * log10(peak)
    }

    /// libebur128's true peak (its own 4× interpolator), in dBTP.
    static func libebur128TruePeak(_ samples: [Float], channels: Int) throws -> Double {
        let meter = LoudnessMeter()
        try meter.add(buffer(samples[...], channels: channels))
        return try #require(try meter.measurement()).truePeak
    }

    @Test func outputHasExactlyTheInputFrames() throws {
        var random = SplitMix64(state: 35)
        // Loud noise, so that the limiter works all along; lengths below and above its delay.
        for frames in [1, 5, 99, 100, 101, 4095, 30001] {
            for channels in [1, 2, 6] {
                let samples = Self.signal(frames: frames, channels: channels) { _, _ in Double.random(in: -1...1, using: &random) }
                let limiter = TruePeakLimiter(ceiling: -1, gain: 3)
                let chunks = (0..<8).map { _ in Int.random(in: 1...5000, using: &random) }
                let output = try Self.run(limiter, samples, channels: channels, chunks: chunks)
                #expect(output.count == samples.count, "\(frames) frames × \(channels) ch: \(output.count / channels) out")
                #expect(limiter.statistics.frames == Int64(frames))
            }
        }
        // Nothing in, nothing out.
        let idle = TruePeakLimiter()
        #expect(try idle.finish().isEmpty)
    }

    @Test func passesAudioBelowTheCeilingUntouched() throws {
        // Music-like material peaking near -4 dBTP: no limiting, so the output is the input (times
        // the gain) to the bit, in place: the delay is compensated.
        var random = SplitMix64(state: 7)
        let samples = Self.signal(frames: 48000, channels: 2) { frame, channel in
            let t = Double(frame) / Double(Self.rate)
            return 0.3 * sin(2 * Double.pi * (440 + 110 * Double(channel)) * t) + 0.2 * sin(2 * Double.pi * 3001 * t)
                + 0.05 * Double.random(in: -1...1, using: &random)
        }
        for gain in [0.0, 2.5] {
            let limiter = TruePeakLimiter(ceiling: -1, gain: gain)
            let output = try Self.run(limiter, samples, channels: 2, chunks: [1, 17, 1000, 4096, 333])
            let factor = Float(pow(10, gain / 20))
            #expect(output.elementsEqual(samples.lazy.map { $0 * factor }), "gain \(gain) dB: not a bit-exact passthrough")
            #expect(limiter.statistics.maxGainReduction == 0)
            #expect(limiter.statistics.limitedFrames == 0)
        }
    }

    /// A raised-cosine fade over the first and last 10 ms.
    static func faded(_ frame: Int, of frames: Int) -> Double {
        let edge = min(frame, frames - 1 - frame)
        return edge >= 480 ? 1 : 0.5 - 0.5 * cos(Double.pi * Double(edge) / 480)
    }

    /// Signals whose true peak is above their sample peak, or which jump to full scale at once.
    static var overshootSignals: [(name: String, channels: Int, samples: [Float])] {
        let frames = 24000
        return [
            // fs/4 at 45°: every sample at ±0.707 (-3 dBFS), the true peak 0 dBTP (EBU Tech 3341 test 15).
            ("fs/4 sine at 45°", 1, signal(frames: frames, channels: 1) { frame, _ in sin(Double.pi / 2 * Double(frame) + Double.pi / 4) }),
            // Just under Nyquist at full scale, faded in and out (an abrupt start there would
            // overshoot by itself).
            ("0.99 × Nyquist sine", 2, signal(frames: frames, channels: 2) { frame, channel in
                faded(frame, of: frames) * sin(Double.pi * 0.99 * Double(frame) + Double(channel)) }),
            // A square wave of ±0.95 (not band-limited): its ringing overshoots between samples.
            ("square wave", 2, signal(frames: frames, channels: 2) { frame, _ in
                (frame / 41) % 2 == 0 ? 0.95 : -0.95 }),
            // A quiet tone, then a full-scale burst with inter-sample peaks on one channel only.
            ("burst after a quiet tone", 2, signal(frames: frames, channels: 2) { frame, channel in
                let t = Double(frame) / Double(rate)
                if frame < 12000 { return 0.05 * sin(2 * Double.pi * 500 * t) }
                return channel == 0 ? sin(2 * Double.pi * 11025 * t + 0.7) : 0.3 * sin(2 * Double.pi * 700 * t)
            }),
        ]
    }

    @Test(arguments: [0.0, 6.0])
    func holdsTheTruePeakAtTheCeiling(gain: Double) throws {
        for (name, channels, samples) in Self.overshootSignals {
            let limiter = TruePeakLimiter(ceiling: -1, gain: gain)
            let output = try Self.run(limiter, samples, channels: channels, chunks: [1000, 4096, 77])
            #expect(output.count == samples.count)
            let reference = Self.referenceTruePeak(output, channels: channels)
            let ebur128 = try Self.libebur128TruePeak(output, channels: channels)
            // 4× oversampling can miss up to ~0.2 dB between its points (BS.1770-4, Annex 2, note).
            #expect(reference <= -1 + 0.2, "\(name), gain \(gain) dB: true peak \(reference) dBTP (16×)")
            #expect(ebur128 <= -1 + 0.2, "\(name), gain \(gain) dB: true peak \(ebur128) dBTP (libebur128)")
            // Limited to the ceiling, not far below it.
            #expect(reference >= -1.6, "\(name), gain \(gain) dB: \(reference) dBTP, over-limited")
            #expect(limiter.statistics.maxGainReduction > 0, "\(name): the limiter did not act")
        }
    }

    @Test func gainFallsAcrossTheLookAheadBeforeAPeakAndRecovers() throws {
        // -20 dBFS tone, a 10 ms full-scale click at 0.5 s, the tone again.
        let clickStart = 24000, clickEnd = 24480
        let samples = Self.signal(frames: 72000, channels: 1) { frame, _ in
            let tone = 0.1 * sin(2 * Double.pi * 440 * Double(frame) / Double(Self.rate))
            return (clickStart..<clickEnd).contains(frame) ? sin(2 * Double.pi * 3000 * Double(frame) / Double(Self.rate)) : tone
        }
        let limiter = TruePeakLimiter(ceiling: -6, lookAhead: 0.002, release: 0.05)
        let output = try Self.run(limiter, samples, channels: 1)
        let lookAhead = 96
        // Before the look-ahead: untouched; within it, the gain falls; at the click, the ceiling holds.
        #expect(output[..<(clickStart - lookAhead - 8)].elementsEqual(samples[..<(clickStart - lookAhead - 8)]))
        #expect(Self.referenceTruePeak(Array(output[(clickStart - 200)..<(clickEnd + 200)]), channels: 1) <= -6 + 0.2)
        let reduction = limiter.statistics.maxGainReduction
        #expect(reduction > 5.5 && reduction < 6.5, "max gain reduction \(reduction) dB")
        // Recovered within 0.75 s (release 50 ms); active about the click's length plus release.
        #expect(output[(clickEnd + 36000)...].elementsEqual(samples[(clickEnd + 36000)...]))
        #expect(limiter.statistics.limitedSeconds > 0.01 && limiter.statistics.limitedSeconds < 0.5,
                "limited for \(limiter.statistics.limitedSeconds) s")
        // The interpolator's 6 frames and the look-ahead.
        #expect(limiter.latency == 6 + lookAhead - 2)
    }

    @Test func refusesIntegerPCMAndALayoutChange() throws {
        let limiter = TruePeakLimiter()
        let integer = PCMBuffer(format: PCMFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .int16), bytes: [0, 0, 0, 0])
        #expect(throws: CodecError.self) { try limiter.transform(integer) }
        _ = try limiter.transform(Self.buffer([0, 0][...], channels: 2))
        #expect(throws: CodecError.self) { try limiter.transform(Self.buffer([0][...], channels: 1)) }
    }
}
