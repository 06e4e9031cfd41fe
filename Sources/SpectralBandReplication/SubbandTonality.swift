/// How predictable a QMF subband is over a run of slots: the prediction gain of a second-order
/// complex linear predictor fitted by the covariance method (3GPP TS 26.404 §5.6.2), the ratio
/// of the subband's energy to what the predictor leaves. About 1 for noise, large for a
/// steady sinusoid; the encoder compares the original's high band with the low band the
/// decoder copies up into it to choose the noise floor and the inverse filtering.
public enum SubbandTonality {
    /// The largest gain reported (50 dB): beyond it a sinusoid is a sinusoid.
    public static let maximumGain: Float = 100_000

    /// The prediction gain of subband `band` over slots `slots` of `history` (two slots before
    /// the range feed the predictor's memory). 1 for a subband with no energy.
    public static func predictionGain(_ history: QMFSlotHistory, band: Int, slots: Range<Int>) -> Float {
        // R[i][j] = Σ conj(x[n−i]) · x[n−j], n over `slots`, as (real, imaginary), in Double:
        // the sums run over about 32 products of values up to 2^40.
        var r00 = 0.0, r11 = 0.0, r22 = 0.0
        var r01 = (0.0, 0.0), r02 = (0.0, 0.0), r12 = (0.0, 0.0)
        var (a2r, a2i) = history.sample(band: band, slot: slots.lowerBound - 2)
        var (a1r, a1i) = history.sample(band: band, slot: slots.lowerBound - 1)
        for slot in slots {
            let (xr, xi) = history.sample(band: band, slot: slot)
            let x0 = (Double(xr), Double(xi)), x1 = (Double(a1r), Double(a1i)), x2 = (Double(a2r), Double(a2i))
            r00 += x0.0 * x0.0 + x0.1 * x0.1
            r11 += x1.0 * x1.0 + x1.1 * x1.1
            r22 += x2.0 * x2.0 + x2.1 * x2.1
            // conj(a)·b = (ar·br + ai·bi) + i(ar·bi − ai·br)
            r01.0 += x1.0 * x0.0 + x1.1 * x0.1; r01.1 += x1.0 * x0.1 - x1.1 * x0.0
            r02.0 += x2.0 * x0.0 + x2.1 * x0.1; r02.1 += x2.0 * x0.1 - x2.1 * x0.0
            r12.0 += x1.0 * x2.0 + x1.1 * x2.1; r12.1 += x1.0 * x2.1 - x1.1 * x2.0
            (a2r, a2i) = (a1r, a1i)
            (a1r, a1i) = (xr, xi)
        }
        guard r00 > 1e-3 else { return 1 }
        // Minimise Σ|x[n] − p1·x[n−1] − p2·x[n−2]|²: the normal equations are
        //   R11·p1 + R12·p2 = R10,   R21·p1 + R22·p2 = R20,   with R_ij = Σ conj(x[n−i])·x[n−j],
        // R21 = conj(R12), R10 = R01 as defined above (conj(x[n−1])·x[n]).
        let r21 = (r12.0, -r12.1)
        // First order, always: p1 = R10 / R11, which leaves R00 − |R10|²/R11. A steady
        // sinusoid is predicted exactly by it, while its second-order system is singular (x[n−1]
        // and x[n−2] are then one signal), where Cramer's rule gives nothing.
        var explained = r11 > 1e-3 ? (r01.0 * r01.0 + r01.1 * r01.1) / r11 : 0
        // Second order where the system is well conditioned: det = R11·R22 − |R12|² (real),
        // relaxed as 26.404 does; p1 = (R10·R22 − R12·R20)/det, p2 = (R11·R20 − R21·R10)/det.
        let det = r11 * r22 - (r12.0 * r12.0 + r12.1 * r12.1) * (1 - 1e-6)
        if det > 1e-3 * r11 * r22 {
            let r12r20 = multiply(r12, r02)
            let p1 = ((r01.0 * r22 - r12r20.0) / det, (r01.1 * r22 - r12r20.1) / det)
            let r21r10 = multiply(r21, r01)
            let p2 = ((r11 * r02.0 - r21r10.0) / det, (r11 * r02.1 - r21r10.1) / det)
            // The minimum residual is R00 − Re(conj(p1)·R10 + conj(p2)·R20).
            explained = max(explained, (p1.0 * r01.0 + p1.1 * r01.1) + (p2.0 * r02.0 + p2.1 * r02.1))
        }
        let residual = max(r00 - explained, r00 / Double(maximumGain))
        return Float(min(max(r00 / residual, 1), Double(maximumGain)))
    }

    @inline(__always)
    private static func multiply(_ a: (Double, Double), _ b: (Double, Double)) -> (Double, Double) {
        (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
    }
}
