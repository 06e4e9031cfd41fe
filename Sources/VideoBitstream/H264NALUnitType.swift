/// H.264 `nal_unit_type` (ITU-T H.264 7.4.1, Table 7-1).
public struct H264NALUnitType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The 5-bit value.
    public var rawValue: UInt8

    /// The type of value `rawValue` (only its low 5 bits are kept).
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x1F }

    /// 1: coded slice of a non-IDR picture.
    public static let nonIDRSlice = H264NALUnitType(rawValue: 1)
    /// 2: coded slice data partition A (carries the slice header).
    public static let partitionA = H264NALUnitType(rawValue: 2)
    /// 3: coded slice data partition B.
    public static let partitionB = H264NALUnitType(rawValue: 3)
    /// 4: coded slice data partition C.
    public static let partitionC = H264NALUnitType(rawValue: 4)
    /// 5: coded slice of an IDR picture.
    public static let idrSlice = H264NALUnitType(rawValue: 5)
    /// 6: supplemental enhancement information (SEI).
    public static let sei = H264NALUnitType(rawValue: 6)
    /// 7: sequence parameter set.
    public static let sequenceParameterSet = H264NALUnitType(rawValue: 7)
    /// 8: picture parameter set.
    public static let pictureParameterSet = H264NALUnitType(rawValue: 8)
    /// 9: access unit delimiter.
    public static let accessUnitDelimiter = H264NALUnitType(rawValue: 9)
    /// 10: end of sequence.
    public static let endOfSequence = H264NALUnitType(rawValue: 10)
    /// 11: end of stream.
    public static let endOfStream = H264NALUnitType(rawValue: 11)
    /// 12: filler data.
    public static let fillerData = H264NALUnitType(rawValue: 12)
    /// 13: sequence parameter set extension.
    public static let sequenceParameterSetExtension = H264NALUnitType(rawValue: 13)

    /// Whether the unit carries a slice header of a primary or redundant picture (1, 2, 5).
    public var hasSliceHeader: Bool { rawValue == 1 || rawValue == 2 || rawValue == 5 }

    /// Whether the unit is a VCL NAL unit of the base layer (1 to 5; Table 7-1, Annex A class).
    public var isVCL: Bool { (1...5).contains(rawValue) }

    /// Whether the unit, when it follows the last VCL NAL unit of a primary coded picture, starts
    /// a new access unit (7.4.1.2.3): AUD, SPS, PPS, SEI and types 14 to 18.
    public var startsAccessUnit: Bool {
        [6, 7, 8, 9].contains(rawValue) || (14...18).contains(rawValue)
    }

    /// A short name (`IDR`, `SPS`, …) or the number.
    public var description: String {
        switch rawValue {
        case 1: "non-IDR slice"
        case 2: "partition A"
        case 3: "partition B"
        case 4: "partition C"
        case 5: "IDR slice"
        case 6: "SEI"
        case 7: "SPS"
        case 8: "PPS"
        case 9: "AUD"
        case 10: "end of sequence"
        case 11: "end of stream"
        case 12: "filler data"
        case 13: "SPS extension"
        default: "type \(rawValue)"
        }
    }
}
