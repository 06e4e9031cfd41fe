public import MediaCore
public import SystemPackage

/// An ISO/IEC 14496-12/-14/-15 writer for AAC, H.264 and HEVC: tracks, interleaving by decode
/// time, sample tables, the gapless edit list, and one of three layouts (``MuxerConfiguration/Layout``),
/// each written by a type of its own. The verbs and states are AVAssetWriter's: start, append,
/// finish, cancel.
///
/// Media goes to the output as it arrives; memory holds the sample tables (a few bytes per
/// sample) and bounded interleaving queues. An output made from a path appears under its name
/// only when complete, except in the fragmented layout, which writes in place so that a killed
/// process leaves a playable file.
///
/// ```swift
/// let muxer = try MP4Muxer(path: "out.m4a")
/// let audio = try muxer.addTrack(aacFormat)
/// muxer.setGapless(trackID: audio, priming: 1024, validFrameCount: frames)
/// try muxer.start()
/// for packet in packets { try muxer.append(packet, toTrack: audio) }
/// try muxer.finish()
/// ```
public final class MP4Muxer {
    /// Where the muxer is in its life.
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

        var name: String {
            switch self {
            case .unknown: "not started"
            case .running: "running"
            case .failed: "failed"
            case .completed: "finished"
            case .cancelled: "cancelled"
            }
        }
    }

    /// Samples a track may queue while waiting for the other track's (the interleaving bound).
    public static let queueLimit = 64

    /// The configuration.
    public let configuration: MuxerConfiguration
    /// The state.
    public private(set) var status: Status = .unknown

    private var tracks: [MuxerTrack] = []
    private var pendingGapless: [UInt32: (priming: Int, validFrameCount: Int64)] = [:]
    private var layout: any MP4LayoutWriter

    /// A muxer writing to `sink`, which it commits on ``finish()`` and cancels on failure.
    ///
    /// The ``MuxerConfiguration/Layout/fragmented(fragmentDuration:defragmentOnFinish:)``
    /// layout with `defragmentOnFinish` needs a second output and is refused by ``start()``
    /// here; use ``init(path:configuration:)``.
    public init(sink: any MP4OutputSink, configuration: MuxerConfiguration = MuxerConfiguration()) {
        self.configuration = configuration
        layout = Self.layoutWriter(for: configuration, sink: sink, path: nil)
    }

    /// A muxer writing the file at `path`: under a temporary name renamed into place on
    /// ``finish()``, or in place from the start for the fragmented layout.
    ///
    /// - Throws: ``MP4Error/stream(_:)`` when the file cannot be created.
    public convenience init(path: FilePath, configuration: MuxerConfiguration = MuxerConfiguration()) throws(MP4Error) {
        let sink: FileByteSink
        do { sink = try FileByteSink(path: path, atomic: !configuration.isFragmented) } catch { throw .stream(error) }
        self.init(sink: sink, configuration: configuration, path: path)
    }

    private init(sink: any MP4OutputSink, configuration: MuxerConfiguration, path: FilePath) {
        self.configuration = configuration
        layout = Self.layoutWriter(for: configuration, sink: sink, path: path)
    }

    private static func layoutWriter(for configuration: MuxerConfiguration, sink: any MP4OutputSink, path: FilePath?) -> any MP4LayoutWriter {
        switch configuration.layout {
        case .progressive: ProgressiveLayoutWriter(sink: sink, configuration: configuration)
        case .fastStart: FastStartLayoutWriter(sink: sink, configuration: configuration)
        case .fragmented(let duration, let defragment):
            FragmentedLayoutWriter(sink: sink, configuration: configuration, fragmentDuration: duration,
                                   defragment: defragment, path: path)
        }
    }

    deinit {
        if status == .running { cancel() }
    }

    /// The output the muxer writes (an ``/MediaCore/ArrayByteSink``'s bytes are read from here after
    /// ``finish()``).
    public var sink: any MP4OutputSink { layout.sink }

    /// Samples appended to the track `trackID` so far (written or queued for interleaving).
    public func sampleCount(trackID: UInt32) -> Int {
        tracks.first { $0.id == trackID }.map { $0.sampleCount + $0.queue.count } ?? 0
    }

    /// Adds a track for samples of `format` and returns its id (1, 2, … in the order added).
    ///
    /// Tracks can also be created from the first sample of each media type that
    /// ``append(_:)`` sees; ``addTrack(_:)`` says which tracks to expect up front, so
    /// interleaving waits for each.
    ///
    /// - Throws: ``MP4Error/unsupportedCodec(trackID:codec:reason:)`` for a format the muxer
    ///   cannot describe; ``MP4Error/invalidMuxerState(operation:status:)`` after the movie
    ///   was written (a fragmented file's first fragment) or after finish or cancel.
    @discardableResult
    public func addTrack(_ format: FormatDescription) throws(MP4Error) -> UInt32 {
        guard status == .unknown || status == .running else {
            throw .invalidMuxerState(operation: "addTrack", status: status.name)
        }
        guard !layout.movieWritten else {
            throw .invalidMuxerState(operation: "addTrack", status: "the movie was written with the first fragment")
        }
        let description = try MuxerTrack.check(format, audioCodecs: configuration.audioCodecs)
        let track = MuxerTrack(id: UInt32(tracks.count + 1), format: format, audioCodec: description)
        if let gapless = pendingGapless[track.id] { track.gapless = gapless }
        if let segments = pendingSegments[track.id] { track.segments = segments }
        tracks.append(track)
        explicitTrackCount += 1
        return track.id
    }
    private var explicitTrackCount = 0

    /// Gapless information for an audio track: the encoder's priming and the number of valid
    /// samples after it. Written as the edit list (ISO/IEC 14496-12 8.6.6: `media_time` the
    /// priming, `segment_duration` the valid length, exact in the movie timescale) and as
    /// iTunSMPB. May be set before the track exists, and changed until ``finish()``.
    public func setGapless(trackID: UInt32 = 1, priming: Int, validFrameCount: Int64) {
        let value = (max(0, priming), max(0, validFrameCount))
        if let track = tracks.first(where: { $0.id == trackID }) {
            track.gapless = value
            track.segments = nil
        } else {
            pendingGapless[trackID] = value
            pendingSegments[trackID] = nil
        }
    }

    /// The samples of an audio track to present, range after range, in media samples: an edit
    /// list with one entry per range (ISO/IEC 14496-12 8.6.6), as a gapless join of several
    /// encodings needs (each part's priming and padding skipped). One range is
    /// ``setGapless(trackID:priming:validFrameCount:)``; with several, no iTunSMPB is written, as
    /// it can only describe one. May be set before the track exists, and changed until
    /// ``finish()``.
    public func setEdits(trackID: UInt32 = 1, keeping ranges: [Range<Int64>]) {
        if ranges.count == 1, let only = ranges.first {
            setGapless(trackID: trackID, priming: Int(only.lowerBound), validFrameCount: Int64(only.count))
            return
        }
        if let track = tracks.first(where: { $0.id == trackID }) {
            track.segments = ranges
            track.gapless = nil
        } else {
            pendingSegments[trackID] = ranges
            pendingGapless[trackID] = nil
        }
    }
    private var pendingSegments: [UInt32: [Range<Int64>]] = [:]

    /// The chapters written: a Nero `chpl` and a QuickTime chapter track (a text track the
    /// first audio track references with `tref/chap`), as FFmpeg writes both. Sorted, the first
    /// moved to 0, those past the end dropped (``Swift/Array/normalized(duration:)``). Set any
    /// time until ``finish()``.
    ///
    /// - Throws: ``MP4Error/unsupportedLayout(_:)`` for a fragmented layout.
    public func setChapters(_ chapters: [MovieChapter]) throws(MP4Error) {
        guard !configuration.isFragmented else { throw .unsupportedLayout("chapters in a fragmented file") }
        guard status == .unknown || status == .running else { throw .invalidMuxerState(operation: "setChapters", status: status.name) }
        self.chapters = chapters
    }
    /// The chapters set.
    public private(set) var chapters: [MovieChapter] = []

    /// The tags written into the movie's `ilst` (title, artist, cover art, ReplayGain, …).
    public private(set) var metadata = ITunesMetadata()

    /// Sets the tags of the movie. A fragmented file writes its movie with the first fragment,
    /// so its tags must be set before the first sample; other layouts take them until
    /// ``finish()``.
    ///
    /// - Throws: ``MP4Error/invalidMuxerState(operation:status:)`` once the movie is written.
    public func setMetadata(_ metadata: ITunesMetadata) throws(MP4Error) {
        guard !layout.movieWritten, status == .unknown || status == .running else {
            throw .invalidMuxerState(operation: "setMetadata", status: layout.movieWritten ? "the movie was written" : status.name)
        }
        self.metadata = metadata
        layout.setMetadata(metadata)
    }

    /// Opens the muxer for samples (AVAssetWriter's `startWriting`).
    ///
    /// - Throws: ``MP4Error/invalidMuxerState(operation:status:)`` when called twice;
    ///   ``MP4Error/unsupportedLayout(_:)`` for a layout the output cannot take.
    public func start() throws(MP4Error) {
        guard status == .unknown else { throw .invalidMuxerState(operation: "start", status: status.name) }
        do throws(MP4Error) { try layout.prepare() } catch {
            fail(error)
            throw error
        }
        status = .running
    }

    /// Appends a sample to the track of its media type, creating that track from the sample's
    /// format if there is none yet (and ``MuxerConfiguration/mediaTypes`` expects it). Formats
    /// may not change within a track, and decode times must increase.
    public func append(_ sample: MediaSample) throws(MP4Error) {
        try append(sample, to: nil)
    }

    /// Appends a sample to the track ``addTrack(_:)`` returned as `trackID`.
    public func append(_ sample: MediaSample, toTrack trackID: UInt32) throws(MP4Error) {
        try append(sample, to: trackID)
    }

    /// Appends a run of samples (back to back in its buffer) to the track ``addTrack(_:)``
    /// returned as `trackID`, or else to the track of its media type: the same as appending its
    /// samples one by one, with one write of their bytes when the file has one track.
    public func append(run: MediaSampleRun, toTrack trackID: UInt32? = nil) throws(MP4Error) {
        guard status == .running else { throw .invalidMuxerState(operation: "append", status: status.name) }
        guard let first = run.entries.first else { return }
        let head = MediaSample(data: Array(run.data.prefix(first.size)),
                               presentationTime: MediaTime(value: run.firstDecodeTime &+ Int64(first.compositionOffset), timescale: run.timescale),
                               decodeTime: MediaTime(value: run.firstDecodeTime, timescale: run.timescale),
                               duration: MediaTime(value: Int64(first.duration), timescale: run.timescale),
                               isSync: first.isSync, format: run.format, trackID: run.trackID)
        do throws(MP4Error) {
            let track = try track(for: head, id: trackID)
            if tracks.count == 1, expectedTrackCount == 1, track.queue.isEmpty {
                try layout.write(run: run, track: track, tracks: tracks)
                return
            }
        } catch {
            fail(error)
            throw error
        }
        for sample in run.samples { try append(sample, to: trackID) }
    }

    private func append(_ sample: MediaSample, to trackID: UInt32?) throws(MP4Error) {
        guard status == .running else { throw .invalidMuxerState(operation: "append", status: status.name) }
        do throws(MP4Error) {
            let track = try track(for: sample, id: trackID)
            if tracks.count == 1, expectedTrackCount == 1, track.queue.isEmpty {
                // One track: nothing to interleave, write it now.
                try layout.write(sample, track: track, tracks: tracks)
            } else {
                track.queue.append(sample)
                try drain(final: false)
            }
        } catch {
            fail(error)
            throw error
        }
    }

    /// Writes everything queued and the movie, and commits the output (AVAssetWriter's
    /// `finishWriting`).
    ///
    /// - Throws: ``MP4Error/nothingToWrite`` without a sample; the layout's write errors.
    public func finish() throws(MP4Error) {
        guard status == .running else { throw .invalidMuxerState(operation: "finish", status: status.name) }
        do throws(MP4Error) {
            try drain(final: true)
            guard tracks.contains(where: { $0.sampleCount > 0 }) else { throw MP4Error.nothingToWrite }
            try layout.finish(context: context)
            status = .completed
        } catch {
            fail(error)
            throw error
        }
    }

    /// Stops and removes the output (AVAssetWriter's `cancelWriting`); a fragmented file keeps
    /// the fragments it has written.
    public func cancel() {
        guard status == .running || status == .unknown else { return }
        layout.abandon()
        status = .cancelled
    }

    private func fail(_ error: MP4Error) {
        layout.abandon()
        status = .failed(error)
    }

    // MARK: - Tracks and interleaving

    private var context: MuxerContext {
        MuxerContext(tracks: tracks, movieTimescale: movieTimescale, metadata: metadata, chapters: chapters)
    }

    private var movieTimescale: Int32 {
        if let scale = configuration.movieTimescale, scale > 0 { return scale }
        return tracks.first { $0.mediaType == .audio }?.timescale ?? 1000
    }

    /// Tracks to wait for before interleaving: those added, or one per expected media type.
    private var expectedTrackCount: Int {
        max(explicitTrackCount, configuration.mediaTypes.contains(.audioVideo) ? 2 : 1)
    }

    private func track(for sample: MediaSample, id: UInt32?) throws(MP4Error) -> MuxerTrack {
        let existing = id.map { id in tracks.first { $0.id == id } } ?? tracks.first { $0.mediaType == sample.format.mediaType }
        if let existing {
            guard existing.format == sample.format else {
                throw .invalidField(path: BoxPath(components: ["track \(existing.id)"]), field: "sample format", value: Int64(existing.sampleCount),
                                    offset: 0, allowed: "the format of the track's first sample (formats cannot change mid-track)")
            }
            return existing
        }
        if let id { throw .invalidMuxerState(operation: "append to track \(id)", status: "no track with that id was added") }
        guard configuration.mediaTypes.contains(sample.format.mediaType) else {
            throw .noSuchTrack("\(sample.format.mediaType == .video ? "video" : "audio") track in this muxer's configuration")
        }
        guard !layout.movieWritten else {
            throw .invalidMuxerState(operation: "a new track", status: "the movie was written with the first fragment")
        }
        let description = try MuxerTrack.check(sample.format, audioCodecs: configuration.audioCodecs)
        let track = MuxerTrack(id: UInt32(tracks.count + 1), format: sample.format, audioCodec: description)
        if let gapless = pendingGapless[track.id] { track.gapless = gapless }
        if let segments = pendingSegments[track.id] { track.segments = segments }
        tracks.append(track)
        return track
    }

    /// Writes queued samples in decode-time order while every expected track has one queued
    /// (or a queue is at its limit, or at the end).
    private func drain(final: Bool) throws(MP4Error) {
        while true {
            var next: MuxerTrack?
            var waiting = 0
            var overfull = false
            for track in tracks {
                guard let head = track.queue.first else { continue }
                waiting += 1
                if track.queue.count >= Self.queueLimit { overfull = true }
                if next.map({ head.decodeTime < $0.queue[0].decodeTime }) ?? true { next = track }
            }
            guard let next else { return }
            let everyTrackHasOne = tracks.count >= expectedTrackCount && waiting == tracks.count
            guard final || everyTrackHasOne || overfull else { return }
            let sample = next.queue.removeFirst()
            try layout.write(sample, track: next, tracks: tracks)
        }
    }
}

/// Not `Sendable`: appending mutates the tracks and the output, so one thread at a time uses a
/// muxer (hand it over with `sending`).
@available(*, unavailable)
extension MP4Muxer: Sendable {}
