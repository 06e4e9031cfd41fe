public import SystemPackage

/// Why reading or writing a byte stream failed.
public enum ByteStreamError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The operating system refused `operation` on `path`.
    case system(operation: String, path: FilePath, errno: Errno)
    /// `path` is refused before any system call could fail on it: an output that would write
    /// over a device or an input of the job; `reason` says why.
    case refused(path: FilePath, reason: String)

    /// A sentence for people: what it is and, for errors, where.
    public var description: String {
        switch self {
        case .system(let operation, let path, let errno): "cannot \(operation) \(path): \(errno)"
        case .refused(let path, let reason): "\(path): \(reason)"
        }
    }
}
