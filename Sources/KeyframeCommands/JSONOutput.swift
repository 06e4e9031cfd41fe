#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `--json` output of every command: one pretty-printed object on stdout, keys sorted (or,
/// for a batch, one compact object per line).
enum JSONOutput {
    /// Prints `value` as JSON on stdout.
    static func print(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        Swift.print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// `value` as one line of JSON, keys sorted.
    static func line(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
