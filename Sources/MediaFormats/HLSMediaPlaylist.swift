/// An HLS media playlist (RFC 8216, 4.3): the segments of one rendition, each with its
/// duration, after the init segment (`EXT-X-MAP`).
public struct HLSMediaPlaylist: Sendable, Hashable {
    /// A partial segment of low-latency HLS (`EXT-X-PART`, RFC 8216bis 4.4.4.9): a CMAF chunk.
    public struct Part: Sendable, Hashable {
        /// The part's URI.
        public var uri: String
        /// Seconds.
        public var duration: Double
        /// `INDEPENDENT=YES`: it decodes without the part before it (every AAC part does, after
        /// its pre-roll).
        public var independent: Bool

        /// A part.
        public init(uri: String, duration: Double, independent: Bool = true) {
            self.uri = uri
            self.duration = duration
            self.independent = independent
        }

        var line: String {
            "#EXT-X-PART:DURATION=\(fixed(duration, digits: 6)),URI=\"\(uri)\"" + (independent ? ",INDEPENDENT=YES" : "")
        }
    }

    /// One media segment: its URI (relative to the playlist) and its duration in seconds
    /// (`EXTINF`, RFC 8216 4.3.2.1).
    public struct Segment: Sendable, Hashable {
        /// The segment's URI.
        public var uri: String
        /// Seconds.
        public var duration: Double
        /// `EXT-X-PROGRAM-DATE-TIME` (RFC 8216 4.3.2.6): the wall-clock time of the segment's
        /// first sample, in seconds since 1970 (UTC).
        public var programDateTime: Double?
        /// Its parts (low-latency HLS), listed before it.
        public var parts: [Part] = []
        /// The date ranges listed before it (`EXT-X-DATERANGE`): those that start in it, and
        /// for a playlist's first segment those still running.
        public var dateRanges: [DateRange] = []
        /// The ad-break cue tag before it, if any.
        public var cue: Cue?

        /// A segment.
        public init(uri: String, duration: Double, programDateTime: Double? = nil) {
            self.uri = uri
            self.duration = duration
            self.programDateTime = programDateTime
        }
    }

    /// An `EXT-X-DATERANGE` (RFC 8216 4.3.2.7): a range of dates with attributes, such as an ad
    /// break (`SCTE35-OUT`, `SCTE35-IN`, 4.3.2.7.1), a chapter, or an interstitial
    /// (`CLASS="com.apple.hls.interstitial"`, rfc8216bis Appendix D).
    public struct DateRange: Sendable, Hashable {
        /// `ID`: the range's name; tags of one ID describe one range.
        public var id: String
        /// `CLASS`, when given.
        public var rangeClass: String?
        /// `START-DATE`, seconds since 1970 (UTC).
        public var start: Double
        /// `DURATION`, seconds, once known.
        public var duration: Double?
        /// `PLANNED-DURATION`, seconds, before the duration is known.
        public var plannedDuration: Double?
        /// More attributes in order: `SCTE35-OUT=0x…` (unquoted, `quoted` false), `X-…` client
        /// attributes (quoted strings, or numbers unquoted).
        public var attributes: [Attribute]

        /// An attribute beyond the standard ones.
        public struct Attribute: Sendable, Hashable {
            /// Its name (`SCTE35-OUT`, `X-ASSET-URI`).
            public var name: String
            /// Its value, without quotes.
            public var value: String
            /// Whether the value is written as a quoted-string (RFC 8216 4.2).
            public var quoted: Bool

            /// An attribute.
            public init(_ name: String, _ value: String, quoted: Bool = true) {
                self.name = name
                self.value = value
                self.quoted = quoted
            }
        }

        /// A date range.
        public init(id: String, rangeClass: String? = nil, start: Double, duration: Double? = nil, plannedDuration: Double? = nil,
                    attributes: [Attribute] = []) {
            self.id = id
            self.rangeClass = rangeClass
            self.start = start
            self.duration = duration
            self.plannedDuration = plannedDuration
            self.attributes = attributes
        }

        /// The tag's line. A quoted-string may not hold `"`, CR or LF (RFC 8216 4.2): they become
        /// `'` and spaces.
        var line: String {
            func quoted(_ text: String) -> String {
                "\"" + text.replacing("\"", with: "'").replacing("\r", with: " ").replacing("\n", with: " ") + "\""
            }
            var parts = ["ID=" + quoted(id)]
            if let rangeClass { parts.append("CLASS=" + quoted(rangeClass)) }
            parts.append("START-DATE=" + quoted(HLSMediaPlaylist.iso8601(start)))
            if let duration { parts.append("DURATION=\(fixed(duration, digits: 3))") }
            if let plannedDuration { parts.append("PLANNED-DURATION=\(fixed(plannedDuration, digits: 3))") }
            for attribute in attributes { parts.append(attribute.name + "=" + (attribute.quoted ? quoted(attribute.value) : attribute.value)) }
            return "#EXT-X-DATERANGE:" + parts.joined(separator: ",")
        }
    }

    /// The ad-break cue tags players and ad servers read besides `EXT-X-DATERANGE` (from Adobe's
    /// and SCTE 67's practice; not in RFC 8216).
    public enum Cue: Sendable, Hashable {
        /// `#EXT-X-CUE-OUT:DURATION=`: the break starts with this segment.
        case out(duration: Double)
        /// `#EXT-X-CUE-OUT-CONT:ElapsedTime=,Duration=`: a segment inside the break.
        case continuing(elapsed: Double, duration: Double)
        /// `#EXT-X-CUE-IN`: the programme returns with this segment.
        case back

        var line: String {
            switch self {
            case .out(let duration): "#EXT-X-CUE-OUT:DURATION=\(fixed(duration, digits: 3))"
            case .continuing(let elapsed, let duration): "#EXT-X-CUE-OUT-CONT:ElapsedTime=\(fixed(elapsed, digits: 3)),Duration=\(fixed(duration, digits: 3))"
            case .back: "#EXT-X-CUE-IN"
            }
        }
    }

    /// `EXT-X-MAP:URI`: the init segment (RFC 8216 4.3.2.5).
    public var mapURI: String?
    /// The segments, in order.
    public var segments: [Segment]
    /// `EXT-X-PLAYLIST-TYPE` (`VOD`, `EVENT`), when given.
    public var playlistType: String?
    /// `EXT-X-ENDLIST`: no segment will be added.
    public var isEnded: Bool
    /// `EXT-X-MEDIA-SEQUENCE`.
    public var mediaSequence: Int
    /// Low-latency HLS: `EXT-X-PART-INF:PART-TARGET`, seconds; `nil` for a playlist without parts.
    public var partTarget: Double?
    /// Low-latency HLS: the parts of the segment being recorded, after the last whole segment.
    public var openParts: [Part] = []
    /// Low-latency HLS: `EXT-X-PRELOAD-HINT:TYPE=PART`, the URI of the next part.
    public var preloadHint: String?
    /// Low-latency HLS: a server answers blocking playlist reloads (`CAN-BLOCK-RELOAD=YES`).
    public var canBlockReload = false
    /// Segments from the end whose parts are listed (RFC 8216bis asks for those within three
    /// target durations of the end).
    public static let segmentsWithParts = 3

    /// A playlist.
    public init(mapURI: String?, segments: [Segment], playlistType: String? = "VOD", isEnded: Bool = true, mediaSequence: Int = 0) {
        self.mapURI = mapURI
        self.segments = segments
        self.playlistType = playlistType
        self.isEnded = isEnded
        self.mediaSequence = mediaSequence
    }

    /// `EXT-X-TARGETDURATION` (RFC 8216 4.3.3.1): every `EXTINF`, rounded to the nearest
    /// integer, is at most it; at least ``targetHint``.
    public var targetDuration: Int {
        max(1, targetHint, segments.map { $0.duration.isFinite ? Int(min(max($0.duration, 0), 1e9).rounded()) : 1 }.max() ?? 1)
    }

    /// The least target duration: a live playlist says the segment length it will have before
    /// its first segment is done.
    public var targetHint = 1

    /// The playlist's text: version 7 (fMP4 segments with `EXT-X-MAP`), independent segments
    /// (every AAC packet decodes on its own after its pre-roll), `EXTINF` to the microsecond.
    public var text: String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:\(targetDuration)"]
        if let partTarget {
            // Blocking reload, and a hold-back of three part targets (RFC 8216bis 4.4.3.8).
            lines.append("#EXT-X-SERVER-CONTROL:" + (canBlockReload ? "CAN-BLOCK-RELOAD=YES," : "") + "PART-HOLD-BACK=\(fixed(3 * partTarget, digits: 3))")
            lines.append("#EXT-X-PART-INF:PART-TARGET=\(fixed(partTarget, digits: 3))")
        }
        if let playlistType { lines.append("#EXT-X-PLAYLIST-TYPE:\(playlistType)") }
        lines.append("#EXT-X-MEDIA-SEQUENCE:\(mediaSequence)")
        lines.append("#EXT-X-INDEPENDENT-SEGMENTS")
        if let mapURI { lines.append("#EXT-X-MAP:URI=\"\(mapURI)\"") }
        for (index, segment) in segments.enumerated() {
            if let time = segment.programDateTime { lines.append("#EXT-X-PROGRAM-DATE-TIME:\(Self.iso8601(time))") }
            lines += segment.dateRanges.map(\.line)
            if let cue = segment.cue { lines.append(cue.line) }
            if partTarget != nil, index >= segments.count - Self.segmentsWithParts { lines += segment.parts.map(\.line) }
            lines.append("#EXTINF:\(fixed(segment.duration, digits: 6)),")
            lines.append(segment.uri)
        }
        if partTarget != nil {
            lines += openParts.map(\.line)
            if let preloadHint, !isEnded { lines.append("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"\(preloadHint)\"") }
        }
        if isEnded { lines.append("#EXT-X-ENDLIST") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Parses the tags a media playlist of fMP4 segments needs: `EXT-X-MAP`, `EXTINF`, segment
    /// URIs, `EXT-X-PLAYLIST-TYPE`, `EXT-X-MEDIA-SEQUENCE` and `EXT-X-ENDLIST`; other tags are
    /// skipped.
    ///
    /// - Throws: `PipelineError.unsupported` without `#EXTM3U`, for a master playlist (it
    ///   names variants, not segments), or for a segment URI without its `EXTINF`.
    ///
    /// A URI named again shares the storage of its first naming: a playlist that names one
    /// segment many times costs a few words per naming.
    public init(text: String) throws(PipelineError) {
        var segments: [Segment] = []
        var uris: [String: String] = [:]
        let header = try Self.scan(text) { uri, duration in
            let shared = uris[uri] ?? uri
            if uris.count < Self.sharedURICapacity, uris[uri] == nil { uris[uri] = uri }
            segments.append(Segment(uri: shared, duration: duration))
        }
        self.init(mapURI: header.mapURI, segments: segments, playlistType: header.playlistType, isEnded: header.isEnded,
                  mediaSequence: header.mediaSequence)
    }

    /// What a media playlist says besides its segments.
    struct Header {
        var mapURI: String?
        var playlistType: String?
        var isEnded = false
        var mediaSequence = 0
    }

    /// Reads the playlist's lines, as ``init(text:)`` says, handing each segment's URI and
    /// `EXTINF` duration to `segment` in order, and returns the rest.
    static func scan(_ text: String, segment: (_ uri: String, _ duration: Double) throws(PipelineError) -> Void) throws(PipelineError) -> Header {
        var lines = PlaylistLines(text)
        guard lines.next()?.line == "#EXTM3U" else { throw .unsupported("not an HLS playlist: it does not start with #EXTM3U") }
        var header = Header()
        var pending: Double?
        while let (number, line) = lines.next() {
            guard !line.isEmpty else { continue }
            if line.hasPrefix("#EXT-X-STREAM-INF") {
                throw .unsupported("a master playlist (line \(number + 1)): give one of its media playlists")
            } else if line.hasPrefix("#EXT-X-MAP:") {
                guard !line.contains("BYTERANGE") else { throw .unsupported("line \(number + 1): an EXT-X-MAP byte range is not read") }
                // RFC 8216 4.3.2.5: URI is a quoted-string.
                guard let uri = Self.attribute("URI", in: line, quoted: true) else {
                    throw .unsupported("line \(number + 1): EXT-X-MAP without a quoted URI")
                }
                header.mapURI = uri
            } else if line.hasPrefix("#EXTINF:") {
                let value = line.dropFirst("#EXTINF:".count).prefix { $0 != "," }
                guard let seconds = Double(value), seconds.isFinite, seconds >= 0, seconds < 1e9 else {
                    throw .unsupported("line \(number + 1): \(line) has no duration (a number of seconds, under 10⁹)")
                }
                pending = seconds
            } else if line.hasPrefix("#EXT-X-PLAYLIST-TYPE:") {
                header.playlistType = String(line.dropFirst("#EXT-X-PLAYLIST-TYPE:".count))
            } else if line.hasPrefix("#EXT-X-MEDIA-SEQUENCE:") {
                header.mediaSequence = Int(line.dropFirst("#EXT-X-MEDIA-SEQUENCE:".count)) ?? 0
            } else if line == "#EXT-X-ENDLIST" {
                header.isEnded = true
            } else if line.hasPrefix("#EXT-X-BYTERANGE") || line.hasPrefix("#EXT-X-KEY") || line.hasPrefix("#EXT-X-DISCONTINUITY:") || line == "#EXT-X-DISCONTINUITY" {
                throw .unsupported("line \(number + 1): \(line.prefix { $0 != ":" }) is not read (whole segment files of one stream only)")
            } else if !line.hasPrefix("#") {
                guard let duration = pending else { throw .unsupported("line \(number + 1): segment \(line) has no #EXTINF before it") }
                try segment(line, duration)
                pending = nil
            }
        }
        return header
    }

    /// How many distinct URIs a parse shares the storage of.
    static let sharedURICapacity = 1 << 16

    /// `2026-11-25T05:31:02.123Z`: seconds since 1970 as an RFC 3339 date-time in UTC, to the
    /// millisecond.
    static func iso8601(_ seconds: Double) -> String {
        let milliseconds = Int64((seconds * 1000).rounded())
        let days = Int64((Double(milliseconds) / 86_400_000).rounded(.down))
        let inDay = milliseconds - days * 86_400_000
        let date = CivilDate(daysSince1970: days)
        let (year, month, day) = (date.year, date.month, date.day)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(inDay / 3_600_000, 2)):\(pad(inDay / 60000 % 60, 2)):"
            + "\(pad(inDay / 1000 % 60, 2)).\(pad(inDay % 1000, 3))Z"
    }

    /// The value of a quoted or plain attribute of a tag's attribute list (RFC 8216 4.2); with
    /// `quoted`, only a quoted-string's (closed, without the quotes).
    static func attribute(_ name: String, in line: String, quoted: Bool = false) -> String? {
        let key = Array((name + "=").utf8)
        let bytes = Array(line.utf8)
        guard let start = (0...max(0, bytes.count - key.count)).first(where: { bytes.count >= key.count && Array(bytes[$0..<($0 + key.count)]) == key
                                                                                  && ($0 == 0 || bytes[$0 - 1] == UInt8(ascii: ",") || bytes[$0 - 1] == UInt8(ascii: ":")) })
        else { return nil }
        let rest = Substring(String(decoding: bytes[(start + key.count)...], as: UTF8.self))
        if rest.first == "\"" {
            let value = rest.dropFirst().prefix { $0 != "\"" }
            guard !quoted || value.endIndex < rest.endIndex else { return nil }
            return String(value)
        }
        return quoted ? nil : String(rest.prefix { $0 != "," })
    }
}

/// The lines of a playlist's text, one at a time, numbered from 0, each without the spaces and
/// tabs at its ends: split where `Character.isNewline` splits (LF, CR, CRLF, VT, FF, NEL, LS,
/// PS), empty lines skipped, and no array of them all.
struct PlaylistLines {
    private let text: String
    private var position: String.Index
    private var number = 0

    init(_ text: String) {
        self.text = text
        position = text.startIndex
    }

    mutating func next() -> (number: Int, line: String)? {
        while position < text.endIndex {
            var end = position
            while end < text.endIndex, !text[end].isNewline { end = text.index(after: end) }
            let line = text[position..<end]
            position = end < text.endIndex ? text.index(after: end) : end
            defer { number += 1 }
            if !line.isEmpty { return (number, String(line).trimmingSpaces) }
        }
        return nil
    }
}

extension HLSMediaPlaylist {
    /// The init segment and segments of the media playlist at `path`, as paths beside it (URIs
    /// are taken relative to the playlist's directory; absolute URLs are refused).
    ///
    /// A segment named again and again in a row is one run of ``/MediaCore/RunLengthArray``,
    /// and a URI named again resolves to the path of its first naming (for the first 65,536
    /// distinct URIs): a playlist costs memory for its runs, not for its namings.
    ///
    /// - Throws: `PipelineError.unsupported` for a playlist without `EXT-X-MAP` (packed
    ///   audio segments are not read), a sliding window, or `http:` URIs; the stream's read
    ///   errors.
    public static func files(of path: FilePath) throws(PipelineError) -> (initSegment: FilePath, segments: RunLengthArray<FilePath>) {
        let text = try ManifestText.read(path, what: "a playlist")
        var uris = RunLengthArray<String>()
        var shared: [String: String] = [:]
        let header: Header
        do {
            header = try scan(text) { uri, _ in
                if uris.runs.last?.element == uri { return uris.append(uri) }
                let known = shared[uri] ?? uri
                if shared.count < sharedURICapacity, shared[uri] == nil { shared[uri] = uri }
                uris.append(known)
            }
        } catch { throw error.about(path) }
        shared = [:]
        guard let map = header.mapURI else { throw .unsupported("\(path): no EXT-X-MAP; only fMP4 (CMAF) segments are read") }
        guard header.mediaSequence == 0 else {
            throw .unsupported("\(path): a sliding window from segment \(header.mediaSequence); the segments before it are gone, so it cannot be decoded from its start")
        }
        let directory = path.removingLastComponent()
        // A segment named again resolves to the same path, kept once.
        var resolved: [String: FilePath] = [:]
        func resolve(_ uri: String) throws(PipelineError) -> FilePath {
            if let known = resolved[uri] { return known }
            guard !uri.contains("://") else { throw .unsupported("\(path): \(uri) is a URL; only files beside the playlist are read") }
            let relative = FilePath(uri)
            let file = relative.isAbsolute ? relative : directory.appending(relative.components)
            if resolved.count < sharedURICapacity { resolved[uri] = file }
            return file
        }
        var segments = RunLengthArray<FilePath>()
        for run in uris.runs { segments.append(try resolve(run.element), count: run.count) }
        return (try resolve(map), segments)
    }
}
