// The ten Huffman tables of SBR (ISO/IEC 14496-3, Annex 4.A, `t_huffman_*` and `f_huffman_*`), as
// (codeword, length) per index; index = delta + LAV. Spec data, transcribed once; `SBRHuffmanTableTests`
// checks each table is prefix-free with a Kraft sum of exactly 1 and equals the canonical code
// rebuilt from a second, independent transcription of (symbol, length) pairs.

/// The Huffman tables of SBR envelope and noise floor data (ISO/IEC 14496-3, Annex 4.A;
/// `sbr_envelope()` and `sbr_noise()` of 4.4.2.8 say which one codes what).
public enum SBRHuffmanTables {
    /// `t_huffman_env_1_5dB` (121 indices, LAV 60): envelope level deltas in time at 1.5 dB resolution.
    public static let envelope1_5dBTime = SBRHuffmanTable(largestAbsoluteValue: 60, codebook: HuffmanCodebook(
        codes: [
        0x3ffd6, 0x3ffd7, 0x3ffd8, 0x3ffd9, 0x3ffda, 0x3ffdb, 0x7ffb8, 0x7ffb9,
        0x7ffba, 0x7ffbb, 0x7ffbc, 0x7ffbd, 0x7ffbe, 0x7ffbf, 0x7ffc0, 0x7ffc1,
        0x7ffc2, 0x7ffc3, 0x7ffc4, 0x7ffc5, 0x7ffc6, 0x7ffc7, 0x7ffc8, 0x7ffc9,
        0x7ffca, 0x7ffcb, 0x7ffcc, 0x7ffcd, 0x7ffce, 0x7ffcf, 0x7ffd0, 0x7ffd1,
        0x7ffd2, 0x7ffd3, 0x1ffe6, 0x3ffd4, 0x0fff0, 0x1ffe9, 0x3ffd5, 0x1ffe7,
        0x0fff1, 0x0ffec, 0x0ffed, 0x0ffee, 0x07ff4, 0x03ff9, 0x03ff7, 0x01ffa,
        0x01ff9, 0x00ffb, 0x007fc, 0x003fc, 0x001fd, 0x000fd, 0x0007d, 0x0003d,
        0x0001d, 0x0000d, 0x00005, 0x00001, 0x00000, 0x00004, 0x0000c, 0x0001c,
        0x0003c, 0x0007c, 0x000fc, 0x001fc, 0x003fd, 0x00ffa, 0x01ff8, 0x03ff6,
        0x03ff8, 0x07ff5, 0x0ffef, 0x1ffe8, 0x0fff2, 0x7ffd4, 0x7ffd5, 0x7ffd6,
        0x7ffd7, 0x7ffd8, 0x7ffd9, 0x7ffda, 0x7ffdb, 0x7ffdc, 0x7ffdd, 0x7ffde,
        0x7ffdf, 0x7ffe0, 0x7ffe1, 0x7ffe2, 0x7ffe3, 0x7ffe4, 0x7ffe5, 0x7ffe6,
        0x7ffe7, 0x7ffe8, 0x7ffe9, 0x7ffea, 0x7ffeb, 0x7ffec, 0x7ffed, 0x7ffee,
        0x7ffef, 0x7fff0, 0x7fff1, 0x7fff2, 0x7fff3, 0x7fff4, 0x7fff5, 0x7fff6,
        0x7fff7, 0x7fff8, 0x7fff9, 0x7fffa, 0x7fffb, 0x7fffc, 0x7fffd, 0x7fffe,
        0x7ffff,
        ],
        lengths: [
        18, 18, 18, 18, 18, 18, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19,
        19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19,
        19, 19, 17, 18, 16, 17, 18, 17, 16, 16, 16, 16, 15, 14, 14, 13,
        13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 2, 3, 4, 5,
        6, 7, 8, 9, 10, 12, 13, 14, 14, 15, 16, 17, 16, 19, 19, 19,
        19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19,
        19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19,
        19, 19, 19, 19, 19, 19, 19, 19, 19,
        ]))

    /// `f_huffman_env_1_5dB` (121 indices, LAV 60): envelope level deltas in frequency at 1.5 dB resolution.
    public static let envelope1_5dBFrequency = SBRHuffmanTable(largestAbsoluteValue: 60, codebook: HuffmanCodebook(
        codes: [
        0x7ffe7, 0x7ffe8, 0xfffd2, 0xfffd3, 0xfffd4, 0xfffd5, 0xfffd6, 0xfffd7,
        0xfffd8, 0x7ffda, 0xfffd9, 0xfffda, 0xfffdb, 0xfffdc, 0x7ffdb, 0xfffdd,
        0x7ffdc, 0x7ffdd, 0xfffde, 0x3ffe4, 0xfffdf, 0xfffe0, 0xfffe1, 0x7ffde,
        0xfffe2, 0xfffe3, 0xfffe4, 0x7ffdf, 0xfffe5, 0x7ffe0, 0x3ffe8, 0x7ffe1,
        0x3ffe0, 0x3ffe9, 0x1ffef, 0x3ffe5, 0x1ffec, 0x1ffed, 0x1ffee, 0x0fff4,
        0x0fff3, 0x0fff0, 0x07ff7, 0x07ff6, 0x03ffa, 0x01ffa, 0x01ff9, 0x00ffa,
        0x00ff8, 0x007f9, 0x003fb, 0x001fc, 0x001fa, 0x000fb, 0x0007c, 0x0003c,
        0x0001c, 0x0000c, 0x00005, 0x00001, 0x00000, 0x00004, 0x0000d, 0x0001d,
        0x0003d, 0x000fa, 0x000fc, 0x001fb, 0x003fa, 0x007f8, 0x007fa, 0x007fb,
        0x00ff9, 0x00ffb, 0x01ff8, 0x01ffb, 0x03ff8, 0x03ff9, 0x0fff1, 0x0fff2,
        0x1ffea, 0x1ffeb, 0x3ffe1, 0x3ffe2, 0x3ffea, 0x3ffe3, 0x3ffe6, 0x3ffe7,
        0x3ffeb, 0xfffe6, 0x7ffe2, 0xfffe7, 0xfffe8, 0xfffe9, 0xfffea, 0xfffeb,
        0xfffec, 0x7ffe3, 0xfffed, 0xfffee, 0xfffef, 0xffff0, 0x7ffe4, 0xffff1,
        0x3ffec, 0xffff2, 0xffff3, 0x7ffe5, 0x7ffe6, 0xffff4, 0xffff5, 0xffff6,
        0xffff7, 0xffff8, 0xffff9, 0xffffa, 0xffffb, 0xffffc, 0xffffd, 0xffffe,
        0xfffff,
        ],
        lengths: [
        19, 19, 20, 20, 20, 20, 20, 20, 20, 19, 20, 20, 20, 20, 19, 20,
        19, 19, 20, 18, 20, 20, 20, 19, 20, 20, 20, 19, 20, 19, 18, 19,
        18, 18, 17, 18, 17, 17, 17, 16, 16, 16, 15, 15, 14, 13, 13, 12,
        12, 11, 10, 9, 9, 8, 7, 6, 5, 4, 3, 2, 2, 3, 4, 5,
        6, 8, 8, 9, 10, 11, 11, 11, 12, 12, 13, 13, 14, 14, 16, 16,
        17, 17, 18, 18, 18, 18, 18, 18, 18, 20, 19, 20, 20, 20, 20, 20,
        20, 19, 20, 20, 20, 20, 19, 20, 18, 20, 20, 19, 19, 20, 20, 20,
        20, 20, 20, 20, 20, 20, 20, 20, 20,
        ]))

    /// `t_huffman_env_bal_1_5dB` (49 indices, LAV 24): envelope balance deltas in time at 1.5 dB resolution (the coupled second channel).
    public static let balance1_5dBTime = SBRHuffmanTable(largestAbsoluteValue: 24, codebook: HuffmanCodebook(
        codes: [
        0x0ffe4, 0x0ffe5, 0x0ffe6, 0x0ffe7, 0x0ffe8, 0x0ffe9, 0x0ffea, 0x0ffeb,
        0x0ffec, 0x0ffed, 0x0ffee, 0x0ffef, 0x0fff0, 0x0fff1, 0x0fff2, 0x0fff3,
        0x0fff4, 0x0ffe2, 0x00ffc, 0x007fc, 0x001fe, 0x0007e, 0x0001e, 0x00006,
        0x00000, 0x00002, 0x0000e, 0x0003e, 0x000fe, 0x007fd, 0x00ffd, 0x07ff0,
        0x0ffe3, 0x0fff5, 0x0fff6, 0x0fff7, 0x0fff8, 0x0fff9, 0x0fffa, 0x1fff6,
        0x1fff7, 0x1fff8, 0x1fff9, 0x1fffa, 0x1fffb, 0x1fffc, 0x1fffd, 0x1fffe,
        0x1ffff,
        ],
        lengths: [
        16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16,
        16, 16, 12, 11, 9, 7, 5, 3, 1, 2, 4, 6, 8, 11, 12, 15,
        16, 16, 16, 16, 16, 16, 16, 17, 17, 17, 17, 17, 17, 17, 17, 17,
        17,
        ]))

    /// `f_huffman_env_bal_1_5dB` (49 indices, LAV 24): envelope balance deltas in frequency at 1.5 dB resolution (the coupled second channel).
    public static let balance1_5dBFrequency = SBRHuffmanTable(largestAbsoluteValue: 24, codebook: HuffmanCodebook(
        codes: [
        0x3ffe2, 0x3ffe3, 0x3ffe4, 0x3ffe5, 0x3ffe6, 0x3ffe7, 0x3ffe8, 0x3ffe9,
        0x3ffea, 0x3ffeb, 0x3ffec, 0x3ffed, 0x3ffee, 0x3ffef, 0x3fff0, 0x0fff7,
        0x1fff0, 0x03ffc, 0x007fe, 0x007fc, 0x000fe, 0x0007e, 0x0000e, 0x00002,
        0x00000, 0x00006, 0x0001e, 0x0003e, 0x001fe, 0x007fd, 0x00ffe, 0x07ffa,
        0x0fff6, 0x3fff1, 0x3fff2, 0x3fff3, 0x3fff4, 0x3fff5, 0x3fff6, 0x3fff7,
        0x3fff8, 0x3fff9, 0x3fffa, 0x3fffb, 0x3fffc, 0x3fffd, 0x3fffe, 0x7fffe,
        0x7ffff,
        ],
        lengths: [
        18, 18, 18, 18, 18, 18, 18, 18, 18, 18, 18, 18, 18, 18, 18, 16,
        17, 14, 11, 11, 8, 7, 4, 2, 1, 3, 5, 6, 9, 11, 12, 15,
        16, 18, 18, 18, 18, 18, 18, 18, 18, 18, 18, 18, 18, 18, 18, 19,
        19,
        ]))

    /// `t_huffman_env_3_0dB` (63 indices, LAV 31): envelope level deltas in time at 3 dB resolution.
    public static let envelope3_0dBTime = SBRHuffmanTable(largestAbsoluteValue: 31, codebook: HuffmanCodebook(
        codes: [
        0x3ffed, 0x3ffee, 0x7ffde, 0x7ffdf, 0x7ffe0, 0x7ffe1, 0x7ffe2, 0x7ffe3,
        0x7ffe4, 0x7ffe5, 0x7ffe6, 0x7ffe7, 0x7ffe8, 0x7ffe9, 0x7ffea, 0x7ffeb,
        0x7ffec, 0x1fff4, 0x0fff7, 0x0fff9, 0x0fff8, 0x03ffb, 0x03ffa, 0x03ff8,
        0x01ffa, 0x00ffc, 0x007fc, 0x000fe, 0x0003e, 0x0000e, 0x00002, 0x00000,
        0x00006, 0x0001e, 0x0007e, 0x001fe, 0x007fd, 0x01ffb, 0x03ff9, 0x03ffc,
        0x07ffa, 0x0fff6, 0x1fff5, 0x3ffec, 0x7ffed, 0x7ffee, 0x7ffef, 0x7fff0,
        0x7fff1, 0x7fff2, 0x7fff3, 0x7fff4, 0x7fff5, 0x7fff6, 0x7fff7, 0x7fff8,
        0x7fff9, 0x7fffa, 0x7fffb, 0x7fffc, 0x7fffd, 0x7fffe, 0x7ffff,
        ],
        lengths: [
        18, 18, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19,
        19, 17, 16, 16, 16, 14, 14, 14, 13, 12, 11, 8, 6, 4, 2, 1,
        3, 5, 7, 9, 11, 13, 14, 14, 15, 16, 17, 18, 19, 19, 19, 19,
        19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19,
        ]))

    /// `f_huffman_env_3_0dB` (63 indices, LAV 31): envelope level deltas in frequency at 3 dB resolution; also the noise floor level deltas in frequency.
    public static let envelope3_0dBFrequency = SBRHuffmanTable(largestAbsoluteValue: 31, codebook: HuffmanCodebook(
        codes: [
        0xffff0, 0xffff1, 0xffff2, 0xffff3, 0xffff4, 0xffff5, 0xffff6, 0x3fff3,
        0x7fff5, 0x7ffee, 0x7ffef, 0x7fff6, 0x3fff4, 0x3fff2, 0xffff7, 0x7fff0,
        0x1fff5, 0x3fff0, 0x1fff4, 0x0fff7, 0x0fff6, 0x07ff8, 0x03ffb, 0x00ffd,
        0x007fd, 0x003fd, 0x001fd, 0x000fd, 0x0003e, 0x0000e, 0x00002, 0x00000,
        0x00006, 0x0001e, 0x000fc, 0x001fc, 0x003fc, 0x007fc, 0x00ffc, 0x01ffc,
        0x03ffa, 0x07ff9, 0x07ffa, 0x0fff8, 0x0fff9, 0x1fff6, 0x1fff7, 0x3fff5,
        0x3fff6, 0x3fff1, 0xffff8, 0x7fff1, 0x7fff2, 0x7fff3, 0xffff9, 0x7fff7,
        0x7fff4, 0xffffa, 0xffffb, 0xffffc, 0xffffd, 0xffffe, 0xfffff,
        ],
        lengths: [
        20, 20, 20, 20, 20, 20, 20, 18, 19, 19, 19, 19, 18, 18, 20, 19,
        17, 18, 17, 16, 16, 15, 14, 12, 11, 10, 9, 8, 6, 4, 2, 1,
        3, 5, 8, 9, 10, 11, 12, 13, 14, 15, 15, 16, 16, 17, 17, 18,
        18, 18, 20, 19, 19, 19, 20, 19, 19, 20, 20, 20, 20, 20, 20,
        ]))

    /// `t_huffman_env_bal_3_0dB` (25 indices, LAV 12): envelope balance deltas in time at 3 dB resolution (the coupled second channel).
    public static let balance3_0dBTime = SBRHuffmanTable(largestAbsoluteValue: 12, codebook: HuffmanCodebook(
        codes: [
        0x1ff2, 0x1ff3, 0x1ff4, 0x1ff5, 0x1ff6, 0x1ff7, 0x1ff8, 0x0ff8,
        0x00fe, 0x007e, 0x000e, 0x0006, 0x0000, 0x0002, 0x001e, 0x003e,
        0x01fe, 0x1ff9, 0x1ffa, 0x1ffb, 0x1ffc, 0x1ffd, 0x1ffe, 0x3ffe,
        0x3fff,
        ],
        lengths: [
        13, 13, 13, 13, 13, 13, 13, 12, 8, 7, 4, 3, 1, 2, 5, 6,
        9, 13, 13, 13, 13, 13, 13, 14, 14,
        ]))

    /// `f_huffman_env_bal_3_0dB` (25 indices, LAV 12): envelope balance deltas in frequency at 3 dB resolution; also the noise floor balance deltas in frequency.
    public static let balance3_0dBFrequency = SBRHuffmanTable(largestAbsoluteValue: 12, codebook: HuffmanCodebook(
        codes: [
        0x1ff7, 0x1ff8, 0x1ff9, 0x1ffa, 0x1ffb, 0x3ff8, 0x3ff9, 0x07fc,
        0x00fe, 0x007e, 0x000e, 0x0002, 0x0000, 0x0006, 0x001e, 0x003e,
        0x01fe, 0x0ffa, 0x1ff6, 0x3ffa, 0x3ffb, 0x3ffc, 0x3ffd, 0x3ffe,
        0x3fff,
        ],
        lengths: [
        13, 13, 13, 13, 13, 14, 14, 11, 8, 7, 4, 2, 1, 3, 5, 6,
        9, 12, 13, 14, 14, 14, 14, 14, 14,
        ]))

    /// `t_huffman_noise_3_0dB` (63 indices, LAV 31): noise floor level deltas in time.
    public static let noiseTime = SBRHuffmanTable(largestAbsoluteValue: 31, codebook: HuffmanCodebook(
        codes: [
        0x1fce, 0x1fcf, 0x1fd0, 0x1fd1, 0x1fd2, 0x1fd3, 0x1fd4, 0x1fd5,
        0x1fd6, 0x1fd7, 0x1fd8, 0x1fd9, 0x1fda, 0x1fdb, 0x1fdc, 0x1fdd,
        0x1fde, 0x1fdf, 0x1fe0, 0x1fe1, 0x1fe2, 0x1fe3, 0x1fe4, 0x1fe5,
        0x1fe6, 0x1fe7, 0x07f2, 0x00fd, 0x003e, 0x000e, 0x0006, 0x0000,
        0x0002, 0x001e, 0x00fc, 0x03f8, 0x1fcc, 0x1fe8, 0x1fe9, 0x1fea,
        0x1feb, 0x1fec, 0x1fcd, 0x1fed, 0x1fee, 0x1fef, 0x1ff0, 0x1ff1,
        0x1ff2, 0x1ff3, 0x1ff4, 0x1ff5, 0x1ff6, 0x1ff7, 0x1ff8, 0x1ff9,
        0x1ffa, 0x1ffb, 0x1ffc, 0x1ffd, 0x1ffe, 0x3ffe, 0x3fff,
        ],
        lengths: [
        13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13,
        13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 11, 8, 6, 4, 3, 1,
        2, 5, 8, 10, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13,
        13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 14, 14,
        ]))

    /// `t_huffman_noise_bal_3_0dB` (25 indices, LAV 12): noise floor balance deltas in time (the coupled second channel).
    public static let noiseBalanceTime = SBRHuffmanTable(largestAbsoluteValue: 12, codebook: HuffmanCodebook(
        codes: [
        0x00ec, 0x00ed, 0x00ee, 0x00ef, 0x00f0, 0x00f1, 0x00f2, 0x00f3,
        0x00f4, 0x00f5, 0x001c, 0x0002, 0x0000, 0x0006, 0x003a, 0x00f6,
        0x00f7, 0x00f8, 0x00f9, 0x00fa, 0x00fb, 0x00fc, 0x00fd, 0x00fe,
        0x00ff,
        ],
        lengths: [
        8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 5, 2, 1, 3, 6, 8,
        8, 8, 8, 8, 8, 8, 8, 8, 8,
        ]))

    /// All ten, in the order of Annex 4.A (and of FFmpeg's `vlc_sbr_lav`).
    public static let all: [SBRHuffmanTable] = [
        envelope1_5dBTime, envelope1_5dBFrequency, balance1_5dBTime, balance1_5dBFrequency, envelope3_0dBTime,
        envelope3_0dBFrequency, balance3_0dBTime, balance3_0dBFrequency, noiseTime, noiseBalanceTime,
    ]
}
