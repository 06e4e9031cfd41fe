public import MediaCore

/// The CRC of MPEG-2 sections, `CRC_32` (ISO/IEC 13818-1, Annex A, table A.1): polynomial
/// 0x04C11DB7, register preset to all ones, bits in most-significant first, no final inversion.
///
/// A section with its `CRC_32` appended checks to zero: the decoder model of Annex A.
public enum MPEGCRC32 {
    /// The CRC of `bytes`, to be written big-endian after them.
    @inlinable
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        CyclicRedundancyCheck.crc32(bytes, preset: 0xFFFF_FFFF)
    }
}
