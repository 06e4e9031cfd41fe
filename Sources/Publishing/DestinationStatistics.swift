internal import Synchronization

/// What one live destination did: bytes and frames sent, frames dropped, reconnects, time
/// connected, its state and last error. Shared between the destination's thread, which
/// updates it, and whoever reports it (`--json`, a progress line), which reads ``snapshot``.
public final class DestinationStatistics: Sendable {
    /// Where a destination stands.
    public enum State: String, Sendable, Hashable {
        /// Not connected yet: the first frame has not come, or the first connection is being made.
        case starting
        /// Connected and sending.
        case connected
        /// Waiting to connect again after a passing failure.
        case reconnecting
        /// Stopped for good after a permanent refusal (``PublishingError/isPermanent``).
        case stopped
        /// Ended cleanly: what was queued sent, the stream ended in the protocol's way.
        case finished
        /// Ended while not connected (its server away): what was queued was dropped.
        case abandoned
    }

    /// The figures at one moment.
    public struct Snapshot: Sendable, Hashable {
        /// The destination, its secrets masked.
        public var destination: String
        /// The protocol (`rtmp`, `icecast`, `srt`).
        public var scheme: String
        /// The bitrate of the stream sent, in bits per second (0 before the first frame).
        public var bitrate: Int = 0
        /// Where it stands.
        public var state: State = .starting
        /// Bytes handed to the transport (headers and protocol messages included).
        public var bytesSent: Int64 = 0
        /// AAC frames sent.
        public var framesSent: Int64 = 0
        /// Frames dropped for this destination alone: its queue was full, or it was not
        /// connected when they were due, or a connection broke while they were in flight.
        public var framesDropped: Int64 = 0
        /// Connections made again after a passing failure.
        public var reconnects: Int = 0
        /// Connections tried after a failure (the first connection's failure included), whether
        /// they were made or not.
        public var reconnectAttempts: Int = 0
        /// Time connected, over every connection.
        public var connectedTime: Duration = .zero
        /// The last error met, its secrets masked.
        public var lastError: String?

        /// Seconds connected.
        public var connectedSeconds: Double {
            connectedTime.inSeconds
        }
    }

    private struct Inner {
        var snapshot: Snapshot
        var connectedSince: ContinuousClock.Instant?
    }

    private let inner: Mutex<Inner>

    /// Figures for `destination` (masked) over `scheme`, all zero.
    public init(destination: String, scheme: String) {
        inner = Mutex(Inner(snapshot: Snapshot(destination: destination, scheme: scheme)))
    }

    /// The figures now (time connected counted up to now).
    public var snapshot: Snapshot {
        inner.withLock { inner in
            var snapshot = inner.snapshot
            if let since = inner.connectedSince { snapshot.connectedTime += ContinuousClock.now - since }
            return snapshot
        }
    }

    func update(_ change: (inout Snapshot) -> Void) { inner.withLock { change(&$0.snapshot) } }

    func addBytes(_ count: Int) { inner.withLock { $0.snapshot.bytesSent += Int64(count) } }

    /// A connection is tried; `again` when one has failed before (a retry).
    func attempting(again: Bool) {
        if again { inner.withLock { $0.snapshot.reconnectAttempts += 1 } }
    }

    func connected(again: Bool) {
        inner.withLock { inner in
            inner.snapshot.state = .connected
            if again { inner.snapshot.reconnects += 1 }
            inner.connectedSince = .now
        }
    }

    func disconnected(_ state: State, error: PublishingError?) {
        inner.withLock { inner in
            if let since = inner.connectedSince { inner.snapshot.connectedTime += ContinuousClock.now - since }
            inner.connectedSince = nil
            inner.snapshot.state = state
            if let error { inner.snapshot.lastError = error.message }
        }
    }
}
