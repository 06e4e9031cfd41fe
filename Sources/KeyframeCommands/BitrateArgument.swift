public import ArgumentParser
public import KeyFrameKit

/// A bitrate on the command line: `96000`, `96k` or `0.5M`, read by the library's one parser
/// (``/MediaCore/Bitrate``).
extension Bitrate: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }

    /// How `--help` shows a default: `128k`, or the bits per second when not whole kilobits.
    public var defaultValueDescription: String { description }
}
