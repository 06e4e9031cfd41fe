/// How far a source (and so the job reading it) has got, in seconds of media.
public struct MediaProgress: Sendable, Hashable {
    /// Seconds of media done.
    public var mediaSeconds: Double
    /// Seconds of media in all, when known.
    public var totalSeconds: Double?

    /// Progress of `mediaSeconds` out of `totalSeconds`.
    public init(mediaSeconds: Double = 0, totalSeconds: Double? = nil) {
        self.mediaSeconds = mediaSeconds
        self.totalSeconds = totalSeconds
    }

    /// The share done, 0...1, when the total is known.
    public var fraction: Double? {
        guard let totalSeconds, totalSeconds > 0 else { return nil }
        return min(1, max(0, mediaSeconds / totalSeconds))
    }
}
