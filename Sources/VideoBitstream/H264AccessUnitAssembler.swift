internal import MediaCore

/// Groups the NAL units of an H.264 stream into access units (ITU-T H.264 7.4.1.2.3) and gives
/// each its picture order count (8.2.1).
///
/// - An access unit ends before the first of these that follows its last VCL NAL unit: an
///   access unit delimiter, SPS, PPS, SEI, a NAL unit of type 14 to 18, or the first VCL NAL unit
///   of a new primary coded picture.
/// - A slice starts a new primary coded picture when it differs from the previous picture's
///   slices in `frame_num`, `pic_parameter_set_id`, `field_pic_flag`, `bottom_field_flag`,
///   `nal_ref_idc` being 0, the picture order count fields of its `pic_order_cnt_type`,
///   `IdrPicFlag` or `idr_pic_id` (7.4.1.2.4), or when it is a primary slice with
///   `first_mb_in_slice` 0 while the picture already has one for its colour plane (a macroblock
///   is coded once per primary picture, so this holds even with arbitrary slice order).
///   Redundant slices (`redundant_pic_cnt` > 0) and data partitions B and C join the picture.
/// - The two fields of a complementary field pair (opposite parity, same `frame_num`, both
///   reference or both not) become one access unit, as an MP4 sample holds a frame or a field
///   pair; its picture order count is the smaller of the two.
struct H264AccessUnitAssembler {
    private var sequenceParameterSets: [Int: H264SequenceParameterSet] = [:]
    private var pictureParameterSets: [Int: H264PictureParameterSet] = [:]
    private var parameterSets = ParameterSetList()
    private var counter = H264PictureOrderCounter()
    private let maximumAccessUnitSize: Int

    /// The picture being assembled.
    private struct Picture {
        var sps: H264SequenceParameterSet
        var firstSlice: H264SliceHeader
        var lastSlice: H264SliceHeader
        var pictureOrderCount: Int64
        var format: VideoFormat
        /// Colour planes whose macroblock 0 a primary slice of this picture has carried.
        var planesWithFirstMacroblock: Set<Int>
    }

    private var data: [UInt8] = []
    private var offset: Int64?
    private var picture: Picture?
    /// A completed field waiting for the other field of its pair.
    private var heldField: (unit: AccessUnit, slice: H264SliceHeader)?
    private var cachedFormat: (version: Int, spsID: Int, format: VideoFormat)?

    /// An assembler that refuses access units larger than `maximumAccessUnitSize` bytes.
    init(maximumAccessUnitSize: Int) {
        self.maximumAccessUnitSize = maximumAccessUnitSize
    }

    /// Takes the next NAL unit in stream order; returns the access units it completes.
    mutating func append(_ unit: NALUnit) throws(VideoBitstreamError) -> [AccessUnit] {
        guard !unit.forbiddenZeroBit else {
            throw .invalidNALUnitHeader(nalOffset: unit.offset, reason: "forbidden_zero_bit is 1")
        }
        let type = unit.h264Type
        var completed: [AccessUnit] = []
        if type.startsAccessUnit, picture != nil { completed += completePicture() }
        switch type {
        case .sequenceParameterSet:
            let sps = try H264SequenceParameterSet(nalUnit: unit)
            sequenceParameterSets[sps.id] = sps
            parameterSets.record(kind: 1, id: sps.id, bytes: unit.bytes)
        case .pictureParameterSet:
            let pps = try H264PictureParameterSet(nalUnit: unit)
            pictureParameterSets[pps.id] = pps
            parameterSets.record(kind: 2, id: pps.id, bytes: unit.bytes)
        case .nonIDRSlice, .partitionA, .idrSlice:
            let slice = try H264SliceHeader(nalUnit: unit, pictureParameterSets: pictureParameterSets,
                                            sequenceParameterSets: sequenceParameterSets)
            if var current = picture {
                if slice.redundantPictureCount > 0 {
                    break
                } else if Self.startsNewPicture(slice, after: current) {
                    completed += completePicture()
                    try beginPicture(slice)
                } else {
                    current.lastSlice = slice
                    if slice.firstMacroblock == 0 { current.planesWithFirstMacroblock.insert(slice.colourPlaneID) }
                    picture = current
                }
            } else {
                try beginPicture(slice)
            }
        case .partitionB, .partitionC:
            guard picture != nil else {
                throw .unsupported(feature: "slice data partition \(type == .partitionB ? "B" : "C") without partition A before it",
                                   nalOffset: unit.offset)
            }
        default:
            break
        }
        if type != .sequenceParameterSet, type != .pictureParameterSet, type != .accessUnitDelimiter {
            if offset == nil { offset = unit.offset }
            let size = data.count + 4 + unit.bytes.count
            guard size <= maximumAccessUnitSize else {
                throw .tooLarge(what: "access unit", size: size, limit: maximumAccessUnitSize, offset: offset ?? unit.offset)
            }
            AccessUnit.appendLengthPrefixed(unit.bytes, to: &data)
        }
        return completed
    }

    /// Completes what is left at the end of the stream.
    mutating func finish() -> [AccessUnit] {
        var completed = picture != nil ? completePicture() : []
        if let held = heldField {
            completed.append(held.unit)
            heldField = nil
        }
        return completed
    }

    /// The parameter sets seen so far, SPSs then PPSs, each in order of first appearance.
    var allParameterSets: [[UInt8]] { parameterSets.allUnits }

    /// 7.4.1.2.4, plus a second macroblock 0 for the same colour plane.
    private static func startsNewPicture(_ slice: H264SliceHeader, after picture: Picture) -> Bool {
        let previous = picture.lastSlice
        if slice.frameNum != previous.frameNum || slice.pictureParameterSetID != previous.pictureParameterSetID { return true }
        if slice.fieldPicture != previous.fieldPicture || slice.bottomField != previous.bottomField { return true }
        if (slice.nalReferenceIDC == 0) != (previous.nalReferenceIDC == 0) { return true }
        if slice.picOrderCountLsb != previous.picOrderCountLsb || slice.deltaPicOrderCountBottom != previous.deltaPicOrderCountBottom { return true }
        if slice.deltaPicOrderCount != previous.deltaPicOrderCount { return true }
        if slice.isIDR != previous.isIDR || (slice.isIDR && slice.idrPictureID != previous.idrPictureID) { return true }
        return slice.firstMacroblock == 0 && picture.planesWithFirstMacroblock.contains(slice.colourPlaneID)
    }

    private mutating func beginPicture(_ slice: H264SliceHeader) throws(VideoBitstreamError) {
        // The header parsed, so its PPS and SPS are there.
        guard let pps = pictureParameterSets[slice.pictureParameterSetID],
              let sps = sequenceParameterSets[pps.sequenceParameterSetID] else { return }
        let pictureFormat = try format(for: sps)
        let count = counter.next(slice, sps: sps)
        picture = Picture(sps: sps, firstSlice: slice, lastSlice: slice, pictureOrderCount: count.pictureOrderCount, format: pictureFormat,
                          planesWithFirstMacroblock: slice.firstMacroblock == 0 ? [slice.colourPlaneID] : [])
    }

    /// Turns the picture being assembled into an access unit, pairing fields.
    private mutating func completePicture() -> [AccessUnit] {
        guard let current = picture else { return [] }
        let slice = current.firstSlice
        let unit = AccessUnit(data: data, offset: offset ?? 0, isSync: slice.isIDR, pictureOrderCount: current.pictureOrderCount,
                              startsSequence: slice.isIDR || slice.hasMemoryManagementControlOperation5,
                              reorderBound: current.sps.maxNumberOfReorderFrames ?? current.sps.maxDecodedFrameBuffering,
                              declaredReorderDepth: current.sps.maxNumberOfReorderFrames,
                              vuiFrameDuration: current.sps.frameDuration, format: current.format)
        data = []
        offset = nil
        picture = nil
        var completed: [AccessUnit] = []
        if let held = heldField {
            heldField = nil
            if slice.fieldPicture, Self.completesPair(held.slice, with: slice) {
                var pair = held.unit
                pair.data.append(contentsOf: unit.data)
                pair.pictureOrderCount = min(pair.pictureOrderCount, unit.pictureOrderCount)
                return [pair]
            }
            completed.append(held.unit)
        }
        if slice.fieldPicture {
            heldField = (unit, slice)
        } else {
            completed.append(unit)
        }
        return completed
    }

    /// Whether `second` is the other field of the pair `first` begins (3.30, 3.29: opposite
    /// parity, same `frame_num`, both reference fields or both non-reference fields; an IDR
    /// picture's second field may be IDR or not, a non-IDR field's may not be IDR).
    private static func completesPair(_ first: H264SliceHeader, with second: H264SliceHeader) -> Bool {
        first.fieldPicture && second.fieldPicture && first.bottomField != second.bottomField
            && first.frameNum == second.frameNum && (first.nalReferenceIDC == 0) == (second.nalReferenceIDC == 0)
            && (first.isIDR || !second.isIDR)
    }

    /// The format under `sps`: size, the parameter sets seen so far and the `avcC` built from
    /// them (rebuilt only when they change).
    private mutating func format(for sps: H264SequenceParameterSet) throws(VideoBitstreamError) -> VideoFormat {
        if let cached = cachedFormat, cached.version == parameterSets.version, cached.spsID == sps.id { return cached.format }
        let units = parameterSets.allUnits
        let record = try DecoderConfiguration.avc(parameterSets: units).serialized()
        let format = VideoFormat(codec: .h264, width: sps.width, height: sps.height, parameterSets: units, configurationRecord: record)
        cachedFormat = (parameterSets.version, sps.id, format)
        return format
    }
}
