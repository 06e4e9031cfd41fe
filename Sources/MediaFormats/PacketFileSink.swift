public import SystemPackage

/// A file of compressed audio being written, as a format's entry in a ``MediaFormatRegistry``
/// creates it: packets in, with the stream's configuration in each packet's
/// ``/MediaCore/MediaSample/format`` and the gapless numbers as stream events. KeyFrameKit's ADTS
/// and MP4 writer (``AudioPacketOutput``) is one.
public protocol PacketFileSink: PacketSink where Failure == PipelineError {
    /// The file written.
    var path: FilePath { get }
    /// The container.
    var format: MediaFileFormat { get }
}
