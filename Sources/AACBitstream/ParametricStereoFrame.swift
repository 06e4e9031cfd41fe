public import MediaCore

/// One frame's `ps_data()` (ISO/IEC 14496-3, 8.3; semantics 8.4): the Parametric Stereo
/// parameters that ride in the `bs_extended_data` of a mono SBR element (`bs_extension_id` 2,
/// EXTENSION_ID_PS, 4.4.2.8).
///
/// Values are absolute quantiser indices, not the deltas the bitstream sends: IID −7...7 with the
/// default quantiser or −15...15 with the fine one, ICC 0...7. `iid[e][b]` is envelope `e`,
/// band `b`. With the header in force (this frame's, or the last one's:
/// ``ParametricStereoHistory/header``), an enabled parameter has one row per envelope of exactly
/// its band count (10, 20 or 34) and one `*TimeDelta` flag per envelope; a disabled parameter
/// has no values: one empty row and one false flag per envelope (what the parser returns, so
/// that the envelope count of a frame without parameters survives), or no rows and no flags
/// (which the writer takes too).
///
/// Write it with ``extendedData(history:)`` (the whole `bs_extended_data` payload) or
/// ``write(to:history:)`` (`ps_data()` alone); read a stream of them with
/// ``ParametricStereoParser``; pick the codings with ``chooseDeltaCoding(history:independent:)``.
public struct ParametricStereoFrame: Sendable, Hashable {
    /// The header (`enable_ps_header` 1), `nil` for a frame that uses the one in force.
    public var header: ParametricStereoHeader?
    /// `frame_class`: `false` for fixed borders (`num_env` 0, 1, 2 or 4 envelopes of equal
    /// length), `true` for variable borders given by ``borderPositions`` (1...4 envelopes).
    public var variableBorders: Bool
    /// `border_position[e]` (5 bits each), variable borders only (empty otherwise): the last QMF
    /// time slot (0...31) of envelope `e`, strictly increasing. When the last is below 31 a
    /// decoder holds the last envelope's parameters to the end of the frame (FFmpeg and faad2
    /// add such an envelope).
    public var borderPositions: [Int]
    /// `iid_dt[e]`: envelope `e`'s IID values are coded as deltas in time (from the previous
    /// envelope) rather than in frequency.
    public var iidTimeDelta: [Bool]
    /// The IID indices, `[envelope][band]`.
    public var iid: [[Int]]
    /// `icc_dt[e]`: envelope `e`'s ICC values are coded as deltas in time.
    public var iccTimeDelta: [Bool]
    /// The ICC indices, `[envelope][band]`.
    public var icc: [[Int]]
    /// The `ps_extension()` data after `ps_extension_size`/`esc_count` (whole bytes, at most
    /// 270: extension ids, IPD/OPD data and fill), kept verbatim and not interpreted (baseline PS
    /// skips it by its size); `nil` for none (written as size 0). Allowed only while the header in
    /// force has ``ParametricStereoHeader/extensionEnabled``. FFmpeg parses IPD/OPD inside it and
    /// drops the frame's PS when that data overruns the size: all-zero bytes (extension id 0,
    /// `enable_ipdopd` 0) are a payload every decoder takes.
    public var extensionPayload: BitString?

    /// A frame of the given fields.
    public init(header: ParametricStereoHeader?, variableBorders: Bool, borderPositions: [Int],
                iidTimeDelta: [Bool], iid: [[Int]], iccTimeDelta: [Bool], icc: [[Int]],
                extensionPayload: BitString? = nil) {
        self.header = header
        self.variableBorders = variableBorders
        self.borderPositions = borderPositions
        self.iidTimeDelta = iidTimeDelta
        self.iid = iid
        self.iccTimeDelta = iccTimeDelta
        self.icc = icc
        self.extensionPayload = extensionPayload
    }

    /// A frame of frequency-coded values (every `*TimeDelta` false; see
    /// ``chooseDeltaCoding(history:independent:)`` for cheaper codings), fixed borders unless
    /// `borderPositions` are given. A parameter given no rows while the frame has envelopes (a
    /// disabled one) gets one empty row per envelope, the form the parser returns.
    public init(header: ParametricStereoHeader?, borderPositions: [Int]? = nil, iid: [[Int]], icc: [[Int]]) {
        let count = borderPositions?.count ?? max(iid.count, icc.count)
        let iid = iid.isEmpty ? Array(repeating: [], count: count) : iid
        let icc = icc.isEmpty ? Array(repeating: [], count: count) : icc
        self.init(header: header, variableBorders: borderPositions != nil, borderPositions: borderPositions ?? [],
                  iidTimeDelta: Array(repeating: false, count: iid.count), iid: iid,
                  iccTimeDelta: Array(repeating: false, count: icc.count), icc: icc)
    }

    /// `num_env`: the number of envelopes, ``borderPositions``' count with variable borders (1...4),
    /// otherwise the larger of the row counts of ``iid`` and ``icc`` (0, 1, 2 or 4 to be writable).
    public var envelopeCount: Int {
        variableBorders ? borderPositions.count : max(iid.count, icc.count)
    }

    /// `num_env` for each `num_env_idx`, fixed borders (`frame_class` 0) then variable (8.4).
    static let envelopeCounts: [[Int]] = [[0, 1, 2, 4], [1, 2, 3, 4]]

    /// The largest `ps_extension_size` plus `esc_count`: 15 + 255 bytes.
    public static let maximumExtensionPayloadBytes = 270
}
