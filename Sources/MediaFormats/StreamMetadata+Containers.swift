public import MP4
public import AudioBitstreams

/// The one mapping between a stream's tags and chapters (``/MediaCore/StreamMetadata``, in
/// FFmpeg's generic tag names) and what an MP4 holds: iTunes items in `moov/udta/meta/ilst`
/// and chapters as a Nero `chpl` and a QuickTime chapter track.
extension StreamMetadata {
    /// The generic names of the iTunes items KeyFrameKit carries between files, by atom.
    static let itunesNames: KeyValuePairs<String, String> = [
        "©nam": "title", "©ART": "artist", "©alb": "album", "aART": "album_artist", "trkn": "track",
        "disk": "disc", "©day": "date", "©gen": "genre", "©cmt": "comment", "©wrt": "composer",
    ]

    /// The tags, cover and chapters of an MP4 file: its movie's `ilst` items that have a
    /// generic name (the first of each), the first `covr` picture, and its chapters (`chpl`,
    /// else a QuickTime chapter track). What cannot be read is left out: the audio is what a
    /// job reads the file for.
    public init(mp4 file: MP4File, source: some RandomAccessByteSource) {
        self.init()
        if let userData = file.userData,
           let items = try? MetadataTags.parse(udta: userData, path: BoxPath(components: ["moov", "udta"])) {
            for (atom, name) in Self.itunesNames {
                if let item = items.all.first(where: { $0.key == atom }), !item.value.isEmpty { tags.append((name, item.value)) }
            }
            coverArt = items.all.first { $0.key == "covr" && $0.picture != nil }?.picture?.data
        }
        chapters = ((try? file.chapters(source: source)) ?? []).map { Chapter(start: $0.startTime, title: $0.title) }
    }

    /// Tags by libavformat's names (Vorbis comments, ID3v2 frames, RIFF INFO), in key order so
    /// that the same file always gives the same stream, with a cover picture.
    public init(genericTags: [String: String], coverArt: [UInt8]? = nil) {
        self.init(tags: genericTags.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) }, coverArt: coverArt)
    }

    /// The chapters as an MP4 writes them.
    public var movieChapters: [MovieChapter] { chapters.map { MovieChapter(startTime: $0.start, title: $0.title) } }
}

extension ITunesMetadata {
    /// The iTunes items for a stream's tags: the generic names `ITunesMetadata.init(genericTags:)`
    /// knows become their atoms (the first value of each), `replaygain_*` tags become
    /// `----:com.apple.iTunes` items as ReplayGain 2.0 readers expect (the first value of each), and the cover becomes
    /// `covr` when it is a JPEG or PNG. Other tags are not carried.
    public init(_ metadata: StreamMetadata) {
        var generic: [String: String] = [:]
        for tag in metadata.tags where generic[tag.key.lowercased()] == nil { generic[tag.key.lowercased()] = tag.value }
        self.init(genericTags: generic)
        // One item per name: the first value, as for the named atoms.
        var named: Set<String> = []
        freeform = metadata.tags.compactMap { tag in
            let name = tag.key.lowercased()
            guard name.hasPrefix("replaygain_"), named.insert(name).inserted else { return nil }
            return Freeform(name: name, value: tag.value)
        }
        artwork = metadata.coverArt.flatMap { Artwork(data: $0) }
    }
}

extension ID3v2Tag {
    /// The ID3v2.4 text frames of the generic tag names (FFmpeg's mapping, which its MP3
    /// reader undoes): a name not here is written as a `TXXX` frame described by the name, and
    /// `comment` as a `COMM` frame.
    static let textFrameIDs: KeyValuePairs<String, String> = [
        "title": "TIT2", "artist": "TPE1", "album": "TALB", "album_artist": "TPE2", "composer": "TCOM", "genre": "TCON",
        "date": "TDRC", "track": "TRCK", "disc": "TPOS", "copyright": "TCOP", "encoded_by": "TENC", "encoder": "TSSE",
        "language": "TLAN", "performer": "TPE3", "publisher": "TPUB",
    ]

    /// A tag holding `metadata`: its tags as text frames, its cover as the front-cover `APIC`,
    /// and its chapters as `CHAP` frames (`chp0`, `chp1`, …, each titled by a `TIT2` and linked
    /// by a `WXXX` when it has a URL) listed in order by a top-level `CTOC` (`toc`), which
    /// podcast players read. A chapter without an end ends where the next starts, the last at
    /// `duration` (or at its start when that is not known).
    public init(_ metadata: StreamMetadata, duration: MediaTime?) {
        self.init()
        let ids = Dictionary(Self.textFrameIDs.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        var written: Set<String> = []
        for (key, value) in metadata.tags {
            let name = key.lowercased()
            guard written.insert(name).inserted else { continue }
            if name == "comment" { frames.append(.comment(language: "eng", description: "", text: value)) }
            else if let id = ids[name] { frames.append(.text(id: id, values: [value])) }
            else { frames.append(.userText(description: key, value: value)) }
        }
        if let cover = metadata.coverArt {
            let isPNG = cover.starts(with: [0x89, 0x50, 0x4E, 0x47])
            frames.append(.picture(Picture(mimeType: isPNG ? "image/png" : "image/jpeg", description: "Cover", data: cover)))
        }
        guard !metadata.chapters.isEmpty else { return }
        func milliseconds(_ time: MediaTime) -> UInt32 {
            let value = (time.seconds * 1000).rounded()
            return value.isFinite ? UInt32(clamping: Int64(min(max(0, value), Double(UInt32.max)))) : 0
        }
        var children: [String] = []
        for (index, chapter) in metadata.chapters.enumerated() {
            let next = index + 1 < metadata.chapters.count ? metadata.chapters[index + 1].start : duration
            let end = chapter.end ?? next ?? chapter.start
            var subframes: [Frame] = [.text(id: "TIT2", values: [chapter.title])]
            if let url = chapter.url { subframes.append(.userURL(description: "", url: url)) }
            children.append("chp\(index)")
            frames.append(.chapter(Chapter(elementID: "chp\(index)", startMilliseconds: milliseconds(chapter.start),
                                           endMilliseconds: milliseconds(end), subframes: subframes)))
        }
        frames.append(.tableOfContents(TableOfContents(elementID: "toc", children: children)))
    }
}

extension VorbisComment {
    /// A comment block from `vendor` holding `metadata` (the one mapping for FLAC's
    /// VORBIS_COMMENT and Ogg Opus's `OpusTags`): its tags by their Vorbis names (`TITLE`,
    /// `TRACKNUMBER`), its chapters as the `CHAPTERxxx` and `CHAPTERxxxNAME` fields podcast tools
    /// read (`HH:MM:SS.mmm`, up to 999), and, with `withPicture`, its cover as a
    /// `METADATA_BLOCK_PICTURE` field (base64 of a FLAC PICTURE block), as Ogg carries it.
    public init(_ metadata: StreamMetadata, vendor: String, withPicture: Bool = false) {
        var fields = metadata.tags.map { Field(Self.fieldName(ofTag: $0.key), $0.value) }
        for (index, chapter) in metadata.chapters.enumerated() where index < 999 {
            let number = Self.digits(index + 1, 3)
            fields.append(Field("CHAPTER\(number)", Self.clock(chapter.start.seconds)))
            fields.append(Field("CHAPTER\(number)NAME", chapter.title))
        }
        if withPicture, let cover = metadata.coverArt {
            fields.append(Field("METADATA_BLOCK_PICTURE", Base64.encode(FLACPicture(image: cover).bytes)))
        }
        self.init(vendor: vendor, fields: fields)
    }

    /// `seconds` as `HH:MM:SS.mmm` (a time that is not finite, or past a million hours, as the
    /// most that is).
    static func clock(_ seconds: Double) -> String {
        let bounded = seconds.isFinite ? min(max(0, seconds), 3.6e9) : 0
        let milliseconds = Int((bounded * 1000).rounded())
        return digits(milliseconds / 3_600_000, 2) + ":" + digits(milliseconds / 60_000 % 60, 2) + ":"
            + digits(milliseconds / 1000 % 60, 2) + "." + digits(milliseconds % 1000, 3)
    }

    /// `value` zero-padded to `width` digits.
    static func digits(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}

extension StreamMetadata {
    /// The generic tag name of a Vorbis field (`TRACKNUMBER` → `track`, `TITLE` → `title`).
    static func tagName(ofVorbisField name: String) -> String {
        switch name.uppercased() {
        case "TRACKNUMBER": "track"
        case "DISCNUMBER": "disc"
        case "ALBUMARTIST": "album_artist"
        default: name.lowercased()
        }
    }

    /// Whether a Vorbis field is a chapter's (`CHAPTERxxx`, `CHAPTERxxxNAME`, `CHAPTERxxxURL`).
    static func isChapterField(_ name: String) -> Bool {
        let upper = name.uppercased()
        guard upper.hasPrefix("CHAPTER") else { return false }
        let rest = upper.dropFirst(7)
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        return digits.count == 3 && ["", "NAME", "URL"].contains(String(rest.dropFirst(3)))
    }

    /// The tags, chapters (`CHAPTERxxx`) and cover (a `METADATA_BLOCK_PICTURE` field, or the
    /// first of `pictures`, front covers first) of a Vorbis comment block.
    public init(vorbisComment comment: VorbisComment, pictures: [FLACPicture] = []) {
        self.init()
        for field in comment.fields where !Self.isChapterField(field.name) && field.name.uppercased() != "METADATA_BLOCK_PICTURE" {
            tags.append((key: Self.tagName(ofVorbisField: field.name), value: field.value))
        }
        var found = pictures
        for value in comment.values(of: "METADATA_BLOCK_PICTURE") {
            if let bytes = Base64.decode(value), let picture = try? FLACPicture(bytes: bytes) { found.append(picture) }
        }
        coverArt = (found.first { $0.pictureType == 3 } ?? found.first)?.data
        // The chapter fields by name, looked up once each (a block may hold millions of fields).
        var chapterFields: [String: String] = [:]
        for field in comment.fields where Self.isChapterField(field.name) {
            let name = field.name.uppercased()
            if chapterFields[name] == nil { chapterFields[name] = field.value }
        }
        for number in 1...999 {
            let key = "CHAPTER" + VorbisComment.digits(number, 3)
            guard let time = chapterFields[key], let seconds = Self.seconds(ofClock: time) else { break }
            chapters.append(Chapter(start: MediaTime(value: Int64((seconds * 1000).rounded()), timescale: 1000), title: chapterFields[key + "NAME"] ?? "",
                                    url: chapterFields[key + "URL"]))
        }
    }

    /// Seconds of `HH:MM:SS.mmm` (or `MM:SS.mmm`, or seconds): digits and one point only, at
    /// most a million hours; `nil` otherwise (`inf`, `1e300`, a hex float).
    static func seconds(ofClock text: String) -> Double? {
        var total = 0.0
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 3 else { return nil }
        for part in parts {
            guard !part.isEmpty, part.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), let value = Double(part) else { return nil }
            total = total * 60 + value
        }
        return total < 3.6e9 ? total : nil
    }

    /// The tags, cover (the front cover, else the first picture) and chapters (`CHAP` frames,
    /// in the top-level `CTOC`'s order, else by start) of an ID3v2 tag.
    public init(id3 tag: ID3v2Tag) {
        self.init()
        let names = Dictionary(ID3v2Tag.textFrameIDs.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        var pictures: [ID3v2Tag.Picture] = []
        var chapterFrames: [ID3v2Tag.Chapter] = []
        var order: [String] = []
        for frame in tag.frames {
            switch frame {
            case .text(let id, let values): tags.append((key: names[id] ?? id, value: values.joined(separator: "/")))
            case .userText(let description, let value): tags.append((key: description, value: value))
            case .comment(_, let description, let text) where description.isEmpty: tags.append((key: "comment", value: text))
            case .picture(let picture): pictures.append(picture)
            case .chapter(let chapter): chapterFrames.append(chapter)
            case .tableOfContents(let table) where table.isTopLevel: order = table.children
            default: break
            }
        }
        coverArt = (pictures.first { $0.pictureType == 3 } ?? pictures.first)?.data
        let ordered = order.isEmpty ? chapterFrames.sorted { $0.startMilliseconds < $1.startMilliseconds }
            : order.compactMap { id in chapterFrames.first { $0.elementID == id } }
        chapters = ordered.map { chapter in
            var url: String?
            for case .userURL(_, let link) in chapter.subframes { url = link }
            return Chapter(start: MediaTime(value: Int64(chapter.startMilliseconds), timescale: 1000), title: chapter.title ?? "",
                           end: MediaTime(value: Int64(chapter.endMilliseconds), timescale: 1000), url: url)
        }
    }
}
