internal import MediaCore

/// The iTunes metadata items a muxer writes into `moov/udta/meta/ilst` (Apple, QuickTime File
/// Format, "Metadata": the item list with a `mdir` handler that iTunes, mutagen, FFmpeg and
/// browsers read). Each item is a box named by its key holding a `data` box: a type indicator
/// (1 UTF-8 text, 0 binary, 13 JPEG, 14 PNG), a locale, then the value.
public struct ITunesMetadata: Sendable, Hashable {
    /// A position in a set: `trkn` (track 3 of 12) or `disk` (disc 1 of 2).
    public struct Position: Sendable, Hashable {
        /// The number, from 1.
        public var number: Int
        /// How many there are, 0 when unknown.
        public var total: Int

        /// A position.
        public init(number: Int, total: Int = 0) {
            self.number = number
            self.total = total
        }

        /// `"3/12"`, `"03/12"` or `"3"`, as tags carry it; `nil` without a number.
        public init?(text: String) {
            let parts = text.split(separator: "/").map { String($0.filter { $0 != " " }) }
            guard let first = parts.first, let number = Int(first), number >= 0 else { return nil }
            self.number = number
            self.total = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
        }
    }

    /// Cover art (`covr`).
    public struct Artwork: Sendable, Hashable {
        /// The image's encoding.
        public enum Format: UInt32, Sendable, Hashable {
            /// JPEG (type indicator 13).
            case jpeg = 13
            /// PNG (type indicator 14).
            case png = 14
        }

        /// The encoded image.
        public var data: [UInt8]
        /// JPEG or PNG.
        public var format: Format

        /// A picture.
        public init(data: [UInt8], format: Format) {
            self.data = data
            self.format = format
        }

        /// A picture whose format its first bytes show (JPEG `FF D8 FF`, PNG `89 50 4E 47`).
        public init?(data: [UInt8]) {
            if data.starts(with: [0xFF, 0xD8, 0xFF]) {
                self.init(data: data, format: .jpeg)
            } else if data.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
                self.init(data: data, format: .png)
            } else {
                return nil
            }
        }
    }

    /// A `----` item: a value named by a reverse-DNS `mean` and a `name`
    /// (`com.apple.iTunes`, `replaygain_track_gain`).
    public struct Freeform: Sendable, Hashable {
        /// The namespace, `com.apple.iTunes` for most.
        public var mean: String
        /// The name.
        public var name: String
        /// The text.
        public var value: String

        /// A freeform item.
        public init(mean: String = "com.apple.iTunes", name: String, value: String) {
            self.mean = mean
            self.name = name
            self.value = value
        }
    }

    /// `©nam`.
    public var title: String?
    /// `©ART`.
    public var artist: String?
    /// `©alb`.
    public var album: String?
    /// `aART`.
    public var albumArtist: String?
    /// `trkn`.
    public var track: Position?
    /// `disk`.
    public var disc: Position?
    /// `©day`, the release date or year as given.
    public var date: String?
    /// `©gen`, a genre as text.
    public var genre: String?
    /// `©cmt`.
    public var comment: String?
    /// `©wrt`.
    public var composer: String?
    /// `covr`.
    public var artwork: Artwork?
    /// `----` items, in order.
    public var freeform: [Freeform] = []
    /// Whole item boxes written as they are after the others: another file's items, carried
    /// over by an edit (``ITunesItemList/Item/box``).
    public var verbatimItems: [[UInt8]] = []

    /// No items.
    public init() {}

    /// The items named by FFmpeg's generic tag keys (what libavformat calls the fields of
    /// Vorbis comments, ID3v2 frames, RIFF INFO and iTunes atoms): `title`, `artist`, `album`,
    /// `album_artist`, `track` (`3/12`), `disc`, `date`, `genre`, `comment`, `composer`; keys
    /// in any case. Other keys are not carried.
    public init(genericTags tags: [String: String]) {
        var lowered: [String: String] = [:]
        for (key, value) in tags where !value.isEmpty { lowered[key.lowercased()] = lowered[key.lowercased()] ?? value }
        title = lowered["title"]
        artist = lowered["artist"]
        album = lowered["album"]
        albumArtist = lowered["album_artist"] ?? lowered["albumartist"] ?? lowered["album artist"]
        track = (lowered["track"] ?? lowered["tracknumber"]).flatMap(Position.init(text:))
        if let track, track.total == 0, let total = (lowered["tracktotal"] ?? lowered["totaltracks"]).flatMap({ Int($0) }) {
            self.track = Position(number: track.number, total: total)
        }
        disc = (lowered["disc"] ?? lowered["discnumber"]).flatMap(Position.init(text:))
        date = lowered["date"] ?? lowered["year"]
        genre = lowered["genre"]
        comment = lowered["comment"] ?? lowered["description"]
        composer = lowered["composer"]
    }

    /// Whether there is no item.
    public var isEmpty: Bool { self == ITunesMetadata() }

    /// Appends the items to an `ilst` being written.
    func write(into ilst: inout BoxWriter) {
        for (key, value) in [("©nam", title), ("©ART", artist), ("©alb", album), ("aART", albumArtist), ("©day", date),
                             ("©gen", genre), ("©cmt", comment), ("©wrt", composer)] {
            guard let value else { continue }
            ilst.box(Self.code(key)) { item in
                item.fullBox("data", flags: 1) { data in data.u32(0); data.raw(Array(value.utf8)) }
            }
        }
        if let track {
            ilst.box("trkn") { item in
                item.fullBox("data", flags: 0) { data in
                    data.u32(0); data.u16(0); data.u16(UInt16(clamping: track.number)); data.u16(UInt16(clamping: track.total)); data.u16(0)
                }
            }
        }
        if let disc {
            ilst.box("disk") { item in
                item.fullBox("data", flags: 0) { data in
                    data.u32(0); data.u16(0); data.u16(UInt16(clamping: disc.number)); data.u16(UInt16(clamping: disc.total))
                }
            }
        }
        if let artwork {
            ilst.box("covr") { item in
                item.fullBox("data", flags: artwork.format.rawValue) { data in data.u32(0); data.raw(artwork.data) }
            }
        }
        for entry in freeform {
            ilst.box("----") { item in
                item.fullBox("mean") { data in data.raw(Array(entry.mean.utf8)) }
                item.fullBox("name") { data in data.raw(Array(entry.name.utf8)) }
                item.fullBox("data", flags: 1) { data in data.u32(0); data.raw(Array(entry.value.utf8)) }
            }
        }
        for item in verbatimItems { ilst.raw(item) }
    }

    /// The code of an item key whose first character may be `©` (0xA9 in the box type, as
    /// Mac OS Roman and Latin-1 both have it).
    static func code(_ key: String) -> FourCharacterCode {
        FourCharacterCode(rawValue: key.unicodeScalars.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32(truncatingIfNeeded: $1.value) })
    }
}
