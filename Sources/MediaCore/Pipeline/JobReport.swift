/// What a job did, stage by stage: the one report every job gives, from the ``Pump`` (or its
/// pumps) that ran it.
///
/// ``stages`` lists the pipeline as it ran, upstream first: the source, each transform, the
/// sink; a ``Tee``'s branches follow the tee, each stage marked with its ``Stage/branch``.
/// ``elapsed`` is the wall-clock time of the pump; each stage's ``Stage/busy`` is the time
/// spent inside that stage's own calls, so the slowest stage is the one to look at.
public struct JobReport: Sendable, Hashable {
    /// One stage of a pipeline as it ran: a source, a transform or a sink.
    public struct Stage: Sendable, Hashable {
        /// What a stage does in the pipeline.
        public enum Role: Sendable, Hashable {
            /// Yields the elements (a file reader, a capture device).
            case source
            /// Turns elements into others (an encoder, a decoder, a resampler).
            case transform
            /// Takes the elements (a file writer, a muxer, a tee, a device).
            case sink
        }

        /// The stage's type name (`AudioPacketInput`, `AACEncoder`, `AudioPacketOutput`).
        public var name: String
        /// What the stage does.
        public var role: Role
        /// The elements the stage delivered: a source's elements pulled, a transform's
        /// outputs, a sink's elements written.
        public var elements: Int64
        /// The time spent inside the stage's calls (for a source, waiting for a device
        /// included; for a threaded branch, on its own thread).
        public var busy: Duration
        /// For a stage in a ``Tee``'s branch, the branch: its name, or its index when it has
        /// none (`nil` on the main line). Nested tees join their branches with `/`.
        public var branch: String?

        /// A stage.
        public init(name: String, role: Role, elements: Int64, busy: Duration, branch: String? = nil) {
            self.name = name
            self.role = role
            self.elements = elements
            self.busy = busy
            self.branch = branch
        }
    }

    /// The pipeline's stages, upstream first (a job of several pumps: each pump's in turn).
    public var stages: [Stage]
    /// The wall-clock time of the pump (of several pumps: their sum).
    public var elapsed: Duration
    /// The damage the source reported, in order.
    public var damage: [DamageEvent]
    /// Whether ``JobControl/requestStop()`` ended the job before its source did.
    public var stoppedEarly: Bool
    /// Elements written to the pump's sink, what its transforms flushed after a stop included
    /// (of several pumps: their sum).
    public var elements: Int64

    /// A report; by default of nothing (a job that ran no pump, or the start of a sum).
    public init(stages: [Stage] = [], elapsed: Duration = .zero, damage: [DamageEvent] = [], stoppedEarly: Bool = false,
                elements: Int64 = 0) {
        self.stages = stages
        self.elapsed = elapsed
        self.damage = damage
        self.stoppedEarly = stoppedEarly
        self.elements = elements
    }

    /// Adds a later pump of the same job: its stages after these, its time, damage and
    /// elements added, stopped early when either was.
    public mutating func append(_ later: JobReport) {
        stages += later.stages
        elapsed += later.elapsed
        damage += later.damage
        stoppedEarly = stoppedEarly || later.stoppedEarly
        elements += later.elements
    }

    /// This report followed by a later pump's (``append(_:)``).
    public func appending(_ later: JobReport) -> JobReport {
        var report = self
        report.append(later)
        return report
    }

    /// The first stage of `role` (on the main line, not in a branch), if any.
    public func stage(_ role: Stage.Role) -> Stage? {
        stages.first { $0.role == role && $0.branch == nil }
    }
}

/// A source or sink that tells a ``JobReport`` what it is made of: a transformed source its
/// upstream's stages and its transform's, a tee its branches', a wrapper its upstream's. Any
/// other source or sink is one stage, named after its type
/// (``JobReport/appendStages(of:role:elements:busy:to:)``).
package protocol StageReporting {
    /// Appends this part's stages, upstream first. `elements` and `busy` are what the caller
    /// counted and timed around this part's calls (every stage inside it included); a part
    /// that measures its stages itself uses its own figures instead.
    func appendStages(to stages: inout [JobReport.Stage], elements: Int64, busy: Duration)
}

extension JobReport {
    /// Appends the stages of `part`: its own (`StageReporting`), or one stage named after its
    /// type with the figures its caller measured.
    package static func appendStages<Part>(of part: Part, role: Stage.Role, elements: Int64, busy: Duration,
                                           to stages: inout [Stage]) {
        if let reporting = part as? any StageReporting {
            reporting.appendStages(to: &stages, elements: elements, busy: busy)
        } else {
            stages.append(Stage(name: stageName(type(of: part)), role: role, elements: elements, busy: busy))
        }
    }

    /// The name a stage of type `type` gets.
    package static func stageName(_ type: Any.Type) -> String { String(describing: type) }

    /// The name the stage `part` gets: the one it gives (`NamedStage`, a wrapper naming what it
    /// wraps), else its type's.
    package static func stageName(of part: Any) -> String { (part as? any NamedStage)?.stageName ?? stageName(type(of: part)) }
}

/// A stage that names itself: a type-erasing wrapper names the stage it wraps, so a report
/// says `AACDecoder`, not the wrapper's name.
package protocol NamedStage {
    /// The stage's name in a ``JobReport``.
    var stageName: String { get }
}

/// What a job returns: what it produced (an output's path, its gapless numbers, a loudness),
/// in the job's own terms, and its ``JobReport``, the same for every job. The damage and whether
/// it stopped early are the report's.
public protocol JobSummary: Sendable {
    /// What the pumps did, stage by stage.
    var report: JobReport { get set }
}

extension JobSummary {
    /// What was odd about the input but not fatal (skipped bytes, a truncated frame, a track
    /// that ends early): the report's.
    public var damage: [DamageEvent] {
        get { report.damage }
        set { report.damage = newValue }
    }

    /// Whether ``JobControl/requestStop()`` ended the job early (its outputs complete up to
    /// there): the report's.
    public var stoppedEarly: Bool {
        get { report.stoppedEarly }
        set { report.stoppedEarly = newValue }
    }
}

/// The busy time of one stage, measured on a sample of its calls so that a hot path pays for a
/// clock read only now and then: every one of the first 16 calls, then one in 16, counted 16
/// times. A long job's figure is an estimate within a few percent; a short one's is exact.
package struct StageTimer: Sendable {
    /// The time measured and estimated so far.
    package private(set) var busy: Duration = .zero
    private var calls: UInt64 = 0

    /// A timer at zero.
    package init() {}

    /// Starts timing a call when it is one of the sampled ones.
    @inline(__always)
    package mutating func begin() -> ContinuousClock.Instant? {
        calls &+= 1
        return calls <= 16 || calls & 15 == 0 ? ContinuousClock.now : nil
    }

    /// Adds a call timed whole (one that happens once: a flush, a finish).
    package mutating func add(_ duration: Duration) { busy += duration }

    /// Ends the call `begin()` started, when it was sampled; returns when (for a next stage that
    /// starts there), or `nil`.
    @inline(__always) @discardableResult
    package mutating func end(_ began: ContinuousClock.Instant?) -> ContinuousClock.Instant? {
        guard let began else { return nil }
        let now = ContinuousClock.now
        busy += calls <= 16 ? now - began : (now - began) * 16
        return now
    }
}
