/// An error that says whether the same request, made again later, may succeed: a server that
/// was down or busy (a refused connection, HTTP 5xx, 408, 429), as against one that refused it
/// for good (a wrong password, a missing bucket).
public protocol TransientError: Error {
    /// Whether trying again later may succeed.
    var isTransient: Bool { get }
}

extension PipelineError {
    /// Whether the error, or the error it wraps, is a ``TransientError`` that says trying again
    /// later may succeed.
    public var isTransient: Bool {
        (underlying as? any TransientError)?.isTransient ?? false
    }
}
