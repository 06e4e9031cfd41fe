/// H.265 `nal_unit_type` (ITU-T H.265 7.4.2.2, Table 7-1).
public struct HEVCNALUnitType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The 6-bit value.
    public var rawValue: UInt8

    /// The type of value `rawValue` (only its low 6 bits are kept).
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x3F }

    /// 8: RASL_N, random access skipped leading picture, sub-layer non-reference.
    public static let raslN = HEVCNALUnitType(rawValue: 8)
    /// 9: RASL_R.
    public static let raslR = HEVCNALUnitType(rawValue: 9)
    /// 16: BLA_W_LP, broken link access.
    public static let blaWithLeadingPictures = HEVCNALUnitType(rawValue: 16)
    /// 18: BLA_N_LP.
    public static let blaWithoutLeadingPictures = HEVCNALUnitType(rawValue: 18)
    /// 19: IDR_W_RADL, instantaneous decoding refresh.
    public static let idrWithRADL = HEVCNALUnitType(rawValue: 19)
    /// 20: IDR_N_LP.
    public static let idrWithoutLeadingPictures = HEVCNALUnitType(rawValue: 20)
    /// 21: CRA_NUT, clean random access.
    public static let cleanRandomAccess = HEVCNALUnitType(rawValue: 21)
    /// 32: video parameter set.
    public static let videoParameterSet = HEVCNALUnitType(rawValue: 32)
    /// 33: sequence parameter set.
    public static let sequenceParameterSet = HEVCNALUnitType(rawValue: 33)
    /// 34: picture parameter set.
    public static let pictureParameterSet = HEVCNALUnitType(rawValue: 34)
    /// 35: access unit delimiter.
    public static let accessUnitDelimiter = HEVCNALUnitType(rawValue: 35)
    /// 36: end of sequence.
    public static let endOfSequence = HEVCNALUnitType(rawValue: 36)
    /// 37: end of bitstream.
    public static let endOfBitstream = HEVCNALUnitType(rawValue: 37)
    /// 39: prefix SEI.
    public static let prefixSEI = HEVCNALUnitType(rawValue: 39)
    /// 40: suffix SEI.
    public static let suffixSEI = HEVCNALUnitType(rawValue: 40)

    /// Whether the unit is a VCL NAL unit (0 to 31).
    public var isVCL: Bool { rawValue < 32 }

    /// Whether the unit is a coded slice segment of a type the standard defines (0 to 9,
    /// 16 to 21); reserved VCL types (10 to 15, 22 to 31) are ignored by decoders.
    public var isDefinedSlice: Bool { rawValue <= 9 || (16...21).contains(rawValue) }

    /// Whether the unit is an intra random access point picture's slice (16 to 23; 7.4.2.2).
    public var isIRAP: Bool { (16...23).contains(rawValue) }

    /// Whether the unit belongs to an IDR picture (19, 20).
    public var isIDR: Bool { rawValue == 19 || rawValue == 20 }

    /// Whether the unit belongs to a BLA picture (16 to 18).
    public var isBLA: Bool { (16...18).contains(rawValue) }

    /// Whether the unit belongs to a RASL picture (8, 9).
    public var isRASL: Bool { rawValue == 8 || rawValue == 9 }

    /// Whether the unit belongs to a RADL picture (6, 7).
    public var isRADL: Bool { rawValue == 6 || rawValue == 7 }

    /// Whether the unit belongs to a sub-layer non-reference picture (TRAIL_N, TSA_N, STSA_N,
    /// RADL_N, RASL_N and the reserved RSV_VCL_N10/N12/N14: the even types below 16).
    public var isSubLayerNonReference: Bool { rawValue < 16 && rawValue % 2 == 0 }

    /// Whether the unit, when it follows the last VCL NAL unit of a picture, starts a new access
    /// unit (7.4.2.4.4): VPS, SPS, PPS, AUD, prefix SEI, and types 41 to 44 and 48 to 55.
    public var startsAccessUnit: Bool {
        (32...35).contains(rawValue) || rawValue == 39 || (41...44).contains(rawValue) || (48...55).contains(rawValue)
    }

    /// The name Table 7-1 gives (`IDR_W_RADL`, `SPS_NUT`, …) or the number.
    public var description: String {
        let names = ["TRAIL_N", "TRAIL_R", "TSA_N", "TSA_R", "STSA_N", "STSA_R", "RADL_N", "RADL_R", "RASL_N", "RASL_R"]
        if Int(rawValue) < names.count { return names[Int(rawValue)] }
        switch rawValue {
        case 16: return "BLA_W_LP"
        case 17: return "BLA_W_RADL"
        case 18: return "BLA_N_LP"
        case 19: return "IDR_W_RADL"
        case 20: return "IDR_N_LP"
        case 21: return "CRA_NUT"
        case 32: return "VPS_NUT"
        case 33: return "SPS_NUT"
        case 34: return "PPS_NUT"
        case 35: return "AUD_NUT"
        case 36: return "EOS_NUT"
        case 37: return "EOB_NUT"
        case 38: return "FD_NUT"
        case 39: return "PREFIX_SEI_NUT"
        case 40: return "SUFFIX_SEI_NUT"
        default: return "type \(rawValue)"
        }
    }
}
