internal import MediaCore

/// One of the two parameters of baseline `ps_data()` (ISO/IEC 14496-3, 8.3 `iid_data()` and
/// `icc_data()`; 8.4): its value range, its Huffman tables (Annex 8.B) and its delta coding.
///
/// Frequency coding (`*_dt` = 0) sends the first band as a delta from 0 and each further band as
/// a delta from the band below; time coding (`*_dt` = 1) sends each band as a delta from the same
/// band of the previous envelope (8.4; FFmpeg `read_iid_data`, faad2 `huff_data` and
/// `delta_decode`).
enum ParametricStereoParameter: Sendable {
    /// Inter-channel intensity difference, with the fine quantiser or the default one.
    case iid(fine: Bool)
    /// Inter-channel coherence.
    case icc

    /// The syntax element's name, for errors.
    var name: String {
        switch self {
        case .iid: "iid_par"
        case .icc: "icc_par"
        }
    }

    /// The name of the element that says time or frequency.
    var flagName: String {
        switch self {
        case .iid: "iid_dt"
        case .icc: "icc_dt"
        }
    }

    /// The quantiser indices a decoder accepts: −7...7 (default IID), −15...15 (fine IID),
    /// 0...7 (ICC). FFmpeg refuses anything else.
    var values: ClosedRange<Int> {
        switch self {
        case .iid(let fine): fine ? -15...15 : -7...7
        case .icc: 0...7
        }
    }

    /// The table of frequency (`time` false) or time deltas.
    func table(time: Bool) -> SBRHuffmanTable {
        switch (self, time) {
        case (.iid(false), false): ParametricStereoHuffmanTables.iidCoarseFrequency
        case (.iid(false), true): ParametricStereoHuffmanTables.iidCoarseTime
        case (.iid(true), false): ParametricStereoHuffmanTables.iidFineFrequency
        case (.iid(true), true): ParametricStereoHuffmanTables.iidFineTime
        case (.icc, false): ParametricStereoHuffmanTables.iccFrequency
        case (.icc, true): ParametricStereoHuffmanTables.iccTime
        }
    }

    /// The deltas that code `values` against `base` (time) or in frequency (`base` nil).
    func deltas(_ values: [Int], base: [Int]?) -> [Int] {
        values.indices.map { band in values[band] - (base.map { $0[band] } ?? (band == 0 ? 0 : values[band - 1])) }
    }

    /// The bits of coding `values` against `base` (time) or in frequency (`base` nil); `nil` when
    /// a delta is beyond the table or `base` has another band count.
    func bitCount(_ values: [Int], base: [Int]?) -> Int? {
        if let base, base.count != values.count { return nil }
        let table = table(time: base != nil)
        var total = 0
        for delta in deltas(values, base: base) {
            guard let length = table.bitLength(of: delta) else { return nil }
            total += length
        }
        return total
    }

    /// Writes `values` coded against `base` (time) or in frequency (`base` nil).
    func write(_ values: [Int], base: [Int]?, to writer: inout BitWriter) throws(AACBitstreamError) {
        let table = table(time: base != nil)
        for delta in deltas(values, base: base) { try table.encode(delta, to: &writer, structure: "ps_data \(name)") }
    }

    /// Reads `count` values coded against `base` (time) or in frequency (`base` nil); a value
    /// outside ``values`` is ``AACBitstreamError/invalidField(structure:field:value:offset:allowed:)``
    /// at once, as FFmpeg refuses it.
    func read(count: Int, base: [Int]?, from reader: inout BitReader) throws(AACBitstreamError) -> [Int] {
        let table = table(time: base != nil)
        var result: [Int] = []
        result.reserveCapacity(count)
        for band in 0..<count {
            let offset = reader.byteOffset
            let delta = try table.decode(from: &reader, structure: "ps_data")
            let value = delta + (base.map { $0[band] } ?? (band == 0 ? 0 : result[band - 1]))
            guard values.contains(value) else {
                throw .invalidField(structure: "ps_data", field: "\(name)[\(band)]", value: Int64(value), offset: offset, allowed: "\(values)")
            }
            result.append(value)
        }
        return result
    }
}
