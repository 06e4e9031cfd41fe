/// A four-character code: an ISO BMFF box type or sample entry (`mp4a`, `avc1`), or a
/// codec tag, stored as the big-endian 32-bit value the file holds.
public struct FourCharacterCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible,
    ExpressibleByStringLiteral {
    /// The raw representation.
    public let rawValue: UInt32

    /// The value with this raw representation.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The code for four ASCII characters; other lengths are a programming error.
    public init(stringLiteral value: StaticString) {
        let utf8 = value.withUTF8Buffer { Array($0) }
        precondition(utf8.count == 4, "a four-character code has four bytes")
        self.rawValue = utf8.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The four bytes, printable ones as characters and others as `\xNN`.
    public var description: String {
        (0..<4).map { index -> String in
            let byte = UInt8(truncatingIfNeeded: rawValue >> UInt32(24 - index * 8))
            return (0x20..<0x7F).contains(byte) ? String(UnicodeScalar(byte)) : "\\x" + String(byte, radix: 16)
        }.joined()
    }
}
