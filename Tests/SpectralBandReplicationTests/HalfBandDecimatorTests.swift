import Foundation
import SpectralBandReplication
import TestSupport
import Testing

/// The 2:1 decimator of the LC core's input: its filter, its delay compensation, its streaming.
@Suite struct HalfBandDecimatorTests {
    /// All of `input` in one chunk, then the tail.
    static func decimate(_ input: [Float]) -> [Float] {
        var decimator = HalfBandDecimator(channelCount: 1)
        var output: [Float] = []
        decimator.process(input, channel: 0, into: &output)
        decimator.finish(channel: 0, into: &output)
        return output
    }

    static func tone(_ frequency: Double, count: Int, sampleRate: Double = 48_000) -> [Float] {
        (0..<count).map { Float(0.5 * sin(2 * Double.pi * frequency * Double($0) / sampleRate + 0.1)) }
    }

    static func rms(_ samples: ArraySlice<Float>) -> Double {
        (samples.map { Double($0) * Double($0) }.reduce(0, +) / Double(samples.count)).squareRoot()
    }

    /// The response of the designed filter meets the stated band edges: passband 0…0.225·fs
    /// within ±0.001 dB, stopband 0.275·fs…fs/2 at least 85 dB down, −6 dB at fs/4, and a
    /// half-band's zeros at every even non-zero offset.
    @Test func theFilterMeetsItsBandEdges() {
        let h = HalfBandDecimator(channelCount: 1).impulseResponse
        #expect(h.count == HalfBandDecimator.tapCount && h.count == 113)
        let centre = h.count / 2
        #expect(h[centre] == 0.5)
        for offset in stride(from: 2, through: centre, by: 2) {
            #expect(h[centre + offset] == 0 && h[centre - offset] == 0)
        }
        for offset in 1...centre { #expect(h[centre + offset] == h[centre - offset]) }
        func magnitude(_ f: Double) -> Double {
            var sum = 0.0
            for (n, tap) in h.enumerated() { sum += Double(tap) * cos(2 * Double.pi * f * Double(n - centre)) }
            return 20 * log10(abs(sum))
        }
        var passband = (min: 0.0, max: -100.0), stopband = -300.0
        for step in 0...900 {
            let f = HalfBandDecimator.passbandEdge * Double(step) / 900
            let level = magnitude(f)
            passband = (min(passband.min, level), max(passband.max, level))
        }
        for step in 0...900 {
            stopband = max(stopband, magnitude(HalfBandDecimator.stopbandEdge + (0.5 - HalfBandDecimator.stopbandEdge) * Double(step) / 900))
        }
        #expect(passband.max < 0.001 && passband.min > -0.001, "passband \(passband)")
        #expect(stopband < -85, "stopband \(stopband) dB")
        #expect(abs(magnitude(0.25) + 6.0206) < 0.01)
        print("HalfBandDecimator: passband ripple \(passband.min)…\(passband.max) dB, stopband ≤ \(stopband) dB")
    }

    /// An impulse at input 2j comes out centred at output j (the group delay is removed):
    /// the centre tap ½ at j, the odd taps around it; an impulse at 2j + 1 lands between j and j + 1.
    @Test(arguments: [0, 1, 37, 150])
    func anImpulseAtTwoJComesOutAtJ(j: Int) {
        var input = [Float](repeating: 0, count: 400)
        input[2 * j] = 1
        let output = Self.decimate(input)
        #expect(output.count == 200)
        #expect(output[j] == 0.5)
        let peak = output.indices.max { abs(output[$0]) < abs(output[$1]) }!
        #expect(peak == j)
        var odd = [Float](repeating: 0, count: 400)
        odd[2 * j + 1] = 1
        let between = Self.decimate(odd)
        #expect(between[j] == between[j + 1] && between[j] > 0.3)
    }

    /// A 1 kHz tone passes unchanged: each output sample equals input 2j (no delay), level
    /// within 0.05 dB (measured: far less).
    @Test func aOneKilohertzTonePassesAligned() {
        let input = Self.tone(1000, count: 48_000)
        let output = Self.decimate(input)
        #expect(output.count == 24_000)
        let inner = 200..<(output.count - 200)
        var error = 0.0, cross = 0.0, power = 0.0
        for j in inner {
            let x = Double(input[2 * j]), y = Double(output[j])
            error = max(error, abs(y - x))
            cross += x * y
            power += x * x
        }
        let gain = 20 * log10(cross / power)
        #expect(abs(gain) < 0.05, "gain \(gain) dB")
        #expect(abs(gain) < 0.001)
        #expect(error < 1e-4, "largest sample error \(error) on amplitude 0.5")
    }

    /// Tones above 12 kHz (for 48 kHz input) are rejected by at least 80 dB: 13.5 kHz just past
    /// the stopband edge, 15 kHz, 20 kHz.
    @Test(arguments: [13_500.0, 15_000.0, 20_000.0])
    func aToneAboveTwelveKilohertzIsRejected(frequency: Double) {
        let input = Self.tone(frequency, count: 48_000)
        let output = Self.decimate(input)
        // The abrupt start and end of the tone are broadband; measure the steady state.
        let attenuation = 20 * log10(Self.rms(output[200..<(output.count - 200)]) / Self.rms(input[...]))
        #expect(attenuation < -80, "\(frequency) Hz: \(attenuation) dB")
    }

    /// Outputs do not depend on how the input is chunked: 1-sample chunks, one chunk, random
    /// chunks give the same samples, and N inputs give (N + 1)/2 outputs in total.
    @Test func chunkingDoesNotChangeTheOutput() {
        var generator = SplitMix64(state: 99)
        let input = (0..<5001).map { _ in Float.random(in: -1...1, using: &generator) }
        let whole = Self.decimate(input)
        #expect(whole.count == 2501)

        var decimator = HalfBandDecimator(channelCount: 1)
        var single: [Float] = []
        for sample in input { decimator.process([sample], channel: 0, into: &single) }
        decimator.finish(channel: 0, into: &single)
        #expect(single == whole)

        // The same decimator, reset by finish, for a stream in random chunks.
        var random: [Float] = []
        var position = 0
        while position < input.count {
            let size = min(Int.random(in: 0...700, using: &generator), input.count - position)
            decimator.process(Array(input[position..<position + size]), channel: 0, into: &random)
            position += size
        }
        decimator.finish(channel: 0, into: &random)
        #expect(random == whole)
    }

    @Test(arguments: [0, 1, 2, 3, 55, 56, 57, 110, 111, 1000, 1001])
    func nInputsGiveHalfRoundedUp(count: Int) {
        let output = Self.decimate([Float](repeating: 0.25, count: count))
        #expect(output.count == (count + 1) / 2)
    }

    /// Channels are independent streams; the planar calls equal the per-channel ones.
    @Test func channelsAreIndependent() {
        let left = Self.tone(440, count: 3000), right = Self.tone(5000, count: 2999)
        var decimator = HalfBandDecimator(channelCount: 2)
        var output: [[Float]] = [[], []]
        decimator.process(planar: [Array(left[..<1000]), Array(right[..<17])], into: &output)
        decimator.process(planar: [Array(left[1000...]), Array(right[17...])], into: &output)
        decimator.finish(into: &output)
        #expect(output[0] == Self.decimate(left))
        #expect(output[1] == Self.decimate(right))
        #expect(output[0].count == 1500 && output[1].count == 1500)
    }
}
