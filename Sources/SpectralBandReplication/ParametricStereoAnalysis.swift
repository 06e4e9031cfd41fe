internal import RealModule

/// The encoder's side of baseline parametric stereo (ISO/IEC 14496-3 8.6.4; the baseline
/// profile of 8.A: 20 stereo bands, mixing procedure R_A, no phase parameters): the mono
/// downmix the core and SBR code, and the stereo parameters a decoder rebuilds left and right
/// from.
///
/// - Downmix: per QMF subband and slot, `M = g · (L + R·e^(iφ)) / 2`, with `φ` the phase of the
///   smoothed cross term `Σ L·R*` (so the right channel is turned to the left's phase first: an
///   out-of-phase pair adds up instead of cancelling) and `g = √((E_L + E_R) / (2 · E_M'))`, the
///   energies smoothed over a few slots and `g` kept within 1...2: the decoder's upmix gives left
///   and right together twice M's energy, so M carries their mean, also where the channels are
///   uncorrelated (up to 6 dB of boost). The stereo parameters come from the original channels,
///   so a negative coherence still tells the decoder to rebuild them out of phase.
/// - Parameters per stereo band over a run of slots: the inter-channel intensity difference
///   `IID = 10·log10(E_L / E_R)` (the decoder's `c = 10^(IID/20)` puts `c/√(1+c²)·√2` on the left,
///   8.6.4.6.2) on the coarse grid of Table 8.25 (±25 dB, 15 steps), and the inter-channel
///   coherence `ICC = Re(Σ L·R*) / √(E_L·E_R)` on Table 8.27's 8 steps.
/// - Stereo bands are Table 8.48's (`k_to_i_20`) over the hybrid bins: subbands 0–2 are split
///   into 10 bins by the decoder's own hybrid filters (``HybridFilterbank``, 8.6.4.3), above
///   that a bin is a subband.
///
/// Not Sendable: one stream's smoothing state.
public struct ParametricStereoAnalysis {
    /// Stereo bands (`iid_mode` and `icc_mode` 1: 20 bands).
    public static let bandCount = 20
    /// The IID steps in dB for indices −7...7 (Table 8.25, coarse).
    public static let intensitySteps: [Float] = [-25, -18, -14, -10, -7, -4, -2, 0, 2, 4, 7, 10, 14, 18, 25]
    /// The ICC values for indices 0...7 (Table 8.27).
    public static let coherenceSteps: [Float] = [1, 0.937, 0.84118, 0.60092, 0.36764, 0, -0.589, -1]
    /// The downmix's largest gain over (L + R) / 2, in amplitude (6 dB).
    public static let maximumDownmixGain: Float = 2
    /// The smoothing of the downmix's energies per slot (a one-pole filter's coefficient).
    static let smoothing: Float = 0.25

    /// The stereo bands each QMF subband feeds (Table 8.48 above subband 2; subbands 0, 1 and 2
    /// feed the bands their hybrid bins do: ``HybridFilterbank/bandOfBin``).
    public static let bandsOfSubband: [ClosedRange<Int>] = {
        // k_to_i_20 for the bins of subbands 3...63 (bin = subband + 7).
        let table: [Int] = [8, 9, 10, 11, 12, 13, 14, 14, 15, 15, 15, 16, 16, 16, 16, 17, 17, 17, 17, 17]
            + Array(repeating: 18, count: 12) + Array(repeating: 19, count: 29)
        return [0...3, 4...5, 6...7] + table.map { $0...$0 }
    }()

    private var leftEnergy = [Float](repeating: 0, count: 64)
    private var rightEnergy = [Float](repeating: 0, count: 64)
    private var sumEnergy = [Float](repeating: 0, count: 64)
    /// The smoothed cross term Σ L·R*, per subband, as (real, imaginary).
    private var crossReal = [Float](repeating: 0, count: 64)
    private var crossImaginary = [Float](repeating: 0, count: 64)

    /// An analysis with no history.
    public init() {}

    /// The downmix of one QMF slot of left and right into `real` and `imaginary` (64 each).
    public mutating func downmix(left: (real: UnsafeBufferPointer<Float>, imaginary: UnsafeBufferPointer<Float>),
                                 right: (real: UnsafeBufferPointer<Float>, imaginary: UnsafeBufferPointer<Float>),
                                 real: UnsafeMutableBufferPointer<Float>, imaginary: UnsafeMutableBufferPointer<Float>) {
        let a = Self.smoothing
        for k in 0..<64 {
            let (lr, li) = (left.real[k], left.imaginary[k])
            let (rr, ri) = (right.real[k], right.imaginary[k])
            // L·R* = (lr·rr + li·ri) + i(li·rr − lr·ri)
            crossReal[k] += a * (lr * rr + li * ri - crossReal[k])
            crossImaginary[k] += a * (li * rr - lr * ri - crossImaginary[k])
            leftEnergy[k] += a * (lr * lr + li * li - leftEnergy[k])
            rightEnergy[k] += a * (rr * rr + ri * ri - rightEnergy[k])
            // R turned by the cross term's phase: R·e^(iφ), e^(iφ) = (L·R*)/|L·R*|.
            let magnitude = Float.sqrt(crossReal[k] * crossReal[k] + crossImaginary[k] * crossImaginary[k])
            let (cr, ci) = magnitude > 1e-9 ? (crossReal[k] / magnitude, crossImaginary[k] / magnitude) : (1, 0)
            let sr = 0.5 * (lr + (rr * cr - ri * ci)), si = 0.5 * (li + (rr * ci + ri * cr))
            sumEnergy[k] += a * (sr * sr + si * si - sumEnergy[k])
            let wanted = 0.5 * (leftEnergy[k] + rightEnergy[k])
            let gain = sumEnergy[k] > 1e-9 ? min(max(Float.sqrt(wanted / sumEnergy[k]), 1), Self.maximumDownmixGain)
                                           : (wanted > 1e-9 ? Self.maximumDownmixGain : 1)
            real[k] = gain * sr
            imaginary[k] = gain * si
        }
    }

    /// The quantised parameters of the 20 stereo bands over `slots` of `left` and `right`: IID
    /// indices in −7...7 and ICC indices in 0...7. A band with no energy in either channel is
    /// centred and coherent (0, 0). Subbands 0–2 are split by the decoder's hybrid filters
    /// (``HybridFilterbank``), which read 6 slots either side of `slots`.
    public static func parameters(left: QMFSlotHistory, right: QMFSlotHistory, slots: Range<Int>) -> (intensity: [Int], coherence: [Int]) {
        var leftSum = [Double](repeating: 0, count: bandCount)
        var rightSum = [Double](repeating: 0, count: bandCount)
        var crossSum = [Double](repeating: 0, count: bandCount)
        func accumulate(_ band: Int, _ l: (Float, Float), _ r: (Float, Float)) {
            leftSum[band] += Double(l.0 * l.0 + l.1 * l.1)
            rightSum[band] += Double(r.0 * r.0 + r.1 * r.1)
            crossSum[band] += Double(l.0 * r.0 + l.1 * r.1)
        }
        // The hybrid region: subbands 0–2 in 10 bins, each bin to its band (Table 8.48).
        for slot in slots {
            let l = HybridFilterbank.bins(left, slot: slot), r = HybridFilterbank.bins(right, slot: slot)
            for bin in 0..<HybridFilterbank.binCount { accumulate(HybridFilterbank.bandOfBin[bin], l[bin], r[bin]) }
        }
        for subband in 3..<64 {
            let band = bandsOfSubband[subband].lowerBound
            for slot in slots { accumulate(band, left.sample(band: subband, slot: slot), right.sample(band: subband, slot: slot)) }
        }
        var intensity: [Int] = []
        var coherence: [Int] = []
        for band in 0..<bandCount {
            let l = leftSum[band], r = rightSum[band]
            guard l + r > 1e-3 else { intensity.append(0); coherence.append(0); continue }
            let decibels = Float(10 * Double.log10((l + 1e-3) / (r + 1e-3)))
            intensity.append(nearest(decibels, in: intensitySteps) - 7)
            let rho = l > 1e-3 && r > 1e-3 ? Float(crossSum[band] / Double.sqrt(l * r)) : 1
            coherence.append(nearest(rho, in: coherenceSteps))
        }
        return (intensity, coherence)
    }

    /// The index of the value in `steps` nearest `value`.
    static func nearest(_ value: Float, in steps: [Float]) -> Int {
        var best = 0
        for index in steps.indices where abs(steps[index] - value) < abs(steps[best] - value) { best = index }
        return best
    }
}

@available(*, unavailable)
extension ParametricStereoAnalysis: Sendable {}
