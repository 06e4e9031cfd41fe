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
}
