/// How a destination tries again after a passing failure: capped exponential backoff.
///
/// The first retry waits ``initialDelay``; each next one twice as long, up to ``maximumDelay``;
/// a connection that then holds resets it. A permanent refusal (``PublishingError/isPermanent``)
/// is never retried.
public struct ReconnectPolicy: Sendable, Hashable {
    /// The wait before the first retry.
    public var initialDelay: Duration
    /// The longest wait between retries.
    public var maximumDelay: Duration
    /// How long one attempt (connect and announce the stream) may take.
    public var connectTimeout: Duration
    /// How long one send may wait for the server to take bytes before the connection counts as
    /// broken.
    public var sendTimeout: Duration
    /// How long after a connection of ours was lost a "name in use" answer
    /// (``PublishingError/Reason/nameInUse``) is taken for our own old session, still held by
    /// the server, and retried: Icecast drops a silent source after its `source-timeout` (10 s
    /// by default), SRT a silent peer after 5 s.
    public var nameInUseGrace: Duration = .seconds(60)

    /// A policy; by default 0.5 s doubling to 30 s, 10 s to connect, 10 s per send.
    public init(initialDelay: Duration = .milliseconds(500), maximumDelay: Duration = .seconds(30),
                connectTimeout: Duration = .seconds(10), sendTimeout: Duration = .seconds(10)) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.connectTimeout = connectTimeout
        self.sendTimeout = sendTimeout
    }

    /// The wait before retry number `attempt` (1 for the first).
    public func delay(beforeAttempt attempt: Int) -> Duration {
        var delay = initialDelay
        for _ in 1..<max(1, min(attempt, 32)) {
            delay *= 2
            if delay >= maximumDelay { return maximumDelay }
        }
        return min(delay, maximumDelay)
    }
}
