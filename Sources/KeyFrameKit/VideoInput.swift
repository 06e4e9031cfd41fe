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

/// Video samples out of an Annex-B stream (the Annex-B reader of the VideoBitstream module).
struct VideoSampleSource {
    private(set) var damage: [String] = []

    init(_ input: VideoInput) throws(PipelineError) {
        throw .unsupported("\(input.path): muxing Annex-B video is not available yet (the Annex-B reader is in progress)")
    }

    mutating func next() throws(PipelineError) -> MediaSample? { nil }
}
