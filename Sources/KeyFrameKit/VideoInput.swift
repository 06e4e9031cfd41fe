/// An Annex-B H.264 or HEVC elementary stream to mux, with the frame rate it has no timestamps for.
public struct VideoInput: Sendable {
    /// The `.h264` / `.h265` file.
    public var path: String
    /// The codec.
    public var codec: VideoCodec
    /// The duration of one frame (1/30 s for 30 fps, 1001/30000 s for 29.97).
    public var frameDuration: MediaTime

    /// An input.
    public init(path: String, codec: VideoCodec, frameDuration: MediaTime) {
        self.path = path
        self.codec = codec
        self.frameDuration = frameDuration
    }
}

/// Video samples out of an Annex-B stream, timed by the frame rate, in presentation order from
/// the slice headers' picture order count (``AnnexBReader``).
struct VideoSampleSource {
    private var reader: AnnexBReader<FileByteSource>
    private(set) var damage: [String] = []
    private let path: String

    init(_ input: VideoInput) throws(PipelineError) {
        path = input.path
        let source: FileByteSource
        do { source = try FileByteSource(path: input.path) } catch { throw .stream(error) }
        do {
            reader = try AnnexBReader(source: source, codec: input.codec, frameDuration: input.frameDuration)
        } catch {
            throw .unsupported("\(input.path): \(error)")
        }
    }

    mutating func next() throws(PipelineError) -> MediaSample? {
        do { return try reader.nextSample() } catch { throw .unsupported("\(path): \(error)") }
    }
}
