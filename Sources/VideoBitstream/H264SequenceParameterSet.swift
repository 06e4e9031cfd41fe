/// An H.264 sequence parameter set (ITU-T H.264 7.3.2.1.1, semantics 7.4.2.1.1), parsed as far
/// as picture size, picture order count and the VUI's timing and reordering fields.
///
/// Parsing checks every count and range the syntax gives before it is used. The VUI (E.1.1) is
/// read best-effort: when it is damaged or cut short, the fields read before the damage are
/// kept and the rest are `nil`, as FFmpeg does ("overread VUI"), since nothing the picture
/// decoding needs depends on it.
public struct H264SequenceParameterSet: Sendable, Hashable {
    /// `profile_idc` (A.2): 66 Baseline, 77 Main, 88 Extended, 100 High, 110 High 10, 122 High
    /// 4:2:2, 244 High 4:4:4 Predictive, …
    public var profileIDC: UInt8
    /// The byte of `constraint_set0_flag` … `constraint_set5_flag` and `reserved_zero_2bits`
    /// (the `profile_compatibility` of an `avcC`).
    public var constraintFlags: UInt8
    /// `level_idc`: ten times the level (31 for level 3.1).
    public var levelIDC: UInt8
    /// `seq_parameter_set_id` (0...31).
    public var id: Int
    /// `chroma_format_idc` (0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4); 1 when absent.
    public var chromaFormatIDC: Int
    /// `separate_colour_plane_flag`.
    public var separateColourPlane: Bool
    /// `BitDepthY` = 8 + `bit_depth_luma_minus8`.
    public var bitDepthLuma: Int
    /// `BitDepthC` = 8 + `bit_depth_chroma_minus8`.
    public var bitDepthChroma: Int
    /// `seq_scaling_matrix_present_flag`.
    public var scalingMatrixPresent: Bool
    /// `log2_max_frame_num_minus4` + 4 (4...16).
    public var log2MaxFrameNum: Int
    /// `pic_order_cnt_type` (0...2; 8.2.1).
    public var picOrderCountType: Int
    /// `log2_max_pic_order_cnt_lsb_minus4` + 4 (4...16), for type 0.
    public var log2MaxPicOrderCountLsb: Int
    /// `delta_pic_order_always_zero_flag`, for type 1.
    public var deltaPicOrderAlwaysZero: Bool
    /// `offset_for_non_ref_pic`, for type 1.
    public var offsetForNonReferencePicture: Int
    /// `offset_for_top_to_bottom_field`, for type 1.
    public var offsetForTopToBottomField: Int
    /// `offset_for_ref_frame[i]` (`num_ref_frames_in_pic_order_cnt_cycle` of them), for type 1.
    public var offsetsForReferenceFrame: [Int]
    /// `max_num_ref_frames`.
    public var maxNumberOfReferenceFrames: Int
    /// `gaps_in_frame_num_value_allowed_flag`.
    public var gapsInFrameNumAllowed: Bool
    /// `pic_width_in_mbs_minus1` + 1.
    public var pictureWidthInMacroblocks: Int
    /// `pic_height_in_map_units_minus1` + 1.
    public var pictureHeightInMapUnits: Int
    /// `frame_mbs_only_flag`: every picture is a frame of frame macroblocks.
    public var frameMacroblocksOnly: Bool
    /// `mb_adaptive_frame_field_flag`.
    public var macroblockAdaptiveFrameField: Bool
    /// `direct_8x8_inference_flag`.
    public var direct8x8Inference: Bool
    /// `frame_crop_left_offset` (0 without `frame_cropping_flag`), in crop units.
    public var frameCropLeft: Int
    /// `frame_crop_right_offset`, in crop units.
    public var frameCropRight: Int
    /// `frame_crop_top_offset`, in crop units.
    public var frameCropTop: Int
    /// `frame_crop_bottom_offset`, in crop units.
    public var frameCropBottom: Int
    /// `vui_parameters_present_flag`.
    public var vuiPresent: Bool
    /// The VUI's timing fields (E.1.1), when present.
    public var timing: VideoTimingInfo?
    /// The VUI's `max_num_reorder_frames` (E.1.1 `bitstream_restriction_flag`), when present
    /// and within the ranges of E.2.1 (with ``maxDecodedFrameBuffering``).
    public var maxNumberOfReorderFrames: Int?
    /// The VUI's `max_dec_frame_buffering`, when present and within the ranges of E.2.1: at least
    /// `max_num_reorder_frames`, at most 16.
    public var maxDecodedFrameBuffering: Int?

    /// The profiles whose SPS carries `chroma_format_idc`, bit depths and scaling lists (7.3.2.1.1).
    public static let profilesWithChromaInfo: Set<UInt8> = [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135]

    /// `MaxFrameNum` = 2^`log2MaxFrameNum` (7.4.2.1.1).
    public var maxFrameNum: Int64 { Int64(1) << Int64(log2MaxFrameNum) }

    /// `MaxPicOrderCntLsb` = 2^`log2MaxPicOrderCountLsb` (7.4.2.1.1).
    public var maxPicOrderCountLsb: Int64 { Int64(1) << Int64(log2MaxPicOrderCountLsb) }

    /// `ChromaArrayType` (7.4.2.1.1): 0 with separate colour planes, else `chroma_format_idc`.
    public var chromaArrayType: Int { separateColourPlane ? 0 : chromaFormatIDC }

    /// `FrameHeightInMbs` = (2 − `frame_mbs_only_flag`) × `PicHeightInMapUnits`.
    public var frameHeightInMacroblocks: Int { (frameMacroblocksOnly ? 1 : 2) * pictureHeightInMapUnits }

    /// `CropUnitX` and `CropUnitY` (7.4.2.1.1, equations 7-19 to 7-22).
    public var cropUnit: (x: Int, y: Int) {
        let (subWidth, subHeight) = switch chromaArrayType {
        case 1: (2, 2)
        case 2: (2, 1)
        default: (1, 1)
        }
        return (subWidth, subHeight * (frameMacroblocksOnly ? 1 : 2))
    }

    /// The width in luma samples after frame cropping.
    public var width: Int { pictureWidthInMacroblocks * 16 - cropUnit.x * (frameCropLeft + frameCropRight) }

    /// The height in luma samples after frame cropping.
    public var height: Int { frameHeightInMacroblocks * 16 - cropUnit.y * (frameCropTop + frameCropBottom) }

    /// `ExpectedDeltaPerPicOrderCntCycle` (7-12), wrapping rather than trapping on hostile values.
    public var expectedDeltaPerPicOrderCountCycle: Int64 {
        offsetsForReferenceFrame.reduce(Int64(0)) { $0 &+ Int64($1) }
    }

    /// The frame duration the VUI gives, `2 × num_units_in_tick / time_scale` seconds (E.2.1: a
    /// frame lasts two field ticks), as (value, timescale) reduced; `nil` without timing.
    public var frameDuration: (value: Int64, timescale: Int64)? {
        guard let timing, timing.numUnitsInTick > 0, timing.timeScale > 0 else { return nil }
        return FrameDuration.reduced(2 * Int64(timing.numUnitsInTick), Int64(timing.timeScale))
    }

    /// Parses the SPS NAL unit `nalUnit` (type 7).
    ///
    /// - Throws: ``VideoBitstreamError/truncated(structure:field:nalOffset:_:)`` or
    ///   ``VideoBitstreamError/invalidField(structure:field:value:nalOffset:allowed:)`` with the
    ///   unit's offset when a field before the VUI is missing or out of range.
    public init(nalUnit: NALUnit) throws(VideoBitstreamError) {
        guard nalUnit.h264Type == .sequenceParameterSet else {
            throw .invalidField(structure: "H.264 SPS", field: "nal_unit_type", value: Int64(nalUnit.h264Type.rawValue),
                                nalOffset: nalUnit.offset, allowed: "7")
        }
        self = try RBSPReader.parse(nalUnit.bytes, headerLength: 1, structure: "H.264 SPS", nalOffset: nalUnit.offset) {
            (r: inout RBSPReader) throws(VideoBitstreamError) in try Self(reading: &r)
        }
    }

    private init(reading r: inout RBSPReader) throws(VideoBitstreamError) {
        profileIDC = UInt8(try r.u(8, "profile_idc"))
        constraintFlags = UInt8(try r.u(8, "constraint_set flags"))
        levelIDC = UInt8(try r.u(8, "level_idc"))
        id = try r.ue("seq_parameter_set_id", 0...31)
        chromaFormatIDC = 1
        separateColourPlane = false
        bitDepthLuma = 8
        bitDepthChroma = 8
        scalingMatrixPresent = false
        if Self.profilesWithChromaInfo.contains(profileIDC) {
            chromaFormatIDC = try r.ue("chroma_format_idc", 0...3)
            if chromaFormatIDC == 3 { separateColourPlane = try r.flag("separate_colour_plane_flag") }
            bitDepthLuma = 8 + (try r.ue("bit_depth_luma_minus8", 0...6))
            bitDepthChroma = 8 + (try r.ue("bit_depth_chroma_minus8", 0...6))
            _ = try r.flag("qpprime_y_zero_transform_bypass_flag")
            scalingMatrixPresent = try r.flag("seq_scaling_matrix_present_flag")
            if scalingMatrixPresent {
                for index in 0..<(chromaFormatIDC != 3 ? 8 : 12) {
                    if try r.flag("seq_scaling_list_present_flag") { try Self.skipScalingList(&r, size: index < 6 ? 16 : 64) }
                }
            }
        }
        log2MaxFrameNum = 4 + (try r.ue("log2_max_frame_num_minus4", 0...12))
        picOrderCountType = try r.ue("pic_order_cnt_type", 0...2)
        log2MaxPicOrderCountLsb = 4
        deltaPicOrderAlwaysZero = false
        offsetForNonReferencePicture = 0
        offsetForTopToBottomField = 0
        offsetsForReferenceFrame = []
        if picOrderCountType == 0 {
            log2MaxPicOrderCountLsb = 4 + (try r.ue("log2_max_pic_order_cnt_lsb_minus4", 0...12))
        } else if picOrderCountType == 1 {
            deltaPicOrderAlwaysZero = try r.flag("delta_pic_order_always_zero_flag")
            offsetForNonReferencePicture = try r.se("offset_for_non_ref_pic")
            offsetForTopToBottomField = try r.se("offset_for_top_to_bottom_field")
            let count = try r.ue("num_ref_frames_in_pic_order_cnt_cycle", 0...255)
            for _ in 0..<count { offsetsForReferenceFrame.append(try r.se("offset_for_ref_frame")) }
        }
        maxNumberOfReferenceFrames = try r.ue("max_num_ref_frames", 0...16)
        gapsInFrameNumAllowed = try r.flag("gaps_in_frame_num_value_allowed_flag")
        pictureWidthInMacroblocks = 1 + (try r.ue("pic_width_in_mbs_minus1", 0...65535))
        pictureHeightInMapUnits = 1 + (try r.ue("pic_height_in_map_units_minus1", 0...65535))
        frameMacroblocksOnly = try r.flag("frame_mbs_only_flag")
        macroblockAdaptiveFrameField = frameMacroblocksOnly ? false : try r.flag("mb_adaptive_frame_field_flag")
        direct8x8Inference = try r.flag("direct_8x8_inference_flag")
        (frameCropLeft, frameCropRight, frameCropTop, frameCropBottom) = (0, 0, 0, 0)
        if try r.flag("frame_cropping_flag") {
            frameCropLeft = try r.ue("frame_crop_left_offset")
            frameCropRight = try r.ue("frame_crop_right_offset")
            frameCropTop = try r.ue("frame_crop_top_offset")
            frameCropBottom = try r.ue("frame_crop_bottom_offset")
        }
        (vuiPresent, timing, maxNumberOfReorderFrames, maxDecodedFrameBuffering) = (false, nil, nil, nil)
        let unit = cropUnit
        guard unit.x * (frameCropLeft + frameCropRight) < pictureWidthInMacroblocks * 16 else {
            throw r.invalid("frame_crop_left_offset + frame_crop_right_offset", frameCropLeft + frameCropRight,
                            allowed: "less than \(pictureWidthInMacroblocks * 16 / unit.x) (the coded width in crop units)")
        }
        guard unit.y * (frameCropTop + frameCropBottom) < frameHeightInMacroblocks * 16 else {
            throw r.invalid("frame_crop_top_offset + frame_crop_bottom_offset", frameCropTop + frameCropBottom,
                            allowed: "less than \(frameHeightInMacroblocks * 16 / unit.y) (the coded height in crop units)")
        }
        vuiPresent = try r.flag("vui_parameters_present_flag")
        if vuiPresent {
            // Best effort: a damaged VUI keeps what was read before the damage.
            try? readVUI(&r)
        }
    }

    /// `scaling_list( )` (7.3.2.1.1.1): read and dropped.
    static func skipScalingList(_ r: inout RBSPReader, size: Int) throws(VideoBitstreamError) {
        var lastScale = 8
        var nextScale = 8
        for _ in 0..<size {
            if nextScale != 0 {
                let delta = try r.se("delta_scale", -128...127)
                nextScale = (lastScale + delta + 256) % 256
            }
            lastScale = nextScale == 0 ? lastScale : nextScale
        }
    }

    /// `vui_parameters( )` (E.1.1) up to `max_dec_frame_buffering`.
    private mutating func readVUI(_ r: inout RBSPReader) throws(VideoBitstreamError) {
        if try r.flag("aspect_ratio_info_present_flag") {
            if try r.u(8, "aspect_ratio_idc") == 255 { try r.skip(32, "sar_width, sar_height") }
        }
        if try r.flag("overscan_info_present_flag") { try r.skip(1, "overscan_appropriate_flag") }
        if try r.flag("video_signal_type_present_flag") {
            try r.skip(4, "video_format, video_full_range_flag")
            if try r.flag("colour_description_present_flag") { try r.skip(24, "colour_primaries, transfer_characteristics, matrix_coefficients") }
        }
        if try r.flag("chroma_loc_info_present_flag") {
            _ = try r.ue("chroma_sample_loc_type_top_field", 0...5)
            _ = try r.ue("chroma_sample_loc_type_bottom_field", 0...5)
        }
        if try r.flag("timing_info_present_flag") {
            let units = UInt32(try r.u(32, "num_units_in_tick"))
            let scale = UInt32(try r.u(32, "time_scale"))
            let fixed = try r.flag("fixed_frame_rate_flag")
            timing = VideoTimingInfo(numUnitsInTick: units, timeScale: scale, fixedFrameRate: fixed)
        }
        let nalHRD = try r.flag("nal_hrd_parameters_present_flag")
        if nalHRD { try Self.skipHRDParameters(&r) }
        let vclHRD = try r.flag("vcl_hrd_parameters_present_flag")
        if vclHRD { try Self.skipHRDParameters(&r) }
        if nalHRD || vclHRD { try r.skip(1, "low_delay_hrd_flag") }
        try r.skip(1, "pic_struct_present_flag")
        if try r.flag("bitstream_restriction_flag") {
            try r.skip(1, "motion_vectors_over_pic_boundaries_flag")
            _ = try r.ue("max_bytes_per_pic_denom", 0...16)
            _ = try r.ue("max_bits_per_mb_denom", 0...16)
            _ = try r.ue("log2_max_mv_length_horizontal", 0...15)
            _ = try r.ue("log2_max_mv_length_vertical", 0...15)
            // E.2.1: max_num_reorder_frames ≤ max_dec_frame_buffering ≤ MaxDpbFrames (16). Values
            // that break this are damage: both stay nil rather than give presentation order a
            // bound the stream cannot keep. (E.2.1 also wants max_dec_frame_buffering ≥
            // max_num_ref_frames; nothing here depends on that, so it is not enforced.)
            let reorder = try r.ue("max_num_reorder_frames", 0...16)
            let buffering = try r.ue("max_dec_frame_buffering", reorder...16)
            maxNumberOfReorderFrames = reorder
            maxDecodedFrameBuffering = buffering
        }
    }

    /// `hrd_parameters( )` (E.1.2): read and dropped.
    private static func skipHRDParameters(_ r: inout RBSPReader) throws(VideoBitstreamError) {
        let count = 1 + (try r.ue("cpb_cnt_minus1", 0...31))
        try r.skip(8, "bit_rate_scale, cpb_size_scale")
        for _ in 0..<count {
            _ = try r.ue("bit_rate_value_minus1")
            _ = try r.ue("cpb_size_value_minus1")
            try r.skip(1, "cbr_flag")
        }
        try r.skip(20, "initial_cpb_removal_delay_length_minus1 … time_offset_length")
    }
}
