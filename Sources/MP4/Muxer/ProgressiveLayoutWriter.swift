internal import MediaCore

/// The progressive layout, `ftyp` `free` `mdat` `moov`: media as it arrives, the movie last
/// (ISO/IEC 14496-12 6.2.3 allows `moov` anywhere at the top level).
final class ProgressiveLayoutWriter: MP4LayoutWriter {
    private(set) var sink: any MP4OutputSink
    private var media: MediaDataWriter
    let configuration: MuxerConfiguration

    init(sink: any MP4OutputSink, configuration: MuxerConfiguration) {
        self.sink = sink
        self.configuration = configuration
        media = MediaDataWriter(configuration: configuration)
    }

    var movieWritten: Bool { false }
    /// The size of `ftyp`, where the media part starts.
    var fileTypeSize: Int64 { media.fileTypeSize }
    /// The room left for the movie after `ftyp`.
    var reservedMovieSpace: Int64 { media.reservedMovieSpace }

    func write(_ sample: MediaSample, track: MuxerTrack, tracks: [MuxerTrack]) throws(MP4Error) {
        try media.write(sample, track: track, tracks: tracks, to: &sink)
    }

    func write(run: MediaSampleRun, track: MuxerTrack, tracks: [MuxerTrack]) throws(MP4Error) {
        try media.write(run: run, track: track, tracks: tracks, to: &sink)
    }

    /// Writes the chapter track's samples, fills in the `mdat` size and closes every track's
    /// last chunk and duration.
    func closeMedia(context: inout MuxerContext) throws(MP4Error) {
        let trailer = context.chapters.isEmpty ? [] : ChapterTrack.samples(context.chapters).bytes
        let offset = try media.close(&sink, tracks: context.tracks, trailer: trailer)
        if !trailer.isEmpty { context.chapterDataOffset = offset }
    }

    /// Lends the output to `body` (the faststart move).
    func withSink(_ body: (inout any MP4OutputSink) throws(ByteStreamError) -> Void) throws(ByteStreamError) {
        try body(&sink)
    }

    func finish(context: MuxerContext) throws(MP4Error) {
        var context = context
        try closeMedia(context: &context)
        let writer = MovieBoxWriter(context: context, configuration: configuration)
        do {
            try sink.write(writer.movie())
            try sink.commit()
        } catch { throw .stream(error) }
    }

    func abandon() { sink.discard() }
}

/// The faststart layout, `ftyp` `moov` `free` (2 KiB of padding for later tags) `free` `mdat`, or
/// with room reserved `ftyp` `moov` `free` `free` `mdat`: written as the progressive layout, then,
/// at the end, the movie goes into the room left for it (``MuxerConfiguration/expectedSampleCount``)
/// or, without room enough, everything after `ftyp` moves up by the movie's size inside the same
/// output and the movie is written into the gap, its chunk offsets shifted by as much. One
/// output, no second pass through a demuxer; the move reads and writes 1 MiB at a time, from the
/// end.
final class FastStartLayoutWriter: MP4LayoutWriter {
    /// The media part is the progressive layout's; only the end differs.
    private let progressive: ProgressiveLayoutWriter
    /// The block size of the move: 1 MiB keeps the peak memory of a 1-hour faststart mux under
    /// 20 MB with no measurable cost in time.
    static let moveBlockSize = 1 << 20

    init(sink: any MP4OutputSink, configuration: MuxerConfiguration) {
        progressive = ProgressiveLayoutWriter(sink: sink, configuration: configuration)
    }

    var sink: any MP4OutputSink { progressive.sink }
    var movieWritten: Bool { false }

    func write(_ sample: MediaSample, track: MuxerTrack, tracks: [MuxerTrack]) throws(MP4Error) {
        try progressive.write(sample, track: track, tracks: tracks)
    }

    func write(run: MediaSampleRun, track: MuxerTrack, tracks: [MuxerTrack]) throws(MP4Error) {
        try progressive.write(run: run, track: track, tracks: tracks)
    }

    func finish(context: MuxerContext) throws(MP4Error) {
        var context = context
        try progressive.closeMedia(context: &context)
        var writer = MovieBoxWriter(context: context, configuration: progressive.configuration)
        // The movie in the room left for it: nothing moves, and what is left stays `free`.
        let room = progressive.reservedMovieSpace
        if room > 0 {
            let movie = writer.movie()
            let rest = room - Int64(movie.count)
            if rest == 0 || rest >= 8 {
                let free = rest > 0 ? BoxWriterBytes.u32(UInt32(rest)) + Array("free".utf8) : []
                do {
                    try progressive.withSink { sink throws(ByteStreamError) in
                        try sink.overwrite(movie + free, at: progressive.fileTypeSize)
                        try sink.commit()
                    }
                } catch { throw .stream(error) }
                return
            }
        }
        // Chunk offsets move by the movie's size and the padding after it (room for later tags,
        // as Apple's and FFmpeg's tools leave); co64 may change the movie's size once.
        let padding = MovieEditor.paddingBox
        writer.chunkOffsetShift = Int64(writer.movie().count + padding.count)
        writer.chunkOffsetShift = Int64(writer.movie().count + padding.count)
        let movie = writer.movie()
        let fileTypeSize = progressive.fileTypeSize
        do {
            try progressive.withSink { sink throws(ByteStreamError) in
                try Self.moveTail(of: &sink, from: fileTypeSize, by: Int64(movie.count + padding.count))
                try sink.overwrite(movie + padding, at: fileTypeSize)
                try sink.commit()
            }
        } catch { throw .stream(error) }
    }

    /// Moves the bytes from `start` to the end of `sink` up by `distance`, block by block from
    /// the end so that nothing is overwritten before it is read; the gap keeps its old bytes.
    static func moveTail(of sink: inout any MP4OutputSink, from start: Int64, by distance: Int64) throws(ByteStreamError) {
        let end = sink.byteCount
        guard distance > 0 else { return }
        // Extend the output by `distance` bytes, then copy backwards.
        let tail = try sink.read(at: max(start, end - distance), count: Int(min(distance, end - start)))
        try sink.write(tail.count == distance ? tail : [UInt8](repeating: 0, count: Int(distance) - tail.count) + tail)
        var blockEnd = max(start, end - distance)
        while blockEnd > start {
            let blockStart = max(start, blockEnd - Int64(moveBlockSize))
            let block = try sink.read(at: blockStart, count: Int(blockEnd - blockStart))
            try sink.overwrite(block, at: blockStart + distance)
            blockEnd = blockStart
        }
    }

    func abandon() { progressive.abandon() }
}
