internal import MediaCore

/// A FLAC frame's header (RFC 9639 9.1): the sync code, whether the stream's blocks are of a
/// fixed or a variable size, the block's size, rate, channel assignment and bit depth, the
/// frame's number (fixed) or its first sample's number (variable), and the header's CRC-8.
///
/// An edit that moves frames writes their headers again (``bytes``) and their footers
/// (``FLACFrame/renumbered(_:as:)``): a frame's number is its place in the stream.
public struct FLACFrameHeader: Sendable, Hashable {
    /// Whether blocks vary in size: the coded number is then the first sample's, not the frame's.
    public var isVariableBlockSize: Bool
    /// Samples per channel in the block (1…65536).
    public var blockSize: Int
    /// The 4-bit sample-rate code (RFC 9639 9.1.2), and the bytes that follow the number for
    /// codes 12–14.
    public var sampleRateCode: UInt8
    /// The explicit rate's bytes (codes 12–14), else empty.
    public var sampleRateBytes: [UInt8]
    /// The 4-bit channel assignment (RFC 9639 9.1.3).
    public var channelAssignment: UInt8
    /// The 3-bit bit-depth code (RFC 9639 9.1.4).
    public var bitDepthCode: UInt8
    /// The frame number (fixed block size) or the first sample's number (variable).
    public var codedNumber: UInt64
    /// The header's length in bytes, its CRC-8 included, as read.
    public private(set) var byteCount: Int

    /// The header at `offset` of `bytes`, or `nil` when there is none there: no sync code, a
    /// reserved value, a number coded wrongly, or a CRC-8 that does not match.
    public init?(_ bytes: some RandomAccessCollection<UInt8>, at offset: Int) {
        let start = bytes.index(bytes.startIndex, offsetBy: offset, limitedBy: bytes.endIndex) ?? bytes.endIndex
        let available = bytes.distance(from: start, to: bytes.endIndex)
        guard available >= 6 else { return nil }
        func byte(_ index: Int) -> UInt8 { bytes[bytes.index(start, offsetBy: index)] }
        guard byte(0) == 0xFF, byte(1) & 0xFE == 0xF8 else { return nil }
        isVariableBlockSize = byte(1) & 1 == 1
        let sizeCode = byte(2) >> 4
        sampleRateCode = byte(2) & 0xF
        channelAssignment = byte(3) >> 4
        bitDepthCode = (byte(3) >> 1) & 7
        guard sizeCode != 0, sampleRateCode != 15, channelAssignment <= 10, bitDepthCode != 3, byte(3) & 1 == 0 else { return nil }
        // The number, coded as UTF-8 extended to 7 bytes (36 bits).
        let lead = byte(4)
        let extra = lead < 0x80 ? 0 : lead < 0xC0 ? -1 : lead < 0xE0 ? 1 : lead < 0xF0 ? 2 : lead < 0xF8 ? 3 : lead < 0xFC ? 4 : lead < 0xFE ? 5 : lead == 0xFE ? 6 : -1
        guard extra >= 0, (isVariableBlockSize ? 6 : 5) >= extra else { return nil }
        var position = 5 + extra
        guard available >= position + 1 else { return nil }
        var number = UInt64(extra == 0 ? lead : extra == 6 ? 0 : lead & (0x7F >> (extra + 1)))
        for index in 0..<extra {
            let next = byte(5 + index)
            guard next & 0xC0 == 0x80 else { return nil }
            number = number << 6 | UInt64(next & 0x3F)
        }
        codedNumber = number
        let sizeBytes = sizeCode == 6 ? 1 : sizeCode == 7 ? 2 : 0
        let rateBytes = sampleRateCode == 12 ? 1 : sampleRateCode == 13 || sampleRateCode == 14 ? 2 : 0
        guard available >= position + sizeBytes + rateBytes + 1 else { return nil }
        var explicitSize = 0
        for index in 0..<sizeBytes { explicitSize = explicitSize << 8 | Int(byte(position + index)) }
        position += sizeBytes
        sampleRateBytes = (0..<rateBytes).map { byte(position + $0) }
        position += rateBytes
        switch sizeCode {
        case 1: blockSize = 192
        case 2...5: blockSize = 576 << (Int(sizeCode) - 2)
        case 6, 7: blockSize = explicitSize + 1
        default: blockSize = 256 << (Int(sizeCode) - 8)
        }
        let header = (0..<position).map(byte)
        guard CyclicRedundancyCheck.crc8(header) == byte(position) else { return nil }
        byteCount = position + 1
    }

    /// A header of these fields (``byteCount`` is that of ``bytes``).
    public init(isVariableBlockSize: Bool, blockSize: Int, sampleRateCode: UInt8, sampleRateBytes: [UInt8], channelAssignment: UInt8,
                bitDepthCode: UInt8, codedNumber: UInt64) {
        self.isVariableBlockSize = isVariableBlockSize
        self.blockSize = blockSize
        self.sampleRateCode = sampleRateCode
        self.sampleRateBytes = sampleRateBytes
        self.channelAssignment = channelAssignment
        self.bitDepthCode = bitDepthCode
        self.codedNumber = codedNumber
        byteCount = 0
        byteCount = bytes.count
    }

    /// The header's bytes: the block size in the shortest code that says it, the number in as
    /// few bytes as it takes, the CRC-8 computed.
    public var bytes: [UInt8] {
        var header: [UInt8] = [0xFF, isVariableBlockSize ? 0xF9 : 0xF8]
        let sizeCode: UInt8
        var sizeBytes: [UInt8] = []
        switch blockSize {
        case 192: sizeCode = 1
        case 576, 1152, 2304, 4608: sizeCode = UInt8(2 + (blockSize / 576).trailingZeroBitCount)
        case 256, 512, 1024, 2048, 4096, 8192, 16384, 32768: sizeCode = UInt8(8 + (blockSize / 256).trailingZeroBitCount)
        case ...256:
            sizeCode = 6
            sizeBytes = [UInt8(blockSize - 1)]
        default:
            sizeCode = 7
            sizeBytes = [UInt8((blockSize - 1) >> 8 & 0xFF), UInt8((blockSize - 1) & 0xFF)]
        }
        header.append(sizeCode << 4 | sampleRateCode)
        header.append(channelAssignment << 4 | bitDepthCode << 1)
        header += Self.codedNumberBytes(codedNumber)
        header += sizeBytes + sampleRateBytes
        header.append(CyclicRedundancyCheck.crc8(header))
        return header
    }

    /// `number` coded as FLAC codes a frame's or sample's number: UTF-8's scheme, extended to
    /// seven bytes for 36 bits.
    static func codedNumberBytes(_ number: UInt64) -> [UInt8] {
        if number < 0x80 { return [UInt8(number)] }
        var continuation = 1
        while continuation < 6, number >= UInt64(1) << (5 * continuation + 6) { continuation += 1 }
        var bytes: [UInt8] = []
        var rest = number
        for _ in 0..<continuation {
            bytes.insert(0x80 | UInt8(rest & 0x3F), at: 0)
            rest >>= 6
        }
        let marker = UInt8(truncatingIfNeeded: 0xFF00 >> (continuation + 1))
        bytes.insert(continuation == 6 ? 0xFE : marker | UInt8(rest), at: 0)
        return bytes
    }
}

/// Whole FLAC frames (RFC 9639 9): a header, the subframes, and a CRC-16 footer over all before it.
public enum FLACFrame {
    /// Whether `frame` (a header through its footer) ends with the CRC-16 of what precedes it.
    public static func footerMatches(_ frame: some RandomAccessCollection<UInt8>) -> Bool {
        guard frame.count >= 2 else { return false }
        let body = frame.dropLast(2)
        let footer = UInt16(frame[frame.index(frame.endIndex, offsetBy: -2)]) << 8 | UInt16(frame[frame.index(before: frame.endIndex)])
        return CyclicRedundancyCheck.crc16MostSignificantFirst(body) == footer
    }

    /// `frame` with its header replaced by `header` (the subframes unchanged) and its footer's
    /// CRC-16 computed again; `nil` when `frame` does not begin with a header.
    public static func renumbered(_ frame: [UInt8], as header: FLACFrameHeader) -> [UInt8]? {
        guard let old = FLACFrameHeader(frame, at: 0), frame.count >= old.byteCount + 2 else { return nil }
        var bytes = header.bytes
        bytes += frame[old.byteCount..<(frame.count - 2)]
        let crc = CyclicRedundancyCheck.crc16MostSignificantFirst(bytes)
        bytes += [UInt8(crc >> 8), UInt8(crc & 0xFF)]
        return bytes
    }
}
