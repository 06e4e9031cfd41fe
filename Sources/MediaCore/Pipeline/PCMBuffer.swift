/// Interleaved PCM frames with their layout: what flows between PCM sources, transforms and
/// sinks.
///
/// A value type over a copy-on-write array: passing a buffer along a pipeline copies no
/// samples.
public struct PCMBuffer: Sendable, Hashable {
    /// The layout of ``bytes`` (interleaved).
    public var format: PCMFormat
    /// Whole frames of interleaved samples.
    public var bytes: [UInt8]
    /// When the first frame was captured or is presented, when known.
    public var presentationTime: MediaTime?

    /// A buffer of `bytes` laid out as `format`.
    public init(format: PCMFormat, bytes: [UInt8], presentationTime: MediaTime? = nil) {
        self.format = format
        self.bytes = bytes
        self.presentationTime = presentationTime
    }

    /// Frames in the buffer.
    public var frameCount: Int { bytes.count / max(format.bytesPerFrame, 1) }

    /// Seconds of audio in the buffer.
    public var seconds: Double { Double(frameCount) / Double(max(format.sampleRate, 1)) }
}
