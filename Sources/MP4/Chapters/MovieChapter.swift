public import MediaCore

/// One chapter of a movie: where it starts on the movie's timeline and its title. A chapter
/// lasts until the next one starts, the last one until the movie ends.
public struct MovieChapter: Sendable, Hashable {
    /// Where the chapter starts, from the start of the presentation.
    public var startTime: MediaTime
    /// The chapter's title.
    public var title: String

    /// A chapter.
    public init(startTime: MediaTime, title: String) {
        self.startTime = startTime
        self.title = title
    }

    /// A chapter starting `seconds` into the movie (kept to the 100-nanosecond unit of `chpl`;
    /// a negative or non-finite time is 0, one past 10⁹ seconds is 10⁹ seconds).
    public init(seconds: Double, title: String) {
        let clamped = seconds.isFinite ? min(max(0, seconds), 1e9) : 0
        self.init(startTime: MediaTime(value: Int64((clamped * 10_000_000).rounded()), timescale: 10_000_000), title: title)
    }

    /// The start in seconds.
    public var seconds: Double { startTime.seconds }
}

extension [MovieChapter] {
    /// The chapters as a movie carries them: in time order, one per start time (the later in
    /// the list wins), none at or after `duration` (when known), and the first one starting at 0 — a chapter track covers the whole presentation, so the time before a later
    /// first chapter belongs to it.
    public func normalized(duration: MediaTime? = nil) -> [MovieChapter] {
        var sorted = self.enumerated().sorted { ($0.element.startTime, $0.offset) < ($1.element.startTime, $1.offset) }.map(\.element)
        if let duration { sorted.removeAll { $0.startTime >= duration && $0.startTime.value != 0 } }
        // Two chapters at one time: the later one in the list wins, as a player would show it.
        var unique: [MovieChapter] = []
        for chapter in sorted {
            if let last = unique.last, last.startTime == chapter.startTime { unique[unique.count - 1] = chapter } else { unique.append(chapter) }
        }
        guard !unique.isEmpty else { return [] }
        unique[0].startTime = MediaTime(value: 0, timescale: unique[0].startTime.timescale)
        return unique
    }
}
