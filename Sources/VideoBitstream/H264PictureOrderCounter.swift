/// The decoding process for picture order count of ITU-T H.264 8.2.1, for the three
/// `pic_order_cnt_type`s (8.2.1.1 to 8.2.1.3), carried from picture to picture in decoding order.
///
/// Feed it the first slice header of each picture, in decoding order; it returns
/// `TopFieldOrderCnt` and `BottomFieldOrderCnt` and the picture's `PicOrderCnt` (8-1: the smaller
/// of the two for a frame). A picture with `memory_management_control_operation` 5 has its counts
/// rebased to 0 afterwards (8.2.1, `tempPicOrderCnt`), and the next picture's derivation uses the
/// rebased values, as the standard says. Arithmetic wraps rather than traps on hostile values.
///
/// Limitation: frames inferred for gaps in `frame_num` (8.2.5.2) are not synthesised, so a
/// stream with such gaps gets the counts of its coded pictures only.
struct H264PictureOrderCounter {
    /// The result for one picture.
    struct Result: Hashable {
        var top: Int64
        var bottom: Int64
        /// `PicOrderCnt( CurrPic )` (8-1): top for a top field, bottom for a bottom field, the
        /// smaller for a frame; 0 for a picture with MMCO 5, after the rebasing of 8.2.1, which
        /// is the count that orders it against the pictures after it.
        var pictureOrderCount: Int64
    }

    // Type 0 state: the previous reference picture (8.2.1.1).
    private var previousReferenceMsb: Int64 = 0
    private var previousReferenceLsb: Int64 = 0
    // Types 1 and 2 state: the previous picture (8.2.1.2, 8.2.1.3).
    private var previousFrameNumOffset: Int64 = 0
    private var previousFrameNum: Int64 = 0

    /// The counts of the picture whose first slice header is `slice`, in force under `sps`.
    mutating func next(_ slice: H264SliceHeader, sps: H264SequenceParameterSet) -> Result {
        let isReference = slice.nalReferenceIDC != 0
        var top: Int64 = 0
        var bottom: Int64 = 0
        switch sps.picOrderCountType {
        case 0:
            if slice.isIDR {
                previousReferenceMsb = 0
                previousReferenceLsb = 0
            }
            let lsb = Int64(slice.picOrderCountLsb)
            let maxLsb = sps.maxPicOrderCountLsb
            var msb = previousReferenceMsb
            if lsb < previousReferenceLsb, previousReferenceLsb &- lsb >= maxLsb / 2 {
                msb = previousReferenceMsb &+ maxLsb
            } else if lsb > previousReferenceLsb, lsb &- previousReferenceLsb > maxLsb / 2 {
                msb = previousReferenceMsb &- maxLsb
            }
            if !slice.bottomField {
                top = msb &+ lsb
                bottom = slice.fieldPicture ? top : top &+ Int64(slice.deltaPicOrderCountBottom)
            } else {
                bottom = msb &+ lsb
                top = bottom
            }
            if isReference {
                if slice.hasMemoryManagementControlOperation5 {
                    // 8.2.1.1: after an MMCO 5 the previous values are 0 and, unless the picture
                    // is a bottom field, the rebased TopFieldOrderCnt (tempPicOrderCnt, 8.2.1).
                    previousReferenceMsb = 0
                    let rebasedTop = slice.fieldPicture ? 0 : top &- min(top, bottom)
                    previousReferenceLsb = slice.bottomField ? 0 : rebasedTop
                } else {
                    previousReferenceMsb = msb
                    previousReferenceLsb = lsb
                }
            }
        default:
            let frameNum = Int64(slice.frameNum)
            let frameNumOffset: Int64
            if slice.isIDR {
                frameNumOffset = 0
            } else if previousFrameNum > frameNum {
                frameNumOffset = previousFrameNumOffset &+ sps.maxFrameNum
            } else {
                frameNumOffset = previousFrameNumOffset
            }
            if sps.picOrderCountType == 1 {
                (top, bottom) = Self.typeOne(slice, sps: sps, frameNumOffset: frameNumOffset, isReference: isReference)
            } else {
                let temp: Int64 = slice.isIDR ? 0 : (isReference ? 2 &* (frameNumOffset &+ frameNum) : 2 &* (frameNumOffset &+ frameNum) &- 1)
                (top, bottom) = (temp, temp)
            }
            // 8.2.1.2: after an MMCO 5 prevFrameNumOffset is 0; 7.4.3: the picture's frame_num
            // is then inferred to be 0.
            previousFrameNumOffset = slice.hasMemoryManagementControlOperation5 ? 0 : frameNumOffset
            previousFrameNum = slice.hasMemoryManagementControlOperation5 ? 0 : frameNum
        }
        if sps.picOrderCountType == 0 {
            // Types 1 and 2 track the previous picture of any kind; type 0 only reference ones
            // (above). Keep the frame_num history current for a stream that switches SPS.
            previousFrameNum = slice.hasMemoryManagementControlOperation5 ? 0 : Int64(slice.frameNum)
        }
        let count: Int64 = slice.hasMemoryManagementControlOperation5 ? 0 : !slice.fieldPicture ? min(top, bottom) : (slice.bottomField ? bottom : top)
        return Result(top: top, bottom: bottom, pictureOrderCount: count)
    }

    /// 8.2.1.2: `pic_order_cnt_type` 1.
    private static func typeOne(_ slice: H264SliceHeader, sps: H264SequenceParameterSet, frameNumOffset: Int64,
                                isReference: Bool) -> (Int64, Int64) {
        let cycleLength = Int64(sps.offsetsForReferenceFrame.count)
        var absoluteFrameNum: Int64 = cycleLength != 0 ? frameNumOffset &+ Int64(slice.frameNum) : 0
        if !isReference, absoluteFrameNum > 0 { absoluteFrameNum -= 1 }
        var expected: Int64 = 0
        if absoluteFrameNum > 0 {
            let cycleCount = (absoluteFrameNum - 1) / cycleLength
            let frameNumInCycle = Int((absoluteFrameNum - 1) % cycleLength)
            expected = cycleCount &* sps.expectedDeltaPerPicOrderCountCycle
            for index in 0...frameNumInCycle { expected = expected &+ Int64(sps.offsetsForReferenceFrame[index]) }
        }
        if !isReference { expected = expected &+ Int64(sps.offsetForNonReferencePicture) }
        let delta0 = Int64(slice.deltaPicOrderCount[0])
        let delta1 = Int64(slice.deltaPicOrderCount[1])
        if !slice.fieldPicture {
            let top = expected &+ delta0
            return (top, top &+ Int64(sps.offsetForTopToBottomField) &+ delta1)
        } else if !slice.bottomField {
            let top = expected &+ delta0
            return (top, top)
        } else {
            let bottom = expected &+ Int64(sps.offsetForTopToBottomField) &+ delta0
            return (bottom, bottom)
        }
    }
}
