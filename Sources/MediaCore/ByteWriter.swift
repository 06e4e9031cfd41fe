/// Big- and little-endian byte writer, the inverse of ``ByteReader``.
public struct ByteWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8]

    /// An empty writer with room for `capacity` bytes.
    public init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Bytes written so far.
    public var count: Int { bytes.count }

    /// Writes one byte.
    public mutating func write(_ value: UInt8) { bytes.append(value) }

    /// Writes the low `byteCount` bytes of `value`, most significant first.
    public mutating func writeBigEndian(_ value: UInt64, byteCount: Int) {
        precondition((1...8).contains(byteCount))
        for shift in stride(from: (byteCount - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    /// Writes the low `byteCount` bytes of `value`, least significant first.
    public mutating func writeLittleEndian(_ value: UInt64, byteCount: Int) {
        precondition((1...8).contains(byteCount))
        for shift in stride(from: 0, to: byteCount * 8, by: 8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    /// Writes a big-endian `UInt16`.
    public mutating func write(_ value: UInt16) { writeBigEndian(UInt64(value), byteCount: 2) }
    /// Writes a big-endian `UInt32`.
    public mutating func write(_ value: UInt32) { writeBigEndian(UInt64(value), byteCount: 4) }
    /// Writes a big-endian `UInt64`.
    public mutating func write(_ value: UInt64) { writeBigEndian(value, byteCount: 8) }

    /// Writes bytes verbatim.
    public mutating func write(contentsOf data: some Sequence<UInt8>) { bytes.append(contentsOf: data) }

    /// Overwrites a big-endian value already written at `index` (for sizes known only at the end).
    public mutating func patchBigEndian(_ value: UInt64, byteCount: Int, at index: Int) {
        precondition(index >= 0 && index + byteCount <= bytes.count)
        for i in 0..<byteCount {
            bytes[index + i] = UInt8(truncatingIfNeeded: value >> UInt64((byteCount - 1 - i) * 8))
        }
    }
}
