public import MediaCore

/// A `program_clock_reference` (ISO/IEC 13818-1, 2.4.3.4 and 2.4.3.5): the 27 MHz system clock
/// as a 33-bit base in 90 kHz units and a 9-bit extension counting 27 MHz cycles (0–299).
public struct ProgramClockReference: Sendable, Hashable, CustomStringConvertible {
    /// `program_clock_reference_base`: 90 kHz units, modulo 2^33.
    public var base: Int64
    /// `program_clock_reference_extension`: 27 MHz cycles past the base, 0–299 (9 bits).
    public var extensionValue: UInt16

    /// A PCR of `base` (taken modulo 2^33) and `extensionValue` (its low 9 bits).
    public init(base: Int64, extensionValue: UInt16 = 0) {
        self.base = base & (MPEGTS.timestampModulus - 1)
        self.extensionValue = extensionValue & 0x1FF
    }

    /// The clock in 27 MHz cycles: `base × 300 + extension` (2.4.3.5, equation 2-1).
    public var systemClock: Int64 { base * 300 + Int64(extensionValue) }

    /// The 48 bits as written: the base, six reserved ones, the extension.
    public var bytes: [UInt8] {
        let base = UInt64(base)
        let ext = UInt64(extensionValue)
        return [UInt8(truncatingIfNeeded: base >> 25), UInt8(truncatingIfNeeded: base >> 17), UInt8(truncatingIfNeeded: base >> 9),
                UInt8(truncatingIfNeeded: base >> 1), UInt8(truncatingIfNeeded: (base & 1) << 7 | 0x7E | ext >> 8),
                UInt8(truncatingIfNeeded: ext)]
    }

    /// Reads the 6 bytes of a PCR or OPCR field (the reserved bits are not checked: 2.4.3.4
    /// gives them no meaning for a decoder).
    public init(from reader: inout ByteReader) throws(BinaryReadError) {
        let word = try reader.readBigEndian(byteCount: 6)
        base = Int64(word >> 15)
        extensionValue = UInt16(word & 0x1FF)
    }

    /// `base+extension/300` in 90 kHz units.
    public var description: String { "\(base)+\(extensionValue)/300" }
}
