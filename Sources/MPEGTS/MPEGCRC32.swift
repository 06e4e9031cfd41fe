/// The CRC of MPEG-2 sections, `CRC_32` (ISO/IEC 13818-1, Annex A, table A.1): polynomial
/// 0x04C11DB7, register preset to all ones, bits in most-significant first, no final inversion.
///
/// A section with its `CRC_32` appended checks to zero: the decoder model of Annex A.
public enum MPEGCRC32 {
    /// The CRC of `bytes`, to be written big-endian after them.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc = (crc << 8) ^ table[Int((crc >> 24) ^ UInt32(byte))]
        }
        return crc
    }

    /// The CRC of every byte value shifted through the register.
    private static let table: [UInt32] = (0..<256).map { value in
        var crc = UInt32(value) << 24
        for _ in 0..<8 {
            crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1
        }
        return crc
    }
}
