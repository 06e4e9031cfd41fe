extension ParametricStereoFrame {
    /// Sets every `iid_dt[e]` and `icc_dt[e]` to the coding of fewer bits (ISO/IEC 14496-3, 8.4;
    /// 3GPP TS 26.405 5.5: time deltas where they give fewer bits), like
    /// ``SBRExtensionData/chooseDeltaCoding(tables:history:independent:)``. Values never change:
    /// frequency coding codes every value in range (a delta between two indices of a quantiser is
    /// within its table); time coding is chosen only where it can code them (not across a change
    /// from the fine IID quantiser to the default one when a delta exceeds ±14).
    ///
    /// Envelope `e` > 0 may be time coded against envelope `e − 1`. The first envelope may be time
    /// coded against `history`'s values when they have the same band count and `independent` is
    /// false; `independent` (a frame where a decoder may start, which should also carry a header)
    /// forces frequency coding there. Frequency wins a tie. A disabled parameter's flags become
    /// false. Nothing changes when there is no header in force, or when the frame's counts do
    /// not match it (the writer refuses such a frame).
    public mutating func chooseDeltaCoding(history: ParametricStereoHistory, independent: Bool) {
        guard let current = header ?? history.header, (try? validate(header: current)) != nil else { return }
        iidTimeDelta = Self.chooseFlags(current.iidMode.map { .iid(fine: $0 >= 3) }, rows: iid,
                                        previous: independent ? nil : history.iid)
        iccTimeDelta = Self.chooseFlags(current.iccMode.map { _ in .icc }, rows: icc,
                                        previous: independent ? nil : history.icc)
    }

    /// The cheaper coding of each envelope of one parameter (all false when it is disabled).
    private static func chooseFlags(_ parameter: ParametricStereoParameter?, rows: [[Int]], previous: [Int]?) -> [Bool] {
        guard let parameter else { return Array(repeating: false, count: rows.count) }
        return rows.indices.map { envelope in
            let base = envelope > 0 ? rows[envelope - 1] : previous
            guard let frequency = parameter.bitCount(rows[envelope], base: nil) else { return false }
            guard let base, let time = parameter.bitCount(rows[envelope], base: base) else { return false }
            return time < frequency
        }
    }
}
