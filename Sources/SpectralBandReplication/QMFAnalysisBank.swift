internal import RealModule

/// The SBR encoder's 64-band complex-exponential-modulated QMF analysis filter bank at the
/// output rate (3GPP TS 26.404 §5.2; the 64-band counterpart of the decoder's 32-band analysis
/// of ISO/IEC 14496-3 4.6.18.4.1). One call of ``analyze(_:real:imaginary:)`` takes 64 new
/// samples and yields one QMF slot `X[k]`, k = 0..<64, band k covering
/// `k·fs/128 ..< (k+1)·fs/128`.
///
/// Per slot (with the history `x[0..<640]` newest first, as in the spec):
/// 1. shift `x` by 64 and store the new samples at `x[0..<64]` (newest at index 0);
/// 2. `z[n] = x[n]·c[n]` with the prototype ``QMFPrototype/coefficients`` (Table 4.A.89);
/// 3. `u[n] = Σ_{j=0..4} z[n + 128j]`, n = 0..<128;
/// 4. `X[k] = g · Σ_{n=0..<128} u[n]·exp(iπ(k+½)(2n−1)/128)`, with the calibration gain
///    `g = ` ``calibrationGain``.
///
/// The phase offset `2n − 1` is the full-rate image of the decoder's half-rate `2n − ½`
/// (`n_half = n_full/2`); it is the offset for which the matched 64-band synthesis of
/// 14496-3 4.6.18.4.2 (``QMFSynthesisBank``) reconstructs the input (about 60 dB SNR, the
/// near-perfect reconstruction of the SBR prototype). With `2n − ½` the energies are the same,
/// but the synthesis no longer cancels its aliasing.
///
/// **Scale.** Input is PCM in the 16-bit scale (float ±1.0 × 32768). With `g = 1`, `|X[k]|²`
/// equals, within 0.01 dB on sines and noise, the `|W[k]|²` of the decoder's 32-band analysis
/// (`W[k] = Σ 2·u[n]·exp(iπ(k+½)(2n−½)/64)` with `c[2n]`, run on the 2:1 decimated signal)
/// for k < 32: the domain in which the decoder measures the envelope it rebuilds
/// (`E = 64·2^(q/a)`, 14496-3 4.6.18.3.5) and in which the encoder must estimate it.
///
/// **Delay.** This bank followed by ``QMFSynthesisBank`` delays the signal by
/// ``reconstructionDelay`` = 577 samples.
///
/// **Cost.** The 128-point modulation folds (`u` is antiperiodic in 128) into one 64-point
/// DCT-IV for the real part and one DST-IV for the imaginary part, both evaluated as SIMD
/// matrix products against a single precomputed cosine matrix: about 8 k multiply-adds per
/// slot plus 640 for the window, and no heap allocation per slot.
public struct QMFAnalysisBank: Sendable {
    /// Subbands per slot, and new input samples per slot.
    public static let bandCount = 64

    /// The gain `g` of step 4 that puts `|X[k]|²` in the decoder's low-band energy domain:
    /// exactly 1 (so it costs nothing; it is folded into the cosine matrix). Derived by the
    /// calibration test against the decoder's 32-band analysis (the factor 2 of its
    /// `2·u[n]` is the factor 2 of its half-rate window `c[2n]` having half the taps).
    public static let calibrationGain: Float = 1

    /// Input-to-output delay, in samples, of this analysis followed by the matched 64-band
    /// synthesis (``QMFSynthesisBank``; 14496-3 4.6.18.4.2), measured by the reconstruction
    /// test: 577 = 640 − 64 + 1.
    public static let reconstructionDelay = 577

    private static let windowLength = 640
    /// History length; the newest 640 samples are `history[end − 640 ..< end]`, oldest first.
    private static let historyCapacity = 640 + 64 * 24

    /// `c[639 − m]`: the prototype reversed, to run over the history oldest first.
    private static let reversedWindow: [Float] = QMFPrototype.coefficients.reversed()

    /// `g·cos(π/64·(k+½)(m+½))` for 16-band blocks: element `block·64 + m` holds
    /// k = 16·block ..< 16·block + 16.
    private static let cosineBlocks: [SIMD16<Float>] = {
        var blocks = [SIMD16<Float>](repeating: .zero, count: 4 * 64)
        for block in 0..<4 {
            for m in 0..<64 {
                var column = SIMD16<Float>.zero
                for lane in 0..<16 {
                    let k = Double(16 * block + lane)
                    column[lane] = Float(Double(calibrationGain) * Double.cos(Double.pi / 64 * (k + 0.5) * (Double(m) + 0.5)))
                }
                blocks[block * 64 + m] = column
            }
        }
        return blocks
    }()

    /// `(−1)^k` per 16-band block (the DST-IV from the DCT-IV matrix).
    private static let alternatingSigns: SIMD16<Float> = SIMD16((0..<16).map { $0 % 2 == 0 ? Float(1) : -1 })

    private var history: [Float]
    private var end: Int

    /// A bank with an all-zero history.
    public init() {
        history = [Float](repeating: 0, count: Self.historyCapacity)
        end = Self.windowLength
    }

    /// Clears the history, as for a new stream.
    public mutating func reset() {
        for index in history.indices { history[index] = 0 }
        end = Self.windowLength
    }

    /// Analyses one slot (3GPP TS 26.404 §5.2): consumes exactly ``bandCount`` new samples,
    /// oldest first, in the 16-bit scale (float ±1.0 × 32768), and writes the 64 subband samples
    /// `X[k] = real[k] + i·imaginary[k]`.
    ///
    /// - Precondition: `samples.count == 64`, `real.count >= 64`, `imaginary.count >= 64`.
    public mutating func analyze(_ samples: UnsafeBufferPointer<Float>,
                                 real: UnsafeMutableBufferPointer<Float>,
                                 imaginary: UnsafeMutableBufferPointer<Float>) {
        precondition(samples.count == Self.bandCount, "QMFAnalysisBank.analyze takes exactly 64 samples")
        precondition(real.count >= Self.bandCount && imaginary.count >= Self.bandCount, "QMFAnalysisBank.analyze writes 64 bands")
        let capacity = Self.historyCapacity
        let keep = Self.windowLength - Self.bandCount
        let start = end
        let newEnd = history.withUnsafeMutableBufferPointer { history -> Int in
            var start = start
            if start + 64 > capacity {
                // Move the 576 samples still needed to the front (once every 24 slots).
                for index in 0..<keep { history[index] = history[start - keep + index] }
                start = keep
            }
            for index in 0..<64 { history[start + index] = samples[index] }
            return start + 64
        }
        end = newEnd

        withUnsafeTemporaryAllocation(of: Float.self, capacity: 256) { scratch in
            let window = scratch.baseAddress!           // ũ[p] = u[127 − p], p = 0..<128
            let even = scratch.baseAddress! + 128       // a[m], DCT-IV input
            let odd = scratch.baseAddress! + 192        // b[63 − m], DST-IV input via the DCT-IV
            Self.reversedWindow.withUnsafeBufferPointer { reversed in
                history.withUnsafeBufferPointer { history in
                    let x = history.baseAddress! + (newEnd - 640)
                    let c = reversed.baseAddress!
                    // ũ[p] = Σ_i x[p + 128i]·c[639 − (p + 128i)], 16 lanes at a time.
                    for p in stride(from: 0, to: 128, by: 16) {
                        var sum = SIMD16<Float>.zero
                        for i in stride(from: 0, to: 640, by: 128) {
                            let samples = UnsafeRawPointer(x + p + i).loadUnaligned(as: SIMD16<Float>.self)
                            let taps = UnsafeRawPointer(c + p + i).loadUnaligned(as: SIMD16<Float>.self)
                            sum += samples * taps
                        }
                        UnsafeMutableRawPointer(window + p).storeBytes(of: sum, as: SIMD16<Float>.self)
                    }
                }
            }
            // Fold the antiperiodic 128-point modulation (u[n + 128] = −u[n]) onto 64 points:
            // a[m] = u[m+1] − u[128−m], b[m] = u[m+1] + u[128−m], with u[128] = −u[0].
            // In ũ: u[m+1] = ũ[126−m], u[128−m] = ũ[m−1], u[0] = ũ[127].
            even[0] = window[126] + window[127]
            odd[63] = window[126] - window[127]
            for m in 1..<64 {
                let later = window[126 - m], earlier = window[m - 1]
                even[m] = later - earlier
                odd[63 - m] = later + earlier
            }
            // Re X = DCT-IV(a); Im X[k] = Σ sin(π/64(k+½)(m+½))·b[m] = (−1)^k·DCT-IV(b reversed)[k].
            Self.cosineBlocks.withUnsafeBufferPointer { matrix in
                let columns = matrix.baseAddress!
                let signs = Self.alternatingSigns
                for block in 0..<4 {
                    var sumReal = SIMD16<Float>.zero, sumImaginary = SIMD16<Float>.zero
                    let base = columns + block * 64
                    for m in 0..<64 {
                        let column = base[m]
                        sumReal += even[m] * column
                        sumImaginary += odd[m] * column
                    }
                    sumImaginary *= signs
                    for lane in 0..<16 {
                        real[block * 16 + lane] = sumReal[lane]
                        imaginary[block * 16 + lane] = sumImaginary[lane]
                    }
                }
            }
        }
    }
}
