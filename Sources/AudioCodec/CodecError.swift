internal import CFFmpeg
public import AACBitstream
public import MediaCore

/// Everything that can go wrong in encoding or decoding: the one error type of AudioCodec.
/// FFmpeg's return codes become ``ffmpeg(operation:code:message:)`` in one place,
/// `CodecError.check(_:_:)`, carrying FFmpeg's own message.
public enum CodecError: Error, Hashable, Sendable, CustomStringConvertible {
    /// An FFmpeg call failed.
    case ffmpeg(operation: String, code: Int32, message: String)
    /// libavcodec has no such codec (a build without it).
    case codecNotFound(String)
    /// The encoder cannot take this sample rate.
    case unsupportedSampleRate(Int, supported: [Int])
    /// The encoder cannot take this many channels.
    case unsupportedChannelCount(Int, supported: [Int])
    /// The bitrate is outside what the encoder can produce at this rate and channel count.
    case bitrateOutOfRange(Int, allowed: ClosedRange<Int>)
    /// Input the codec cannot take: a non-PCM sample, a format change mid-stream, …
    case unsupportedInput(String)
    /// A call in the wrong state (encoding after flush, …).
    case invalidState(String)
    /// The codec configuration could not be parsed or written.
    case bitstream(AACBitstreamError)
    /// The stream is in a codec or profile this decoder cannot decode (xHE-AAC, ALS, an `mp4a`
    /// that is not AAC, …): `profile` is what `probe` calls it, `codec` names the codec and its
    /// number (`USAC, audio object type 42`), `reason` says why.
    case undecodable(codec: String, profile: String, reason: String)

    /// A sentence for people: what failed and why.
    public var description: String {
        switch self {
        case .ffmpeg(let operation, let code, let message): "\(operation) failed: \(message) (FFmpeg error \(code))"
        case .codecNotFound(let name): "libavcodec has no \(name)"
        case .unsupportedSampleRate(let rate, let supported):
            "unsupported sample rate \(rate) Hz for AAC: use one of " + supported.map(String.init).joined(separator: ", ")
        case .unsupportedChannelCount(let count, let supported):
            "unsupported channel count \(count) for AAC: use " + supported.map(String.init).joined(separator: ", ")
        case .bitrateOutOfRange(let rate, let allowed):
            "bitrate \(Bitrate(bitsPerSecond: rate)) is out of range: \(Bitrate.describe(allowed)) at this sample rate and channel count"
        case .unsupportedInput(let what): "unsupported input: \(what)"
        case .invalidState(let what): what
        case .bitstream(let error): error.description
        case .undecodable(let codec, let profile, let reason): "\(profile) (\(codec)) cannot be decoded: \(reason)"
        }
    }
}

extension CodecError {
    /// FFmpeg's message for `code`.
    static func message(for code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        kf_error_string(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The one place FFmpeg return codes become Swift errors: throws for a negative `code`.
    @discardableResult
    static func check(_ code: Int32, _ operation: @autoclosure () -> String) throws(CodecError) -> Int32 {
        guard code < 0 else { return code }
        throw .ffmpeg(operation: operation(), code: code, message: message(for: code))
    }
}

extension CodecError: PipelineErrorConvertible {
    /// ``/MediaCore/PipelineError/Code/codec``.
    public static var pipelineErrorCode: PipelineError.Code { .codec }
}

extension PipelineError {
    /// Encoding or decoding failed.
    public static func codec(_ error: CodecError) -> PipelineError { PipelineError(.codec, underlying: error) }
}
