public import MediaCore

extension ParametricStereoFrame {
    /// `bs_extension_id` of Parametric Stereo in an SBR element's extended data (ISO/IEC 14496-3,
    /// 4.5.2.8: EXTENSION_ID_PS).
    public static let extensionID = 2

    /// The `bs_extended_data` payload of the SBR element that carries this frame (ISO/IEC
    /// 14496-3, 4.4.2.8): `bs_extension_id` 2 (EXTENSION_ID_PS), `ps_data()`, then zero bits to a
    /// whole byte, so that a decoder's extension loop ends after `ps_data()`. Put it in
    /// ``SBRExtensionData/extendedData``.
    ///
    /// Everything is checked against the header in force (this frame's, else `history`'s) as
    /// ``write(to:history:)`` says, and the payload must fit `bs_extension_size` plus
    /// `bs_esc_count` (``SBRExtensionData/maximumExtendedDataBytes``). `history` is updated only
    /// when the write succeeds.
    public func extendedData(history: inout ParametricStereoHistory) throws(AACBitstreamError) -> BitString {
        var writer = BitWriter()
        writer.write(Self.extensionID, bits: 2)
        var next = history
        try write(to: &writer, history: &next)
        writer.alignToByte()
        guard writer.bitCount / 8 <= SBRExtensionData.maximumExtendedDataBytes else {
            throw .unrepresentable(structure: "bs_extended_data", field: "bytes", value: Int64(writer.bitCount / 8),
                                   allowed: "at most \(SBRExtensionData.maximumExtendedDataBytes)")
        }
        history = next
        return writer.bits
    }

    /// Writes `ps_data()` alone (ISO/IEC 14496-3, 8.3): `enable_ps_header` and the header,
    /// `frame_class`, `num_env_idx`, the border positions, each enabled parameter's `*_dt` flag and
    /// Huffman-coded deltas per envelope (Annex 8.B), and with `enable_ext` in force
    /// `ps_extension_size` (`esc_count`) and ``extensionPayload``.
    ///
    /// Without a header in this frame or in `history`, with a reserved mode, counts that do not
    /// match the header in force (see ``ParametricStereoFrame``), border positions that are out
    /// of 0...31 or not strictly increasing, a value outside its quantiser's range, time coding of
    /// a first envelope without previous values of the same band count in `history`, a time delta
    /// beyond its table (after a change from the fine IID quantiser to the default one), or an
    /// extension payload that is not whole bytes, too long, or not allowed: throws
    /// ``AACBitstreamError/unrepresentable(structure:field:value:allowed:)``, writes nothing and
    /// leaves `history` as it was. Otherwise `history` becomes the history after this frame
    /// (``ParametricStereoHistory``).
    public func write(to writer: inout BitWriter, history: inout ParametricStereoHistory) throws(AACBitstreamError) {
        guard let current = header ?? history.header else {
            throw .unrepresentable(structure: "ps_data", field: "enable_ps_header", value: 0,
                                   allowed: "1 in a stream's first frame (no header in force)")
        }
        try validate(header: current)
        var output = BitWriter()
        output.writeFlag(header != nil)
        try header?.write(to: &output)
        output.writeFlag(variableBorders)
        let table = Self.envelopeCounts[variableBorders ? 1 : 0]
        // validate(header:) made sure the count is in the table.
        output.write(table.firstIndex(of: envelopeCount) ?? 0, bits: 2)
        for position in borderPositions { output.write(position, bits: 5) }
        var next = history
        next.header = current
        next.iid = try writeParameter(current.iidMode.map { .iid(fine: $0 >= 3) }, rows: iid, flags: iidTimeDelta,
                                      previous: history.iid, to: &output)
        next.icc = try writeParameter(current.iccMode.map { _ in .icc }, rows: icc, flags: iccTimeDelta,
                                      previous: history.icc, to: &output)
        if current.extensionEnabled {
            let bytes = (extensionPayload?.count ?? 0) / 8
            if bytes < 15 {
                output.write(bytes, bits: 4)
            } else {
                output.write(15, bits: 4)
                output.write(bytes - 15, bits: 8)
            }
            if let extensionPayload { output.write(extensionPayload) }
        }
        writer.write(output.bits)
        history = next
    }

    /// Writes one parameter's envelopes (nothing when it is disabled, `parameter` nil) and returns
    /// the previous values after this frame.
    private func writeParameter(_ parameter: ParametricStereoParameter?, rows: [[Int]], flags: [Bool], previous: [Int]?,
                                to writer: inout BitWriter) throws(AACBitstreamError) -> [Int]? {
        guard let parameter else { return nil }
        for (envelope, values) in rows.enumerated() {
            writer.writeFlag(flags[envelope])
            var base: [Int]?
            if flags[envelope] {
                base = envelope > 0 ? rows[envelope - 1] : previous
                guard let reference = base, reference.count == values.count else {
                    throw .unrepresentable(structure: "ps_data", field: parameter.flagName + "[0]", value: 1,
                                           allowed: "0 (no previous envelope of \(values.count) bands to code against)")
                }
            }
            try parameter.write(values, base: base, to: &writer)
        }
        return rows.last ?? previous
    }

    /// Checks counts, borders, ranges and the extension payload against `header` (the header in
    /// force), as the writer needs them. Time-coding references are checked while writing.
    func validate(header: ParametricStereoHeader) throws(AACBitstreamError) {
        try header.validate()
        func refuse(_ field: String, _ value: Int, _ allowed: String) -> AACBitstreamError {
            .unrepresentable(structure: "ps_data", field: field, value: Int64(value), allowed: allowed)
        }
        let count = envelopeCount
        if variableBorders {
            guard (1...4).contains(count) else { throw refuse("num_env", count, "1...4 border positions (frame_class 1)") }
            for (index, position) in borderPositions.enumerated() {
                let lowest = index == 0 ? 0 : borderPositions[index - 1] + 1
                guard (lowest...31).contains(position) else {
                    throw refuse("border_position[\(index)]", position, "\(lowest)...31 (strictly increasing)")
                }
            }
        } else {
            guard borderPositions.isEmpty else { throw refuse("border positions", borderPositions.count, "none (frame_class 0)") }
            guard Self.envelopeCounts[0].contains(count) else { throw refuse("num_env", count, "0, 1, 2 or 4 (frame_class 0)") }
        }
        let parameters: [(ParametricStereoParameter?, Int, [[Int]], [Bool])] = [
            (header.iidMode.map { .iid(fine: $0 >= 3) }, header.iidBandCount, iid, iidTimeDelta),
            (header.iccMode.map { _ in .icc }, header.iccBandCount, icc, iccTimeDelta),
        ]
        for (index, (parameter, bands, rows, flags)) in parameters.enumerated() {
            let name = index == 0 ? "iid" : "icc"
            if let parameter {
                guard rows.count == count else { throw refuse("\(name) envelopes", rows.count, "\(count) (num_env)") }
                guard flags.count == count else { throw refuse("\(name)_dt flags", flags.count, "\(count) (num_env)") }
                for (envelope, values) in rows.enumerated() {
                    guard values.count == bands else { throw refuse("\(name)[\(envelope)] bands", values.count, "\(bands)") }
                    for (band, value) in values.enumerated() where !parameter.values.contains(value) {
                        throw refuse("\(parameter.name)[\(envelope)][\(band)]", value, "\(parameter.values)")
                    }
                }
            } else {
                guard rows.isEmpty || rows.count == count else {
                    throw refuse("\(name) envelopes", rows.count, "0 or \(count) empty rows (enable_\(name) 0)")
                }
                guard rows.allSatisfy(\.isEmpty) else { throw refuse("\(name) values", rows.count, "none (enable_\(name) 0)") }
                guard flags.count == rows.count, !flags.contains(true) else {
                    throw refuse("\(name)_dt flags", flags.count, "one false flag per row (enable_\(name) 0)")
                }
            }
        }
        if let extensionPayload {
            guard header.extensionEnabled else { throw refuse("ps_extension bits", extensionPayload.count, "none (enable_ext 0)") }
            guard extensionPayload.count % 8 == 0, extensionPayload.count / 8 <= Self.maximumExtensionPayloadBytes else {
                throw refuse("ps_extension bits", extensionPayload.count, "whole bytes, at most \(Self.maximumExtensionPayloadBytes)")
            }
        }
    }
}
