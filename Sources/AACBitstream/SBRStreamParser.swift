public import MediaCore

/// Reads the `sbr_extension_data()` of one SCE or CPE frame after frame (ISO/IEC 14496-3,
/// 4.4.2.8; FFmpeg `ff_aac_sbr_decode_extension`): the band counts and the amplitude resolution
/// come from the last header, and time deltas from the previous frame, so the parser keeps the
/// current header, its frequency tables and one ``SBRChannelHistory`` per channel.
///
/// Data before the first header is skipped (`nil`), as FFmpeg does. A header whose tables break a
/// requirement, or data that does not parse, turns the parser off until the next header (FFmpeg
/// `sbr_turnoff`) and is a typed error. A header that changes the frequency tables clears the
/// histories.
public struct SBRStreamParser: Sendable {
    /// The output (SBR) sampling rate.
    public let outputSampleRate: Int
    /// The current header, `nil` before the first (or after an error).
    public private(set) var header: SBRHeader?
    /// The frequency tables of ``header``.
    public private(set) var tables: SBRFrequencyTables?
    /// One history per channel of the element.
    public private(set) var histories: [SBRChannelHistory] = []

    /// A parser of a stream at `outputSampleRate` (twice the AAC core's rate).
    public init(outputSampleRate: Int) {
        self.outputSampleRate = outputSampleRate
    }

    /// Reads `sbr_extension_data()` (no CRC) for an SCE (`channelCount` 1) or CPE (2) from the
    /// next `bitLimit` bits of `reader` (an SBR fill element's `cnt·8 − 4`), and consumes all of
    /// them: what the data leaves is `bs_fill_bits`. Returns `nil` when no header has been seen.
    public mutating func parse(_ reader: inout BitReader, channelCount: Int, bitLimit: Int) throws(AACBitstreamError) -> SBRExtensionData? {
        let origin = reader.byteOffset
        guard channelCount == 1 || channelCount == 2 else {
            throw .invalidField(structure: "sbr_extension_data", field: "channel count", value: Int64(channelCount), offset: origin, allowed: "1 (SCE) or 2 (CPE)")
        }
        guard bitLimit >= 0 else {
            throw .invalidField(structure: "sbr_extension_data", field: "bit limit", value: Int64(bitLimit), offset: origin, allowed: "0 or more")
        }
        let bits = try AACBitstreamError.reading("sbr_extension_data") { () throws(BinaryReadError) in try reader.readBitString(bitLimit) }
        var window = BitReader(bits.bytes, baseOffset: origin)
        if histories.count != channelCount { histories = Array(repeating: SBRChannelHistory(), count: channelCount) }
        do throws(AACBitstreamError) {
            let frame = try parseFrame(&window, channelCount: channelCount)
            guard window.bitsConsumed <= bitLimit else {
                throw .invalidField(structure: "sbr_extension_data", field: "length in bits", value: Int64(window.bitsConsumed),
                                                     offset: origin, allowed: "at most \(bitLimit) (the fill element)")
            }
            if let frame { histories = frame.histories }
            return frame?.data
        } catch {
            header = nil
            tables = nil
            histories = Array(repeating: SBRChannelHistory(), count: channelCount)
            throw error
        }
    }

    private mutating func parseFrame(_ reader: inout BitReader, channelCount: Int) throws(AACBitstreamError)
        -> (data: SBRExtensionData, histories: [SBRChannelHistory])? {
        let hasHeader = try AACBitstreamError.reading("sbr_extension_data") { () throws(BinaryReadError) in try reader.readFlag() }
        var frameHeader: SBRHeader?
        if hasHeader {
            let newHeader = try SBRHeader(from: &reader)
            if newHeader != tables?.header {
                let spectrumChanged = tables.map { !newHeader.hasSameSpectrum(as: $0.header) } ?? true
                tables = try SBRFrequencyTables(header: newHeader, outputSampleRate: outputSampleRate)
                if spectrumChanged { histories = Array(repeating: SBRChannelHistory(), count: channelCount) }
            }
            header = newHeader
            frameHeader = newHeader
        }
        guard let header, let tables else { return nil }

        func bits(_ count: Int) throws(AACBitstreamError) -> UInt64 {
            try AACBitstreamError.reading("sbr_data") { () throws(BinaryReadError) in try reader.readBits(count) }
        }
        if try bits(1) == 1 { _ = try bits(channelCount == 1 ? 4 : 8) }   // bs_data_extra, bs_reserved
        var histories = histories
        var channels: [SBRChannelData] = []
        var coupling = false
        if channelCount == 1 {
            var channel = SBRChannelData(grid: try SBRGrid(from: &reader))
            try channel.readDeltaFlags(from: &reader)
            try channel.readInverseFiltering(from: &reader, tables: tables)
            try channel.readEnvelopes(from: &reader, tables: tables, header: header, balance: false, history: histories[0])
            try channel.readNoise(from: &reader, tables: tables, balance: false, history: histories[0])
            channels = [channel]
        } else {
            coupling = try bits(1) == 1
            let grid0 = try SBRGrid(from: &reader)
            let grid1 = coupling ? grid0 : try SBRGrid(from: &reader)
            channels = [SBRChannelData(grid: grid0), SBRChannelData(grid: grid1)]
            try channels[0].readDeltaFlags(from: &reader)
            try channels[1].readDeltaFlags(from: &reader)
            try channels[0].readInverseFiltering(from: &reader, tables: tables)
            if coupling {
                channels[1].inverseFilteringModes = channels[0].inverseFilteringModes
                try channels[0].readEnvelopes(from: &reader, tables: tables, header: header, balance: false, history: histories[0])
                try channels[0].readNoise(from: &reader, tables: tables, balance: false, history: histories[0])
                try channels[1].readEnvelopes(from: &reader, tables: tables, header: header, balance: true, history: histories[1])
                try channels[1].readNoise(from: &reader, tables: tables, balance: true, history: histories[1])
            } else {
                try channels[1].readInverseFiltering(from: &reader, tables: tables)
                try channels[0].readEnvelopes(from: &reader, tables: tables, header: header, balance: false, history: histories[0])
                try channels[1].readEnvelopes(from: &reader, tables: tables, header: header, balance: false, history: histories[1])
                try channels[0].readNoise(from: &reader, tables: tables, balance: false, history: histories[0])
                try channels[1].readNoise(from: &reader, tables: tables, balance: false, history: histories[1])
            }
        }
        for index in channels.indices {
            try channels[index].readHarmonics(from: &reader, tables: tables)
            histories[index] = channels[index].history(balance: coupling && index == 1)
        }
        var extendedData: BitString?
        if try bits(1) == 1 {
            var size = Int(try bits(4))
            if size == 15 { size += Int(try bits(8)) }
            let count = size * 8
            extendedData = try AACBitstreamError.reading("bs_extended_data") { () throws(BinaryReadError) in try reader.readBitString(count) }
        }
        let data = SBRExtensionData(header: frameHeader, coupling: coupling, channels: channels, extendedData: extendedData)
        return (data, histories)
    }
}
