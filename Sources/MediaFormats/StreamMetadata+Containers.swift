public import MP4

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
