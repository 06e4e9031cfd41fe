/// A source whose elements pass through a transform: a PCM source through an encoder is a
/// packet source, a packet source through a decoder is a PCM source. Made by
/// ``MediaSource/transformed(by:)``.
///
/// What the transform holds back is handed over when the upstream ends
/// (``MediaTransform/finish()``), so the last packets of an encoder are never lost. Stream
/// events keep their place: the upstream's pass through ``MediaTransform/transform(event:)``
/// before the outputs of the element they preceded; the transform's own come where
/// ``MediaTransform/takeEvents()`` says.
public struct TransformedSource<Upstream: MediaSource, Transform: MediaTransform>: MediaSource
where Transform.Input == Upstream.Element {
    private enum Item {
        case element(Transform.Output)
        case event(StreamEvent)
    }

    /// The source read.
    public private(set) var upstream: Upstream
    /// The transform applied.
    public private(set) var transform: Transform
    private var pending: [Item] = []
    private var pendingIndex = 0
    private var events: [StreamEvent] = []
    private var isFinished = false
    /// The figures of the report (`StageReporting`): elements pulled from the upstream and
    /// the time in its `next()`, outputs of the transform and the time in its calls.
    private var pulled: Int64 = 0
    private var upstreamTimer = StageTimer()
    private var produced: Int64 = 0
    private var transformTimer = StageTimer()

    /// `upstream`'s elements through `transform`.
    public init(_ upstream: Upstream, transform: Transform) {
        self.upstream = upstream
        self.transform = transform
    }

    /// The next transformed element, `nil` once the upstream has ended and the transform is
    /// flushed.
    public mutating func next() throws(PipelineError) -> Transform.Output? {
        while true {
            if let element = popElement() { return element }
            guard !isFinished else { return nil }
            do {
                let asked = upstreamTimer.begin()
                if let input = try upstream.next() {
                    upstreamTimer.end(asked)
                    pulled += 1
                    refill(events: upstream.takeEvents())
                    let transforming = transformTimer.begin()
                    let outputs = try transform.transform(input)
                    appendEvents(transform.takeEvents())
                    transformTimer.end(transforming)
                    produced += Int64(outputs.count)
                    pending += outputs.map(Item.element)
                } else {
                    upstreamTimer.end(asked)
                    refill(events: upstream.takeEvents())
                    try flushTransform()
                }
            } catch {
                throw PipelineError(error)
            }
        }
    }

    /// Moves the events before the next element to ``takeEvents()`` and returns the element,
    /// or `nil` when nothing but events is pending.
    private mutating func popElement() -> Transform.Output? {
        while pendingIndex < pending.count {
            defer { pendingIndex += 1 }
            switch pending[pendingIndex] {
            case .event(let event): events.append(event)
            case .element(let element): return element
            }
        }
        pending.removeAll(keepingCapacity: true)
        pendingIndex = 0
        return nil
    }

    private mutating func refill(events upstreamEvents: [StreamEvent]) {
        for event in upstreamEvents { appendEvents(transform.transform(event: event)) }
    }

    private mutating func flushTransform() throws(PipelineError) {
        let asked = ContinuousClock.now
        do {
            let outputs = try transform.finish()
            produced += Int64(outputs.count)
            pending += outputs.map(Item.element)
        } catch {
            throw PipelineError(error)
        }
        appendEvents(transform.takeEvents())
        transformTimer.add(ContinuousClock.now - asked)
        isFinished = true
    }

    private mutating func appendEvents(_ new: [StreamEvent]) { pending += new.map(Item.event) }

    /// The upstream's progress.
    public var progress: MediaProgress { upstream.progress }

    /// The upstream's damage.
    public mutating func takeDamage() -> [DamageEvent] { upstream.takeDamage() }

    /// The events before the element `next()` returned (or, after `nil`, the end's).
    public mutating func takeEvents() -> [StreamEvent] {
        defer { events.removeAll() }
        return events
    }
}

extension TransformedSource: FlushableSource {
    /// What is pending, then what the transform still holds, without reading the upstream.
    mutating func flushNext() throws(PipelineError) -> Transform.Output? {
        while true {
            if let element = popElement() { return element }
            guard !isFinished else { return nil }
            try flushTransform()
        }
    }
}

extension TransformedSource: StageReporting {
    /// The upstream's stages (its figures measured here), then the transform's.
    package func appendStages(to stages: inout [JobReport.Stage], elements: Int64, busy: Duration) {
        JobReport.appendStages(of: upstream, role: .source, elements: pulled, busy: upstreamTimer.busy, to: &stages)
        stages.append(JobReport.Stage(name: JobReport.stageName(of: transform), role: .transform, elements: produced, busy: transformTimer.busy))
    }
}

extension TransformedSource: PacketSource where Transform.Output == MediaSample {}

extension TransformedSource: PCMSource where Transform.Output == PCMBuffer {
    /// Known only from the first buffer.
    public var pcmFormat: PCMFormat? { nil }
}

extension MediaSource {
    /// This source's elements through `transform` (an encoder, a decoder).
    public func transformed<T: MediaTransform>(by transform: T) -> TransformedSource<Self, T> where T.Input == Element {
        TransformedSource(self, transform: transform)
    }
}

/// A source that shows each element to `observe` as it passes (a level meter, a counter).
public struct ObservedSource<Upstream: MediaSource>: MediaSource {
    /// The source read.
    public private(set) var upstream: Upstream
    private let observe: (Upstream.Element) -> Void

    /// `upstream`, with `observe` called on each element.
    public init(_ upstream: Upstream, observe: @escaping (Upstream.Element) -> Void) {
        self.upstream = upstream
        self.observe = observe
    }

    /// The upstream's next element, after `observe` has seen it.
    public mutating func next() throws(Upstream.Failure) -> Upstream.Element? {
        guard let element = try upstream.next() else { return nil }
        observe(element)
        return element
    }

    /// The upstream's progress.
    public var progress: MediaProgress { upstream.progress }

    /// The upstream's damage.
    public mutating func takeDamage() -> [DamageEvent] { upstream.takeDamage() }

    /// The upstream's events.
    public mutating func takeEvents() -> [StreamEvent] { upstream.takeEvents() }
}

extension ObservedSource: StageReporting {
    /// The upstream's stages.
    package func appendStages(to stages: inout [JobReport.Stage], elements: Int64, busy: Duration) {
        JobReport.appendStages(of: upstream, role: .source, elements: elements, busy: busy, to: &stages)
    }
}

extension ObservedSource: PCMSource where Upstream: PCMSource {
    /// The upstream's layout.
    public var pcmFormat: PCMFormat? { upstream.pcmFormat }
}

extension ObservedSource: PacketSource where Upstream: PacketSource {}

extension ObservedSource: FlushableSource where Upstream: FlushableSource {
    /// The upstream's held-back elements, each shown to `observe`.
    mutating func flushNext() throws(Upstream.Failure) -> Upstream.Element? {
        guard let element = try upstream.flushNext() else { return nil }
        observe(element)
        return element
    }
}
