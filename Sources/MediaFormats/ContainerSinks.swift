public import SystemPackage

/// A sink whose ``finish()`` leaves the output uncommitted, for a job with several outputs
/// that commits them together once all are complete.
package struct DeferredCommitSink<Inner: MediaSink>: MediaSink {
    package private(set) var inner: Inner

    package init(_ inner: Inner) { self.inner = inner }

    package mutating func write(_ element: Inner.Element) throws(Inner.Failure) { try inner.write(element) }
    package mutating func receive(_ event: StreamEvent) throws(Inner.Failure) { try inner.receive(event) }

    /// Nothing: the job commits the byte sink itself.
    package mutating func finish() throws(Inner.Failure) {}

    package mutating func cancel() { inner.cancel() }
}

/// A ``/MediaCore/PacketSink`` that writes an MP4 video track's samples (length-prefixed NAL units)
/// as an Annex-B byte stream (ITU-T H.264/H.265, Annex B), with the parameter sets from the track's
/// `avcC`/`hvcC` before each sync sample.
public struct AnnexBFileWriter: PacketSink {
    private var converter: AnnexBConverter
    private let sink: FileByteSink
    private let trackID: UInt32
    private var count = 0

    /// A writer of `track`'s samples to `sink`.
    public init(track: MP4Track, sink: FileByteSink) throws(PipelineError) {
        do { converter = try track.annexBConverter() } catch { throw .container(error) }
        self.sink = sink
        trackID = track.id
    }

    /// Writes one sample as Annex-B NAL units.
    public mutating func write(_ sample: MediaSample) throws(PipelineError) {
        do {
            let bytes = try converter.convert(sample.data, isSync: sample.isSync, trackID: trackID, sampleIndex: count)
            try sink.write(bytes)
        } catch {
            throw PipelineError(error)
        }
        count += 1
    }

    /// Commits the file.
    public mutating func finish() throws(PipelineError) {
        do { try sink.commit() } catch { throw .stream(error) }
    }

    /// Abandons the file.
    public mutating func cancel() { sink.cancel() }
}

/// An ``/MP4/MP4Muxer`` as a ``/MediaCore/PacketSink``: started when made, finished by
/// ``finish()``.
public struct MuxerOutput: PacketSink {
    /// The muxer.
    public let muxer: MP4Muxer
    /// The file written.
    public let path: FilePath

    /// Starts a muxer writing `path` as `configuration` says.
    public init(path: FilePath, configuration: MuxerConfiguration) throws(PipelineError) {
        self.path = path
        do {
            muxer = try MP4Muxer(path: path, configuration: configuration)
            try muxer.start()
        } catch { throw .container(error) }
    }

    /// Appends a sample to the track of its media type.
    public mutating func write(_ sample: MediaSample) throws(PipelineError) {
        do { try muxer.append(sample) } catch { throw .container(error) }
    }

    /// Appends a run of samples to the track of its media type, with one write of its bytes.
    public mutating func write(run: MediaSampleRun) throws(PipelineError) {
        do { try muxer.append(run: run) } catch { throw .container(error) }
    }

    /// Writes the movie and gives the file its name.
    public mutating func finish() throws(PipelineError) {
        do { try muxer.finish() } catch { throw .container(error) }
    }

    /// Removes the output.
    public mutating func cancel() { muxer.cancel() }
}
