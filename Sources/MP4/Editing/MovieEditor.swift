public import MediaCore

/// How a file gets new tags or chapters: where its `moov` is, the new `moov`, and whether it fits
/// where the old one and the room after it were.
public struct MovieEdit: Sendable {
    /// The old `moov`'s place in the file.
    public var movieRange: Range<Int64>
    /// The room right after it that an edit may reuse: `free`/`skip` padding, and an `mdat` that
    /// held only the chapter samples the edit replaces.
    public var paddingRange: Range<Int64>
    /// The new `moov` (with chunk offsets shifted by ``shift`` when the media moves).
    public var movie: [UInt8]
    /// An `mdat` box holding the new chapter track's samples (empty without one): at the end of
    /// the room in place, after the fresh padding in a rewrite.
    public var mediaData: [UInt8] = []
    /// Bytes the data after the room moves by in a rewrite (0 in place).
    public var shift: Int64

    /// Whether the new `moov` and chapter samples, with a `free` box filling the rest, fit in
    /// the old `moov` and its room, so that nothing else in the file moves.
    public var fitsInPlace: Bool {
        let room = paddingRange.upperBound - movieRange.lowerBound
        let size = Int64(movie.count + mediaData.count)
        return size == room || size + 8 <= room
    }

    /// The old `moov` and room bytes, for ``inPlacePatches`` (empty when not read).
    public var original: [UInt8] = []

    /// The writes of an in-place edit: only the bytes of ``inPlaceBytes`` that differ from
    /// ``original`` (the `moov` size field, then everything from the first changed byte on;
    /// the sample tables before the tags stay untouched on disk).
    public var inPlacePatches: [(offset: Int64, bytes: [UInt8])] {
        let new = inPlaceBytes
        guard original.count == new.count else { return [(movieRange.lowerBound, new)] }
        var patches: [(offset: Int64, bytes: [UInt8])] = []
        if original[0..<8] != new[0..<8] { patches.append((movieRange.lowerBound, Array(new[0..<8]))) }
        if let first = (8..<new.count).first(where: { original[$0] != new[$0] }) {
            let last = (first..<new.count).last(where: { original[$0] != new[$0] }) ?? first
            patches.append((movieRange.lowerBound + Int64(first), Array(new[first...last])))
        }
        return patches
    }

    /// The bytes to write at ``movieRange``'s start for an in-place edit: the new `moov`, a
    /// `free` box over what is left of the room, then the chapter samples.
    public var inPlaceBytes: [UInt8] {
        let room = Int(paddingRange.upperBound - movieRange.lowerBound)
        let rest = room - movie.count - mediaData.count
        guard rest > 0 else { return movie + mediaData }
        return movie + ITunesItemList.header(size: rest, type: "free") + [UInt8](repeating: 0, count: rest - 8) + mediaData
    }

    /// The bytes that replace the old `moov` and its room in a rewrite.
    public var rewrittenBytes: [UInt8] { movie + MovieEditor.paddingBox + mediaData }
}

/// The name ``MovieEdit`` had when it planned tag edits only.
@available(*, deprecated, renamed: "MovieEdit")
public typealias MovieTagEdit = MovieEdit

/// The name ``MovieEditor`` had when it edited tags only.
@available(*, deprecated, renamed: "MovieEditor")
public typealias MovieTagEditor = MovieEditor

/// Edits a movie's tags (`moov/udta/meta/ilst`) and chapters (a Nero `chpl` and a QuickTime
/// chapter track) without touching its media: every other box is kept byte for byte, and the
/// chunk offsets (`stco`, `co64`: ISO/IEC 14496-12, 8.7.5) are shifted in a rewrite in which the
/// media after the `moov` moves.
public enum MovieEditor {
    /// The padding left after a rewritten `moov`, for later edits in place (Apple's and FFmpeg's
    /// tools leave room for tags likewise).
    public static let padding = 2048

    /// A `free` box of ``padding`` bytes.
    public static var paddingBox: [UInt8] {
        ITunesItemList.header(size: padding, type: "free") + [UInt8](repeating: 0, count: padding - 8)
    }

    /// The largest `mdat` right after the `moov` that an edit reuses when nothing points into it.
    static let reusableMediaDataSize: Int64 = 1 << 20

    /// The edit of `file`'s tags to `items`.
    public static func edit(_ file: MP4File, source: some RandomAccessByteSource, items: ITunesItemList) throws(MP4Error) -> MovieEdit {
        try edit(boxes: file.topLevelBoxes, source: source, items: items)
    }

    /// The edit of the file whose top-level boxes are `boxes`: its tags to `items` (kept when
    /// `nil`) and its chapters to `chapters` (kept when `nil`, removed when empty).
    /// `fragmentedDuration` is a fragmented file's length in seconds, for chapters when its
    /// movie header says 0.
    ///
    /// - Throws: ``MP4Error`` when there is no `moov` or it cannot be read whole, or a chunk
    ///   offset would not fit in 32 bits after a shift.
    public static func edit(boxes: [BoxHeader], source: some RandomAccessByteSource, items: ITunesItemList?,
                            chapters: [MovieChapter]? = nil, fragmentedDuration: Double? = nil) throws(MP4Error) -> MovieEdit {
        guard let index = boxes.firstIndex(where: { $0.type == "moov" }) else { throw .noMovie(offset: 0) }
        let moov = boxes[index]
        let bytes: [UInt8]
        do { bytes = try source.read(at: moov.offset, count: Int(moov.size)) } catch { throw .stream(error) }
        guard bytes.count == Int(moov.size), moov.headerSize == 8 else {
            throw .invalidBoxSize(path: BoxPath(components: ["moov"]), offset: moov.offset, size: moov.size, reason: "the movie box cannot be read whole")
        }
        let location = BoxPath(components: ["moov"])
        var rebuilt = bytes
        if let items { rebuilt = try replace(in: rebuilt, headerSize: 8, path: ["udta", "meta", "ilst"], with: items.box, where: location) }
        var chapterTrack: ChapterTrackPlan?
        if let chapters {
            (rebuilt, chapterTrack) = try ChapterEdit.apply(chapters, to: rebuilt, location: location, fragmentedDuration: fragmentedDuration)
        }
        // The room: padding, and an mdat no remaining chunk points into (old chapter samples).
        let offsets = try chunkOffsets(in: rebuilt)
        var paddingEnd = moov.offset + moov.size
        var next = index + 1
        while next < boxes.count, boxes[next].offset == paddingEnd {
            let box = boxes[next]
            let reusable = box.type == "free" || box.type == "skip"
                || (box.type == "mdat" && box.size <= reusableMediaDataSize
                    && !offsets.contains { $0 >= UInt64(box.offset) && $0 < UInt64(box.offset + box.size) })
            guard reusable else { break }
            paddingEnd += box.size
            next += 1
        }
        let room = paddingEnd - moov.offset
        var edit = MovieEdit(movieRange: moov.offset..<(moov.offset + moov.size), paddingRange: (moov.offset + moov.size)..<paddingEnd,
                             movie: rebuilt, shift: 0)
        // One offset width for the measuring and the final build: 64 bits when the chapter
        // samples could lie past 4 GiB (after the file, the new movie, padding and the track).
        let trackBound = UInt64((chapterTrack?.chapters.count ?? 0) * 64 + (1 << 16))
        let wide = UInt64(source.byteCount) + UInt64(rebuilt.count) + UInt64(padding) + UInt64(chapterTrack?.samples.count ?? 0) + trackBound
            > UInt64(UInt32.max)
        if let plan = chapterTrack {
            edit.mediaData = ITunesItemList.header(size: 8 + plan.samples.count, type: "mdat") + plan.samples
            edit.movie = plan.movie(withTrackAt: 0, wide: wide)
        }
        if edit.fitsInPlace {
            if let plan = chapterTrack {
                edit.movie = plan.movie(withTrackAt: UInt64(paddingEnd) - UInt64(edit.mediaData.count) + 8, wide: wide)
            }
            do { edit.original = try source.read(at: moov.offset, count: Int(room)) } catch { throw .stream(error) }
            return edit
        }
        // A rewrite: the new moov, fresh padding, the chapter samples; what followed the room
        // moves by the difference.
        edit.shift = Int64(edit.movie.count + padding + edit.mediaData.count) - room
        var shifted = rebuilt
        try shiftChunkOffsets(in: &shifted, by: edit.shift, after: moov.offset)
        if let plan = chapterTrack {
            var moved = plan
            moved.base = shifted
            edit.movie = moved.movie(withTrackAt: UInt64(moov.offset) + UInt64(edit.movie.count + padding) + 8, wide: wide)
        } else {
            edit.movie = shifted
        }
        return edit
    }

    /// The top-level boxes of `source`, read header by header (16 bytes each), without parsing
    /// any box: what an edit of the tags needs, at the cost of a few reads however long the file.
    ///
    /// - Throws: ``MP4Error/invalidBoxSize(path:offset:size:reason:)`` for a box that overruns the
    ///   file or is smaller than its header.
    public static func topLevelBoxes(of source: some RandomAccessByteSource) throws(MP4Error) -> [BoxHeader] {
        try boxes(of: source, in: 0..<source.byteCount, path: .root)
    }

    /// The most boxes ``boxes(of:in:path:)`` lists: a bound on the reads a hostile file can ask for.
    static let maximumListedBoxes = 1 << 16

    /// The boxes back to back in `range` of `source`, read header by header (16 bytes each).
    static func boxes(of source: some RandomAccessByteSource, in range: Range<Int64>, path: BoxPath) throws(MP4Error) -> [BoxHeader] {
        let size = range.upperBound
        var boxes: [BoxHeader] = []
        var offset = range.lowerBound
        while offset + 8 <= size {
            guard boxes.count < maximumListedBoxes else {
                throw .invalidBoxSize(path: path, offset: offset, size: size - offset, reason: "it holds more than \(maximumListedBoxes) boxes")
            }
            let head: [UInt8]
            do { head = try source.read(at: offset, count: Int(min(16, size - offset))) } catch { throw .stream(error) }
            guard head.count >= 8 else { break }
            let small = Int64(head[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            let type = FourCharacterCode(rawValue: head[4..<8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            var boxSize = small, headerSize = 8
            if small == 1 {
                guard head.count >= 16 else { throw .invalidBoxSize(path: path.appending(type), offset: offset, size: 1, reason: "its 64-bit size is cut off") }
                boxSize = Int64(bitPattern: head[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
                headerSize = 16
            } else if small == 0 {
                boxSize = size - offset
            }
            guard boxSize >= Int64(headerSize), boxSize <= size - offset else {
                throw .invalidBoxSize(path: path.appending(type), offset: offset, size: boxSize,
                                      reason: "it does not fit in \(path == .root ? "the file" : path.description) (\(size - offset) bytes left)")
            }
            boxes.append(BoxHeader(type: type, offset: offset, headerSize: headerSize, size: boxSize))
            offset += boxSize
        }
        return boxes
    }

    /// The item list of `file`'s `moov/udta/meta/ilst`, empty when there is none.
    public static func itemList(of file: MP4File, source: some RandomAccessByteSource) throws(MP4Error) -> ITunesItemList {
        try itemList(boxes: file.topLevelBoxes, source: source)
    }

    /// The item list of the `moov/udta/meta/ilst` among `boxes` (the file's top-level boxes):
    /// the `moov`'s child headers and its `udta` are read, not its sample tables.
    public static func itemList(boxes: [BoxHeader], source: some RandomAccessByteSource) throws(MP4Error) -> ITunesItemList {
        guard let userData = try userData(boxes: boxes, source: source).userData else { return ITunesItemList() }
        return try itemList(userData: userData.bytes, headerSize: userData.header.headerSize)
    }

    /// `box` (whose children start after `headerSize` bytes) with the box at `path` below it
    /// replaced by `leaf`, or added with the boxes on the way (`udta`, then `meta` with an
    /// `mdir` handler, then the leaf).
    static func replace(in box: [UInt8], headerSize: Int, path: [String], with leaf: [UInt8], where location: BoxPath) throws(MP4Error) -> [UInt8] {
        guard let first = path.first else { return leaf }
        var children: [UInt8] = []
        var found = false
        var iterator = try BoxIterator(ByteReader(box, range: headerSize..<box.count), path: location)
        while let child = try iterator.next() {
            let start = Int(child.header.offset), end = start + Int(child.header.size)
            let bytes = Array(box[start..<min(end, box.count)])
            if !found, MetadataTags.latin1(child.header.type) == first {
                found = true
                if path.count == 1 {
                    children += leaf
                } else {
                    // `meta` is a full box in iTunes files (ISO), a plain one in some QuickTime files.
                    var inner = child.header.headerSize
                    if first == "meta", bytes.count >= inner + 8, Array(bytes[(inner + 4)..<(inner + 8)]) != Array("hdlr".utf8) { inner += 4 }
                    children += try replace(in: bytes, headerSize: inner, path: Array(path.dropFirst()), with: leaf,
                                            where: location.appending(child.header.type))
                }
            } else {
                children += bytes
            }
        }
        if !found { children += built(path, leaf: leaf) }
        let header = Array(box[0..<headerSize])
        return ITunesItemList.u32(UInt32(clamping: header.count + children.count)) + header[4...] + children
    }

    /// The boxes of `path` built around `leaf`.
    static func built(_ path: [String], leaf: [UInt8]) -> [UInt8] {
        guard let first = path.first else { return leaf }
        let inner = built(Array(path.dropFirst()), leaf: leaf)
        if first == "meta" {
            let handler = ITunesItemList.header(size: 33, type: "hdlr") + [0, 0, 0, 0] + [0, 0, 0, 0] + Array("mdir".utf8)
                + Array("appl".utf8) + [UInt8](repeating: 0, count: 8) + [0]
            let payload = [0, 0, 0, 0] + handler + inner
            return ITunesItemList.header(size: 8 + payload.count, type: "meta") + payload
        }
        return path.count == 1 ? leaf : ITunesItemList.header(size: 8 + inner.count, type: first) + inner
    }

    /// Adds `delta` to every chunk offset in `moov` that points past `threshold` (the data after
    /// the old `moov`), in every `trak/mdia/minf/stbl/stco` and `co64`.
    static func shiftChunkOffsets(in moov: inout [UInt8], by delta: Int64, after threshold: Int64) throws(MP4Error) {
        guard delta != 0 else { return }
        try forEachChunkOffset(in: &moov, range: 8..<moov.count, path: BoxPath(components: ["moov"])) { value, wide, path, at throws(MP4Error) in
            guard Int64(value) >= threshold else { return value }
            let moved = Int64(value) + delta
            guard moved >= 0, wide || moved <= Int64(UInt32.max) else {
                throw .invalidField(path: path, field: "chunk_offset", value: moved, offset: Int64(at),
                                    allowed: "a 32-bit offset (the file would need co64)")
            }
            return UInt64(moved)
        }
    }

    /// Every chunk offset of every track in `moov`.
    static func chunkOffsets(in moov: [UInt8]) throws(MP4Error) -> [UInt64] {
        var bytes = moov
        var offsets: [UInt64] = []
        try forEachChunkOffset(in: &bytes, range: 8..<bytes.count, path: BoxPath(components: ["moov"])) { value, _, _, _ throws(MP4Error) in
            offsets.append(value)
            return value
        }
        return offsets
    }

    /// Calls `body` with each chunk offset of `trak/mdia/minf/stbl/stco` and `co64` below
    /// `range` of `bytes` (whether it is 64-bit, its box, its byte position) and stores what it
    /// returns in its place.
    private static func forEachChunkOffset(in bytes: inout [UInt8], range: Range<Int>, path: BoxPath,
                                           _ body: (UInt64, Bool, BoxPath, Int) throws(MP4Error) -> UInt64) throws(MP4Error) {
        var iterator = try BoxIterator(ByteReader(bytes, range: range), path: path)
        var boxes: [(type: String, code: FourCharacterCode, start: Int, header: Int, end: Int)] = []
        while let child = try iterator.next() {
            boxes.append((MetadataTags.latin1(child.header.type), child.header.type, Int(child.header.offset), child.header.headerSize,
                          Int(child.header.offset + child.header.size)))
        }
        for box in boxes {
            switch box.type {
            case "trak", "mdia", "minf", "stbl":
                try forEachChunkOffset(in: &bytes, range: (box.start + box.header)..<box.end, path: path.appending(box.code), body)
            case "stco", "co64":
                let wide = box.type == "co64"
                let width = wide ? 8 : 4
                let countAt = box.start + box.header + 4
                guard countAt + 4 <= box.end else { continue }
                let count = Int(bytes[countAt..<(countAt + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
                guard countAt + 4 + count * width <= box.end else {
                    throw .invalidBoxSize(path: path.appending(box.code), offset: Int64(box.start), size: Int64(box.end - box.start),
                                          reason: "\(count) chunk offsets do not fit in it")
                }
                for entry in 0..<count {
                    let at = countAt + 4 + entry * width
                    let value = bytes[at..<(at + width)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                    let new = try body(value, wide, path.appending(box.code), at)
                    guard new != value else { continue }
                    for byte in 0..<width { bytes[at + byte] = UInt8(truncatingIfNeeded: new >> (8 * (width - 1 - byte))) }
                }
            default:
                break
            }
        }
    }
}
