/// One `st_ref_pic_set( stRpsIdx )` of an H.265 SPS (ITU-T H.265 7.3.7, semantics 7.4.8): the
/// delta picture order counts it lists, derived as 7-61 and 7-62 say, so that the next set can
/// be predicted from it. Only the SPS's sets are read (the slice header's own set comes after
/// `slice_pic_order_cnt_lsb`, where reading stops).
struct HEVCShortTermReferencePictureSet {
    /// `DeltaPocS0[ stRpsIdx ]`: the pictures before the current one.
    var negative: [Int] = []
    /// `DeltaPocS1[ stRpsIdx ]`: the pictures after it.
    var positive: [Int] = []

    /// `NumDeltaPocs[ stRpsIdx ]`.
    var count: Int { negative.count + positive.count }

    /// More entries than any decoded picture buffer holds (`sps_max_dec_pic_buffering_minus1`
    /// is at most 15) is malformed.
    static let maximumCount = 16

    /// Reads set `index`, predicted (when `inter_ref_pic_set_prediction_flag` says so) from the
    /// one before it in `previous` (in an SPS `delta_idx_minus1` is absent and inferred 0).
    init(reading r: inout RBSPReader, index: Int, previous: [HEVCShortTermReferencePictureSet]) throws(VideoBitstreamError) {
        let predicted = index != 0 ? try r.flag("inter_ref_pic_set_prediction_flag") : false
        if predicted, let reference = previous.last {
            let sign = try r.flag("delta_rps_sign")
            let magnitude = 1 + (try r.ue("abs_delta_rps_minus1", 0...(1 << 15) - 1))
            let deltaRps = sign ? -magnitude : magnitude
            var used: [Bool] = []
            var useDelta: [Bool] = []
            for _ in 0...reference.count {
                let isUsed = try r.flag("used_by_curr_pic_flag")
                used.append(isUsed)
                useDelta.append(isUsed ? true : try r.flag("use_delta_flag"))
            }
            let negativeCount = reference.negative.count
            // 7-61.
            for j in stride(from: reference.positive.count - 1, through: 0, by: -1) {
                let delta = reference.positive[j] + deltaRps
                if delta < 0, useDelta[negativeCount + j] { negative.append(delta) }
            }
            if deltaRps < 0, useDelta[reference.count] { negative.append(deltaRps) }
            for j in 0..<negativeCount {
                let delta = reference.negative[j] + deltaRps
                if delta < 0, useDelta[j] { negative.append(delta) }
            }
            // 7-62.
            for j in stride(from: negativeCount - 1, through: 0, by: -1) {
                let delta = reference.negative[j] + deltaRps
                if delta > 0, useDelta[j] { positive.append(delta) }
            }
            if deltaRps > 0, useDelta[reference.count] { positive.append(deltaRps) }
            for j in 0..<reference.positive.count {
                let delta = reference.positive[j] + deltaRps
                if delta > 0, useDelta[negativeCount + j] { positive.append(delta) }
            }
        } else {
            let negativeCount = try r.ue("num_negative_pics", 0...Self.maximumCount)
            let positiveCount = try r.ue("num_positive_pics", 0...Self.maximumCount - negativeCount)
            var poc = 0
            for _ in 0..<negativeCount {
                poc -= 1 + (try r.ue("delta_poc_s0_minus1", 0...(1 << 15) - 1))
                negative.append(poc)
                try r.skip(1, "used_by_curr_pic_s0_flag")
            }
            poc = 0
            for _ in 0..<positiveCount {
                poc += 1 + (try r.ue("delta_poc_s1_minus1", 0...(1 << 15) - 1))
                positive.append(poc)
                try r.skip(1, "used_by_curr_pic_s1_flag")
            }
        }
        guard count <= Self.maximumCount else {
            throw r.invalid("NumDeltaPocs of st_ref_pic_set \(index)", count, allowed: "0...\(Self.maximumCount)")
        }
    }
}
