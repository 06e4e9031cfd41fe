/// Metadata that belongs to a moment of the stream rather than to the whole of it: an ID3 frame
/// in an HLS segment (Apple's "Timed Metadata for HTTP Live Streaming"), an ISO/IEC 23009-1
/// 5.10.3.3 `emsg` box's message, a SCTE-35 splice information section, a now-playing title. It
/// travels as a ``StreamEvent/timedMetadata(_:)`` event, in order with the elements, and a sink
/// that cannot carry its ``kind`` ignores it.
public struct TimedMetadata: Sendable, Hashable {
    /// What the payload is: an ``OpenIdentifier`` whose static members are ours, to which a
    /// program adds its own.
    public struct Kind: OpenIdentifier {
        /// The kind's name (`id3`, `emsg`, `scte35`, `nowPlaying`).
        public let name: String

        /// The kind named `name`.
        public init(_ name: String) { self.name = name }

        /// An ID3v2 tag (ID3v2.4.0 structure): `PRIV`, `TXXX`, `TIT2` frames.
        public static let id3 = Kind("id3")
        /// A DASH event message (ISO/IEC 23009-1 5.10.3.3): ``TimedMetadata/scheme`` is its
        /// `scheme_id_uri`, ``TimedMetadata/value`` its `value`, the payload its `message_data`.
        public static let emsg = Kind("emsg")
        /// A SCTE-35 `splice_info_section` (ANSI/SCTE 35 9.6), whole.
        public static let scte35 = Kind("scte35")
        /// What is playing now, as text (UTF-8): an Icecast `StreamTitle`, an HLS `TIT2`.
        public static let nowPlaying = Kind("nowPlaying")
    }

    /// What the payload is.
    public var kind: Kind
    /// Where it applies, on the presentation timeline (after priming).
    public var time: MediaTime
    /// How long it applies, when it says.
    public var duration: MediaTime?
    /// The scheme it is read by, where the kind has one (an `emsg`'s `scheme_id_uri`).
    public var scheme: String?
    /// A value within the scheme (an `emsg`'s `value`).
    public var value: String?
    /// The bytes, in the kind's own syntax.
    public var payload: [UInt8]

    /// Metadata of `kind` at `time`.
    public init(kind: Kind, time: MediaTime, duration: MediaTime? = nil, scheme: String? = nil, value: String? = nil,
                payload: [UInt8]) {
        self.kind = kind
        self.time = time
        self.duration = duration
        self.scheme = scheme
        self.value = value
        self.payload = payload
    }
}

/// A named point of the stream: an ad break's start (with its planned duration) or its return,
/// a chapter mark, a cue. It travels as a ``StreamEvent/marker(_:)`` event, in order with the
/// elements; a packager turns an ad break into its playlist's terms (`EXT-X-DATERANGE` with
/// `SCTE35-OUT`/`-IN`, RFC 8216bis 4.4.5.1; `EXT-X-CUE-OUT`/`-IN`), a sink that has none ignores it.
public struct StreamMarker: Sendable, Hashable {
    /// What the marker marks: an ``OpenIdentifier`` whose static members are ours.
    public struct Kind: OpenIdentifier {
        /// The kind's name (`adBreakStart`, `adBreakEnd`, `chapter`, `cue`).
        public let name: String

        /// The kind named `name`.
        public init(_ name: String) { self.name = name }

        /// An ad break begins here (a SCTE-35 splice out); ``StreamMarker/duration`` is its
        /// planned length.
        public static let adBreakStart = Kind("adBreakStart")
        /// The programme returns here (a SCTE-35 splice in).
        public static let adBreakEnd = Kind("adBreakEnd")
        /// A chapter starts here.
        public static let chapter = Kind("chapter")
        /// A cue with no meaning of its own to KeyFrameKit.
        public static let cue = Kind("cue")
    }

    /// What it marks.
    public var kind: Kind
    /// Where, on the presentation timeline (after priming).
    public var time: MediaTime
    /// How long what it starts lasts, when known (an ad break's planned duration).
    public var duration: MediaTime?
    /// An identifier that pairs a start with its end (a SCTE-35 `splice_event_id`, a date
    /// range's `ID`).
    public var id: String?
    /// A title, for people.
    public var title: String?
    /// What plays in its place, when something does: an ad break's asset (an HLS
    /// interstitial's `X-ASSET-URI`, rfc8216bis Appendix D).
    public var uri: String?

    /// A marker of `kind` at `time`.
    public init(kind: Kind, time: MediaTime, duration: MediaTime? = nil, id: String? = nil, title: String? = nil, uri: String? = nil) {
        self.kind = kind
        self.time = time
        self.duration = duration
        self.id = id
        self.title = title
        self.uri = uri
    }

    /// An ad break of `duration` from `start`: its start (``Kind/adBreakStart``, with the
    /// planned duration and `uri`) and its end (``Kind/adBreakEnd``), both named `id`.
    ///
    /// - Throws: ``MediaTimeError`` when the end does not fit a time.
    public static func adBreak(start: MediaTime, duration: MediaTime, id: String, uri: String? = nil) throws(MediaTimeError) -> [StreamMarker] {
        [StreamMarker(kind: .adBreakStart, time: start, duration: duration, id: id, uri: uri),
         StreamMarker(kind: .adBreakEnd, time: try start.adding(duration), id: id)]
    }
}

/// What is playing now: a radio stream's song, a podcast's segment. A live job tells it as
/// ``TimedMetadata`` of kind ``TimedMetadata/Kind/id3`` (an ID3v2.4 tag of `TIT2`, `TPE1`,
/// `TALB` and `WXXX`), which each sink carries in its own terms: an `emsg` in CMAF, an ID3 tag
/// in packed audio, a metadata PES in a transport stream.
public struct NowPlaying: Sendable, Hashable {
    /// The title.
    public var title: String?
    /// The artist.
    public var artist: String?
    /// The album.
    public var album: String?
    /// A link: the song's or the show's page.
    public var url: String?

    /// What is playing.
    public init(title: String? = nil, artist: String? = nil, album: String? = nil, url: String? = nil) {
        self.title = title
        self.artist = artist
        self.album = album
        self.url = url
    }

    /// `Artist - Title` (Icecast's `StreamTitle` convention), or whichever of them is given.
    public var streamTitle: String {
        [artist, title].compactMap { $0?.isEmpty == false ? $0 : nil }.joined(separator: " - ")
    }
}
