internal import MediaCore

/// How one kind of SBR value is delta coded (ISO/IEC 14496-3, 4.4.2.8 `sbr_envelope()`,
/// `sbr_noise()`; 4.5.2.8; FFmpeg `read_sbr_envelope`, `read_sbr_noise`): the start value's
/// width, the values a decoder accepts, and the frequency and time Huffman tables.
///
/// The ranges are FFmpeg's: an envelope value (after the decoder doubles balance values) must be
/// 0...127 and a noise floor value 0...30; a start value is only bounded by its width.
struct SBRValueCoding: Sendable {
    /// Width of the start value of frequency coding.
    let startBits: Int
    /// The values allowed after the start value (and for every time-coded value).
    let range: ClosedRange<Int>
    /// Deltas across frequency.
    let frequency: SBRHuffmanTable
    /// Deltas across time.
    let time: SBRHuffmanTable
    /// The syntax, for errors.
    let structure: String
    /// The field, for errors.
    let field: String

    /// Envelope values: level or balance, at the frame's effective amplitude resolution.
    static func envelope(balance: Bool, amplitudeResolution: UInt8) -> SBRValueCoding {
        switch (balance, amplitudeResolution != 0) {
        case (false, false):
            SBRValueCoding(startBits: 7, range: 0...127, frequency: SBRHuffmanTables.envelope1_5dBFrequency,
                           time: SBRHuffmanTables.envelope1_5dBTime, structure: "sbr_envelope", field: "env_facs_q")
        case (false, true):
            SBRValueCoding(startBits: 6, range: 0...127, frequency: SBRHuffmanTables.envelope3_0dBFrequency,
                           time: SBRHuffmanTables.envelope3_0dBTime, structure: "sbr_envelope", field: "env_facs_q")
        case (true, false):
            SBRValueCoding(startBits: 6, range: 0...63, frequency: SBRHuffmanTables.balance1_5dBFrequency,
                           time: SBRHuffmanTables.balance1_5dBTime, structure: "sbr_envelope", field: "env_facs_q balance")
        case (true, true):
            SBRValueCoding(startBits: 5, range: 0...63, frequency: SBRHuffmanTables.balance3_0dBFrequency,
                           time: SBRHuffmanTables.balance3_0dBTime, structure: "sbr_envelope", field: "env_facs_q balance")
        }
    }

    /// Noise floor values: level or balance.
    static func noise(balance: Bool) -> SBRValueCoding {
        balance
            ? SBRValueCoding(startBits: 5, range: 0...15, frequency: SBRHuffmanTables.balance3_0dBFrequency,
                             time: SBRHuffmanTables.noiseBalanceTime, structure: "sbr_noise", field: "noise_facs_q balance")
            : SBRValueCoding(startBits: 5, range: 0...30, frequency: SBRHuffmanTables.envelope3_0dBFrequency,
                             time: SBRHuffmanTables.noiseTime, structure: "sbr_noise", field: "noise_facs_q")
    }

    /// The values a start value can have.
    var startRange: ClosedRange<Int> { 0...((1 << startBits) - 1) }

    /// The time-delta reference of an envelope of `count` bands at `currentHigh` resolution
    /// from `previous` at `previousHigh` (4.6.18.3.3; FFmpeg's index mapping), `nil` when the
    /// previous values do not fit the tables.
    static func timeBase(previous: [Int], previousHigh: Bool, currentHigh: Bool, count: Int, highBandCount: Int) -> [Int]? {
        let odd = highBandCount & 1
        var base: [Int] = []
        base.reserveCapacity(count)
        for j in 0..<count {
            let k = previousHigh == currentHigh ? j : currentHigh ? (j + odd) >> 1 : (j == 0 ? 0 : 2 * j - odd)
            guard previous.indices.contains(k) else { return nil }
            base.append(previous[k])
        }
        return base
    }

    /// Bits of frequency coding, `nil` when it cannot code `values`.
    func frequencyBits(_ values: [Int]) -> Int? {
        guard let first = values.first, startRange.contains(first) else { return nil }
        var bits = startBits
        for j in values.indices.dropFirst() {
            guard range.contains(values[j]), let length = frequency.bitLength(of: values[j] - values[j - 1]) else { return nil }
            bits += length
        }
        return bits
    }

    /// Bits of time coding against `base`, `nil` when it cannot code `values`.
    func timeBits(_ values: [Int], base: [Int]) -> Int? {
        guard values.count == base.count else { return nil }
        var bits = 0
        for j in values.indices {
            guard range.contains(values[j]), let length = time.bitLength(of: values[j] - base[j]) else { return nil }
            bits += length
        }
        return bits
    }

    /// `values` changed as little as this walk can so that frequency coding can code them: the
    /// start value clamped to its width, then each value clamped to the range and to within
    /// the table's LAV of the one before.
    func clampedForFrequency(_ values: [Int]) -> [Int] {
        var result = values
        for j in result.indices {
            if j == 0 {
                result[0] = min(max(result[0], startRange.lowerBound), min(startRange.upperBound, range.upperBound))
                result[0] = max(result[0], range.lowerBound)
            } else {
                let lav = frequency.largestAbsoluteValue
                let low = max(range.lowerBound, result[j - 1] - lav)
                let high = min(range.upperBound, result[j - 1] + lav)
                result[j] = min(max(result[j], low), high)
            }
        }
        return result
    }

    /// Writes `values` as a start value and frequency deltas.
    func writeFrequency(_ values: [Int], to writer: inout BitWriter) throws(AACBitstreamError) {
        guard let first = values.first, startRange.contains(first) else {
            throw .unrepresentable(structure: structure, field: "\(field) start value", value: Int64(values.first ?? -1), allowed: "\(startRange)")
        }
        writer.write(first, bits: startBits)
        for j in values.indices.dropFirst() {
            try checkRange(values[j])
            try frequency.encode(values[j] - values[j - 1], to: &writer, structure: structure)
        }
    }

    /// Writes `values` as time deltas against `base`.
    func writeTime(_ values: [Int], base: [Int], to writer: inout BitWriter) throws(AACBitstreamError) {
        for j in values.indices {
            try checkRange(values[j])
            try time.encode(values[j] - base[j], to: &writer, structure: structure)
        }
    }

    private func checkRange(_ value: Int) throws(AACBitstreamError) {
        guard range.contains(value) else {
            throw .unrepresentable(structure: structure, field: field, value: Int64(value), allowed: "\(range)")
        }
    }

    /// Reads `count` values coded as a start value and frequency deltas.
    func readFrequency(count: Int, from reader: inout BitReader) throws(AACBitstreamError) -> [Int] {
        let first = try AACBitstreamError.reading(structure) { () throws(BinaryReadError) in Int(try reader.readBits(startBits)) }
        var values = [first]
        for _ in 1..<max(count, 1) {
            let offset = reader.byteOffset
            let value = values[values.count - 1] + (try frequency.decode(from: &reader, structure: structure))
            try checkRead(value, offset: offset)
            values.append(value)
        }
        return values
    }

    /// Reads values coded as time deltas against `base`.
    func readTime(base: [Int], from reader: inout BitReader) throws(AACBitstreamError) -> [Int] {
        var values: [Int] = []
        for reference in base {
            let offset = reader.byteOffset
            let value = reference + (try time.decode(from: &reader, structure: structure))
            try checkRead(value, offset: offset)
            values.append(value)
        }
        return values
    }

    private func checkRead(_ value: Int, offset: Int64) throws(AACBitstreamError) {
        guard range.contains(value) else {
            throw .invalidField(structure: structure, field: field, value: Int64(value), offset: offset, allowed: "\(range)")
        }
    }
}
