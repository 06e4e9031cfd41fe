public import MediaCore
public import AACBitstream
public import VideoBitstream

/// Where in the box tree something is: `moov/trak[1]/mdia/minf/stbl/stsz`.
public struct BoxPath: Sendable, Hashable, CustomStringConvertible {
    /// The components, outermost first; repeated boxes carry their 1-based index (`trak[2]`).
    public private(set) var components: [String]

    /// The top level of the file.
    public static let root = BoxPath(components: [])

    /// A path of components.
    public init(components: [String]) { self.components = components }

    /// This path with one more component.
    public func appending(_ type: FourCharacterCode, index: Int? = nil) -> BoxPath {
        BoxPath(components: components + [index.map { "\(type)[\($0)]" } ?? type.description])
    }

    /// Nesting depth (0 at the top level).
    public var depth: Int { components.count }

    /// `moov/trak[1]/…`, or `file` at the top level.
    public var description: String { components.isEmpty ? "file" : components.joined(separator: "/") }
}

/// Everything that can be wrong with an ISO BMFF / MP4 / MOV file: the one error type of the MP4
/// module. Every case names the box path and the absolute byte offset.
public indirect enum MP4Error: Error, Hashable, Sendable, CustomStringConvertible {
    /// A box ended before a field it needed.
    case truncated(path: BoxPath, BinaryReadError)
    /// A box's size does not fit its header or its parent.
    case invalidBoxSize(path: BoxPath, offset: Int64, size: Int64, reason: String)
    /// A field holds a value the format does not allow.
    case invalidField(path: BoxPath, field: String, value: Int64, offset: Int64, allowed: String)
    /// A box that must be there is missing.
    case missingBox(path: BoxPath, type: FourCharacterCode)
    /// Boxes nest deeper than ``BoxIterator/maximumDepth``.
    case nestingTooDeep(path: BoxPath, offset: Int64)
    /// Tables of one track disagree (sample counts, chunk references).
    case inconsistentTables(path: BoxPath, reason: String)
    /// A sample lies outside the file.
    case sampleOutsideFile(trackID: UInt32, sampleIndex: Int, offset: Int64, size: Int64, fileSize: Int64)
    /// The file has no `moov` box (and is not a media segment for an init segment we were given).
    case noMovie(offset: Int64)
    /// No track of the kind or id asked for.
    case noSuchTrack(String)
    /// The track's codec cannot be carried where it was asked to go.
    case unsupportedCodec(trackID: UInt32, codec: String, reason: String)
    /// A configuration record (esds, avcC, hvcC) is malformed.
    case bitstream(path: BoxPath, AACBitstreamError)
    /// An H.264/HEVC configuration record (avcC, hvcC) is malformed or cannot hold the
    /// parameter sets.
    case videoBitstream(path: BoxPath, VideoBitstreamError)
    /// A muxer verb was called in a state that does not allow it (append before start, start
    /// twice, anything after finish or cancel, a track added after the movie was written).
    case invalidMuxerState(operation: String, status: String)
    /// The muxer's layout cannot be written to the output it was given.
    case unsupportedLayout(String)
    /// The muxer was asked to finish a movie without a single sample.
    case nothingToWrite
    /// Reading the file failed.
    case stream(ByteStreamError)

    /// A sentence for people: the box path, the byte offset, what is wrong.
    public var description: String {
        switch self {
        case .truncated(let path, let read):
            "\(path) truncated: \(read)"
        case .invalidBoxSize(let path, let offset, let size, let reason):
            "\(path) at byte \(offset): size \(size) \(reason)"
        case .invalidField(let path, let field, let value, let offset, let allowed):
            "\(path) at byte \(offset): \(field) is \(value), allowed \(allowed)"
        case .missingBox(let path, let type):
            "\(path): no \(type) box"
        case .nestingTooDeep(let path, let offset):
            "\(path) at byte \(offset): boxes nested deeper than \(BoxIterator.maximumDepth) levels"
        case .inconsistentTables(let path, let reason):
            "\(path): \(reason)"
        case .sampleOutsideFile(let track, let index, let offset, let size, let fileSize):
            "track \(track) sample \(index): bytes \(offset)..<\(offset.saturatingAdding(size)) lie outside the \(fileSize)-byte file"
        case .noMovie(let offset):
            "no moov box (file scanned to byte \(offset))"
        case .noSuchTrack(let what):
            "no \(what) track"
        case .unsupportedCodec(let track, let codec, let reason):
            "track \(track) (\(codec)): \(reason)"
        case .bitstream(let path, let error):
            "\(path): \(error)"
        case .videoBitstream(let path, let error):
            "\(path): \(error)"
        case .invalidMuxerState(let operation, let status):
            "muxer: \(operation) is not allowed when \(status)"
        case .unsupportedLayout(let reason):
            "muxer: \(reason)"
        case .nothingToWrite:
            "no samples were appended: there is nothing to write, and no file was left"
        case .stream(let error):
            error.description
        }
    }
}

extension MP4Error {
    /// Runs `body`, turning a read past the end into ``truncated(path:_:)``.
    @inlinable
    static func reading<T>(_ path: BoxPath, _ body: () throws(BinaryReadError) -> T) throws(MP4Error) -> T {
        do { return try body() } catch { throw .truncated(path: path, error) }
    }
}

extension MP4Error: PipelineErrorConvertible {
    /// ``/MediaCore/PipelineError/Code/container``.
    public static var pipelineErrorCode: PipelineError.Code { .container }
}

extension PipelineError {
    /// The MP4/MOV container is malformed or cannot be written.
    public static func container(_ error: MP4Error) -> PipelineError { PipelineError(.container, underlying: error) }
}
