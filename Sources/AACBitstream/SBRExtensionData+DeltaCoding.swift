extension SBRExtensionData {
    /// Sets `bs_df_env` and `bs_df_noise` of every channel to the cheaper coding (ISO/IEC
    /// 14496-3, 4.5.2.8; 3GPP TS 26.404 5.8), and makes every envelope and noise floor
    /// writable. **Values may change**: when frequency coding cannot code them (a delta beyond
    /// the LAV, a start value beyond its width, a value outside what a decoder accepts) and time
    /// coding cannot either, the values are clamped — the start value to its width and the
    /// accepted range, then each value to the range and to within the LAV of the one before —
    /// and frequency coded.
    ///
    /// The first envelope and noise floor use frequency coding when `independent` (a decoder
    /// may start at this frame) or when `history` has nothing usable for the channel; every
    /// other one takes the fewer bits of the representable codings (frequency on a tie). Later
    /// envelopes of the frame may still use time coding against the one before them.
    /// `tables` must be those of the stream's current header. A channel whose counts do not
    /// match its grid and the tables is left as it is (the writer refuses it).
    public mutating func chooseDeltaCoding(tables: SBRFrequencyTables, history: [SBRChannelHistory], independent: Bool) {
        let header = self.header ?? tables.header
        for index in channels.indices {
            let balance = coupling && index == 1
            var channel = channels[index]
            guard (try? channel.validate(tables: tables, channel: index)) != nil else { continue }
            let previous = history.indices.contains(index) ? history[index] : SBRChannelHistory()
            let coding = SBRValueCoding.envelope(balance: balance, amplitudeResolution: channel.grid.amplitudeResolution(header: header))
            for envelope in channel.envelopes.indices {
                let base = independent && envelope == 0 ? nil
                    : channel.envelopeTimeBase(envelope, tables: tables, balance: balance, history: previous)
                let (values, useTime) = Self.choose(channel.envelopes[envelope], base: base, coding: coding)
                channel.envelopes[envelope] = values
                channel.envelopeTimeDelta[envelope] = useTime
            }
            let noiseCoding = SBRValueCoding.noise(balance: balance)
            for floor in channel.noiseFloors.indices {
                let base = independent && floor == 0 ? nil
                    : channel.noiseTimeBase(floor, tables: tables, balance: balance, history: previous)
                let (values, useTime) = Self.choose(channel.noiseFloors[floor], base: base, coding: noiseCoding)
                channel.noiseFloors[floor] = values
                channel.noiseTimeDelta[floor] = useTime
            }
            channels[index] = channel
        }
    }

    /// The coding of one envelope or noise floor: time when cheaper and possible, frequency
    /// otherwise, clamping the values when neither can code them.
    private static func choose(_ values: [Int], base: [Int]?, coding: SBRValueCoding) -> (values: [Int], time: Bool) {
        let frequencyBits = coding.frequencyBits(values)
        let timeBits = base.flatMap { coding.timeBits(values, base: $0) }
        switch (frequencyBits, timeBits) {
        case (let frequency?, let time?): return (values, time < frequency)
        case (nil, _?): return (values, true)
        case (_?, nil): return (values, false)
        case (nil, nil): return (coding.clampedForFrequency(values), false)
        }
    }
}
