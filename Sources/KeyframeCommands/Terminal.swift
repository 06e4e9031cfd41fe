#if canImport(Glibc)
import MediaCore
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Standard error and the few number formats the commands print, without Foundation.
enum Terminal {
    /// Writes `text` to stderr.
    static func error(_ text: String) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(STDERR_FILENO, raw.baseAddress! + offset, raw.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
    }

    /// Writes a `warning: …` line to stderr.
    static func warning(_ text: String) {
        error("warning: \(text)\n")
    }

    /// Whether stderr is a terminal (and not a dumb one).
    static var standardErrorIsTerminal: Bool {
        guard isatty(STDERR_FILENO) == 1 else { return false }
        if let term = getenv("TERM"), String(cString: term) == "dumb" { return false }
        return true
    }

    /// `value` with exactly `digits` digits after the point.
    static func fixed(_ value: Double, digits: Int) -> String { MediaCore.fixed(value, digits: digits) }

    /// `value` right-aligned in `width` characters.
    static func padded(_ value: String, width: Int) -> String {
        String(repeating: " ", count: max(0, width - value.count)) + value
    }
}
