/// The one bounds-checked MSB-first bit reader that every bitstream parser uses
/// (ADTS headers, AudioSpecificConfig, program_config_element, slice headers).
///
/// It never traps on data: a read past the end throws ``BinaryReadError`` with the absolute byte
/// offset of the bit where the read started.
public struct BitReader: Sendable {
    @usableFromInline let storage: [UInt8]
    @usableFromInline let startByte: Int
    @usableFromInline let endBit: Int
    @usableFromInline var bitPosition: Int
    @usableFromInline let origin: Int64

    /// A reader over all of `bytes`, whose first byte is at absolute offset `baseOffset`.
    public init(_ bytes: [UInt8], baseOffset: Int64 = 0) {
        self.init(bytes, range: 0..<bytes.count, baseOffset: baseOffset)
    }

    /// A reader over `range` of `bytes`; `bytes[0]` is at absolute offset `baseOffset`.
    public init(_ bytes: [UInt8], range: Range<Int>, baseOffset: Int64 = 0) {
        let lower = min(max(range.lowerBound, 0), bytes.count)
        let upper = min(max(range.upperBound, lower), bytes.count)
        self.storage = bytes
        self.startByte = lower
        self.bitPosition = lower * 8
        self.endBit = upper * 8
        self.origin = baseOffset
    }

    /// Bits read since the start of the window.
    @inlinable public var bitsConsumed: Int { bitPosition - startByte * 8 }

    /// Bits left in the window.
    @inlinable public var bitsRemaining: Int { endBit - bitPosition }

    /// Absolute offset of the byte holding the next bit.
    @inlinable public var byteOffset: Int64 { origin + Int64(bitPosition / 8) }

    /// Whether the next bit starts a byte.
    @inlinable public var isByteAligned: Bool { bitPosition % 8 == 0 }

    /// Reads `count` bits (0...64) as an unsigned value, most significant bit first.
    @inlinable
    public mutating func readBits(_ count: Int) throws(BinaryReadError) -> UInt64 {
        precondition((0...64).contains(count), "a bit read takes 0...64 bits")
        guard count <= bitsRemaining else {
            throw BinaryReadError(offset: byteOffset, needed: count, available: bitsRemaining, unit: .bits)
        }
        var value: UInt64 = 0
        var left = count
        while left > 0 {
            let byte = UInt64(storage[bitPosition >> 3])
            let bitInByte = bitPosition & 7
            let take = min(8 - bitInByte, left)
            let shifted = (byte >> UInt64(8 - bitInByte - take)) & ((1 << UInt64(take)) - 1)
            value = (value << UInt64(take)) | shifted
            left -= take
            bitPosition += take
        }
        return value
    }

    /// Reads one bit as a Boolean.
    @inlinable
    public mutating func readFlag() throws(BinaryReadError) -> Bool {
        try readBits(1) == 1
    }

    /// Reads `count` bits as an unsigned integer of type `T` (the caller picks a wide enough type).
    @inlinable
    public mutating func read<T: FixedWidthInteger>(_ count: Int, as type: T.Type = T.self) throws(BinaryReadError) -> T {
        T(truncatingIfNeeded: try readBits(count))
    }

    /// Returns the next `count` bits without consuming them, or `nil` if fewer remain.
    public func peekBits(_ count: Int) -> UInt64? {
        var copy = self
        return try? copy.readBits(count)
    }

    /// Skips `count` bits.
    public mutating func skipBits(_ count: Int) throws(BinaryReadError) {
        guard count >= 0, count <= bitsRemaining else {
            throw BinaryReadError(offset: byteOffset, needed: count, available: bitsRemaining, unit: .bits)
        }
        bitPosition += count
    }

    /// Reads `count` bits verbatim into a ``BitString``.
    public mutating func readBitString(_ count: Int) throws(BinaryReadError) -> BitString {
        guard count >= 0, count <= bitsRemaining else {
            throw BinaryReadError(offset: byteOffset, needed: count, available: bitsRemaining, unit: .bits)
        }
        var bits = BitString()
        var left = count
        while left > 0 {
            let take = min(left, 64)
            bits.append(try readBits(take), bitCount: take)
            left -= take
        }
        return bits
    }

    /// Reads every remaining bit verbatim.
    public mutating func readRemainingBits() -> BitString {
        // Cannot fail: exactly the remaining bits are asked for.
        (try? readBitString(bitsRemaining)) ?? BitString()
    }

    /// Skips to the next byte boundary of the window and returns the skipped bits.
    @discardableResult
    public mutating func alignToByte() -> BitString {
        let pad = (8 - bitsConsumed % 8) % 8
        return (try? readBitString(min(pad, bitsRemaining))) ?? BitString()
    }
}
