/// What `ps_data()` carries from frame to frame (ISO/IEC 14496-3, 8.3, 8.4): the header in
/// force (the last `enable_ps_header` frame's modes) and the values that time-delta coding
/// (`iid_dt`, `icc_dt` of a frame's first envelope) refers to: the previous frame's last envelope.
///
/// `ParametricStereoHistory()` is the state of a stream's start: no header, so a frame must
/// bring one, and no previous values, so its first envelopes must be frequency coded.
///
/// Rules (the writer, ``ParametricStereoParser`` and
/// ``ParametricStereoFrame/chooseDeltaCoding(history:independent:)`` keep the same ones):
/// - A frame with envelopes leaves its last envelope's values; a frame of `num_env` 0 leaves
///   them as they were (the decoder keeps the previous parameters, 8.4; FFmpeg and faad2 do).
/// - A frame whose header in force disables a parameter leaves `nil` for it (FFmpeg zeroes the
///   parameter then).
/// - A first envelope may be time coded only against previous values of the same number of
///   bands. Decoders disagree about time deltas across a band-count change (FFmpeg adds each
///   delta to the stored value of the same index, stale where the previous frame had fewer
///   bands; fdk-aac duplicates 10-band values to 20), and FFmpeg adds deltas to zeros where
///   there are no previous values, so both cases are refused: the writer throws, the parser
///   reports an invalid field. A change of quantiser (`iid_mode` 1 to 4, say) keeps the band
///   count and is allowed, as in every decoder: delta coding works on the quantiser indices
///   (the deltas must still fit the new quantiser's table, and the values its range).
public struct ParametricStereoHistory: Sendable, Hashable {
    /// The header in force: the last one sent, `nil` before the first.
    public var header: ParametricStereoHeader?
    /// The IID indices of the previous envelope (the last envelope of the last frame that had
    /// one), `nil` for none.
    public var iid: [Int]?
    /// The ICC indices of the previous envelope, `nil` for none.
    public var icc: [Int]?

    /// No history: a stream's start.
    public init() {
        self.header = nil
        self.iid = nil
        self.icc = nil
    }

    /// A history of the given header in force and previous values.
    public init(header: ParametricStereoHeader?, iid: [Int]?, icc: [Int]?) {
        self.header = header
        self.iid = iid
        self.icc = icc
    }
}
