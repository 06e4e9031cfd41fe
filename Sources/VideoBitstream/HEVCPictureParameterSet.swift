/// An H.265 picture parameter set (ITU-T H.265 7.3.2.3.1, semantics 7.4.3.3.1), parsed through
/// `entropy_coding_sync_enabled_flag`: the fields the slice segment header needs before
/// `slice_pic_order_cnt_lsb`, and the two that give an `hvcC` record its `parallelismType`.
public struct HEVCPictureParameterSet: Sendable, Hashable {
    /// `pps_pic_parameter_set_id` (0...63).
    public var id: Int
    /// `pps_seq_parameter_set_id` (0...15).
    public var sequenceParameterSetID: Int
    /// `dependent_slice_segments_enabled_flag`.
    public var dependentSliceSegmentsEnabled: Bool
    /// `output_flag_present_flag`: slice headers carry `pic_output_flag`.
    public var outputFlagPresent: Bool
    /// `num_extra_slice_header_bits` (0...7).
    public var numberOfExtraSliceHeaderBits: Int
    /// `sign_data_hiding_enabled_flag`.
    public var signDataHidingEnabled: Bool
    /// `cabac_init_present_flag`.
    public var cabacInitPresent: Bool
    /// `num_ref_idx_l0_default_active_minus1` + 1.
    public var defaultActiveReferencesL0: Int
    /// `num_ref_idx_l1_default_active_minus1` + 1.
    public var defaultActiveReferencesL1: Int
    /// `tiles_enabled_flag`.
    public var tilesEnabled: Bool
    /// `entropy_coding_sync_enabled_flag` (wavefront parallel processing).
    public var entropyCodingSyncEnabled: Bool

    /// Parses the PPS NAL unit `nalUnit` (type 34). The fields read do not depend on the SPS.
    ///
    /// - Throws: ``VideoBitstreamError/truncated(structure:field:nalOffset:_:)`` or
    ///   ``VideoBitstreamError/invalidField(structure:field:value:nalOffset:allowed:)`` with the
    ///   unit's offset.
    public init(nalUnit: NALUnit) throws(VideoBitstreamError) {
        guard nalUnit.hevcType == .pictureParameterSet else {
            throw .invalidField(structure: "HEVC PPS", field: "nal_unit_type", value: Int64(nalUnit.hevcType.rawValue),
                                nalOffset: nalUnit.offset, allowed: "34")
        }
        self = try RBSPReader.parse(nalUnit.bytes, headerLength: 2, structure: "HEVC PPS", nalOffset: nalUnit.offset) {
            (r: inout RBSPReader) throws(VideoBitstreamError) in try Self(reading: &r)
        }
    }

    private init(reading r: inout RBSPReader) throws(VideoBitstreamError) {
        id = try r.ue("pps_pic_parameter_set_id", 0...63)
        sequenceParameterSetID = try r.ue("pps_seq_parameter_set_id", 0...15)
        dependentSliceSegmentsEnabled = try r.flag("dependent_slice_segments_enabled_flag")
        outputFlagPresent = try r.flag("output_flag_present_flag")
        numberOfExtraSliceHeaderBits = try r.int(3, "num_extra_slice_header_bits")
        signDataHidingEnabled = try r.flag("sign_data_hiding_enabled_flag")
        cabacInitPresent = try r.flag("cabac_init_present_flag")
        defaultActiveReferencesL0 = 1 + (try r.ue("num_ref_idx_l0_default_active_minus1", 0...14))
        defaultActiveReferencesL1 = 1 + (try r.ue("num_ref_idx_l1_default_active_minus1", 0...14))
        _ = try r.se("init_qp_minus26", -(26 + 6 * 8)...25)
        try r.skip(2, "constrained_intra_pred_flag, transform_skip_enabled_flag")
        if try r.flag("cu_qp_delta_enabled_flag") { _ = try r.ue("diff_cu_qp_delta_depth", 0...3) }
        _ = try r.se("pps_cb_qp_offset", -12...12)
        _ = try r.se("pps_cr_qp_offset", -12...12)
        try r.skip(4, "pps_slice_chroma_qp_offsets_present_flag … transquant_bypass_enabled_flag")
        tilesEnabled = try r.flag("tiles_enabled_flag")
        entropyCodingSyncEnabled = try r.flag("entropy_coding_sync_enabled_flag")
    }
}
