/// Builds an HLS rendition's media playlist (``/MediaFormats/HLSMediaPlaylist``) from the segments written:
/// VOD when packaged; live, an event playlist or a sliding window, with program date-times and,
/// for low-latency HLS, parts, server control and a preload hint. It only builds:
/// `HLSSegmentStore` writes the text, and removes the files that
/// ``expiredSegments(in:)`` names.
struct HLSPlaylistBuilder: Sendable {
    /// The wanted segment length in seconds (live: the least target duration).
    let segmentDuration: Double
    /// The live rendition's settings; `nil` for VOD.
    let live: HLSSegmentOutput.Live?
    /// Whether a server answers blocking playlist reloads (`CAN-BLOCK-RELOAD=YES`).
    let canBlockReload: Bool

    /// The playlist of `segments` and, low-latency, the parts of the segment being recorded
    /// (`openParts`, the next one `preloadHint`); `ended` adds `EXT-X-ENDLIST` (RFC 8216 4.3.3.4).
    /// `priming` is the samples the first segment decodes before the first sample presented.
    ///
    /// - VOD: `EXT-X-PLAYLIST-TYPE:VOD` (RFC 8216 4.3.3.5), every segment.
    /// - Live without a window: `EXT-X-PLAYLIST-TYPE:EVENT`, every segment.
    /// - Live with a window: the last ``HLSSegmentOutput/Live/window`` segments, or more while
    ///   fewer would last less than three target durations (RFC 8216 6.2.2), no playlist type,
    ///   `EXT-X-MEDIA-SEQUENCE` (4.3.3.2) counting the segments that left.
    /// - Live: `EXT-X-PROGRAM-DATE-TIME` (4.3.2.6) on each segment when the capture clock or
    ///   ``HLSSegmentOutput/Live/startDate`` gives the origin, and a target duration of at least
    ///   the segment duration before any segment is done.
    /// - Low-latency: `EXT-X-PART-INF` and `EXT-X-SERVER-CONTROL` (draft-pantos-hls-rfc8216bis
    ///   4.4.3.7, 4.4.3.8), the parts (4.4.4.9) and the preload hint (4.4.5.3).
    ///
    /// `marks` (chapters and ad breaks) become `EXT-X-DATERANGE` tags and ad-break cue tags;
    /// a playlist with a date range has program date-times (RFC 8216 4.3.2.7), from
    /// `dateOrigin` when no capture clock gives them.
    func playlist(segments: [HLSSegmentOutput.WrittenSegment], openParts: [HLSMediaPlaylist.Part], preloadHint: String,
                  priming: Int64, ended: Bool, marks: HLSProgrammeMarks = HLSProgrammeMarks(), dateOrigin: Double? = nil) -> HLSMediaPlaylist {
        var entries: [HLSMediaPlaylist.Segment] = []
        var starts: [Double] = []
        var elapsed: Int64 = 0
        // The first frame captured is presented after the priming: a segment's first sample
        // (its tfdt) was captured that much before the origin plus the samples before it.
        let origin = live?.clock?() ?? live?.startDate ?? (marks.isEmpty ? nil : dateOrigin)
        for segment in segments {
            let date = origin.map { $0 + Double(elapsed - priming) / Double(max(segment.timescale, 1)) }
            var entry = HLSMediaPlaylist.Segment(uri: segment.name, duration: segment.seconds, programDateTime: date)
            entry.parts = segment.parts
            entries.append(entry)
            starts.append(max(0, Double(elapsed - priming) / Double(max(segment.timescale, 1))))
            elapsed += segment.duration
        }
        let written = max(0, Double(elapsed - priming) / Double(max(segments.first?.timescale ?? 1, 1)))
        if let origin { marks.annotate(&entries, starts: starts, written: written, origin: origin) }
        var list = HLSMediaPlaylist(mapURI: HLSSegmentStore.initSegmentName, segments: entries, playlistType: "VOD", isEnded: ended)
        guard let live else { return list }
        if let partDuration = live.partDuration {
            list.partTarget = partDuration
            list.openParts = openParts
            list.preloadHint = preloadHint
            list.canBlockReload = canBlockReload
        }
        list.targetHint = Int(segmentDuration.rounded(.up))
        guard live.window > 0 else {
            list.playlistType = "EVENT"
            return list
        }
        // RFC 8216 6.2.2: what stays lasts at least three target durations.
        var dropped = max(0, entries.count - live.window)
        let floor = 3.0 * Double(max(list.targetDuration, Int(segmentDuration.rounded(.up))))
        while dropped > 0, entries[dropped...].reduce(0.0, { $0 + $1.duration }) < floor { dropped -= 1 }
        list.segments = Array(entries.dropFirst(dropped))
        // Date ranges still running when their segment left the window stay, on the first.
        if dropped > 0, let origin {
            let first = origin + starts[dropped]
            let running = entries[..<dropped].flatMap(\.dateRanges).filter { range in
                range.start + (range.duration ?? range.plannedDuration ?? 0) > first
            }
            list.segments[0].dateRanges.insert(contentsOf: running, at: 0)
        }
        list.mediaSequence = dropped
        list.playlistType = nil
        return list
    }

    /// How many segments from the first may have their files removed once `playlist` is
    /// written: a segment out of the window stays for another window's worth of segments, since
    /// clients may still be fetching it (RFC 8216 6.2.2); none without a window.
    func expiredSegments(in playlist: HLSMediaPlaylist) -> Int {
        guard let window = live?.window, window > 0 else { return 0 }
        return max(0, playlist.mediaSequence - window)
    }
}

/// A stream's chapters and ad breaks in a playlist's terms: each becomes an `EXT-X-DATERANGE`
/// before the segment it starts in (RFC 8216 4.3.2.7), and an ad break also the cue tags
/// (`EXT-X-CUE-OUT`, `-OUT-CONT`, `-IN`) on the segments nearest its start and end and those
/// between. Times are seconds on the presentation timeline.
struct HLSProgrammeMarks: Sendable, Hashable {
    /// A chapter.
    struct Chapter: Sendable, Hashable {
        var start: Double
        var end: Double?
        var title: String
    }

    /// An ad break: its SCTE-35 cues (``/MPEGTS/SpliceInfoSection``, 0x-hex), its asset.
    struct AdBreak: Sendable, Hashable {
        var id: String
        var start: Double
        var duration: Double
        var uri: String?
        var out: String
        /// The return's cue, once the end was told.
        var back: String?
    }

    /// The `CLASS` of a chapter's date range.
    static let chapterClass = "com.keyframekit.chapter"
    /// The `CLASS` of an interstitial (rfc8216bis Appendix D).
    static let interstitialClass = "com.apple.hls.interstitial"

    var chapters: [Chapter] = []
    var adBreaks: [AdBreak] = []

    var isEmpty: Bool { chapters.isEmpty && adBreaks.isEmpty }

    /// The date ranges of what has started by `written` seconds, each with the index of the
    /// segment (of those starting at `starts`) it starts in.
    func annotate(_ segments: inout [HLSMediaPlaylist.Segment], starts: [Double], written: Double, origin: Double) {
        guard !segments.isEmpty else { return }
        func index(of time: Double) -> Int { max(0, (starts.lastIndex { $0 <= time + 1e-9 }) ?? 0) }
        for (number, chapter) in chapters.enumerated() where chapter.start < written {
            segments[index(of: chapter.start)].dateRanges.append(HLSMediaPlaylist.DateRange(
                id: "chapter-\(number + 1)", rangeClass: Self.chapterClass, start: origin + chapter.start,
                duration: chapter.end.map { max(0, $0 - chapter.start) }, attributes: [.init("X-TITLE", chapter.title)]))
        }
        for adBreak in adBreaks where adBreak.start < written {
            let at = index(of: adBreak.start)
            let end = adBreak.start + adBreak.duration
            segments[at].dateRanges.append(HLSMediaPlaylist.DateRange(
                id: adBreak.id, start: origin + adBreak.start, plannedDuration: adBreak.duration,
                attributes: [.init("SCTE35-OUT", adBreak.out, quoted: false)]))
            // The return, once told and written: the same ID and START-DATE, its DURATION and
            // SCTE35-IN, before the segment it falls in (RFC 8216 4.3.2.7.1).
            if let back = adBreak.back, end <= written {
                segments[index(of: end)].dateRanges.append(HLSMediaPlaylist.DateRange(
                    id: adBreak.id, start: origin + adBreak.start, duration: adBreak.duration,
                    attributes: [.init("SCTE35-IN", back, quoted: false)]))
            }
            if let uri = adBreak.uri {
                segments[at].dateRanges.append(HLSMediaPlaylist.DateRange(
                    id: adBreak.id + "-interstitial", rangeClass: Self.interstitialClass, start: origin + adBreak.start, duration: adBreak.duration,
                    attributes: [.init("X-ASSET-URI", uri), .init("X-RESUME-OFFSET", fixed(adBreak.duration, digits: 3), quoted: false),
                                 .init("X-RESTRICT", "SKIP,JUMP")]))
            }
            // The cue tags on whole segments: out on the one the break starts in, in on the first
            // that starts at or after its end (once written), continuing between.
            let first = at
            let back = starts.firstIndex { $0 >= end - 1e-9 && $0 > starts[first] } ?? segments.count
            segments[first].cue = .out(duration: adBreak.duration)
            if first + 1 < min(back, segments.count) {
                for index in (first + 1)..<min(back, segments.count) {
                    segments[index].cue = .continuing(elapsed: starts[index] - starts[first], duration: adBreak.duration)
                }
            }
            if back < segments.count { segments[back].cue = .back }
        }
    }
}
