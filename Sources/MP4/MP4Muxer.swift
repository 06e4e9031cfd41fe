public import MediaCore

/// What an ``MP4Muxer`` writes: the seeds' `KFMuxerConfig`.
public struct MuxerConfiguration: Sendable {
    /// The output file.
    public var outputPath: String
    /// The kinds of track to expect (audio, video or both): the muxer waits for a sample of
    /// each before interleaving by decode time.
    public var mediaTypes: MediaType
    /// The video track's display transform (the seed's `preferredTransform`).
    public var preferredTransform: TrackTransform
    /// The movie timescale; by default the audio sample rate (so an audio edit list is exact),
    /// or 1000 without audio.
    public var movieTimescale: Int32?
    /// `moov` before `mdat` (the seed's `shouldOptimizeForNetworkUse`), by a streamed second pass.
    public var fastStart: Bool
    /// Fragmented, crash-safe mode: `moof`+`mdat` every this long (cut at a video sync sample
    /// when there is video); `nil` writes a normal file. With audio and video, both tracks must
    /// start within ``MP4Muxer/queueLimit`` samples of each other: the moov is written when the
    /// first fragment is, and a track cannot be added after it.
    public var fragmentDuration: MediaTime?
    /// In fragmented mode, rewrite the file as a normal faststart file on a clean finish.
    public var rewriteFragmentedOnFinish: Bool
    /// The encoder tag (`©too`).
    public var encoderName: String

    /// A configuration with the seed's defaults: faststart on, not fragmented.
    public init(outputPath: String, mediaTypes: MediaType = .audio, preferredTransform: TrackTransform = .identity,
                movieTimescale: Int32? = nil, fastStart: Bool = true, fragmentDuration: MediaTime? = nil,
                rewriteFragmentedOnFinish: Bool = false, encoderName: String = "KeyFrameKit") {
        self.outputPath = outputPath
        self.mediaTypes = mediaTypes
        self.preferredTransform = preferredTransform
        self.movieTimescale = movieTimescale
        self.fastStart = fastStart
        self.fragmentDuration = fragmentDuration
        self.rewriteFragmentedOnFinish = rewriteFragmentedOnFinish
        self.encoderName = encoderName
    }
}

/// The seeds' `KFMP4Muxer` without AVAssetWriter: an ISO/IEC 14496-12/-14/-15 writer for AAC,
/// H.264 and HEVC, with the seed's verbs (start, append, finish, cancel) and states.
///
/// Media goes to disk as it arrives; memory holds the sample tables (a few bytes per sample) and
/// bounded interleaving queues. The file appears under its name only when complete (except in
/// fragmented mode, which writes in place so a killed process leaves a playable file).
public final class MP4Muxer {
    /// The seed's `KFMP4MuxerStatus`.
    public enum Status: Sendable, Equatable {
        /// Not started.
        case unknown
        /// Accepting samples.
        case running
        /// An error stopped it; the output was removed (a fragmented file, written in place,
        /// keeps the fragments written so far).
        case failed(MP4Error)
        /// The file is complete.
        case completed
        /// ``MP4Muxer/cancel()`` was called; the output was removed (a fragmented file keeps
        /// the fragments written so far).
        case cancelled
    }

    /// Samples a track may queue while waiting for the other track's (the interleaving bound).
    public static let queueLimit = 64

    /// The configuration.
    public let configuration: MuxerConfiguration
    /// The state.
    public private(set) var status: Status = .unknown

    private var tracks: [MuxerTrack] = []
    private var sink: FileByteSink?
    private var mdatStart: Int64 = 0
    private var chunkTrack: UInt32?
    private var fragmentSequence: UInt32 = 0
    private var fragmentStart: MediaTime?
    private var movieWritten = false
    /// Where the fragmented moov starts, to rewrite it with the durations on finish.
    private var fragmentedMovieOffset: Int64 = 0
    /// The size of the moov as written, which its rewrite must keep.
    private var fragmentedMovieSize = 0

    /// A muxer for `configuration`.
    public init(configuration: MuxerConfiguration) {
        self.configuration = configuration
    }

    deinit {
        if status == .running { cancel() }
    }

    private var isFragmented: Bool { configuration.fragmentDuration != nil }

    /// Opens the output (the seed's `startWriting`).
    public func start() throws(MP4Error) {
        guard status == .unknown else { throw .invalidField(path: .root, field: "muxer state", value: 0, offset: 0, allowed: "start once") }
        do {
            sink = try FileByteSink(path: configuration.outputPath, atomic: !isFragmented)
        } catch {
            status = .failed(.stream(error))
            throw .stream(error)
        }
        status = .running
    }

    /// Gapless information for an audio track: the encoder's priming and the number of valid
    /// samples after it. Written as the edit list (exact, in the movie timescale), and iTunSMPB.
    public func setGapless(trackID: UInt32 = 1, priming: Int, validFrameCount: Int64) {
        let priming = max(0, priming)
        let validFrameCount = max(0, validFrameCount)
        if let track = tracks.first(where: { $0.id == trackID }) {
            track.gapless = (priming, validFrameCount)
        } else {
            pendingGapless[trackID] = (priming, validFrameCount)
        }
    }
    private var pendingGapless: [UInt32: (priming: Int, validFrameCount: Int64)] = [:]

    /// Appends a sample (the seed's `appendSampleBuffer`). A track is created from the first
    /// sample of each media type; its format may not change, and decode times must increase.
    public func append(_ sample: MediaSample) throws(MP4Error) {
        guard status == .running else {
            throw .invalidField(path: .root, field: "muxer state", value: 0, offset: 0, allowed: "running (call start() first; not after finish or cancel)")
        }
        do throws(MP4Error) {
            let track = try track(for: sample)
            if tracks.count == 1, !configuration.mediaTypes.contains(.audioVideo), track.queue.isEmpty {
                // One track: nothing to interleave, write it now.
                if isFragmented { try bufferForFragment(sample, track: track) } else { try write(sample, track: track) }
            } else {
                track.queue.append(sample)
                try drain(final: false)
            }
        } catch {
            fail(error)
            throw error
        }
    }

    /// Writes everything queued and the movie, and gives the file its name (the seed's
    /// `stopWriting`).
    public func finish() throws(MP4Error) {
        guard status == .running, let sink else {
            throw .invalidField(path: .root, field: "muxer state", value: 0, offset: 0, allowed: "running")
        }
        do throws(MP4Error) {
            try drain(final: true)
            guard tracks.contains(where: { $0.sampleCount > 0 }) else {
                throw MP4Error.nothingToWrite
            }
            for track in tracks {
                track.closeChunk()
                track.closeLastDuration()
            }
            if isFragmented {
                try writeFragment()
                try rewriteFragmentedMovie(sink)
                do { try sink.commit() } catch { throw MP4Error.stream(error) }
                if configuration.rewriteFragmentedOnFinish { try rewriteAsFastStart() }
            } else if configuration.fastStart {
                try finishFastStart(sink)
            } else {
                try patchMediaDataSize(sink)
                var writer = MovieBoxWriter(tracks: tracks, movieTimescale: movieTimescale, transform: configuration.preferredTransform,
                                            encoderName: configuration.encoderName)
                writer.chunkOffsetShift = 0
                do {
                    try sink.write(writer.movie())
                    try sink.commit()
                } catch { throw MP4Error.stream(error) }
            }
            status = .completed
        } catch {
            fail(error)
            throw error
        }
    }

    /// Stops and removes the output (the seed's `cancelWriting`).
    public func cancel() {
        guard status == .running || status == .unknown else { return }
        closeOutput()
        status = .cancelled
    }

    private func fail(_ error: MP4Error) {
        closeOutput()
        status = .failed(error)
    }

    /// Removes the output, except the fragments a fragmented recording has already written.
    private func closeOutput() {
        if isFragmented && fragmentSequence > 0 { sink?.cancel() } else { sink?.discard() }
        sink = nil
    }

    // MARK: - Tracks and interleaving

    /// `ftyp` for the tracks known so far (the `avc1` brand only with an H.264 track).
    private func fileTypeBox(fragmented: Bool) -> [UInt8] {
        let hasH264 = tracks.contains { if case .video(let video) = $0.format { video.codec == .h264 } else { false } }
        return MovieBoxWriter.fileType(hasVideo: configuration.mediaTypes.contains(.video), fragmented: fragmented, hasH264: hasH264)
    }

    private var movieTimescale: Int32 {
        if let scale = configuration.movieTimescale, scale > 0 { return scale }
        return tracks.first { $0.mediaType == .audio }?.timescale ?? 1000
    }

    private func track(for sample: MediaSample) throws(MP4Error) -> MuxerTrack {
        if let existing = tracks.first(where: { $0.mediaType == sample.format.mediaType }) {
            guard existing.format == sample.format else {
                throw .invalidField(path: BoxPath(components: ["track \(existing.id)"]), field: "sample format", value: Int64(existing.sampleCount),
                                    offset: 0, allowed: "the format of the track's first sample (formats cannot change mid-track)")
            }
            return existing
        }
        guard configuration.mediaTypes.contains(sample.format.mediaType) else {
            throw .noSuchTrack("\(sample.format.mediaType == .video ? "video" : "audio") track in this muxer's configuration")
        }
        guard !movieWritten else {
            throw .invalidField(path: .root, field: "new track", value: 0, offset: 0, allowed: "tracks before the first fragment")
        }
        try MuxerTrack.check(sample.format)
        let track = MuxerTrack(id: UInt32(tracks.count + 1), format: sample.format)
        if let gapless = pendingGapless[track.id] { track.gapless = gapless }
        tracks.append(track)
        return track
    }

    /// Writes queued samples in decode-time order while every expected track has one queued
    /// (or a queue is at its limit, or at the end).
    private func drain(final: Bool) throws(MP4Error) {
        while true {
            let waiting = tracks.filter { !$0.queue.isEmpty }
            guard !waiting.isEmpty else { return }
            let expected = configuration.mediaTypes.contains(.audioVideo) ? 2 : 1
            let everyTrackHasOne = tracks.count >= expected && waiting.count == tracks.count
            let overfull = waiting.contains { $0.queue.count >= Self.queueLimit }
            guard final || everyTrackHasOne || overfull else { return }
            let next = waiting.min { $0.queue[0].decodeTime < $1.queue[0].decodeTime }!
            let sample = next.queue.removeFirst()
            if isFragmented {
                try bufferForFragment(sample, track: next)
            } else {
                try write(sample, track: next)
            }
        }
    }

    // MARK: - Progressive layout: ftyp, (free), mdat, moov

    private func write(_ sample: MediaSample, track: MuxerTrack) throws(MP4Error) {
        guard let sink else { return }
        do {
            if !movieWritten {
                movieWritten = true
                try sink.write(fileTypeBox(fragmented: false))
                // An 8-byte `free` that becomes a 64-bit mdat header if the media passes 4 GiB.
                try sink.write([0, 0, 0, 8] + Array("free".utf8))
                mdatStart = sink.byteCount
                try sink.write([0, 0, 0, 0] + Array("mdat".utf8))
            }
            let dts = try track.record(sample)
            let offset = sink.byteCount
            let newChunk = chunkTrack != track.id || track.samplesInCurrentChunk == 0
                || Double(dts - track.chunkStartDecodeTime) >= Double(track.timescale)
            if newChunk { track.chunkStartDecodeTime = dts }
            track.placeSample(at: UInt64(offset), newChunk: newChunk)
            chunkTrack = track.id
            try sink.write(sample.data)
        } catch let error as ByteStreamError {
            throw .stream(error)
        } catch let error as MP4Error {
            throw error
        } catch {
            throw .stream(.system(operation: "write", path: configuration.outputPath, errno: .ioError))
        }
    }

    /// Fills in the mdat size (a 64-bit header over the `free` box when it does not fit 32 bits).
    private func patchMediaDataSize(_ sink: FileByteSink) throws(MP4Error) {
        if !movieWritten {
            movieWritten = true
            do {
                try sink.write(fileTypeBox(fragmented: false))
                try sink.write([0, 0, 0, 8] + Array("free".utf8))
                mdatStart = sink.byteCount
                try sink.write([0, 0, 0, 8] + Array("mdat".utf8))
            } catch { throw .stream(error) }
        }
        let size = sink.byteCount - mdatStart
        do {
            if size <= Int64(UInt32.max) {
                try sink.overwrite(Array(BoxWriterBytes.u32(UInt32(size))), at: mdatStart)
            } else {
                // free(8) + mdat(8) → mdat with largesize(16), starting where free started.
                var header = BoxWriterBytes.u32(1) + Array("mdat".utf8)
                header += BoxWriterBytes.u64(UInt64(size + 8))
                try sink.overwrite(header, at: mdatStart - 8)
            }
        } catch { throw .stream(error) }
    }

    /// The streamed second pass: ftyp and moov first, then the mdat copied from the first pass.
    private func finishFastStart(_ first: FileByteSink) throws(MP4Error) {
        try patchMediaDataSize(first)
        do { try first.flush() } catch { throw .stream(error) }
        let ftyp = fileTypeBox(fragmented: false)
        var writer = MovieBoxWriter(tracks: tracks, movieTimescale: movieTimescale, transform: configuration.preferredTransform,
                                    encoderName: configuration.encoderName)
        // First pass: ftyp, free(8), mdat. Final: ftyp, moov, free(8), mdat. Offsets move by the moov's size.
        writer.chunkOffsetShift = Int64(writer.movie().count)
        writer.chunkOffsetShift = Int64(writer.movie().count)   // co64 may have changed the size
        let moov = writer.movie()
        let final: FileByteSink
        do {
            final = try FileByteSink(path: configuration.outputPath)
            try final.write(ftyp)
            try final.write(moov)
            let source = try FileByteSource(path: first.temporaryPath)
            var offset = Int64(ftyp.count)
            let end = first.byteCount
            while offset < end {
                let chunk = try source.read(at: offset, count: Int(min(1 << 20, end - offset)))
                guard !chunk.isEmpty else { break }
                try final.write(chunk)
                offset += Int64(chunk.count)
            }
            try final.commit()
        } catch {
            first.cancel()
            throw .stream(error)
        }
        first.cancel()
    }

    // MARK: - Fragmented layout: ftyp, moov (mvex), then moof+mdat

    private func bufferForFragment(_ sample: MediaSample, track: MuxerTrack) throws(MP4Error) {
        if !movieWritten {
            // Every expected track must be known before the moov can be written.
            try writeFragmentedHeader()
        }
        // Cut a fragment once it is long enough: at a video sync sample when there is video (so
        // every fragment starts decodable), else at any audio sample.
        let hasVideo = tracks.contains { $0.mediaType == .video }
        if let start = fragmentStart, let limit = configuration.fragmentDuration,
           let elapsed = try? sample.decodeTime.subtracting(start), elapsed >= limit,
           hasVideo ? (track.mediaType == .video && sample.isSync) : true {
            try writeFragment()
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

    private func writeFragmentedHeader() throws(MP4Error) {
        guard let sink else { return }
        movieWritten = true
        var writer = MovieBoxWriter(tracks: tracks, movieTimescale: movieTimescale, transform: configuration.preferredTransform,
                                    encoderName: configuration.encoderName)
        writer.fragmented = true
        do {
            try sink.write(fileTypeBox(fragmented: true))
            fragmentedMovieOffset = sink.byteCount
            let movie = writer.movie()
            fragmentedMovieSize = movie.count
            try sink.write(movie)
            try sink.flush()
        } catch { throw .stream(error) }
    }

    /// Writes the buffered samples of every track as one moof+mdat, and flushes it to the file.
    private func writeFragment() throws(MP4Error) {
        guard let sink, tracks.contains(where: { !$0.fragmentEntries.isEmpty }) else { return }
        if !movieWritten { try writeFragmentedHeader() }
        fragmentSequence += 1
        let active = tracks.filter { !$0.fragmentEntries.isEmpty }
        func moof(dataOffsets: [Int32]) -> [UInt8] {
            var box = BoxWriter()
            box.box("moof") { moof in
                moof.fullBox("mfhd") { b in b.u32(fragmentSequence) }
                for (index, track) in active.enumerated() {
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
                    }
                }
            }
            return box.bytes
        }
        let size = moof(dataOffsets: active.map { _ in 0 }).count
        var offsets: [Int32] = []
        var running = size + 8
        for track in active {
            offsets.append(Int32(clamping: running))
            running += track.fragmentData.count
        }
        let dataBytes = active.reduce(0) { $0 + $1.fragmentData.count }
        do {
            try sink.write(moof(dataOffsets: offsets))
            try sink.write(BoxWriterBytes.u32(UInt32(clamping: 8 + dataBytes)) + Array("mdat".utf8))
            for track in active { try sink.write(track.fragmentData) }
            try sink.flush()
        } catch { throw .stream(error) }
        for track in active {
            track.fragmentData.removeAll(keepingCapacity: true)
            track.fragmentEntries.removeAll(keepingCapacity: true)
        }
        fragmentStart = nil
    }

    /// On a clean finish, the moov written first gets the durations (mvhd, mehd, tkhd, mdhd, the
    /// edit list and iTunSMPB): the same boxes with the same sizes, overwritten in place. A killed
    /// recording keeps the first moov, whose zero durations mean "as long as the fragments".
    private func rewriteFragmentedMovie(_ sink: FileByteSink) throws(MP4Error) {
        var final = MovieBoxWriter(tracks: tracks, movieTimescale: movieTimescale, transform: configuration.preferredTransform,
                                   encoderName: configuration.encoderName)
        final.fragmented = true
        final.fragmentedMediaDurations = Dictionary(tracks.map { ($0.id, $0.mediaDuration) }, uniquingKeysWith: { first, _ in first })
        let bytes = final.movie()
        // Every field is fixed-width; a layout change (gapless set only after the first sample)
        // would not fit, and the first moov is then kept rather than overwrite the first moof.
        guard bytes.count == fragmentedMovieSize else { return }
        do { try sink.overwrite(bytes, at: fragmentedMovieOffset) } catch { throw .stream(error) }
    }

    /// Reads the finished fragmented file back and writes it again as a normal faststart file.
    private func rewriteAsFastStart() throws(MP4Error) {
        let path = configuration.outputPath
        let source: FileByteSource
        do { source = try FileByteSource(path: path) } catch { throw .stream(error) }
        let demuxer = MP4Demuxer(source: source, configuration: DemuxerConfiguration(mediaTypes: configuration.mediaTypes))
        try demuxer.start()
        var settings = configuration
        settings.fragmentDuration = nil
        settings.rewriteFragmentedOnFinish = false
        settings.fastStart = true
        let muxer = MP4Muxer(configuration: settings)
        try muxer.start()
        // The new file numbers its tracks audio first: carry the gapless edit by media type.
        if let audio = tracks.first(where: { $0.mediaType == .audio }), let gapless = audio.gapless,
           let newID = demuxer.audioTrack.map({ _ in UInt32(1) }) {
            muxer.setGapless(trackID: newID, priming: gapless.priming, validFrameCount: gapless.validFrameCount)
        }
        var audioDone = !demuxer.hasAudioTrack
        var videoDone = !demuxer.hasVideoTrack
        while !audioDone || !videoDone {
            if !audioDone {
                if let sample = try demuxer.nextAudioSample() { try muxer.append(Self.retimed(sample, like: tracks, type: .audio)) } else { audioDone = true }
            }
            if !videoDone {
                if let sample = try demuxer.nextVideoSample() { try muxer.append(Self.retimed(sample, like: tracks, type: .video)) } else { videoDone = true }
            }
        }
        try muxer.finish()
    }

    /// A sample read back from our own fragments, with the format the track was created with.
    private static func retimed(_ sample: MediaSample, like tracks: [MuxerTrack], type: MediaType) -> MediaSample {
        var copy = sample
        if let track = tracks.first(where: { $0.mediaType == type }) { copy.format = track.format }
        return copy
    }
}

/// Big-endian bytes of fixed-width integers.
enum BoxWriterBytes {
    static func u32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - $0 * 8)) } }
    static func u64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - $0 * 8)) } }
}
