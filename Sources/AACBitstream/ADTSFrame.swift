/// One ADTS frame (`adts_frame()`, ISO/IEC 13818-7, 6.2; ISO/IEC 14496-3, 1.A.3.2) as read from a
/// stream: its parsed header, where it was, and its bytes.
public struct ADTSFrame: Sendable, Hashable {
    /// The parsed header.
    public var header: ADTSHeader
    /// Absolute byte offset of the frame's syncword in the stream.
    public var offset: Int64
    /// The whole frame, header included (``ADTSHeader/frameLength`` bytes).
    public var bytes: [UInt8]
    /// What is known about the frame's CRC.
    public var crcStatus: ADTSCRCStatus

    /// A frame.
    public init(header: ADTSHeader, offset: Int64, bytes: [UInt8], crcStatus: ADTSCRCStatus = .absent) {
        self.header = header
        self.offset = offset
        self.bytes = bytes
        self.crcStatus = crcStatus
    }

    /// The raw data block(s) after the header (with their per-block CRCs in a protected
    /// multi-block frame), without copying.
    public var payload: ArraySlice<UInt8> { bytes[min(header.headerLength, bytes.count)...] }
}

/// Something an ``ADTSReader`` met in the stream besides good frames: skipped data and damage.
public enum ADTSStreamEvent: Sendable, Hashable, CustomStringConvertible {
    /// An ID3v2 tag of `length` bytes at `offset`, skipped (only the bytes present are counted).
    case id3Tag(offset: Int64, length: Int64)
    /// `count` bytes at `offset` that are not ADTS frames, skipped while resynchronising.
    case skippedBytes(offset: Int64, count: Int64)
    /// A frame at `offset` that declares `declaredLength` bytes but the stream ends after
    /// `availableLength`: reported, not delivered.
    case truncatedFrame(offset: Int64, declaredLength: Int, availableLength: Int)
    /// An ID3v2 tag at `offset` that declares `declaredLength` bytes but the stream ends after
    /// `availableLength`.
    case truncatedTag(offset: Int64, declaredLength: Int64, availableLength: Int64)
    /// A frame whose CRC was checked and does not match (the frame is still delivered).
    case crcMismatch(offset: Int64, stored: UInt16, computed: UInt16)

    /// Whether the event is damage (as opposed to an ID3 tag, which is expected).
    public var isDamage: Bool {
        if case .id3Tag = self { return false }
        return true
    }

    /// A sentence for people: what it is and, for errors, where.
    public var description: String {
        switch self {
        case .id3Tag(let offset, let length):
            "ID3v2 tag of \(length) bytes at byte \(offset) skipped"
        case .skippedBytes(let offset, let count):
            "\(count) bytes that are not ADTS skipped at byte \(offset)"
        case .truncatedFrame(let offset, let declared, let available):
            "frame at byte \(offset) truncated: declares \(declared) bytes, stream ends after \(available)"
        case .truncatedTag(let offset, let declared, let available):
            "ID3v2 tag at byte \(offset) truncated: declares \(declared) bytes, stream ends after \(available)"
        case .crcMismatch(let offset, let stored, let computed):
            "frame at byte \(offset): CRC mismatch (stored 0x\(String(stored, radix: 16)), computed 0x\(String(computed, radix: 16)))"
        }
    }
}
