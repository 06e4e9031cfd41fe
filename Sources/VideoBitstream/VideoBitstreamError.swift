public import MediaCore

/// Everything that can be wrong with an H.264 or H.265 elementary stream: the one error type of
/// VideoBitstream.
///
/// Each case that comes from the data names the absolute byte offset of the NAL unit it was
/// found in (the offset of the NAL unit header, after the start code), so that a damaged stream
/// can be inspected with a hex dump.
public enum VideoBitstreamError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The stream does not begin with an Annex B start code (ITU-T H.264 B.2, H.265 B.2: only
    /// zero bytes may come before the first `00 00 01`).
    case notAnnexB(offset: Int64, reason: String)
    /// A NAL unit header is malformed: `forbidden_zero_bit` set (H.264 7.4.1, H.265 7.4.2.1), an
    /// HEVC header shorter than its two bytes, or `nuh_temporal_id_plus1` equal to 0.
    case invalidNALUnitHeader(nalOffset: Int64, reason: String)
    /// `structure` (a parameter set or a slice header) of the NAL unit at `nalOffset` ended before
    /// `field`. The offset inside the ``/MediaCore/BinaryReadError`` counts RBSP bytes (emulation
    /// prevention bytes removed) from `nalOffset`.
    case truncated(structure: String, field: String, nalOffset: Int64, BinaryReadError)
    /// A field holds a value the syntax or the semantics do not allow.
    case invalidField(structure: String, field: String, value: Int64, nalOffset: Int64, allowed: String)
    /// The stream uses a feature this reader does not handle.
    case unsupported(feature: String, nalOffset: Int64)
    /// A slice (or a parameter set) refers to a parameter set that has not been seen before it,
    /// as when a stream is cut before its first SPS/PPS (H.264 7.4.1.2.1, H.265 7.4.2.4.2).
    case missingParameterSet(kind: String, id: Int, nalOffset: Int64)
    /// A configuration record was asked for, but the stream holds no picture and so no
    /// parameter sets in force.
    case noPictures
    /// A NAL unit or an access unit is larger than the reader's limit (hostile or broken input
    /// with no start code for a long way).
    case tooLarge(what: String, size: Int, limit: Int, offset: Int64)
    /// An argument given by the caller is outside what the reader accepts.
    case invalidArgument(String)
    /// A timestamp does not fit in a ``/MediaCore/MediaTime``.
    case timeOverflow(MediaTimeError)
    /// A decoder configuration record (`AVCDecoderConfigurationRecord` or
    /// `HEVCDecoderConfigurationRecord`, ISO/IEC 14496-15 5.3.3.1 and 8.3.3.1) ended before a
    /// field it needed: a count or a length asks for more bytes than remain.
    case truncatedRecord(record: String, BinaryReadError)
    /// A field of a decoder configuration record holds a value the record does not allow (a
    /// `configurationVersion` other than 1, more than 31 SPSs, a unit longer than 65535 bytes).
    /// `offset` counts from the start of the record's bytes.
    case invalidRecordField(record: String, field: String, value: Int64, offset: Int64, allowed: String)
    /// Reading the underlying stream failed.
    case stream(ByteStreamError)

    /// A sentence for people: what it is and, for errors, where.
    public var description: String {
        switch self {
        case .notAnnexB(let offset, let reason):
            "not an Annex B byte stream at byte \(offset): \(reason)"
        case .invalidNALUnitHeader(let offset, let reason):
            "NAL unit at byte \(offset): \(reason)"
        case .truncated(let structure, let field, let offset, let read):
            "\(structure) of the NAL unit at byte \(offset) ends before \(field): \(read)"
        case .invalidField(let structure, let field, let value, let offset, let allowed):
            "\(structure) of the NAL unit at byte \(offset): \(field) is \(value), allowed \(allowed)"
        case .unsupported(let feature, let offset):
            "NAL unit at byte \(offset): unsupported: \(feature)"
        case .missingParameterSet(let kind, let id, let offset):
            "NAL unit at byte \(offset) refers to \(kind) \(id), which the stream has not carried before it"
        case .noPictures:
            "the stream holds no picture, so no parameter sets in force"
        case .tooLarge(let what, let size, let limit, let offset):
            "\(what) at byte \(offset) is larger than \(limit) bytes (\(size) so far)"
        case .invalidArgument(let reason):
            reason
        case .timeOverflow(let error):
            error.description
        case .truncatedRecord(let record, let read):
            "\(record) truncated: \(read)"
        case .invalidRecordField(let record, let field, let value, let offset, let allowed):
            "\(record) at byte \(offset): \(field) is \(value), allowed \(allowed)"
        case .stream(let error):
            error.description
        }
    }
}

extension VideoBitstreamError {
    /// Runs `body`, turning a read past the end of a configuration record into
    /// ``truncatedRecord(record:_:)``.
    static func reading<T>(_ record: String, _ body: () throws(BinaryReadError) -> T) throws(VideoBitstreamError) -> T {
        do { return try body() } catch { throw .truncatedRecord(record: record, error) }
    }
}

extension ByteReader {
    /// Checks that `count` entries of at least `entrySize` bytes fit in what remains of a
    /// configuration record, before its table is read.
    func checkRecordTable(count: UInt32, entrySize: Int, record: String, field: String) throws(VideoBitstreamError) {
        let needed = Int64(count) * Int64(entrySize)
        guard needed <= Int64(remaining) else {
            throw .invalidRecordField(record: record, field: field, value: Int64(count), offset: Int64(offset),
                                      allowed: "at most \(remaining / Swift.max(entrySize, 1)) (the \(remaining) bytes that remain hold no more)")
        }
    }
}

extension VideoBitstreamError: PipelineErrorConvertible {
    /// ``/MediaCore/PipelineError/Code/bitstream``.
    public static var pipelineErrorCode: PipelineError.Code { .bitstream }
}
