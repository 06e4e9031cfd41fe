/// PCM from a file: a WAV (any of the formats ``WAVReader`` reads) or raw interleaved PCM whose
/// layout the caller gives (the CLI's `--sample-rate`, `--channels`, `--format`).
public struct PCMFileReader {
    private enum Reader {
        case wav(WAVReader<FileByteSource>)
        case raw(RawPCMReader<FileByteSource>)
    }

    private var reader: Reader
    /// The PCM layout.
    public let format: PCMFormat
    /// Frames in the file, when the header or the file size says.
    public let frameCount: Int64?

    /// Opens a WAV file.
    ///
    /// - Parameter allowTruncated: accept a file that ends before its data chunk does (a cut
    ///   recording) and read what is there; by default that header lie is an error.
    public init(wavPath path: String, allowTruncated: Bool = false) throws(PipelineError) {
        do {
            let source = try FileByteSource(path: path)
            let wav = try WAVReader(source: source)
            if !allowTruncated, let declared = wav.declaredDataByteCount, let size = source.size(),
               declared > size - wav.dataOffset {
                throw WAVError.dataBeyondFile(declared: declared, available: max(0, size - wav.dataOffset), offset: wav.dataOffset)
            }
            reader = .wav(wav)
            format = wav.format
            frameCount = wav.frameCount
        } catch let error as ByteStreamError {
            throw .stream(error)
        } catch let error as WAVError {
            throw .wav(error)
        } catch {
            throw .unsupported("\(path): \(error)")
        }
    }

    /// Opens raw interleaved PCM laid out as `format`.
    public init(rawPath path: String, format: PCMFormat) throws(PipelineError) {
        do {
            let raw = try RawPCMReader(source: try FileByteSource(path: path), format: format)
            reader = .raw(raw)
            self.format = raw.format
            frameCount = raw.frameCount
        } catch let error as ByteStreamError {
            throw .stream(error)
        } catch let error as WAVError {
            throw .wav(error)
        } catch {
            throw .unsupported("\(path): \(error)")
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

    /// What was odd about the file but not fatal (a data chunk longer than the file, a partial
    /// last frame).
    public var warnings: [String] {
        switch reader {
        case .wav(let wav): wav.warnings
        case .raw(let raw): raw.warnings
        }
    }
}
