public import SystemPackage

/// Why a KeyFrameKit pipeline (a pump, a job, a reader opened for one) stopped: the domain error
/// it met, or a request it cannot carry out.
///
/// A struct with a stable ``code`` to switch on, as SwiftNIO's errors are, and the domain error
/// itself in ``underlying`` (a `CodecError`, `WAVError`, `MP4Error`, …) for the details. Callers
/// decide on ``code`` (and on the underlying value's cases), never on the text. The message
/// names the file and what is wrong; ``path`` and ``offset`` give them as values where the
/// domain error knows them.
///
/// Each module's error type says its code once, by conforming to ``PipelineErrorConvertible``;
/// ``init(_:)`` is the one place any error becomes a `PipelineError`.
public struct PipelineError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure: stable across releases, for `switch`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case codec, bitstream, pcmFile, stream, container, audioDevice, network, unsupported, cancelled
        }

        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// Encoding or decoding failed (`CodecError`).
        public static let codec = Code(.codec)
        /// An elementary stream is malformed (`AACBitstreamError`, `VideoBitstreamError`).
        public static let bitstream = Code(.bitstream)
        /// A PCM file (WAV, raw) is malformed or cannot be written (`WAVError`).
        public static let pcmFile = Code(.pcmFile)
        /// Reading or writing bytes failed (``ByteStreamError``).
        public static let stream = Code(.stream)
        /// A container (MP4, a playlist, a manifest) is malformed or cannot be written (`MP4Error`).
        public static let container = Code(.container)
        /// The audio device failed: missing, busy, an unsupported format, or an error while
        /// running (`ALSAError`).
        public static let audioDevice = Code(.audioDevice)
        /// A network destination or server failed.
        public static let network = Code(.network)
        /// The request cannot be carried out (an unsupported extension, a missing option, …).
        public static let unsupported = Code(.unsupported)
        /// The job was cancelled (``JobControl/cancel()``); its outputs were removed.
        public static let cancelled = Code(.cancelled)

        /// The code's name (`codec`, `pcmFile`, …).
        public var description: String { value.rawValue }
    }

    /// What kind of failure.
    public let code: Code
    /// The domain error met, when there is one.
    public let underlying: (any Error & Sendable)?
    /// The file concerned, when known.
    public let path: FilePath?
    /// The byte offset in ``path`` where the problem is, when known.
    public let offset: Int64?
    private let message: String?

    /// An error of `code` carrying `underlying` (its path and offset when it says them).
    public init(_ code: Code, underlying: some Error & Sendable) {
        self.code = code
        self.underlying = underlying
        let located = underlying as? any PipelineErrorConvertible
        path = located?.filePath
        offset = located?.byteOffset
        message = nil
    }

    /// An error of `code` said in words.
    public init(_ code: Code, message: String, path: FilePath? = nil, offset: Int64? = nil) {
        self.code = code
        underlying = nil
        self.path = path
        self.offset = offset
        self.message = message
    }

    /// The one place where any error becomes a ``PipelineError``: a `PipelineError` passes
    /// through unchanged; a domain error gets its module's code (``PipelineErrorConvertible``);
    /// anything else is ``Code/unsupported`` with its description.
    public init(_ error: any Error) {
        if let error = error as? PipelineError {
            self = error
        } else if let error = error as? any PipelineErrorConvertible {
            self = error.pipelineError
        } else {
            self.init(.unsupported, message: "\(error)")
        }
    }

    /// A request that cannot be carried out, said in words, about `path` (at `offset`) when given.
    public static func unsupported(_ message: String, path: FilePath? = nil, offset: Int64? = nil) -> PipelineError {
        PipelineError(.unsupported, message: message, path: path, offset: offset)
    }

    /// This error about `path`: its code, its words after `path: `, its offset; the path set.
    public func about(_ path: FilePath) -> PipelineError {
        PipelineError(code, message: "\(path): \(self)", path: path, offset: offset)
    }

    /// The job was cancelled.
    public static var cancelled: PipelineError { PipelineError(.cancelled, message: "cancelled") }

    /// Reading or writing failed.
    public static func stream(_ error: ByteStreamError) -> PipelineError { PipelineError(.stream, underlying: error) }

    /// A sentence for people: the domain error's, or the message.
    public var description: String {
        if let message { return message }
        if let underlying { return "\(underlying)" }
        return code.description
    }

    /// The underlying error as `type`, when it is one.
    public func underlying<T: Error>(as type: T.Type) -> T? { underlying as? T }
}

/// A module's error type that knows its ``PipelineError/Code``: `CodecError` is
/// ``PipelineError/Code/codec``, `WAVError` ``PipelineError/Code/pcmFile``, and so on.
public protocol PipelineErrorConvertible: Error, Sendable {
    /// The code errors of this type have in a pipeline.
    static var pipelineErrorCode: PipelineError.Code { get }
    /// The file concerned, when this error says it; by default `nil`.
    var filePath: FilePath? { get }
    /// The byte offset concerned, when this error says it; by default `nil`.
    var byteOffset: Int64? { get }
}

extension PipelineErrorConvertible {
    /// None.
    public var filePath: FilePath? { nil }
    /// None.
    public var byteOffset: Int64? { nil }
    /// This error as a ``PipelineError``.
    public var pipelineError: PipelineError { PipelineError(Self.pipelineErrorCode, underlying: self) }
}

extension ByteStreamError: PipelineErrorConvertible {
    /// ``PipelineError/Code/stream``.
    public static var pipelineErrorCode: PipelineError.Code { .stream }
    /// The file the operating system refused.
    public var filePath: FilePath? {
        switch self {
        case .system(_, let path, _), .refused(let path, _): path
        }
    }
}
