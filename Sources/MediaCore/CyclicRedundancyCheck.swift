/// The cyclic redundancy checks media formats carry, each computed by table, a byte at a time.
///
/// - ``crc32(_:preset:)``: polynomial 0x04C11DB7, most-significant bit first, no final
///   inversion: MPEG-2 sections (ISO/IEC 13818-1 Annex A, preset all ones) and Ogg pages
///   (RFC 3533 6, preset zero).
/// - ``crc16(_:preset:)``: polynomial 0x8005 reflected (0xA001), least-significant bit first,
///   no final inversion ("CRC-16/ARC"): the LAME tag's music and tag CRCs.
/// - ``crc16MostSignificantFirst(_:preset:)``: polynomial 0x8005, most-significant bit first,
///   preset zero ("CRC-16/UMTS"): a FLAC frame's footer (RFC 9639 9.3).
/// - ``crc8(_:preset:)``: polynomial 0x07, most-significant bit first, preset zero: a FLAC
///   frame header's last byte (RFC 9639 9.1.8).
public enum CyclicRedundancyCheck {
    /// The 32-bit CRC of `bytes` (polynomial 0x04C11DB7, MSB first), the register preset to
    /// `preset`.
    @inlinable
    public static func crc32(_ bytes: some Sequence<UInt8>, preset: UInt32) -> UInt32 {
        var crc = preset
        for byte in bytes { crc = (crc << 8) ^ crc32Table[Int((crc >> 24) ^ UInt32(byte))] }
        return crc
    }

    /// The 16-bit CRC of `bytes` (polynomial 0x8005 reflected, LSB first), the register preset
    /// to `preset`: continue a CRC by passing the one so far.
    @inlinable
    public static func crc16(_ bytes: some Sequence<UInt8>, preset: UInt16 = 0) -> UInt16 {
        var crc = preset
        for byte in bytes { crc = (crc >> 8) ^ crc16Table[Int((crc ^ UInt16(byte)) & 0xFF)] }
        return crc
    }

    /// The 16-bit CRC of `bytes` (polynomial 0x8005, MSB first), the register preset to
    /// `preset`: continue a CRC by passing the one so far.
    @inlinable
    public static func crc16MostSignificantFirst(_ bytes: some Sequence<UInt8>, preset: UInt16 = 0) -> UInt16 {
        var crc = preset
        for byte in bytes { crc = (crc << 8) ^ crc16MSBTable[Int((crc >> 8) ^ UInt16(byte))] }
        return crc
    }

    /// The 8-bit CRC of `bytes` (polynomial 0x07, MSB first), the register preset to `preset`.
    @inlinable
    public static func crc8(_ bytes: some Sequence<UInt8>, preset: UInt8 = 0) -> UInt8 {
        var crc = preset
        for byte in bytes { crc = crc8Table[Int(crc ^ byte)] }
        return crc
    }

    /// Every byte value shifted through the 16-bit register, MSB first.
    @usableFromInline static let crc16MSBTable: [UInt16] = (0..<256).map { value in
        var crc = UInt16(value) << 8
        for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x8005 : crc << 1 }
        return crc
    }

    /// Every byte value shifted through the 8-bit register.
    @usableFromInline static let crc8Table: [UInt8] = (0..<256).map { value in
        var crc = UInt8(value)
        for _ in 0..<8 { crc = crc & 0x80 != 0 ? (crc << 1) ^ 0x07 : crc << 1 }
        return crc
    }

    /// Every byte value shifted through the 32-bit register.
    @usableFromInline static let crc32Table: [UInt32] = (0..<256).map { value in
        var crc = UInt32(value) << 24
        for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        return crc
    }

    /// Every byte value shifted through the reflected 16-bit register.
    @usableFromInline static let crc16Table: [UInt16] = (0..<256).map { value in
        var crc = UInt16(value)
        for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xA001 : crc >> 1 }
        return crc
    }
}
