internal import Synchronization

/// A source that tells some stream events before its first element: how a job puts into the
/// stream what it learnt outside it (an AAC file's gapless numbers from its edit list, tags a
/// user set), so that the sinks downstream learn them the one way they learn anything. With an
/// inlet, it also tells what another thread posts there while the stream runs (a live title
/// change, an ad break), in order with the elements, from the next element on.
public struct AnnouncingSource<Upstream: MediaSource>: MediaSource {
    /// The source read.
    public private(set) var upstream: Upstream
    private var announcements: [StreamEvent]
    private let inlet: StreamEventInlet?

    /// `upstream`, with `events` told before its first element (or before its end, when it has
    /// none), and what is posted to `inlet` told as it comes.
    public init(_ upstream: Upstream, announcing events: [StreamEvent], inlet: StreamEventInlet? = nil) {
        self.upstream = upstream
        announcements = events
        self.inlet = inlet
    }

    /// The upstream's next element.
    public mutating func next() throws(Upstream.Failure) -> Upstream.Element? { try upstream.next() }

    /// The announced events first (once), then the upstream's, then what was posted to the
    /// inlet since the last call.
    public mutating func takeEvents() -> [StreamEvent] {
        defer { announcements = [] }
        return announcements + upstream.takeEvents() + (inlet?.take() ?? [])
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

/// Where a program hands stream events to a running pipeline from another thread: an
/// ``AnnouncingSource`` tells them downstream, in order with its elements, from its next
/// element on. An event's time says where it applies; a sink holds an event whose time has not
/// come (an emsg goes in the segment its time falls in).
///
/// `Sendable` because it is synchronized: its queue is behind a mutex.
public final class StreamEventInlet: Sendable {
    private let queue = Mutex<[StreamEvent]>([])

    /// An empty inlet.
    public init() {}

    /// Queues `events` for the pipeline.
    public func post(_ events: [StreamEvent]) {
        queue.withLock { $0 += events }
    }

    /// What was posted since the last call, in order.
    public func take() -> [StreamEvent] {
        queue.withLock { queue in
            defer { queue = [] }
            return queue
        }
    }
}
