public import SystemPackage

/// PCM from a file, as a ``/MediaCore/PCMSource``: a WAV (any layout ``/PCMAudio/WAVReader`` reads)
/// or raw interleaved PCM whose layout the caller gives (the CLI's `--sample-rate`, `--channels`,
/// `--format`).
public struct PCMFileReader: MediaFormatRegistry.PCMFileSource {
    private enum Reader {
        case wav(WAVReader<FileByteSource>)
        case raw(RawPCMReader<FileByteSource>)
    }

    private var reader: Reader
    /// The file read.
    public let path: FilePath
    /// The PCM layout.
    public let format: PCMFormat
    /// Frames in the file, when the header or the file size says.
    public let frameCount: Int64?

    /// Opens the PCM file at `path` through the format registry (``MediaFormatRegistry/containers``):
    /// a WAV when its bytes say so (whatever its name), else raw PCM laid out as `rawFormat`
    /// when the name says `.pcm`/`.raw`.
    ///
    /// - Throws: `PipelineError.unsupported` for a file that is neither, or raw PCM
    ///   without a layout; the errors of the two initialisers below.
    public init(path: FilePath, rawFormat: PCMFormat? = nil, allowTruncated: Bool = false) throws(PipelineError) {
        self = try MediaFormatRegistry.containers.pcmInput(
            path, as: PCMFileReader.self, options: MediaFormatRegistry.InputOptions(rawFormat: rawFormat, allowsTruncatedWAV: allowTruncated))
    }

    /// Opens a WAV file.
    ///
    /// - Parameters:
    ///   - path: the WAV (or RF64) file.
    ///   - allowTruncated: accept a file that ends before its data chunk does (a cut
    ///     recording) and read what is there; by default that header lie is an error.
    public init(wavPath path: FilePath, allowTruncated: Bool = false) throws(PipelineError) {
        self.path = path
        do {
            let source = try FileByteSource(path: path)
            let wav = try WAVReader(source: source)
            if !allowTruncated, let declared = wav.declaredDataByteCount, let size = source.size(),
               declared > size - wav.dataOffset {
                throw WAVError.dataBeyondFile(declared: declared, available: max(0, size - wav.dataOffset), offset: wav.dataOffset)
            }
            reader = .wav(wav)
            var layout = wav.format
            // WAVE_FORMAT_EXTENSIBLE's speakers travel with the PCM (a quad file stays quad).
            if let mask = wav.channelMask, mask != 0, mask.nonzeroBitCount == layout.channelCount { layout.channelMask = UInt64(mask) }
            format = layout
            frameCount = wav.frameCount
        } catch {
            throw PipelineError(error)
        }
    }

    /// Opens raw interleaved PCM laid out as `format`.
    public init(rawPath path: FilePath, format: PCMFormat) throws(PipelineError) {
        self.path = path
        do {
            let raw = try RawPCMReader(source: try FileByteSource(path: path), format: format)
            reader = .raw(raw)
            self.format = raw.format
            frameCount = raw.frameCount
        } catch {
            throw PipelineError(error)
        }
    }

    /// The layout.
    public var pcmFormat: PCMFormat? { format }

    /// `WAV` or `raw PCM`.
    public var readerName: String {
        if case .wav = reader { "WAV" } else { "raw PCM" }
    }

    /// None: KeyFrameKit reads no tags from a PCM file (a job that wants a WAV's LIST/INFO asks
    /// libavformat).
    public var metadata: StreamMetadata { StreamMetadata() }

    /// The next buffer (16 Ki frames), `nil` at the end.
    public mutating func next() throws(PipelineError) -> PCMBuffer? {
        do {
            switch reader {
            case .wav(var wav):
                defer { reader = .wav(wav) }
                guard var buffer = try wav.next() else { return nil }
                buffer.format.channelMask = format.channelMask
                return buffer
            case .raw(var raw):
                defer { reader = .raw(raw) }
                return try raw.next()
            }
        } catch {
            throw .wav(error)
        }
    }

    /// Up to `maxFrames` whole frames of interleaved bytes, `nil` at the end.
    public mutating func read(maxFrames: Int) throws(PipelineError) -> [UInt8]? {
        do {
            switch reader {
            case .wav(var wav):
                defer { reader = .wav(wav) }
                return try wav.read(maxFrames: maxFrames)
            case .raw(var raw):
                defer { reader = .raw(raw) }
                return try raw.read(maxFrames: maxFrames)
            }
        } catch {
            throw .wav(error)
        }
    }

    /// Seconds read, out of the file's length.
    public var progress: MediaProgress {
        switch reader {
        case .wav(let wav): wav.progress
        case .raw(let raw): raw.progress
        }
    }

    /// What was odd about the file but not fatal, since the last call.
    public mutating func takeDamage() -> [DamageEvent] {
        switch reader {
        case .wav(var wav):
            defer { reader = .wav(wav) }
            return wav.takeDamage()
        case .raw(var raw):
            defer { reader = .raw(raw) }
            return raw.takeDamage()
        }
    }

    /// Everything that was odd about the file but not fatal (a data chunk longer than the file,
    /// a partial last frame), each with its byte offset.
    public var warnings: [DamageEvent] {
        switch reader {
        case .wav(let wav): wav.warnings
        case .raw(let raw): raw.warnings
        }
    }
}
