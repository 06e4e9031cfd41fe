// The six Huffman tables of baseline Parametric Stereo (ISO/IEC 14496-3, Annex 8.B: IID and ICC
// deltas, in frequency and in time), as (codeword, length) per index; index = delta + LAV.
// Spec data, transcribed once (in the index order FFmpeg's `aacpsdata.c` prints them);
// `ParametricStereoHuffmanTableTests` checks each table is prefix-free with a Kraft sum of exactly
// 1 and decodes every codeword to its delta through a second, independent transcription (faad2's
// decode trees in `ps_syntax.c`). The IPD/OPD tables of `ps_extension()` are not here: a
// baseline decoder skips that data by its size.

/// The Huffman tables of `iid_data()` and `icc_data()` (ISO/IEC 14496-3, Annex 8.B; 8.3 says
/// which codes what: `iid_dt`/`icc_dt` choose time or frequency, `iid_mode` the quantiser).
/// They have the shape of the SBR tables: deltas `-LAV...LAV` at index `delta + LAV`.
public enum ParametricStereoHuffmanTables {
    /// IID deltas in frequency, default (coarse) quantisation (29 indices, LAV 14; FFmpeg `huff_iid_df0`, faad2 `f_huff_iid_def`).
    public static let iidCoarseFrequency = SBRHuffmanTable(largestAbsoluteValue: 14, codebook: HuffmanCodebook(
        codes: [
        0x1fffb, 0x1fffc, 0x1fffd, 0x1fffa, 0x0fffc, 0x07ffc, 0x01ffd, 0x003fe,
        0x001fe, 0x0007e, 0x0003c, 0x0001d, 0x0000d, 0x00005, 0x00000, 0x00004,
        0x0000c, 0x0001c, 0x0003d, 0x0003e, 0x000fe, 0x007fe, 0x01ffc, 0x03ffc,
        0x03ffd, 0x07ffd, 0x1fffe, 0x3fffe, 0x3ffff,
        ],
        lengths: [
        17, 17, 17, 17, 16, 15, 13, 10, 9, 7, 6, 5, 4, 3, 1, 3,
        4, 5, 6, 6, 8, 11, 13, 14, 14, 15, 17, 18, 18,
        ]))

    /// IID deltas in time, default (coarse) quantisation (29 indices, LAV 14; FFmpeg `huff_iid_dt0`, faad2 `t_huff_iid_def`).
    public static let iidCoarseTime = SBRHuffmanTable(largestAbsoluteValue: 14, codebook: HuffmanCodebook(
        codes: [
        0x7fff9, 0x7fffa, 0x7fffb, 0xffff8, 0xffff9, 0xffffa, 0x1fffd, 0x07ffe,
        0x00ffe, 0x003fe, 0x000fe, 0x0003e, 0x0000e, 0x00002, 0x00000, 0x00006,
        0x0001e, 0x0007e, 0x001fe, 0x007fe, 0x01ffe, 0x03ffe, 0x1fffc, 0x7fff8,
        0xffffb, 0xffffc, 0xffffd, 0xffffe, 0xfffff,
        ],
        lengths: [
        19, 19, 19, 20, 20, 20, 17, 15, 12, 10, 8, 6, 4, 2, 1, 3,
        5, 7, 9, 11, 13, 14, 17, 19, 20, 20, 20, 20, 20,
        ]))

    /// IID deltas in frequency, fine quantisation (61 indices, LAV 30; FFmpeg `huff_iid_df1`, faad2 `f_huff_iid_fine`).
    public static let iidFineFrequency = SBRHuffmanTable(largestAbsoluteValue: 30, codebook: HuffmanCodebook(
        codes: [
        0x1feb4, 0x1feb5, 0x1fd76, 0x1fd77, 0x1fd74, 0x1fd75, 0x1fe8a, 0x1fe8b,
        0x1fe88, 0x0fe80, 0x1feb6, 0x0fe82, 0x0feb8, 0x07f42, 0x07fae, 0x03faf,
        0x01fd1, 0x01fe9, 0x00fe9, 0x007ea, 0x007fb, 0x003fb, 0x001fb, 0x001ff,
        0x0007c, 0x0003c, 0x0001c, 0x0000c, 0x00000, 0x00001, 0x00001, 0x00002,
        0x00001, 0x0000d, 0x0001d, 0x0003d, 0x0007d, 0x000fc, 0x001fc, 0x003fc,
        0x003f4, 0x007eb, 0x00fea, 0x01fea, 0x01fd6, 0x03fd0, 0x07faf, 0x07f43,
        0x0feb9, 0x0fe83, 0x1feb7, 0x0fe81, 0x1fe89, 0x1fe8e, 0x1fe8f, 0x1fe8c,
        0x1fe8d, 0x1feb2, 0x1feb3, 0x1feb0, 0x1feb1,
        ],
        lengths: [
        18, 18, 18, 18, 18, 18, 18, 18, 18, 17, 18, 17, 17, 16, 16, 15,
        14, 14, 13, 12, 12, 11, 10, 10, 8, 7, 6, 5, 4, 3, 1, 3,
        4, 5, 6, 7, 8, 9, 10, 11, 11, 12, 13, 14, 14, 15, 16, 16,
        17, 17, 18, 17, 18, 18, 18, 18, 18, 18, 18, 18, 18,
        ]))

    /// IID deltas in time, fine quantisation (61 indices, LAV 30; FFmpeg `huff_iid_dt1`, faad2 `t_huff_iid_fine`).
    public static let iidFineTime = SBRHuffmanTable(largestAbsoluteValue: 30, codebook: HuffmanCodebook(
        codes: [
        0x04ed4, 0x04ed5, 0x04ece, 0x04ecf, 0x04ecc, 0x04ed6, 0x04ed8, 0x04f46,
        0x04f60, 0x02718, 0x02719, 0x02764, 0x02765, 0x0276d, 0x027b1, 0x013b7,
        0x013d6, 0x009c7, 0x009e9, 0x009ed, 0x004ee, 0x004f7, 0x00278, 0x00139,
        0x0009a, 0x0009f, 0x00020, 0x00011, 0x0000a, 0x00003, 0x00001, 0x00000,
        0x0000b, 0x00012, 0x00021, 0x0004c, 0x0009b, 0x0013a, 0x00279, 0x00270,
        0x004ef, 0x004e2, 0x009ea, 0x009d8, 0x013d7, 0x013d0, 0x027b2, 0x027a2,
        0x0271a, 0x0271b, 0x04f66, 0x04f67, 0x04f61, 0x04f47, 0x04ed9, 0x04ed7,
        0x04ecd, 0x04ed2, 0x04ed3, 0x04ed0, 0x04ed1,
        ],
        lengths: [
        16, 16, 16, 16, 16, 16, 16, 16, 16, 15, 15, 15, 15, 15, 15, 14,
        14, 13, 13, 13, 12, 12, 11, 10, 9, 9, 7, 6, 5, 3, 1, 2,
        5, 6, 7, 8, 9, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15,
        15, 15, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16,
        ]))

    /// ICC deltas in frequency (15 indices, LAV 7; FFmpeg `huff_icc_df`, faad2 `f_huff_icc`).
    public static let iccFrequency = SBRHuffmanTable(largestAbsoluteValue: 7, codebook: HuffmanCodebook(
        codes: [
        0x03fff, 0x03ffe, 0x00ffe, 0x003fe, 0x0007e, 0x0001e, 0x00006, 0x00000,
        0x00002, 0x0000e, 0x0003e, 0x000fe, 0x001fe, 0x007fe, 0x01ffe,
        ],
        lengths: [
        14, 14, 12, 10, 7, 5, 3, 1, 2, 4, 6, 8, 9, 11, 13,
        ]))

    /// ICC deltas in time (15 indices, LAV 7; FFmpeg `huff_icc_dt`, faad2 `t_huff_icc`).
    public static let iccTime = SBRHuffmanTable(largestAbsoluteValue: 7, codebook: HuffmanCodebook(
        codes: [
        0x03ffe, 0x01ffe, 0x007fe, 0x001fe, 0x0007e, 0x0001e, 0x00006, 0x00000,
        0x00002, 0x0000e, 0x0003e, 0x000fe, 0x003fe, 0x00ffe, 0x03fff,
        ],
        lengths: [
        14, 13, 11, 9, 7, 5, 3, 1, 2, 4, 6, 8, 10, 12, 14,
        ]))

    /// The six tables in the order IID coarse (frequency, time), IID fine (frequency, time), ICC
    /// (frequency, time).
    public static let all: [SBRHuffmanTable] = [iidCoarseFrequency, iidCoarseTime, iidFineFrequency, iidFineTime,
                                                iccFrequency, iccTime]
}
