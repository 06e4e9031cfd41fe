public import MediaCore

extension MP4File {
    /// The Nero chapter list of `moov/udta/chpl`, when the movie has one.
    ///
    /// - Throws: ``MP4Error`` when the box is malformed (a count past its bytes, a title cut off).
    public func chapterList() throws(MP4Error) -> ChapterListBox? {
        guard let userData else { return nil }
        let path = BoxPath(components: ["moov", "udta"])
        var iterator = try BoxIterator(userData, path: path)
        while let child = try iterator.next() {
            guard child.header.type == "chpl" else { continue }
            var reader = child.payload
            return try ChapterListBox(from: &reader, path: child.path)
        }
        return nil
    }

    /// The QuickTime chapter track: the text track a `tref/chap` of another track points to
    /// (Apple files may also point to a video track of chapter pictures, which is not this).
    public var chapterTrack: MP4Track? {
        for track in tracks {
            for id in track.references["chap"] ?? [] {
                if let target = tracks.first(where: { $0.id == id && $0.id != track.id && $0.damage == nil && Self.textHandlers.contains($0.handlerType) }) {
                    return target
                }
            }
        }
        return nil
    }

    /// The handlers of tracks whose samples are text.
    static let textHandlers: Set<FourCharacterCode> = ["text", "sbtl"]
    /// The most bytes of one chapter title read, and of all of them.
    static let maximumTitleBytes = 4096
    static let maximumChapterTextBytes = 16 << 20

    /// The most chapters read from a chapter track.
    public static let maximumChapterCount = 65_536

    /// The movie's chapters: from its QuickTime chapter track when it has one (titles of up to
    /// 4 KiB, times in the track's timescale), else — or when that track is malformed — from
    /// its Nero `chpl`; empty when it has neither.
    ///
    /// - Throws: ``MP4Error`` for a malformed chapter track without a `chpl` to fall back on (a
    ///   sample outside the file, a title longer than its sample, more than
    ///   ``maximumChapterCount`` chapters or 16 MiB of titles), or a malformed `chpl`.
    public func chapters(source: some RandomAccessByteSource) throws(MP4Error) -> [MovieChapter] {
        if let track = chapterTrack {
            do {
                return try Self.chapters(of: track, source: source)
            } catch {
                guard let list = try? chapterList() else { throw error }
                return list.chapters
            }
        }
        return try chapterList()?.chapters ?? []
    }

    /// The chapters a text track's samples hold.
    static func chapters(of track: MP4Track, source: some RandomAccessByteSource) throws(MP4Error) -> [MovieChapter] {
        let count = track.sampleTable.sampleCount
        guard count <= maximumChapterCount else {
            throw .invalidField(path: track.path, field: "chapter count", value: Int64(count), offset: 0,
                                allowed: "at most \(maximumChapterCount)")
        }
        let scale = Int32(clamping: max(1, track.timescale))
        var cursor = SampleTableCursor()
        var chapters: [MovieChapter] = []
        var total = 0
        while let location = try cursor.next(in: track.sampleTable, path: track.path) {
            guard location.offset >= 0, location.size >= 0, location.offset <= source.byteCount - Int64(location.size) else {
                throw .sampleOutsideFile(trackID: track.id, sampleIndex: location.index, offset: location.offset,
                                         size: Int64(location.size), fileSize: source.byteCount)
            }
            // A title past 4 KiB is cut there; the titles together stay under 16 MiB.
            let count = min(location.size, maximumTitleBytes + 2)
            total += count
            guard total <= maximumChapterTextBytes else {
                throw .invalidField(path: track.path, field: "chapter text", value: Int64(total), offset: location.offset,
                                    allowed: "at most \(maximumChapterTextBytes) bytes of titles")
            }
            let bytes = try Self.read(source, at: location.offset, count: count)
            guard let title = ChapterTrack.title(fromSample: bytes, cutAt: location.size > count ? count - 2 : nil) else {
                throw .invalidField(path: track.path, field: "text length of chapter \(location.index + 1)", value: Int64(bytes.count), offset: location.offset,
                                    allowed: "a 16-bit length within the \(location.size)-byte sample")
            }
            chapters.append(MovieChapter(startTime: MediaTime(value: location.decodeTime, timescale: scale), title: title))
        }
        return chapters
    }
}
