public import MediaCore

/// What an ``MP4Demuxer`` reads: which media types, and optionally which tracks.
public struct DemuxerConfiguration: Sendable, Hashable {
    /// The kinds of track to deliver: audio, video or both.
    public var mediaTypes: MediaType
    /// The audio track to read; by default the first AAC track (else the first audio track).
    public var audioTrackID: UInt32?
    /// The video track to read; by default the first video track.
    public var videoTrackID: UInt32?

    /// A configuration reading `mediaTypes`, from the tracks given or, where `nil`, the default
    /// ones.
    public init(mediaTypes: MediaType = .audioVideo, audioTrackID: UInt32? = nil, videoTrackID: UInt32? = nil) {
        self.mediaTypes = mediaTypes
        self.audioTrackID = audioTrackID
        self.videoTrackID = videoTrackID
    }
}

/// A demuxer of ISO base media files (ISO/IEC 14496-12; MP4 and M4A per ISO/IEC 14496-14, and
/// QuickTime MOV): it pulls the samples of a file — progressive or fragmented (14496-12, 8.8) —
/// one track at a time, locating each through the track's sample tables (8.6–8.7: `stts`, `ctts`,
/// `stss`, `stsz`, `stsc`, `stco`/`co64`) or its movie fragments' track runs (`trun`, 8.8.8).
/// (What AVAssetReader does on Apple's platforms.)
///
/// Locations are read ahead a few at a time (``queueCapacity``); memory holds the sample tables
/// and one read window per track, never `mdat`. Reads are synchronous (`pread(2)` for a
/// `FileByteSource`); to iterate samples from async code without blocking the
/// cooperative pool, hand the demuxer to KeyFrameKit's `MP4SampleSequence`.
///
/// After an I/O error a read can simply be retried: the demuxer goes on from the sample that
/// failed, without repeating or skipping one.
///
/// Not `Sendable`: pulling a sample mutates the demuxer's cursors, so one thread at a time uses it.
public final class MP4Demuxer<Source: RandomAccessByteSource> {
    /// Where a demuxer is in its life: not started, reading, failed, done or cancelled.
    public enum Status: Sendable, Equatable {
        /// Not started.
        case unknown
        /// Started, samples left.
        case running
        /// The file could not be read.
        case failed(MP4Error)
        /// Every selected track has ended.
        case completed
        /// ``MP4Demuxer/cancel()`` was called.
        case cancelled
    }

    /// How many sample locations each track reads ahead of the one delivered.
    public static var queueCapacity: Int { 3 }

    /// The media types and tracks this demuxer reads.
    public let configuration: DemuxerConfiguration
    /// Where the demuxer is in its life; ``Status/failed(_:)`` holds the error that stopped it.
    public private(set) var status: Status = .unknown
    /// The file's structure, once started.
    public private(set) var file: MP4File?
    /// The audio track chosen, once started.
    public private(set) var audioTrack: MP4Track?
    /// The video track chosen, once started.
    public private(set) var videoTrack: MP4Track?

    private let source: Source
    private var readers: [UInt32: TrackSampleReader] = [:]

    /// A demuxer of `source`.
    public init(source: Source, configuration: DemuxerConfiguration = DemuxerConfiguration()) {
        self.source = source
        self.configuration = configuration
    }

    /// Reads the file's structure (`ftyp`, `moov` and any `moof`) and chooses the tracks.
    ///
    /// After an I/O error (``MP4Error/stream(_:)``) it can be called again.
    public func start() throws(MP4Error) {
        switch status {
        case .unknown: break
        case .failed(.stream): status = .unknown
        default: return
        }
        do throws(MP4Error) {
            let file = try MP4File(source: source)
            self.file = file
            if configuration.mediaTypes.contains(.audio) {
                let usable = file.tracks.filter { $0.mediaType == .audio && $0.damage == nil }
                if let id = configuration.audioTrackID {
                    guard let track = file.track(id: id), track.mediaType == .audio else { throw MP4Error.noSuchTrack("audio track with id \(id)") }
                    if let damage = track.damage { throw MP4Error.inconsistentTables(path: track.path, reason: damage.message) }
                    audioTrack = track
                } else {
                    audioTrack = usable.first { $0.audioCodec == .aac } ?? usable.first
                }
            }
            if configuration.mediaTypes.contains(.video) {
                let usable = file.tracks.filter { $0.mediaType == .video && $0.damage == nil }
                if let id = configuration.videoTrackID {
                    guard let track = file.track(id: id), track.mediaType == .video else { throw MP4Error.noSuchTrack("video track with id \(id)") }
                    if let damage = track.damage { throw MP4Error.inconsistentTables(path: track.path, reason: damage.message) }
                    videoTrack = track
                } else {
                    videoTrack = usable.first
                }
            }
            for track in [audioTrack, videoTrack].compactMap({ $0 }) {
                readers[track.id] = try TrackSampleReader(track: track, fileSize: file.fileSize, fragments: file.fragmentCursor(trackID: track.id))
            }
            status = readers.isEmpty ? .completed : .running
        } catch {
            status = .failed(error)
            throw error
        }
    }

    /// Stops reading; later pulls return `nil`.
    public func cancel() {
        if status == .running || status == .unknown { status = .cancelled }
        readers.removeAll()
    }

    /// Whether there is an audio track to read.
    public var hasAudioTrack: Bool { audioTrack != nil }
    /// Whether there is a video track to read.
    public var hasVideoTrack: Bool { videoTrack != nil }
    /// Whether the audio track has ended (or there is none).
    public var audioEOF: Bool { audioTrack.map { readers[$0.id]?.isFinished ?? true } ?? true }
    /// Whether the video track has ended (or there is none).
    public var videoEOF: Bool { videoTrack.map { readers[$0.id]?.isFinished ?? true } ?? true }

    /// The video track's display transform, from the matrix of its track header box (`tkhd`,
    /// ISO/IEC 14496-12, 8.3.2).
    public var preferredTransform: TrackTransform? {
        videoTrack.map { TrackTransform(matrix: $0.trackHeader.matrix) ?? .identity }
    }

    /// The video's display size: the sample entry's width and height after ``preferredTransform``.
    public var videoSize: (width: Int, height: Int)? {
        guard let track = videoTrack, let video = track.sampleEntry?.video else { return nil }
        return (preferredTransform ?? .identity).displaySize(width: video.width, height: video.height)
    }

    /// The video track's codec, from its sample entry.
    public var videoCodec: VideoCodec? {
        guard let track = videoTrack, case .video(let format)? = try? track.formatDescription() else { return nil }
        return format.codec
    }

    /// The movie's duration: the longest track's (after edits when the movie header says).
    public var duration: MediaTime? {
        guard let file else { return nil }
        if let header = file.movieHeader, header.duration > 0, header.duration <= UInt64(Int64.max) {
            return try? MediaTime(validatingValue: Int64(header.duration), timescale: Int64(header.timescale))
        }
        var longest = file.tracks.filter { $0.damage == nil }.map { Double($0.mediaDuration) / Double(max($0.timescale, 1)) }.max() ?? 0
        // A fragmented movie's mvex/mehd says how long it is, samples read or not.
        if let fragmentDuration = file.fragmentDurationSeconds { longest = max(longest, fragmentDuration) }
        return MediaTime(value: Int64(saturating: longest * 1000), timescale: 1000)
    }

    /// The next sample of the audio track, `nil` at its end.
    public func nextAudioSample() throws(MP4Error) -> MediaSample? {
        guard let id = audioTrack?.id else { return nil }
        return try nextSample(trackID: id)
    }

    /// The next sample of the video track, `nil` at its end.
    public func nextVideoSample() throws(MP4Error) -> MediaSample? {
        guard let id = videoTrack?.id else { return nil }
        return try nextSample(trackID: id)
    }

    /// The next sample of a chosen track. A sample that lies outside the file ends its track
    /// with that error; an I/O error can be retried.
    public func nextSample(trackID: UInt32) throws(MP4Error) -> MediaSample? {
        guard status == .running, let reader = readers[trackID] else { return nil }
        let sample = try reader.next(from: source)
        if sample == nil, readers.values.allSatisfy(\.isFinished) { status = .completed }
        return sample
    }

    /// Steps over the next `count` samples of a chosen track without reading their bytes (a
    /// cut that starts late); returns how many there were. A table error or a failed read of a
    /// fragment met on the way stops the skip and is thrown by the next pull, as it would have
    /// been.
    @discardableResult
    public func skipSamples(trackID: UInt32, count: Int) -> Int {
        guard status == .running, let reader = readers[trackID] else { return 0 }
        return reader.skip(count, from: source)
    }

    /// The next samples of a chosen track that lie back to back in the file and in time — at
    /// least one, at most 4096 and `maxBytes` of them unless the first alone is longer — read
    /// with one call: container
    /// I/O at copy speed. It delivers the same samples as ``nextSample(trackID:)``, in the same
    /// order and with the same errors; the two can be mixed.
    public func nextSampleRun(trackID: UInt32, maxBytes: Int = 256 * 1024) throws(MP4Error) -> MediaSampleRun? {
        guard status == .running, let reader = readers[trackID] else { return nil }
        let run = try reader.nextRun(from: source, maxBytes: maxBytes)
        if run == nil, readers.values.allSatisfy(\.isFinished) { status = .completed }
        return run
    }
}

/// A demuxer's cursors and read windows change with each pull: one thread at a time uses it; hand
/// it over (`sending`), don't share it.
@available(*, unavailable)
extension MP4Demuxer: Sendable {}

/// Reads one track's samples in order: a cursor over its tables and fragments, a bounded queue
/// of locations read ahead, and one window of file bytes that consecutive samples share.
/// A class, so that pulling a sample mutates it in place.
final class TrackSampleReader {
    let track: MP4Track
    let fileSize: Int64
    let format: FormatDescription
    private var tableCursor = SampleTableCursor()
    private var fragmentCursor: FragmentCursor
    private var nextIndex = 0
    private var queue: [SampleLocation] = []
    /// The next location to deliver in `queue`.
    private var head = 0
    private var window: [UInt8] = []
    private var windowOffset: Int64 = -1
    private(set) var isFinished = false
    private var pendingError: MP4Error?
    static let windowSize = 256 * 1024
    /// The most samples in one run, so that a table of empty samples cannot make one unbounded.
    static let maxRunCount = 4096

    /// A read of the fragments that failed (``MP4Error/stream(_:)``): thrown once the samples
    /// before it are delivered, without ending the track, so that a later pull tries again.
    private var pendingStreamError: MP4Error?

    init(track: MP4Track, fileSize: Int64, fragments: FragmentCursor) throws(MP4Error) {
        self.track = track
        self.fileSize = fileSize
        self.fragmentCursor = fragments
        self.format = try track.formatDescription()
        queue.reserveCapacity(MP4Demuxer<ArrayRandomAccessSource>.queueCapacity)
    }

    func next(from source: some RandomAccessByteSource) throws(MP4Error) -> MediaSample? {
        guard !isFinished else { return nil }
        compactQueue()
        if head == queue.count {
            if let error = pendingError {
                isFinished = true
                throw error
            }
            try throwPendingStreamError()
            fillQueue(upTo: MP4Demuxer<ArrayRandomAccessSource>.queueCapacity, from: source)
            try throwPendingStreamError()
        }
        guard head < queue.count else {
            isFinished = true
            if let error = pendingError { throw error }
            return nil
        }
        let location = queue[head]
        try checkInsideFile(location)
        // Read first, then consume: a failed read leaves the sample at the head of the queue.
        let bytes = try read(location, from: source)
        head += 1
        let scale = Int32(clamping: track.timescale)
        let decode = MediaTime(value: location.decodeTime, timescale: scale)
        return MediaSample(data: bytes,
                           presentationTime: MediaTime(value: location.decodeTime.saturatingAdding(Int64(location.compositionOffset)), timescale: scale),
                           decodeTime: decode, duration: MediaTime(value: Int64(location.duration), timescale: scale),
                           isSync: location.isSync, format: format, trackID: track.id)
    }

    /// The next samples that lie back to back in the file and in time, at most `maxBytes` and
    /// ``maxRunCount`` of them (at least one sample), read with one call.
    func nextRun(from source: some RandomAccessByteSource, maxBytes: Int) throws(MP4Error) -> MediaSampleRun? {
        guard !isFinished else { return nil }
        compactQueue()
        let runStart = head
        var entries: [MediaSampleRun.Entry] = []
        var start: Int64 = 0
        var end: Int64 = 0
        var firstDecode: Int64 = 0
        var nextDecode: Int64 = 0
        while true {
            if head == queue.count {
                guard pendingError == nil else { break }
                if pendingStreamError == nil { fillQueue(upTo: queue.count + 1024, from: source) }
                guard head < queue.count else {
                    if entries.isEmpty { try throwPendingStreamError() }
                    break
                }
            }
            let location = queue[head]
            if entries.isEmpty {
                try checkInsideFile(location)
                start = location.offset
                end = start
                firstDecode = location.decodeTime
                nextDecode = firstDecode
            } else {
                // A gap, a jump back, a break in the timeline (a new fragment's tfdt), a run too
                // long or a sample past the end ends the run there.
                guard location.offset == end, end - start + Int64(location.size) <= Int64(maxBytes),
                      entries.count < Self.maxRunCount, location.decodeTime == nextDecode,
                      end.saturatingAdding(Int64(location.size)) <= fileSize else { break }
            }
            entries.append(MediaSampleRun.Entry(size: location.size, duration: location.duration,
                                                compositionOffset: location.compositionOffset, isSync: location.isSync))
            end += Int64(location.size)
            nextDecode = nextDecode.saturatingAdding(Int64(location.duration))
            head += 1
        }
        guard !entries.isEmpty else {
            isFinished = true
            if let error = pendingError { throw error }
            return nil
        }
        let data: [UInt8]
        do {
            data = try source.read(at: start, count: Int(end - start))
        } catch {
            // Nothing consumed: a retry reads the same run.
            head = runStart
            throw .stream(error)
        }
        guard data.count == Int(end - start) else {
            // A source shorter than it said: one sample at a time, as ``next(from:)`` reads them.
            head = runStart
            return try next(from: source).map(MediaSampleRun.init(sample:))
        }
        return MediaSampleRun(data: data, entries: entries, firstDecodeTime: firstDecode,
                              timescale: Int32(clamping: track.timescale), format: format, trackID: track.id)
    }

    /// Steps over up to `count` samples without reading them; returns how many.
    func skip(_ count: Int, from source: some RandomAccessByteSource) -> Int {
        var skipped = 0
        while skipped < count, !isFinished {
            compactQueue()
            if head == queue.count {
                guard pendingError == nil, pendingStreamError == nil else { break }
                fillQueue(upTo: MP4Demuxer<ArrayRandomAccessSource>.queueCapacity, from: source)
                guard head < queue.count else { break }
            }
            let step = min(count - skipped, queue.count - head)
            head += step
            skipped += step
        }
        return skipped
    }

    /// Throws a failed read of the fragments once, when no sample is left before it.
    private func throwPendingStreamError() throws(MP4Error) {
        guard head == queue.count, let error = pendingStreamError else { return }
        pendingStreamError = nil
        throw error
    }

    /// Drops the delivered locations, so that the queue holds only what was read ahead.
    private func compactQueue() {
        guard head > 0 else { return }
        queue.removeFirst(head)
        head = 0
    }

    private func checkInsideFile(_ location: SampleLocation) throws(MP4Error) {
        guard location.offset >= 0, location.offset.saturatingAdding(Int64(location.size)) <= fileSize else {
            isFinished = true
            throw .sampleOutsideFile(trackID: track.id, sampleIndex: location.index, offset: location.offset,
                                     size: Int64(location.size), fileSize: fileSize)
        }
    }

    /// Reads locations ahead until the queue holds `capacity`; an error that stops the tables is
    /// held until the samples before it have been delivered.
    private func fillQueue(upTo capacity: Int, from source: some RandomAccessByteSource) {
        // The table, its sample count and the cursor are taken out of the class once per batch,
        // not once per sample (each access of a class's stored property is checked and retains).
        let table = track.sampleTable
        let path = track.path
        let tableSampleCount = table.sampleCount
        var cursor = tableCursor
        defer { tableCursor = cursor }
        while queue.count < capacity && pendingError == nil && pendingStreamError == nil {
            let next: SampleLocation?
            do { next = try cursor.next(in: table, sampleCount: tableSampleCount, path: path) } catch {
                pendingError = error
                return
            }
            if let location = next {
                queue.append(location)
            } else {
                let location: SampleLocation?
                do { location = try fragmentCursor.next(from: source, index: tableSampleCount + nextIndex) } catch {
                    if case .stream = error { pendingStreamError = error } else { pendingError = error }
                    return
                }
                guard let location else { break }
                nextIndex += 1
                queue.append(location)
            }
        }
    }

    private func read(_ location: SampleLocation, from source: some RandomAccessByteSource) throws(MP4Error) -> [UInt8] {
        let start = location.offset
        let end = start.saturatingAdding(Int64(location.size))
        if windowOffset < 0 || start < windowOffset || end > windowOffset + Int64(window.count) {
            let length = Int(min(max(Int64(Self.windowSize), Int64(location.size)), fileSize - start))
            do { window = try source.read(at: start, count: length) } catch { throw .stream(error) }
            windowOffset = start
            guard Int64(window.count) >= Int64(location.size) else {
                windowOffset = -1
                throw .sampleOutsideFile(trackID: track.id, sampleIndex: location.index, offset: start, size: Int64(location.size), fileSize: fileSize)
            }
        }
        let from = Int(start - windowOffset)
        return Array(window[from..<(from + location.size)])
    }
}

extension MP4Track {
    /// The format description of the track's samples.
    public func formatDescription() throws(MP4Error) -> FormatDescription {
        try formatDescription(audioCodecs: [])
    }

    /// The format description of the track's samples, an audio entry of a type that one of
    /// `audioCodecs` writes (a codec registered from outside KeyFrameKit) read as that codec,
    /// its configuration the description's ``/MediaCore/AudioCodecDescription/configurationBox``.
    public func formatDescription(audioCodecs: [AudioCodecDescription]) throws(MP4Error) -> FormatDescription {
        guard let entry = sampleEntry else { throw .missingBox(path: path, type: "stsd") }
        if let config = try audioSpecificConfig() {
            do { return try config.formatDescription() } catch { throw .bitstream(path: path, error) }
        }
        if let audio = entry.audio, entry.type != "mp4a", let described = audioCodecs.matching(sampleEntryType: entry.type) {
            // A rate above 65,535 does not fit the entry's 16.16 field (written 0): the media's
            // timescale, which 14496-12 12.2.3 makes the rate, says it.
            let rate = audio.sampleRate > 0 ? audio.sampleRate : (1...768_000).contains(Int(timescale)) ? Int(timescale) : 0
            var format = EncodedAudioFormat(codec: described.codec, sampleRate: rate, channelCount: audio.channelCount,
                                            framesPerPacket: 0,
                                            decoderConfiguration: described.configurationBox.flatMap { entry.configurationBoxes[$0] }
                                                .flatMap(described.configurationInBox) ?? [])
            format.framesPerPacket = described.fixedPacketDuration(format) ?? 0
            return .audio(format)
        }
        if let audio = entry.audio {
            let codec = entry.audioCodec ?? .other(entry.type)
            let configurationType: FourCharacterCode? = switch codec {
            case .opus: "dOps"
            case .ac3: "dac3"
            case .eac3: "dec3"
            case .alac: "alac"
            default: nil
            }
            let configuration = configurationType.flatMap { entry.configurationBoxes[$0] } ?? []
            return .audio(EncodedAudioFormat(codec: codec, sampleRate: audio.sampleRate, channelCount: audio.channelCount,
                                             framesPerPacket: 0, decoderConfiguration: configuration))
        }
        if let video = entry.video {
            let codec = entry.videoCodec ?? .other(entry.type)
            let record = entry.configurationBoxes["avcC"] ?? entry.configurationBoxes["hvcC"] ?? []
            return .video(VideoFormat(codec: codec, width: video.width, height: video.height, parameterSets: try videoParameterSets(),
                                      configurationRecord: record))
        }
        return .audio(EncodedAudioFormat(codec: .other(entry.type), sampleRate: 0, channelCount: 0, framesPerPacket: 0, decoderConfiguration: []))
    }
}
