/// One patch of the SBR high-frequency generator (ISO/IEC 14496-3, 4.6.18.6.3, Figure 4.46):
/// `count` QMF subbands copied from `sourceStart...` up into the SBR range
/// (FFmpeg `patch_start_subband`, `patch_num_subbands`).
public struct SBRPatch: Sendable, Hashable {
    /// The first low-band QMF subband copied (`patchStartSubband`).
    public var sourceStart: Int
    /// The number of subbands copied (`patchNumSubbands`).
    public var count: Int

    /// A patch of `count` subbands from `sourceStart`.
    public init(sourceStart: Int, count: Int) {
        self.sourceStart = sourceStart
        self.count = count
    }
}
