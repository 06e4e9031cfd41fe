public import SystemPackage

/// A PCM file being written, as a format's entry in a ``MediaFormatRegistry`` creates it.
/// KeyFrameKit's WAV and raw PCM writer (``PCMFileOutput``) is one.
public protocol PCMFileSink: PCMSink where Failure == PipelineError {
    /// The file written.
    var path: FilePath { get }
    /// The PCM layout written, once the first buffer came.
    var format: PCMFormat? { get }
    /// Frames written.
    var frames: Int64 { get }
}
