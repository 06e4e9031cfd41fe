/// The general part of an H.265 `profile_tier_level( 1, maxNumSubLayersMinus1 )` (ITU-T H.265
/// 7.3.3, semantics 7.4.4): the fields an `hvcC` record repeats. The sub-layer parts are read
/// and dropped.
public struct HEVCProfileTierLevel: Sendable, Hashable {
    /// `general_profile_space` (2 bits).
    public var profileSpace: UInt8
    /// `general_tier_flag`: the High tier.
    public var tierFlag: Bool
    /// `general_profile_idc` (5 bits): 1 Main, 2 Main 10, 3 Main Still Picture, 4 range extensions.
    public var profileIDC: UInt8
    /// `general_profile_compatibility_flag[ j ]`, j = 0 in the most significant bit.
    public var profileCompatibilityFlags: UInt32
    /// The 48 bits from `general_progressive_source_flag` to `general_inbld_flag` /
    /// `general_reserved_zero_bit` (the `general_constraint_indicator_flags` of an `hvcC`).
    public var constraintIndicatorFlags: UInt64
    /// `general_level_idc`: 30 times the level (93 for level 3.1).
    public var levelIDC: UInt8

    /// A profile, tier and level with every field given.
    public init(profileSpace: UInt8, tierFlag: Bool, profileIDC: UInt8, profileCompatibilityFlags: UInt32,
                constraintIndicatorFlags: UInt64, levelIDC: UInt8) {
        self.profileSpace = profileSpace
        self.tierFlag = tierFlag
        self.profileIDC = profileIDC
        self.profileCompatibilityFlags = profileCompatibilityFlags
        self.constraintIndicatorFlags = constraintIndicatorFlags
        self.levelIDC = levelIDC
    }

    /// Reads `profile_tier_level( 1, maxNumSubLayersMinus1 )` (7.3.3).
    init(reading r: inout RBSPReader, maxNumberOfSubLayersMinus1: Int) throws(VideoBitstreamError) {
        profileSpace = UInt8(try r.u(2, "general_profile_space"))
        tierFlag = try r.flag("general_tier_flag")
        profileIDC = UInt8(try r.u(5, "general_profile_idc"))
        profileCompatibilityFlags = UInt32(try r.u(32, "general_profile_compatibility_flag"))
        constraintIndicatorFlags = try r.u(48, "general constraint flags")
        levelIDC = UInt8(try r.u(8, "general_level_idc"))
        var profilePresent: [Bool] = []
        var levelPresent: [Bool] = []
        for _ in 0..<maxNumberOfSubLayersMinus1 {
            profilePresent.append(try r.flag("sub_layer_profile_present_flag"))
            levelPresent.append(try r.flag("sub_layer_level_present_flag"))
        }
        if maxNumberOfSubLayersMinus1 > 0 {
            try r.skip(2 * (8 - maxNumberOfSubLayersMinus1), "reserved_zero_2bits")
        }
        for index in 0..<maxNumberOfSubLayersMinus1 {
            if profilePresent[index] { try r.skip(88, "sub_layer profile fields") }
            if levelPresent[index] { try r.skip(8, "sub_layer_level_idc") }
        }
    }
}
