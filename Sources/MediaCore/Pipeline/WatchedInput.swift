/// A source whose reads its job's ``JobControl`` can see (``JobControl/isReadingInput``): a job
/// asked to stop that is still inside a read a moment later is blocked on its input (a FIFO whose
/// writer stalled), where a live job paced in real time is only waiting for the clock. Only the
/// input goes in one; what follows it (pacing, transforms) stays outside.
public struct WatchedInput<Base: MediaSource>: MediaSource {
    /// The source observed.
    public private(set) var base: Base
    private let control: JobControl?

    /// Observes `base`'s reads for `control` (nil: no one watches).
    public init(_ base: Base, control: JobControl?) {
        self.base = base
        self.control = control
    }

    /// The base's next element, read while the control says so.
    public mutating func next() throws(Base.Failure) -> Base.Element? {
        control?.countInputReadEdge()
        defer { control?.countInputReadEdge() }
        return try base.next()
    }

    /// The base's progress.
    public var progress: MediaProgress { base.progress }
    /// The base's damage.
    public mutating func takeDamage() -> [DamageEvent] { base.takeDamage() }
    /// The base's events.
    public mutating func takeEvents() -> [StreamEvent] { base.takeEvents() }
}

extension WatchedInput: PCMSource where Base: PCMSource {
    /// The base's layout.
    public var pcmFormat: PCMFormat? { base.pcmFormat }
}

extension WatchedInput: PacketSource where Base: PacketSource {
    /// The base's next run, read while the control says so.
    public mutating func nextRun(maxBytes: Int) throws(Base.Failure) -> MediaSampleRun? {
        control?.countInputReadEdge()
        defer { control?.countInputReadEdge() }
        return try base.nextRun(maxBytes: maxBytes)
    }
}
