/// An H.265 video parameter set (ITU-T H.265 7.3.2.1, semantics 7.4.3.1), parsed through its
/// `profile_tier_level( )`: what an `hvcC` record takes from it.
public struct HEVCVideoParameterSet: Sendable, Hashable {
    /// `vps_video_parameter_set_id` (0...15).
    public var id: Int
    /// `vps_max_layers_minus1` + 1.
    public var maxLayers: Int
    /// `vps_max_sub_layers_minus1` + 1 (1...7).
    public var maxSubLayers: Int
    /// `vps_temporal_id_nesting_flag`.
    public var temporalIDNesting: Bool
    /// The general profile, tier and level.
    public var profileTierLevel: HEVCProfileTierLevel

    /// Parses the VPS NAL unit `nalUnit` (type 32).
    ///
    /// - Throws: ``VideoBitstreamError/truncated(structure:field:nalOffset:_:)`` or
    ///   ``VideoBitstreamError/invalidField(structure:field:value:nalOffset:allowed:)`` with the
    ///   unit's offset.
    public init(nalUnit: NALUnit) throws(VideoBitstreamError) {
        guard nalUnit.hevcType == .videoParameterSet else {
            throw .invalidField(structure: "HEVC VPS", field: "nal_unit_type", value: Int64(nalUnit.hevcType.rawValue),
                                nalOffset: nalUnit.offset, allowed: "32")
        }
        self = try RBSPReader.parse(nalUnit.bytes, headerLength: 2, structure: "HEVC VPS", nalOffset: nalUnit.offset) {
            (r: inout RBSPReader) throws(VideoBitstreamError) in
            let id = try r.int(4, "vps_video_parameter_set_id")
            try r.skip(2, "vps_base_layer_internal_flag, vps_base_layer_available_flag")
            let layers = 1 + (try r.int(6, "vps_max_layers_minus1"))
            let subLayers = 1 + (try r.int(3, "vps_max_sub_layers_minus1"))
            guard subLayers <= 7 else { throw r.invalid("vps_max_sub_layers_minus1", subLayers - 1, allowed: "0...6") }
            let nesting = try r.flag("vps_temporal_id_nesting_flag")
            try r.skip(16, "vps_reserved_0xffff_16bits")
            let ptl = try HEVCProfileTierLevel(reading: &r, maxNumberOfSubLayersMinus1: subLayers - 1)
            return HEVCVideoParameterSet(id: id, maxLayers: layers, maxSubLayers: subLayers, temporalIDNesting: nesting, profileTierLevel: ptl)
        }
    }

    private init(id: Int, maxLayers: Int, maxSubLayers: Int, temporalIDNesting: Bool, profileTierLevel: HEVCProfileTierLevel) {
        self.id = id
        self.maxLayers = maxLayers
        self.maxSubLayers = maxSubLayers
        self.temporalIDNesting = temporalIDNesting
        self.profileTierLevel = profileTierLevel
    }
}
