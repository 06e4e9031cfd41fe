/// One channel's data of `sbr_single_channel_element()` or `sbr_channel_pair_element()`
/// (ISO/IEC 14496-3, 4.4.2.8; semantics 4.5.2.8): grid, delta coding
/// directions, inverse filtering, envelopes, noise floors and added harmonics.
///
/// Envelope and noise floor values are the ABSOLUTE quantised values (`E` and `Q` of
/// 4.6.18.3.5 before dequantisation), not the deltas: the writer codes them as deltas in
/// frequency or time as ``envelopeTimeDelta`` and ``noiseTimeDelta`` say. For the second
/// channel of a coupled pair they are the balance values as coded (the decoder doubles them).
public struct SBRChannelData: Sendable, Hashable {
    /// The time/frequency grid. In a coupled pair, channel 1's is channel 0's.
    public var grid: SBRGrid
    /// `bs_df_env` per envelope: true = coded as time deltas against the previous envelope.
    public var envelopeTimeDelta: [Bool]
    /// `bs_df_noise` per noise floor: true = time deltas.
    public var noiseTimeDelta: [Bool]
    /// `bs_invf_mode` per noise band (`N_Q` entries, each 0...3). In a coupled pair, channel 1's
    /// is channel 0's.
    public var inverseFilteringModes: [UInt8]
    /// Per envelope, one value per band of its resolution (`N_high` or `N_low`).
    public var envelopes: [[Int]]
    /// Per noise floor, `N_Q` values.
    public var noiseFloors: [[Int]]
    /// `bs_add_harmonic` per high-resolution band (`N_high`), `nil` when `bs_add_harmonic_flag` is 0.
    public var addHarmonics: [Bool]?

    /// Channel data of the given fields; the writer checks every count against the grid and
    /// the frequency tables.
    public init(grid: SBRGrid, envelopeTimeDelta: [Bool], noiseTimeDelta: [Bool], inverseFilteringModes: [UInt8],
                envelopes: [[Int]], noiseFloors: [[Int]], addHarmonics: [Bool]? = nil) {
        self.grid = grid
        self.envelopeTimeDelta = envelopeTimeDelta
        self.noiseTimeDelta = noiseTimeDelta
        self.inverseFilteringModes = inverseFilteringModes
        self.envelopes = envelopes
        self.noiseFloors = noiseFloors
        self.addHarmonics = addHarmonics
    }
}
