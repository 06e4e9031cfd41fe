/// Something that takes media one element at a time: the last stage of every KeyFrameKit job.
///
/// A sink is pushed to with ``write(_:)``, then either completed with ``finish()`` (a file
/// gets its name, a device drains) or abandoned with ``cancel()`` (nothing half-written is left
/// under an output's name where that is possible).
public protocol MediaSink<Element> {
    /// What the sink takes: a ``MediaSample`` (packets) or a ``PCMBuffer``.
    associatedtype Element
    /// What writing can fail with.
    associatedtype Failure: Error

    /// Takes one element.
    mutating func write(_ element: Element) throws(Failure)
    /// Completes the output: writes what is buffered and the trailer, commits the file.
    mutating func finish() throws(Failure)
    /// Gives up, removing what a file output wrote (an output written in place for crash
    /// safety keeps what it has).
    mutating func cancel()
}

/// A sink of compressed packets: an ADTS writer, an MP4 muxer, an Annex-B writer.
public protocol PacketSink: MediaSink where Element == MediaSample {}

/// A sink of interleaved PCM: a WAV or raw PCM file, a playback device, an encoder's input.
public protocol PCMSink: MediaSink where Element == PCMBuffer {}
