import MediaCore
@testable import VideoBitstream

/// Writes RBSP syntax elements (u(n), ue(v), se(v)) and wraps them as a NAL unit with trailing
/// bits and emulation prevention: the inverse of `RBSPReader`, for hand-made streams.
struct RBSPWriter {
    private var writer = BitWriter()

    mutating func u(_ value: Int, _ bits: Int) { writer.write(UInt64(value), bits: bits) }
    mutating func flag(_ value: Bool) { writer.writeFlag(value) }

    mutating func ue(_ value: Int) {
        let code = UInt64(value + 1)
        let length = 64 - code.leadingZeroBitCount
        writer.write(UInt64(0), bits: length - 1)
        writer.write(code, bits: length)
    }

    mutating func se(_ value: Int) { ue(value > 0 ? 2 * value - 1 : -2 * value) }

    /// The NAL unit: `header` bytes, the RBSP with its stop bit, emulation prevention inserted.
    func nalUnit(header: [UInt8]) -> [UInt8] {
        var copy = writer
        copy.writeFlag(true)
        copy.alignToByte()
        var output = header
        var zeros = 0
        for byte in copy.bytes {
            if zeros >= 2, byte <= 3 {
                output.append(3)
                zeros = 0
            }
            output.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return output
    }
}

/// Hand-made H.264 parameter sets and slice headers (2×2 macroblocks, Main profile, CAVLC).
enum SyntheticH264 {
    /// An SPS with `pic_order_cnt_type` `pocType`: type 0 with 4-bit `pic_order_cnt_lsb`; type 1
    /// with one reference frame per cycle advancing by 6 and non-reference pictures at −4.
    /// With `maxNumberOfReorderFrames`, a VUI carries it in its bitstream restriction.
    static func sps(pocType: Int, frameMacroblocksOnly: Bool = true, maxNumberOfReorderFrames: Int? = nil) -> [UInt8] {
        var w = RBSPWriter()
        w.u(77, 8)
        w.u(0, 8)
        w.u(30, 8)
        w.ue(0)                     // seq_parameter_set_id
        w.ue(0)                     // log2_max_frame_num_minus4: 4-bit frame_num
        w.ue(pocType)
        if pocType == 0 {
            w.ue(0)                 // log2_max_pic_order_cnt_lsb_minus4: 4-bit lsb
        } else if pocType == 1 {
            w.flag(false)           // delta_pic_order_always_zero_flag
            w.se(-4)                // offset_for_non_ref_pic
            w.se(0)                 // offset_for_top_to_bottom_field
            w.ue(1)                 // num_ref_frames_in_pic_order_cnt_cycle
            w.se(6)                 // offset_for_ref_frame[0]
        }
        w.ue(2)                     // max_num_ref_frames
        w.flag(false)               // gaps_in_frame_num_value_allowed_flag
        w.ue(1)                     // pic_width_in_mbs_minus1
        w.ue(1)                     // pic_height_in_map_units_minus1
        w.flag(frameMacroblocksOnly)
        if !frameMacroblocksOnly { w.flag(false) }   // mb_adaptive_frame_field_flag
        w.flag(true)                // direct_8x8_inference_flag
        w.flag(false)               // frame_cropping_flag
        w.flag(maxNumberOfReorderFrames != nil)   // vui_parameters_present_flag
        if let reorder = maxNumberOfReorderFrames {
            for _ in 0..<4 { w.flag(false) }   // aspect ratio, overscan, video signal, chroma location
            for _ in 0..<4 { w.flag(false) }   // timing, NAL HRD, VCL HRD, pic_struct_present_flag
            w.flag(true)            // bitstream_restriction_flag
            w.flag(true)            // motion_vectors_over_pic_boundaries_flag
            w.ue(0)
            w.ue(0)                 // max_bytes_per_pic_denom, max_bits_per_mb_denom
            w.ue(15)
            w.ue(15)                // log2_max_mv_length_horizontal, _vertical
            w.ue(reorder)           // max_num_reorder_frames
            w.ue(2)                 // max_dec_frame_buffering
        }
        return w.nalUnit(header: [0x67])
    }

    static func pps() -> [UInt8] {
        var w = RBSPWriter()
        w.ue(0)                     // pic_parameter_set_id
        w.ue(0)                     // seq_parameter_set_id
        w.flag(false)               // entropy_coding_mode_flag
        w.flag(false)               // bottom_field_pic_order_in_frame_present_flag
        w.ue(0)                     // num_slice_groups_minus1
        w.ue(0)
        w.ue(0)                     // num_ref_idx_l0/l1_default_active_minus1
        w.flag(false)               // weighted_pred_flag
        w.u(0, 2)                   // weighted_bipred_idc
        w.se(0)
        w.se(0)
        w.se(0)                     // pic_init_qp/qs, chroma_qp_index_offset
        w.flag(true)                // deblocking_filter_control_present_flag
        w.flag(false)               // constrained_intra_pred_flag
        w.flag(false)               // redundant_pic_cnt_present_flag
        return w.nalUnit(header: [0x68])
    }

    /// A slice: `kind` 0 P, 1 B, 2 I; `reference` sets nal_ref_idc 2; `idr` makes it type 5.
    static func slice(kind: Int, frameNum: Int, reference: Bool, idr: Bool = false, pocType: Int, pocLsb: Int = 0,
                      delta0: Int = 0, field: (bottom: Bool, present: Bool) = (false, false), mmco5: Bool = false) -> [UInt8] {
        var w = RBSPWriter()
        w.ue(0)                     // first_mb_in_slice
        w.ue(kind + 5)              // slice_type (all slices of the picture alike)
        w.ue(0)                     // pic_parameter_set_id
        w.u(frameNum, 4)
        if field.present {
            w.flag(true)            // field_pic_flag
            w.flag(field.bottom)
        }
        if idr { w.ue(0) }          // idr_pic_id
        if pocType == 0 { w.u(pocLsb, 4) }
        if pocType == 1 { w.se(delta0) }
        if reference {
            if kind == 1 { w.flag(true) }                       // direct_spatial_mv_pred_flag
            if kind != 2 { w.flag(false) }                      // num_ref_idx_active_override_flag
            if kind != 2 { w.flag(false) }                      // ref_pic_list_modification_flag_l0
            if kind == 1 { w.flag(false) }                      // ref_pic_list_modification_flag_l1
            if idr {
                w.flag(false)
                w.flag(false)       // no_output_of_prior_pics_flag, long_term_reference_flag
            } else if mmco5 {
                w.flag(true)        // adaptive_ref_pic_marking_mode_flag
                w.ue(5)
                w.ue(0)
            } else {
                w.flag(false)
            }
        }
        w.u(0x5A, 8)                // stand-in slice data
        let header = UInt8(reference ? 0x40 : 0x00) | (idr ? 5 : 1)
        return w.nalUnit(header: [header])
    }
}
