public import MediaCore

/// A prefix code of AAC (ISO/IEC 14496-3, Annex 4.A): the codeword and its length for each
/// index, and a bounded decoder over them.
///
/// Decoding walks a binary tree built once from the codewords: at most ``maximumLength`` bits
/// are read per symbol, and a path that leads nowhere (impossible in a complete code) is a
/// typed error, never a trap.
public struct HuffmanCodebook: Sendable {
    /// The codeword of each index, right-aligned in `lengths[index]` bits.
    public let codes: [UInt32]
    /// The length in bits of each index's codeword (1...32).
    public let lengths: [UInt8]
    /// The longest codeword.
    public let maximumLength: Int
    /// Two children per node; a child is a node index (> 0), a leaf `-(index + 1)`, or 0 (none).
    private let tree: [Int32]

    /// A codebook of the given codewords; `codes` and `lengths` have one entry per index.
    public init(codes: [UInt32], lengths: [UInt8]) {
        precondition(codes.count == lengths.count, "one length per codeword")
        self.codes = codes
        self.lengths = lengths
        self.maximumLength = Int(lengths.max() ?? 0)
        var tree: [Int32] = [0, 0]
        for (index, code) in codes.enumerated() {
            let length = Int(lengths[index])
            var node = 0
            for position in stride(from: length - 1, through: 0, by: -1) {
                let slot = 2 * node + Int((code >> UInt32(position)) & 1)
                if position == 0 {
                    tree[slot] = -Int32(index + 1)
                } else {
                    if tree[slot] <= 0 {
                        tree[slot] = Int32(tree.count / 2)
                        tree.append(contentsOf: [0, 0])
                    }
                    node = Int(tree[slot])
                }
            }
        }
        self.tree = tree
    }

    /// Reads one codeword and returns its index. `structure` names the syntax for errors.
    public func decode(from reader: inout BitReader, structure: String) throws(AACBitstreamError) -> Int {
        let start = reader.byteOffset
        var node = 0
        for _ in 0..<maximumLength {
            let bit = try AACBitstreamError.reading(structure) { () throws(BinaryReadError) in try reader.readBits(1) }
            let next = tree[2 * node + Int(bit)]
            if next < 0 { return Int(-next) - 1 }
            if next == 0 { break }
            node = Int(next)
        }
        throw .invalidField(structure: structure, field: "Huffman codeword", value: -1, offset: start, allowed: "a codeword of the codebook")
    }

    /// Writes the codeword of `index`, which must be an index of the codebook.
    public func encode(_ index: Int, to writer: inout BitWriter, structure: String) throws(AACBitstreamError) {
        guard codes.indices.contains(index) else {
            throw .unrepresentable(structure: structure, field: "Huffman index", value: Int64(index), allowed: "0..<\(codes.count)")
        }
        writer.write(codes[index], bits: Int(lengths[index]))
    }
}
