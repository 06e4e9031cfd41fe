/// A run of bits that a parser keeps verbatim, so that writing a structure back gives the
/// same bits it read: trailing padding, reserved fields, configurations we do not interpret.
///
/// Bits are stored most significant first; the unused low bits of the last byte are zero.
public struct BitString: Sendable, Hashable, CustomStringConvertible {
    /// The bits, packed MSB-first.
    public private(set) var bytes: [UInt8]
    /// How many bits of ``bytes`` are meaningful.
    public private(set) var count: Int

    /// The empty bit string.
    public init() {
        self.bytes = []
        self.count = 0
    }

    /// Whole bytes as a bit string.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
        self.count = bytes.count * 8
    }

    /// Appends the low `bitCount` bits of `value` (0...64 bits).
    public mutating func append(_ value: UInt64, bitCount: Int) {
        precondition((0...64).contains(bitCount))
        for shift in stride(from: bitCount - 1, through: 0, by: -1) {
            let bit = (value >> UInt64(shift)) & 1
            if count % 8 == 0 { bytes.append(0) }
            if bit == 1 { bytes[bytes.count - 1] |= UInt8(0x80) >> UInt8(count % 8) }
            count += 1
        }
    }

    /// Whether every bit is zero.
    public var isAllZero: Bool { bytes.allSatisfy { $0 == 0 } }

    /// A sentence for people: what it is and, for errors, where.
    public var description: String {
        var text = ""
        for index in 0..<count {
            text.append((bytes[index / 8] >> UInt8(7 - index % 8)) & 1 == 1 ? "1" : "0")
        }
        return text
    }
}
