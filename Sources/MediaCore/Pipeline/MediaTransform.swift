/// Something that turns one kind of media element into another between a source and a sink:
/// an encoder (PCM in, packets out), a decoder (packets in, PCM out), later a resampler or a
/// gain.
///
/// A transform may hold elements back (an encoder needs 1024 frames for a packet, and its
/// priming delays everything): ``transform(_:)`` returns what is ready, possibly nothing, and
/// ``finish()`` returns what was held back at the end of the stream.
public protocol MediaTransform<Input, Output> {
    /// What the transform takes.
    associatedtype Input
    /// What the transform gives.
    associatedtype Output
    /// What processing can fail with.
    associatedtype Failure: Error

    /// Takes one element and returns the elements ready now.
    mutating func transform(_ input: Input) throws(Failure) -> [Output]
    /// Returns what is still held at the end of the stream.
    mutating func finish() throws(Failure) -> [Output]
    /// Sees an upstream event and returns what goes on in its place: by default the event
    /// itself. An encoder drops the upstream's gapless numbers (its own replace them).
    mutating func transform(event: StreamEvent) -> [StreamEvent]
    /// The transform's own events since the last call: after ``transform(_:)`` they precede
    /// that call's outputs; after ``finish()`` they follow its outputs (an encoder's final
    /// gapless numbers). By default none.
    mutating func takeEvents() -> [StreamEvent]
}

extension MediaTransform {
    /// Passes the event on.
    public mutating func transform(event: StreamEvent) -> [StreamEvent] { [event] }
    /// No events of its own.
    public mutating func takeEvents() -> [StreamEvent] { [] }
}
