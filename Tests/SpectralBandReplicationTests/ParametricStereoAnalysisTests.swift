import Foundation
import Testing
@testable import SpectralBandReplication

/// Parametric stereo's analysis: the stereo bands, the quantised IID and ICC of panned,
/// uncorrelated and out-of-phase QMF signals, and a downmix that keeps the channels' mean energy.
@Suite struct ParametricStereoAnalysisTests {
    /// Table 8.48 collapsed to subbands: every subband feeds a band, bands rise with the
    /// subbands, and all 20 are fed.
    @Test func everySubbandFeedsAStereoBand() {
        let bands = ParametricStereoAnalysis.bandsOfSubband
        #expect(bands.count == 64)
        #expect(Set(bands.flatMap { Array($0) }) == Set(0..<20))
        for index in 1..<64 { #expect(bands[index].lowerBound >= bands[index - 1].upperBound, "subband \(index): \(bands[index])") }
        #expect(bands[3] == 8...8 && bands[63] == 19...19)
    }

    /// Left and right histories of 40 slots: in every subband, seeded noise `n` and a second
    /// noise `u`, left = a·n, right = b·n + c·u.
    static func histories(left a: Float, right b: Float, independent c: Float) -> (QMFSlotHistory, QMFSlotHistory) {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func noise() -> Float {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(Int64(bitPattern: state) >> 11) / Float(1 << 52) * 1000
        }
        var left = QMFSlotHistory(), right = QMFSlotHistory()
        for _ in 0..<40 {
            var lr = [Float](repeating: 0, count: 64), li = lr, rr = lr, ri = lr
            for k in 0..<64 {
                let (nr, ni, ur, ui) = (noise(), noise(), noise(), noise())
                (lr[k], li[k]) = (a * nr, a * ni)
                (rr[k], ri[k]) = (b * nr + c * ur, b * ni + c * ui)
            }
            lr.withUnsafeBufferPointer { r in li.withUnsafeBufferPointer { i in left.append(real: r, imaginary: i) } }
            rr.withUnsafeBufferPointer { r in ri.withUnsafeBufferPointer { i in right.append(real: r, imaginary: i) } }
        }
        return (left, right)
    }

    @Test func pannedUncorrelatedAndOutOfPhaseSignalsGiveTheirParameters() {
        // Centred and identical: IID 0 dB, ICC 1.
        var (left, right) = Self.histories(left: 1, right: 1, independent: 0)
        var p = ParametricStereoAnalysis.parameters(left: left, right: right, slots: 4..<36)
        #expect(p.intensity == Array(repeating: 0, count: 20) && p.coherence == Array(repeating: 0, count: 20), "\(p)")
        // Left 10 dB louder (amplitude √10), coherent: index +4 (Table 8.25: 0, 2, 4, 7, 10 dB).
        (left, right) = Self.histories(left: Float(10.0.squareRoot()), right: 1, independent: 0)
        p = ParametricStereoAnalysis.parameters(left: left, right: right, slots: 4..<36)
        #expect(p.intensity == Array(repeating: 4, count: 20), "\(p.intensity)")
        // Right only: the far end, −7 (−25 dB).
        (left, right) = Self.histories(left: 0, right: 1, independent: 0)
        p = ParametricStereoAnalysis.parameters(left: left, right: right, slots: 4..<36)
        #expect(p.intensity == Array(repeating: -7, count: 20), "\(p.intensity)")
        // Uncorrelated, equal: IID 0, ICC near 0 (index 5), within one step where few samples meet.
        (left, right) = Self.histories(left: 0, right: 0, independent: 1)
        let (noiseLeft, _) = Self.histories(left: 1, right: 0, independent: 0)
        p = ParametricStereoAnalysis.parameters(left: noiseLeft, right: right, slots: 4..<36)
        #expect(p.coherence.allSatisfy { (4...6).contains($0) }, "\(p.coherence)")
        // Out of phase: ICC −1 (index 7).
        (left, right) = Self.histories(left: 1, right: -1, independent: 0)
        p = ParametricStereoAnalysis.parameters(left: left, right: right, slots: 4..<36)
        #expect(p.coherence == Array(repeating: 7, count: 20), "\(p.coherence)")
    }

    /// The downmix carries the mean of the channels' energies: for identical channels, for
    /// uncorrelated ones (a 3 dB boost), and for out-of-phase ones (the right channel turned to
    /// the left's phase first, so they add instead of cancelling).
    @Test func theDownmixKeepsTheMeanEnergy() {
        func downmixEnergy(_ a: Float, _ b: Float, _ c: Float) -> (mix: Float, mean: Float) {
            let (left, right) = Self.histories(left: a, right: b, independent: c)
            var analysis = ParametricStereoAnalysis()
            var mix: Float = 0, mean: Float = 0
            var real = [Float](repeating: 0, count: 64), imaginary = real
            for slot in 0..<40 {
                var l = ([Float](repeating: 0, count: 64), [Float](repeating: 0, count: 64)), r = l
                for k in 0..<64 {
                    (l.0[k], l.1[k]) = left.sample(band: k, slot: slot)
                    (r.0[k], r.1[k]) = right.sample(band: k, slot: slot)
                }
                l.0.withUnsafeBufferPointer { lr in l.1.withUnsafeBufferPointer { li in
                    r.0.withUnsafeBufferPointer { rr in r.1.withUnsafeBufferPointer { ri in
                        real.withUnsafeMutableBufferPointer { mr in imaginary.withUnsafeMutableBufferPointer { mi in
                            analysis.downmix(left: (lr, li), right: (rr, ri), real: mr, imaginary: mi)
                        } }
                    } }
                } }
                guard slot >= 10 else { continue }
                for k in 0..<64 {
                    mix += real[k] * real[k] + imaginary[k] * imaginary[k]
                    mean += 0.5 * (left.energy(band: k, slot: slot) + right.energy(band: k, slot: slot))
                }
            }
            return (mix, mean)
        }
        for (a, b, c) in [(Float(1), Float(1), Float(0)), (1, 0, 1), (1, 0.3, 0), (1, -1, 0), (1, -0.5, 0.1)] {
            let (mix, mean) = downmixEnergy(a, b, c)
            let decibels = 10 * log10(mix / mean)
            #expect(abs(decibels) < 1, "left \(a)·n, right \(b)·n + \(c)·u: the downmix is \(decibels) dB from the mean")
        }
    }
}
