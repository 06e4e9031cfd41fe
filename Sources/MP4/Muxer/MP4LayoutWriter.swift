internal import MediaCore

/// What a layout writer needs at the end: the tracks, the movie timescale and the tags.
struct MuxerContext {
    let tracks: [MuxerTrack]
    let movieTimescale: Int32
    var metadata = ITunesMetadata()
    /// The chapters (a `chpl` and a QuickTime chapter track).
    var chapters: [MovieChapter] = []
    /// Where the chapter track's samples were written, once the media is closed.
    var chapterDataOffset: Int64?
}

/// One layout of an MP4 file (``MuxerConfiguration/Layout``): where samples go as they
/// arrive, and what the end writes. ``MP4Muxer`` owns tracks, interleaving and states; a
/// layout writer owns the bytes.
protocol MP4LayoutWriter: AnyObject {
    /// The output.
    var sink: any MP4OutputSink { get }
    /// Whether the movie box has been written (after which no track can be added).
    var movieWritten: Bool { get }
    /// Checks that the layout can be written to the output, before the first sample.
    func prepare() throws(MP4Error)
    /// Writes one sample of `track` (samples come in decode-time order across tracks).
    func write(_ sample: MediaSample, track: MuxerTrack, tracks: [MuxerTrack]) throws(MP4Error)
    /// Writes a run of samples of `track`, the only track: by default one sample at a time.
    func write(run: MediaSampleRun, track: MuxerTrack, tracks: [MuxerTrack]) throws(MP4Error)
    /// Writes the movie and commits the output.
    func finish(context: MuxerContext) throws(MP4Error)
    /// Removes the output (a fragmented file keeps the fragments it has written).
    func abandon()
    /// The tags set so far, for a layout that writes its movie before ``finish(context:)``.
    func setMetadata(_ metadata: ITunesMetadata)
}

extension MP4LayoutWriter {
    func prepare() throws(MP4Error) {}

    /// The tags reach the other layouts in `MuxerContext` at the end.
    func setMetadata(_ metadata: ITunesMetadata) {}

    func write(run: MediaSampleRun, track: MuxerTrack, tracks: [MuxerTrack]) throws(MP4Error) {
        for sample in run.samples { try write(sample, track: track, tracks: tracks) }
    }
}

/// `ftyp`, then `mdat` payloads placed into chunks as samples arrive: the media part of the
/// progressive and faststart layouts (ISO/IEC 14496-12 8.1.1, 8.7.4 chunks).
struct MediaDataWriter {
    private(set) var started = false
    /// Where the `mdat` header starts (after `ftyp`, the room left for the movie, and an
    /// 8-byte `free`).
    private(set) var mediaDataStart: Int64 = 0
    /// The size of `ftyp`.
    private(set) var fileTypeSize: Int64 = 0
    /// The size of the `free` box left after `ftyp` for the movie (``MuxerConfiguration/expectedSampleCount``); 0 for none.
    private(set) var reservedMovieSpace: Int64 = 0
    private var chunkTrack: UInt32?
    let configuration: MuxerConfiguration

    init(configuration: MuxerConfiguration) { self.configuration = configuration }

    /// Writes `ftyp`, the `free` that becomes a 64-bit `mdat` header past 4 GiB, and the `mdat` header.
    mutating func begin(_ sink: inout any MP4OutputSink, tracks: [MuxerTrack]) throws(ByteStreamError) {
        started = true
        let fileType = MovieBoxWriter.fileType(tracks: tracks, configuration: configuration, fragmented: false)
        try sink.write(fileType)
        fileTypeSize = Int64(fileType.count)
        let reserved = configuration.reservedMovieSpace
        if reserved > 0 {
            var room = [UInt8](repeating: 0, count: reserved)
            room.replaceSubrange(0..<8, with: BoxWriterBytes.u32(UInt32(reserved)) + Array("free".utf8))
            try sink.write(room)
            reservedMovieSpace = Int64(reserved)
        }
        try sink.write([0, 0, 0, 8] + Array("free".utf8))
        mediaDataStart = sink.byteCount
        try sink.write([0, 0, 0, 0] + Array("mdat".utf8))
    }

    /// Writes one sample's bytes and records where they went.
    mutating func write(_ sample: MediaSample, track: MuxerTrack, tracks: [MuxerTrack], to sink: inout any MP4OutputSink) throws(MP4Error) {
        do {
            if !started { try begin(&sink, tracks: tracks) }
            let dts = try track.record(sample)
            track.placeSample(at: sink.byteCount, decodeTicks: dts, continuesChunk: chunkTrack == track.id)
            chunkTrack = track.id
            try sink.write(sample.data)
        } catch let error as ByteStreamError {
            throw .stream(error)
        } catch let error as MP4Error {
            throw error
        } catch {
            throw .stream(.system(operation: "write", path: "output", errno: .ioError))
        }
    }

    /// Writes a run's bytes with one write and records where each sample went: the chunks are
    /// those ``write(_:track:tracks:to:)`` makes sample by sample.
    mutating func write(run: MediaSampleRun, track: MuxerTrack, tracks: [MuxerTrack], to sink: inout any MP4OutputSink) throws(MP4Error) {
        do {
            if !started { try begin(&sink, tracks: tracks) }
        } catch { throw .stream(error) }
        try track.record(run, at: sink.byteCount, continuesChunk: chunkTrack == track.id)
        chunkTrack = track.id
        do { try sink.write(run.data) } catch { throw .stream(error) }
    }

    /// Writes `trailer` (the chapter track's samples) at the end of the media, fills in the
    /// `mdat` size (32 bits, or a 64-bit header over the `free` box), and returns where the
    /// trailer went.
    @discardableResult
    mutating func close(_ sink: inout any MP4OutputSink, tracks: [MuxerTrack], trailer: [UInt8] = []) throws(MP4Error) -> Int64 {
        let trailerOffset: Int64
        do {
            if !started { try begin(&sink, tracks: tracks) }
            trailerOffset = sink.byteCount
            if !trailer.isEmpty { try sink.write(trailer) }
            let size = sink.byteCount - mediaDataStart
            if size <= Int64(UInt32.max) {
                try sink.overwrite(BoxWriterBytes.u32(UInt32(size)), at: mediaDataStart)
            } else {
                // free(8) + mdat(8) → mdat with largesize(16), starting where free started.
                let header = BoxWriterBytes.u32(1) + Array("mdat".utf8) + BoxWriterBytes.u64(UInt64(size + 8))
                try sink.overwrite(header, at: mediaDataStart - 8)
            }
        } catch { throw .stream(error) }
        for track in tracks {
            track.closeChunk()
            track.closeLastDuration()
        }
        return trailerOffset
    }
}

/// Big-endian bytes of fixed-width integers, for box headers patched after the fact.
enum BoxWriterBytes {
    static func u32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - $0 * 8)) } }
    static func u64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - $0 * 8)) } }
}
