internal import AudioBitstreams
internal import MediaCore
internal import MediaFormats
internal import MP4
internal import SystemPackage

/// Edits of the containers KeyFrameKit writes itself besides MP4, each written as the container
/// it was read from: native FLAC (frames kept, boundary frames encoded again) and MP3 (frames
/// kept behind a reservoir frame, the Info frame's delay and padding trimming the rest) and Ogg
/// Opus (200 ms of pre-roll kept, the pre-skip and the last granule position trimming).
extension AudioEditing {
    /// A native file to edit: its container, rate, length and tags.
    struct NativeStream {
        var path: FilePath
        var format: MediaFileFormat
        var sampleRate: Int
        /// Samples presented.
        var length: Int64
        var metadata: StreamMetadata
        /// What of the file cannot be read (a file cut short): its end, told with every edit of it.
        var damage: [DamageEvent] = []

        /// The title tag.
        var title: String? { metadata.tags.first { $0.key == "title" }?.value }

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
    static let nativeFormats: Set<MediaFileFormat> = [.flac, .mp3, .oggOpus]

    /// `path` as a native stream when `formats` detects one of ``nativeFormats``, else `nil`.
    static func nativeStream(_ path: FilePath, formats: MediaFormatRegistry) throws(PipelineError) -> NativeStream? {
        guard let format = formats.detect(path), nativeFormats.contains(format) else { return nil }
        switch format {
        case .oggOpus:
            // The packets are counted: pages lost to damage hold fewer than the last granule says.
            var input = try OggOpusPacketInput(path: path)
            while try input.next() != nil {}
            let read = max(0, input.decodedSamples - Int64(input.head.preSkip))
            let length = input.trim.validFrameCount.map { min($0, read) } ?? read
            return NativeStream(path: path, format: .oggOpus, sampleRate: 48000, length: length, metadata: input.metadata,
                                damage: input.takeDamage())
        case .mp3:
            // The frames are counted: a file cut short holds fewer than its Info frame says.
            var input = try MP3FrameInput(path: path)
            while try input.next() != nil {}
            let decoded = Int64(input.framesRead) * Int64(input.firstHeader.samplesPerFrame)
            let length = input.info.map { min($0.validSamples, max(0, decoded - Int64($0.priming))) } ?? decoded
            return NativeStream(path: path, format: .mp3, sampleRate: input.firstHeader.sampleRate, length: length, metadata: input.metadata,
                                damage: input.takeDamage())
        default:
            // The frames are counted: a file cut short holds fewer than its STREAMINFO says.
            var input = try FLACFrameInput(path: path)
            while try input.next() != nil {}
            let length = input.streamInfo.totalSamples > 0 ? min(input.streamInfo.totalSamples, input.nextSample) : input.nextSample
            return NativeStream(path: path, format: .flac, sampleRate: input.streamInfo.sampleRate, length: length, metadata: input.metadata,
                                damage: input.takeDamage())
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

    /// Joins native `streams` into `output`: MP3 parts that continue one stream (as `split`
    /// makes them) join into that stream again; the chapters are each part's own, moved to
    /// where the part starts in the output.
    static func joinNative(_ streams: [NativeStream], to output: FilePath, control: JobControl?,
                           progress: ((MediaProgress) -> Void)?) throws(PipelineError) -> Summary {
        guard let first = streams.first else { throw .unsupported("join needs at least one input") }
        var metadata = first.metadata
        // A title every part shares (parts split from one file) is the whole's; else each part's own.
        let titles = Set(streams.map(\.title))
        metadata.tags.removeAll { ($0.key == "title" && titles.count > 1) || $0.key == "track" }
        if first.format == .oggOpus {
            var pieces = [OggOpusSpliceSource.Piece(path: first.path, range: 0..<first.length)]
            for (previous, next) in zip(streams, streams.dropFirst()) {
                pieces.append(OggOpusSpliceSource.Piece(path: next.path, range: 0..<next.length,
                                                        continuedPackets: try continuedPackets(of: previous, in: next)))
            }
            let source = try OggOpusSpliceSource(pieces: pieces)
            return try writeOggOpus(output, source: source, metadata: metadata,
                                    chapters: joinedChapters(streams, starts: source.pieceStarts, continues: pieces.map { $0.continuedPackets > 0 }),
                                    damage: streams.flatMap(\.damage), control: control, progress: progress)
        }
        guard first.format == .mp3 else {
            // FLAC's frames join as they are; a part is taken to continue the one before (a
            // split's next part) when both have the same title, as a split leaves them.
            let continues = streams.indices.map { $0 == 0 || streams[$0].title == streams[$0 - 1].title }
            return try writeNative(output, pieces: streams.map { ($0, 0..<$0.length) }, metadata: metadata,
                                   chapters: joinedChapters(streams, continues: continues), control: control, progress: progress)
        }
        var pieces = [MP3SpliceSource.Piece(path: first.path, range: 0..<first.length)]
        for (previous, next) in zip(streams, streams.dropFirst()) {
            pieces.append(MP3SpliceSource.Piece(path: next.path, range: 0..<next.length, continuedFrames: try continuedFrames(of: previous, in: next)))
        }
        let source = try MP3SpliceSource(pieces: pieces)
        return try writeMP3(output, source: source, sampleRate: first.sampleRate, metadata: metadata,
                            chapters: joinedChapters(streams, starts: source.pieceStarts, continues: pieces.map { $0.continuedFrames > 0 }),
                            damage: streams.flatMap(\.damage), control: control, progress: progress)
    }

    /// How many frames MP3 `next` begins with that `previous` ends with, when `next` is the part
    /// of one stream that follows `previous` (after the reservoir frame a split part starts
    /// with): their bytes are the same, and where `previous`'s presentation ends in them is where
    /// `next`'s begins. 0 otherwise: the parts of different streams keep their own priming and
    /// padding at the seam.
    static func continuedFrames(of previous: NativeStream, in next: NativeStream) throws(PipelineError) -> Int {
        var before = try MP3FrameInput(path: previous.path)
        var tail: [[UInt8]] = []
        while let frame = try before.next() {
            tail.append(frame.data)
            if tail.count > 64 { tail.removeFirst(61) }
        }
        tail = Array(tail.suffix(3))
        var after = try MP3FrameInput(path: next.path)
        var head: [[UInt8]] = []
        while head.count < 5, let frame = try after.next() { head.append(frame.data) }
        guard let a = before.info, let b = after.info, before.firstHeader.samplesPerFrame == after.firstHeader.samplesPerFrame else { return 0 }
        let frame = Int64(before.firstHeader.samplesPerFrame)
        let frames = Int64(before.framesRead)
        // The whole of `previous` is written: less than a frame of padding.
        guard frames * frame - Int64(a.priming) - previous.length < frame else { return 0 }
        for skipped in 0...1 {
            for count in stride(from: 3, through: 1, by: -1) where skipped + count <= head.count && count <= tail.count {
                guard Array(tail.suffix(count)) == Array(head[skipped..<(skipped + count)]) else { continue }
                let end = Int64(a.priming) + previous.length - (frames - Int64(count)) * frame
                if end == Int64(b.priming) - Int64(skipped) * frame { return skipped + count }
            }
        }
        return 0
    }

    /// How many packets Ogg Opus `next` begins with that `previous` ends with, when `next` is the
    /// part of one stream that follows `previous` (a split part's pre-roll): their bytes are the
    /// same, and where `previous`'s presentation ends in them is where `next`'s begins. 0
    /// otherwise: the parts of different streams keep their own pre-skip and padding at the seam.
    static func continuedPackets(of previous: NativeStream, in next: NativeStream) throws(PipelineError) -> Int {
        // A split part repeats its pre-roll: up to 200 ms of 2.5-ms packets, and the one holding
        // the cut.
        let most = Int(OpusPacket.editPreRoll / 120) + 2
        var before = try OggOpusPacketInput(path: previous.path)
        var tail: [MediaSample] = []
        while let packet = try before.next() {
            tail.append(packet)
            if tail.count > 2 * most { tail.removeFirst(most) }
        }
        tail = Array(tail.suffix(most))
        var after = try OggOpusPacketInput(path: next.path)
        var head: [MediaSample] = []
        while head.count < most, let packet = try after.next() { head.append(packet) }
        let end = Int64(before.head.preSkip) + previous.length
        for count in stride(from: min(tail.count, head.count), through: 1, by: -1) {
            guard zip(tail.suffix(count), head.prefix(count)).allSatisfy({ $0.data == $1.data }) else { continue }
            // `previous` ends inside the shared packets exactly where `next` begins in them.
            let overlapStart = tail[tail.count - count].presentationTime.value
            if end - overlapStart == Int64(after.head.preSkip), before.decodedSamples - end < 5760 { return count }
        }
        return 0
    }

    /// Writes the packets of `source` into `sink`, `metadata` (its chapters `chapters`) told
    /// first; the summary counts `samples` presented at `sampleRate`.
    static func writeSplice<Source: MediaSource, Sink: PacketFileSink>(
        _ source: Source, into sink: Sink, codec: AudioCodecID, samples: Int64, sampleRate: Int, metadata: StreamMetadata,
        chapters: [MovieChapter], damage: [DamageEvent], control: JobControl?, progress: ((MediaProgress) -> Void)?
    ) throws(PipelineError) -> Summary where Source.Element == MediaSample {
        var told = metadata
        told.chapters = chapters.normalized().map { StreamMetadata.Chapter(start: $0.startTime, title: $0.title) }
        // ID3's TLEN says the source's length in milliseconds: not the edit's.
        told.tags.removeAll { $0.key.uppercased() == "TLEN" }
        var announced = AnnouncingSource(source, announcing: [.metadata(told)])
        var sink = sink
        var report = try Pump.run(from: &announced, into: &sink, control: control, progress: progress)
        // An input cut short is edited as far as it reads; what is lost comes first, once.
        report.damage = damage + report.damage.filter { event in !damage.contains { $0.kind == event.kind && $0.offset == event.offset } }
        return Summary(output: sink.path, codec: codec, packets: Int(report.elements), samples: samples, sampleRate: sampleRate,
                       chapters: chapters.normalized(), report: report)
    }

    /// Writes Opus packets from `source` to the Ogg Opus `output`.
    static func writeOggOpus(_ output: FilePath, source: OggOpusSpliceSource, metadata: StreamMetadata, chapters: [MovieChapter],
                             damage: [DamageEvent], control: JobControl?, progress: ((MediaProgress) -> Void)?) throws(PipelineError) -> Summary {
        try writeSplice(source, into: try OggOpusFileOutput(path: output), codec: .opus, samples: source.gapless.validLength ?? 0, sampleRate: 48000,
                        metadata: metadata, chapters: chapters, damage: damage, control: control, progress: progress)
    }

    /// Writes MP3 frames from `source` to `output`.
    static func writeMP3(_ output: FilePath, source: MP3SpliceSource, sampleRate: Int, metadata: StreamMetadata, chapters: [MovieChapter],
                         damage: [DamageEvent], control: JobControl?, progress: ((MediaProgress) -> Void)?) throws(PipelineError) -> Summary {
        try writeSplice(source, into: try MP3FileOutput(path: output), codec: .mp3, samples: source.gapless.validLength ?? 0, sampleRate: sampleRate,
                        metadata: metadata, chapters: chapters, damage: damage, control: control, progress: progress)
    }

    /// Writes `pieces` one after another to `output`, with `metadata` (its chapters `chapters`).
    static func writeNative(_ output: FilePath, pieces: [(stream: NativeStream, range: Range<Int64>)], metadata: StreamMetadata,
                            chapters: [MovieChapter], control: JobControl?, progress: ((MediaProgress) -> Void)?) throws(PipelineError) -> Summary {
        guard let first = pieces.first?.stream else { throw .unsupported("nothing to write") }
        let damage = pieces.flatMap(\.stream.damage)
        if first.format == .oggOpus {
            return try writeOggOpus(output, source: try OggOpusSpliceSource(pieces: pieces.map { OggOpusSpliceSource.Piece(path: $0.stream.path, range: $0.range) }),
                                    metadata: metadata, chapters: chapters, damage: damage, control: control, progress: progress)
        }
        if first.format == .mp3 {
            return try writeMP3(output, source: try MP3SpliceSource(pieces: pieces.map { MP3SpliceSource.Piece(path: $0.stream.path, range: $0.range) }),
                                sampleRate: first.sampleRate, metadata: metadata, chapters: chapters, damage: damage, control: control, progress: progress)
        }
        let source = try FLACSpliceSource(pieces: pieces.map { FLACSpliceSource.Piece(path: $0.stream.path, range: $0.range) })
        return try writeSplice(source, into: try FLACFileOutput(path: output), codec: .flac, samples: source.totalSamples,
                               sampleRate: first.sampleRate, metadata: metadata, chapters: chapters, damage: damage, control: control, progress: progress)
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
