/// An H.264 picture parameter set (ITU-T H.264 7.3.2.2, semantics 7.4.2.2), parsed as far as the
/// slice header needs: up to `redundant_pic_cnt_present_flag` (the optional tail after
/// `more_rbsp_data( )` is not read).
public struct H264PictureParameterSet: Sendable, Hashable {
    /// `pic_parameter_set_id` (0...255).
    public var id: Int
    /// `seq_parameter_set_id` (0...31).
    public var sequenceParameterSetID: Int
    /// `entropy_coding_mode_flag`: CABAC.
    public var entropyCodingMode: Bool
    /// `bottom_field_pic_order_in_frame_present_flag`: frame slices carry
    /// `delta_pic_order_cnt_bottom` / `delta_pic_order_cnt[1]`.
    public var bottomFieldPicOrderInFramePresent: Bool
    /// `num_slice_groups_minus1` + 1 (1...8).
    public var numberOfSliceGroups: Int
    /// `num_ref_idx_l0_default_active_minus1` + 1 (1...32).
    public var defaultActiveReferencesL0: Int
    /// `num_ref_idx_l1_default_active_minus1` + 1 (1...32).
    public var defaultActiveReferencesL1: Int
    /// `weighted_pred_flag`.
    public var weightedPrediction: Bool
    /// `weighted_bipred_idc` (0...2).
    public var weightedBipredictionIDC: Int
    /// `pic_init_qp_minus26` + 26.
    public var initialQP: Int
    /// `deblocking_filter_control_present_flag`.
    public var deblockingFilterControlPresent: Bool
    /// `constrained_intra_pred_flag`.
    public var constrainedIntraPrediction: Bool
    /// `redundant_pic_cnt_present_flag`: slices carry `redundant_pic_cnt`.
    public var redundantPictureCountPresent: Bool

    /// Parses the PPS NAL unit `nalUnit` (type 8). The fields read do not depend on the SPS.
    ///
    /// - Throws: ``VideoBitstreamError/truncated(structure:field:nalOffset:_:)`` or
    ///   ``VideoBitstreamError/invalidField(structure:field:value:nalOffset:allowed:)`` with the
    ///   unit's offset.
    public init(nalUnit: NALUnit) throws(VideoBitstreamError) {
        guard nalUnit.h264Type == .pictureParameterSet else {
            throw .invalidField(structure: "H.264 PPS", field: "nal_unit_type", value: Int64(nalUnit.h264Type.rawValue),
                                nalOffset: nalUnit.offset, allowed: "8")
        }
        self = try RBSPReader.parse(nalUnit.bytes, headerLength: 1, structure: "H.264 PPS", nalOffset: nalUnit.offset) {
            (r: inout RBSPReader) throws(VideoBitstreamError) in try Self(reading: &r)
        }
    }

    private init(reading r: inout RBSPReader) throws(VideoBitstreamError) {
        id = try r.ue("pic_parameter_set_id", 0...255)
        sequenceParameterSetID = try r.ue("seq_parameter_set_id", 0...31)
        entropyCodingMode = try r.flag("entropy_coding_mode_flag")
        bottomFieldPicOrderInFramePresent = try r.flag("bottom_field_pic_order_in_frame_present_flag")
        numberOfSliceGroups = 1 + (try r.ue("num_slice_groups_minus1", 0...7))
        if numberOfSliceGroups > 1 {
            let mapType = try r.ue("slice_group_map_type", 0...6)
            switch mapType {
            case 0:
                for _ in 0..<numberOfSliceGroups { _ = try r.ue("run_length_minus1") }
            case 2:
                for _ in 0..<(numberOfSliceGroups - 1) {
                    _ = try r.ue("top_left")
                    _ = try r.ue("bottom_right")
                }
            case 3, 4, 5:
                try r.skip(1, "slice_group_change_direction_flag")
                _ = try r.ue("slice_group_change_rate_minus1")
            case 6:
                let units = 1 + (try r.ue("pic_size_in_map_units_minus1", 0...(65536 * 65536 - 1)))
                var bitsPerID = 0
                while (1 << bitsPerID) < numberOfSliceGroups { bitsPerID += 1 }
                // One skip for all: the count is checked against what remains before anything moves.
                try r.skip(units * bitsPerID, "slice_group_id")
            default:
                break
            }
        }
        defaultActiveReferencesL0 = 1 + (try r.ue("num_ref_idx_l0_default_active_minus1", 0...31))
        defaultActiveReferencesL1 = 1 + (try r.ue("num_ref_idx_l1_default_active_minus1", 0...31))
        weightedPrediction = try r.flag("weighted_pred_flag")
        weightedBipredictionIDC = try r.int(2, "weighted_bipred_idc")
        guard weightedBipredictionIDC <= 2 else { throw r.invalid("weighted_bipred_idc", weightedBipredictionIDC, allowed: "0...2") }
        initialQP = 26 + (try r.se("pic_init_qp_minus26", -(26 + 6 * 6)...25))
        _ = try r.se("pic_init_qs_minus26", -26...25)
        _ = try r.se("chroma_qp_index_offset", -12...12)
        deblockingFilterControlPresent = try r.flag("deblocking_filter_control_present_flag")
        constrainedIntraPrediction = try r.flag("constrained_intra_pred_flag")
        redundantPictureCountPresent = try r.flag("redundant_pic_cnt_present_flag")
    }
}
