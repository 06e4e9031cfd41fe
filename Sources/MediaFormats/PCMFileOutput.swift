public import SystemPackage

/// A PCM output file, as a ``/MediaCore/PCMSink``: a WAV (header from the first buffer's layout) or
/// raw PCM, chosen by the name (``MediaFileFormat/init(nameOf:)``), written under a temporary name
/// and committed by ``finish()``.
public struct PCMFileOutput: PCMFileSink {
    private enum Writer {
        case wav(WAVFileWriter<FileByteSink>)
        case raw(RawPCMWriter<FileByteSink>)
    }

    private var writer: Writer
    /// The file written.
    public let path: FilePath
    /// What ``finish()`` says when no PCM came (the job's words: "no AAC frames could be decoded").
    private let emptyMessage: String
    /// The layout written, once the first buffer has come.
    public private(set) var format: PCMFormat?
    /// Frames written.
    public private(set) var frames: Int64 = 0

    /// Creates the output at `path`, of the format its name says, through the format registry
    /// (``MediaFormatRegistry/containers``); `emptyMessage` is the error when no PCM is written.
    ///
    /// - Parameters:
    ///   - path: the file to write; `.wav` or `.pcm`/`.raw` chooses the format.
    ///   - inPlace: write the file under its own name from the start (a recording that must
    ///     survive a kill), instead of a temporary name.
    ///   - emptyMessage: the message of the error thrown by ``finish()`` when no PCM was written.
    ///   - format: the format, for a path whose name does not say it (standard output, `-`).
    /// - Throws: `PipelineError.unsupported` when the name is not `.wav` or `.pcm`/`.raw`;
    ///   `PipelineError.stream` when it cannot be created.
    public init(path: FilePath, inPlace: Bool = false, emptyMessage: String? = nil, format: MediaFileFormat? = nil) throws(PipelineError) {
        self = try MediaFormatRegistry.containers.pcmOutput(
            path, as: PCMFileOutput.self, options: MediaFormatRegistry.OutputOptions(inPlace: inPlace, emptyMessage: emptyMessage, format: format))
    }

    /// Creates a WAV file at `path` (its header from the first buffer's layout).
    public init(wavPath path: FilePath, inPlace: Bool = false, emptyMessage: String? = nil) throws(PipelineError) {
        try self.init(path: path, wav: true, inPlace: inPlace, emptyMessage: emptyMessage)
    }

    /// Creates a raw PCM file at `path`: the interleaved bytes alone.
    public init(rawPath path: FilePath, inPlace: Bool = false, emptyMessage: String? = nil) throws(PipelineError) {
        try self.init(path: path, wav: false, inPlace: inPlace, emptyMessage: emptyMessage)
    }

    private init(path: FilePath, wav: Bool, inPlace: Bool, emptyMessage: String?) throws(PipelineError) {
        self.path = path
        self.emptyMessage = emptyMessage ?? "\(path): no audio to write"
        let sink: FileByteSink
        do { sink = try FileByteSink(path: path, atomic: !inPlace) } catch { throw .stream(error) }
        writer = wav ? .wav(WAVFileWriter(sink: sink)) : .raw(RawPCMWriter(sink: sink))
    }

    /// Writes a buffer.
    public mutating func write(_ buffer: PCMBuffer) throws(PipelineError) {
        guard !buffer.bytes.isEmpty else { return }
        do {
            switch writer {
            case .wav(var wav):
                defer { writer = .wav(wav) }
                try wav.write(buffer)
            case .raw(var raw):
                defer { writer = .raw(raw) }
                try raw.write(buffer)
            }
        } catch {
            throw .wav(error)
        }
        format = buffer.format
        frames += Int64(buffer.frameCount)
    }

    /// Pushes what is buffered to the file, and a WAV's sizes into its header, without
    /// committing: a crash-safe recording's once-a-second checkpoint.
    public mutating func checkpoint() throws(PipelineError) {
        do {
            switch writer {
            case .wav(var wav):
                defer { writer = .wav(wav) }
                try wav.checkpoint()
            case .raw(var raw):
                defer { writer = .raw(raw) }
                try raw.checkpoint()
            }
        } catch {
            throw .wav(error)
        }
    }

    /// Completes the file and gives it its name.
    ///
    /// - Throws: `PipelineError.unsupported` with the `emptyMessage` when nothing was
    ///   written (the file is removed).
    public mutating func finish() throws(PipelineError) {
        guard format != nil else {
            cancel()
            throw .unsupported(emptyMessage)
        }
        do {
            switch writer {
            case .wav(var wav):
                defer { writer = .wav(wav) }
                try wav.finish()
            case .raw(var raw):
                defer { writer = .raw(raw) }
                try raw.finish()
            }
        } catch {
            throw .wav(error)
        }
    }

    /// Removes the file, even one written in place (a recording that never started).
    public mutating func discard() {
        switch writer {
        case .wav(var wav):
            wav.discard()
            writer = .wav(wav)
        case .raw(var raw):
            raw.discard()
            writer = .raw(raw)
        }
    }

    /// Abandons the file (a file written in place keeps what it has).
    public mutating func cancel() {
        switch writer {
        case .wav(var wav):
            wav.cancel()
            writer = .wav(wav)
        case .raw(var raw):
            raw.cancel()
            writer = .raw(raw)
        }
    }
}
