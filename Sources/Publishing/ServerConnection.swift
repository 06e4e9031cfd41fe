/// A connected byte stream to a server: what an RTMP, Icecast or SRT session talks through.
///
/// One thread (the destination's) sends and receives; ``close(graceful:)`` may come from any
/// thread, and makes a ``send(_:deadline:)`` or ``receive(deadline:)`` waiting on it throw.
/// Every wait is bounded by a deadline, so a server that stops reading never holds the
/// destination's thread for ever.
public protocol ServerConnection: AnyObject, Sendable {
    /// Sends every byte of `bytes`, waiting no later than `deadline` for the transport to take
    /// them.
    ///
    /// - Throws: ``PublishingError/Reason/connectionLost`` when the connection ended,
    ///   ``PublishingError/Reason/timedOut`` at the deadline.
    func send(_ bytes: [UInt8], deadline: ContinuousClock.Instant) throws(PublishingError)
    /// The bytes that have arrived, at least one, waiting no later than `deadline`.
    ///
    /// - Throws: ``PublishingError/Reason/connectionLost`` at the end of the stream,
    ///   ``PublishingError/Reason/timedOut`` at the deadline.
    func receive(deadline: ContinuousClock.Instant) throws(PublishingError) -> [UInt8]
    /// The bytes that have arrived so far, without waiting (empty when none).
    func receiveAvailable() throws(PublishingError) -> [UInt8]
    /// Ends the connection. `graceful`: what was sent is delivered first (TCP's orderly close,
    /// SRT's linger), waiting at most a few seconds; otherwise it is dropped at once.
    func close(graceful: Bool)
}
