/// Which kinds of media a component handles: audio, video or both.
public struct MediaType: OptionSet, Sendable, Hashable {
    /// The raw representation.
    public let rawValue: UInt8

    /// The value with this raw representation.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Sound.
    public static let audio = MediaType(rawValue: 1 << 0)
    /// Pictures.
    public static let video = MediaType(rawValue: 1 << 1)
    /// Audio and video.
    public static let audioVideo: MediaType = [.audio, .video]
}
