#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif
internal import SystemPackage

/// The process's environment and small configuration files, for a library that reads them
/// itself (an object store's credentials): thin wrappers of getenv(3) and of a whole read.
public enum ProcessEnvironment {
    /// The value of the environment variable `name`, `nil` when it is not set.
    @Sendable public static func value(of name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The text of the regular file at `path` (UTF-8, at most 1 MiB), `nil` when it cannot be
    /// read or is larger.
    @Sendable public static func text(ofFile path: String) -> String? {
        guard let source = try? FileByteSource(regularFileAt: FilePath(path)), source.byteCount <= 1 << 20,
              let bytes = try? source.read(at: 0, count: Int(source.byteCount)) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
