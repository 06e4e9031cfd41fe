public import SystemPackage
public import MP4
internal import MPEGTS

/// An HLS rendition on disk (RFC 8216) as a ``/MediaCore/PacketSink``: AAC packets in; CMAF
/// segments of whole packets (`segment-00001.m4s`, …), the init segment (`init.mp4`) and the
/// media playlist (`index.m3u8`) out, in a directory.
///
/// Segments last ``segmentDuration`` (rounded to whole packets) but the last, which takes up to
/// half a segment more rather than leave a short one: a segment is cut only once one and a half
/// segments are waiting. Packets wholly after the last presented sample (the encoder's padding
/// past the frame that holds the end) are not written; the init segment's edit skips the priming
/// and its iTunSMPB gives the valid length, so that a gapless reader stops at the source's end.
/// The packet that holds the last presented sample lasts only up to it: its `trun` sample
/// duration is the priming plus the valid length less every earlier packet's (1 to a frame), as
/// FFmpeg's muxer writes it, and the last segment's `EXTINF` (and last part's `DURATION`) and
/// the MPD's timeline add up from the same durations (the CMAF header's `mehd` stays 0). A reader
/// that ends a stream by its sample durations (Chromium's `decodeAudioData` and MSE's buffered
/// range) then ends at the source's end. Live, the newest packet is held back until the next
/// comes (or the end), so that the end can still shorten it.
///
/// A packaged (VOD) rendition's first segment carries the header's iTunSMPB in its `moof` (a
/// `udta`), the same numbers in the same units: a reader that parses the first `moof` before it
/// starts (FFmpeg's HLS and DASH demuxers) takes that tag over the header's. With
/// ``writesDASHHeader``, a second init segment, ``dashHeaderName``, is written for an MPD over
/// the same segments: the same header without iTunSMPB, because a DASH reader that parses the
/// header again before each segment (FFmpeg 5.1's) would skip the priming at every segment
/// boundary. The HLS files are the same with or without it.
///
/// Each file is written under a temporary name and renamed when complete, and the playlist last:
/// a reader sees whole segments only. ``cancel()`` (or an error) removes what was written.
///
/// It composes four parts, each with one job: a segmenting policy decides where segments and
/// parts end, a `CMAFSegmenter` makes their bytes, a segment store writes the files (and
/// removes them), a playlist builder makes each playlist, and a publisher hands it to a live
/// server's ``LiveHLSPublication``.
public struct HLSSegmentOutput: PacketSink {
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
    public var segments: [WrittenSegment] { store.segments }
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
    /// The segments' bytes; made with the first packet.
    private var segmenter: CMAFSegmenter?
    /// Where segments and parts end; made with the first packet (it needs the timescale).
    private var policy: HLSSegmentingPolicy?
    /// The packets waiting for a cut (the policy has their durations).
    private var queue: [MediaSample] = []
    /// Live: the newest packet, handed to the policy when the next comes or at the end (which
    /// may shorten it: a live cut must not have written it yet).
    private var held: MediaSample?
    /// The files.
    private var store: HLSSegmentStore
    /// The playlists.
    private let playlists: HLSPlaylistBuilder
    /// Live: where each playlist goes once written.
    private let publisher: HLSPlaylistPublisher

    /// A rendition in `directory` (made if missing), segments of about `segmentDuration` seconds.
    /// With `writesDASHHeader`, also ``dashHeaderName`` (VOD only).
    ///
    /// The gapless numbers come in the stream: a ``/MediaCore/StreamEvent/gapless(_:)`` before
    /// the first packet gives the priming (an encoder's, or an AAC file's from its edit list),
    /// and the last one before the end the valid length; without one, nothing is trimmed.
    ///
    /// The segments describe the packets' codec by the first of `audioCodecs` that does (by
    /// default AAC's; a codec registry's descriptions, `AudioCodecRegistry.descriptions`, for others).
    ///
    /// Timed metadata (``/MediaCore/StreamEvent/timedMetadata(_:)``: ID3 tags, SCTE-35
    /// sections, event messages) goes in the segment (low-latency: the part) whose presentation
    /// time range holds its time, as an `emsg` version 1 before that fragment's `moof` (AOM's
    /// "Carriage of ID3 Timed Metadata in CMAF"; an event told late goes in the next fragment, at
    /// its start). With `timedMetadata`, the init segment lists the `aid3` brand. Ad breaks
    /// (``/MediaCore/StreamEvent/marker(_:)``) and chapters become `EXT-X-DATERANGE` tags
    /// (``HLSMediaPlaylist/DateRange``) and cue tags, and an ad break's SCTE-35 cues also travel
    /// as `emsg` boxes (`urn:scte:scte35:2013:bin`). A VOD playlist with date ranges dates its
    /// segments from `dateOrigin` (seconds since 1970; the time of packaging by default).
    public init(directory: FilePath, segmentDuration: Double = 6, playlistName: String = "index.m3u8",
                live: Live? = nil, writesDASHHeader: Bool = false, audioCodecs: [AudioCodecDescription] = [.aac],
                timedMetadata: Bool = false, dateOrigin: Double? = nil, segmentFormat: HLSSegmentFormat = .cmaf) throws(PipelineError) {
        try HLSSegmentingPolicy.checkSegmentDuration(segmentDuration)
        guard live == nil || !writesDASHHeader else { throw .unsupported("a DASH header is written for a packaged (VOD) rendition only") }
        if segmentFormat == .packedAudio {
            guard !writesDASHHeader else { throw .unsupported("DASH reads CMAF segments; packed audio (RFC 8216 3.4) is HLS's alone") }
            guard live?.partDuration == nil else { throw .unsupported("low-latency parts are CMAF chunks; packed audio has none") }
        }
        self.segmentFormat = segmentFormat
        if let partDuration = live?.partDuration { try HLSSegmentingPolicy.checkPartDuration(partDuration, segmentDuration: segmentDuration) }
        // Never over another package: its playlist would name segments this one overwrites.
        store = try HLSSegmentStore(directory: directory, playlistName: playlistName, writesDASHHeader: writesDASHHeader,
                                   tagsFirstSegment: live == nil && segmentFormat == .cmaf, syncsSegments: live != nil,
                                   segmentExtension: segmentFormat == .cmaf ? "m4s" : "aac")
        store.replicas = live?.replicas ?? []
        store.replicaPrefix = live?.replicaPrefix ?? ""
        publisher = HLSPlaylistPublisher(publication: live?.publication)
        playlists = HLSPlaylistBuilder(segmentDuration: segmentDuration, live: live, canBlockReload: publisher.canBlockReload)
        self.directory = directory
        self.segmentDuration = segmentDuration
        self.playlistName = playlistName
        self.live = live
        self.writesDASHHeader = writesDASHHeader
        self.audioCodecs = audioCodecs
        self.timedMetadata = timedMetadata
        self.dateOrigin = dateOrigin ?? WallClock.now()
    }

    /// Whether the init segment lists the `aid3` brand.
    public let timedMetadata: Bool
    /// What the segments are made of: CMAF, or packed audio (no init segment).
    public let segmentFormat: HLSSegmentFormat
    /// Packed audio: the segments' maker; made with the first packet.
    private var packed: PackedAudioSegmenter?
    /// The segments' maker, whatever the format.
    private var maker: (any HLSSegmentMaker)? { segmenter ?? packed }
    /// A VOD playlist's date of its first presented sample, when it has date ranges.
    private let dateOrigin: Double
    /// Timed metadata told and not yet written, in the order of their times.
    private var pendingMessages: [TimedMetadata] = []
    /// The `emsg` IDs given so far.
    private var messageCount: UInt32 = 0
    /// The ad breaks told, as the playlist writes them.
    private var adBreaks: [HLSProgrammeMarks.AdBreak] = []
    /// The messages and marks written into the segments, for a caller that lists them.
    public private(set) var writtenMessages: [EventMessage] = []

    /// The codecs the segments can describe, the first of a codec taken.
    public let audioCodecs: [AudioCodecDescription]

    /// The RFC 6381 name of the stream's codec for `CODECS` and `@codecs`, once a packet came
    /// (``StreamManifests/codecs(of:describedBy:)``).
    public var codecsParameter: String { StreamManifests.codecs(of: format, describedBy: audioCodecs) }

    /// Packets of `packetFrames` samples at `sampleRate` (the segments' timescale) from one place
    /// a player may start to the next: a segment's first packet, and low-latency a part's. An
    /// encoder whose packets are not all such places (HE-AAC, whose SBR header comes now and
    /// then) marks every multiple of it, counting from its first packet, before making it.
    public func randomAccessInterval(packetFrames: Int, sampleRate: Int) -> Int64 {
        Self.randomAccessInterval(segmentDuration: segmentDuration, live: live != nil, partDuration: live?.partDuration,
                                  packetFrames: packetFrames, sampleRate: sampleRate)
    }

    /// ``randomAccessInterval(packetFrames:sampleRate:)`` of a rendition not made yet: segments
    /// of `segmentDuration` seconds, `live` or VOD, with parts of `partDuration` seconds
    /// (low-latency) or none.
    public static func randomAccessInterval(segmentDuration: Double, live: Bool, partDuration: Double?, packetFrames: Int,
                                            sampleRate: Int) -> Int64 {
        let mode: HLSSegmentingPolicy.Mode = partDuration.map { .lowLatency(partDuration: $0) } ?? (live ? .live : .onDemand)
        guard let policy = try? HLSSegmentingPolicy(segmentDuration: segmentDuration, mode: mode, timescale: Int32(clamping: sampleRate)) else {
            return 1
        }
        return policy.packetsBetweenStarts(packetDuration: Int64(packetFrames))
    }

    /// Keeps the stream's gapless numbers: the priming must come before the first packet (the
    /// init segment's edit list is made with it), the valid length before the end. Keeps its
    /// chapters (``/MediaCore/StreamEvent/metadata(_:)``), which a finished rendition writes
    /// beside its playlist as `chapters.vtt` (WebVTT), for the player page, and its tags and
    /// cover, which every init segment carries as iTunes items (`moov/udta/meta/ilst`: `©nam`,
    /// `©ART`, …, `covr`), so that a player can name the stream and show its cover.
    public mutating func receive(_ event: StreamEvent) throws(PipelineError) {
        if case .metadata(let metadata) = event {
            chapters = metadata.chapters
            tags = ITunesMetadata(metadata)
            segmenter?.metadata = tags
        }
        if case .timedMetadata(let timed) = event { hold(timed) }
        if case .loudness(let measured) = event {
            loudness = measured
            segmenter?.loudness = measured
        }
        if case .marker(let marker) = event, let section = SpliceInfoSection(marker: marker) {
            hold(TimedMetadata(kind: .scte35, time: marker.time, payload: section.bytes))
            // An end without an ID closes the latest break still open.
            let id = marker.id ?? (marker.kind == .adBreakEnd ? adBreaks.last { $0.back == nil }?.id : nil) ?? "ad-\(adBreaks.count + 1)"
            if marker.kind == .adBreakStart {
                adBreaks.append(HLSProgrammeMarks.AdBreak(id: id, start: max(0, marker.time.seconds), duration: max(0, marker.duration?.seconds ?? 0),
                                                          uri: marker.uri, out: section.hexadecimal))
            } else if let index = adBreaks.lastIndex(where: { $0.id == id && $0.back == nil }) {
                adBreaks[index].back = section.hexadecimal
                // The break lasts until its return, whatever was planned.
                adBreaks[index].duration = max(0, marker.time.seconds - adBreaks[index].start)
            }
        }
        guard case .gapless(let info) = event else { return }
        if maker != nil, info.priming != gapless.priming {
            throw .unsupported("the priming changed from \(gapless.priming) to \(info.priming) after the first packet")
        }
        gapless = info
    }

    /// Queues a packet and writes what the policy cuts: VOD, a segment once one and a half are
    /// waiting; live, a segment (or a part) as soon as it is long enough, then the playlist.
    public mutating func write(_ packet: MediaSample) throws(PipelineError) {
        if maker == nil { try start(with: packet) }
        // Live: the packet before this one goes to the policy; this one waits for the next.
        var packet = packet
        if live != nil {
            guard let previous = held else {
                held = packet
                return
            }
            held = packet
            packet = previous
        }
        queue.append(packet)
        let duration = duration(of: packet)
        let cuts = policy?.add(duration) ?? []
        for cut in cuts { try carryOut(cut) }
        if live != nil, !cuts.isEmpty { try writePlaylist(ended: false) }
    }

    /// Writes the last segments (dropping the packets wholly after the last presented sample,
    /// and shortening the one that holds it), the init segment with the gapless numbers, then
    /// the playlist.
    public mutating func finish() throws(PipelineError) {
        guard let maker, policy != nil else {
            throw .unsupported("nothing to package: the input holds no audio")
        }
        if let held {
            let duration = duration(of: held)
            queue.append(held)
            policy?.addLast(duration)
            self.held = nil
        }
        let priming = gapless.priming
        let valid = gapless.validLength ?? max(0, writtenDuration + (policy?.waitingDuration ?? 0) - priming)
        queue.removeLast(policy?.dropPacketsPastEnd(priming: priming, validLength: valid) ?? 0)
        shortenLastPacket(toEndAt: priming + valid)
        for cut in policy?.finalCuts() ?? [] { try carryOut(cut) }
        if let segmenter {
            try store.writeHeldFirstSegment(userData: segmenter.gaplessUserData(validFrameCount: valid, mediaDuration: store.mediaDuration))
        }
        // VOD: the segments reach the disk before anything names them.
        if live == nil { try store.syncFileSystem() }
        if let segmenter {
            // The header with the valid length (live: rewritten over the first one, atomically).
            try store.writeInitSegment(segmenter.header(validFrameCount: valid, mediaDuration: store.mediaDuration))
            if writesDASHHeader {
                try store.writeDASHHeader(segmenter.header(validFrameCount: valid, mediaDuration: store.mediaDuration, gaplessTag: false))
            }
        }
        self.priming = priming
        validLength = valid
        if !chapters.isEmpty {
            try store.writeChapters(Self.webVTT(chapters, ending: MediaTime(value: valid, timescale: Int32(maker.timescale))))
        }
        try writePlaylist(ended: true)
        store.keepAll()
    }

    /// The stream's loudness, once told: the init segment written at the end carries it.
    private var loudness: StreamLoudness?
    /// The stream's chapters, once told.
    private var chapters: [StreamMetadata.Chapter] = []
    /// The stream's tags and cover as the init segment writes them, once told.
    private var tags = ITunesMetadata()

    /// `chapters` as a WebVTT file (W3C WebVTT, 4: cues of `HH:MM:SS.mmm --> HH:MM:SS.mmm` and a
    /// title), each lasting until the next starts, the last until `end`; those at or past `end`
    /// are left out.
    static func webVTT(_ chapters: [StreamMetadata.Chapter], ending end: MediaTime) -> String {
        func time(_ value: MediaTime) -> String {
            let milliseconds = max(0, Int64((value.seconds * 1000).rounded()))
            func two(_ number: Int64) -> String { number < 10 ? "0\(number)" : "\(number)" }
            let fraction = milliseconds % 1000
            return "\(two(milliseconds / 3_600_000)):\(two(milliseconds / 60000 % 60)):\(two(milliseconds / 1000 % 60))."
                + (fraction < 10 ? "00\(fraction)" : fraction < 100 ? "0\(fraction)" : "\(fraction)")
        }
        let kept = chapters.filter { $0.start < end }.sorted { $0.start < $1.start }
        var text = "WEBVTT\n"
        for (index, chapter) in kept.enumerated() {
            let next = index + 1 < kept.count ? kept[index + 1].start : end
            // A cue's text may not hold "-->" (its ">" is escaped) or a blank line (WebVTT, 4.2).
            // Escaped as cue text (WebVTT 4.2.2: `&`, `<`, `>`).
            let title = chapter.title.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
                .split(whereSeparator: \.isNewline).joined(separator: " ")
            text += "\n\(index + 1)\n\(time(chapter.start)) --> \(time(next))\n\(title.isEmpty ? "Chapter \(index + 1)" : title)\n"
        }
        return text
    }

    /// Frames a packet holds (for a recording's count).
    package static func frames(in element: MediaSample) -> Int64 { AudioPacketOutput.frames(in: element) }

    /// Keeps what was written (a live rendition's playlist lists only whole segments).
    package mutating func salvage() {
        store.keepAll()
    }

    /// Removes every file written.
    public mutating func cancel() {
        store.removeAll()
    }

    /// A packet's duration in the segmenter's timescale, as the segmenter counts it.
    private func duration(of packet: MediaSample) -> Int64 {
        let timescale = Int32(maker?.timescale ?? 1)
        return max(0, (try? packet.duration.converted(to: timescale, rounding: .nearest).value) ?? 0)
    }

    /// Media units already written: the segments, and the parts of the segment being recorded.
    private var writtenDuration: Int64 {
        store.mediaDuration + store.openParts.reduce(Int64(0)) { $0 + $1.duration }
    }

    /// Shortens the last waiting packet so that the samples end at `end` (the priming plus the
    /// valid length) when that falls inside it: its duration becomes 1 to a frame, the rest of
    /// the frame being padding no reader should present. Nothing when the end falls in a packet
    /// already written, or at or after the last packet's end.
    private mutating func shortenLastPacket(toEndAt end: Int64) {
        guard let maker, let waiting = policy?.waiting, let last = waiting.last, !queue.isEmpty else { return }
        let tail = end - (writtenDuration + waiting.dropLast().reduce(0, +))
        guard tail > 0, tail < last else { return }
        policy?.shortenLast(to: tail)
        queue[queue.count - 1].duration = MediaTime(value: tail, timescale: maker.timescale)
    }

    /// With the first packet: the segmenter and the policy (in its timescale); live, the init
    /// segment, without the valid length (rewritten at the end).
    private mutating func start(with packet: MediaSample) throws(PipelineError) {
        if case .audio(let audio) = packet.format { format = audio }
        guard segmentFormat == .cmaf else {
            let packed = try PackedAudioSegmenter(format: packet.format)
            self.packed = packed
            policy = try HLSSegmentingPolicy(segmentDuration: segmentDuration, mode: live?.segmentingMode ?? .onDemand, timescale: packed.timescale)
            return
        }
        let segmenter: CMAFSegmenter
        do { segmenter = try CMAFSegmenter(format: packet.format, priming: Int(gapless.priming), audioCodecs: audioCodecs) } catch { throw .container(error) }
        segmenter.metadata = tags
        segmenter.carriesTimedMetadata = timedMetadata
        segmenter.loudness = loudness
        self.segmenter = segmenter
        policy = try HLSSegmentingPolicy(segmentDuration: segmentDuration, mode: live?.segmentingMode ?? .onDemand, timescale: segmenter.timescale)
        if live != nil { try store.writeInitSegment(segmenter.header()) }
    }

    /// Writes what `cut` says of the queued packets from the front: a segment, a part, or the
    /// parts recorded as a segment.
    private mutating func carryOut(_ cut: HLSSegmentingPolicy.Cut) throws(PipelineError) {
        if let packed, case .segment(let count) = cut {
            for packet in queue[..<count] { packed.append(packet) }
            queue.removeFirst(count)
            if let failure = packed.failure { throw failure }
            // ID3 tags between the frames; an ad break is the playlist's alone.
            let tags = takeTimedMetadata().filter { $0.metadata.kind == .id3 }.map { ($0.metadata.payload, $0.time + gapless.priming) }
            if let segment = packed.cutSegment(metadata: tags) { try store.write(segment) }
            return
        }
        guard let segmenter else { return }
        switch cut {
        case .segment(let count):
            for packet in queue[..<count] { segmenter.append(packet) }
            queue.removeFirst(count)
            if let segment = segmenter.cutSegment(userData: store.nextSegmentUserData, messages: takeMessages()) { try store.write(segment) }
        case .part(let count):
            for packet in queue[..<count] { segmenter.append(packet) }
            queue.removeFirst(count)
            if let chunk = segmenter.cutChunk(messages: takeMessages()) { try store.writePart(chunk) }
        case .closeSegment:
            try store.closeSegment()
        }
    }

    /// Keeps `timed` until the fragment its time falls in is cut, in the order of the times.
    private mutating func hold(_ timed: TimedMetadata) {
        let index = pendingMessages.lastIndex { $0.time <= timed.time }.map { $0 + 1 } ?? 0
        pendingMessages.insert(timed, at: index)
    }

    /// The timed metadata of the fragment appended and not yet cut, in the order of their
    /// times: each whose time falls before the fragment's end, at its time (on the presentation
    /// timeline, in media units) or, told late, at the fragment's start.
    private mutating func takeTimedMetadata() -> [(metadata: TimedMetadata, time: Int64)] {
        guard let maker, !pendingMessages.isEmpty else { return [] }
        let start = max(0, maker.nextDecodeTime - gapless.priming)
        let end = maker.nextDecodeTime + maker.pendingDuration - gapless.priming
        var taken: [(TimedMetadata, Int64)] = []
        while let first = pendingMessages.first {
            let time = (try? first.time.converted(to: maker.timescale, rounding: .down).value) ?? Int64.max
            guard time < end else { break }
            pendingMessages.removeFirst()
            taken.append((first, max(time, start)))
        }
        return taken
    }

    /// The `emsg` boxes of the fragment appended and not yet cut (``takeTimedMetadata()``):
    /// ID3 under AOM's scheme, SCTE-35 under `urn:scte:scte35:2013:bin`, event messages under
    /// their own; other kinds have no `emsg`.
    private mutating func takeMessages() -> [EventMessage] {
        guard let maker else { return [] }
        let timescale = maker.timescale
        var messages: [EventMessage] = []
        for (timed, time) in takeTimedMetadata() {
            let scheme: String
            switch timed.kind {
            case .id3: scheme = EventMessage.id3Scheme
            case .scte35: scheme = EventMessage.scte35Scheme
            case .emsg: scheme = timed.scheme ?? ""
            default: continue
            }
            messageCount += 1
            let duration = timed.duration.flatMap { try? $0.converted(to: timescale).value }.map { UInt32(clamping: $0) } ?? EventMessage.unknownDuration
            messages.append(EventMessage(scheme: scheme, value: timed.value ?? "", timescale: UInt32(timescale),
                                         presentationTime: UInt64(time), duration: duration, id: messageCount, data: timed.payload))
        }
        writtenMessages += messages
        return messages
    }

    /// The chapters and ad breaks, as the playlist marks them.
    private var marks: HLSProgrammeMarks {
        var marks = HLSProgrammeMarks(adBreaks: adBreaks)
        let sorted = chapters.sorted { $0.start < $1.start }
        for (index, chapter) in sorted.enumerated() {
            // The last lasts to the end, once the stream has ended.
            let ending = validLength > 0 ? Double(validLength) / Double(max(maker?.timescale ?? 1, 1)) : nil
            let end = (chapter.end ?? (index + 1 < sorted.count ? sorted[index + 1].start : nil))?.seconds ?? ending
            marks.chapters.append(.init(start: max(0, chapter.start.seconds), end: end, title: chapter.title))
        }
        return marks
    }

    /// Builds the playlist of the segments written, removes the files of segments that left
    /// the window long enough ago, writes it, and publishes it.
    private mutating func writePlaylist(ended: Bool) throws(PipelineError) {
        var list = playlists.playlist(segments: store.segments, openParts: store.openParts.map(\.playlistPart),
                                      preloadHint: store.nextPartName, priming: gapless.priming, ended: ended, marks: marks,
                                      dateOrigin: dateOrigin)
        // Packed audio has no init segment.
        if segmentFormat == .packedAudio { list.mapURI = nil }
        store.removeSegments(before: playlists.expiredSegments(in: list))
        try store.writePlaylist(list, name: playlistName)
        playlist = list
        publisher.publish(list)
    }
}
