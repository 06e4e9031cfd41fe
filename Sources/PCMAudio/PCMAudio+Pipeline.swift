public import MediaCore

/// What ``WAVReader`` and ``RawPCMReader`` share, so that one ``PCMSource`` conformance
/// serves both.
protocol PCMFrameReading: PCMSource where Failure == WAVError {
    var format: PCMFormat { get }
    var frameCount: Int64? { get }
    var framesRead: Int64 { get }
    var warnings: [DamageEvent] { get }
    var reportedWarningCount: Int { get set }
    mutating func read(maxFrames: Int) throws(WAVError) -> [UInt8]?
}

/// Frames a PCM file reader hands over per ``MediaSource/next()``: 16 Ki, large enough that
/// the per-call cost disappears, small enough to stay in cache.
let pcmFramesPerBuffer = 16 * 1024

extension PCMFrameReading {
    /// The file's PCM layout.
    public var pcmFormat: PCMFormat? { format }

    /// The next buffer of up to 16 Ki frames, `nil` at the end of the data.
    public mutating func next() throws(WAVError) -> PCMBuffer? {
        guard let bytes = try read(maxFrames: pcmFramesPerBuffer) else { return nil }
        return PCMBuffer(format: format, bytes: bytes)
    }

    /// Seconds read, out of the length the header or the file size gives.
    public var progress: MediaProgress {
        let rate = Double(max(format.sampleRate, 1))
        return MediaProgress(mediaSeconds: Double(framesRead) / rate, totalSeconds: frameCount.map { Double($0) / rate })
    }

    /// What the reader tolerated since the last call (its ``WAVReader/warnings``): a `data`
    /// chunk longer than the file, a partial last frame.
    public mutating func takeDamage() -> [DamageEvent] {
        let all = warnings
        defer { reportedWarningCount = all.count }
        return Array(all.dropFirst(reportedWarningCount))
    }
}

extension WAVReader: PCMFrameReading {}

extension RawPCMReader: PCMFrameReading {}

/// A ``/MediaCore/PCMSink`` that writes a WAV file (RIFF, or RF64 past 4 GiB) to a committable byte
/// sink. The header is written with the first buffer, in its layout, so a decoder's output (whose
/// layout is known only then) can go straight in; ``finish()`` writes the sizes and commits.
public struct WAVFileWriter<Sink: CommittableByteSink & SeekableByteSink>: PCMSink {
    private var sink: Sink
    private var writer: WAVWriter<Sink>?

    /// A writer to `sink`.
    public init(sink: Sink) {
        self.sink = sink
    }

    /// The layout written, once the first buffer has come.
    public var format: PCMFormat? { writer?.format }
    /// Frames written.
    public var framesWritten: Int64 { writer?.framesWritten ?? 0 }

    /// Writes a buffer (the header first, with the first one).
    ///
    /// - Throws: ``WAVError/unsupportedFormat(field:value:allowed:)`` when a buffer's layout
    ///   differs from the first's; the errors of ``WAVWriter``.
    public mutating func write(_ buffer: PCMBuffer) throws(WAVError) {
        guard !buffer.bytes.isEmpty else { return }
        if writer == nil { writer = try WAVWriter(sink: sink, format: buffer.format) }
        guard writer!.format == buffer.format else {
            throw .unsupportedFormat(field: "PCM layout", value: Int64(buffer.format.sampleRate),
                                     allowed: "the layout of the first buffer (a WAV has one)")
        }
        try writer!.write(buffer.bytes)
    }

    /// Writes the sizes into the header and pushes the bytes to the file without committing:
    /// what a crash-safe recording does once a second.
    public mutating func checkpoint() throws(WAVError) {
        try writer?.updateHeader()
        if let writer { sink = writer.sink }
        do { try sink.flush() } catch { throw .stream(error) }
    }

    /// Writes the final sizes and commits the file.
    ///
    /// - Throws: ``WAVError/unsupportedFormat(field:value:allowed:)`` when no PCM was written
    ///   (a WAV needs a layout); the errors of ``WAVWriter``.
    public mutating func finish() throws(WAVError) {
        guard writer != nil else {
            throw .unsupportedFormat(field: "PCM frames", value: 0, allowed: "at least one buffer (a WAV needs a layout)")
        }
        try writer!.finish()
        sink = writer!.sink
        do { try sink.commit() } catch { throw .stream(error) }
    }

    /// Abandons the file.
    public mutating func cancel() {
        if let writer { sink = writer.sink }
        sink.cancel()
    }

    /// Removes the file, even one written in place.
    public mutating func discard() {
        if let writer { sink = writer.sink }
        sink.discard()
    }
}

/// A ``/MediaCore/PCMSink`` that writes raw interleaved PCM, exactly the bytes it is given, to a
/// committable byte sink.
public struct RawPCMWriter<Sink: CommittableByteSink>: PCMSink {
    private var sink: Sink

    /// The layout written, once the first buffer has come.
    public private(set) var format: PCMFormat?
    /// Frames written.
    public private(set) var framesWritten: Int64 = 0

    /// A writer to `sink`.
    public init(sink: Sink) {
        self.sink = sink
    }

    /// Writes a buffer's bytes.
    ///
    /// - Throws: ``WAVError/unsupportedFormat(field:value:allowed:)`` when a buffer's layout
    ///   differs from the first's; ``WAVError/stream(_:)``.
    public mutating func write(_ buffer: PCMBuffer) throws(WAVError) {
        guard !buffer.bytes.isEmpty else { return }
        if format == nil { format = buffer.format }
        guard format == buffer.format else {
            throw .unsupportedFormat(field: "PCM layout", value: Int64(buffer.format.sampleRate), allowed: "the layout of the first buffer")
        }
        do { try sink.write(buffer.bytes) } catch { throw .stream(error) }
        framesWritten += Int64(buffer.frameCount)
    }

    /// Pushes what is buffered to the file without committing (a crash-safe checkpoint).
    public mutating func checkpoint() throws(WAVError) {
        do { try sink.flush() } catch { throw .stream(error) }
    }

    /// Commits the file.
    public mutating func finish() throws(WAVError) {
        do { try sink.commit() } catch { throw .stream(error) }
    }

    /// Abandons the file.
    public mutating func cancel() { sink.cancel() }

    /// Removes the file, even one written in place.
    public mutating func discard() { sink.discard() }
}
