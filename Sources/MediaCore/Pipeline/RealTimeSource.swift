internal import Dispatch

/// A source that delivers its elements no faster than they play: each when its time on the
/// stream's sample clock has come, counted from the first (what `ffmpeg -re` does).
///
/// The clock is the media's, never the wall clock's read of the data: element *n* is handed
/// over at `start + duration of elements 0..<n`, so a slow moment is caught up and the pace does
/// not drift. Used by `publish`, which sends a file to live servers as if it were being
/// captured.
public struct RealTimeSource<Base: MediaSource>: MediaSource {
    /// The source paced.
    public private(set) var base: Base
    private let duration: (Base.Element) -> Duration
    private var start: ContinuousClock.Instant?
    private var played = Duration.zero
    private var wait: DispatchSemaphore { DispatchSemaphore(value: 0) }

    /// Paces `base`; `duration` says how long an element plays.
    public init(_ base: Base, duration: @escaping (Base.Element) -> Duration) {
        self.base = base
        self.duration = duration
    }

    /// The next element, once its time has come.
    public mutating func next() throws(Base.Failure) -> Base.Element? {
        guard let element = try base.next() else { return nil }
        let now = ContinuousClock.now
        let start = self.start ?? now
        self.start = start
        let due = start + played
        if due > now {
            let remaining = due - now
            wait.wait(for: remaining)
        }
        played += duration(element)
        return element
    }

    /// The base's progress.
    public var progress: MediaProgress { base.progress }
    /// The base's damage.
    public mutating func takeDamage() -> [DamageEvent] { base.takeDamage() }
    /// The base's events.
    public mutating func takeEvents() -> [StreamEvent] { base.takeEvents() }
}

extension RealTimeSource: PCMSource where Base: PCMSource {
    /// The base's layout.
    public var pcmFormat: PCMFormat? { base.pcmFormat }
}

extension RealTimeSource: PacketSource where Base: PacketSource {}

/// A PCM source played again from its start each time it ends, for ever (until the job is
/// stopped): `publish --loop`.
///
/// The passes join sample to sample: the decoded input has its priming and padding already
/// removed, so the last sample of one pass is followed by the first of the next, and the
/// encoder after it sees one continuous signal (no AAC frame straddles a seam with silence or
/// a restart). Stream events (gapless numbers, tags) are told once, from the first pass.
public struct LoopingSource<Base: PCMSource>: PCMSource {
    /// The current pass's source.
    public private(set) var base: Base
    private let reopen: () throws(PipelineError) -> Base
    private var passes = 1
    private var deliveredInPass = false

    /// Plays `base`, then `reopen()`'s source each time the previous one ends.
    public init(_ base: Base, reopen: @escaping () throws(PipelineError) -> Base) {
        self.base = base
        self.reopen = reopen
    }

    /// The passes started so far (1 during the first).
    public var passCount: Int { passes }

    /// The next buffer: the current pass's, or the next pass's first.
    public mutating func next() throws(PipelineError) -> PCMBuffer? {
        while true {
            let buffer: PCMBuffer?
            do { buffer = try base.next() } catch { throw PipelineError(error) }
            if let buffer {
                deliveredInPass = true
                return buffer
            }
            // An input that gives nothing would loop without end.
            guard deliveredInPass else { return nil }
            base = try reopen()
            _ = base.takeEvents()
            passes += 1
            deliveredInPass = false
        }
    }

    /// The layout.
    public var pcmFormat: PCMFormat? { base.pcmFormat }
    /// The first pass's events only.
    public mutating func takeEvents() -> [StreamEvent] { passes == 1 ? base.takeEvents() : [] }
    /// The current pass's damage.
    public mutating func takeDamage() -> [DamageEvent] { base.takeDamage() }
}
