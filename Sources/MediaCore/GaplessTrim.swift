/// What a decoder drops and keeps of its output, from a file's gapless numbers (an edit list,
/// iTunSMPB; ISO/IEC 14496-12, 8.6.6): the decode-side view of ``GaplessInfo``.
public struct GaplessTrim: Sendable, Hashable {
    /// Samples to drop at the start (the encoder's priming).
    public var priming: Int
    /// Samples to keep after that; `nil` keeps everything.
    public var validFrameCount: Int64?

    /// Several ranges of decoded samples to keep, in order, instead of one (an edit list with
    /// an entry per part of a gapless join); ``priming`` is then the first range's start.
    public var keptRanges: [Range<Int64>]?

    /// A trim.
    public init(priming: Int, validFrameCount: Int64? = nil) {
        self.priming = priming
        self.validFrameCount = validFrameCount
    }

    /// A trim keeping `ranges` of the decoded samples (counted from the first), in order.
    public init(keeping ranges: [Range<Int64>]) {
        priming = Int(clamping: ranges.first?.lowerBound ?? 0)
        validFrameCount = ranges.count == 1 ? Int64(ranges[0].count) : nil
        keptRanges = ranges.count == 1 ? nil : ranges
    }

    /// Keep every sample.
    public static let none = GaplessTrim(priming: 0)
}
