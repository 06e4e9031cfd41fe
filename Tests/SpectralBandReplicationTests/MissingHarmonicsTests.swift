import AACBitstream
import Foundation
import MediaCore
import Testing
@testable import SpectralBandReplication

/// Missing-harmonics detection (`bs_add_harmonic`): which bands get a sine, how a flag holds
/// from frame to frame, and what energy a flagged band codes; then the whole encoder on a high
/// tone over a low-passed noise (flagged), white noise and a sawtooth (never flagged: nothing
/// tonal, or the copy-up makes the harmonics itself).
@Suite struct MissingHarmonicsTests {
    /// Three high-resolution bands over subbands 20–26: [20, 21), [21, 23), [23, 26).
    static let bands = [20, 21, 23, 26]

    /// A flat spectrum of noise (energy 1000 a subband, gain 1) from subband 19 to 26, with
    /// `peak` (an index from 20) raised to `energy` at `gain`, and the copied-up source's gain
    /// `source` everywhere. The energies run from kx − 1 (19) to k2 (26).
    static func frame(peak: Int?, energy: Float = 100_000, gain: Float = 1000, source: Float = 1) -> ([Float], [Float], [Float]) {
        var energies = [Float](repeating: 1000, count: 8), original = [Float](repeating: 1, count: 6)
        if let peak { energies[peak + 1] = energy; original[peak] = gain }
        return (energies, original, [Float](repeating: source, count: 6))
    }

    static func detect(_ detector: inout MissingHarmonicsDetector, _ frame: ([Float], [Float], [Float]), transient: Bool = false) -> [Bool] {
        detector.detect(highBands: bands, energies: frame.0, originalGain: frame.1, sourceGain: frame.2, transient: transient)
    }

    @Test func aToneTheCopyUpLacksIsFlaggedAndNothingElse() {
        var detector = MissingHarmonicsDetector(bandCount: 3)
        #expect(Self.detect(&detector, Self.frame(peak: 4)) == [false, false, true])
        // The copy-up makes a tone there itself: nothing is missing.
        var tonalSource = MissingHarmonicsDetector(bandCount: 3)
        #expect(Self.detect(&tonalSource, Self.frame(peak: 4, source: 1000)) == [false, false, false])
        // Noise, or a loud but unpredictable subband: nothing.
        var noise = MissingHarmonicsDetector(bandCount: 3)
        #expect(Self.detect(&noise, Self.frame(peak: nil)) == [false, false, false])
        #expect(Self.detect(&noise, Self.frame(peak: 4, gain: 1.2)) == [false, false, false])
        // A tonal subband that does not hold half its band's energy.
        var weak = MissingHarmonicsDetector(bandCount: 3)
        #expect(Self.detect(&weak, Self.frame(peak: 4, energy: 1500)) == [false, false, false])
        // Silence is never flagged, however predictable.
        var silent = MissingHarmonicsDetector(bandCount: 3)
        let quiet = ([Float](repeating: 0, count: 8), [Float](repeating: 1000, count: 6), [Float](repeating: 1, count: 6))
        #expect(Self.detect(&silent, quiet) == [false, false, false])
    }

    /// A tone on the border of two bands (equal energy in subbands 22 and 23) flags one band,
    /// the lower.
    @Test func aToneOnABandBorderFlagsOneBand() {
        var detector = MissingHarmonicsDetector(bandCount: 3)
        var frame = Self.frame(peak: 2)
        frame.0[4] = 100_000
        frame.1[3] = 1000
        #expect(Self.detect(&detector, frame) == [false, true, false])
    }

    /// A tone the core codes just below kx leaks into subband kx, which is tonal and the loudest
    /// of its band: not a sine (its louder neighbour is below kx). The same above k2.
    @Test func aToneOutsideTheRangeIsNotFlaggedAtTheEdges() {
        var detector = MissingHarmonicsDetector(bandCount: 3)
        var below = Self.frame(peak: 0, energy: 30_000)
        below.0[0] = 100_000
        #expect(Self.detect(&detector, below) == [false, false, false])
        var above = Self.frame(peak: 5, energy: 30_000)
        above.0[7] = 100_000
        #expect(Self.detect(&detector, above) == [false, false, false])
        // The control: with quiet neighbours, both edges are sines.
        #expect(Self.detect(&detector, Self.frame(peak: 0)) == [true, false, false])
    }

    /// A click in a frame lowers its prediction gain; a held sine stays through it.
    @Test func aHeldSineStaysThroughATransient() {
        var detector = MissingHarmonicsDetector(bandCount: 3)
        #expect(Self.detect(&detector, Self.frame(peak: 4)) == [false, false, true])
        #expect(Self.detect(&detector, Self.frame(peak: 4, gain: 2), transient: true) == [false, false, true])
        #expect(Self.detect(&detector, Self.frame(peak: 4, gain: 2)) == [false, false, false])
    }

    /// A gain between the hold and the onset thresholds keeps a flag but does not raise one.
    @Test func flagsHoldBetweenTheThresholds() {
        let between = (MissingHarmonicsDetector.holdGain + MissingHarmonicsDetector.onsetGain) / 2
        var detector = MissingHarmonicsDetector(bandCount: 3)
        #expect(Self.detect(&detector, Self.frame(peak: 4, gain: between)) == [false, false, false])
        #expect(Self.detect(&detector, Self.frame(peak: 4)) == [false, false, true])
        #expect(Self.detect(&detector, Self.frame(peak: 4, gain: between)) == [false, false, true])
        #expect(detector.flagged == [false, false, true])
        #expect(Self.detect(&detector, Self.frame(peak: 4, gain: 1)) == [false, false, false])
    }

    /// The sinusoid's energy (its peak subband and the louder neighbour), divided by the coded
    /// band's width up to the decoder's largest gain boost.
    @Test func aFlaggedBandCodesTheSinusoidsEnergy() {
        let energies: [Float] = [10, 10, 800, 200, 10, 10]
        #expect(MissingHarmonicsDetector.sinusoidEnergy(energies, band: 2..<3) == 1000)
        #expect(MissingHarmonicsDetector.sinusoidEnergy(energies, band: 1..<5) == 1000)
        #expect(MissingHarmonicsDetector.codedEnergy(sinusoid: 1000, width: 1) == 1000)
        #expect(MissingHarmonicsDetector.codedEnergy(sinusoid: 1000, width: 2) == 500)
        let wide = MissingHarmonicsDetector.codedEnergy(sinusoid: 1000, width: 5)
        #expect(abs(wide - 1000 / MissingHarmonicsDetector.maximumBoost) < 0.01)
    }

    /// The flags of every frame of `seconds` of stereo `signal` (one value per input sample,
    /// both channels the same) through the whole encoder at 48 kb/s, 48 kHz, read back by the
    /// stream parser.
    static func encodedFlags(seconds: Double, _ signal: (Int) -> Float) throws -> (tables: SBRFrequencyTables, flags: [[Bool]]) {
        let tuning = try SBRTuning(bitrate: 48000, channelCount: 2, outputSampleRate: 48000)
        var encoder = SBREncoder(tuning: tuning)
        let frames = Int(seconds * 48000)
        let plane = (0..<frames).map(signal)
        var core: [[Float]] = [[], []]
        plane.withUnsafeBufferPointer { samples in encoder.analyze([samples, samples], frameCount: frames, core: &core) }
        var parser = SBRStreamParser(outputSampleRate: 48000)
        var flags: [[Bool]] = []
        for _ in 0..<((frames - 40 * 64) / 2048) {
            let fill = try encoder.nextFrame()
            var reader = BitReader(fill.payload)
            try reader.skipBits(4)
            let data = try #require(try parser.parse(&reader, channelCount: 2, bitLimit: fill.payload.count * 8 - 4))
            flags.append(data.channels[0].addHarmonics ?? Array(repeating: false, count: tuning.tables.highBandCount))
        }
        return (tuning.tables, flags)
    }

    /// Seeded white noise in −1...1.
    static func noiseSource(seed: UInt64) -> () -> Float {
        var state = seed
        return {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(Int64(bitPattern: state) >> 11) / Float(1 << 52)
        }
    }

    /// 13,031 Hz (QMF subband 34 at 48 kHz) over noise low-passed at about 2 kHz: the band
    /// holding subband 34 is flagged in every frame once the tone has filled the predictor's
    /// memory, and no other band ever is.
    @Test func aHighToneOverLowNoiseIsFlaggedInItsBand() throws {
        let noise = Self.noiseSource(seed: 7)
        var lowpass: [Float] = [0, 0, 0, 0]
        let coefficient: Float = 0.25
        let (tables, flags) = try Self.encodedFlags(seconds: 1.5) { index in
            var value = noise()
            for stage in 0..<4 {
                lowpass[stage] += coefficient * (value - lowpass[stage])
                value = lowpass[stage]
            }
            return 0.5 * value + 0.05 * Float(sin(2 * Double.pi * 13031 * Double(index) / 48000))
        }
        let band = try #require(tables.high.lastIndex { $0 <= 34 })
        for (frame, flagged) in flags.enumerated().dropFirst(2) {
            #expect(flagged == (0..<tables.highBandCount).map { $0 == band }, "frame \(frame): \(flagged), expected band \(band) only")
        }
    }

    /// White noise has nothing tonal; a 220 Hz sawtooth has harmonics every 220 Hz up the whole
    /// band, which the copy-up makes from the low band: neither gets a sine.
    @Test func noiseAndACopiedUpHarmonicSeriesAreNeverFlagged() throws {
        let noise = Self.noiseSource(seed: 11)
        let white = try Self.encodedFlags(seconds: 1) { _ in 0.3 * noise() }
        #expect(white.flags.allSatisfy { !$0.contains(true) }, "white noise: \(white.flags.filter { $0.contains(true) }.count) frames flagged")
        let saw = try Self.encodedFlags(seconds: 1) { index in
            let phase = (220 * Double(index) / 48000).truncatingRemainder(dividingBy: 1)
            return Float(0.3 * (2 * phase - 1))
        }
        #expect(saw.flags.allSatisfy { !$0.contains(true) }, "sawtooth: \(saw.flags.filter { $0.contains(true) }.count) frames flagged")
    }
}
