/// A sink whose elements pass through a transform before reaching another sink: a branch of a
/// ``Tee`` with its own encoder (PCM in, an AAC file out). Made by ``MediaSink/transforming(by:)``.
///
/// Stream events keep their place: an incoming event goes through
/// ``MediaTransform/transform(event:)``; the transform's own events reach the sink before the
/// outputs of the call that made them, and after the outputs of ``MediaTransform/finish()``.
public struct TransformingSink<Transform: MediaTransform, Downstream: MediaSink>: MediaSink
where Transform.Output == Downstream.Element {
    /// The transform applied.
    public private(set) var transform: Transform
    /// The sink written to.
    public private(set) var downstream: Downstream
    /// The figures of the report (`StageReporting`): the transform's outputs and the time in
    /// its calls, the time in the downstream's.
    private var produced: Int64 = 0
    private var transformBusy = Duration.zero
    private var downstreamBusy = Duration.zero

    /// `downstream`, fed through `transform`.
    public init(_ transform: Transform, into downstream: Downstream) {
        self.transform = transform
        self.downstream = downstream
    }

    /// Transforms `element` and writes what is ready.
    public mutating func write(_ element: Transform.Input) throws(PipelineError) {
        do {
            let asked = ContinuousClock.now
            let outputs = try transform.transform(element)
            let events = transform.takeEvents()
            let got = ContinuousClock.now
            transformBusy += got - asked
            produced += Int64(outputs.count)
            for event in events { try downstream.receive(event) }
            for output in outputs { try downstream.write(output) }
            downstreamBusy += ContinuousClock.now - got
        } catch {
            throw PipelineError(error)
        }
    }

    /// Passes the event through the transform to the sink.
    public mutating func receive(_ event: StreamEvent) throws(PipelineError) {
        do {
            let asked = ContinuousClock.now
            let passing = transform.transform(event: event)
            let got = ContinuousClock.now
            transformBusy += got - asked
            for passed in passing { try downstream.receive(passed) }
            downstreamBusy += ContinuousClock.now - got
        } catch {
            throw PipelineError(error)
        }
    }

    /// Flushes the transform into the sink, then finishes the sink.
    public mutating func finish() throws(PipelineError) {
        do {
            let asked = ContinuousClock.now
            let outputs = try transform.finish()
            let events = transform.takeEvents()
            let got = ContinuousClock.now
            transformBusy += got - asked
            produced += Int64(outputs.count)
            for output in outputs { try downstream.write(output) }
            for event in events { try downstream.receive(event) }
            try downstream.finish()
            downstreamBusy += ContinuousClock.now - got
        } catch {
            throw PipelineError(error)
        }
    }

    /// Cancels the sink.
    public mutating func cancel() { downstream.cancel() }
}

extension TransformingSink: StageReporting {
    /// The transform's stage, then the downstream's stages (its figures measured here).
    package func appendStages(to stages: inout [JobReport.Stage], elements: Int64, busy: Duration) {
        stages.append(JobReport.Stage(name: JobReport.stageName(of: transform), role: .transform, elements: produced, busy: transformBusy))
        JobReport.appendStages(of: downstream, role: .sink, elements: produced, busy: downstreamBusy, to: &stages)
    }
}

extension TransformingSink: PacketSink where Transform.Input == MediaSample {}
extension TransformingSink: PCMSink where Transform.Input == PCMBuffer {}

extension MediaSink {
    /// This sink, fed through `transform` (an encoder before a muxer).
    public func transforming<T: MediaTransform>(by transform: T) -> TransformingSink<T, Self> where T.Output == Element {
        TransformingSink(transform, into: self)
    }
}
