public import MediaCore

/// `sbr_extension_data()` of one SCE or CPE (ISO/IEC 14496-3, 4.4.2.8 Tables 4.62 and 4.64:
/// `bs_header_flag`, `sbr_header()`, `sbr_data()`), without CRC and without its fill bits.
///
/// Write it with ``write(to:tables:history:)`` (or into a fill element with
/// ``FillElement/init(sbr:tables:history:)``); read a stream of them with ``SBRStreamParser``.
/// `bs_data_extra` is written 0 and its reserved bits are skipped when read.
public struct SBRExtensionData: Sendable, Hashable {
    /// `sbr_header()`, when `bs_header_flag` is 1.
    public var header: SBRHeader?
    /// `bs_coupling` (CPE only): channel 1 carries balance values and shares channel 0's grid
    /// and inverse filtering modes.
    public var coupling: Bool
    /// One channel (SCE) or two (CPE).
    public var channels: [SBRChannelData]
    /// The payload of `bs_extended_data` (`bs_extension_size` or `bs_esc_count` bytes: the
    /// `bs_extension_id` and extension loop, kept as bits), `nil` when absent.
    public var extendedData: BitString?

    /// Extension data of the given fields.
    public init(header: SBRHeader? = nil, coupling: Bool = false, channels: [SBRChannelData], extendedData: BitString? = nil) {
        self.header = header
        self.coupling = coupling
        self.channels = channels
        self.extendedData = extendedData
    }

    /// The largest `bs_extended_data` payload: `bs_extension_size` 15 plus `bs_esc_count` 255 bytes.
    public static let maximumExtendedDataBytes = 270

    /// Writes `bs_header_flag`, the header, and `sbr_data()`: each envelope and noise floor as
    /// a start value and frequency deltas, or as time deltas, as the channel's flags say, with the
    /// level or balance tables and the frame's effective amplitude resolution (FIXFIX with one
    /// envelope is 1.5 dB). `tables` must be those of the stream's current header (this
    /// frame's, when it has one). `history` holds one entry per channel (missing ones are none);
    /// it is updated only when the write succeeds, and nothing is written on failure.
    ///
    /// A delta beyond its table's LAV, a start value beyond its width, a value the decoder would
    /// refuse, a count that does not match the grid or tables, or time coding without a usable
    /// history is ``AACBitstreamError/unrepresentable(structure:field:value:allowed:)``.
    public func write(to writer: inout BitWriter, tables: SBRFrequencyTables, history: inout [SBRChannelHistory]) throws(AACBitstreamError) {
        var output = BitWriter()
        var histories = history
        while histories.count < channels.count { histories.append(SBRChannelHistory()) }
        if let header, !header.hasSameSpectrum(as: tables.header) {
            throw .unrepresentable(structure: "sbr_extension_data", field: "frequency tables", value: 0,
                                   allowed: "tables made from this frame's header")
        }
        let current = header ?? tables.header
        output.writeFlag(header != nil)
        try header?.write(to: &output)
        try writeData(to: &output, tables: tables, header: current, histories: &histories)
        writer.write(output.bits)
        history = histories
    }

    /// The bits ``write(to:tables:history:)`` would write now, with `history` as it is.
    public func bitLength(tables: SBRFrequencyTables, history: [SBRChannelHistory]) throws(AACBitstreamError) -> Int {
        var writer = BitWriter()
        var copy = history
        try write(to: &writer, tables: tables, history: &copy)
        return writer.bitCount
    }

    private func writeData(to writer: inout BitWriter, tables: SBRFrequencyTables, header: SBRHeader,
                           histories: inout [SBRChannelHistory]) throws(AACBitstreamError) {
        guard channels.count == 1 || channels.count == 2 else {
            throw .unrepresentable(structure: "sbr_data", field: "channel count", value: Int64(channels.count), allowed: "1 (SCE) or 2 (CPE)")
        }
        guard !coupling || channels.count == 2 else {
            throw .unrepresentable(structure: "sbr_data", field: "bs_coupling", value: 1, allowed: "0 in an SCE")
        }
        for (index, channel) in channels.enumerated() {
            try channel.validate(tables: tables, channel: index)
        }
        if coupling, channels[1].grid != channels[0].grid || channels[1].inverseFilteringModes != channels[0].inverseFilteringModes {
            throw .unrepresentable(structure: "sbr_channel_pair_element", field: "coupled channel grid or bs_invf_mode", value: 1,
                                   allowed: "channel 0's (shared when bs_coupling is 1)")
        }
        writer.writeFlag(false)   // bs_data_extra
        let previous = histories
        var writers = channels.map { _ in BitWriter() }
        if channels.count == 1 {
            try channels[0].grid.write(to: &writer)
            channels[0].writeDeltaFlags(to: &writer)
            channels[0].writeInverseFiltering(to: &writer)
            histories[0] = try channels[0].writeValues(envelopes: &writer, noise: &writers[0], tables: tables, header: header,
                                                       balance: false, history: previous[0])
            writer.write(writers[0].bits)
        } else {
            writer.writeFlag(coupling)
            try channels[0].grid.write(to: &writer)
            if !coupling { try channels[1].grid.write(to: &writer) }
            channels[0].writeDeltaFlags(to: &writer)
            channels[1].writeDeltaFlags(to: &writer)
            channels[0].writeInverseFiltering(to: &writer)
            if !coupling { channels[1].writeInverseFiltering(to: &writer) }
            var envelopes = channels.map { _ in BitWriter() }
            for index in 0..<2 {
                histories[index] = try channels[index].writeValues(envelopes: &envelopes[index], noise: &writers[index], tables: tables,
                                                                   header: header, balance: coupling && index == 1, history: previous[index])
            }
            // Coupled: env(0) noise(0) env(1) noise(1); otherwise env(0) env(1) noise(0) noise(1).
            let order = coupling ? [envelopes[0], writers[0], envelopes[1], writers[1]] : [envelopes[0], envelopes[1], writers[0], writers[1]]
            for part in order { writer.write(part.bits) }
        }
        for channel in channels {
            writer.writeFlag(channel.addHarmonics != nil)
            for flag in channel.addHarmonics ?? [] { writer.writeFlag(flag) }
        }
        writer.writeFlag(extendedData != nil)
        if let extendedData {
            let bytes = extendedData.count / 8
            guard extendedData.count % 8 == 0, bytes <= Self.maximumExtendedDataBytes else {
                throw .unrepresentable(structure: "sbr_data", field: "bs_extended_data bits", value: Int64(extendedData.count),
                                       allowed: "whole bytes, at most \(Self.maximumExtendedDataBytes)")
            }
            if bytes < 15 {
                writer.write(bytes, bits: 4)
            } else {
                writer.write(15, bits: 4)
                writer.write(bytes - 15, bits: 8)
            }
            writer.write(extendedData)
        }
    }
}
