/// An H.265 sequence parameter set (ITU-T H.265 7.3.2.2.1, semantics 7.4.3.2.1), parsed through
/// the VUI's `bitstream_restriction` (E.2.1): profile, tier and level, chroma format, picture
/// size and conformance window, bit depths, `log2_max_pic_order_cnt_lsb_minus4`, the sub-layer
/// ordering info, and everything between them and the VUI (scaling lists, PCM, the short-term
/// reference picture sets of 7.3.7 with their inter prediction, long-term pictures).
///
/// The VUI is read best-effort: when it is damaged or cut short, the fields read before the
/// damage are kept and the rest are `nil`, as FFmpeg does, since nothing the slice headers need
/// depends on it.
public struct HEVCSequenceParameterSet: Sendable, Hashable {
    /// `sps_video_parameter_set_id` (0...15).
    public var videoParameterSetID: Int
    /// `sps_max_sub_layers_minus1` + 1 (1...7).
    public var maxSubLayers: Int
    /// `sps_temporal_id_nesting_flag`.
    public var temporalIDNesting: Bool
    /// The general profile, tier and level.
    public var profileTierLevel: HEVCProfileTierLevel
    /// `sps_seq_parameter_set_id` (0...15).
    public var id: Int
    /// `chroma_format_idc` (0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4).
    public var chromaFormatIDC: Int
    /// `separate_colour_plane_flag`.
    public var separateColourPlane: Bool
    /// `pic_width_in_luma_samples` (a multiple of `MinCbSizeY`).
    public var codedWidth: Int
    /// `pic_height_in_luma_samples` (a multiple of `MinCbSizeY`).
    public var codedHeight: Int
    /// `conf_win_left_offset` (0 without `conformance_window_flag`), in chroma units.
    public var conformanceWindowLeft: Int
    /// `conf_win_right_offset`, in chroma units.
    public var conformanceWindowRight: Int
    /// `conf_win_top_offset`, in chroma units.
    public var conformanceWindowTop: Int
    /// `conf_win_bottom_offset`, in chroma units.
    public var conformanceWindowBottom: Int
    /// `BitDepthY` = 8 + `bit_depth_luma_minus8`.
    public var bitDepthLuma: Int
    /// `BitDepthC` = 8 + `bit_depth_chroma_minus8`.
    public var bitDepthChroma: Int
    /// `log2_max_pic_order_cnt_lsb_minus4` + 4 (4...16).
    public var log2MaxPicOrderCountLsb: Int
    /// `sps_max_dec_pic_buffering_minus1[ HighestTid ]` + 1.
    public var maxDecodedPictureBuffering: Int
    /// `sps_max_num_reorder_pics[ HighestTid ]`: at most this many pictures precede any picture
    /// in decoding order and follow it in output order.
    public var maxNumberOfReorderPictures: Int
    /// `MinCbLog2SizeY` = `log2_min_luma_coding_block_size_minus3` + 3.
    public var log2MinCodingBlockSize: Int
    /// `CtbLog2SizeY` = `MinCbLog2SizeY` + `log2_diff_max_min_luma_coding_block_size`.
    public var log2CodingTreeBlockSize: Int
    /// `num_short_term_ref_pic_sets` (0...64).
    public var numberOfShortTermReferencePictureSets: Int
    /// `long_term_ref_pics_present_flag`.
    public var longTermReferencePicturesPresent: Bool
    /// `num_long_term_ref_pics_sps`.
    public var numberOfLongTermReferencePictures: Int
    /// `sps_temporal_mvp_enabled_flag`.
    public var temporalMVPEnabled: Bool
    /// `vui_parameters_present_flag`.
    public var vuiPresent: Bool
    /// The VUI's timing fields (E.2.1), when present.
    public var timing: VideoTimingInfo?
    /// The VUI's `min_spatial_segmentation_idc` (E.2.1 `bitstream_restriction_flag`), when present.
    public var minSpatialSegmentationIDC: Int?

    /// `SubWidthC`, `SubHeightC` (Table 6-1).
    public var chromaSubsampling: (width: Int, height: Int) {
        guard !separateColourPlane else { return (1, 1) }
        return switch chromaFormatIDC {
        case 1: (2, 2)
        case 2: (2, 1)
        default: (1, 1)
        }
    }

    /// The width in luma samples inside the conformance window (7-1).
    public var width: Int { codedWidth - chromaSubsampling.width * (conformanceWindowLeft + conformanceWindowRight) }

    /// The height in luma samples inside the conformance window (7-2).
    public var height: Int { codedHeight - chromaSubsampling.height * (conformanceWindowTop + conformanceWindowBottom) }

    /// `MaxPicOrderCntLsb` (7-8).
    public var maxPicOrderCountLsb: Int64 { Int64(1) << Int64(log2MaxPicOrderCountLsb) }

    /// `PicSizeInCtbsY` (7-10 to 7-19).
    public var pictureSizeInCodingTreeBlocks: Int {
        let size = 1 << log2CodingTreeBlockSize
        return ((codedWidth + size - 1) / size) * ((codedHeight + size - 1) / size)
    }

    /// The picture duration the VUI gives, `num_units_in_tick / time_scale` seconds (E.3.1), as
    /// (value, timescale) reduced; `nil` without timing.
    public var frameDuration: (value: Int64, timescale: Int64)? {
        guard let timing, timing.numUnitsInTick > 0, timing.timeScale > 0 else { return nil }
        return FrameDuration.reduced(Int64(timing.numUnitsInTick), Int64(timing.timeScale))
    }

    /// Parses the SPS NAL unit `nalUnit` (type 33).
    ///
    /// - Throws: ``VideoBitstreamError/truncated(structure:field:nalOffset:_:)`` or
    ///   ``VideoBitstreamError/invalidField(structure:field:value:nalOffset:allowed:)`` with the
    ///   unit's offset when a field before the VUI is missing or out of range;
    ///   ``VideoBitstreamError/unsupported(feature:nalOffset:)`` for a multi-layer SPS
    ///   (`nuh_layer_id` > 0, F.7.3.2.2.1).
    public init(nalUnit: NALUnit) throws(VideoBitstreamError) {
        guard nalUnit.hevcType == .sequenceParameterSet else {
            throw .invalidField(structure: "HEVC SPS", field: "nal_unit_type", value: Int64(nalUnit.hevcType.rawValue),
                                nalOffset: nalUnit.offset, allowed: "33")
        }
        guard nalUnit.hevcLayerID == 0 else {
            throw .unsupported(feature: "SPS of layer \(nalUnit.hevcLayerID) (multi-layer HEVC)", nalOffset: nalUnit.offset)
        }
        self = try RBSPReader.parse(nalUnit.bytes, headerLength: 2, structure: "HEVC SPS", nalOffset: nalUnit.offset) {
            (r: inout RBSPReader) throws(VideoBitstreamError) in try Self(reading: &r)
        }
    }

    private init(reading r: inout RBSPReader) throws(VideoBitstreamError) {
        videoParameterSetID = try r.int(4, "sps_video_parameter_set_id")
        maxSubLayers = 1 + (try r.int(3, "sps_max_sub_layers_minus1"))
        guard maxSubLayers <= 7 else { throw r.invalid("sps_max_sub_layers_minus1", maxSubLayers - 1, allowed: "0...6") }
        temporalIDNesting = try r.flag("sps_temporal_id_nesting_flag")
        profileTierLevel = try HEVCProfileTierLevel(reading: &r, maxNumberOfSubLayersMinus1: maxSubLayers - 1)
        id = try r.ue("sps_seq_parameter_set_id", 0...15)
        chromaFormatIDC = try r.ue("chroma_format_idc", 0...3)
        separateColourPlane = chromaFormatIDC == 3 ? try r.flag("separate_colour_plane_flag") : false
        codedWidth = try r.ue("pic_width_in_luma_samples", 1...65535)
        codedHeight = try r.ue("pic_height_in_luma_samples", 1...65535)
        (conformanceWindowLeft, conformanceWindowRight, conformanceWindowTop, conformanceWindowBottom) = (0, 0, 0, 0)
        if try r.flag("conformance_window_flag") {
            conformanceWindowLeft = try r.ue("conf_win_left_offset")
            conformanceWindowRight = try r.ue("conf_win_right_offset")
            conformanceWindowTop = try r.ue("conf_win_top_offset")
            conformanceWindowBottom = try r.ue("conf_win_bottom_offset")
        }
        // Defaults for what follows, so that the computed properties can be used from here on.
        (bitDepthLuma, bitDepthChroma, log2MaxPicOrderCountLsb, maxDecodedPictureBuffering, maxNumberOfReorderPictures) = (8, 8, 4, 1, 0)
        (log2MinCodingBlockSize, log2CodingTreeBlockSize, numberOfShortTermReferencePictureSets) = (3, 4, 0)
        (longTermReferencePicturesPresent, numberOfLongTermReferencePictures, temporalMVPEnabled) = (false, 0, false)
        (vuiPresent, timing, minSpatialSegmentationIDC) = (false, nil, nil)
        let sub = chromaSubsampling
        guard sub.width * (conformanceWindowLeft + conformanceWindowRight) < codedWidth else {
            throw r.invalid("conf_win_left_offset + conf_win_right_offset", conformanceWindowLeft + conformanceWindowRight,
                            allowed: "less than \(codedWidth / sub.width) (the coded width in chroma units)")
        }
        guard sub.height * (conformanceWindowTop + conformanceWindowBottom) < codedHeight else {
            throw r.invalid("conf_win_top_offset + conf_win_bottom_offset", conformanceWindowTop + conformanceWindowBottom,
                            allowed: "less than \(codedHeight / sub.height) (the coded height in chroma units)")
        }
        bitDepthLuma = 8 + (try r.ue("bit_depth_luma_minus8", 0...8))
        bitDepthChroma = 8 + (try r.ue("bit_depth_chroma_minus8", 0...8))
        log2MaxPicOrderCountLsb = 4 + (try r.ue("log2_max_pic_order_cnt_lsb_minus4", 0...12))
        let orderingInfoForAll = try r.flag("sps_sub_layer_ordering_info_present_flag")
        for _ in (orderingInfoForAll ? 0 : maxSubLayers - 1)..<maxSubLayers {
            maxDecodedPictureBuffering = 1 + (try r.ue("sps_max_dec_pic_buffering_minus1", 0...15))
            maxNumberOfReorderPictures = try r.ue("sps_max_num_reorder_pics", 0...(maxDecodedPictureBuffering - 1))
            _ = try r.ue("sps_max_latency_increase_plus1")
        }
        log2MinCodingBlockSize = 3 + (try r.ue("log2_min_luma_coding_block_size_minus3", 0...3))
        // 7.4.3.2.1: pic_width_in_luma_samples and pic_height_in_luma_samples are multiples of
        // MinCbSizeY (the picture is whole coding blocks).
        let minCodingBlockSize = 1 << log2MinCodingBlockSize
        guard codedWidth % minCodingBlockSize == 0 else {
            throw r.invalid("pic_width_in_luma_samples", codedWidth, allowed: "a multiple of MinCbSizeY (\(minCodingBlockSize))")
        }
        guard codedHeight % minCodingBlockSize == 0 else {
            throw r.invalid("pic_height_in_luma_samples", codedHeight, allowed: "a multiple of MinCbSizeY (\(minCodingBlockSize))")
        }
        log2CodingTreeBlockSize = log2MinCodingBlockSize + (try r.ue("log2_diff_max_min_luma_coding_block_size", 0...3))
        guard log2CodingTreeBlockSize <= 6 else {
            throw r.invalid("CtbLog2SizeY", log2CodingTreeBlockSize, allowed: "4...6")
        }
        let log2MinTransform = 2 + (try r.ue("log2_min_luma_transform_block_size_minus2", 0...3))
        // 7.4.3.2.1: MinTbLog2SizeY < MinCbLog2SizeY (which also keeps the ranges below non-empty).
        guard log2MinTransform < log2MinCodingBlockSize else {
            throw r.invalid("log2_min_luma_transform_block_size_minus2", log2MinTransform - 2,
                            allowed: "0...\(log2MinCodingBlockSize - 3) (MinTbLog2SizeY below MinCbLog2SizeY)")
        }
        _ = try r.ue("log2_diff_max_min_luma_transform_block_size", 0...(5 - log2MinTransform))
        _ = try r.ue("max_transform_hierarchy_depth_inter", 0...(log2CodingTreeBlockSize - log2MinTransform))
        _ = try r.ue("max_transform_hierarchy_depth_intra", 0...(log2CodingTreeBlockSize - log2MinTransform))
        if try r.flag("scaling_list_enabled_flag") {
            if try r.flag("sps_scaling_list_data_present_flag") { try Self.skipScalingListData(&r) }
        }
        try r.skip(2, "amp_enabled_flag, sample_adaptive_offset_enabled_flag")
        if try r.flag("pcm_enabled_flag") {
            try r.skip(8, "pcm_sample_bit_depth_luma_minus1, pcm_sample_bit_depth_chroma_minus1")
            _ = try r.ue("log2_min_pcm_luma_coding_block_size_minus3", 0...2)
            _ = try r.ue("log2_diff_max_min_pcm_luma_coding_block_size", 0...2)
            try r.skip(1, "pcm_loop_filter_disabled_flag")
        }
        numberOfShortTermReferencePictureSets = try r.ue("num_short_term_ref_pic_sets", 0...64)
        var sets: [HEVCShortTermReferencePictureSet] = []
        for index in 0..<numberOfShortTermReferencePictureSets {
            sets.append(try HEVCShortTermReferencePictureSet(reading: &r, index: index, previous: sets))
        }
        longTermReferencePicturesPresent = try r.flag("long_term_ref_pics_present_flag")
        if longTermReferencePicturesPresent {
            numberOfLongTermReferencePictures = try r.ue("num_long_term_ref_pics_sps", 0...32)
            try r.skip(numberOfLongTermReferencePictures * (log2MaxPicOrderCountLsb + 1), "lt_ref_pic_poc_lsb_sps, used_by_curr_pic_lt_sps_flag")
        }
        temporalMVPEnabled = try r.flag("sps_temporal_mvp_enabled_flag")
        try r.skip(1, "strong_intra_smoothing_enabled_flag")
        vuiPresent = try r.flag("vui_parameters_present_flag")
        if vuiPresent {
            // Best effort: a damaged VUI keeps what was read before the damage.
            try? readVUI(&r)
        }
    }

    /// `scaling_list_data( )` (7.3.4): read and dropped.
    private static func skipScalingListData(_ r: inout RBSPReader) throws(VideoBitstreamError) {
        for sizeID in 0..<4 {
            for _ in stride(from: 0, to: 6, by: sizeID == 3 ? 3 : 1) {
                if try !r.flag("scaling_list_pred_mode_flag") {
                    _ = try r.ue("scaling_list_pred_matrix_id_delta", 0...(sizeID == 3 ? 1 : 5))
                } else {
                    let count = min(64, 1 << (4 + (sizeID << 1)))
                    if sizeID > 1 { _ = try r.se("scaling_list_dc_coef_minus8", -7...247) }
                    for _ in 0..<count { _ = try r.se("scaling_list_delta_coef", -128...127) }
                }
            }
        }
    }

    /// `vui_parameters( )` (E.2.1) up to `min_spatial_segmentation_idc`.
    private mutating func readVUI(_ r: inout RBSPReader) throws(VideoBitstreamError) {
        if try r.flag("aspect_ratio_info_present_flag") {
            if try r.u(8, "aspect_ratio_idc") == 255 { try r.skip(32, "sar_width, sar_height") }
        }
        if try r.flag("overscan_info_present_flag") { try r.skip(1, "overscan_appropriate_flag") }
        if try r.flag("video_signal_type_present_flag") {
            try r.skip(4, "video_format, video_full_range_flag")
            if try r.flag("colour_description_present_flag") { try r.skip(24, "colour_primaries, transfer_characteristics, matrix_coeffs") }
        }
        if try r.flag("chroma_loc_info_present_flag") {
            _ = try r.ue("chroma_sample_loc_type_top_field", 0...5)
            _ = try r.ue("chroma_sample_loc_type_bottom_field", 0...5)
        }
        try r.skip(3, "neutral_chroma_indication_flag, field_seq_flag, frame_field_info_present_flag")
        if try r.flag("default_display_window_flag") {
            for name in ["def_disp_win_left_offset", "def_disp_win_right_offset", "def_disp_win_top_offset", "def_disp_win_bottom_offset"] {
                _ = try r.ue(name)
            }
        }
        if try r.flag("vui_timing_info_present_flag") {
            let units = UInt32(try r.u(32, "vui_num_units_in_tick"))
            let scale = UInt32(try r.u(32, "vui_time_scale"))
            timing = VideoTimingInfo(numUnitsInTick: units, timeScale: scale, fixedFrameRate: nil)
            if try r.flag("vui_poc_proportional_to_timing_flag") { _ = try r.ue("vui_num_ticks_poc_diff_one_minus1") }
            if try r.flag("vui_hrd_parameters_present_flag") { try Self.skipHRDParameters(&r, maxSubLayersMinus1: maxSubLayers - 1) }
        }
        if try r.flag("bitstream_restriction_flag") {
            try r.skip(3, "tiles_fixed_structure_flag, motion_vectors_over_pic_boundaries_flag, restricted_ref_pic_lists_flag")
            minSpatialSegmentationIDC = try r.ue("min_spatial_segmentation_idc", 0...4095)
        }
    }

    /// `hrd_parameters( 1, maxNumSubLayersMinus1 )` (E.2.2): read and dropped.
    private static func skipHRDParameters(_ r: inout RBSPReader, maxSubLayersMinus1: Int) throws(VideoBitstreamError) {
        let nal = try r.flag("nal_hrd_parameters_present_flag")
        let vcl = try r.flag("vcl_hrd_parameters_present_flag")
        var subPicture = false
        if nal || vcl {
            subPicture = try r.flag("sub_pic_hrd_params_present_flag")
            if subPicture { try r.skip(8 + 5 + 1 + 5, "tick_divisor_minus2 … dpb_output_delay_du_length_minus1") }
            try r.skip(8, "bit_rate_scale, cpb_size_scale")
            if subPicture { try r.skip(4, "cpb_size_du_scale") }
            try r.skip(15, "initial_cpb_removal_delay_length_minus1 … dpb_output_delay_length_minus1")
        }
        for _ in 0...maxSubLayersMinus1 {
            let fixedGeneral = try r.flag("fixed_pic_rate_general_flag")
            let fixedWithinSequence = fixedGeneral ? true : try r.flag("fixed_pic_rate_within_cvs_flag")
            var lowDelay = false
            if fixedWithinSequence {
                _ = try r.ue("elemental_duration_in_tc_minus1", 0...2047)
            } else {
                lowDelay = try r.flag("low_delay_hrd_flag")
            }
            let count = lowDelay ? 1 : 1 + (try r.ue("cpb_cnt_minus1", 0...31))
            for _ in 0..<((nal ? 1 : 0) + (vcl ? 1 : 0)) {
                for _ in 0..<count {
                    _ = try r.ue("bit_rate_value_minus1")
                    _ = try r.ue("cpb_size_value_minus1")
                    if subPicture {
                        _ = try r.ue("cpb_size_du_value_minus1")
                        _ = try r.ue("bit_rate_du_value_minus1")
                    }
                    try r.skip(1, "cbr_flag")
                }
            }
        }
    }
}
