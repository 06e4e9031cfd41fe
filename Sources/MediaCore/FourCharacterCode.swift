/// A four-character code: an ISO BMFF box type or sample entry (`mp4a`, `avc1`), or a
/// codec tag, stored as the big-endian 32-bit value the file holds.
public struct FourCharacterCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible,
    ExpressibleByStringLiteral {
    /// The raw representation.
    public let rawValue: UInt32

    /// The value with this raw representation.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The code for four ASCII characters; other lengths are a programming error.
    @inlinable
    public init(stringLiteral value: StaticString) {
        precondition(value.hasPointerRepresentation && value.utf8CodeUnitCount == 4, "a four-character code has four bytes")
        let bytes = value.utf8Start
        self.rawValue = UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16 | UInt32(bytes[2]) << 8 | UInt32(bytes[3])
    }

    /// The four bytes, printable ones as characters and others as `\xNN`.
    public var description: String {
        var text = ""
        text.reserveCapacity(4)
        for shift in stride(from: 24, through: 0, by: -8) {
            let byte = UInt8(truncatingIfNeeded: rawValue >> UInt32(shift))
            if (0x20..<0x7F).contains(byte) {
                text.unicodeScalars.append(UnicodeScalar(byte))
            } else {
                text += "\\x" + String(byte, radix: 16)
            }
        }
        return text
    }
}
