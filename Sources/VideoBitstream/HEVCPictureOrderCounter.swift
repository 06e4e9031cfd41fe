/// The decoding process for picture order count of ITU-T H.265 8.3.1, carried from picture to
/// picture in decoding order.
///
/// `PicOrderCntMsb` is 0 for an IRAP picture with `NoRaslOutputFlag` 1 (IDR, BLA, and a CRA that
/// is the first picture of the stream or follows an end of sequence NAL unit, 8.1.3); otherwise
/// it is derived from `prevTid0Pic`, the previous picture in decoding order with `TemporalId` 0
/// that is not a RASL, RADL or sub-layer non-reference picture (8-1). Arithmetic wraps rather
/// than traps on hostile values.
struct HEVCPictureOrderCounter {
    private var previousTid0Lsb: Int64 = 0
    private var previousTid0Msb: Int64 = 0

    /// `PicOrderCntVal` of the picture whose first slice segment header is `slice`, under `sps`;
    /// `noRaslOutputFlag` as 8.1.3 derives it.
    mutating func next(_ slice: HEVCSliceSegmentHeader, sps: HEVCSequenceParameterSet, noRaslOutputFlag: Bool) -> Int64 {
        let lsb = Int64(slice.picOrderCountLsb)
        let maxLsb = sps.maxPicOrderCountLsb
        var msb: Int64
        if slice.nalUnitType.isIRAP, noRaslOutputFlag {
            msb = 0
        } else if lsb < previousTid0Lsb, previousTid0Lsb &- lsb >= maxLsb / 2 {
            msb = previousTid0Msb &+ maxLsb
        } else if lsb > previousTid0Lsb, lsb &- previousTid0Lsb > maxLsb / 2 {
            msb = previousTid0Msb &- maxLsb
        } else {
            msb = previousTid0Msb
        }
        let type = slice.nalUnitType
        if slice.temporalID == 0, !type.isRASL, !type.isRADL, !type.isSubLayerNonReference {
            previousTid0Lsb = lsb
            previousTid0Msb = msb
        }
        return msb &+ lsb
    }
}
