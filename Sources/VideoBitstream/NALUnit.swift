/// One NAL unit of an Annex B byte stream, as it is in the stream: header and payload, emulation
/// prevention bytes included, start code and trailing zero bytes removed (ITU-T H.264 7.3.1 and
/// B.1, H.265 7.3.1.1 and B.2).
public struct NALUnit: Sendable, Hashable {
    /// The NAL unit's bytes, from its header to its last non-zero byte.
    public var bytes: [UInt8]
    /// Absolute offset of the NAL unit header in the stream (just after the start code).
    public var offset: Int64

    /// A NAL unit of `bytes` found at `offset`.
    public init(bytes: [UInt8], offset: Int64) {
        self.bytes = bytes
        self.offset = offset
    }

    /// H.264 `nal_unit_type` (7.4.1, Table 7-1): the low 5 bits of the first byte.
    public var h264Type: H264NALUnitType { H264NALUnitType(rawValue: (bytes.first ?? 0) & 0x1F) }

    /// H.264 `nal_ref_idc` (7.4.1): non-zero for parts of reference pictures and parameter sets.
    public var h264ReferenceIDC: UInt8 { ((bytes.first ?? 0) >> 5) & 0x03 }

    /// H.265 `nal_unit_type` (7.4.2.2, Table 7-1): bits 1 to 6 of the first byte.
    public var hevcType: HEVCNALUnitType { HEVCNALUnitType(rawValue: ((bytes.first ?? 0) >> 1) & 0x3F) }

    /// H.265 `nuh_layer_id` (7.4.2.2): 0 for the base layer.
    public var hevcLayerID: UInt8 {
        guard bytes.count >= 2 else { return 0 }
        return (bytes[0] & 0x01) << 5 | bytes[1] >> 3
    }

    /// H.265 `TemporalId` = `nuh_temporal_id_plus1` − 1 (7.4.2.2); 0 for a malformed header.
    public var hevcTemporalID: UInt8 {
        guard bytes.count >= 2, bytes[1] & 0x07 != 0 else { return 0 }
        return (bytes[1] & 0x07) - 1
    }

    /// `forbidden_zero_bit` (H.264 7.4.1, H.265 7.4.2.1): must be 0.
    public var forbiddenZeroBit: Bool { (bytes.first ?? 0) & 0x80 != 0 }
}
