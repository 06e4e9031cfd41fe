/// A source that tells some stream events before its first element: how a job puts into the
/// stream what it learnt outside it (an AAC file's gapless numbers from its edit list, tags a
/// user set), so that the sinks downstream learn them the one way they learn anything.
public struct AnnouncingSource<Upstream: MediaSource>: MediaSource {
    /// The source read.
    public private(set) var upstream: Upstream
    private var announcements: [StreamEvent]

    /// `upstream`, with `events` told before its first element (or before its end, when it has
    /// none).
    public init(_ upstream: Upstream, announcing events: [StreamEvent]) {
        self.upstream = upstream
        announcements = events
    }

    /// The upstream's next element.
    public mutating func next() throws(Upstream.Failure) -> Upstream.Element? { try upstream.next() }

    /// The announced events first (once), then the upstream's.
    public mutating func takeEvents() -> [StreamEvent] {
        defer { announcements = [] }
        return announcements + upstream.takeEvents()
    }

    /// The upstream's progress.
    public var progress: MediaProgress { upstream.progress }

    /// The upstream's damage.
    public mutating func takeDamage() -> [DamageEvent] { upstream.takeDamage() }
}

extension AnnouncingSource: StageReporting {
    /// The upstream's stages.
    package func appendStages(to stages: inout [JobReport.Stage], elements: Int64, busy: Duration) {
        JobReport.appendStages(of: upstream, role: .source, elements: elements, busy: busy, to: &stages)
    }
}

extension AnnouncingSource: PacketSource where Upstream: PacketSource {
    /// The upstream's next run.
    public mutating func nextRun(maxBytes: Int) throws(Upstream.Failure) -> MediaSampleRun? { try upstream.nextRun(maxBytes: maxBytes) }
}

extension AnnouncingSource: PCMSource where Upstream: PCMSource {
    /// The upstream's layout.
    public var pcmFormat: PCMFormat? { upstream.pcmFormat }
}

extension AnnouncingSource: FlushableSource where Upstream: FlushableSource {
    /// The upstream's held-back elements.
    mutating func flushNext() throws(Upstream.Failure) -> Upstream.Element? { try upstream.flushNext() }
}
