#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `--json` output of every command: one pretty-printed object on stdout, keys sorted.
enum JSONOutput {
    /// Prints `value` as JSON on stdout.
    static func print(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        Swift.print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }
}
