internal import MediaCore

extension SBRChannelData {
    /// Checks every count against the grid and tables, and the inverse filtering modes.
    func validate(tables: SBRFrequencyTables, channel: Int) throws(AACBitstreamError) {
        func bad(_ field: String, _ value: Int, _ allowed: String) -> AACBitstreamError {
            .unrepresentable(structure: "sbr_data channel \(channel)", field: field, value: Int64(value), allowed: allowed)
        }
        try grid.validate()
        let envelopeCount = grid.envelopeCount
        guard envelopeTimeDelta.count == envelopeCount else { throw bad("bs_df_env count", envelopeTimeDelta.count, "\(envelopeCount)") }
        guard envelopes.count == envelopeCount else { throw bad("envelope count", envelopes.count, "\(envelopeCount)") }
        for (index, values) in envelopes.enumerated() {
            let bands = tables.bandCount(highResolution: grid.frequencyResolutions[index])
            guard values.count == bands else { throw bad("envelope \(index) band count", values.count, "\(bands)") }
        }
        guard noiseTimeDelta.count == grid.noiseFloorCount else { throw bad("bs_df_noise count", noiseTimeDelta.count, "\(grid.noiseFloorCount)") }
        guard noiseFloors.count == grid.noiseFloorCount else { throw bad("noise floor count", noiseFloors.count, "\(grid.noiseFloorCount)") }
        for values in noiseFloors where values.count != tables.noiseBandCount {
            throw bad("noise floor band count", values.count, "\(tables.noiseBandCount)")
        }
        guard inverseFilteringModes.count == tables.noiseBandCount else {
            throw bad("bs_invf_mode count", inverseFilteringModes.count, "\(tables.noiseBandCount)")
        }
        for mode in inverseFilteringModes where mode > 3 { throw bad("bs_invf_mode", Int(mode), "0...3") }
        if let addHarmonics, addHarmonics.count != tables.highBandCount {
            throw bad("bs_add_harmonic count", addHarmonics.count, "\(tables.highBandCount)")
        }
    }

    /// `sbr_dtdf()`.
    func writeDeltaFlags(to writer: inout BitWriter) {
        for flag in envelopeTimeDelta + noiseTimeDelta { writer.writeFlag(flag) }
    }

    /// `sbr_invf()`.
    func writeInverseFiltering(to writer: inout BitWriter) {
        for mode in inverseFilteringModes { writer.write(mode, bits: 2) }
    }

    /// The reference of envelope `index`'s time deltas, `nil` when there is none.
    func envelopeTimeBase(_ index: Int, tables: SBRFrequencyTables, balance: Bool, history: SBRChannelHistory) -> [Int]? {
        let currentHigh = grid.frequencyResolutions[index]
        let count = tables.bandCount(highResolution: currentHigh)
        if index > 0 {
            return SBRValueCoding.timeBase(previous: envelopes[index - 1], previousHigh: grid.frequencyResolutions[index - 1],
                                           currentHigh: currentHigh, count: count, highBandCount: tables.highBandCount)
        }
        guard let previous = history.envelope, history.isBalance == balance,
              previous.count == tables.bandCount(highResolution: history.highResolution) else { return nil }
        return SBRValueCoding.timeBase(previous: previous, previousHigh: history.highResolution, currentHigh: currentHigh,
                                       count: count, highBandCount: tables.highBandCount)
    }

    /// The reference of noise floor `index`'s time deltas, `nil` when there is none.
    func noiseTimeBase(_ index: Int, tables: SBRFrequencyTables, balance: Bool, history: SBRChannelHistory) -> [Int]? {
        if index > 0 { return noiseFloors[index - 1] }
        guard let previous = history.noiseFloor, history.isBalance == balance, previous.count == tables.noiseBandCount else { return nil }
        return previous
    }

    /// Writes `sbr_envelope()` into `envelopes` and `sbr_noise()` into `noise`; returns the
    /// history after this frame.
    func writeValues(envelopes envelopeWriter: inout BitWriter, noise noiseWriter: inout BitWriter, tables: SBRFrequencyTables,
                     header: SBRHeader, balance: Bool, history: SBRChannelHistory) throws(AACBitstreamError) -> SBRChannelHistory {
        let coding = SBRValueCoding.envelope(balance: balance, amplitudeResolution: grid.amplitudeResolution(header: header))
        for (index, values) in envelopes.enumerated() {
            if envelopeTimeDelta[index] {
                guard let base = envelopeTimeBase(index, tables: tables, balance: balance, history: history) else {
                    throw .unrepresentable(structure: "sbr_envelope", field: "bs_df_env", value: 1, allowed: "0 without a previous envelope of the same kind")
                }
                try coding.writeTime(values, base: base, to: &envelopeWriter)
            } else {
                try coding.writeFrequency(values, to: &envelopeWriter)
            }
        }
        let noiseCoding = SBRValueCoding.noise(balance: balance)
        for (index, values) in noiseFloors.enumerated() {
            if noiseTimeDelta[index] {
                guard let base = noiseTimeBase(index, tables: tables, balance: balance, history: history) else {
                    throw .unrepresentable(structure: "sbr_noise", field: "bs_df_noise", value: 1, allowed: "0 without a previous noise floor of the same kind")
                }
                try noiseCoding.writeTime(values, base: base, to: &noiseWriter)
            } else {
                try noiseCoding.writeFrequency(values, to: &noiseWriter)
            }
        }
        return SBRChannelHistory(envelope: envelopes.last, highResolution: grid.frequencyResolutions.last ?? false,
                                 noiseFloor: noiseFloors.last, isBalance: balance)
    }
}

extension SBRChannelData {
    /// A channel of `grid` whose flags, modes and values are still to be read.
    init(grid: SBRGrid) {
        self.init(grid: grid, envelopeTimeDelta: [], noiseTimeDelta: [], inverseFilteringModes: [], envelopes: [], noiseFloors: [])
    }

    /// Reads `sbr_dtdf()`.
    mutating func readDeltaFlags(from reader: inout BitReader) throws(AACBitstreamError) {
        let envelopeCount = grid.envelopeCount
        let noiseCount = grid.noiseFloorCount
        let flags = try AACBitstreamError.reading("sbr_dtdf") { () throws(BinaryReadError) -> [Bool] in
            var flags: [Bool] = []
            for _ in 0..<(envelopeCount + noiseCount) { flags.append(try reader.readFlag()) }
            return flags
        }
        envelopeTimeDelta = Array(flags.prefix(envelopeCount))
        noiseTimeDelta = Array(flags.dropFirst(envelopeCount))
    }

    /// Reads `sbr_invf()`.
    mutating func readInverseFiltering(from reader: inout BitReader, tables: SBRFrequencyTables) throws(AACBitstreamError) {
        let count = tables.noiseBandCount
        inverseFilteringModes = try AACBitstreamError.reading("sbr_invf") { () throws(BinaryReadError) -> [UInt8] in
            var modes: [UInt8] = []
            for _ in 0..<count { modes.append(try reader.read(2)) }
            return modes
        }
    }

    /// Reads `sbr_envelope()`.
    mutating func readEnvelopes(from reader: inout BitReader, tables: SBRFrequencyTables, header: SBRHeader, balance: Bool,
                                history: SBRChannelHistory) throws(AACBitstreamError) {
        let coding = SBRValueCoding.envelope(balance: balance, amplitudeResolution: grid.amplitudeResolution(header: header))
        envelopes = []
        for index in 0..<grid.envelopeCount {
            let count = tables.bandCount(highResolution: grid.frequencyResolutions[index])
            if envelopeTimeDelta[index] {
                guard let base = envelopeTimeBase(index, tables: tables, balance: balance, history: history) else {
                    throw .invalidField(structure: "sbr_envelope", field: "bs_df_env", value: 1, offset: reader.byteOffset,
                                        allowed: "0 without a previous envelope of the same kind")
                }
                envelopes.append(try coding.readTime(base: base, from: &reader))
            } else {
                envelopes.append(try coding.readFrequency(count: count, from: &reader))
            }
        }
    }

    /// Reads `sbr_noise()`.
    mutating func readNoise(from reader: inout BitReader, tables: SBRFrequencyTables, balance: Bool,
                            history: SBRChannelHistory) throws(AACBitstreamError) {
        let coding = SBRValueCoding.noise(balance: balance)
        noiseFloors = []
        for index in 0..<grid.noiseFloorCount {
            if noiseTimeDelta[index] {
                guard let base = noiseTimeBase(index, tables: tables, balance: balance, history: history) else {
                    throw .invalidField(structure: "sbr_noise", field: "bs_df_noise", value: 1, offset: reader.byteOffset,
                                        allowed: "0 without a previous noise floor of the same kind")
                }
                noiseFloors.append(try coding.readTime(base: base, from: &reader))
            } else {
                noiseFloors.append(try coding.readFrequency(count: tables.noiseBandCount, from: &reader))
            }
        }
    }

    /// Reads `bs_add_harmonic_flag` and the flags.
    mutating func readHarmonics(from reader: inout BitReader, tables: SBRFrequencyTables) throws(AACBitstreamError) {
        let count = tables.highBandCount
        addHarmonics = try AACBitstreamError.reading("sbr_data") { () throws(BinaryReadError) -> [Bool]? in
            guard try reader.readFlag() else { return nil }
            var flags: [Bool] = []
            for _ in 0..<count { flags.append(try reader.readFlag()) }
            return flags
        }
    }

    /// The history after this channel's frame.
    func history(balance: Bool) -> SBRChannelHistory {
        SBRChannelHistory(envelope: envelopes.last, highResolution: grid.frequencyResolutions.last ?? false,
                          noiseFloor: noiseFloors.last, isBalance: balance)
    }
}
