/// One stream into several sinks: what a job with many outputs is (a ladder of renditions from
/// one decode, a recording to a file and to HLS from one encoder, a capture to a file and to
/// network destinations).
///
/// Each branch is a sink, with its own transforms before it (``MediaSink/transforming(by:)``),
/// and gets every element and every ``StreamEvent`` in order. A branch runs on the tee's
/// thread, or, made with ``Branch/init(threaded:name:policy:queueCapacity:whenFinished:)``, on a thread of its own
/// (``ThreadedSink``): heavy branches (an encoder each) then run in parallel while the source
/// is read once. Backpressure: a threaded branch holds at most its queue's capacity; the tee
/// waits for room, so memory does not grow when a branch is slower than the source.
///
/// The failure policy is per branch (``Branch/Policy``): a ``Branch/Policy/required`` branch
/// failing fails the job (the pump then cancels every branch); an
/// ``Branch/Policy/expendable`` one (a network destination) is cancelled, its error kept in
/// ``failures``, and the others go on; when no branch is left, the last failure is thrown.
public struct Tee<Element: Sendable>: MediaSink {
    /// One output of a tee.
    public struct Branch {
        /// What a branch's failure does to the job.
        public enum Policy: Sendable, Hashable {
            /// The job fails with it (a file output).
            case required
            /// The job goes on without it; its error is reported (a network destination).
            case expendable
        }

        /// A name for reports (`64k`, `file`, `rtmp://…`).
        public let name: String
        /// What its failure does.
        public let policy: Policy
        fileprivate var sink: AnyMediaSink<Element>
        fileprivate var isFailed = false
        /// The report's figures: elements written to the branch, the time in its calls.
        fileprivate var written: Int64 = 0
        fileprivate var busy = Duration.zero

        /// A branch run on the tee's thread.
        public init<Sink: MediaSink>(_ sink: Sink, name: String = "", policy: Policy = .required) where Sink.Element == Element {
            self.name = name
            self.policy = policy
            self.sink = AnyMediaSink(sink)
        }

        /// A branch run on a thread of its own, behind a queue of `queueCapacity` elements
        /// (``ThreadedSink``); `whenFinished` sees the finished sink on that thread. The caller
        /// gives `sink` up.
        public init<Sink: MediaSink>(threaded sink: sending Sink, name: String = "", policy: Policy = .required, queueCapacity: Int = 16,
                                     whenFinished: sending ((Sink) -> Void)? = nil)
        where Sink.Element == Element {
            self.name = name
            self.policy = policy
            self.sink = AnyMediaSink(ThreadedSink(sink, name: name, queueCapacity: queueCapacity, whenFinished: whenFinished))
        }
    }

    /// A branch that failed without failing the job.
    public struct BranchFailure: Sendable {
        /// The branch's name.
        public var name: String
        /// Why it failed.
        public var error: PipelineError
    }

    private var branches: [Branch]
    /// The expendable branches that failed, in order.
    public private(set) var failures: [BranchFailure] = []

    /// A tee into `branches`.
    public init(_ branches: [Branch]) {
        self.branches = branches
    }

    /// Writes `element` to every branch still running.
    public mutating func write(_ element: Element) throws(PipelineError) {
        for index in branches.indices where !branches[index].isFailed {
            let asked = ContinuousClock.now
            do throws(PipelineError) {
                try branches[index].sink.write(element)
                branches[index].written += 1
            } catch { try fail(index, error) }
            branches[index].busy += ContinuousClock.now - asked
        }
    }

    /// Hands `event` to every branch still running.
    public mutating func receive(_ event: StreamEvent) throws(PipelineError) {
        for index in branches.indices where !branches[index].isFailed {
            let asked = ContinuousClock.now
            do throws(PipelineError) { try branches[index].sink.receive(event) } catch { try fail(index, error) }
            branches[index].busy += ContinuousClock.now - asked
        }
    }

    /// Finishes every branch; once a required branch fails, the branches not yet finished are
    /// cancelled instead (the job fails: nothing of it should be committed), and the first
    /// required branch's error is thrown. An expendable branch's failure is kept in ``failures``.
    public mutating func finish() throws(PipelineError) {
        var first: PipelineError?
        for index in branches.indices where !branches[index].isFailed {
            if first != nil {
                branches[index].sink.cancel()
                branches[index].isFailed = true
                continue
            }
            let asked = ContinuousClock.now
            defer { branches[index].busy += ContinuousClock.now - asked }
            do throws(PipelineError) { try branches[index].sink.finish() } catch {
                branches[index].isFailed = true
                if branches[index].policy == .expendable {
                    failures.append(BranchFailure(name: branches[index].name, error: error))
                } else if first == nil {
                    first = error
                }
            }
        }
        if let first { throw first }
    }

    /// Cancels every branch still running.
    public mutating func cancel() {
        for index in branches.indices where !branches[index].isFailed {
            branches[index].sink.cancel()
            branches[index].isFailed = true
        }
    }

    private mutating func fail(_ index: Int, _ error: PipelineError) throws(PipelineError) {
        branches[index].isFailed = true
        branches[index].sink.cancel()
        guard branches[index].policy == .expendable else { throw error }
        failures.append(BranchFailure(name: branches[index].name, error: error))
        // Nothing is left to write to: the job has failed (every destination refused).
        if branches.allSatisfy(\.isFailed) { throw error }
    }
}

extension Tee: StageReporting {
    /// The tee's stage (what the pump wrote to it), then each branch's stages, marked with the
    /// branch's name, or its index when it has none.
    package func appendStages(to stages: inout [JobReport.Stage], elements: Int64, busy: Duration) {
        stages.append(JobReport.Stage(name: JobReport.stageName(Self.self), role: .sink, elements: elements, busy: busy))
        for (index, branch) in branches.enumerated() {
            var branchStages: [JobReport.Stage] = []
            branch.sink.appendStages(to: &branchStages, elements: branch.written, busy: branch.busy)
            let label = branch.name.isEmpty ? "\(index)" : branch.name
            for var stage in branchStages {
                stage.branch = stage.branch.map { "\(label)/\($0)" } ?? label
                stages.append(stage)
            }
        }
    }
}

extension Tee: PacketSink where Element == MediaSample {}
extension Tee: PCMSink where Element == PCMBuffer {}

/// Any sink of `Element`, its errors as ``PipelineError``: how a ``Tee`` holds branches of
/// different types.
public struct AnyMediaSink<Element>: MediaSink {
    private let box: AnyMediaSinkBox<Element>

    /// `sink`, erased.
    public init<Sink: MediaSink>(_ sink: Sink) where Sink.Element == Element {
        box = ConcreteSinkBox(sink)
    }

    /// Writes to the sink.
    public mutating func write(_ element: Element) throws(PipelineError) { try box.write(element) }
    /// Hands the event to the sink.
    public mutating func receive(_ event: StreamEvent) throws(PipelineError) { try box.receive(event) }
    /// Finishes the sink.
    public mutating func finish() throws(PipelineError) { try box.finish() }
    /// Cancels the sink.
    public mutating func cancel() { box.cancel() }
}

extension AnyMediaSink: StageReporting {
    /// The erased sink's stages.
    package func appendStages(to stages: inout [JobReport.Stage], elements: Int64, busy: Duration) {
        box.appendStages(to: &stages, elements: elements, busy: busy)
    }
}

/// The erased sink's storage (a class, so that `AnyMediaSink` stays small).
private class AnyMediaSinkBox<Element> {
    func write(_ element: Element) throws(PipelineError) {}
    func receive(_ event: StreamEvent) throws(PipelineError) {}
    func finish() throws(PipelineError) {}
    func cancel() {}
    func appendStages(to stages: inout [JobReport.Stage], elements: Int64, busy: Duration) {}
}

private final class ConcreteSinkBox<Sink: MediaSink>: AnyMediaSinkBox<Sink.Element> {
    private var sink: Sink
    init(_ sink: Sink) { self.sink = sink }
    override func write(_ element: Sink.Element) throws(PipelineError) {
        do { try sink.write(element) } catch { throw PipelineError(error) }
    }
    override func receive(_ event: StreamEvent) throws(PipelineError) {
        do { try sink.receive(event) } catch { throw PipelineError(error) }
    }
    override func finish() throws(PipelineError) {
        do { try sink.finish() } catch { throw PipelineError(error) }
    }
    override func cancel() { sink.cancel() }
    override func appendStages(to stages: inout [JobReport.Stage], elements: Int64, busy: Duration) {
        JobReport.appendStages(of: sink, role: .sink, elements: elements, busy: busy, to: &stages)
    }
}
