/// Why a KeyFrameKit pipeline (encode, decode, …) stopped: the domain error it met, or a request
/// it cannot carry out. The message names the file and what is wrong.
public enum PipelineError: Error, CustomStringConvertible {
    /// Encoding or decoding failed.
    case codec(CodecError)
    /// The AAC bitstream is malformed.
    case bitstream(AACBitstreamError)
    /// The PCM input or output file is malformed.
    case wav(WAVError)
    /// Reading or writing failed.
    case stream(ByteStreamError)
    /// The MP4/MOV container is malformed.
    case container(MP4Error)
    /// The audio device failed (missing, busy, an unsupported format, or an error while running).
    case audioDevice(ALSAError)
    /// The request cannot be carried out (an unsupported extension, a missing option, …).
    case unsupported(String)
    /// The job was cancelled (``JobControl/cancel()``); its outputs were removed.
    case cancelled

    /// A sentence for people.
    public var description: String {
        switch self {
        case .codec(let error): error.description
        case .bitstream(let error): error.description
        case .wav(let error): error.description
        case .stream(let error): error.description
        case .container(let error): error.description
        case .audioDevice(let error): error.description
        case .unsupported(let what): what
        case .cancelled: "cancelled"
        }
    }
}
