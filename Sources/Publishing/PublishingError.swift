public import MediaCore

/// Why a live destination failed: what happened, in words that name the destination (its
/// secrets masked), and whether trying again can help.
///
/// A destination reconnects after a ``isPermanent`` `false` error (refused, reset, a server
/// restarting, a name that does not resolve for now) and stops for good after a permanent one
/// (a wrong password, a mount or stream name taken, a bad stream key).
public struct PublishingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure.
    public enum Reason: String, Sendable, Hashable {
        /// The URL cannot be used: unknown scheme, no host, no stream key, no password.
        case invalidDestination
        /// The host name did not resolve.
        case unresolved
        /// The server could not be reached: refused, unreachable, a TLS handshake failing.
        case connectionFailed
        /// An open connection ended: reset, closed by the server.
        case connectionLost
        /// The server did not answer, or did not take bytes, in time.
        case timedOut
        /// The server answered with something its protocol does not allow.
        case protocolViolation
        /// The server refused the stream for a reason that trying again does not change: a
        /// password, a name taken, a bad stream key.
        case refused
        /// A library the destination needs (libsrt) is not installed.
        case libraryMissing
        /// The server says the stream's name (a mount, an RTMP stream key, an SRT stream id) is
        /// already being published. Permanent, except just after a connection of ours was lost:
        /// the server may still hold our own old session for a while (``LiveDestination``
        /// retries then).
        case nameInUse
        /// The TLS handshake failed: the server's certificate is not trusted for its name, or it
        /// does not speak TLS on that port.
        case untrustedServer
    }

    /// What kind of failure.
    public var reason: Reason
    /// What happened, with the destination's secrets masked.
    public var message: String

    /// An error of `reason`, said in `message` (already masked).
    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    /// Whether trying again cannot help: the destination stops with this error.
    public var isPermanent: Bool {
        switch reason {
        case .invalidDestination, .refused, .libraryMissing, .untrustedServer, .nameInUse: true
        case .unresolved, .connectionFailed, .connectionLost, .timedOut, .protocolViolation: false
        }
    }

    /// The message.
    public var description: String { message }
}

extension PublishingError: PipelineErrorConvertible {
    /// `PipelineError.Code.network`.
    public static var pipelineErrorCode: PipelineError.Code { .network }
}
