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
    func playlist(segments: [HLSSegmentOutput.WrittenSegment], openParts: [HLSMediaPlaylist.Part], preloadHint: String,
                  priming: Int64, ended: Bool) -> HLSMediaPlaylist {
        var entries: [HLSMediaPlaylist.Segment] = []
        var elapsed: Int64 = 0
        // The first frame captured is presented after the priming: a segment's first sample
        // (its tfdt) was captured that much before the origin plus the samples before it.
        let origin = live?.clock?() ?? live?.startDate
        for segment in segments {
            let date = origin.map { $0 + Double(elapsed - priming) / Double(max(segment.timescale, 1)) }
            var entry = HLSMediaPlaylist.Segment(uri: segment.name, duration: segment.seconds, programDateTime: date)
            entry.parts = segment.parts
            entries.append(entry)
            elapsed += segment.duration
        }
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
