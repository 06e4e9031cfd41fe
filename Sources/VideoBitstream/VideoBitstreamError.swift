public import MediaCore
public import MP4

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
    /// The MP4 configuration record refused the parameter sets (too many, too long).
    case configurationRecord(MP4Error)
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
        case .configurationRecord(let error):
            error.description
        case .stream(let error):
            error.description
        }
    }
}
