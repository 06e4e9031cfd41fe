public import MediaCore

/// One SBR Huffman table (ISO/IEC 14496-3, Annex 4.A): a codebook of the deltas
/// `-LAV...LAV`, where index `delta + LAV` holds the codeword of `delta` (4.5.2.8).
public struct SBRHuffmanTable: Sendable {
    /// The table's largest absolute value (LAV): it codes the deltas `-LAV...LAV`.
    public let largestAbsoluteValue: Int
    /// The codewords of indices `0...2·LAV`.
    public let codebook: HuffmanCodebook

    /// A table of `codebook`, whose index `delta + largestAbsoluteValue` codes `delta`.
    public init(largestAbsoluteValue: Int, codebook: HuffmanCodebook) {
        precondition(codebook.codes.count == 2 * largestAbsoluteValue + 1, "an SBR table has 2·LAV + 1 codewords")
        self.largestAbsoluteValue = largestAbsoluteValue
        self.codebook = codebook
    }

    /// The deltas the table codes.
    public var deltas: ClosedRange<Int> { -largestAbsoluteValue...largestAbsoluteValue }

    /// The codeword length of `delta` in bits, `nil` when the table cannot code it.
    public func bitLength(of delta: Int) -> Int? {
        guard deltas.contains(delta) else { return nil }
        return Int(codebook.lengths[delta + largestAbsoluteValue])
    }

    /// Reads one delta.
    public func decode(from reader: inout BitReader, structure: String) throws(AACBitstreamError) -> Int {
        try codebook.decode(from: &reader, structure: structure) - largestAbsoluteValue
    }

    /// Writes `delta`; a delta beyond the LAV is ``AACBitstreamError/unrepresentable(structure:field:value:allowed:)``.
    public func encode(_ delta: Int, to writer: inout BitWriter, structure: String) throws(AACBitstreamError) {
        guard deltas.contains(delta) else {
            throw .unrepresentable(structure: structure, field: "delta", value: Int64(delta), allowed: "\(deltas)")
        }
        try codebook.encode(delta + largestAbsoluteValue, to: &writer, structure: structure)
    }
}
