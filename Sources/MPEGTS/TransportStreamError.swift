public import AACBitstream
public import MediaCore

/// Everything that can be wrong with a transport stream read or written here: the one error type
/// of MPEGTS.
///
/// Each case that comes from bytes names the structure (`transport packet`, `adaptation field`,
/// `program association section`, `PES packet`, …) and the absolute byte offset of the problem.
public enum TransportStreamError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `structure` ended before a field it needed: the bytes, or the length a field declared, ran
    /// out.
    case truncated(structure: String, BinaryReadError)
    /// A transport packet does not start with `sync_byte` 0x47 (ISO/IEC 13818-1, 2.4.3.3).
    case lostSync(offset: Int64, byte: UInt8)
    /// A field holds a value the syntax does not allow.
    case invalidField(structure: String, field: String, value: Int64, offset: Int64, allowed: String)
    /// A section's `CRC_32` (Annex A) does not check.
    case crcMismatch(structure: String, offset: Int64, stored: UInt32, computed: UInt32)
    /// The AAC elementary stream cannot be carried as ADTS: a configuration ADTS cannot describe
    /// (an object type above 4, an escape sampling frequency, channel configuration 0) or a
    /// frame longer than `aac_frame_length` allows.
    case adts(AACBitstreamError)
    /// A stream the muxer does not carry (a codec, or a layout of one), named with why.
    case unsupportedStream(String)

    /// A sentence for people: what it is and, for errors, where.
    public var description: String {
        switch self {
        case .truncated(let structure, let read):
            "\(structure) truncated: \(read)"
        case .lostSync(let offset, let byte):
            "transport packet at byte \(offset): sync_byte is 0x\(String(byte, radix: 16, uppercase: true)), allowed 0x47"
        case .invalidField(let structure, let field, let value, let offset, let allowed):
            "\(structure) at byte \(offset): \(field) is \(value), allowed \(allowed)"
        case .crcMismatch(let structure, let offset, let stored, let computed):
            "\(structure) at byte \(offset): CRC_32 is 0x\(String(stored, radix: 16, uppercase: true)), "
                + "the bytes give 0x\(String(computed, radix: 16, uppercase: true))"
        case .adts(let error):
            "cannot carry the stream as ADTS: \(error)"
        case .unsupportedStream(let reason):
            "cannot carry the stream in MPEG-TS: \(reason)"
        }
    }

    /// The byte offset the error points at, when it comes from bytes.
    public var offset: Int64? {
        switch self {
        case .truncated(_, let read): read.offset
        case .lostSync(let offset, _), .invalidField(_, _, _, let offset, _), .crcMismatch(_, let offset, _, _): offset
        case .adts, .unsupportedStream: nil
        }
    }
}

extension TransportStreamError {
    /// Runs `body`, turning a read past the end into ``truncated(structure:_:)``.
    static func reading<T>(_ structure: String, _ body: () throws(BinaryReadError) -> T) throws(TransportStreamError) -> T {
        do { return try body() } catch { throw .truncated(structure: structure, error) }
    }
}

extension TransportStreamError: PipelineErrorConvertible {
    /// ``/MediaCore/PipelineError/Code/container``.
    public static var pipelineErrorCode: PipelineError.Code { .container }
    /// ``offset``.
    public var byteOffset: Int64? { offset }
}
