/// `audioObjectType` of ISO/IEC 14496-3, 1.5.1.1 (Table 1.17).
public struct AudioObjectType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The object type number, 0–95 (values above 30 are written with the escape 31).
    public let rawValue: UInt8

    /// The value with this raw representation.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// AAC Main.
    public static let aacMain = AudioObjectType(rawValue: 1)
    /// AAC Low Complexity: what AAC encoders write by default.
    public static let aacLC = AudioObjectType(rawValue: 2)
    /// AAC Scalable Sample Rate.
    public static let aacSSR = AudioObjectType(rawValue: 3)
    /// AAC Long Term Prediction.
    public static let aacLTP = AudioObjectType(rawValue: 4)
    /// Spectral Band Replication (HE-AAC).
    public static let sbr = AudioObjectType(rawValue: 5)
    /// AAC Scalable.
    public static let aacScalable = AudioObjectType(rawValue: 6)
    /// TwinVQ.
    public static let twinVQ = AudioObjectType(rawValue: 7)
    /// Error-resilient AAC LC.
    public static let erAACLC = AudioObjectType(rawValue: 17)
    /// Error-resilient AAC LTP.
    public static let erAACLTP = AudioObjectType(rawValue: 19)
    /// Error-resilient AAC Scalable.
    public static let erAACScalable = AudioObjectType(rawValue: 20)
    /// Error-resilient TwinVQ.
    public static let erTwinVQ = AudioObjectType(rawValue: 21)
    /// Error-resilient BSAC.
    public static let erBSAC = AudioObjectType(rawValue: 22)
    /// Error-resilient AAC Low Delay.
    public static let erAACLD = AudioObjectType(rawValue: 23)
    /// Parametric Stereo (HE-AAC v2).
    public static let ps = AudioObjectType(rawValue: 29)
    /// Escape: the real type follows in 6 more bits.
    public static let escape = AudioObjectType(rawValue: 31)
    /// Error-resilient AAC Enhanced Low Delay.
    public static let erAACELD = AudioObjectType(rawValue: 39)
    /// Unified Speech and Audio Coding (xHE-AAC).
    public static let usac = AudioObjectType(rawValue: 42)

    /// Whether the object type's specific config is a GASpecificConfig (14496-3, 1.6.2.1).
    public var usesGASpecificConfig: Bool {
        [1, 2, 3, 4, 6, 7, 17, 19, 20, 21, 22, 23].contains(rawValue)
    }

    /// Whether an `epConfig` field follows the specific config (error-resilient types).
    public var hasErrorProtectionConfig: Bool {
        (17...27).contains(rawValue) || rawValue == 39
    }

    /// The object type's name in ISO/IEC 14496-3, Table 1.17 (`USAC`, `ALS`, `ER AAC LTP`, …),
    /// or `object type N` for a reserved value.
    public var name: String {
        switch rawValue {
        case 1: "AAC Main"
        case 2: "AAC LC"
        case 3: "AAC SSR"
        case 4: "AAC LTP"
        case 5: "SBR"
        case 6: "AAC Scalable"
        case 7: "TwinVQ"
        case 8: "CELP"
        case 9: "HVXC"
        case 12: "TTSI"
        case 13: "Main synthetic"
        case 14: "Wavetable synthesis"
        case 15: "General MIDI"
        case 16: "Algorithmic Synthesis and Audio FX"
        case 17: "ER AAC LC"
        case 19: "ER AAC LTP"
        case 20: "ER AAC Scalable"
        case 21: "ER TwinVQ"
        case 22: "ER BSAC"
        case 23: "ER AAC LD"
        case 24: "ER CELP"
        case 25: "ER HVXC"
        case 26: "ER HILN"
        case 27: "ER Parametric"
        case 28: "SSC"
        case 29: "PS"
        case 30: "MPEG Surround"
        case 32: "Layer-1"
        case 33: "Layer-2"
        case 34: "Layer-3"
        case 35: "DST"
        case 36: "ALS"
        case 37: "SLS"
        case 38: "SLS non-core"
        case 39: "ER AAC ELD"
        case 40: "SMR Simple"
        case 41: "SMR Main"
        case 42: "USAC"
        case 43: "SAOC"
        case 44: "LD MPEG Surround"
        case 45: "SAOC-DE"
        case 46: "Audio Sync"
        default: "object type \(rawValue)"
        }
    }

    /// The profile name `probe` prints: the AAC profile names (`LC`, `HE-AAC`, `xHE-AAC`, …),
    /// else the object type's ``name``.
    public var description: String {
        switch rawValue {
        case 1: "Main"
        case 2: "LC"
        case 3: "SSR"
        case 4: "LTP"
        case 5: "HE-AAC"
        case 6: "Scalable"
        case 7: "TwinVQ"
        case 17: "ER AAC LC"
        case 19: "ER AAC LTP"
        case 20: "ER AAC Scalable"
        case 23: "ER AAC LD"
        case 29: "HE-AACv2"
        case 39: "ER AAC ELD"
        case 42: "xHE-AAC"
        default: name
        }
    }
}

extension AudioObjectType {
    /// Whether the stream is coded with spectral band replication: HE-AAC v1 (`.sbr`) and v2
    /// (`.ps`, whose parametric stereo rides in the SBR data of a mono core). Such an encoder
    /// makes 2048-sample frames at the output rate (16–48 kHz), sends an SBR header only now and
    /// then (so a segment that a player may start at must start on one), and is resampled to.
    public var usesSpectralBandReplication: Bool { self == .sbr || self == .ps }
}
