internal import MediaCore

/// An HLS playlist as `keyframe validate` reads it: every tag of a master or media playlist
/// (RFC 8216, and the low-latency tags of draft-pantos-hls-rfc8216bis, "RFC 8216bis" below),
/// each with the line it is on, and the playlist's syntax problems recorded rather than
/// refused.
///
/// ``/MediaFormats/HLSMediaPlaylist/init(text:)`` is the strict reader of what the decoder needs; this one is
/// the validator's: it never throws and never traps, reads what it can of a broken line and
/// says what is wrong with it in ``problems``, so that a rule can name the line of anything it
/// finds. It reads in time linear in the text's length (a long line is scanned once) and keeps
/// no more than a constant times the text's size.
///
/// What it leaves to the rules: the meaning across tags (a segment longer than the target
/// duration, a version too low for a tag, a media tag in a master playlist, parts within three
/// target durations of the end…). What it records: what RFC 8216 4 says a playlist's text must
/// be, line by line (see ``Problem/Kind``). Variables of `EXT-X-DEFINE` (RFC 8216bis 4.4.2.3)
/// are not substituted.
public struct HLSPlaylistDocument: Sendable, Hashable {
    // MARK: - What is wrong with the text

    /// A syntax problem of one line: what RFC 8216 4 says a playlist's text must be, and it is
    /// not.
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        /// What kind of problem it is, for rules that treat kinds differently.
        public enum Kind: String, Sendable, Hashable, CaseIterable {
            /// The text starts with a byte order mark (RFC 8216 4.1: it MUST NOT).
            case byteOrderMark
            /// The first line is not `#EXTM3U` (RFC 8216 4.3.1.1).
            case missingEXTM3U
            /// A control character other than CR and LF (RFC 8216 4.1), such as a tab, NUL or a
            /// lone CR.
            case controlCharacter
            /// Spaces or tabs at the start or end of a line, or around an attribute (RFC 8216
            /// 4.1 and 4.2: no whitespace but where a tag allows it).
            case whitespace
            /// A tag that takes a value has none (`#EXTINF` alone, `#EXT-X-TARGETDURATION:`).
            case missingValue
            /// A tag that takes no value has one (`#EXT-X-ENDLIST:YES`).
            case unexpectedValue
            /// An attribute list (RFC 8216 4.2) that does not parse: an attribute without `=`, a
            /// quoted-string without its closing quote, a name not of `A-Z`, `0-9` and `-`, a
            /// trailing comma.
            case malformedAttributeList
            /// An attribute name twice in one attribute list (RFC 8216 4.2: it MUST NOT).
            case duplicateAttribute
            /// An unquoted value where the tag's definition asks for a quoted-string (`URI`,
            /// `CODECS`, `GROUP-ID`…).
            case quotedStringExpected
            /// A value not of the type its tag or attribute defines (RFC 8216 4.2): a
            /// decimal-integer, decimal-floating-point, enumerated-string of the defined values,
            /// hexadecimal-sequence, decimal-resolution or date-time that is not one, or a
            /// number beyond what this reader holds (2⁶³ − 1).
            case invalidValue
            /// A REQUIRED attribute is absent (`EXT-X-STREAM-INF` without `BANDWIDTH`,
            /// `EXT-X-MAP` without `URI`…).
            case missingAttribute
            /// An `EXTINF` duration that is not a non-negative finite decimal number (RFC 8216
            /// 4.3.2.1), or an `EXTINF` without the comma after its duration.
            case invalidDuration
            /// A byte range (RFC 8216 4.3.2.2) that does not parse, lies beyond 2⁶³ − 1, or has
            /// no offset where no previous sub-range of the same resource precedes it.
            case invalidByteRange
            /// A URI line with no `EXTINF` (media playlist) or `EXT-X-STREAM-INF` (master
            /// playlist) before it.
            case uriWithoutTag
            /// An `EXTINF` or `EXT-X-STREAM-INF` with no URI line after it.
            case tagWithoutURI
            /// A tag that may appear once in a playlist (or once per segment) appears again
            /// (RFC 8216 4.3.1.2, 4.3.3, 4.3.5); the first is the one read.
            case duplicateTag
        }

        /// The line, from 1.
        public var line: Int
        /// The tag's name without its `#` (`EXTINF`, `EXT-X-MAP`); empty for a URI line or for
        /// the text as a whole.
        public var tag: String
        /// What is wrong, citing the section of RFC 8216 (or RFC 8216bis) it breaks.
        public var message: String
        /// What kind of problem it is.
        public var kind: Kind

        /// `line 7: EXT-X-MAP: …`.
        public var description: String { "line \(line)" + (tag.isEmpty ? "" : " (\(tag))") + ": " + message }
    }

    // MARK: - Pieces of tags

    /// One tag's line as written (RFC 8216 4.1: a line that starts with `#EXT`).
    public struct Tag: Sendable, Hashable {
        /// The name without its `#`: `EXTINF`, `EXT-X-STREAM-INF`.
        public var name: String
        /// What follows the first `:`; `nil` when there is no `:`.
        public var value: String?
        /// The line, from 1.
        public var line: Int
        /// The value's attribute list (RFC 8216 4.2), for the tags RFC 8216 and RFC 8216bis
        /// define with one (`EXT-X-MAP`, `EXT-X-STREAM-INF`, `EXT-X-PART`…); `nil` for others.
        public var attributes: AttributeList?
    }

    /// One `AttributeName=AttributeValue` of an attribute list (RFC 8216 4.2).
    public struct Attribute: Sendable, Hashable {
        /// The name: `A-Z`, `0-9` and `-` (others are kept, and are a problem).
        public var name: String
        /// The value; for a quoted-string, without its quotes.
        public var value: String
        /// Whether the value was a quoted-string (`"…"`).
        public var isQuoted: Bool

        /// The value as a decimal-integer (RFC 8216 4.2: 1 to 20 digits), when it is one that
        /// fits an `Int`.
        public var decimalInteger: Int? {
            guard !isQuoted, case .value(let number) = HLSPlaylistDocument.decimalInteger(value.utf8) else { return nil }
            return number
        }

        /// The value as a decimal-floating-point (RFC 8216 4.2: digits and at most one `.`), when
        /// it is one; always finite and non-negative.
        public var decimalFloatingPoint: Double? { isQuoted ? nil : HLSPlaylistDocument.decimalFloatingPoint(value.utf8, signed: false) }

        /// The value as a signed-decimal-floating-point (RFC 8216 4.2: a decimal-floating-point
        /// that may start with `-`), when it is one; always finite.
        public var signedDecimalFloatingPoint: Double? { isQuoted ? nil : HLSPlaylistDocument.decimalFloatingPoint(value.utf8, signed: true) }

        /// The value as a decimal-resolution (RFC 8216 4.2: `<width>x<height>`), when it is one.
        public var decimalResolution: Resolution? { isQuoted ? nil : HLSPlaylistDocument.resolution(value) }

        /// `true` for the enumerated-string `YES`, `false` for `NO`, `nil` for anything else.
        public var yesOrNo: Bool? {
            guard !isQuoted else { return nil }
            return value == "YES" ? true : value == "NO" ? false : nil
        }
    }

    /// An attribute list (RFC 8216 4.2): comma-separated `AttributeName=AttributeValue`s, in
    /// order as written (a repeated name is kept twice, and is a problem).
    public struct AttributeList: Sendable, Hashable {
        /// The attributes in order.
        public var attributes: [Attribute]

        /// The first attribute named `name`.
        public subscript(name: String) -> Attribute? { attributes.first { $0.name == name } }

        /// The attribute list `text` as tolerantly as the playlist's own are read; what does not
        /// parse is left out (a playlist's ``HLSPlaylistDocument/problems`` say what).
        public init(parsing text: String) {
            var text = text
            self = text.withUTF8 { bytes in HLSPlaylistDocument.parseAttributeList(bytes, 0..<bytes.count) { _, _ in } }
        }

        init(attributes: [Attribute]) { self.attributes = attributes }
    }

    /// A decimal-resolution (RFC 8216 4.2): `RESOLUTION=1920x1080`.
    public struct Resolution: Sendable, Hashable {
        /// Pixels across.
        public var width: Int
        /// Pixels down.
        public var height: Int
    }

    /// A resolved sub-range of a resource (RFC 8216 4.3.2.2, `<n>[@<o>]`): always
    /// `0 <= offset`, `0 <= length` and `offset + length <= Int64.max`.
    public struct ByteRange: Sendable, Hashable {
        /// The sub-range's length in bytes (`n`).
        public var length: Int64
        /// Its first byte's offset from the start of the resource: `o` when written, otherwise
        /// the byte after the previous sub-range of the same resource (RFC 8216 4.3.2.2), or 0
        /// for an `EXT-X-MAP` (which RFC 8216 4.3.2.5 does not chain).
        public var offset: Int64
        /// Whether the offset was written (`n@o`) rather than resolved.
        public var offsetIsExplicit: Bool

        /// The offset of the byte after the sub-range.
        public var end: Int64 { offset + length }
    }

    /// `EXT-X-MAP` (RFC 8216 4.3.2.5): the Media Initialization Section of the segments after
    /// it, up to the next `EXT-X-MAP`.
    public struct Map: Sendable, Hashable {
        /// `URI`: the init segment.
        public var uri: String
        /// `BYTERANGE`: its sub-range of that resource; `nil` for the whole resource.
        public var byteRange: ByteRange?
        /// The tag's line.
        public var line: Int
    }

    /// `EXT-X-KEY` (RFC 8216 4.3.2.4): how the segments after it, up to the next `EXT-X-KEY`,
    /// are encrypted.
    public struct Key: Sendable, Hashable {
        /// `METHOD`: `NONE`, `AES-128`, `SAMPLE-AES` (or RFC 8216bis `SAMPLE-AES-CTR`).
        public var method: String
        /// `URI`: the key.
        public var uri: String?
        /// `IV`: the initialization vector as written (a hexadecimal-sequence).
        public var iv: String?
        /// `KEYFORMAT`.
        public var keyFormat: String?
        /// The tag's line.
        public var line: Int
    }

    /// `EXT-X-PART` (RFC 8216bis 4.4.4.9): a partial segment of low-latency HLS.
    public struct Part: Sendable, Hashable {
        /// `URI`.
        public var uri: String
        /// `DURATION`, seconds; 0 when absent or not a decimal-floating-point (a problem says
        /// which). Always finite and non-negative.
        public var duration: Double
        /// `INDEPENDENT=YES`: it starts with an independent frame.
        public var independent: Bool
        /// `BYTERANGE`, resolved: without an offset it follows the previous part's sub-range of
        /// the same resource.
        public var byteRange: ByteRange?
        /// `GAP=YES`: the part is not available.
        public var gap: Bool
        /// The tag's line.
        public var line: Int
    }

    /// A media segment (RFC 8216 3, 4.3.2): its URI line and the tags before it.
    public struct Segment: Sendable, Hashable {
        /// The URI line.
        public var uri: String
        /// The URI's line.
        public var line: Int
        /// The `EXTINF`'s line (RFC 8216 4.3.2.1).
        public var extinfLine: Int
        /// The `EXTINF` duration in seconds; 0 when it is not a non-negative decimal number (a
        /// problem names the line). Always finite and non-negative.
        public var duration: Double
        /// The `EXTINF` title: what follows its comma (empty when none).
        public var title: String
        /// `EXT-X-BYTERANGE` (RFC 8216 4.3.2.2), resolved: without an offset, the byte after
        /// the previous segment's sub-range of the same URI.
        public var byteRange: ByteRange?
        /// `EXT-X-BYTERANGE`'s line, when there is one (even one that did not parse).
        public var byteRangeLine: Int?
        /// `EXT-X-DISCONTINUITY` (RFC 8216 4.3.2.3) before it.
        public var discontinuity: Bool
        /// `EXT-X-PROGRAM-DATE-TIME` (RFC 8216 4.3.2.6) as written.
        public var programDateTime: String?
        /// That date-time in seconds since 1970 (UTC), when it is an RFC 3339 date-time.
        public var programDateTimeSeconds: Double?
        /// The `EXT-X-MAP` in effect: the last one before the segment (RFC 8216 4.3.2.5); `nil`
        /// when none, or when the last one had no `URI`.
        public var map: Map?
        /// The `EXT-X-KEY` in effect (RFC 8216 4.3.2.4): the last one before the segment.
        public var key: Key?
        /// `EXT-X-BITRATE` in effect (RFC 8216bis 4.4.4.8), kilobits per second.
        public var bitrate: Int?
        /// `EXT-X-GAP` (RFC 8216bis 4.4.4.7): the segment is not available.
        public var gap: Bool
        /// Its partial segments (RFC 8216bis 4.4.4.9): the `EXT-X-PART` tags after the previous
        /// segment's URI and before this one's.
        public var parts: [Part]
    }

    /// `EXT-X-SERVER-CONTROL` (RFC 8216bis 4.4.3.8): what the server can do for a client.
    public struct ServerControl: Sendable, Hashable {
        /// `CAN-BLOCK-RELOAD=YES`: it answers blocking playlist reloads.
        public var canBlockReload: Bool
        /// `CAN-SKIP-UNTIL`, seconds: it serves delta playlists skipping segments older than this.
        public var canSkipUntil: Double?
        /// `CAN-SKIP-DATERANGES=YES`.
        public var canSkipDateRanges: Bool
        /// `HOLD-BACK`, seconds: the least distance from the end a client starts at.
        public var holdBack: Double?
        /// `PART-HOLD-BACK`, seconds: the same in low-latency mode.
        public var partHoldBack: Double?
        /// The tag's line.
        public var line: Int
    }

    /// `EXT-X-PRELOAD-HINT` (RFC 8216bis 4.4.5.3): a resource the client may request before
    /// it is listed.
    public struct PreloadHint: Sendable, Hashable {
        /// `TYPE`: `PART` or `MAP`.
        public var type: String
        /// `URI`.
        public var uri: String
        /// `BYTERANGE-START`, when given (absent means 0).
        public var byteRangeStart: Int64?
        /// `BYTERANGE-LENGTH`, when given (absent means to the end of the resource).
        public var byteRangeLength: Int64?
        /// The tag's line.
        public var line: Int
    }

    /// `EXT-X-RENDITION-REPORT` (RFC 8216bis 4.4.5.4): where another rendition's playlist ends.
    public struct RenditionReport: Sendable, Hashable {
        /// `URI`: the other rendition's media playlist.
        public var uri: String
        /// `LAST-MSN`: its last media sequence number.
        public var lastMediaSequence: Int?
        /// `LAST-PART`: its last part's index.
        public var lastPart: Int?
        /// The tag's line.
        public var line: Int
    }

    /// `EXT-X-DATERANGE` (RFC 8216 4.3.2.7): a range of time with attributes.
    public struct DateRange: Sendable, Hashable {
        /// `ID`.
        public var id: String
        /// `START-DATE` as written.
        public var startDate: String?
        /// All its attributes, `X-` client attributes among them.
        public var attributes: AttributeList
        /// The tag's line.
        public var line: Int
    }

    /// `EXT-X-START` (RFC 8216 4.3.5.2): where a client starts playing.
    public struct Start: Sendable, Hashable {
        /// `TIME-OFFSET`, seconds: from the start, or from the end when negative.
        public var timeOffset: Double
        /// `PRECISE=YES`.
        public var precise: Bool
        /// The tag's line.
        public var line: Int
    }

    /// `EXT-X-SKIP` (RFC 8216bis 4.4.5.2): the segments a delta playlist leaves out.
    public struct Skip: Sendable, Hashable {
        /// `SKIPPED-SEGMENTS`.
        public var skippedSegments: Int
        /// `RECENTLY-REMOVED-DATERANGES`, tab-separated IDs as written.
        public var recentlyRemovedDateRanges: String?
        /// The tag's line.
        public var line: Int
    }

    /// A variant stream of a master playlist: `EXT-X-STREAM-INF` and its URI line (RFC 8216
    /// 4.3.4.2), or an `EXT-X-I-FRAME-STREAM-INF` and its `URI` (4.3.4.3).
    public struct Variant: Sendable, Hashable {
        /// The variant's media playlist.
        public var uri: String
        /// The URI's line (for an I-frame variant, the tag's).
        public var line: Int
        /// The tag's line.
        public var tagLine: Int
        /// `BANDWIDTH`: peak bits per second (REQUIRED; `nil` when absent or not a number).
        public var bandwidth: Int?
        /// `AVERAGE-BANDWIDTH`: average bits per second.
        public var averageBandwidth: Int?
        /// `CODECS`: RFC 6381 codec strings, comma-separated.
        public var codecs: String?
        /// `RESOLUTION`.
        public var resolution: Resolution?
        /// `FRAME-RATE`, frames per second.
        public var frameRate: Double?
        /// `HDCP-LEVEL`.
        public var hdcpLevel: String?
        /// `VIDEO-RANGE`.
        public var videoRange: String?
        /// `AUDIO`: the `GROUP-ID` of its audio renditions.
        public var audioGroup: String?
        /// `VIDEO`: the `GROUP-ID` of its video renditions.
        public var videoGroup: String?
        /// `SUBTITLES`: the `GROUP-ID` of its subtitle renditions.
        public var subtitlesGroup: String?
        /// `CLOSED-CAPTIONS`: a `GROUP-ID`, or `NONE` (unquoted).
        public var closedCaptions: String?
        /// All the tag's attributes as written.
        public var attributes: AttributeList
    }

    /// `EXT-X-MEDIA` (RFC 8216 4.3.4.1): an alternative rendition of a master playlist.
    public struct MediaRendition: Sendable, Hashable {
        /// `TYPE`: `AUDIO`, `VIDEO`, `SUBTITLES` or `CLOSED-CAPTIONS`.
        public var type: String
        /// `GROUP-ID`.
        public var groupID: String
        /// `NAME`.
        public var name: String
        /// `URI`: its media playlist (absent for closed captions, and for audio in the
        /// variant's own stream).
        public var uri: String?
        /// `LANGUAGE`.
        public var language: String?
        /// `DEFAULT=YES`.
        public var isDefault: Bool
        /// `AUTOSELECT=YES`.
        public var autoselect: Bool
        /// `CHANNELS`.
        public var channels: String?
        /// All the tag's attributes as written.
        public var attributes: AttributeList
        /// The tag's line.
        public var line: Int
    }

    // MARK: - The playlist

    /// The first line is `#EXTM3U` (RFC 8216 4.3.1.1), after a byte order mark if there is one
    /// (the mark is a problem of its own).
    public private(set) var startsWithEXTM3U = false
    /// A master playlist: it has an `EXT-X-STREAM-INF`, `EXT-X-MEDIA` or
    /// `EXT-X-I-FRAME-STREAM-INF` (RFC 8216 4.3.4).
    public private(set) var isMaster = false
    /// The syntax problems, by line: at most ``maximumProblems``, then
    /// ``omittedProblemCount`` says how many more there were.
    public private(set) var problems: [Problem] = []
    /// Problems beyond ``maximumProblems``, not listed.
    public private(set) var omittedProblemCount = 0
    /// The most problems listed: beyond it a text is not a playlist anyone meant.
    public static let maximumProblems = 10_000
    /// Every tag, in order.
    public private(set) var tags: [Tag] = []

    /// `EXT-X-VERSION` (RFC 8216 4.3.1.2): the compatibility version.
    public private(set) var version: Int?
    /// `EXT-X-VERSION`'s line.
    public private(set) var versionLine: Int?
    /// `EXT-X-TARGETDURATION` (RFC 8216 4.3.3.1), seconds.
    public private(set) var targetDuration: Int?
    /// `EXT-X-TARGETDURATION`'s line.
    public private(set) var targetDurationLine: Int?
    /// `EXT-X-MEDIA-SEQUENCE` (RFC 8216 4.3.3.2): the first segment's sequence number.
    public private(set) var mediaSequence: Int?
    /// `EXT-X-MEDIA-SEQUENCE`'s line.
    public private(set) var mediaSequenceLine: Int?
    /// `EXT-X-DISCONTINUITY-SEQUENCE` (RFC 8216 4.3.3.3).
    public private(set) var discontinuitySequence: Int?
    /// `EXT-X-DISCONTINUITY-SEQUENCE`'s line.
    public private(set) var discontinuitySequenceLine: Int?
    /// `EXT-X-PLAYLIST-TYPE` (RFC 8216 4.3.3.5): `VOD` or `EVENT` (anything else is a problem,
    /// and kept).
    public private(set) var playlistType: String?
    /// `EXT-X-PLAYLIST-TYPE`'s line.
    public private(set) var playlistTypeLine: Int?
    /// `EXT-X-ENDLIST` (RFC 8216 4.3.3.4): no segment will be added.
    public private(set) var endList = false
    /// `EXT-X-ENDLIST`'s line.
    public private(set) var endListLine: Int?
    /// `EXT-X-I-FRAMES-ONLY` (RFC 8216 4.3.3.6).
    public private(set) var iFramesOnly = false
    /// `EXT-X-INDEPENDENT-SEGMENTS` (RFC 8216 4.3.5.1).
    public private(set) var independentSegments = false
    /// `EXT-X-START` (RFC 8216 4.3.5.2).
    public private(set) var start: Start?
    /// `EXT-X-PART-INF:PART-TARGET` (RFC 8216bis 4.4.3.7), seconds.
    public private(set) var partTarget: Double?
    /// `EXT-X-PART-INF`'s line.
    public private(set) var partTargetLine: Int?
    /// `EXT-X-SERVER-CONTROL` (RFC 8216bis 4.4.3.8).
    public private(set) var serverControl: ServerControl?
    /// `EXT-X-SKIP` (RFC 8216bis 4.4.5.2), in a delta playlist.
    public private(set) var skip: Skip?

    /// The media segments, in order.
    public private(set) var segments: [Segment] = []
    /// The `EXT-X-PART` tags after the last segment's URI: the segment in progress of a live
    /// low-latency playlist (RFC 8216bis 4.4.4.9).
    public private(set) var trailingParts: [Part] = []
    /// Every `EXT-X-MAP` with a `URI`, in order (each segment has the one in effect).
    public private(set) var maps: [Map] = []
    /// `EXT-X-PRELOAD-HINT`s (RFC 8216bis 4.4.5.3), in order.
    public private(set) var preloadHints: [PreloadHint] = []
    /// `EXT-X-RENDITION-REPORT`s (RFC 8216bis 4.4.5.4), in order.
    public private(set) var renditionReports: [RenditionReport] = []
    /// `EXT-X-DATERANGE`s (RFC 8216 4.3.2.7) with an `ID`, in order.
    public private(set) var dateRanges: [DateRange] = []

    /// Master playlist: the variant streams (`EXT-X-STREAM-INF` and URI, RFC 8216 4.3.4.2).
    public private(set) var variants: [Variant] = []
    /// Master playlist: the I-frame variants (`EXT-X-I-FRAME-STREAM-INF`, RFC 8216 4.3.4.3)
    /// with a `URI`.
    public private(set) var iFrameVariants: [Variant] = []
    /// Master playlist: the renditions (`EXT-X-MEDIA`, RFC 8216 4.3.4.1) with their `TYPE`,
    /// `GROUP-ID` and `NAME`.
    public private(set) var media: [MediaRendition] = []

    /// The tags named `name` (without `#`), in order.
    public func tags(named name: String) -> [Tag] { tags.filter { $0.name == name } }

    /// The sum of the segments' durations, seconds.
    public var totalDuration: Double { segments.reduce(0) { $0 + $1.duration } }
}

// MARK: - Reading

extension HLSPlaylistDocument {
    /// Reads `text` as an HLS playlist, master or media. Never throws and never traps: what is
    /// wrong is in ``problems``, and everything that could be read is kept. Lines end with LF or
    /// CRLF (RFC 8216 4.1).
    public init(text: String) {
        var text = text
        self = text.withUTF8 { bytes in
            var reader = Reader()
            reader.read(bytes)
            return reader.document
        }
    }

    /// The RFC section defining tag `name`, for messages: `RFC 8216 4.3.2.5`.
    static func section(of name: String) -> String {
        switch name {
        case "EXTM3U": "RFC 8216 4.3.1.1"
        case "EXT-X-VERSION": "RFC 8216 4.3.1.2"
        case "EXTINF": "RFC 8216 4.3.2.1"
        case "EXT-X-BYTERANGE": "RFC 8216 4.3.2.2"
        case "EXT-X-DISCONTINUITY": "RFC 8216 4.3.2.3"
        case "EXT-X-KEY": "RFC 8216 4.3.2.4"
        case "EXT-X-MAP": "RFC 8216 4.3.2.5"
        case "EXT-X-PROGRAM-DATE-TIME": "RFC 8216 4.3.2.6"
        case "EXT-X-DATERANGE": "RFC 8216 4.3.2.7"
        case "EXT-X-TARGETDURATION": "RFC 8216 4.3.3.1"
        case "EXT-X-MEDIA-SEQUENCE": "RFC 8216 4.3.3.2"
        case "EXT-X-DISCONTINUITY-SEQUENCE": "RFC 8216 4.3.3.3"
        case "EXT-X-ENDLIST": "RFC 8216 4.3.3.4"
        case "EXT-X-PLAYLIST-TYPE": "RFC 8216 4.3.3.5"
        case "EXT-X-I-FRAMES-ONLY": "RFC 8216 4.3.3.6"
        case "EXT-X-MEDIA": "RFC 8216 4.3.4.1"
        case "EXT-X-STREAM-INF": "RFC 8216 4.3.4.2"
        case "EXT-X-I-FRAME-STREAM-INF": "RFC 8216 4.3.4.3"
        case "EXT-X-SESSION-DATA": "RFC 8216 4.3.4.4"
        case "EXT-X-SESSION-KEY": "RFC 8216 4.3.4.5"
        case "EXT-X-INDEPENDENT-SEGMENTS": "RFC 8216 4.3.5.1"
        case "EXT-X-START": "RFC 8216 4.3.5.2"
        case "EXT-X-DEFINE": "RFC 8216bis 4.4.2.3"
        case "EXT-X-PART-INF": "RFC 8216bis 4.4.3.7"
        case "EXT-X-SERVER-CONTROL": "RFC 8216bis 4.4.3.8"
        case "EXT-X-GAP": "RFC 8216bis 4.4.4.7"
        case "EXT-X-BITRATE": "RFC 8216bis 4.4.4.8"
        case "EXT-X-PART": "RFC 8216bis 4.4.4.9"
        case "EXT-X-SKIP": "RFC 8216bis 4.4.5.2"
        case "EXT-X-PRELOAD-HINT": "RFC 8216bis 4.4.5.3"
        case "EXT-X-RENDITION-REPORT": "RFC 8216bis 4.4.5.4"
        case "EXT-X-CONTENT-STEERING": "RFC 8216bis 4.4.6.6"
        default: "RFC 8216 4.1"
        }
    }

    /// The type RFC 8216 4.2 gives an attribute's value.
    enum ValueType {
        case quotedString
        /// An enumerated-string, of `allowed` when it is not empty.
        case enumerated(Set<String>)
        case decimalInteger
        case decimalFloatingPoint
        case signedDecimalFloatingPoint
        case hexadecimalSequence
        case decimalResolution
        /// `CLOSED-CAPTIONS`: a quoted-string or the enumerated-string `NONE`.
        case quotedStringOrNone
    }

    /// An attribute-list tag's attributes with their types, and the ones it REQUIRES.
    struct AttributeSchema {
        var types: [String: ValueType]
        var required: [String]
    }

    static let yesNo = ValueType.enumerated(["YES", "NO"])

    /// The attribute-list tags of RFC 8216 and RFC 8216bis: the types of the attributes they
    /// define (others are allowed and unchecked) and the ones REQUIRED.
    static let schemas: [String: AttributeSchema] = {
        let key: [String: ValueType] = ["METHOD": .enumerated(["NONE", "AES-128", "SAMPLE-AES", "SAMPLE-AES-CTR"]), "URI": .quotedString,
                                        "IV": .hexadecimalSequence, "KEYFORMAT": .quotedString, "KEYFORMATVERSIONS": .quotedString]
        var streamInf: [String: ValueType] = [
            "BANDWIDTH": .decimalInteger, "AVERAGE-BANDWIDTH": .decimalInteger, "SCORE": .decimalFloatingPoint, "CODECS": .quotedString,
            "SUPPLEMENTAL-CODECS": .quotedString, "RESOLUTION": .decimalResolution, "HDCP-LEVEL": .enumerated([]),
            "ALLOWED-CPC": .quotedString, "VIDEO-RANGE": .enumerated([]), "REQ-VIDEO-LAYOUT": .quotedString, "STABLE-VARIANT-ID": .quotedString,
            "VIDEO": .quotedString, "PATHWAY-ID": .quotedString, "PROGRAM-ID": .decimalInteger,
        ]
        var iFrameStreamInf = streamInf
        iFrameStreamInf["URI"] = .quotedString
        streamInf["FRAME-RATE"] = .decimalFloatingPoint
        streamInf["AUDIO"] = .quotedString
        streamInf["SUBTITLES"] = .quotedString
        streamInf["CLOSED-CAPTIONS"] = .quotedStringOrNone
        return [
            "EXT-X-KEY": AttributeSchema(types: key, required: ["METHOD"]),
            "EXT-X-SESSION-KEY": AttributeSchema(types: key, required: ["METHOD"]),
            "EXT-X-MAP": AttributeSchema(types: ["URI": .quotedString, "BYTERANGE": .quotedString], required: ["URI"]),
            "EXT-X-DATERANGE": AttributeSchema(types: ["ID": .quotedString, "CLASS": .quotedString, "START-DATE": .quotedString, "CUE": .quotedString,
                                                      "END-DATE": .quotedString, "DURATION": .decimalFloatingPoint, "PLANNED-DURATION": .decimalFloatingPoint,
                                                      "END-ON-NEXT": .enumerated(["YES"]), "SCTE35-CMD": .hexadecimalSequence,
                                                      "SCTE35-OUT": .hexadecimalSequence, "SCTE35-IN": .hexadecimalSequence],
                                               required: ["ID"]),
            "EXT-X-MEDIA": AttributeSchema(types: ["TYPE": .enumerated(["AUDIO", "VIDEO", "SUBTITLES", "CLOSED-CAPTIONS"]), "URI": .quotedString,
                                                  "GROUP-ID": .quotedString, "LANGUAGE": .quotedString, "ASSOC-LANGUAGE": .quotedString,
                                                  "NAME": .quotedString, "STABLE-RENDITION-ID": .quotedString, "DEFAULT": yesNo, "AUTOSELECT": yesNo,
                                                  "FORCED": yesNo, "INSTREAM-ID": .quotedString, "BIT-DEPTH": .decimalInteger,
                                                  "SAMPLE-RATE": .decimalInteger, "CHARACTERISTICS": .quotedString, "CHANNELS": .quotedString],
                                           required: ["TYPE", "GROUP-ID", "NAME"]),
            "EXT-X-STREAM-INF": AttributeSchema(types: streamInf, required: ["BANDWIDTH"]),
            "EXT-X-I-FRAME-STREAM-INF": AttributeSchema(types: iFrameStreamInf, required: ["BANDWIDTH", "URI"]),
            "EXT-X-SESSION-DATA": AttributeSchema(types: ["DATA-ID": .quotedString, "VALUE": .quotedString, "URI": .quotedString,
                                                         "FORMAT": .enumerated(["JSON", "RAW"]), "LANGUAGE": .quotedString],
                                                  required: ["DATA-ID"]),
            "EXT-X-START": AttributeSchema(types: ["TIME-OFFSET": .signedDecimalFloatingPoint, "PRECISE": yesNo], required: ["TIME-OFFSET"]),
            "EXT-X-DEFINE": AttributeSchema(types: ["NAME": .quotedString, "VALUE": .quotedString, "IMPORT": .quotedString, "QUERYPARAM": .quotedString],
                                            required: []),
            "EXT-X-PART-INF": AttributeSchema(types: ["PART-TARGET": .decimalFloatingPoint], required: ["PART-TARGET"]),
            "EXT-X-SERVER-CONTROL": AttributeSchema(types: ["CAN-SKIP-UNTIL": .decimalFloatingPoint, "CAN-SKIP-DATERANGES": yesNo,
                                                           "HOLD-BACK": .decimalFloatingPoint, "PART-HOLD-BACK": .decimalFloatingPoint,
                                                           "CAN-BLOCK-RELOAD": yesNo],
                                                    required: []),
            "EXT-X-PART": AttributeSchema(types: ["URI": .quotedString, "DURATION": .decimalFloatingPoint, "INDEPENDENT": yesNo,
                                                 "BYTERANGE": .quotedString, "GAP": yesNo],
                                          required: ["URI", "DURATION"]),
            "EXT-X-SKIP": AttributeSchema(types: ["SKIPPED-SEGMENTS": .decimalInteger, "RECENTLY-REMOVED-DATERANGES": .quotedString],
                                          required: ["SKIPPED-SEGMENTS"]),
            "EXT-X-PRELOAD-HINT": AttributeSchema(types: ["TYPE": .enumerated(["PART", "MAP"]), "URI": .quotedString,
                                                         "BYTERANGE-START": .decimalInteger, "BYTERANGE-LENGTH": .decimalInteger],
                                                  required: ["TYPE", "URI"]),
            "EXT-X-RENDITION-REPORT": AttributeSchema(types: ["URI": .quotedString, "LAST-MSN": .decimalInteger, "LAST-PART": .decimalInteger],
                                                      required: ["URI"]),
            "EXT-X-CONTENT-STEERING": AttributeSchema(types: ["SERVER-URI": .quotedString, "PATHWAY-ID": .quotedString], required: ["SERVER-URI"]),
        ]
    }()

    /// Tags that take no value.
    static let valuelessTags: Set<String> = ["EXTM3U", "EXT-X-DISCONTINUITY", "EXT-X-ENDLIST", "EXT-X-I-FRAMES-ONLY", "EXT-X-INDEPENDENT-SEGMENTS", "EXT-X-GAP"]

    /// Tags that may appear once in a playlist (RFC 8216 4.3.1.2, 4.3.3, 4.3.5; RFC 8216bis
    /// 4.4.3, 4.4.5.2, 4.4.6.6).
    static let onceTags: Set<String> = ["EXTM3U", "EXT-X-VERSION", "EXT-X-TARGETDURATION", "EXT-X-MEDIA-SEQUENCE", "EXT-X-DISCONTINUITY-SEQUENCE",
                                        "EXT-X-ENDLIST", "EXT-X-PLAYLIST-TYPE", "EXT-X-I-FRAMES-ONLY", "EXT-X-PART-INF", "EXT-X-SERVER-CONTROL",
                                        "EXT-X-INDEPENDENT-SEGMENTS", "EXT-X-START", "EXT-X-SKIP", "EXT-X-CONTENT-STEERING"]

    /// The names of the tags of RFC 8216 and RFC 8216bis, so that every tag of a playlist
    /// shares one string of its name.
    static let knownTagNames: [String: String] = {
        var names = Set(schemas.keys).union(valuelessTags).union(onceTags)
        names.formUnion(["EXTINF", "EXT-X-BYTERANGE", "EXT-X-PROGRAM-DATE-TIME", "EXT-X-BITRATE"])
        return Dictionary(uniqueKeysWithValues: names.map { ($0, $0) })
    }()

    /// At most `limit` characters of `text`, for a message.
    static func excerpt(_ text: some StringProtocol, limit: Int = 40) -> String {
        var count = 0
        var end = text.startIndex
        while end < text.endIndex, count < limit {
            end = text.index(after: end)
            count += 1
        }
        return end == text.endIndex ? String(text) : String(text[..<end]) + "…"
    }

    // MARK: Values (RFC 8216 4.2)

    /// What a decimal-integer parse found.
    enum IntegerParse: Equatable {
        case value(Int)
        /// A decimal-integer (at most 20 digits) beyond `Int.max`.
        case outOfRange
        case invalid
    }

    /// A decimal-integer (RFC 8216 4.2): 1 to 20 digits.
    static func decimalInteger<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> IntegerParse {
        guard !bytes.isEmpty, bytes.count <= 20 else { return .invalid }
        var value = 0
        var overflow = false
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return .invalid }
            if !overflow {
                let (times, o1) = value.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times.addingReportingOverflow(Int(byte &- UInt8(ascii: "0")))
                if o1 || o2 { overflow = true } else { value = sum }
            }
        }
        return overflow ? .outOfRange : .value(value)
    }

    /// The longest decimal-floating-point read: longer is not a number anyone meant (and
    /// could take `Double(_:)` long to round).
    static let maximumNumberLength = 100

    /// A decimal-floating-point (RFC 8216 4.2: digits with at most one `.`), or with `signed`
    /// a signed-decimal-floating-point (a leading `-` allowed); `nil` for anything else (`1e3`,
    /// `inf`, `nan`, `+1`, an empty string, over ``maximumNumberLength`` characters). Always
    /// finite.
    static func decimalFloatingPoint<Bytes: Collection<UInt8>>(_ bytes: Bytes, signed: Bool) -> Double? {
        guard !bytes.isEmpty, bytes.count <= maximumNumberLength else { return nil }
        var digits = 0
        var points = 0
        var first = true
        for byte in bytes {
            defer { first = false }
            if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                digits += 1
            } else if byte == UInt8(ascii: ".") {
                points += 1
            } else if byte == UInt8(ascii: "-"), first, signed {
                continue
            } else {
                return nil
            }
        }
        guard digits > 0, points <= 1, let value = Double(String(decoding: bytes, as: UTF8.self)), value.isFinite else { return nil }
        return value
    }

    /// A hexadecimal-sequence (RFC 8216 4.2): `0x` or `0X`, then hexadecimal digits.
    static func isHexadecimalSequence(_ text: String) -> Bool {
        let bytes = text.utf8
        guard bytes.count > 2, bytes.first == UInt8(ascii: "0"), bytes.dropFirst().first == UInt8(ascii: "x") || bytes.dropFirst().first == UInt8(ascii: "X")
        else { return false }
        return bytes.dropFirst(2).allSatisfy { byte in
            (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F"))
                || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
        }
    }

    /// A decimal-resolution (RFC 8216 4.2): `<width>x<height>`, two decimal-integers.
    static func resolution(_ text: String) -> Resolution? {
        let bytes = text.utf8
        guard let x = bytes.firstIndex(of: UInt8(ascii: "x")),
              case .value(let width) = decimalInteger(bytes[..<x]), case .value(let height) = decimalInteger(bytes[bytes.index(after: x)...])
        else { return nil }
        return Resolution(width: width, height: height)
    }

    /// A byte range's text (RFC 8216 4.3.2.2, `<n>[@<o>]`) as its length and offset, or why it
    /// is not one.
    static func byteRange<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Result<(length: Int64, offset: Int64?), ByteRangeError> {
        let at = bytes.firstIndex(of: UInt8(ascii: "@"))
        let lengthBytes = at.map { bytes[..<$0] } ?? bytes[...]
        func number(_ part: Bytes.SubSequence) -> Result<Int64, ByteRangeError> {
            switch decimalInteger(part) {
            case .value(let value): .success(Int64(value))
            case .outOfRange: .failure(.outOfRange)
            case .invalid: .failure(.syntax)
            }
        }
        let length: Int64
        switch number(lengthBytes) {
        case .success(let value): length = value
        case .failure(let error): return .failure(error)
        }
        guard let at else { return .success((length, nil)) }
        switch number(bytes[bytes.index(after: at)...]) {
        case .success(let offset):
            guard !offset.addingReportingOverflow(length).overflow else { return .failure(.outOfRange) }
            return .success((length, offset))
        case .failure(let error): return .failure(error)
        }
    }

    /// Why a byte range's text is not one.
    enum ByteRangeError: Error {
        /// Not `<n>[@<o>]` of decimal-integers.
        case syntax
        /// Beyond 2⁶³ − 1.
        case outOfRange
    }

    /// An RFC 3339 date-time (`2025-11-25T05:31:02.500Z`, `…+01:00`), the profile of ISO 8601
    /// that RFC 8216 4.3.2.6 asks for in practice, as seconds since 1970 (UTC).
    package static func dateTimeSeconds(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 64 else { return nil }
        func digits(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<(start + count)] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = digits(0, 4), bytes[4] == UInt8(ascii: "-"), let month = digits(5, 2), bytes[7] == UInt8(ascii: "-"),
              let day = digits(8, 2), bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
              let hour = digits(11, 2), bytes[13] == UInt8(ascii: ":"), let minute = digits(14, 2), bytes[16] == UInt8(ascii: ":"),
              let second = digits(17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second <= 60
        else { return nil }
        var index = 19
        // The fraction to the nanosecond: its first nine digits over their power of ten.
        var fraction = 0.0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var numerator = 0
            var denominator = 1
            let first = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                if index - first < 9 {
                    numerator = numerator * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                    denominator *= 10
                }
                index += 1
            }
            guard index > first else { return nil }
            fraction = Double(numerator) / Double(denominator)
        }
        guard index < bytes.count else { return nil }
        var offsetSeconds = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard index + 1 == bytes.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard index + 6 == bytes.count, let hours = digits(index + 1, 2), bytes[index + 3] == UInt8(ascii: ":"),
                  let minutes = digits(index + 4, 2), hours < 24, minutes < 60
            else { return nil }
            offsetSeconds = (hours * 3600 + minutes * 60) * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
        default:
            return nil
        }
        let days = Int(CivilDate(year: Int64(year), month: Int64(month), day: Int64(day)).daysSince1970)
        return Double(days * 86400 + hour * 3600 + minute * 60 + second - offsetSeconds) + fraction
    }

    // MARK: Attribute lists (RFC 8216 4.2)

    /// The text of `bytes[range]`.
    static func string(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// The attribute list in `bytes[range]`, read in one pass; `report` hears each syntax
    /// problem (kind and message).
    static func parseAttributeList(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>,
                                   report: (Problem.Kind, @autoclosure () -> String) -> Void) -> AttributeList {
        let comma = UInt8(ascii: ","), equals = UInt8(ascii: "="), quote = UInt8(ascii: "\""), space = UInt8(ascii: " "), tab = UInt8(ascii: "\t")
        var attributes: [Attribute] = []
        var names = Set<String>()
        var index = range.lowerBound
        let end = range.upperBound
        guard index < end else {
            report(.malformedAttributeList, "an empty attribute list (RFC 8216 4.2)")
            return AttributeList(attributes: [])
        }
        var reportedWhitespace = false
        func text(_ range: Range<Int>) -> String { string(bytes, range) }
        while true {
            // AttributeName: up to `=` (or a `,` or the end, which leave it without a value).
            var nameStart = index
            while index < end, bytes[index] != equals, bytes[index] != comma { index += 1 }
            var nameEnd = index
            while nameStart < nameEnd, bytes[nameStart] == space || bytes[nameStart] == tab { nameStart += 1 }
            while nameEnd > nameStart, bytes[nameEnd - 1] == space || bytes[nameEnd - 1] == tab { nameEnd -= 1 }
            if (nameStart > range.lowerBound && (bytes[nameStart - 1] == space || bytes[nameStart - 1] == tab))
                || (nameEnd < index && (bytes[nameEnd] == space || bytes[nameEnd] == tab)), !reportedWhitespace {
                reportedWhitespace = true
                report(.whitespace, "whitespace in an attribute list (RFC 8216 4.2: a comma-separated list with no whitespace)")
            }
            let name = text(nameStart..<nameEnd)
            if index == end || bytes[index] == comma {
                report(.malformedAttributeList, nameStart == nameEnd ? "an empty attribute (RFC 8216 4.2: AttributeName=AttributeValue)"
                       : "\(excerpt(name)) has no value (RFC 8216 4.2: AttributeName=AttributeValue)")
                if index == end { break }
                index += 1
                if index == end {
                    report(.malformedAttributeList, "a comma at the end of the attribute list (RFC 8216 4.2)")
                    break
                }
                continue
            }
            if name.isEmpty || !name.utf8.allSatisfy({ ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
                                                      || $0 == UInt8(ascii: "-") }) {
                report(.malformedAttributeList, name.isEmpty ? "an attribute without a name (RFC 8216 4.2)"
                       : "attribute name \(excerpt(name)) is not of A-Z, 0-9 and - (RFC 8216 4.2)")
            }
            index += 1 // past `=`
            let value: String
            let isQuoted: Bool
            if index < end, bytes[index] == quote {
                isQuoted = true
                let valueStart = index + 1
                var closing = valueStart
                while closing < end, bytes[closing] != quote { closing += 1 }
                if closing == end {
                    report(.malformedAttributeList, "the quoted-string of \(excerpt(name)) has no closing quote (RFC 8216 4.2)")
                    value = text(valueStart..<end)
                    index = end
                } else {
                    value = text(valueStart..<closing)
                    index = closing + 1
                    if index < end, bytes[index] != comma {
                        report(.malformedAttributeList, "characters after the quoted-string of \(excerpt(name)) (RFC 8216 4.2: a comma must follow)")
                        while index < end, bytes[index] != comma { index += 1 }
                    }
                }
            } else {
                isQuoted = false
                let valueStart = index
                var hasQuoteOrSpace = false
                while index < end, bytes[index] != comma {
                    if bytes[index] == quote || bytes[index] == space || bytes[index] == tab { hasQuoteOrSpace = true }
                    index += 1
                }
                if valueStart == index {
                    report(.malformedAttributeList, "\(excerpt(name)) has an empty value (RFC 8216 4.2)")
                } else if hasQuoteOrSpace {
                    report(.malformedAttributeList, "the unquoted value of \(excerpt(name)) has a quote or whitespace in it (RFC 8216 4.2)")
                }
                value = text(valueStart..<index)
            }
            if !names.insert(name).inserted {
                report(.duplicateAttribute, "\(excerpt(name)) appears more than once in the attribute list (RFC 8216 4.2: it MUST NOT)")
            }
            attributes.append(Attribute(name: name, value: value, isQuoted: isQuoted))
            if index >= end { break }
            index += 1 // past `,`
            if index == end {
                report(.malformedAttributeList, "a comma at the end of the attribute list (RFC 8216 4.2)")
                break
            }
        }
        return AttributeList(attributes: attributes)
    }

    /// The problem with `attribute`'s value for `type`, if any: its kind, and its message (built
    /// only when asked for).
    static func check(_ attribute: Attribute, as type: ValueType, in tag: String) -> (kind: Problem.Kind, message: () -> String)? {
        func says(_ kind: Problem.Kind, _ what: @escaping (_ shown: String) -> String) -> (kind: Problem.Kind, message: () -> String) {
            (kind, { "\(attribute.name) of \(tag) (\(section(of: tag)), RFC 8216 4.2) " + what(excerpt(attribute.value)) })
        }
        let written = { (shown: String) in attribute.isQuoted ? "\"\(shown)\"" : shown }
        switch type {
        case .quotedString:
            return attribute.isQuoted ? nil : says(.quotedStringExpected) { "is a quoted-string: \($0) is not in quotes" }
        case .quotedStringOrNone:
            return attribute.isQuoted || attribute.value == "NONE" ? nil : says(.quotedStringExpected) { "is a quoted-string or NONE: \($0) is neither" }
        case .enumerated(let allowed):
            if attribute.isQuoted { return says(.invalidValue) { "is an enumerated-string, without quotes: \"\($0)\"" } }
            if !allowed.isEmpty, !allowed.contains(attribute.value) {
                return says(.invalidValue) { "is one of \(allowed.sorted().joined(separator: ", ")), not \($0)" }
            }
            return nil
        case .decimalInteger:
            switch attribute.isQuoted ? .invalid : decimalInteger(attribute.value.utf8) {
            case .value: return nil
            case .outOfRange: return says(.invalidValue) { "is at most 2^63-1 here, not \($0)" }
            case .invalid: return says(.invalidValue) { "is a decimal-integer (digits, unquoted), not \(written($0))" }
            }
        case .decimalFloatingPoint, .signedDecimalFloatingPoint:
            let signed: Bool
            if case .signedDecimalFloatingPoint = type { signed = true } else { signed = false }
            guard attribute.isQuoted || decimalFloatingPoint(attribute.value.utf8, signed: signed) == nil else { return nil }
            return says(.invalidValue) { "is a \(signed ? "signed-" : "")decimal-floating-point (digits and a '.', unquoted), not \(written($0))" }
        case .hexadecimalSequence:
            return !attribute.isQuoted && isHexadecimalSequence(attribute.value) ? nil
                : says(.invalidValue) { "is a hexadecimal-sequence (0x and hexadecimal digits), not \(written($0))" }
        case .decimalResolution:
            return !attribute.isQuoted && resolution(attribute.value) != nil ? nil
                : says(.invalidValue) { "is a decimal-resolution (<width>x<height>), not \(written($0))" }
        }
    }

    // MARK: The reader

    /// The tag a URI line is waiting for.
    private enum PendingURITag {
        /// `EXTINF`: a media segment.
        case extinf(line: Int, duration: Double, title: String)
        /// `EXT-X-STREAM-INF`: a variant stream.
        case streamInf(line: Int, attributes: AttributeList)
    }

    /// One pass over the text's lines, building the document.
    private struct Reader {
        var document = HLSPlaylistDocument()

        // What applies to the next URI line.
        var pendingURITag: PendingURITag?
        /// Each distinct URI once: a playlist naming one segment 200,000 times holds one copy
        /// of its text, shared by every segment that names it.
        var distinctURIs: [String: String] = [:]
        var pendingByteRange: (line: Int, range: (length: Int64, offset: Int64?)?)?
        var pendingDiscontinuity = false
        var pendingProgramDateTime: (text: String, seconds: Double?)?
        var pendingGap = false
        var pendingParts: [Part] = []
        // What applies to every segment after it.
        var currentMap: Map?
        var currentKey: Key?
        var currentBitrate: Int?
        // For byte ranges without an offset.
        var previousPartRange: (uri: String, range: ByteRange)?
        var seenOnce = Set<String>()
        var sawMasterTag = false

        /// Records a problem; its message is only built for the first ``maximumProblems``.
        mutating func problem(_ line: Int, _ tag: String, _ kind: Problem.Kind, _ message: @autoclosure () -> String) {
            guard document.problems.count < HLSPlaylistDocument.maximumProblems else {
                document.omittedProblemCount += 1
                return
            }
            document.problems.append(Problem(line: line, tag: tag, message: message(), kind: kind))
        }

        mutating func read(_ bytes: UnsafeBufferPointer<UInt8>) {
            let lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")
            var start = 0
            if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
                problem(1, "", .byteOrderMark, "the text starts with a byte order mark (RFC 8216 4.1: it MUST NOT)")
                start = 3
            }
            var number = 0
            while true {
                number += 1
                var end = start
                while end < bytes.count, bytes[end] != lf { end += 1 }
                let lineEnd = end > start && bytes[end - 1] == cr ? end - 1 : end
                readLine(bytes, start..<lineEnd, number: number)
                if end >= bytes.count { break }
                start = end + 1
            }
            finish()
        }

        mutating func finish() {
            switch pendingURITag {
            case .extinf(let line, _, _):
                problem(line, "EXTINF", .tagWithoutURI, "EXTINF has no URI line after it (RFC 8216 4.3.2.1)")
            case .streamInf(let line, _):
                problem(line, "EXT-X-STREAM-INF", .tagWithoutURI, "EXT-X-STREAM-INF has no URI line after it (RFC 8216 4.3.4.2)")
            case nil: break
            }
            document.trailingParts = pendingParts
            document.isMaster = sawMasterTag
            // Problems found at the end (or for an earlier line) go in line order.
            if zip(document.problems, document.problems.dropFirst()).contains(where: { $0.line > $1.line }) {
                document.problems = document.problems.enumerated().sorted { ($0.element.line, $0.offset) < ($1.element.line, $1.offset) }.map(\.element)
            }
        }

        static func isSpace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

        mutating func readLine(_ bytes: UnsafeBufferPointer<UInt8>, _ full: Range<Int>, number: Int) {
            var lower = full.lowerBound, upper = full.upperBound
            while lower < upper, Self.isSpace(bytes[lower]) { lower += 1 }
            while upper > lower, Self.isSpace(bytes[upper - 1]) { upper -= 1 }
            let isTag = upper - lower >= 4 && bytes[lower] == UInt8(ascii: "#") && bytes[lower + 1] == UInt8(ascii: "E")
                && bytes[lower + 2] == UInt8(ascii: "X") && bytes[lower + 3] == UInt8(ascii: "T")
            // The tag's name: after `#`, up to `:`.
            var colon = upper
            var name = ""
            if isTag {
                colon = lower + 1
                while colon < upper, bytes[colon] != UInt8(ascii: ":") { colon += 1 }
                let written = HLSPlaylistDocument.string(bytes, (lower + 1)..<colon)
                name = HLSPlaylistDocument.knownTagNames[written] ?? written
            }
            if number == 1 {
                document.startsWithEXTM3U = isTag && name == "EXTM3U" && colon == upper
                if !document.startsWithEXTM3U {
                    problem(1, "", .missingEXTM3U, "the first line is not #EXTM3U (RFC 8216 4.3.1.1)")
                }
            }
            if lower > full.lowerBound || upper < full.upperBound {
                problem(number, name, .whitespace, lower == upper ? "a line of whitespace only (RFC 8216 4.1: blank lines are empty)"
                        : "whitespace at the start or end of the line (RFC 8216 4.1)")
            }
            // RFC 8216 4.1: no control characters but CR and LF (U+0000-U+001F, U+007F-U+009F).
            var index = lower
            while index < upper {
                let byte = bytes[index]
                if byte < 0x20 || byte == 0x7F || (byte == 0xC2 && index + 1 < upper && bytes[index + 1] >= 0x80 && bytes[index + 1] <= 0x9F) {
                    let code = String(byte == 0xC2 ? UInt32(bytes[index + 1]) : UInt32(byte), radix: 16, uppercase: true)
                    problem(number, name, .controlCharacter, "a control character (U+\(code)) in the line (RFC 8216 4.1: none but CR and LF)")
                    break
                }
                index += 1
            }
            if lower == upper { return }
            if isTag {
                let value: String? = colon < upper ? HLSPlaylistDocument.string(bytes, (colon + 1)..<upper) : nil
                readTag(bytes, name: name, value: value, valueRange: colon < upper ? (colon + 1)..<upper : upper..<upper, line: number)
            } else if bytes[lower] == UInt8(ascii: "#") {
                return // A comment (RFC 8216 4.1).
            } else {
                let uri = HLSPlaylistDocument.string(bytes, lower..<upper)
                if let known = distinctURIs[uri] {
                    readURI(known, line: number)
                } else {
                    distinctURIs[uri] = uri
                    readURI(uri, line: number)
                }
            }
        }

        mutating func readURI(_ uri: String, line: Int) {
            switch pendingURITag {
            case .streamInf(let tagLine, let attributes):
                document.variants.append(HLSPlaylistDocument.variant(uri: uri, line: line, tagLine: tagLine, attributes: attributes))
            case .extinf(let extinfLine, let duration, let title):
                var byteRange: ByteRange?
                if let pending = pendingByteRange, let range = pending.range {
                    if let offset = range.offset {
                        byteRange = ByteRange(length: range.length, offset: offset, offsetIsExplicit: true)
                    } else if let previous = document.segments.last, previous.uri == uri, let previousRange = previous.byteRange {
                        if !previousRange.end.addingReportingOverflow(range.length).overflow {
                            byteRange = ByteRange(length: range.length, offset: previousRange.end, offsetIsExplicit: false)
                        } else {
                            problem(pending.line, "EXT-X-BYTERANGE", .invalidByteRange, "the sub-range, after the previous one, ends beyond 2^63-1 (RFC 8216 4.3.2.2)")
                        }
                    } else {
                        problem(pending.line, "EXT-X-BYTERANGE", .invalidByteRange,
                                "EXT-X-BYTERANGE has no offset, and the previous segment is not a sub-range of \(excerpt(uri)) (RFC 8216 4.3.2.2: it MUST be)")
                    }
                }
                let segment = Segment(uri: uri, line: line, extinfLine: extinfLine, duration: duration, title: title, byteRange: byteRange,
                                      byteRangeLine: pendingByteRange?.line, discontinuity: pendingDiscontinuity,
                                      programDateTime: pendingProgramDateTime?.text, programDateTimeSeconds: pendingProgramDateTime?.seconds,
                                      map: currentMap, key: currentKey, bitrate: currentBitrate, gap: pendingGap, parts: pendingParts)
                document.segments.append(segment)
                pendingByteRange = nil
                pendingDiscontinuity = false
                pendingProgramDateTime = nil
                pendingGap = false
                pendingParts = []
            case nil:
                problem(line, "", .uriWithoutTag, "a URI line with no EXTINF or EXT-X-STREAM-INF before it (RFC 8216 4.3.2.1, 4.3.4.2)")
            }
            pendingURITag = nil
        }

        /// A new tag that waits for a URI line leaves the one before without its URI.
        mutating func awaitURI(_ tag: PendingURITag) {
            switch pendingURITag {
            case .extinf(let line, _, _):
                problem(line, "EXTINF", .tagWithoutURI, "EXTINF has no URI line after it before the next one (RFC 8216 4.3.2.1)")
            case .streamInf(let line, _):
                problem(line, "EXT-X-STREAM-INF", .tagWithoutURI, "EXT-X-STREAM-INF has no URI line after it (RFC 8216 4.3.4.2: the next line)")
            case nil: break
            }
            pendingURITag = tag
        }

        mutating func integerValue(_ value: String, name: String, line: Int) -> Int? {
            switch HLSPlaylistDocument.decimalInteger(value.utf8) {
            case .value(let number): return number
            case .outOfRange: problem(line, name, .invalidValue, "\(name) \(excerpt(value)) is beyond 2^63-1 (\(section(of: name)))")
            case .invalid: problem(line, name, .invalidValue, "\(name) is a decimal-integer, not \(excerpt(value)) (\(section(of: name)), RFC 8216 4.2)")
            }
            return nil
        }

        mutating func readTag(_ bytes: UnsafeBufferPointer<UInt8>, name: String, value rawValue: String?, valueRange: Range<Int>, line: Int) {
            let section = HLSPlaylistDocument.section(of: name)
            let value = rawValue.flatMap { $0.isEmpty ? nil : $0 }
            if HLSPlaylistDocument.onceTags.contains(name), !seenOnce.insert(name).inserted {
                problem(line, name, .duplicateTag, "a second \(name) (\(section): once in a playlist); the first is read")
                document.tags.append(Tag(name: name, value: rawValue, line: line, attributes: nil))
                return
            }
            if HLSPlaylistDocument.valuelessTags.contains(name) {
                if rawValue != nil { problem(line, name, .unexpectedValue, "\(name) takes no value (\(section))") }
            } else if HLSPlaylistDocument.knownTagNames[name] != nil, value == nil {
                problem(line, name, .missingValue, "\(name) needs a value (\(section))")
            }
            // An attribute-list tag: its list parsed and checked against the tag's definition.
            var attributes: AttributeList?
            if let schema = HLSPlaylistDocument.schemas[name], value != nil {
                let list = HLSPlaylistDocument.parseAttributeList(bytes, valueRange) { kind, message in problem(line, name, kind, message()) }
                for attribute in list.attributes {
                    if let type = schema.types[attribute.name], let issue = HLSPlaylistDocument.check(attribute, as: type, in: name) {
                        problem(line, name, issue.kind, issue.message())
                    }
                }
                for required in schema.required where list[required] == nil {
                    problem(line, name, .missingAttribute, "\(name) has no \(required), which is REQUIRED (\(section))")
                }
                attributes = list
            }
            document.tags.append(Tag(name: name, value: rawValue, line: line, attributes: attributes))
            let list = attributes ?? AttributeList(attributes: [])

            switch name {
            case "EXTINF":
                var duration = 0.0
                var title = ""
                if let value {
                    let utf8 = value.utf8
                    let comma = utf8.firstIndex(of: UInt8(ascii: ","))
                    let durationText = comma.map { utf8[..<$0] } ?? utf8[...]
                    if let seconds = HLSPlaylistDocument.decimalFloatingPoint(durationText, signed: false) {
                        duration = seconds
                    } else {
                        problem(line, name, .invalidDuration,
                                "the duration \(excerpt(String(decoding: durationText, as: UTF8.self))) is not a non-negative decimal number of seconds (\(section))")
                    }
                    if let comma {
                        title = String(value[value.utf8.index(after: comma)...])
                    } else {
                        problem(line, name, .invalidDuration, "EXTINF has no comma after its duration (\(section): #EXTINF:<duration>,[<title>])")
                    }
                }
                awaitURI(.extinf(line: line, duration: duration, title: title))
            case "EXT-X-STREAM-INF":
                sawMasterTag = true
                awaitURI(.streamInf(line: line, attributes: list))
            case "EXT-X-I-FRAME-STREAM-INF":
                sawMasterTag = true
                if let uri = list["URI"]?.value {
                    document.iFrameVariants.append(HLSPlaylistDocument.variant(uri: uri, line: line, tagLine: line, attributes: list))
                }
            case "EXT-X-MEDIA":
                sawMasterTag = true
                if let type = list["TYPE"]?.value, let group = list["GROUP-ID"]?.value, let renditionName = list["NAME"]?.value {
                    document.media.append(MediaRendition(type: type, groupID: group, name: renditionName, uri: list["URI"]?.value,
                                                         language: list["LANGUAGE"]?.value, isDefault: list["DEFAULT"]?.yesOrNo ?? false,
                                                         autoselect: list["AUTOSELECT"]?.yesOrNo ?? false, channels: list["CHANNELS"]?.value,
                                                         attributes: list, line: line))
                }
            case "EXT-X-VERSION":
                document.versionLine = line
                document.version = value.flatMap { integerValue($0, name: name, line: line) }
            case "EXT-X-TARGETDURATION":
                document.targetDurationLine = line
                document.targetDuration = value.flatMap { integerValue($0, name: name, line: line) }
            case "EXT-X-MEDIA-SEQUENCE":
                document.mediaSequenceLine = line
                document.mediaSequence = value.flatMap { integerValue($0, name: name, line: line) }
            case "EXT-X-DISCONTINUITY-SEQUENCE":
                document.discontinuitySequenceLine = line
                document.discontinuitySequence = value.flatMap { integerValue($0, name: name, line: line) }
            case "EXT-X-BITRATE":
                currentBitrate = value.flatMap { integerValue($0, name: name, line: line) }
            case "EXT-X-PLAYLIST-TYPE":
                document.playlistTypeLine = line
                document.playlistType = value
                if let value, value != "VOD", value != "EVENT" {
                    problem(line, name, .invalidValue, "EXT-X-PLAYLIST-TYPE is EVENT or VOD, not \(excerpt(value)) (\(section))")
                }
            case "EXT-X-ENDLIST":
                document.endList = true
                document.endListLine = line
            case "EXT-X-I-FRAMES-ONLY":
                document.iFramesOnly = true
            case "EXT-X-INDEPENDENT-SEGMENTS":
                document.independentSegments = true
            case "EXT-X-DISCONTINUITY":
                pendingDiscontinuity = true
            case "EXT-X-GAP":
                pendingGap = true
            case "EXT-X-PROGRAM-DATE-TIME":
                guard let value else { break }
                let seconds = HLSPlaylistDocument.dateTimeSeconds(value)
                if seconds == nil {
                    problem(line, name, .invalidValue, "\(excerpt(value)) is not a date-time such as 2025-11-25T05:31:02.500Z (\(section), RFC 3339)")
                }
                if pendingProgramDateTime != nil {
                    problem(line, name, .duplicateTag, "a second EXT-X-PROGRAM-DATE-TIME for one segment (\(section)); the last is read")
                }
                pendingProgramDateTime = (value, seconds)
            case "EXT-X-BYTERANGE":
                if pendingByteRange != nil {
                    problem(line, name, .duplicateTag, "a second EXT-X-BYTERANGE for one segment (\(section)); the last is read")
                }
                guard let value else {
                    pendingByteRange = (line, nil)
                    break
                }
                switch HLSPlaylistDocument.byteRange(value.utf8) {
                case .success(let range):
                    pendingByteRange = (line, range)
                case .failure(let error):
                    problem(line, name, .invalidByteRange, error == .outOfRange ? "the byte range \(excerpt(value)) ends beyond 2^63-1 (\(section))"
                            : "\(excerpt(value)) is not a byte range <n>[@<o>] of decimal-integers (\(section))")
                    pendingByteRange = (line, nil)
                }
            case "EXT-X-MAP":
                currentMap = nil
                guard let uri = list["URI"]?.value else { break }
                var byteRange: ByteRange?
                if let text = list["BYTERANGE"]?.value {
                    switch HLSPlaylistDocument.byteRange(text.utf8) {
                    case .success(let range):
                        byteRange = ByteRange(length: range.length, offset: range.offset ?? 0, offsetIsExplicit: range.offset != nil)
                    case .failure(let error):
                        problem(line, name, .invalidByteRange, error == .outOfRange ? "BYTERANGE \(excerpt(text)) ends beyond 2^63-1 (\(section))"
                                : "BYTERANGE \(excerpt(text)) is not a byte range <n>[@<o>] of decimal-integers (\(section), RFC 8216 4.3.2.2)")
                    }
                }
                let map = Map(uri: uri, byteRange: byteRange, line: line)
                currentMap = map
                document.maps.append(map)
            case "EXT-X-KEY":
                currentKey = list["METHOD"].map { method in
                    Key(method: method.value, uri: list["URI"]?.value, iv: list["IV"]?.value, keyFormat: list["KEYFORMAT"]?.value, line: line)
                }
                if let method = list["METHOD"]?.value, method != "NONE", list["URI"] == nil {
                    problem(line, name, .missingAttribute, "EXT-X-KEY with METHOD=\(excerpt(method)) has no URI, which is REQUIRED unless METHOD is NONE (\(section))")
                }
            case "EXT-X-PART":
                guard let uri = list["URI"]?.value else { break }
                var byteRange: ByteRange?
                if let text = list["BYTERANGE"]?.value {
                    switch HLSPlaylistDocument.byteRange(text.utf8) {
                    case .success(let range):
                        if let offset = range.offset {
                            byteRange = ByteRange(length: range.length, offset: offset, offsetIsExplicit: true)
                        } else if let previous = previousPartRange, previous.uri == uri, !previous.range.end.addingReportingOverflow(range.length).overflow {
                            byteRange = ByteRange(length: range.length, offset: previous.range.end, offsetIsExplicit: false)
                        } else {
                            let chained = previousPartRange?.uri == uri
                            problem(line, name, .invalidByteRange, chained ? "BYTERANGE, after the previous part's, ends beyond 2^63-1 (\(section))"
                                    : "BYTERANGE has no offset, and the previous part is not a sub-range of \(excerpt(uri)) (\(section): it MUST be)")
                        }
                    case .failure(let error):
                        problem(line, name, .invalidByteRange, error == .outOfRange ? "BYTERANGE \(excerpt(text)) ends beyond 2^63-1 (\(section))"
                                : "BYTERANGE \(excerpt(text)) is not a byte range <n>[@<o>] of decimal-integers (\(section))")
                    }
                }
                previousPartRange = byteRange.map { (uri, $0) }
                pendingParts.append(Part(uri: uri, duration: list["DURATION"]?.decimalFloatingPoint ?? 0, independent: list["INDEPENDENT"]?.yesOrNo ?? false,
                                         byteRange: byteRange, gap: list["GAP"]?.yesOrNo ?? false, line: line))
            case "EXT-X-PART-INF":
                document.partTargetLine = line
                document.partTarget = list["PART-TARGET"]?.decimalFloatingPoint
            case "EXT-X-SERVER-CONTROL":
                document.serverControl = ServerControl(canBlockReload: list["CAN-BLOCK-RELOAD"]?.yesOrNo ?? false,
                                                       canSkipUntil: list["CAN-SKIP-UNTIL"]?.decimalFloatingPoint,
                                                       canSkipDateRanges: list["CAN-SKIP-DATERANGES"]?.yesOrNo ?? false,
                                                       holdBack: list["HOLD-BACK"]?.decimalFloatingPoint,
                                                       partHoldBack: list["PART-HOLD-BACK"]?.decimalFloatingPoint, line: line)
            case "EXT-X-PRELOAD-HINT":
                guard let type = list["TYPE"]?.value, let uri = list["URI"]?.value else { break }
                let start = list["BYTERANGE-START"]?.decimalInteger.map(Int64.init)
                let length = list["BYTERANGE-LENGTH"]?.decimalInteger.map(Int64.init)
                if let start, let length, start.addingReportingOverflow(length).overflow {
                    problem(line, name, .invalidByteRange, "BYTERANGE-START plus BYTERANGE-LENGTH is beyond 2^63-1 (\(section))")
                    document.preloadHints.append(PreloadHint(type: type, uri: uri, byteRangeStart: start, byteRangeLength: nil, line: line))
                } else {
                    document.preloadHints.append(PreloadHint(type: type, uri: uri, byteRangeStart: start, byteRangeLength: length, line: line))
                }
            case "EXT-X-RENDITION-REPORT":
                guard let uri = list["URI"]?.value else { break }
                document.renditionReports.append(RenditionReport(uri: uri, lastMediaSequence: list["LAST-MSN"]?.decimalInteger,
                                                                 lastPart: list["LAST-PART"]?.decimalInteger, line: line))
            case "EXT-X-DATERANGE":
                guard let id = list["ID"]?.value else { break }
                document.dateRanges.append(DateRange(id: id, startDate: list["START-DATE"]?.value, attributes: list, line: line))
            case "EXT-X-START":
                guard let offset = list["TIME-OFFSET"]?.signedDecimalFloatingPoint else { break }
                document.start = Start(timeOffset: offset, precise: list["PRECISE"]?.yesOrNo ?? false, line: line)
            case "EXT-X-SKIP":
                guard let skipped = list["SKIPPED-SEGMENTS"]?.decimalInteger else { break }
                document.skip = Skip(skippedSegments: skipped, recentlyRemovedDateRanges: list["RECENTLY-REMOVED-DATERANGES"]?.value, line: line)
            default:
                break // EXTM3U, and tags a client ignores (RFC 8216 6.3.1): kept in `tags`.
            }
        }
    }

    /// A variant stream from its tag's attributes.
    static func variant(uri: String, line: Int, tagLine: Int, attributes list: AttributeList) -> Variant {
        Variant(uri: uri, line: line, tagLine: tagLine, bandwidth: list["BANDWIDTH"]?.decimalInteger,
                       averageBandwidth: list["AVERAGE-BANDWIDTH"]?.decimalInteger, codecs: list["CODECS"]?.value,
                       resolution: list["RESOLUTION"]?.decimalResolution, frameRate: list["FRAME-RATE"]?.decimalFloatingPoint,
                       hdcpLevel: list["HDCP-LEVEL"]?.value, videoRange: list["VIDEO-RANGE"]?.value, audioGroup: list["AUDIO"]?.value,
                       videoGroup: list["VIDEO"]?.value, subtitlesGroup: list["SUBTITLES"]?.value, closedCaptions: list["CLOSED-CAPTIONS"]?.value,
                       attributes: list)
    }
}
