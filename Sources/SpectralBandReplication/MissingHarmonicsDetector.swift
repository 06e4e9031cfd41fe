/// Finds the sinusoids of the original's high band that the decoder's copy-up will not make, for
/// `bs_add_harmonic` (ISO/IEC 14496-3, 4.5.2.8 `sbr_sinusoidal_coding`; the decoder's side is
/// 4.6.18.7.3–4.6.18.7.5; 3GPP TS 26.404 §5.6.3 describes an encoder's detector).
///
/// The decoder adds a sine in the middle subband of each flagged high-resolution band, at the
/// envelope's energy less the noise floor's share, and scales what it copied up in that band
/// down to the noise floor. So a band is flagged where the original has one strong, steady
/// sinusoid that the copied-up low band does not hold:
/// - the band's loudest subband is a local peak of the spectrum, against its neighbours on both
///   sides, also across `kx` and `k2` (ties go to the lower subband, so a tone on a subband
///   border flags one band, not two, and a tone the core codes just below `kx` flags none);
/// - it holds at least half the band's energy;
/// - it is tonal: its prediction gain is at least ``onsetGain`` (``holdGain`` for a band that
///   was flagged in the frame before, so a sine does not flicker on and off);
/// - the subbands the decoder copies into it and its neighbours are at least ``missingRatio``
///   less tonal (``holdRatio`` to hold), so the copy-up cannot make the tone.
///
/// In a frame with a transient a flagged band stays flagged: a click lowers the frame's
/// prediction gain without ending the tone, and a sine that stopped for one frame would leave
/// a hole in it.
///
/// It keeps, per band, whether the frame before flagged it. Not Sendable: one channel's state.
public struct MissingHarmonicsDetector {
    /// The prediction gain (25 dB) a new sinusoid needs.
    public static let onsetGain: Float = 300
    /// The prediction gain (17 dB) that keeps a sinusoid flagged in the frame before.
    public static let holdGain: Float = 50
    /// How much less tonal (20 dB) the copied-up source must be for a new sinusoid.
    public static let missingRatio: Float = 100
    /// How much less tonal (15 dB) the copied-up source must be to keep a sinusoid.
    public static let holdRatio: Float = 30
    /// Energies at or below this (per subband and QMF slot) are silence: the envelope
    /// quantiser's zero, 2⁶.
    public static let silence: Float = 64

    /// Per high-resolution band: flagged in the frame before.
    public private(set) var flagged: [Bool]

    /// A detector for `bandCount` high-resolution bands, none flagged.
    public init(bandCount: Int) {
        flagged = Array(repeating: false, count: bandCount)
    }

    /// The flags of one frame, one per high-resolution band, and remembers them for the next.
    ///
    /// - Parameters:
    ///   - highBands: the high frequency table's borders, subbands `kx` to `k2`.
    ///   - energies: the frame's mean energy per subband and QMF slot, from `kx − 1` to `k2`
    ///     inclusive (`k2 − kx + 2` values: the neighbours on both sides of the SBR range first
    ///     and last; 0 for one past subband 63).
    ///   - originalGain: the original's prediction gain per subband, from `kx` to `k2`.
    ///   - sourceGain: the prediction gain of the low subband the decoder copies into each
    ///     subband, from `kx` to `k2`.
    ///   - transient: the frame has a transient (its grid is not FIXFIX): flags held from the
    ///     frame before stay.
    public mutating func detect(highBands: [Int], energies: [Float], originalGain: [Float], sourceGain: [Float],
                                transient: Bool = false) -> [Bool] {
        precondition(highBands.count - 1 == flagged.count, "one flag per high-resolution band")
        let kx = highBands[0]
        let count = highBands[highBands.count - 1] - kx
        precondition(energies.count == count + 2 && originalGain.count == count && sourceGain.count == count,
                     "energies from kx − 1 to k2, gains from kx to k2 − 1")
        // energies[i + 1] is subband kx + i's.
        func energy(_ index: Int) -> Float { energies[index + 1] }
        var result = flagged
        for band in 0..<flagged.count {
            let range = (highBands[band] - kx)..<(highBands[band + 1] - kx)
            guard let peak = range.max(by: { energy($0) < energy($1) }) else { result[band] = false; continue }
            let held = flagged[band]
            if held && transient { continue }
            let total = range.reduce(Float(0)) { $0 + energy($1) }
            let copied = ((peak - 1)...(peak + 1)).filter { $0 >= 0 && $0 < count }.map { sourceGain[$0] }.max() ?? 1
            let tonal = originalGain[peak]
            result[band] = energy(peak) > Self.silence
                && energy(peak) > energy(peak - 1) && energy(peak) >= energy(peak + 1)
                && 2 * energy(peak) >= total
                && tonal >= (held ? Self.holdGain : Self.onsetGain)
                && tonal >= copied * (held ? Self.holdRatio : Self.missingRatio)
        }
        flagged = result
        return result
    }

    /// The most the decoder's gain boost raises a limiter band's energy: G_boost ≤ 1.584893192
    /// in amplitude (4.6.18.7.5), about 4 dB.
    public static let maximumBoost: Float = 1.584893192 * 1.584893192

    /// The energy of a flagged band's sinusoid per QMF slot: its peak subband's and the louder
    /// neighbour's it leaks into.
    ///
    /// - Parameters:
    ///   - energies: the envelope's mean energy per subband and QMF slot, from `kx` to `k2`.
    ///   - band: the high-resolution band's subbands, as indices into `energies`.
    public static func sinusoidEnergy(_ energies: [Float], band: Range<Int>) -> Float {
        guard let peak = band.max(by: { energies[$0] < energies[$1] }) else { return 0 }
        let left = peak > 0 ? energies[peak - 1] : 0
        let right = peak + 1 < energies.count ? energies[peak + 1] : 0
        return energies[peak] + max(left, right)
    }

    /// The energy per subband and QMF slot to code for a band of `width` subbands (of the
    /// envelope's resolution) holding a sinusoid of `energy`, so the decoder's sine comes out at
    /// the sinusoid's energy.
    ///
    /// The decoder's sine takes the envelope's energy in one subband (4.6.18.7.5: S_M), not the
    /// band's mean, and the rest of the band only the noise floor's share. Its gain boost then
    /// raises the limiter band by the ratio of the energy the envelope promises (in each of the
    /// band's subbands) to what it made (one subband's), at most ``maximumBoost``. So the energy
    /// is divided by min(width, maximumBoost): exact for a sinusoid that dominates its limiter
    /// band, up to 4 dB quiet where the limiter band holds much else (measured in FFmpeg's
    /// decode: a lone tone comes back within 0.6 dB in bands of 1, 2, 3 and 5 subbands). In a
    /// low-resolution envelope the whole low-resolution band holds the sine (the decoder's
    /// S_mapped), so `width` is that band's.
    public static func codedEnergy(sinusoid energy: Float, width: Int) -> Float {
        energy / min(Float(max(width, 1)), maximumBoost)
    }
}

@available(*, unavailable)
extension MissingHarmonicsDetector: Sendable {}
