internal import Synchronization

/// Stops or cancels a running job from another thread (a signal handler, a UI).
///
/// ``requestStop()`` ends a job early but cleanly: the pump stops pulling, flushes the
/// transforms and finishes the sink, so the output is a complete, shorter file (what Ctrl-C
/// does to a recording). ``cancel()`` abandons the job: the sink is cancelled and the pump
/// throws ``PipelineError/cancelled``.
///
/// `Sendable` because it is synchronized: its one piece of state is an atomic.
public final class JobControl: Sendable {
    private let state = Atomic<UInt8>(0)
    /// The number of the input read in progress (odd while one is), counted by ``WatchedInput``.
    private let inputReads = Atomic<UInt64>(0)

    /// A control with nothing requested.
    public init() {}

    /// Asks the job to stop at the next element and finish its output.
    public func requestStop() {
        _ = state.compareExchange(expected: 0, desired: 1, ordering: .relaxed)
    }

    /// Asks the job to stop at the next element and remove its output.
    public func cancel() { state.store(2, ordering: .relaxed) }

    /// Whether ``requestStop()`` was called.
    public var isStopRequested: Bool { state.load(ordering: .relaxed) == 1 }
    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { state.load(ordering: .relaxed) == 2 }

    /// Whether the job is inside a read of its input now (``WatchedInput``): a job asked to
    /// stop that still is, a moment later, is blocked on a read that cannot see the request (a
    /// FIFO whose writer sends nothing). A live job's waits for real time are not reads.
    public var isReadingInput: Bool { inputReads.load(ordering: .relaxed) & 1 == 1 }

    /// Which read of the input is in progress, or nil between reads: the same number a while
    /// apart is one read that took all that while.
    public var inputReadInProgress: UInt64? {
        let count = inputReads.load(ordering: .relaxed)
        return count & 1 == 1 ? count : nil
    }

    /// Marks a read of the input as begun or ended (``WatchedInput`` calls it once for each).
    func countInputReadEdge() {
        // Odd while a read is in progress; each read moves the count on by two.
        inputReads.wrappingAdd(1, ordering: .relaxed)
    }
}

/// The one loop of KeyFrameKit: pulls a source dry into a sink, then finishes the sink.
///
/// Every job is a composition around it: a source (an ADTS stream, an MP4 track, a WAV, a capture
/// device), optionally transformed (``MediaCore/MediaSource/transformed(by:)``: an encoder, a
/// decoder), into a sink (an ADTS writer, a muxer, a WAV writer, a playback device). Progress,
/// stopping, cancellation, damage and errors are handled here, once:
/// - `progress` is called with the source's ``/MediaCore/MediaProgress`` every few dozen elements
///   and at the end;
/// - ``JobControl`` stops (sink finished) or cancels (sink cancelled) between elements;
/// - the source's stream events (``StreamEvent``) reach the sink in order with the elements;
/// - the source's damage is collected into the report (``JobReport``), with each stage's
///   elements and time;
/// - any error cancels the sink (an output written in place for crash safety keeps what it
///   has) and is thrown as a ``PipelineError``.
public enum Pump {
    /// Elements between two progress calls.
    static let progressInterval: Int64 = 64

    /// Moves every element of `source` into `sink`, then finishes `sink`, and reports what each
    /// stage did (``JobReport``): the source, the transforms of a ``TransformedSource``, the
    /// sink (a ``Tee``'s branches too), each with its elements and the time spent in its calls.
    ///
    /// - Throws: the first error of the source, a transform or the sink, as a
    ///   ``PipelineError`` (see ``PipelineError/init(_:)``); ``PipelineError/cancelled``.
    @discardableResult
    public static func run<Source: MediaSource, Sink: MediaSink>(
        from source: inout Source,
        into sink: inout Sink,
        control: JobControl? = nil,
        progress: ((MediaProgress) -> Void)? = nil
    ) throws(PipelineError) -> JobReport where Source.Element == Sink.Element {
        let started = ContinuousClock.now
        var report = JobReport()
        // Per element: two sampled timers (a clock read one call in 16), nothing allocated.
        var pulled: Int64 = 0
        var sourceTimer = StageTimer(), sinkTimer = StageTimer()
        do {
            while true {
                if let control {
                    if control.isCancelled { throw PipelineError.cancelled }
                    if control.isStopRequested {
                        report.stoppedEarly = true
                        break
                    }
                }
                let asked = sourceTimer.begin()
                guard let element = try source.next() else {
                    sourceTimer.end(asked)
                    break
                }
                sourceTimer.end(asked)
                pulled += 1
                let writing = sinkTimer.begin()
                for event in source.takeEvents() { try sink.receive(event) }
                try sink.write(element)
                sinkTimer.end(writing)
                report.elements += 1
                if let progress, report.elements % progressInterval == 0 {
                    report.damage += source.takeDamage()
                    progress(source.progress)
                }
            }
            report.damage += source.takeDamage()
            if report.stoppedEarly, var flushing = source as? any FlushableSource<Source.Element> {
                // A stopped job still writes what its transforms hold (an encoder's last
                // packets), so the shorter output is complete.
                while true {
                    let asked = sourceTimer.begin()
                    guard let element = try flushing.flushNext() else {
                        sourceTimer.end(asked)
                        break
                    }
                    sourceTimer.end(asked)
                    let writing = sinkTimer.begin()
                    for event in flushing.takeEvents() { try sink.receive(event) }
                    try sink.write(element)
                    sinkTimer.end(writing)
                    report.elements += 1
                }
                let asked = sinkTimer.begin()
                for event in flushing.takeEvents() { try sink.receive(event) }
                sinkTimer.end(asked)
                // The caller's source is the flushed one (its transforms' counts, its stages).
                if let flushed = flushing as? Source { source = flushed }
            } else {
                let asked = sinkTimer.begin()
                for event in source.takeEvents() { try sink.receive(event) }
                sinkTimer.end(asked)
            }
            let finishing = ContinuousClock.now
            try sink.finish()
            let finished = ContinuousClock.now
            let sourceBusy = sourceTimer.busy, sinkBusy = sinkTimer.busy + (finished - finishing)
            report.elapsed = finished - started
            JobReport.appendStages(of: source, role: .source, elements: pulled, busy: sourceBusy, to: &report.stages)
            JobReport.appendStages(of: sink, role: .sink, elements: report.elements, busy: sinkBusy, to: &report.stages)
            progress?(source.progress)
            return report
        } catch {
            sink.cancel()
            // A stage that stopped because the job was cancelled (an encoder working on other
            // threads) says so in its own words; the job was cancelled.
            if control?.isCancelled == true { throw PipelineError.cancelled }
            throw PipelineError(error)
        }
    }
}

/// A source that can end early and still hand over what it holds: a transformed source
/// flushes its transform.
protocol FlushableSource<Element>: MediaSource {
    /// The next element held back at the end of the stream, `nil` when none is left.
    mutating func flushNext() throws(Failure) -> Element?
}

extension JobControl: Hashable {
    /// The same control: one object, as a job's settings compare it.
    public static func == (a: JobControl, b: JobControl) -> Bool { a === b }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
