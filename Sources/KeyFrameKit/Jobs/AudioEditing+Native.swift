internal import AudioBitstreams
internal import MediaCore
internal import MediaFormats
internal import MP4
internal import SystemPackage

/// Edits of the containers KeyFrameKit writes itself besides MP4: native FLAC (frames kept,
/// boundary frames encoded again), each written as the container it was read from.
extension AudioEditing {
    /// A native file to edit: its container, rate, length and tags.
    struct NativeStream {
        var path: FilePath
        var format: MediaFileFormat
        var sampleRate: Int
        /// Samples presented.
        var length: Int64
        var metadata: StreamMetadata

        /// The chapters as an MP4's, at the stream's rate.
        var chapters: [MovieChapter] {
            let scale = Int32(clamping: sampleRate)
            return metadata.chapters.map { chapter in
                MovieChapter(startTime: MediaTime(value: (try? chapter.start.converted(to: scale, rounding: .nearest).value) ?? 0, timescale: scale),
                             title: chapter.title)
            }
        }
    }

    /// The formats edited natively.
    static let nativeFormats: Set<MediaFileFormat> = [.flac]

    /// `path` as a native stream when `formats` detects one of ``nativeFormats``, else `nil`.
    static func nativeStream(_ path: FilePath, formats: MediaFormatRegistry) throws(PipelineError) -> NativeStream? {
        guard let format = formats.detect(path), nativeFormats.contains(format) else { return nil }
        switch format {
        default:
            var input = try FLACFrameInput(path: path)
            var length = input.streamInfo.totalSamples
            if length == 0 {
                // A STREAMINFO that does not say its length: the frames do.
                while try input.next() != nil {}
                length = input.nextSample
            }
            return NativeStream(path: path, format: .flac, sampleRate: input.streamInfo.sampleRate, length: length, metadata: input.metadata)
        }
    }

    /// Refuses an output that is not of `stream`'s container.
    static func checkNativeOutput(_ output: FilePath, for stream: NativeStream, formats: MediaFormatRegistry) throws(PipelineError) {
        guard formats.format(nameOf: output) == stream.format else {
            let names = stream.format.fileExtensions.map { ".\($0)" }.joined(separator: " or ")
            throw .unsupported("\(output): an edit of \(stream.path) is written as \(stream.format) without re-encoding; name the output \(names) "
                               + "(keyframe convert changes the container)", path: output)
        }
    }

    /// The range `start..<end` of `stream`, checked.
    static func presentedRange(of stream: NativeStream, from start: Position, to end: Position?) throws(PipelineError) -> Range<Int64> {
        let lower = start.samples(at: stream.sampleRate), upper = min(end?.samples(at: stream.sampleRate) ?? stream.length, stream.length)
        guard lower < stream.length else {
            throw .unsupported("\(stream.path): the start, \(start), is at or past the end of its \(stream.length) samples")
        }
        guard lower < upper else { throw .unsupported("\(stream.path): the end, \(end?.description ?? "the end"), is not after the start, \(start)") }
        return lower..<upper
    }

    /// Writes `pieces` one after another to `output`, with `metadata` (its chapters `chapters`).
    static func writeNative(_ output: FilePath, pieces: [(stream: NativeStream, range: Range<Int64>)], metadata: StreamMetadata,
                            chapters: [MovieChapter], control: JobControl?, progress: ((MediaProgress) -> Void)?) throws(PipelineError) -> Summary {
        guard let first = pieces.first?.stream else { throw .unsupported("nothing to write") }
        var told = metadata
        told.chapters = chapters.normalized().map { StreamMetadata.Chapter(start: $0.startTime, title: $0.title) }
        var source = AnnouncingSource(try FLACSpliceSource(pieces: pieces.map { FLACSpliceSource.Piece(path: $0.stream.path, range: $0.range) }),
                                      announcing: [.metadata(told)])
        var sink = try FLACFileOutput(path: output)
        let report = try Pump.run(from: &source, into: &sink, control: control, progress: progress)
        return Summary(output: output, codec: .flac, packets: sink.packets, samples: pieces.reduce(0) { $0 + Int64($1.range.count) },
                       sampleRate: first.sampleRate, chapters: chapters.normalized(), report: report)
    }
}

extension AudioEditing.Position {
    /// The position in samples at `rate`.
    func samples(at rate: Int) -> Int64 {
        switch self {
        case .samples(let count): count
        case .seconds(let seconds): Int64(saturating: (seconds * Double(rate)).rounded())
        }
    }
}

extension AudioTrackLayout {
    /// A coder of this track's frames when they are lossless (FLAC, ALAC) and of at most 24 bits.
    var losslessCoder: LosslessFrameCoder? {
        let stream = audioFormat
        let bits: Int?
        switch stream.codec {
        case .flac: bits = (try? FLACStreamInfo(bytes: stream.decoderConfiguration))?.bitsPerSample
        case .alac: bits = (try? ALACSpecificConfig(cookie: stream.decoderConfiguration))?.bitDepth
        default: bits = nil
        }
        guard let bits else { return nil }
        return try? LosslessFrameCoder(stream: stream, bitsPerSample: bits)
    }
}
