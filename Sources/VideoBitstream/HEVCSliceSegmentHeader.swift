/// The start of an H.265 slice segment header (ITU-T H.265 7.3.6.1, semantics 7.4.7.1): every
/// field up to `slice_pic_order_cnt_lsb`, which is what access unit boundaries (7.4.2.4.4) and
/// picture order count (8.3.1) need. Only the first slice segment of a picture is read that far;
/// for the others `first_slice_segment_in_pic_flag` is enough.
public struct HEVCSliceSegmentHeader: Sendable, Hashable {
    /// `nal_unit_type` of the NAL unit.
    public var nalUnitType: HEVCNALUnitType
    /// `TemporalId` of the NAL unit.
    public var temporalID: UInt8
    /// `first_slice_segment_in_pic_flag`.
    public var firstSliceSegmentInPicture: Bool
    /// `no_output_of_prior_pics_flag`, for IRAP pictures.
    public var noOutputOfPriorPictures: Bool
    /// `slice_pic_parameter_set_id`.
    public var pictureParameterSetID: Int
    /// `slice_type` (0 B, 1 P, 2 I).
    public var sliceType: Int
    /// `pic_output_flag` (1 when absent).
    public var pictureOutput: Bool
    /// `slice_pic_order_cnt_lsb` (0 for IDR pictures, which do not carry it).
    public var picOrderCountLsb: Int

    /// Parses the header of the slice segment `nalUnit`, with the parameter sets in force.
    ///
    /// - Throws: ``VideoBitstreamError/missingParameterSet(kind:id:nalOffset:)`` when the PPS, or
    ///   the SPS it names, has not been seen; ``VideoBitstreamError/truncated(structure:field:nalOffset:_:)``
    ///   or ``VideoBitstreamError/invalidField(structure:field:value:nalOffset:allowed:)``;
    ///   ``VideoBitstreamError/unsupported(feature:nalOffset:)`` for a first slice segment that
    ///   is a dependent one. An IRAP slice segment with `TemporalId` other than 0 (7.4.2.2) is an
    ///   invalid field.
    public init(nalUnit: NALUnit, pictureParameterSets: [Int: HEVCPictureParameterSet],
                sequenceParameterSets: [Int: HEVCSequenceParameterSet]) throws(VideoBitstreamError) {
        guard nalUnit.hevcType.isDefinedSlice else {
            throw .invalidField(structure: "HEVC slice segment header", field: "nal_unit_type", value: Int64(nalUnit.hevcType.rawValue),
                                nalOffset: nalUnit.offset, allowed: "0...9 or 16...21")
        }
        self = try RBSPReader.parse(nalUnit.bytes, headerLength: 2, structure: "HEVC slice segment header", nalOffset: nalUnit.offset) {
            (r: inout RBSPReader) throws(VideoBitstreamError) in
            try Self(reading: &r, nalUnit: nalUnit, pictureParameterSets: pictureParameterSets, sequenceParameterSets: sequenceParameterSets)
        }
    }

    private init(reading r: inout RBSPReader, nalUnit: NALUnit, pictureParameterSets: [Int: HEVCPictureParameterSet],
                 sequenceParameterSets: [Int: HEVCSequenceParameterSet]) throws(VideoBitstreamError) {
        nalUnitType = nalUnit.hevcType
        temporalID = nalUnit.hevcTemporalID
        // 7.4.2.2: the slices of an IRAP picture have TemporalId 0 (picture order count, 8.3.1,
        // takes prevTid0Pic from them).
        if nalUnitType.isIRAP, temporalID != 0 {
            throw r.invalid("TemporalId (nuh_temporal_id_plus1 − 1)", Int(temporalID), allowed: "0 in an IRAP picture")
        }
        firstSliceSegmentInPicture = try r.flag("first_slice_segment_in_pic_flag")
        noOutputOfPriorPictures = nalUnitType.isIRAP ? try r.flag("no_output_of_prior_pics_flag") : false
        pictureParameterSetID = try r.ue("slice_pic_parameter_set_id", 0...63)
        sliceType = 2
        pictureOutput = true
        picOrderCountLsb = 0
        // A later segment of a picture: its address and the rest are of no use here.
        guard firstSliceSegmentInPicture else { return }
        guard let pps = pictureParameterSets[pictureParameterSetID] else {
            throw .missingParameterSet(kind: "PPS", id: pictureParameterSetID, nalOffset: nalUnit.offset)
        }
        guard let sps = sequenceParameterSets[pps.sequenceParameterSetID] else {
            throw .missingParameterSet(kind: "SPS", id: pps.sequenceParameterSetID, nalOffset: nalUnit.offset)
        }
        try r.skip(pps.numberOfExtraSliceHeaderBits, "slice_reserved_flag")
        sliceType = try r.ue("slice_type", 0...2)
        if nalUnitType.isIRAP, sliceType != 2 {
            throw r.invalid("slice_type", sliceType, allowed: "2 (I) in an IRAP picture")
        }
        if pps.outputFlagPresent { pictureOutput = try r.flag("pic_output_flag") }
        if sps.separateColourPlane { try r.skip(2, "colour_plane_id") }
        if !nalUnitType.isIDR {
            picOrderCountLsb = try r.int(sps.log2MaxPicOrderCountLsb, "slice_pic_order_cnt_lsb")
        }
    }
}
