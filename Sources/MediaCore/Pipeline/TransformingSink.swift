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

    /// `downstream`, fed through `transform`.
    public init(_ transform: Transform, into downstream: Downstream) {
        self.transform = transform
        self.downstream = downstream
    }

    /// Transforms `element` and writes what is ready.
    public mutating func write(_ element: Transform.Input) throws(PipelineError) {
        do {
            let outputs = try transform.transform(element)
            for event in transform.takeEvents() { try downstream.receive(event) }
            for output in outputs { try downstream.write(output) }
        } catch {
            throw PipelineError(error)
        }
    }

    /// Passes the event through the transform to the sink.
    public mutating func receive(_ event: StreamEvent) throws(PipelineError) {
        do {
            for passed in transform.transform(event: event) { try downstream.receive(passed) }
        } catch {
            throw PipelineError(error)
        }
    }

    /// Flushes the transform into the sink, then finishes the sink.
    public mutating func finish() throws(PipelineError) {
        do {
            for output in try transform.finish() { try downstream.write(output) }
            for event in transform.takeEvents() { try downstream.receive(event) }
            try downstream.finish()
        } catch {
            throw PipelineError(error)
        }
    }

    /// Cancels the sink.
    public mutating func cancel() { downstream.cancel() }
}

extension TransformingSink: PacketSink where Transform.Input == MediaSample {}
extension TransformingSink: PCMSink where Transform.Input == PCMBuffer {}

extension MediaSink {
    /// This sink, fed through `transform` (an encoder before a muxer).
    public func transforming<T: MediaTransform>(by transform: T) -> TransformingSink<T, Self> where T.Output == Element {
        TransformingSink(transform, into: self)
    }
}
