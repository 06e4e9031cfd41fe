public import MediaCore

/// Everything that can be wrong with a WAV, RF64 or raw PCM stream: the one error type of
/// PCMAudio.
///
/// Each case that comes from a file names the chunk (`RIFF`, `ds64`, `fmt `, `data`), the field
/// where there is one, and the absolute byte offset of what is wrong. The sizes and fields are
/// those of the Microsoft RIFF/WAVE format (Multimedia Programming Interface and Data
/// Specifications 1.0, "WAVE Form"; WAVEFORMATEXTENSIBLE) and of EBU Tech 3306 (RF64).
public enum WAVError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The stream does not start with a RIFF, RF64 or BW64 header: `found` is its first four
    /// bytes (for example `ID3\x3` or `\xff\xf1P\x80` for an ADTS file).
    case notRIFF(found: String, offset: Int64)
    /// A RIFF file whose form type (bytes 8 to 11) is not `WAVE` (for example `AVI `).
    case notWAVE(formType: String, offset: Int64)
    /// The stream ended inside `structure` (the 12-byte RIFF header, a chunk header, the `ds64` or
    /// `fmt ` body): `needed` bytes from `offset`, only `available` there.
    case truncated(structure: String, offset: Int64, needed: Int64, available: Int64)
    /// A required chunk is missing: `ds64` not first in an RF64 file, `fmt ` not before `data`,
    /// or no `data` chunk before the end of the stream. `offset` is where it was looked for.
    case missingChunk(id: String, offset: Int64, reason: String)
    /// A field holds a value the format does not allow (zero channels, an absurd sample rate,
    /// a `fmt ` chunk too short for its format tag, bits per sample 0).
    case invalidField(chunk: String, field: String, value: Int64, offset: Int64, allowed: String)
    /// `wFormatTag` (or the WAVEFORMATEXTENSIBLE SubFormat's first bytes) names a codec this
    /// module does not read: only PCM (1) and IEEE float (3) are supported.
    case unsupportedFormatTag(tag: UInt32, offset: Int64)
    /// `wBitsPerSample` is not one of the depths this module reads for the format tag: PCM in
    /// 1- to 4-byte containers (8, 16, 24, 32 bits, or fewer bits padded to those), float 32 or 64.
    case unsupportedBitDepth(formatTag: UInt32, bitsPerSample: Int, offset: Int64)
    /// `nBlockAlign` differs from `nChannels` × the bytes of one sample.
    case blockAlignMismatch(blockAlign: Int, channels: Int, bytesPerSample: Int, offset: Int64)
    /// The `data` chunk declares more bytes than the stream holds. ``WAVReader`` delivers what
    /// exists and reports this in its `warnings`; it is never thrown.
    case dataBeyondFile(declared: Int64, available: Int64, offset: Int64)
    /// The PCM data ends with `byteCount` bytes that do not make a whole frame; they are dropped.
    /// ``WAVReader`` and ``RawPCMReader`` report this in their `warnings`; it is never thrown.
    case partialFrame(byteCount: Int, bytesPerFrame: Int, offset: Int64)
    /// A `PCMFormat` that cannot be read or written as WAV or raw PCM (planar, zero channels,
    /// a sample rate outside 1...768000 Hz).
    case unsupportedFormat(field: String, value: Int64, allowed: String)
    /// ``WAVWriter`` was given bytes that are not whole frames.
    case partialFrameWrite(byteCount: Int, bytesPerFrame: Int)
    /// ``WAVWriter`` was used after ``WAVWriter/finish()``.
    case writerFinished
    /// Reading or writing the underlying stream failed.
    case stream(ByteStreamError)

    /// A sentence for people: what it is and, for errors, where.
    public var description: String {
        switch self {
        case .notRIFF(let found, let offset):
            "not a WAV file: starts with '\(found)' at byte \(offset), expected 'RIFF', 'RF64' or 'BW64'"
        case .notWAVE(let formType, let offset):
            "not a WAV file: RIFF form type at byte \(offset) is '\(formType)', expected 'WAVE'"
        case .truncated(let structure, let offset, let needed, let available):
            "WAV file at byte \(offset): \(structure) truncated: needs \(needed) bytes, file ends after \(available)"
        case .missingChunk(let id, let offset, let reason):
            "WAV file at byte \(offset): no '\(id)' chunk: \(reason)"
        case .invalidField(let chunk, let field, let value, let offset, let allowed):
            "WAV file at byte \(offset): \(Self.trimmed(chunk)) chunk declares \(field) \(value), allowed \(allowed)"
        case .unsupportedFormatTag(let tag, let offset):
            "WAV file at byte \(offset): unsupported format tag 0x\(String(tag, radix: 16, uppercase: true)), "
                + "supported 0x1 (PCM) and 0x3 (IEEE float)"
        case .unsupportedBitDepth(let tag, let bits, let offset):
            "WAV file at byte \(offset): \(tag == 3 ? "IEEE float" : "PCM") with \(bits) bits per sample is not supported"
                + (tag == 3 ? ", supported 32 and 64" : ", supported 1...32")
        case .blockAlignMismatch(let blockAlign, let channels, let bytesPerSample, let offset):
            "WAV file at byte \(offset): fmt chunk declares block align \(blockAlign), "
                + "but \(channels) channels × \(bytesPerSample) bytes is \(channels * bytesPerSample)"
        case .dataBeyondFile(let declared, let available, let offset):
            "WAV file at byte \(offset): data chunk declares \(declared) bytes, file ends after \(available)"
        case .partialFrame(let count, let bytesPerFrame, let offset):
            "PCM data at byte \(offset): \(count) trailing bytes do not make a whole \(bytesPerFrame)-byte frame; dropped"
        case .unsupportedFormat(let field, let value, let allowed):
            "unsupported PCM format: \(field) is \(value), allowed \(allowed)"
        case .partialFrameWrite(let count, let bytesPerFrame):
            "cannot write \(count) bytes: not a whole number of \(bytesPerFrame)-byte frames"
        case .writerFinished:
            "cannot write: the WAV writer is already finished"
        case .stream(let error):
            error.description
        }
    }

    /// A chunk id without its padding spaces (`fmt ` → `fmt`), for sentences.
    private static func trimmed(_ id: String) -> String {
        String(id.reversed().drop(while: { $0 == " " }).reversed())
    }
}

extension WAVError {
    /// The error as a tolerated problem: a header that disagrees with the data and was worked
    /// around (a `data` chunk longer than the file, a partial last frame), at its byte offset.
    /// Other cases, which readers throw, carry their offset in the message only.
    public var damage: DamageEvent {
        switch self {
        case .dataBeyondFile(_, _, let offset), .partialFrame(_, _, let offset):
            DamageEvent(.inconsistentHeader, at: offset, message: description)
        default:
            DamageEvent(.inconsistentHeader, message: description)
        }
    }
}

extension WAVError: PipelineErrorConvertible {
    /// ``/MediaCore/PipelineError/Code/pcmFile``.
    public static var pipelineErrorCode: PipelineError.Code { .pcmFile }
}

extension PipelineError {
    /// The PCM input or output file is malformed.
    public static func wav(_ error: WAVError) -> PipelineError { PipelineError(.pcmFile, underlying: error) }
}
