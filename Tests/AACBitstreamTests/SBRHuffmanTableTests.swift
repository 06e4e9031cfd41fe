@testable import AACBitstream
import MediaCore
import Testing

/// The SBR Huffman tables (ISO/IEC 14496-3, Annex 4.A) are complete prefix codes, equal a second
/// transcription of the spec's tables, and decode what they encode; spectral books 10 and 11
/// equal an independent copy (FFmpeg `aactab.c`).
@Suite struct SBRHuffmanTableTests {
    static let names = ["t_huffman_env_1_5dB", "f_huffman_env_1_5dB", "t_huffman_env_bal_1_5dB", "f_huffman_env_bal_1_5dB",
                        "t_huffman_env_3_0dB", "f_huffman_env_3_0dB", "t_huffman_env_bal_3_0dB", "f_huffman_env_bal_3_0dB",
                        "t_huffman_noise_3_0dB", "t_huffman_noise_bal_3_0dB"]

    @Test func sizesAndLAVs() {
        #expect(SBRHuffmanTables.all.map(\.codebook.codes.count) == [121, 121, 49, 49, 63, 63, 25, 25, 63, 25])
        #expect(SBRHuffmanTables.all.map(\.largestAbsoluteValue) == [60, 60, 24, 24, 31, 31, 12, 12, 31, 12])
        #expect(SBRHuffmanTables.all.map(\.codebook.maximumLength) == [19, 20, 17, 19, 19, 20, 14, 14, 14, 8])
    }

    /// Prefix-free (no codeword begins another) and complete (Kraft sum exactly 1).
    @Test(arguments: 0..<10)
    func prefixFreeAndComplete(table index: Int) {
        let book = SBRHuffmanTables.all[index].codebook
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

    /// The canonical code rebuilt from the (symbol, length) list equals the table.
    @Test(arguments: 0..<10)
    func equalsCanonicalTranscription(table index: Int) {
        let book = SBRHuffmanTables.all[index].codebook
        let pairs = Self.canonical[index]
        #expect(pairs.count == book.codes.count)
        #expect(Set(pairs.map(\.symbol)) == Set(book.codes.indices))
        var code: UInt64 = 0   // left-aligned in 32 bits, counting up in list order
        for (symbol, length) in pairs {
            #expect(book.lengths[symbol] == UInt8(length), "\(Self.names[index]) symbol \(symbol) length")
            #expect(UInt64(book.codes[symbol]) == code >> (32 - UInt64(length)), "\(Self.names[index]) symbol \(symbol) code")
            code += 1 << (32 - UInt64(length))
        }
        #expect(code == 1 << 32)
    }

    /// Every delta encodes and decodes to itself; a delta beyond the LAV is a typed error.
    @Test(arguments: 0..<10)
    func deltasRoundTrip(table index: Int) throws {
        let table = SBRHuffmanTables.all[index]
        var writer = BitWriter()
        for delta in table.deltas { try table.encode(delta, to: &writer, structure: "test") }
        var reader = BitReader(writer.bytes)
        for delta in table.deltas { #expect(try table.decode(from: &reader, structure: "test") == delta) }
        #expect(throws: AACBitstreamError.self) { try table.encode(table.largestAbsoluteValue + 1, to: &writer, structure: "test") }
        #expect(table.bitLength(of: -table.largestAbsoluteValue - 1) == nil)
        #expect(table.bitLength(of: 0) == 1 || table.bitLength(of: 0) == 2)
    }

    /// Spectral books 10 and 11 equal FFmpeg's `codes10/bits10/codes11/bits11` (`aactab.c`):
    /// an FNV-1a hash over (code high byte, code low byte, length) per index, computed from
    /// that independent copy, and spot values.
    @Test func spectralBooks10And11MatchAnIndependentCopy() {
        func fnv(_ book: HuffmanCodebook) -> UInt64 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for (code, length) in zip(book.codes, book.lengths) {
                for byte in [UInt8(code >> 8 & 0xFF), UInt8(code & 0xFF), length] {
                    hash ^= UInt64(byte)
                    hash = hash &* 0x100_0000_01b3
                }
            }
            return hash
        }
        #expect(fnv(HuffmanCodebook.spectral10) == 0x4178_3d71_2e25_4497)
        #expect(fnv(HuffmanCodebook.spectral11) == 0x85d0_8b6a_45ef_ae9e)
        #expect(HuffmanCodebook.spectral10.lengths.map(Int.init).reduce(0, +) == 1482)
        #expect(HuffmanCodebook.spectral11.lengths.map(Int.init).reduce(0, +) == 2654)
        #expect(HuffmanCodebook.spectral10.codes[0] == 0x022 && HuffmanCodebook.spectral10.lengths[0] == 6)
        #expect(HuffmanCodebook.spectral10.codes[14] == 0x000 && HuffmanCodebook.spectral10.lengths[14] == 4)
        #expect(HuffmanCodebook.spectral10.codes[168] == 0xfff && HuffmanCodebook.spectral10.lengths[168] == 12)
        #expect(HuffmanCodebook.spectral11.codes[16] == 0x38e && HuffmanCodebook.spectral11.lengths[16] == 10)
        #expect(HuffmanCodebook.spectral11.codes[272] == 0x1c2 && HuffmanCodebook.spectral11.lengths[272] == 9)
        #expect(HuffmanCodebook.spectral11.codes[288] == 0x004 && HuffmanCodebook.spectral11.lengths[288] == 5)
    }

    /// A second transcription (FFmpeg `aac/aacdec_tab.c` `sbr_huffman_tab`, the spec's tables as
    /// (symbol, length) in canonical order: codewords count up in list order).
    static let canonical: [[(symbol: Int, length: Int)]] = [
        // t_huffman_env_1_5dB
        [
            (60, 2), (59, 2), (61, 3), (58, 3), (62, 4), (57, 4), (63, 5), (56, 5),
            (64, 6), (55, 6), (65, 7), (54, 7), (66, 8), (53, 8), (67, 9), (52, 9),
            (51, 10), (68, 10), (50, 11), (69, 12), (49, 12), (70, 13), (48, 13), (47, 13),
            (71, 14), (46, 14), (72, 14), (45, 14), (44, 15), (73, 15), (41, 16), (42, 16),
            (43, 16), (74, 16), (36, 16), (40, 16), (76, 16), (34, 17), (39, 17), (75, 17),
            (37, 17), (35, 18), (38, 18), (0, 18), (1, 18), (2, 18), (3, 18), (4, 18),
            (5, 18), (6, 19), (7, 19), (8, 19), (9, 19), (10, 19), (11, 19), (12, 19),
            (13, 19), (14, 19), (15, 19), (16, 19), (17, 19), (18, 19), (19, 19), (20, 19),
            (21, 19), (22, 19), (23, 19), (24, 19), (25, 19), (26, 19), (27, 19), (28, 19),
            (29, 19), (30, 19), (31, 19), (32, 19), (33, 19), (77, 19), (78, 19), (79, 19),
            (80, 19), (81, 19), (82, 19), (83, 19), (84, 19), (85, 19), (86, 19), (87, 19),
            (88, 19), (89, 19), (90, 19), (91, 19), (92, 19), (93, 19), (94, 19), (95, 19),
            (96, 19), (97, 19), (98, 19), (99, 19), (100, 19), (101, 19), (102, 19), (103, 19),
            (104, 19), (105, 19), (106, 19), (107, 19), (108, 19), (109, 19), (110, 19), (111, 19),
            (112, 19), (113, 19), (114, 19), (115, 19), (116, 19), (117, 19), (118, 19), (119, 19),
            (120, 19),
        ],
        // f_huffman_env_1_5dB
        [
            (60, 2), (59, 2), (61, 3), (58, 3), (57, 4), (62, 4), (56, 5), (63, 5),
            (55, 6), (64, 6), (54, 7), (65, 8), (53, 8), (66, 8), (52, 9), (67, 9),
            (51, 9), (68, 10), (50, 10), (69, 11), (49, 11), (70, 11), (71, 11), (48, 12),
            (72, 12), (47, 12), (73, 12), (74, 13), (46, 13), (45, 13), (75, 13), (76, 14),
            (77, 14), (44, 14), (43, 15), (42, 15), (41, 16), (78, 16), (79, 16), (40, 16),
            (39, 16), (80, 17), (81, 17), (36, 17), (37, 17), (38, 17), (34, 17), (32, 18),
            (82, 18), (83, 18), (85, 18), (19, 18), (35, 18), (86, 18), (87, 18), (30, 18),
            (33, 18), (84, 18), (88, 18), (104, 18), (9, 19), (14, 19), (16, 19), (17, 19),
            (23, 19), (27, 19), (29, 19), (31, 19), (90, 19), (97, 19), (102, 19), (107, 19),
            (108, 19), (0, 19), (1, 19), (2, 20), (3, 20), (4, 20), (5, 20), (6, 20),
            (7, 20), (8, 20), (10, 20), (11, 20), (12, 20), (13, 20), (15, 20), (18, 20),
            (20, 20), (21, 20), (22, 20), (24, 20), (25, 20), (26, 20), (28, 20), (89, 20),
            (91, 20), (92, 20), (93, 20), (94, 20), (95, 20), (96, 20), (98, 20), (99, 20),
            (100, 20), (101, 20), (103, 20), (105, 20), (106, 20), (109, 20), (110, 20), (111, 20),
            (112, 20), (113, 20), (114, 20), (115, 20), (116, 20), (117, 20), (118, 20), (119, 20),
            (120, 20),
        ],
        // t_huffman_env_bal_1_5dB
        [
            (24, 1), (25, 2), (23, 3), (26, 4), (22, 5), (27, 6), (21, 7), (28, 8),
            (20, 9), (19, 11), (29, 11), (18, 12), (30, 12), (31, 15), (17, 16), (32, 16),
            (0, 16), (1, 16), (2, 16), (3, 16), (4, 16), (5, 16), (6, 16), (7, 16),
            (8, 16), (9, 16), (10, 16), (11, 16), (12, 16), (13, 16), (14, 16), (15, 16),
            (16, 16), (33, 16), (34, 16), (35, 16), (36, 16), (37, 16), (38, 16), (39, 17),
            (40, 17), (41, 17), (42, 17), (43, 17), (44, 17), (45, 17), (46, 17), (47, 17),
            (48, 17),
        ],
        // f_huffman_env_bal_1_5dB
        [
            (24, 1), (23, 2), (25, 3), (22, 4), (26, 5), (27, 6), (21, 7), (20, 8),
            (28, 9), (19, 11), (29, 11), (18, 11), (30, 12), (17, 14), (31, 15), (32, 16),
            (15, 16), (16, 17), (0, 18), (1, 18), (2, 18), (3, 18), (4, 18), (5, 18),
            (6, 18), (7, 18), (8, 18), (9, 18), (10, 18), (11, 18), (12, 18), (13, 18),
            (14, 18), (33, 18), (34, 18), (35, 18), (36, 18), (37, 18), (38, 18), (39, 18),
            (40, 18), (41, 18), (42, 18), (43, 18), (44, 18), (45, 18), (46, 18), (47, 19),
            (48, 19),
        ],
        // t_huffman_env_3_0dB
        [
            (31, 1), (30, 2), (32, 3), (29, 4), (33, 5), (28, 6), (34, 7), (27, 8),
            (35, 9), (26, 11), (36, 11), (25, 12), (24, 13), (37, 13), (23, 14), (38, 14),
            (22, 14), (21, 14), (39, 14), (40, 15), (41, 16), (18, 16), (20, 16), (19, 16),
            (17, 17), (42, 17), (43, 18), (0, 18), (1, 18), (2, 19), (3, 19), (4, 19),
            (5, 19), (6, 19), (7, 19), (8, 19), (9, 19), (10, 19), (11, 19), (12, 19),
            (13, 19), (14, 19), (15, 19), (16, 19), (44, 19), (45, 19), (46, 19), (47, 19),
            (48, 19), (49, 19), (50, 19), (51, 19), (52, 19), (53, 19), (54, 19), (55, 19),
            (56, 19), (57, 19), (58, 19), (59, 19), (60, 19), (61, 19), (62, 19),
        ],
        // f_huffman_env_3_0dB
        [
            (31, 1), (30, 2), (32, 3), (29, 4), (33, 5), (28, 6), (34, 8), (27, 8),
            (35, 9), (26, 9), (36, 10), (25, 10), (37, 11), (24, 11), (38, 12), (23, 12),
            (39, 13), (40, 14), (22, 14), (21, 15), (41, 15), (42, 15), (20, 16), (19, 16),
            (43, 16), (44, 16), (18, 17), (16, 17), (45, 17), (46, 17), (17, 18), (49, 18),
            (13, 18), (7, 18), (12, 18), (47, 18), (48, 18), (9, 19), (10, 19), (15, 19),
            (51, 19), (52, 19), (53, 19), (56, 19), (8, 19), (11, 19), (55, 19), (0, 20),
            (1, 20), (2, 20), (3, 20), (4, 20), (5, 20), (6, 20), (14, 20), (50, 20),
            (54, 20), (57, 20), (58, 20), (59, 20), (60, 20), (61, 20), (62, 20),
        ],
        // t_huffman_env_bal_3_0dB
        [
            (12, 1), (13, 2), (11, 3), (10, 4), (14, 5), (15, 6), (9, 7), (8, 8),
            (16, 9), (7, 12), (0, 13), (1, 13), (2, 13), (3, 13), (4, 13), (5, 13),
            (6, 13), (17, 13), (18, 13), (19, 13), (20, 13), (21, 13), (22, 13), (23, 14),
            (24, 14),
        ],
        // f_huffman_env_bal_3_0dB
        [
            (12, 1), (11, 2), (13, 3), (10, 4), (14, 5), (15, 6), (9, 7), (8, 8),
            (16, 9), (7, 11), (17, 12), (18, 13), (0, 13), (1, 13), (2, 13), (3, 13),
            (4, 13), (5, 14), (6, 14), (19, 14), (20, 14), (21, 14), (22, 14), (23, 14),
            (24, 14),
        ],
        // t_huffman_noise_3_0dB
        [
            (31, 1), (32, 2), (30, 3), (29, 4), (33, 5), (28, 6), (34, 8), (27, 8),
            (35, 10), (26, 11), (36, 13), (42, 13), (0, 13), (1, 13), (2, 13), (3, 13),
            (4, 13), (5, 13), (6, 13), (7, 13), (8, 13), (9, 13), (10, 13), (11, 13),
            (12, 13), (13, 13), (14, 13), (15, 13), (16, 13), (17, 13), (18, 13), (19, 13),
            (20, 13), (21, 13), (22, 13), (23, 13), (24, 13), (25, 13), (37, 13), (38, 13),
            (39, 13), (40, 13), (41, 13), (43, 13), (44, 13), (45, 13), (46, 13), (47, 13),
            (48, 13), (49, 13), (50, 13), (51, 13), (52, 13), (53, 13), (54, 13), (55, 13),
            (56, 13), (57, 13), (58, 13), (59, 13), (60, 13), (61, 14), (62, 14),
        ],
        // t_huffman_noise_bal_3_0dB
        [
            (12, 1), (11, 2), (13, 3), (10, 5), (14, 6), (0, 8), (1, 8), (2, 8),
            (3, 8), (4, 8), (5, 8), (6, 8), (7, 8), (8, 8), (9, 8), (15, 8),
            (16, 8), (17, 8), (18, 8), (19, 8), (20, 8), (21, 8), (22, 8), (23, 8),
            (24, 8),
        ],
    ]
}
