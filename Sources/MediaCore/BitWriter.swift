/// MSB-first bit writer, the inverse of ``BitReader``.
public struct BitWriter: Sendable {
    /// The bits written so far, packed MSB-first; a partial last byte is zero-padded.
    public private(set) var bits = BitString()

    /// An empty writer.
    public init() {}

    /// Bits written so far.
    public var bitCount: Int { bits.count }

    /// The bytes written so far (the last one zero-padded if the bit count is not a multiple of 8).
    public var bytes: [UInt8] { bits.bytes }

    /// Writes the low `count` bits of `value`. Bits of `value` above `count` must be zero:
    /// a value that does not fit is a programming error, caught here rather than written wrong.
    public mutating func write<T: BinaryInteger>(_ value: T, bits count: Int) {
        let wide = UInt64(truncatingIfNeeded: value)
        precondition(count == 64 || wide >> UInt64(count) == 0, "value \(value) does not fit in \(count) bits")
        self.bits.append(wide, bitCount: count)
    }

    /// Writes one bit.
    public mutating func writeFlag(_ flag: Bool) {
        bits.append(flag ? 1 : 0, bitCount: 1)
    }

    /// Writes a run of bits verbatim.
    public mutating func write(_ string: BitString) {
        var reader = BitReader(string.bytes)
        var left = string.count
        while left > 0 {
            let take = min(left, 64)
            // Cannot fail: `string` holds `count` bits.
            let chunk = (try? reader.readBits(take)) ?? 0
            bits.append(chunk, bitCount: take)
            left -= take
        }
    }

    /// Pads with zero bits to the next byte boundary.
    public mutating func alignToByte() {
        while bits.count % 8 != 0 { bits.append(0, bitCount: 1) }
    }
}
