public import SystemPackage

/// An HLS rendition on disk (RFC 8216) as a ``/MediaCore/PacketSink``: AAC packets in; CMAF
/// segments of whole packets (`segment-00001.m4s`, …), the init segment (`init.mp4`) and the
/// media playlist (`index.m3u8`) out, in a directory.
///
/// Segments last ``segmentDuration`` (rounded to whole packets) but the last, which takes up to
/// half a segment more rather than leave a short one: a segment is cut only once one and a half
/// segments are waiting. Packets wholly after the last presented sample (the encoder's padding
/// past the frame that holds the end) are not written; the init segment's edit skips the priming
/// and its iTunSMPB gives the valid length, so that a gapless reader stops at the source's end.
///
/// With ``writesDASHHeader`` (VOD), a second init segment, ``dashHeaderName``, is written for an
/// MPD over the same segments: the same header without iTunSMPB, which the first segment's `moof`
/// carries instead (a `udta`). A DASH reader that parses the header again before each segment
/// (FFmpeg 5.1's) would otherwise skip the priming at every segment boundary.
///
/// Each file is written under a temporary name and renamed when complete, and the playlist last:
/// a reader sees whole segments only. ``cancel()`` (or an error) removes what was written.
public struct HLSSegmentOutput: PacketSink {
    /// A live rendition: what changes when the packets come from a capture.
    public struct Live: Sendable, Hashable {
        /// Segments the playlist lists (a sliding window, `EXT-X-MEDIA-SEQUENCE` counting the
        /// ones that left it), or 0 for an event playlist that keeps them all
        /// (`EXT-X-PLAYLIST-TYPE:EVENT`).
        public var window: Int
        /// The wall-clock time of the first sample, seconds since 1970 (UTC): each segment's
        /// `EXT-X-PROGRAM-DATE-TIME` is it plus the samples before the segment.
        public var startDate: Double?
        /// Low-latency HLS: the part target in seconds. Each part (a CMAF chunk, whole frames,
        /// at most this long) is written as `segment-NNNNN.P.m4s` and listed (`EXT-X-PART`) as
        /// soon as it is recorded; a segment is its parts after a `styp`. `nil`: no parts.
        public var partDuration: Double?
        /// Where each playlist is also published, for a server's blocking reloads.
        public var publication: LiveHLSPublication?
        /// The capture clock: the wall-clock time of the first frame, once known; it wins over
        /// ``startDate``.
        public var clock: (@Sendable () -> Double?)?

        /// A live rendition.
        public init(window: Int = 0, startDate: Double? = nil, partDuration: Double? = nil, publication: LiveHLSPublication? = nil,
                    clock: (@Sendable () -> Double?)? = nil) {
            self.window = window
            self.startDate = startDate
            self.partDuration = partDuration
            self.publication = publication
            self.clock = clock
        }

        /// Live settings are equal when their values and publication (by identity) are.
        public static func == (lhs: Live, rhs: Live) -> Bool {
            lhs.window == rhs.window && lhs.startDate == rhs.startDate && lhs.partDuration == rhs.partDuration && lhs.publication === rhs.publication
        }

        /// Hashes the window and part duration.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(window)
            hasher.combine(partDuration)
        }
    }

    /// Live: the init segment is written with the first packet, a segment as soon as one is
    /// long enough, and the playlist rewritten (atomically) after each; `nil` for VOD.
    public let live: Live?

    /// The DASH header's file name: `init-dash.mp4`.
    public static let dashHeaderName = "init-dash.mp4"
    /// Whether ``dashHeaderName`` is written too (VOD only).
    public let writesDASHHeader: Bool

    /// The directory written.
    public let directory: FilePath
    /// The wanted segment length in seconds.
    public let segmentDuration: Double
    /// The playlist's file name.
    public let playlistName: String
    /// A segment written: its file name, size and duration (the bytes are not kept).
    public struct WrittenSegment: Sendable, Hashable {
        /// The file name in ``HLSSegmentOutput/directory``.
        public var name: String
        /// Bytes.
        public var byteCount: Int
        /// Media units.
        public var duration: Int64
        /// The media timescale.
        public var timescale: Int32
        /// Its parts (low-latency HLS), in order.
        public var parts: [HLSMediaPlaylist.Part] = []
        /// Seconds.
        public var seconds: Double { Double(duration) / Double(max(timescale, 1)) }
    }

    /// The segments written so far.
    public private(set) var segments: [WrittenSegment] = []
    /// The packets' format, once the first came.
    public private(set) var format: EncodedAudioFormat?
    /// The priming, once known (at the end for an encoder's).
    public private(set) var priming: Int64 = 0
    /// The samples presented after the priming, once finished.
    public private(set) var validLength: Int64 = 0
    /// The playlist, once finished.
    public private(set) var playlist: HLSMediaPlaylist?

    /// The gapless numbers from the stream (``/MediaCore/StreamEvent/gapless(_:)``): the
    /// priming before the first packet, the valid length by the end.
    private var gapless = GaplessInfo(priming: 0)
    private var segmenter: CMAFSegmenter?
    private var queue: [MediaSample] = []
    private var queuedDuration: Int64 = 0
    private var packetIndex = 0
    private var written: [FilePath] = []
    private var mediaDuration: Int64 = 0
    /// Whether the directory was made here (``cancel()`` removes it when empty).
    private var createdDirectory = false
    /// Live with a window: segments whose files were removed, from the first.
    private var removedSegments = 0
    /// Low-latency HLS: the parts of the segment being recorded.
    private var openParts: [(name: String, bytes: [UInt8], duration: Int64, timescale: Int32)] = []
    /// With a DASH header: the first segment, kept until its iTunSMPB's numbers are known.
    private var heldFirstSegment: [UInt8]?

    /// A rendition in `directory` (made if missing), segments of about `segmentDuration` seconds.
    /// With `writesDASHHeader`, also ``dashHeaderName`` (VOD only).
    ///
    /// The gapless numbers come in the stream: a ``/MediaCore/StreamEvent/gapless(_:)`` before
    /// the first packet gives the priming (an encoder's, or an AAC file's from its edit list),
    /// and the last one before the end the valid length; without one, nothing is trimmed.
    public init(directory: FilePath, segmentDuration: Double = 6, playlistName: String = "index.m3u8",
                live: Live? = nil, writesDASHHeader: Bool = false) throws(PipelineError) {
        guard segmentDuration >= 0.5, segmentDuration <= 60 else {
            throw .unsupported("--segment-duration \(segmentDuration): give 0.5 to 60 seconds")
        }
        guard live == nil || !writesDASHHeader else { throw .unsupported("a DASH header is written for a packaged (VOD) rendition only") }
        if let partDuration = live?.partDuration {
            guard partDuration >= 0.1, partDuration <= segmentDuration else {
                throw .unsupported("a part duration of \(partDuration) s: give 0.1 s up to the segment duration (\(segmentDuration) s)")
            }
        }
        // Never over another package: its playlist would name segments this one overwrites.
        for name in [playlistName, "init.mp4", Self.dashHeaderName, Self.segmentName(1), "master.m3u8"] where FileSystemCalls.exists(directory.appending(name)) {
            throw .unsupported("\(directory) already holds a package (\(name)); choose another directory or remove it")
        }
        createdDirectory = !FileSystemCalls.exists(directory)
        do { try FileSystemCalls.makeDirectory(directory) } catch {
            throw .stream(.system(operation: "make the directory", path: directory, errno: error))
        }
        self.directory = directory
        self.segmentDuration = segmentDuration
        self.playlistName = playlistName
        self.live = live
        self.writesDASHHeader = writesDASHHeader
    }

    /// Keeps the stream's gapless numbers: the priming must come before the first packet (the
    /// init segment's edit list is made with it), the valid length before the end.
    public mutating func receive(_ event: StreamEvent) throws(PipelineError) {
        guard case .gapless(let info) = event else { return }
        if segmenter != nil, info.priming != gapless.priming {
            throw .unsupported("the priming changed from \(gapless.priming) to \(info.priming) after the first packet")
        }
        gapless = info
    }

    /// Queues a packet, and writes a segment once one and a half are waiting.
    public mutating func write(_ packet: MediaSample) throws(PipelineError) {
        if segmenter == nil {
            do { segmenter = try CMAFSegmenter(format: packet.format, priming: Int(gapless.priming)) } catch { throw .container(error) }
            if case .audio(let audio) = packet.format { format = audio }
            // Live: the header goes first, without the valid length (rewritten at the end).
            if live != nil, let segmenter { try writeFile("init.mp4", segmenter.header()) }
        }
        let timescale = Int32(segmenter?.timescale ?? 1)
        let duration = (try? packet.duration.converted(to: timescale, rounding: .nearest).value) ?? 0
        queue.append(packet)
        queuedDuration += duration
        let target = Int64((segmentDuration * Double(timescale)).rounded())
        if let partDuration = live?.partDuration {
            // Low-latency: a part as soon as it is recorded (whole frames, at most the part
            // target), a segment every so many parts, the playlist after each.
            let framesPerPart = max(1, Int((partDuration * Double(timescale)).rounded(.down)) / Int(max(duration, 1)))
            if queue.count >= framesPerPart {
                try cutPart(count: framesPerPart)
                // Whole parts within the segment duration: the target duration never grows.
                if openParts.count >= max(1, Int((segmentDuration / partDuration + 1e-9).rounded(.down))) { try closeSegment() }
                try writePlaylist(ended: false)
            }
        } else if live != nil {
            // Live: a segment as soon as it is long enough, then the playlist.
            if queuedDuration >= target {
                try cut(atLeast: target)
                try writePlaylist(ended: false)
            }
        } else if queuedDuration * 2 >= target * 3 {
            try cut(atLeast: target)
        }
    }

    /// The playlist of the segments written: VOD when not live; live, an event playlist or the
    /// last ``Live/window`` segments, with their program date-times.
    private mutating func writePlaylist(ended: Bool) throws(PipelineError) {
        var entries: [HLSMediaPlaylist.Segment] = []
        var elapsed: Int64 = 0
        // The first frame captured is presented after the priming: a segment's first sample
        // (its tfdt) was captured that much before the origin plus the samples before it.
        let origin = live?.clock?() ?? live?.startDate
        let primingSamples = gapless.priming
        for segment in segments {
            let date = origin.map { $0 + Double(elapsed - primingSamples) / Double(max(segment.timescale, 1)) }
            entries.append(HLSMediaPlaylist.Segment(uri: segment.name, duration: segment.seconds, programDateTime: date))
            elapsed += segment.duration
        }
        for (index, segment) in segments.enumerated() { entries[index].parts = segment.parts }
        var list = HLSMediaPlaylist(mapURI: "init.mp4", segments: entries, playlistType: "VOD", isEnded: ended)
        if let partDuration = live?.partDuration {
            list.partTarget = partDuration
            list.openParts = openParts.map { HLSMediaPlaylist.Part(uri: $0.name, duration: Double($0.duration) / Double(max($0.timescale, 1))) }
            list.preloadHint = Self.partName(segment: segments.count + 1, part: openParts.count + 1)
            list.canBlockReload = live?.publication != nil
        }
        if live != nil { list.targetHint = Int(segmentDuration.rounded(.up)) }
        if let live {
            if live.window > 0 {
                // RFC 8216 6.2.2: what stays lasts at least three target durations.
                var dropped = max(0, entries.count - live.window)
                let floor = 3.0 * Double(max(list.targetDuration, Int(segmentDuration.rounded(.up))))
                while dropped > 0, entries[dropped...].reduce(0.0, { $0 + $1.duration }) < floor { dropped -= 1 }
                // A segment out of the window stays for another window's worth of segments
                // (clients may still be fetching it: RFC 8216 6.2.2), then goes with its parts.
                while removedSegments < dropped - live.window {
                    let gone = segments[removedSegments]
                    for name in [gone.name] + gone.parts.map(\.uri) {
                        let path = directory.appending(name)
                        try? FileSystemCalls.unlink(path)
                        written.removeAll { $0 == path }
                    }
                    removedSegments += 1
                }
                list.segments = Array(entries.dropFirst(dropped))
                list.mediaSequence = dropped
                list.playlistType = nil
            } else {
                list.playlistType = "EVENT"
            }
        }
        try writeFile(playlistName, Array(list.text.utf8))
        playlist = list
        live?.publication?.publish(list)
    }

    /// Writes the queued packets from the front, whole ones adding up to at least `target` media
    /// units, as a segment.
    private mutating func cut(atLeast target: Int64) throws(PipelineError) {
        guard let segmenter else { return }
        var taken: Int64 = 0
        var count = 0
        while count < queue.count, taken < target {
            let duration = (try? queue[count].duration.converted(to: segmenter.timescale, rounding: .nearest).value) ?? 0
            taken += duration
            count += 1
        }
        for packet in queue[..<count] { segmenter.append(packet) }
        queue.removeFirst(count)
        queuedDuration -= taken
        packetIndex += count
        try writeSegment()
    }

    /// Writes the first `count` queued packets as a part of the segment being recorded.
    private mutating func cutPart(count: Int) throws(PipelineError) {
        guard let segmenter else { return }
        var taken: Int64 = 0
        for packet in queue[..<count] {
            segmenter.append(packet)
            taken += (try? packet.duration.converted(to: segmenter.timescale, rounding: .nearest).value) ?? 0
        }
        queue.removeFirst(count)
        queuedDuration -= taken
        packetIndex += count
        guard let chunk = segmenter.cutChunk() else { return }
        let name = Self.partName(segment: segments.count + 1, part: openParts.count + 1)
        try writeFile(name, chunk.bytes)
        openParts.append((name, chunk.bytes, chunk.duration, chunk.timescale))
    }

    /// Writes the parts recorded as a segment: a `styp`, then each part's chunk.
    private mutating func closeSegment() throws(PipelineError) {
        guard !openParts.isEmpty else { return }
        let bytes = CMAFSegmenter.segmentType + openParts.flatMap(\.bytes)
        let name = Self.segmentName(UInt32(segments.count + 1))
        try writeFile(name, bytes)
        let duration = openParts.reduce(Int64(0)) { $0 + $1.duration }
        var segment = WrittenSegment(name: name, byteCount: bytes.count, duration: duration, timescale: openParts[0].timescale)
        segment.parts = openParts.map { HLSMediaPlaylist.Part(uri: $0.name, duration: Double($0.duration) / Double(max($0.timescale, 1))) }
        segments.append(segment)
        mediaDuration += duration
        openParts.removeAll()
    }

    /// `segment-00001.2.m4s`: part 2 of segment 1.
    static func partName(segment: Int, part: Int) -> String {
        String(segmentName(UInt32(segment)).dropLast(4)) + ".\(part).m4s"
    }

    private mutating func writeSegment() throws(PipelineError) {
        // With a DASH header the first segment's moof ends with iTunSMPB: a placeholder of the
        // same size until the numbers are known (``finish()``).
        let tagged = writesDASHHeader && segments.isEmpty
        let userData = tagged ? CMAFSegmenter.gaplessUserData(priming: 0, padding: 0, validFrameCount: 0) : []
        guard let segment = segmenter?.cutSegment(userData: userData) else { return }
        let name = Self.segmentName(UInt32(segments.count + 1))
        if tagged { heldFirstSegment = segment.bytes } else { try writeFile(name, segment.bytes, syncing: live != nil) }
        segments.append(WrittenSegment(name: name, byteCount: segment.bytes.count, duration: segment.duration, timescale: segment.timescale))
        mediaDuration += segment.duration
    }

    /// `segment-00001.m4s`.
    static func segmentName(_ number: UInt32) -> String {
        let digits = String(number)
        return "segment-" + String(repeating: "0", count: max(0, 5 - digits.count)) + digits + ".m4s"
    }

    /// Writes a file atomically. VOD segments are not synced one by one: the file system is
    /// synced once before the init segment and the playlist name them (``finish()``); live ones
    /// are, since the playlist names each at once.
    private mutating func writeFile(_ name: String, _ bytes: [UInt8], syncing: Bool = true) throws(PipelineError) {
        let path = directory.appending(name)
        let sink: FileByteSink
        do { sink = try FileByteSink(path: path) } catch { throw .stream(error) }
        do throws(ByteStreamError) {
            try sink.write(bytes)
            try sink.commit(syncing: syncing)
        } catch {
            sink.cancel()
            throw .stream(error)
        }
        if !written.contains(path) { written.append(path) }
    }

    /// Writes the last segments (dropping the packets wholly after the last presented sample),
    /// the init segment with the gapless numbers, then the playlist.
    public mutating func finish() throws(PipelineError) {
        guard let segmenter else { throw .unsupported("nothing to package: the input holds no audio") }
        let priming = gapless.priming
        let valid = gapless.validLength ?? max(0, mediaDuration + queuedDuration - priming)
        // The last packet needed is the one that holds the last presented sample.
        let frame = Int64(max(1, (try? queue.first?.duration.converted(to: segmenter.timescale, rounding: .nearest).value) ?? 1024))
        let lastNeeded = Int((priming + valid - 1) / max(frame, 1))
        let keep = max(0, min(queue.count, lastNeeded - packetIndex + 1))
        if keep < queue.count {
            queue.removeLast(queue.count - keep)
            queuedDuration = queue.reduce(0) { $0 + ((try? $1.duration.converted(to: segmenter.timescale, rounding: .nearest).value) ?? 0) }
        }
        let target = Int64((segmentDuration * Double(segmenter.timescale)).rounded())
        if live?.partDuration != nil {
            if !queue.isEmpty { try cutPart(count: queue.count) }
            try closeSegment()
        } else {
            if live == nil, queuedDuration * 2 > target * 3 { try cut(atLeast: target) }
            if !queue.isEmpty { try cut(atLeast: .max) }
        }
        if var first = heldFirstSegment, let name = segments.first?.name {
            let tag = CMAFSegmenter.gaplessUserData(priming: Int(priming), padding: max(0, Int(mediaDuration - priming - valid)), validFrameCount: valid)
            let moofStart = CMAFSegmenter.segmentType.count
            let moofEnd = moofStart + first[moofStart..<(moofStart + 4)].reduce(0) { $0 << 8 | Int($1) }
            let start = moofEnd - tag.count
            // The placeholder is the moof's last box, and the tag has its size.
            guard start > moofStart, moofEnd <= first.count, Array(first[(start + 4)..<(start + 8)]) == Array("udta".utf8) else {
                throw .unsupported("the first segment's gapless tag is not where it was written")
            }
            first.replaceSubrange(start..<moofEnd, with: tag)
            try writeFile(name, first, syncing: false)
            heldFirstSegment = nil
        }
        if live == nil {
            // The segments reach the disk before anything names them.
            do { try FileSystemCalls.syncFileSystem(containing: directory) } catch {
                throw .stream(.system(operation: "sync", path: directory, errno: error))
            }
        }
        // The header with the valid length (live: rewritten over the first one, atomically).
        try writeFile("init.mp4", segmenter.header(validFrameCount: valid, mediaDuration: mediaDuration))
        if writesDASHHeader {
            try writeFile(Self.dashHeaderName, segmenter.header(validFrameCount: valid, mediaDuration: mediaDuration, gaplessTag: false))
        }
        self.priming = priming
        validLength = valid
        try writePlaylist(ended: true)
        written.removeAll()
    }

    /// Frames a packet holds (for a recording's count).
    package static func frames(in element: MediaSample) -> Int64 { Int64(AudioPacketOutput.framesPerPacket) }

    /// Keeps what was written (a live rendition's playlist lists only whole segments).
    package mutating func salvage() {
        written.removeAll()
    }

    /// Removes every file written.
    public mutating func cancel() {
        for path in written { try? FileSystemCalls.unlink(path) }
        written.removeAll()
        if createdDirectory { try? FileSystemCalls.removeDirectory(directory) }
    }
}
