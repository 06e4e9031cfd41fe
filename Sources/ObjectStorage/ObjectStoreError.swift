public import MediaCore
internal import AsyncHTTPClient
internal import NIOCore
internal import NIOPosix
internal import NIOSSL

/// Why an object store over HTTP (S3, an HTTP ingest point) could not be reached or refused a
/// request, in words that name the store, the object and what the server said (S3's `Code` and
/// `Message`); never a secret.
public struct ObjectStoreError: Error, Sendable, CustomStringConvertible, PipelineErrorConvertible, TransientError {
    /// What kind of failure.
    public enum Kind: Sendable, Hashable {
        /// No credentials were found.
        case credentials
        /// The URL or the endpoint is not one such a store has.
        case address
        /// The server answered with an error status.
        case refused
        /// No connection could be made to the server, every time it was tried.
        case unreachable
        /// The server did not answer in time.
        case timedOut
        /// No TLS session could be made: the server's certificate is not one this machine
        /// trusts (or not for its name), or the server does not speak TLS. Trying again will not
        /// change that.
        case tls
        /// The exchange failed otherwise (a connection closed mid-answer).
        case failed
    }

    /// What kind of failure.
    public let kind: Kind
    /// The HTTP status, when the server answered.
    public let status: Int?
    /// S3's error code (`SignatureDoesNotMatch`, `NoSuchBucket`), when the server said one.
    public let code: String?
    private let message: String

    /// An error of `kind` said in `message`.
    public init(_ kind: Kind, _ message: String, status: Int? = nil, code: String? = nil) {
        self.kind = kind
        self.message = message
        self.status = status
        self.code = code
    }

    /// The sentence.
    public var description: String { message }

    /// Whether trying again later may succeed: no connection, no answer in time, an exchange
    /// cut short (but not a TLS handshake refused), or a refusal with a status that says so
    /// (5xx, 408, 429) or an S3 code that a later request can cure (`RequestTimeTooSkewed`,
    /// `ExpiredToken`, `SlowDown`).
    public var isTransient: Bool {
        switch kind {
        case .unreachable, .timedOut, .failed: true
        case .credentials, .address, .tls: false
        case .refused:
            status.map(HTTPObjectExchange.isTransient(status:)) == true
                || ["RequestTimeTooSkewed", "ExpiredToken", "SlowDown", "RequestTimeout"].contains(code ?? "")
        }
    }

    /// A network error in a pipeline.
    public static var pipelineErrorCode: PipelineError.Code { .network }
}

/// The words for a failed connection or exchange: the system's for an `errno` (`Connection
/// refused`, as strerror(3) gives them), each attempt's for a connect that tried several
/// addresses, the client's timeouts said plainly; the error's own otherwise.
package func socketErrorWords(_ error: any Error) -> String {
    if let error = error as? IOError { return systemErrorWords(error.errnoCode) }
    if let error = error as? NIOConnectionError {
        let causes = Set(error.connectionErrors.map { socketErrorWords($0.error) }).sorted()
        if causes.isEmpty, error.dnsAError != nil || error.dnsAAAAError != nil { return "the host name \(error.host) does not resolve" }
        return causes.isEmpty ? "\(error)" : causes.joined(separator: "; ")
    }
    if let error = error as? NIOSSLError {
        if case .handshakeFailed(let cause) = error, "\(cause)".contains("CERTIFICATE_VERIFY_FAILED") {
            return "the server's certificate is not trusted here (\(cause))"
        }
        if case .handshakeFailed = error { return "the TLS handshake failed (does the endpoint speak https?)" }
        return "TLS: \(error)"
    }
    if error is NIOSSLExtraError || error is BoringSSLError { return "TLS: \(error)" }
    if let error = error as? HTTPClientError {
        switch error {
        case .connectTimeout: return "no connection within the connect timeout"
        case .deadlineExceeded, .readTimeout: return "no answer in time"
        default: return "\(error)"
        }
    }
    return "\(error)"
}

/// Whether `error` says no connection was made (refused, unreachable, not resolved, not made in
/// time): nothing of the request was sent, so it may be sent again.
func isConnectionFailure(_ error: any Error) -> Bool {
    if error is NIOConnectionError || error is IOError { return true }
    if let error = error as? ChannelError, case .connectTimeout = error { return true }
    if let error = error as? HTTPClientError, error == .connectTimeout { return true }
    return false
}

/// Whether `error` is a TLS failure: a handshake refused (a certificate not trusted, or for
/// another name), or a server that does not speak TLS.
func isTLSFailure(_ error: any Error) -> Bool {
    error is NIOSSLError || error is NIOSSLExtraError || error is BoringSSLError
}

/// Whether `error` says the server did not answer in time.
func isTimeout(_ error: any Error) -> Bool {
    guard let error = error as? HTTPClientError else { return false }
    return error == .deadlineExceeded || error == .readTimeout
}
