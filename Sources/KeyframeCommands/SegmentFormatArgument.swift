public import ArgumentParser
public import KeyFrameKit

/// `--segments cmaf|packed-audio`: what an HLS rendition's segments are made of, the same word
/// in `package` and `record --hls`.
extension HLSSegmentFormat: ExpressibleByArgument {
    /// The format named `argument` (`cmaf`, `packed-audio`).
    public init?(argument: String) { self.init(rawValue: argument) }

    /// Every format, for `--help`.
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
}
