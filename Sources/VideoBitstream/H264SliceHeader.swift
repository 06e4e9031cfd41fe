/// An H.264 slice header (ITU-T H.264 7.3.3, semantics 7.4.3): every field up to the picture
/// order count fields and `redundant_pic_cnt`, which decide where a picture starts (7.4.1.2.4)
/// and its picture order count (8.2.1), and the `dec_ref_pic_marking( )` of reference pictures
/// (7.3.3.3), read through to learn whether the picture carries
/// `memory_management_control_operation` 5, which resets picture order counting.
public struct H264SliceHeader: Sendable, Hashable {
    /// `nal_unit_type` of the NAL unit (1, 2 or 5).
    public var nalUnitType: H264NALUnitType
    /// `nal_ref_idc` of the NAL unit.
    public var nalReferenceIDC: UInt8
    /// `first_mb_in_slice`.
    public var firstMacroblock: Int
    /// `slice_type` (0...9; `% 5`: 0 P, 1 B, 2 I, 3 SP, 4 SI).
    public var sliceType: Int
    /// `pic_parameter_set_id`.
    public var pictureParameterSetID: Int
    /// `colour_plane_id`, with separate colour planes.
    public var colourPlaneID: Int
    /// `frame_num`.
    public var frameNum: Int
    /// `field_pic_flag`: the picture is a field.
    public var fieldPicture: Bool
    /// `bottom_field_flag`: the field is the bottom field.
    public var bottomField: Bool
    /// `idr_pic_id`, for IDR pictures.
    public var idrPictureID: Int
    /// `pic_order_cnt_lsb`, for `pic_order_cnt_type` 0.
    public var picOrderCountLsb: Int
    /// `delta_pic_order_cnt_bottom`, for `pic_order_cnt_type` 0.
    public var deltaPicOrderCountBottom: Int
    /// `delta_pic_order_cnt[0]` and `[1]`, for `pic_order_cnt_type` 1.
    public var deltaPicOrderCount: [Int]
    /// `redundant_pic_cnt`: 0 for a slice of the primary coded picture.
    public var redundantPictureCount: Int
    /// Whether `dec_ref_pic_marking( )` holds `memory_management_control_operation` 5.
    public var hasMemoryManagementControlOperation5: Bool
    /// `no_output_of_prior_pics_flag`, for IDR pictures.
    public var noOutputOfPriorPictures: Bool

    /// `IdrPicFlag` (7-1).
    public var isIDR: Bool { nalUnitType == .idrSlice }

    /// `slice_type % 5`: 0 P, 1 B, 2 I, 3 SP, 4 SI.
    public var sliceKind: Int { sliceType % 5 }

    /// Parses the header of the slice (or data partition A) `nalUnit`, with the parameter sets in
    /// force.
    ///
    /// - Throws: ``VideoBitstreamError/missingParameterSet(kind:id:nalOffset:)`` when the PPS, or
    ///   the SPS it names, has not been seen; ``VideoBitstreamError/truncated(structure:field:nalOffset:_:)``
    ///   or ``VideoBitstreamError/invalidField(structure:field:value:nalOffset:allowed:)``.
    public init(nalUnit: NALUnit, pictureParameterSets: [Int: H264PictureParameterSet],
                sequenceParameterSets: [Int: H264SequenceParameterSet]) throws(VideoBitstreamError) {
        guard nalUnit.h264Type.hasSliceHeader else {
            throw .invalidField(structure: "H.264 slice header", field: "nal_unit_type", value: Int64(nalUnit.h264Type.rawValue),
                                nalOffset: nalUnit.offset, allowed: "1, 2 or 5")
        }
        self = try RBSPReader.parse(nalUnit.bytes, headerLength: 1, structure: "H.264 slice header", nalOffset: nalUnit.offset) {
            (r: inout RBSPReader) throws(VideoBitstreamError) in
            try Self(reading: &r, nalUnit: nalUnit, pictureParameterSets: pictureParameterSets, sequenceParameterSets: sequenceParameterSets)
        }
    }

    private init(reading r: inout RBSPReader, nalUnit: NALUnit, pictureParameterSets: [Int: H264PictureParameterSet],
                 sequenceParameterSets: [Int: H264SequenceParameterSet]) throws(VideoBitstreamError) {
        nalUnitType = nalUnit.h264Type
        nalReferenceIDC = nalUnit.h264ReferenceIDC
        // 7.4.1: an IDR picture is a reference picture.
        if nalUnitType == .idrSlice, nalReferenceIDC == 0 {
            throw r.invalid("nal_ref_idc", 0, allowed: "1...3 in an IDR picture")
        }
        firstMacroblock = try r.ue("first_mb_in_slice")
        sliceType = try r.ue("slice_type", 0...9)
        pictureParameterSetID = try r.ue("pic_parameter_set_id", 0...255)
        guard let pps = pictureParameterSets[pictureParameterSetID] else {
            throw .missingParameterSet(kind: "PPS", id: pictureParameterSetID, nalOffset: nalUnit.offset)
        }
        guard let sps = sequenceParameterSets[pps.sequenceParameterSetID] else {
            throw .missingParameterSet(kind: "SPS", id: pps.sequenceParameterSetID, nalOffset: nalUnit.offset)
        }
        if nalUnitType == .idrSlice, ![2, 4].contains(sliceType % 5) {
            throw r.invalid("slice_type", sliceType, allowed: "I or SI (2, 4, 7, 9) in an IDR picture")
        }
        colourPlaneID = sps.separateColourPlane ? try r.int(2, "colour_plane_id") : 0
        guard colourPlaneID <= 2 else { throw r.invalid("colour_plane_id", colourPlaneID, allowed: "0...2 (Y, Cb, Cr)") }
        frameNum = try r.int(sps.log2MaxFrameNum, "frame_num")
        // 7.4.3: picture order count types 1 and 2 (8.2.1.2, 8.2.1.3) count from it.
        if nalUnitType == .idrSlice, frameNum != 0 {
            throw r.invalid("frame_num", frameNum, allowed: "0 in an IDR picture")
        }
        fieldPicture = false
        bottomField = false
        if !sps.frameMacroblocksOnly {
            fieldPicture = try r.flag("field_pic_flag")
            if fieldPicture { bottomField = try r.flag("bottom_field_flag") }
        }
        // 7.4.3: first_mb_in_slice < PicSizeInMbs, which counts the macroblocks of one field in a
        // field picture (7-25 to 7-27), or < PicSizeInMbs / 2 (macroblock pairs) with MbaffFrameFlag.
        let pictureSizeInMacroblocks = sps.pictureWidthInMacroblocks * (sps.frameHeightInMacroblocks / (fieldPicture ? 2 : 1))
        let firstMacroblockLimit = sps.macroblockAdaptiveFrameField && !fieldPicture ? pictureSizeInMacroblocks / 2 : pictureSizeInMacroblocks
        guard firstMacroblock < firstMacroblockLimit else {
            throw r.invalid("first_mb_in_slice", firstMacroblock, allowed: "0...\(firstMacroblockLimit - 1)")
        }
        idrPictureID = nalUnitType == .idrSlice ? try r.ue("idr_pic_id", 0...65535) : 0
        picOrderCountLsb = 0
        deltaPicOrderCountBottom = 0
        deltaPicOrderCount = [0, 0]
        if sps.picOrderCountType == 0 {
            picOrderCountLsb = try r.int(sps.log2MaxPicOrderCountLsb, "pic_order_cnt_lsb")
            if pps.bottomFieldPicOrderInFramePresent, !fieldPicture {
                deltaPicOrderCountBottom = try r.se("delta_pic_order_cnt_bottom")
            }
        }
        if sps.picOrderCountType == 1, !sps.deltaPicOrderAlwaysZero {
            deltaPicOrderCount[0] = try r.se("delta_pic_order_cnt[0]")
            if pps.bottomFieldPicOrderInFramePresent, !fieldPicture {
                deltaPicOrderCount[1] = try r.se("delta_pic_order_cnt[1]")
            }
        }
        redundantPictureCount = pps.redundantPictureCountPresent ? try r.ue("redundant_pic_cnt", 0...127) : 0
        hasMemoryManagementControlOperation5 = false
        noOutputOfPriorPictures = false
        // The rest only matters for reference pictures: their marking may hold an MMCO 5.
        guard nalReferenceIDC != 0 else { return }
        let kind = sliceType % 5
        if kind == 1 { try r.skip(1, "direct_spatial_mv_pred_flag") }
        var activeL0 = pps.defaultActiveReferencesL0
        var activeL1 = pps.defaultActiveReferencesL1
        if kind == 0 || kind == 3 || kind == 1 {
            if try r.flag("num_ref_idx_active_override_flag") {
                activeL0 = 1 + (try r.ue("num_ref_idx_l0_active_minus1", 0...31))
                if kind == 1 { activeL1 = 1 + (try r.ue("num_ref_idx_l1_active_minus1", 0...31)) }
            }
        }
        // ref_pic_list_modification( ) (7.3.3.1).
        if kind != 2, kind != 4 {
            try Self.skipReferenceListModification(&r, list: 0)
            if kind == 1 { try Self.skipReferenceListModification(&r, list: 1) }
        }
        // pred_weight_table( ) (7.3.3.2).
        if (pps.weightedPrediction && (kind == 0 || kind == 3)) || (pps.weightedBipredictionIDC == 1 && kind == 1) {
            _ = try r.ue("luma_log2_weight_denom", 0...7)
            let chroma = sps.chromaArrayType != 0
            if chroma { _ = try r.ue("chroma_log2_weight_denom", 0...7) }
            for list in 0..<(kind == 1 ? 2 : 1) {
                for _ in 0..<(list == 0 ? activeL0 : activeL1) {
                    if try r.flag("luma_weight_l\(list)_flag") {
                        _ = try r.se("luma_weight_l\(list)", -128...127)
                        _ = try r.se("luma_offset_l\(list)", -128...127)
                    }
                    if chroma, try r.flag("chroma_weight_l\(list)_flag") {
                        for _ in 0..<2 {
                            _ = try r.se("chroma_weight_l\(list)", -128...127)
                            _ = try r.se("chroma_offset_l\(list)", -128...127)
                        }
                    }
                }
            }
        }
        // dec_ref_pic_marking( ) (7.3.3.3).
        if nalUnitType == .idrSlice {
            noOutputOfPriorPictures = try r.flag("no_output_of_prior_pics_flag")
            try r.skip(1, "long_term_reference_flag")
        } else if try r.flag("adaptive_ref_pic_marking_mode_flag") {
            // Each operation but the last names a picture; more than the DPB can hold is malformed.
            for _ in 0..<(2 * 32 + 8) {
                let operation = try r.ue("memory_management_control_operation", 0...6)
                if operation == 0 { return }
                if operation == 5 { hasMemoryManagementControlOperation5 = true }
                if operation == 1 || operation == 3 { _ = try r.ue("difference_of_pic_nums_minus1") }
                if operation == 2 { _ = try r.ue("long_term_pic_num") }
                if operation == 3 || operation == 6 { _ = try r.ue("long_term_frame_idx", 0...31) }
                if operation == 4 { _ = try r.ue("max_long_term_frame_idx_plus1", 0...32) }
            }
            throw r.invalid("memory_management_control_operation count", 2 * 32 + 8, allowed: "fewer operations before the ending 0")
        }
    }

    /// `ref_pic_list_modification( )` for one list (7.3.3.1): read and dropped.
    private static func skipReferenceListModification(_ r: inout RBSPReader, list: Int) throws(VideoBitstreamError) {
        guard try r.flag("ref_pic_list_modification_flag_l\(list)") else { return }
        // At most one modification per reference index (32) before the ending 3.
        for _ in 0...32 {
            let idc = try r.ue("modification_of_pic_nums_idc", 0...3)
            switch idc {
            case 0, 1: _ = try r.ue("abs_diff_pic_num_minus1")
            case 2: _ = try r.ue("long_term_pic_num")
            default: return
            }
        }
        throw r.invalid("modification_of_pic_nums_idc count", 33, allowed: "at most 32 modifications before the ending 3")
    }
}
