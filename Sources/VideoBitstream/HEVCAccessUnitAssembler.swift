internal import MediaCore

/// Groups the NAL units of an H.265 stream into access units (ITU-T H.265 7.4.2.4.4) and gives
/// each its picture order count (8.3.1).
///
/// - A slice segment with `first_slice_segment_in_pic_flag` 1 starts a new picture.
/// - An access unit ends before the first of these that follows its last VCL NAL unit: a VPS,
///   SPS, PPS, access unit delimiter, prefix SEI, or a NAL unit of type 41 to 44 or 48 to 55.
///   End of sequence, end of bitstream, filler data and suffix SEI stay with the picture before.
/// - `NoRaslOutputFlag` (8.1.3) is 1 for IDR and BLA pictures, and for a CRA picture that is the
///   first of the stream or follows an end of sequence NAL unit.
///
/// The stream must be single-layer: NAL units with `nuh_layer_id` > 0 are carried in the access
/// unit they fall in but do not start pictures, and their parameter sets are not recorded.
struct HEVCAccessUnitAssembler {
    private var videoParameterSets: [Int: HEVCVideoParameterSet] = [:]
    private var sequenceParameterSets: [Int: HEVCSequenceParameterSet] = [:]
    private var pictureParameterSets: [Int: HEVCPictureParameterSet] = [:]
    private var parameterSets = ParameterSetList()
    private var counter = HEVCPictureOrderCounter()
    private let maximumAccessUnitSize: Int

    /// The picture being assembled.
    private struct Picture {
        var sps: HEVCSequenceParameterSet
        var slice: HEVCSliceSegmentHeader
        var pictureOrderCount: Int64
        var noRaslOutputFlag: Bool
        var format: VideoFormat
    }

    private var data: [UInt8] = []
    private var offset: Int64?
    private var picture: Picture?
    private var isFirstPicture = true
    private var followsEndOfSequence = false
    private var cachedFormat: (version: Int, spsID: Int, format: VideoFormat)?

    /// An assembler that refuses access units larger than `maximumAccessUnitSize` bytes.
    init(maximumAccessUnitSize: Int) {
        self.maximumAccessUnitSize = maximumAccessUnitSize
    }

    /// Takes the next NAL unit in stream order; returns the access units it completes.
    mutating func append(_ unit: NALUnit) throws(VideoBitstreamError) -> [AccessUnit] {
        guard unit.bytes.count >= 2 else {
            throw .invalidNALUnitHeader(nalOffset: unit.offset, reason: "\(unit.bytes.count)-byte NAL unit, shorter than the 2-byte HEVC header")
        }
        guard !unit.forbiddenZeroBit else {
            throw .invalidNALUnitHeader(nalOffset: unit.offset, reason: "forbidden_zero_bit is 1")
        }
        guard unit.bytes[1] & 0x07 != 0 else {
            throw .invalidNALUnitHeader(nalOffset: unit.offset, reason: "nuh_temporal_id_plus1 is 0")
        }
        let type = unit.hevcType
        let isBaseLayer = unit.hevcLayerID == 0
        var completed: [AccessUnit] = []
        if type.startsAccessUnit, picture != nil { completed += completePicture() }
        switch type {
        case .videoParameterSet where isBaseLayer:
            let vps = try HEVCVideoParameterSet(nalUnit: unit)
            videoParameterSets[vps.id] = vps
            parameterSets.record(kind: 0, id: vps.id, bytes: unit.bytes)
        case .sequenceParameterSet where isBaseLayer:
            let sps = try HEVCSequenceParameterSet(nalUnit: unit)
            sequenceParameterSets[sps.id] = sps
            parameterSets.record(kind: 1, id: sps.id, bytes: unit.bytes)
        case .pictureParameterSet where isBaseLayer:
            let pps = try HEVCPictureParameterSet(nalUnit: unit)
            pictureParameterSets[pps.id] = pps
            parameterSets.record(kind: 2, id: pps.id, bytes: unit.bytes)
        case .endOfSequence:
            followsEndOfSequence = true
        default:
            if type.isDefinedSlice, isBaseLayer {
                let slice = try HEVCSliceSegmentHeader(nalUnit: unit, pictureParameterSets: pictureParameterSets,
                                                       sequenceParameterSets: sequenceParameterSets)
                if slice.firstSliceSegmentInPicture {
                    if picture != nil { completed += completePicture() }
                    try beginPicture(slice, offset: unit.offset)
                } else if picture == nil {
                    throw .unsupported(feature: "a slice segment that is not the first of its picture, with no first segment before it "
                                       + "(a stream that starts inside a picture)", nalOffset: unit.offset)
                }
            }
        }
        if type != .videoParameterSet, type != .sequenceParameterSet, type != .pictureParameterSet, type != .accessUnitDelimiter {
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
        picture != nil ? completePicture() : []
    }

    /// The parameter sets seen so far: VPSs, SPSs, then PPSs, each in order of first appearance.
    var allParameterSets: [[UInt8]] { parameterSets.allUnits }

    private mutating func beginPicture(_ slice: HEVCSliceSegmentHeader, offset: Int64) throws(VideoBitstreamError) {
        // The header parsed, so its PPS and SPS are there.
        guard let pps = pictureParameterSets[slice.pictureParameterSetID],
              let sps = sequenceParameterSets[pps.sequenceParameterSetID] else { return }
        guard videoParameterSets[sps.videoParameterSetID] != nil else {
            throw .missingParameterSet(kind: "VPS", id: sps.videoParameterSetID, nalOffset: offset)
        }
        let pictureFormat = try format(for: sps)
        let type = slice.nalUnitType
        let noRaslOutputFlag = type.isIDR || type.isBLA || (type.isIRAP && (isFirstPicture || followsEndOfSequence))
        let count = counter.next(slice, sps: sps, noRaslOutputFlag: noRaslOutputFlag)
        picture = Picture(sps: sps, slice: slice, pictureOrderCount: count, noRaslOutputFlag: noRaslOutputFlag, format: pictureFormat)
        isFirstPicture = false
        followsEndOfSequence = false
    }

    private mutating func completePicture() -> [AccessUnit] {
        guard let current = picture else { return [] }
        let type = current.slice.nalUnitType
        let unit = AccessUnit(data: data, offset: offset ?? 0, isSync: type.isIRAP, pictureOrderCount: current.pictureOrderCount,
                              startsSequence: type.isIRAP && current.noRaslOutputFlag,
                              reorderBound: current.sps.maxNumberOfReorderPictures,
                              declaredReorderDepth: current.sps.maxNumberOfReorderPictures,
                              vuiFrameDuration: current.sps.frameDuration, format: current.format)
        data = []
        offset = nil
        picture = nil
        return [unit]
    }

    /// The format under `sps`: size, the parameter sets seen so far and the `hvcC` built from
    /// them, with `array_completeness` 1 since the samples carry no parameter sets (rebuilt only
    /// when they change).
    private mutating func format(for sps: HEVCSequenceParameterSet) throws(VideoBitstreamError) -> VideoFormat {
        if let cached = cachedFormat, cached.version == parameterSets.version, cached.spsID == sps.id { return cached.format }
        let units = parameterSets.allUnits
        let record = try DecoderConfiguration.hevc(parameterSets: units, arrayCompleteness: true).serialized()
        let format = VideoFormat(codec: .hevc, width: sps.width, height: sps.height, parameterSets: units, configurationRecord: record)
        cachedFormat = (parameterSets.version, sps.id, format)
        return format
    }
}
