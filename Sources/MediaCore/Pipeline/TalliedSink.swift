internal import Synchronization

/// What a stream told a sink, readable from any thread while the pump runs or after: how many
/// elements passed, and the last gapless numbers and metadata (``StreamEvent``). A job reads
/// its summary here instead of asking the encoder, which stays inside the pipeline.
///
/// `Sendable` because it is synchronized: its state is behind a mutex.
public final class StreamTally: Sendable {
    /// A copy of what was told.
    public struct Snapshot: Sendable, Hashable {
        /// Elements written.
        public var elements: Int64 = 0
        /// The last gapless numbers told.
        public var gapless: GaplessInfo?
        /// The last metadata told.
        public var metadata: StreamMetadata?
        /// The timed metadata told, in order.
        public var timedMetadata: [TimedMetadata] = []
        /// The markers told, in order.
        public var markers: [StreamMarker] = []
    }

    private let state = Mutex(Snapshot())

    /// An empty tally.
    public init() {}

    /// What was told so far.
    public var snapshot: Snapshot { state.withLock { $0 } }

    func count() { state.withLock { $0.elements += 1 } }

    func note(_ event: StreamEvent) {
        state.withLock { snapshot in
            switch event {
            case .gapless(let info): snapshot.gapless = info
            case .metadata(let metadata): snapshot.metadata = metadata
            case .timedMetadata(let timed): snapshot.timedMetadata.append(timed)
            case .marker(let marker): snapshot.markers.append(marker)
            case .codecConfiguration, .loudness: break
            }
        }
    }
}

/// A sink that tells a ``StreamTally`` what passes through it to `base`.
public struct TalliedSink<Base: MediaSink>: MediaSink {
    /// The sink written to.
    public private(set) var base: Base
    /// Where the counts go.
    public let tally: StreamTally

    /// `base`, counted into `tally`.
    public init(_ base: Base, tally: StreamTally) {
        self.base = base
        self.tally = tally
    }

    /// Writes to the base, then counts.
    public mutating func write(_ element: Base.Element) throws(Base.Failure) {
        try base.write(element)
        tally.count()
    }

    /// Notes the event, then hands it to the base.
    public mutating func receive(_ event: StreamEvent) throws(Base.Failure) {
        tally.note(event)
        try base.receive(event)
    }

    /// Finishes the base.
    public mutating func finish() throws(Base.Failure) { try base.finish() }

    /// Cancels the base.
    public mutating func cancel() { base.cancel() }
}

extension TalliedSink: StageReporting {
    /// The base's stages.
    package func appendStages(to stages: inout [JobReport.Stage], elements: Int64, busy: Duration) {
        JobReport.appendStages(of: base, role: .sink, elements: elements, busy: busy, to: &stages)
    }
}

extension TalliedSink: PacketSink where Base: PacketSink {}
extension TalliedSink: PCMSink where Base: PCMSink {}
