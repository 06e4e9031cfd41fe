extension PipelineError {
    /// The one place where the errors of the modules a pipeline composes become a
    /// ``PipelineError``: each domain error keeps its own case, and a ``PipelineError`` passes
    /// through unchanged.
    public init(_ error: any Error) {
        switch error {
        case let error as PipelineError: self = error
        case let error as CodecError: self = .codec(error)
        case let error as AACBitstreamError: self = .bitstream(error)
        case let error as WAVError: self = .wav(error)
        case let error as ByteStreamError: self = .stream(error)
        case let error as MP4Error: self = .container(error)
        case let error as ALSAError: self = .audioDevice(error)
        default: self = .unsupported("\(error)")
        }
    }
}
