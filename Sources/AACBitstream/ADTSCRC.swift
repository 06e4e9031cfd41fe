public import MediaCore

/// The CRC of ADTS `crc_check` (ISO/IEC 13818-7, 8.1.1.1; the same in 14496-3, 1.A.3.2):
/// CRC-16 with polynomial 0x8005, initial value 0xFFFF, most significant bit first, no final XOR.
///
/// The CRC runs over the 56 header bits and then over *regions* of the raw data block: for a
/// single_channel_element or lfe_channel_element the 192 bits after `id_syn_ele` (zero-padded
/// when the element is shorter); for a channel_pair_element also 128 bits from the start of the
/// second individual_channel_stream, which only a full Huffman parse of the first one can find.
/// ``ADTSFrame/crcStatus`` therefore says *verified* only when a check really ran.
public struct ADTSCRC: Sendable, Hashable {
    /// The running CRC register.
    public private(set) var value: UInt16 = 0xFFFF

    /// A CRC at its initial value 0xFFFF.
    public init() {}

    /// Feeds the low `count` bits of `bits`, most significant first.
    public mutating func update(bits: UInt64, count: Int) {
        for shift in stride(from: count - 1, through: 0, by: -1) {
            let input = UInt16((bits >> UInt64(shift)) & 1)
            let top = (value >> 15) & 1
            value <<= 1
            if top ^ input == 1 { value ^= 0x8005 }
        }
    }

    /// Feeds whole bytes.
    public mutating func update(bytes: some Sequence<UInt8>) {
        for byte in bytes { update(bits: UInt64(byte), count: 8) }
    }

    /// Feeds `count` bits from `reader` (padding with zero bits past its end, as the standard does
    /// for an element shorter than its CRC region).
    public mutating func update(from reader: inout BitReader, count: Int) {
        var left = count
        while left > 0 {
            let take = min(left, 32, reader.bitsRemaining)
            if take == 0 { update(bits: 0, count: left); return }
            // Cannot fail: `take` is within the bits that remain.
            update(bits: (try? reader.readBits(take)) ?? 0, count: take)
            left -= take
        }
    }
}

/// What is known about a frame's `crc_check` (ISO/IEC 13818-7, 8.1.1.1): absent, checked, or
/// present but not checkable without decoding.
public enum ADTSCRCStatus: Sendable, Hashable {
    /// `protection_absent` is 1: the frame has no CRC.
    case absent
    /// The CRC was computed over its whole region and matches.
    case valid
    /// The CRC was computed over its whole region and does not match.
    case mismatch(stored: UInt16, computed: UInt16)
    /// The frame carries a CRC whose region cannot be found without a Huffman parse of the
    /// raw data (a channel pair, or a single channel element shorter than 192 bits).
    case unverified
}

extension ADTSCRC {
    /// Checks the CRC of a protected frame: `frame` holds the whole frame, header included.
    ///
    /// - Several raw data blocks: the header CRC covers the 56 header bits and the
    ///   `raw_data_block_position` fields, and is always checked.
    /// - One raw data block whose first element is a single channel or LFE element: checked over
    ///   the header and the 192 bits after `id_syn_ele`; a match is `valid`, anything else
    ///   `unverified` (the element may be shorter than 192 bits and be followed by others).
    /// - Otherwise `unverified`.
    public static func status(of header: ADTSHeader, frame: ArraySlice<UInt8>) -> ADTSCRCStatus {
        guard !header.protectionAbsent, let stored = header.crc, frame.count >= header.headerLength else { return .absent }
        let bytes = Array(frame)
        var crc = ADTSCRC()
        var headerBits = BitReader(bytes, range: 0..<7)
        crc.update(from: &headerBits, count: 56)
        if header.rawDataBlockCountMinusOne > 0 {
            for position in header.rawDataBlockPositions { crc.update(bits: UInt64(position), count: 16) }
            return crc.value == stored ? .valid : .mismatch(stored: stored, computed: crc.value)
        }
        var payload = BitReader(bytes, range: header.headerLength..<bytes.count)
        guard let elementID = try? payload.readBits(3), elementID == 0 || elementID == 3 else { return .unverified }
        crc.update(from: &payload, count: 192)
        return crc.value == stored ? .valid : .unverified
    }
}
