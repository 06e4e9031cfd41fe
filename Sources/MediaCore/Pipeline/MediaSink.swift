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
    /// Takes a stream event (``StreamEvent``), in order with the elements: a muxer learns the
    /// priming and the valid length here. By default ignored.
    mutating func receive(_ event: StreamEvent) throws(Failure)
    /// Completes the output: writes what is buffered and the trailer, commits the file.
    mutating func finish() throws(Failure)
    /// Gives up, removing what a file output wrote (an output written in place for crash
    /// safety keeps what it has).
    mutating func cancel()
}

extension MediaSink {
    /// Ignores the event.
    public mutating func receive(_ event: StreamEvent) throws(Failure) {}
}

/// A sink of compressed packets: an ADTS writer, an MP4 muxer, an Annex-B writer.
public protocol PacketSink: MediaSink where Element == MediaSample {
    /// Takes a run of samples whose bytes lie back to back; by default one sample at a time.
    /// Container writers take a run whole, with one copy of its bytes.
    mutating func write(run: MediaSampleRun) throws(Failure)
}

extension PacketSink {
    /// Writes the run's samples one at a time.
    public mutating func write(run: MediaSampleRun) throws(Failure) {
        for sample in run.samples { try write(sample) }
    }
}

/// A packet sink seen as a sink of ``MediaSampleRun``s, for a pump whose source yields runs
/// (``PacketSink/write(run:)``).
public struct SampleRunSink<Base: PacketSink>: MediaSink {
    /// The packet sink written to.
    public private(set) var base: Base

    /// A sink of runs into `base`.
    public init(_ base: Base) { self.base = base }

    /// Writes the run into the packet sink.
    public mutating func write(_ run: MediaSampleRun) throws(Base.Failure) { try base.write(run: run) }

    /// Hands the event to the packet sink.
    public mutating func receive(_ event: StreamEvent) throws(Base.Failure) { try base.receive(event) }

    /// Finishes the packet sink.
    public mutating func finish() throws(Base.Failure) { try base.finish() }

    /// Cancels the packet sink.
    public mutating func cancel() { base.cancel() }
}

/// A sink of interleaved PCM: a WAV or raw PCM file, a playback device, an encoder's input.
public protocol PCMSink: MediaSink where Element == PCMBuffer {}
