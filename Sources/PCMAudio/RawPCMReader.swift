public import MediaCore

/// Reads raw interleaved little-endian PCM (`.pcm`, `s16le`, `f32le` and the rest) whose layout
/// is given, not read from a header: the same ``read(maxFrames:)`` as ``WAVReader``.
///
/// A stream that ends inside a frame loses that partial frame, reported in ``warnings``.
public struct RawPCMReader<Source: ByteSource> {
    /// The layout of the frames (interleaved).
    public let format: PCMFormat
    /// The frames the stream holds when the source is a ``/MediaCore/FileByteSource`` that knows
    /// its size (whole frames only), else `nil`.
    public let frameCount: Int64?
    private var frames: PCMFrameStream<Source>
    /// Warnings already handed out as damage (``takeDamage()``).
    var reportedWarningCount = 0

    /// A reader of `source`'s bytes as frames of `format`, from the source's current position.
    ///
    /// - Throws: ``WAVError/unsupportedFormat(field:value:allowed:)`` for a planar layout, a
    ///   channel count outside 1...64 or a sample rate outside 1...768000 Hz.
    public init(source: Source, format: PCMFormat) throws(WAVError) {
        try format.validateForWAV()
        self.format = format
        frameCount = (source as? FileByteSource)?.size().map { $0 / Int64(format.bytesPerFrame) }
        frames = PCMFrameStream(source: source, bytesPerFrame: format.bytesPerFrame, offset: 0, byteCount: nil, declaration: nil)
    }

    /// Up to `maxFrames` whole frames (at least one is asked for); fewer only at the end of the
    /// stream; `nil` once no whole frame is left.
    ///
    /// - Throws: ``WAVError/stream(_:)`` only.
    public mutating func read(maxFrames: Int) throws(WAVError) -> [UInt8]? {
        try frames.read(maxFrames: maxFrames)
    }

    /// Frames delivered by ``read(maxFrames:)`` so far.
    public var framesRead: Int64 { frames.framesRead }

    /// What was tolerated: a trailing partial frame, with its byte offset.
    public var warnings: [DamageEvent] { frames.issues.map(\.damage) }
}

extension RawPCMReader: Sendable where Source: Sendable {}
