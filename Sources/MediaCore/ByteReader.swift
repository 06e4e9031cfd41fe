/// The one bounds-checked reader of big- and little-endian binary data that every parser uses.
///
/// A `ByteReader` reads a window of a byte array. It never traps: a read past the end of the
/// window throws ``BinaryReadError`` naming the absolute offset. ``readBytes(_:)`` checks the
/// count against what remains *before* it allocates, so a hostile length field cannot make a
/// parser allocate more than the data it was given.
///
/// Sub-readers (``readReader(_:)``) share the storage (copy-on-write), so carving a box or a
/// descriptor out of its parent costs nothing.
public struct ByteReader: Sendable {
    @usableFromInline let storage: [UInt8]
    @usableFromInline var position: Int
    @usableFromInline let end: Int
    @usableFromInline let origin: Int64

    /// A reader over all of `bytes`, whose first byte is at absolute offset `baseOffset`.
    public init(_ bytes: [UInt8], baseOffset: Int64 = 0) {
        self.storage = bytes
        self.position = 0
        self.end = bytes.count
        self.origin = baseOffset
    }

    /// A reader over `range` of `bytes`; `bytes[0]` is at absolute offset `baseOffset`.
    ///
    /// The range is clamped to the array, so it never traps.
    public init(_ bytes: [UInt8], range: Range<Int>, baseOffset: Int64 = 0) {
        self.storage = bytes
        self.position = min(max(range.lowerBound, 0), bytes.count)
        self.end = min(max(range.upperBound, self.position), bytes.count)
        self.origin = baseOffset
    }

    /// Absolute offset of the next byte to be read.
    @inlinable public var offset: Int64 { origin + Int64(position) }

    /// Bytes left in the window.
    @inlinable public var remaining: Int { end - position }

    /// Whether every byte of the window has been read.
    @inlinable public var isAtEnd: Bool { position >= end }

    /// The unread bytes, without copying.
    public var remainingBytes: ArraySlice<UInt8> { storage[position..<end] }

    @inlinable
    func check(_ count: Int) throws(BinaryReadError) {
        guard count >= 0, count <= end - position else {
            throw BinaryReadError(offset: offset, needed: count, available: remaining, unit: .bytes)
        }
    }

    /// Reads one byte.
    @inlinable
    public mutating func readUInt8() throws(BinaryReadError) -> UInt8 {
        try check(1)
        defer { position += 1 }
        return storage[position]
    }

    /// Reads a big-endian unsigned integer of `byteCount` bytes (1 to 8).
    @inlinable
    public mutating func readBigEndian(byteCount: Int) throws(BinaryReadError) -> UInt64 {
        precondition((1...8).contains(byteCount), "byteCount must be 1...8")
        try check(byteCount)
        var value: UInt64 = 0
        for index in position..<(position + byteCount) {
            value = value << 8 | UInt64(storage[index])
        }
        position += byteCount
        return value
    }

    /// Reads a little-endian unsigned integer of `byteCount` bytes (1 to 8).
    @inlinable
    public mutating func readLittleEndian(byteCount: Int) throws(BinaryReadError) -> UInt64 {
        precondition((1...8).contains(byteCount), "byteCount must be 1...8")
        try check(byteCount)
        var value: UInt64 = 0
        for index in (position..<(position + byteCount)).reversed() {
            value = value << 8 | UInt64(storage[index])
        }
        position += byteCount
        return value
    }

    /// Reads a big-endian `UInt16`.
    @inlinable public mutating func readUInt16() throws(BinaryReadError) -> UInt16 {
        UInt16(truncatingIfNeeded: try readBigEndian(byteCount: 2))
    }

    /// Reads a big-endian 24-bit value.
    @inlinable public mutating func readUInt24() throws(BinaryReadError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readBigEndian(byteCount: 3))
    }

    /// Reads a big-endian `UInt32`.
    @inlinable public mutating func readUInt32() throws(BinaryReadError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readBigEndian(byteCount: 4))
    }

    /// Reads a big-endian `UInt64`.
    @inlinable public mutating func readUInt64() throws(BinaryReadError) -> UInt64 {
        try readBigEndian(byteCount: 8)
    }

    /// Reads `count` bytes into a new array; the count is checked before anything is allocated.
    public mutating func readBytes(_ count: Int) throws(BinaryReadError) -> [UInt8] {
        try check(count)
        defer { position += count }
        return Array(storage[position..<(position + count)])
    }

    /// Skips `count` bytes.
    @inlinable
    public mutating func skip(_ count: Int) throws(BinaryReadError) {
        try check(count)
        position += count
    }

    /// Looks at the byte `ahead` bytes after the current one without consuming anything.
    public func peekUInt8(ahead: Int = 0) -> UInt8? {
        let index = position + ahead
        guard ahead >= 0, index < end else { return nil }
        return storage[index]
    }

    /// Consumes the next `count` bytes and returns a reader over just them.
    public mutating func readReader(_ count: Int) throws(BinaryReadError) -> ByteReader {
        try check(count)
        let sub = ByteReader(storage, range: position..<(position + count), baseOffset: origin)
        position += count
        return sub
    }

    /// A bit reader over the unread bytes; this reader is not advanced.
    public func bitReader() -> BitReader {
        BitReader(storage, range: position..<end, baseOffset: origin)
    }
}
