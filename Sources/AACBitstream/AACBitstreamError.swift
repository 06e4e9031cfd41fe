public import MediaCore

/// Everything that can be wrong with AAC bitstream data: the one error type of AACBitstream.
///
/// Each case names the structure (for example `ADTS header`, `AudioSpecificConfig`,
/// `DecoderConfigDescriptor`) and the absolute byte offset where the problem is.
public enum AACBitstreamError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `structure` ended before a field it needed.
    case truncated(structure: String, BinaryReadError)
    /// A field holds a value the syntax does not allow.
    case invalidField(structure: String, field: String, value: Int64, offset: Int64, allowed: String)
    /// A value cannot be written in the field that must hold it: a rate with no sampling
    /// frequency index, a length over the field's width.
    case unrepresentable(structure: String, field: String, value: Int64, allowed: String)
    /// Reading or writing the underlying stream failed.
    case stream(ByteStreamError)

    /// A sentence for people: what it is and, for errors, where.
    public var description: String {
        switch self {
        case .truncated(let structure, let read):
            "\(structure) truncated: \(read)"
        case .invalidField(let structure, let field, let value, let offset, let allowed):
            "\(structure) at byte \(offset): \(field) is \(value), allowed \(allowed)"
        case .unrepresentable(let structure, let field, let value, let allowed):
            "cannot write \(structure): \(field) \(value) is out of range, allowed \(allowed)"
        case .stream(let error):
            error.description
        }
    }
}

extension AACBitstreamError {
    /// Runs `body`, turning a read past the end into ``truncated(structure:_:)``.
    @inlinable
    static func reading<T>(_ structure: String, _ body: () throws(BinaryReadError) -> T) throws(AACBitstreamError) -> T {
        do { return try body() } catch { throw .truncated(structure: structure, error) }
    }
}

extension AACBitstreamError: PipelineErrorConvertible {
    /// ``/MediaCore/PipelineError/Code/bitstream``.
    public static var pipelineErrorCode: PipelineError.Code { .bitstream }
}

extension PipelineError {
    /// The AAC bitstream is malformed.
    public static func bitstream(_ error: AACBitstreamError) -> PipelineError { PipelineError(.bitstream, underlying: error) }
}
