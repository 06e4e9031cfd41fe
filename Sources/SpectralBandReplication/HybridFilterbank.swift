internal import RealModule

/// The hybrid analysis of parametric stereo's 20-band configuration (ISO/IEC 14496-3 8.6.4.3):
/// QMF subband 0 through an 8-band complex filterbank whose outputs fold into 6 bins, subbands 1
/// and 2 through a 2-band real filterbank each, 13-tap linear-phase filters centred on the slot
/// (6 slots of delay either side). The encoder measures the stereo parameters of bands 0–7 on
/// these bins, as the decoder applies them.
public enum HybridFilterbank {
    /// Bins from subbands 0–2.
    public static let binCount = 10
    /// The stereo band of each bin (Table 8.48, `k_to_i_20` for bins 0–9).
    public static let bandOfBin = [1, 0, 0, 1, 2, 3, 4, 5, 6, 7]

    /// The 8-band prototype g0, taps 0–6 (taps 7–12 mirror them).
    static let eightBandPrototype: [Double] = [0.00746082949812, 0.02270420949825, 0.04546865930473, 0.07266113929591,
                                               0.09885108575264, 0.11793710567217, 0.125]
    /// The 2-band prototype g1, taps 0–6 (a half-band filter: taps 7–12 mirror them).
    static let twoBandPrototype: [Float] = [0, 0.01899487526049, 0, -0.07293139167538, 0, 0.30596630545168, 0.5]

    /// The 8 complex filters `g0[n]·exp(−i·2π(q+½)(n−6)/8)`, taps 0–12, as (real, imaginary).
    static let eightBandFilters: [[(Float, Float)]] = (0..<8).map { q in
        (0..<13).map { n in
            let g = eightBandPrototype[n <= 6 ? n : 12 - n]
            let theta = 2 * Double.pi * (Double(q) + 0.5) * Double(n - 6) / 8
            return (Float(g * Double.cos(theta)), Float(-g * Double.sin(theta)))
        }
    }

    /// The 10 bins of `slot` of `history`: bins 0–5 from subband 0 (the 8 outputs folded as
    /// the decoder folds them: 6, 7, 0, 1, 2+5, 3+4), bins 6–7 from subband 1 and 8–9 from
    /// subband 2 (the half-band filter's difference and sum outputs, in the decoder's order:
    /// reversed for the odd subband, whose spectrum is).
    public static func bins(_ history: QMFSlotHistory, slot: Int) -> [(Float, Float)] {
        var result = [(Float, Float)](repeating: (0, 0), count: binCount)
        var taps = [(Float, Float)](repeating: (0, 0), count: 13)
        for n in 0..<13 { taps[n] = history.sample(band: 0, slot: slot - 6 + n) }
        var outputs = [(Float, Float)](repeating: (0, 0), count: 8)
        for q in 0..<8 {
            var re: Float = 0, im: Float = 0
            for n in 0..<13 {
                let (fr, fi) = eightBandFilters[q][n]
                re += fr * taps[n].0 - fi * taps[n].1
                im += fr * taps[n].1 + fi * taps[n].0
            }
            outputs[q] = (re, im)
        }
        result[0] = outputs[6]
        result[1] = outputs[7]
        result[2] = outputs[0]
        result[3] = outputs[1]
        result[4] = (outputs[2].0 + outputs[5].0, outputs[2].1 + outputs[5].1)
        result[5] = (outputs[3].0 + outputs[4].0, outputs[3].1 + outputs[4].1)
        for (subband, firstBin, reversed) in [(1, 6, true), (2, 8, false)] {
            for n in 0..<13 { taps[n] = history.sample(band: subband, slot: slot - 6 + n) }
            var inPhase = (twoBandPrototype[6] * taps[6].0, twoBandPrototype[6] * taps[6].1)
            var outOfPhase: (Float, Float) = (0, 0)
            for j in stride(from: 1, to: 6, by: 2) {
                outOfPhase.0 += twoBandPrototype[j] * (taps[j].0 + taps[12 - j].0)
                outOfPhase.1 += twoBandPrototype[j] * (taps[j].1 + taps[12 - j].1)
            }
            let sum = (inPhase.0 + outOfPhase.0, inPhase.1 + outOfPhase.1)
            inPhase = (inPhase.0 - outOfPhase.0, inPhase.1 - outOfPhase.1)
            result[firstBin] = reversed ? inPhase : sum
            result[firstBin + 1] = reversed ? sum : inPhase
        }
        return result
    }
}
