internal import MediaCore
internal import SystemPackage

/// The fragmented layout (ISO/IEC 14496-12 8.8): `ftyp`, a `moov` with `mvex` and empty sample
/// tables, then a `moof`+`mdat` per fragment, each flushed to the output when cut, so a killed
/// writer leaves every complete fragment playable. On a clean finish the `moov` written first
/// is overwritten in place with the durations and the edit list (same boxes, same sizes).
///
/// With `defragment`, the finished file is then rewritten under the same name as a faststart
/// file: `ftyp`, a complete `moov`, and one `mdat` holding each fragment's payload in order,
/// copied from the fragmented file, whose chunks are known from the fragments written; the
/// fragmented file stays intact until the new one is renamed over it.
final class FragmentedLayoutWriter: MP4LayoutWriter {
    private(set) var sink: any MP4OutputSink
    private let configuration: MuxerConfiguration
    private let fragmentDuration: MediaTime
    private let defragment: Bool
    private let path: FilePath?
    private(set) var movieWritten = false
    private var fragmentSequence: UInt32 = 0
    private var fragmentStart: MediaTime?
    private var movieOffset: Int64 = 0
    private var movieSize = 0
    /// Each fragment's payload runs in file order: where they are and how long (for defragmenting).
    private var runs: [(offset: Int64, size: Int64)] = []

    init(sink: any MP4OutputSink, configuration: MuxerConfiguration, fragmentDuration: MediaTime, defragment: Bool, path: FilePath?) {
        self.sink = sink
        self.configuration = configuration
        self.fragmentDuration = fragmentDuration
        self.defragment = defragment
        self.path = path
    }

    func prepare() throws(MP4Error) {
        if defragment && path == nil {
            throw .unsupportedLayout("defragmenting on finish rewrites a file by its name; give the muxer a path")
        }
    }

    func write(_ sample: MediaSample, track: MuxerTrack, tracks: [MuxerTrack]) throws(MP4Error) {
        // Every expected track must be known before the moov can be written.
        if !movieWritten { try writeHeader(tracks: tracks) }
        // Cut a fragment once it is long enough: at a video sync sample when there is video (so
        // every fragment starts decodable), else at any audio sample.
        let hasVideo = tracks.contains { $0.mediaType == .video }
        if let start = fragmentStart, let elapsed = try? sample.decodeTime.subtracting(start), elapsed >= fragmentDuration,
           hasVideo ? (track.mediaType == .video && sample.isSync) : true {
            try writeFragment(tracks: tracks)
        }
        if fragmentStart == nil { fragmentStart = sample.decodeTime }
        let dts = try track.record(sample)
        if track.fragmentEntries.isEmpty {
            track.fragmentStartDecodeTime = dts
        } else {
            // As in stts: a sample lasts until the next one starts.
            let index = track.fragmentEntries.count - 1
            track.fragmentEntries[index].duration = UInt32(clamping: dts - track.fragmentLastDecodeTime)
        }
        track.fragmentLastDecodeTime = dts
        track.fragmentData.append(contentsOf: sample.data)
        let pts = try track.ticks(sample.presentationTime)
        let duration = max(0, (try? sample.duration.converted(to: track.timescale, rounding: .nearest).value) ?? 0)
        let flags: UInt32 = sample.isSync ? 0x0200_0000 : 0x0101_0000
        track.fragmentEntries.append((UInt32(clamping: sample.data.count), UInt32(clamping: duration), flags, Int32(clamping: pts - dts)))
    }

    /// The tags the first movie carries (the muxer takes them only until it is written).
    private var metadata = ITunesMetadata()

    func setMetadata(_ metadata: ITunesMetadata) { self.metadata = metadata }

    private func writeHeader(tracks: [MuxerTrack]) throws(MP4Error) {
        movieWritten = true
        var writer = MovieBoxWriter(tracks: tracks, movieTimescale: Self.movieTimescale(tracks, configuration), configuration: configuration)
        writer.fragmented = true
        writer.metadata = metadata
        do {
            try sink.write(MovieBoxWriter.fileType(tracks: tracks, configuration: configuration, fragmented: true))
            movieOffset = sink.byteCount
            let movie = writer.movie()
            movieSize = movie.count
            try sink.write(movie)
            try sink.flush()
        } catch { throw .stream(error) }
    }

    static func movieTimescale(_ tracks: [MuxerTrack], _ configuration: MuxerConfiguration) -> Int32 {
        if let scale = configuration.movieTimescale, scale > 0 { return scale }
        return tracks.first { $0.mediaType == .audio }?.timescale ?? 1000
    }

    /// Writes the buffered samples of every track as one moof+mdat, and flushes it to the output.
    private func writeFragment(tracks: [MuxerTrack]) throws(MP4Error) {
        guard tracks.contains(where: { !$0.fragmentEntries.isEmpty }) else { return }
        if !movieWritten { try writeHeader(tracks: tracks) }
        fragmentSequence += 1
        let active = tracks.filter { !$0.fragmentEntries.isEmpty }
        let size = Self.movieFragment(sequence: fragmentSequence, tracks: active, dataOffsets: active.map { _ in 0 }).count
        var offsets: [Int32] = []
        var running = size + 8
        for track in active {
            offsets.append(Int32(clamping: running))
            running += track.fragmentData.count
        }
        let dataBytes = active.reduce(0) { $0 + $1.fragmentData.count }
        let fragmentOffset = sink.byteCount
        do {
            try sink.write(Self.movieFragment(sequence: fragmentSequence, tracks: active, dataOffsets: offsets))
            try sink.write(BoxWriterBytes.u32(UInt32(clamping: 8 + dataBytes)) + Array("mdat".utf8))
            for track in active { try sink.write(track.fragmentData) }
            try sink.flush()
        } catch { throw .stream(error) }
        for (index, track) in active.enumerated() {
            // Each track's run is one chunk of the defragmented file.
            let runOffset = fragmentOffset + Int64(offsets[index])
            runs.append((runOffset, Int64(track.fragmentData.count)))
            track.placeChunk(at: UInt64(runOffset), sampleCount: UInt32(track.fragmentEntries.count))
            track.fragmentData.removeAll(keepingCapacity: true)
            track.fragmentEntries.removeAll(keepingCapacity: true)
        }
        fragmentStart = nil
    }

    /// A `moof` (ISO/IEC 14496-12 8.8.4) of one `traf` per track: `tfhd` (default-base-is-moof),
    /// `tfdt` (version 1), `trun` with sizes and durations (flags for video, composition
    /// offsets when any), and for audio whose codec rolls an `sbgp` that puts the run in the
    /// `roll` group the movie describes. `userData` (a whole `udta`, ISO/IEC 14496-12 8.10.1 allows one in a
    /// `moof`) comes after the `traf`s.
    static func movieFragment(sequence: UInt32, tracks: [MuxerTrack], dataOffsets: [Int32], userData: [UInt8] = []) -> [UInt8] {
        var box = BoxWriter()
        box.box("moof") { moof in
            moof.fullBox("mfhd") { b in b.u32(sequence) }
            for (index, track) in tracks.enumerated() {
                moof.box("traf") { traf in
                    traf.fullBox("tfhd", flags: 0x02_0000) { b in b.u32(track.id) }
                    traf.fullBox("tfdt", version: 1) { b in b.u64(UInt64(max(0, track.fragmentStartDecodeTime))) }
                    let hasOffsets = track.fragmentEntries.contains { $0.compositionOffset != 0 }
                    let isVideo = track.mediaType == .video
                    var flags: UInt32 = 0x001 | 0x100 | 0x200
                    if isVideo { flags |= 0x400 }
                    if hasOffsets { flags |= 0x800 }
                    traf.fullBox("trun", version: hasOffsets ? 1 : 0, flags: flags) { b in
                        b.u32(UInt32(track.fragmentEntries.count))
                        b.i32(dataOffsets[index])
                        for entry in track.fragmentEntries {
                            b.u32(entry.duration); b.u32(entry.size)
                            if isVideo { b.u32(entry.flags) }
                            if hasOffsets { b.i32(entry.compositionOffset) }
                        }
                    }
                    // The run's samples in the codec's `roll` group (14496-12 8.9.2, 10.1): the
                    // movie's `sgpd` entry 1, as a fragment's own samples need mapping (Opus's 80 ms
                    // of pre-roll; AAC's one packet).
                    if case .audio(let audio) = track.format, let roll = track.audioCodec?.roll(audio), roll != 0 {
                        traf.fullBox("sbgp") { b in
                            b.fourCC("roll"); b.u32(1); b.u32(UInt32(track.fragmentEntries.count)); b.u32(1)
                        }
                    }
                }
            }
            moof.raw(userData)
        }
        return box.bytes
    }

    func finish(context: MuxerContext) throws(MP4Error) {
        for track in context.tracks { track.closeLastDuration() }
        try writeFragment(tracks: context.tracks)
        try rewriteMovie(context: context)
        // The fragmented file is complete here; the rewrite reads it back before it is closed,
        // and replaces it only once the new file is whole.
        var rewriteError: MP4Error?
        if defragment, let path {
            do throws(MP4Error) { try rewriteAsFastStart(context: context, path: path) } catch { rewriteError = error }
            // Written beside an older output, the fragmented file is not renamed over the new
            // fast-start one: it is removed.
            if rewriteError == nil, let file = sink as? FileByteSink, file.writesBeside {
                file.discard()
                return
            }
        }
        do { try sink.commit() } catch { throw .stream(error) }
        if let rewriteError { throw rewriteError }
    }

    /// The moov written first gets the durations (mvhd, mehd, tkhd, mdhd, the edit list and
    /// iTunSMPB): the same boxes with the same sizes, overwritten in place. A killed recording
    /// keeps the first moov, whose zero durations mean "as long as the fragments".
    private func rewriteMovie(context: MuxerContext) throws(MP4Error) {
        var final = MovieBoxWriter(context: context, configuration: configuration)
        final.fragmented = true
        final.fragmentedMediaDurations = Dictionary(context.tracks.map { ($0.id, $0.mediaDuration) }, uniquingKeysWith: { first, _ in first })
        let bytes = final.movie()
        // Every field is fixed-width; a layout change (gapless set only after the first sample)
        // would not fit, and the first moov is then kept rather than overwrite the first moof.
        guard bytes.count == movieSize else { return }
        do { try sink.overwrite(bytes, at: movieOffset) } catch { throw .stream(error) }
    }

    /// Writes `ftyp`, a complete `moov` and one `mdat` of the fragments' payloads to a new file
    /// that replaces the fragmented one when complete.
    private func rewriteAsFastStart(context: MuxerContext, path: FilePath) throws(MP4Error) {
        let output: FileByteSink
        do { output = try FileByteSink(path: path) } catch { throw .stream(error) }
        let fileType = MovieBoxWriter.fileType(tracks: context.tracks, configuration: configuration, fragmented: false)
        let payloadBytes = runs.reduce(Int64(0)) { $0 + $1.size }
        let largeData = payloadBytes + 8 > Int64(UInt32.max)
        // New offset of each run: the runs are copied in file order behind ftyp, moov and the mdat header.
        var relocated: [Int64: Int64] = [:]
        var position: Int64 = 0
        for run in runs {
            relocated[run.offset] = position
            position += run.size
        }
        let fragmentOffsets = context.tracks.map(\.chunkOffsets)
        func writer(dataStart: Int64) -> MovieBoxWriter {
            for (track, offsets) in zip(context.tracks, fragmentOffsets) {
                track.chunkOffsets = offsets.map { UInt64(dataStart + (relocated[Int64($0)] ?? 0)) }
            }
            return MovieBoxWriter(context: context, configuration: configuration)
        }
        let headerSize: Int64 = largeData ? 16 : 8
        var movieSize = Int64(writer(dataStart: Int64(fileType.count) + headerSize).movie().count)
        movieSize = Int64(writer(dataStart: Int64(fileType.count) + movieSize + headerSize).movie().count)
        let movie = writer(dataStart: Int64(fileType.count) + movieSize + headerSize).movie()
        do throws(ByteStreamError) {
            try output.write(fileType)
            try output.write(movie)
            if largeData {
                try output.write(BoxWriterBytes.u32(1) + Array("mdat".utf8) + BoxWriterBytes.u64(UInt64(payloadBytes + 16)))
            } else {
                try output.write(BoxWriterBytes.u32(UInt32(payloadBytes + 8)) + Array("mdat".utf8))
            }
            for run in runs {
                var copied: Int64 = 0
                while copied < run.size {
                    let block = try sink.read(at: run.offset + copied, count: Int(min(run.size - copied, Int64(FastStartLayoutWriter.moveBlockSize))))
                    guard !block.isEmpty else { throw .system(operation: "read back", path: path, errno: .ioError) }
                    try output.write(block)
                    copied += Int64(block.count)
                }
            }
            try output.commit()
        } catch {
            output.cancel()
            throw .stream(error)
        }
    }

    func abandon() {
        if fragmentSequence > 0 { sink.cancel() } else { sink.discard() }
    }
}
