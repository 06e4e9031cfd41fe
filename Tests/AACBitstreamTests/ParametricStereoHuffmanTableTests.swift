@testable import AACBitstream
import MediaCore
import Testing

/// The PS Huffman tables (ISO/IEC 14496-3, Annex 8.B) are complete prefix codes, and every
/// codeword decodes to its delta through a second, independent transcription: faad2's binary
/// decode trees (`libfaad/ps_syntax.c`), while the tables themselves were transcribed from
/// FFmpeg's codes and lengths (`libavcodec/aacpsdata.c`).
@Suite struct ParametricStereoHuffmanTableTests {
    static let names = ["iid coarse df (huff_iid_df0)", "iid coarse dt (huff_iid_dt0)", "iid fine df (huff_iid_df1)",
                        "iid fine dt (huff_iid_dt1)", "icc df", "icc dt"]

    @Test func sizesAndLAVs() {
        let tables = ParametricStereoHuffmanTables.all
        #expect(tables.map(\.codebook.codes.count) == [29, 29, 61, 61, 15, 15])
        #expect(tables.map(\.largestAbsoluteValue) == [14, 14, 30, 30, 7, 7])
        #expect(tables.map(\.codebook.maximumLength) == [18, 20, 18, 16, 14, 14])
        // The zero delta is the one-bit codeword of every table.
        #expect(tables.map { $0.bitLength(of: 0) } == [1, 1, 1, 1, 1, 1])
    }

    /// Prefix-free (no codeword begins another) and complete (Kraft sum exactly 1).
    @Test(arguments: 0..<6)
    func prefixFreeAndComplete(table index: Int) {
        let book = ParametricStereoHuffmanTables.all[index].codebook
        var kraft: UInt64 = 0
        for (code, length) in zip(book.codes, book.lengths) {
            #expect(code >> UInt32(length) == 0, "\(Self.names[index]): codeword wider than its length")
            kraft += 1 << (32 - UInt64(length))
        }
        #expect(kraft == 1 << 32, "\(Self.names[index]) Kraft sum")
        for a in book.codes.indices {
            for b in book.codes.indices where a != b && book.lengths[a] <= book.lengths[b] {
                let shift = UInt32(book.lengths[b] - book.lengths[a])
                #expect(book.codes[b] >> shift != book.codes[a], "\(Self.names[index]): \(a) is a prefix of \(b)")
            }
        }
    }

    /// Walking faad2's tree with each codeword's bits ends at a leaf exactly at its last bit, and
    /// that leaf is the index's delta; the tree has one leaf per delta of the table.
    @Test(arguments: 0..<6)
    func matchesFaad2DecodeTree(table index: Int) {
        let table = ParametricStereoHuffmanTables.all[index]
        let tree = Self.faad2Trees[index]
        let leaves = tree.flatMap { [$0.0, $0.1] }.filter { $0 < 0 }.map { $0 + 31 }
        #expect(leaves.sorted() == Array(table.deltas), "\(Self.names[index]): faad2's leaves")
        #expect(tree.count == table.codebook.codes.count - 1)
        for (symbol, code) in table.codebook.codes.enumerated() {
            let length = Int(table.codebook.lengths[symbol])
            var node = 0
            var decoded: Int?
            for position in stride(from: length - 1, through: 0, by: -1) {
                let pair = tree[node]
                let next = (code >> UInt32(position)) & 1 == 0 ? pair.0 : pair.1
                if next < 0 {
                    if position == 0 { decoded = next + 31 }
                    break
                }
                node = next
            }
            #expect(decoded == symbol - table.largestAbsoluteValue, "\(Self.names[index]) index \(symbol)")
        }
    }

    /// Every delta encodes and decodes to itself; a delta beyond the LAV is a typed error.
    @Test(arguments: 0..<6)
    func deltasRoundTrip(table index: Int) throws {
        let table = ParametricStereoHuffmanTables.all[index]
        var writer = BitWriter()
        for delta in table.deltas { try table.encode(delta, to: &writer, structure: "test") }
        var reader = BitReader(writer.bytes)
        for delta in table.deltas { #expect(try table.decode(from: &reader, structure: "test") == delta) }
        #expect(throws: AACBitstreamError.self) { try table.encode(table.largestAbsoluteValue + 1, to: &writer, structure: "test") }
        #expect(table.bitLength(of: -table.largestAbsoluteValue - 1) == nil)
    }

    /// faad2's decode trees (`libfaad/ps_syntax.c`), in the table order of
    /// `ParametricStereoHuffmanTables.all`: node `n` is the pair (child for bit 0, child for bit 1);
    /// a child ≥ 0 is a node, a negative one a leaf of delta `child + 31`.
    static let faad2Trees: [[(Int, Int)]] = [
        // f_huff_iid_def
        [
            (-31, 1), (2, 3), (-30, -32), (4, 5), (-29, -33), (6, 7), (-28, -34), (8, 9),
            (-35, -27), (-26, 10), (-36, 11), (-25, 12), (-37, 13), (-38, 14), (-24, 15), (16, 17),
            (-23, -39), (18, 19), (-22, -21), (20, 21), (-40, -20), (22, 23), (-41, 24), (25, 26),
            (-42, -45), (-44, -43), (-19, 27), (-18, -17),
        ],
        // t_huff_iid_def
        [
            (-31, 1), (-32, 2), (-30, 3), (-33, 4), (-29, 5), (-34, 6), (-28, 7), (-35, 8),
            (-27, 9), (-36, 10), (-26, 11), (-37, 12), (-25, 13), (-24, 14), (-38, 15), (16, 17),
            (-23, -39), (18, 19), (20, 21), (22, 23), (-22, -45), (-44, -43), (24, 25), (26, 27),
            (-42, -41), (-40, -21), (-20, -19), (-18, -17),
        ],
        // f_huff_iid_fine
        [
            (1, -31), (2, 3), (4, -32), (-30, 5), (-33, -29), (6, 7), (-34, -28), (8, 9),
            (-35, -27), (10, 11), (-36, -26), (12, 13), (-37, -25), (14, 15), (-24, 16), (17, 18),
            (19, -39), (-23, 20), (21, -38), (-21, 22), (23, -40), (-22, 24), (-42, -20), (25, 26),
            (27, -41), (28, -43), (-19, 29), (30, 31), (32, -45), (-17, 33), (34, -44), (-18, 35),
            (36, 37), (38, -46), (-16, 39), (40, 41), (42, 43), (-48, -14), (44, 45), (46, 47),
            (48, 49), (-47, -15), (-52, -10), (-50, -12), (-49, -13), (50, 51), (52, 53), (54, 55),
            (56, 57), (58, 59), (-57, -56), (-59, -58), (-53, -9), (-55, -54), (-6, -5), (-8, -7),
            (-2, -1), (-4, -3), (-61, -60), (-51, -11),
        ],
        // t_huff_iid_fine
        [
            (1, -31), (-30, 2), (3, -32), (4, 5), (6, 7), (-33, -29), (8, -34), (-28, 9),
            (-35, -27), (10, 11), (-26, 12), (13, 14), (-37, -25), (15, 16), (17, -36), (18, -38),
            (-24, 19), (20, 21), (-22, 22), (23, 24), (-39, -23), (25, 26), (-20, 27), (28, 29),
            (-41, -21), (30, 31), (32, -40), (33, -44), (-18, 34), (35, 36), (37, -43), (-19, 38),
            (39, -42), (40, 41), (42, 43), (44, 45), (46, -46), (-16, 47), (-45, -17), (48, 49),
            (-52, -51), (-13, -12), (-50, -49), (50, 51), (52, 53), (54, 55), (56, -48), (-14, 57),
            (58, -47), (-15, 59), (-57, -5), (-59, -58), (-2, -1), (-4, -3), (-61, -60), (-56, -6),
            (-55, -7), (-54, -8), (-53, -9), (-11, -10),
        ],
        // f_huff_icc
        [
            (-31, 1), (-30, 2), (-32, 3), (-29, 4), (-33, 5), (-28, 6), (-34, 7), (-27, 8),
            (-26, 9), (-35, 10), (-25, 11), (-36, 12), (-24, 13), (-37, -38),
        ],
        // t_huff_icc
        [
            (-31, 1), (-30, 2), (-32, 3), (-29, 4), (-33, 5), (-28, 6), (-34, 7), (-27, 8),
            (-35, 9), (-26, 10), (-36, 11), (-25, 12), (-37, 13), (-38, -24),
        ],
    ]
}
