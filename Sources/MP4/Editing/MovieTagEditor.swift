public import MediaCore

/// How a file gets new tags: where its `moov` is, the new `moov`, and whether the new one fits
/// where the old one and the padding after it were.
public struct MovieTagEdit: Sendable {
    /// The old `moov`'s place in the file.
    public var movieRange: Range<Int64>
    /// The `free`/`skip` padding right after it, which an in-place edit may use.
    public var paddingRange: Range<Int64>
    /// The new `moov` (with chunk offsets shifted by ``shift`` when the media moves).
    public var movie: [UInt8]
    /// Bytes the data after the old `moov` moves by in a rewrite (0 in place).
    public var shift: Int64

    /// Whether the new `moov` and a `free` box filling the rest fit in the old `moov` and its
    /// padding, so that nothing else in the file moves.
    public var fitsInPlace: Bool {
        let room = paddingRange.upperBound - movieRange.lowerBound
        let size = Int64(movie.count)
        return size == room || size + 8 <= room
    }

    /// The old `moov` and padding bytes, for ``inPlacePatches`` (empty when not read).
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
            patches.append((movieRange.lowerBound + Int64(first), Array(new[first...])))
        }
        return patches
    }

    /// The bytes to write at ``movieRange``'s start for an in-place edit: the new `moov`, then a
    /// `free` box over what is left of the old `moov` and its padding.
    public var inPlaceBytes: [UInt8] {
        let room = Int(paddingRange.upperBound - movieRange.lowerBound)
        let rest = room - movie.count
        guard rest > 0 else { return movie }
        return movie + ITunesItemList.header(size: rest, type: "free") + [UInt8](repeating: 0, count: rest - 8)
    }
}

/// Replaces the iTunes item list of a movie (`moov/udta/meta/ilst`), keeping every other box
/// byte for byte, and shifts the chunk offsets (`stco`, `co64`: ISO/IEC 14496-12, 8.7.5) of a
/// rewrite in which the media after the `moov` moves.
public enum MovieTagEditor {
    /// The padding left after a rewritten `moov`, for later edits in place (Apple's and FFmpeg's
    /// tools leave room for tags likewise).
    public static let padding = 2048

    /// A `free` box of ``padding`` bytes.
    public static var paddingBox: [UInt8] {
        ITunesItemList.header(size: padding, type: "free") + [UInt8](repeating: 0, count: padding - 8)
    }

    /// The edit of `file`'s tags to `items`.
    ///
    /// - Parameters:
    ///   - file: the parsed file (its top-level boxes).
    ///   - source: the file's bytes.
    ///   - items: the new item list.
    /// - Throws: ``MP4Error`` when there is no `moov`, the `moov` is fragmented (tags would go
    ///   into every init segment), or a chunk offset would not fit in 32 bits after a shift.
    public static func edit(_ file: MP4File, source: some RandomAccessByteSource, items: ITunesItemList) throws(MP4Error) -> MovieTagEdit {
        try edit(boxes: file.topLevelBoxes, source: source, items: items)
    }

    /// The edit of the tags of the file whose top-level boxes are `boxes` to `items`.
    public static func edit(boxes: [BoxHeader], source: some RandomAccessByteSource, items: ITunesItemList) throws(MP4Error) -> MovieTagEdit {
        guard let index = boxes.firstIndex(where: { $0.type == "moov" }) else { throw .noMovie(offset: 0) }
        let moov = boxes[index]
        var paddingEnd = moov.offset + moov.size
        var next = index + 1
        while next < boxes.count, boxes[next].type == "free" || boxes[next].type == "skip", boxes[next].offset == paddingEnd {
            paddingEnd += boxes[next].size
            next += 1
        }
        let bytes: [UInt8]
        do { bytes = try source.read(at: moov.offset, count: Int(moov.size)) } catch { throw .stream(error) }
        guard bytes.count == Int(moov.size), moov.headerSize == 8 else {
            throw .invalidBoxSize(path: BoxPath(components: ["moov"]), offset: moov.offset, size: moov.size, reason: "the movie box cannot be read whole")
        }
        let rebuilt = try replace(in: bytes, headerSize: 8, path: ["udta", "meta", "ilst"], with: items.box, where: BoxPath(components: ["moov"]))
        var edit = MovieTagEdit(movieRange: moov.offset..<(moov.offset + moov.size), paddingRange: (moov.offset + moov.size)..<paddingEnd,
                                movie: rebuilt, shift: 0)
        if edit.fitsInPlace {
            do { edit.original = try source.read(at: moov.offset, count: Int(paddingEnd - moov.offset)) } catch { throw .stream(error) }
        }
        if !edit.fitsInPlace {
            // A rewrite: the new moov, then fresh padding; what followed the old moov and its
            // padding moves by the difference.
            let withPadding = rebuilt.count + padding
            edit.shift = Int64(withPadding) - (paddingEnd - moov.offset)
            var shifted = rebuilt
            try shiftChunkOffsets(in: &shifted, by: edit.shift, after: moov.offset)
            edit.movie = shifted
            edit.paddingRange = edit.paddingRange.lowerBound..<edit.paddingRange.upperBound
        }
        return edit
    }

    /// The top-level boxes of `source`, read header by header (16 bytes each), without parsing
    /// any box: what an edit of the tags needs, at the cost of a few reads however long the file.
    ///
    /// - Throws: ``MP4Error/invalidBoxSize(path:offset:size:reason:)`` for a box that overruns the
    ///   file or is smaller than its header.
    public static func topLevelBoxes(of source: some RandomAccessByteSource) throws(MP4Error) -> [BoxHeader] {
        let size = source.byteCount
        var boxes: [BoxHeader] = []
        var offset: Int64 = 0
        while offset + 8 <= size {
            let head: [UInt8]
            do { head = try source.read(at: offset, count: 16) } catch { throw .stream(error) }
            guard head.count >= 8 else { break }
            let small = Int64(head[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            let type = FourCharacterCode(rawValue: head[4..<8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            var boxSize = small, headerSize = 8
            if small == 1 {
                guard head.count >= 16 else { throw .invalidBoxSize(path: BoxPath(components: [type.description]), offset: offset, size: 1, reason: "its 64-bit size is cut off") }
                boxSize = Int64(bitPattern: head[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
                headerSize = 16
            } else if small == 0 {
                boxSize = size - offset
            }
            guard boxSize >= Int64(headerSize), offset + boxSize <= size else {
                throw .invalidBoxSize(path: BoxPath(components: [type.description]), offset: offset, size: boxSize,
                                      reason: "it does not fit in the file (\(size) bytes)")
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

    /// The item list of the `moov/udta/meta/ilst` among `boxes` (the file's top-level boxes).
    public static func itemList(boxes: [BoxHeader], source: some RandomAccessByteSource) throws(MP4Error) -> ITunesItemList {
        guard let moov = boxes.first(where: { $0.type == "moov" }) else { throw .noMovie(offset: 0) }
        let bytes: [UInt8]
        do { bytes = try source.read(at: moov.offset, count: Int(moov.size)) } catch { throw .stream(error) }
        var box = bytes
        var headerSize = moov.headerSize
        var location = BoxPath(components: ["moov"])
        for name in ["udta", "meta", "ilst"] {
            var iterator = try BoxIterator(ByteReader(box, range: headerSize..<box.count), path: location)
            var next: (bytes: [UInt8], header: Int)?
            while next == nil, let child = try iterator.next() {
                guard MetadataTags.latin1(child.header.type) == name else { continue }
                let start = Int(child.header.offset)
                let childBytes = Array(box[start..<min(box.count, start + Int(child.header.size))])
                var inner = child.header.headerSize
                if name == "meta", childBytes.count >= inner + 8, Array(childBytes[(inner + 4)..<(inner + 8)]) != Array("hdlr".utf8) { inner += 4 }
                next = (childBytes, inner)
                location = location.appending(child.header.type)
            }
            guard let found = next else { return ITunesItemList() }
            box = found.bytes
            headerSize = found.header
        }
        return try ITunesItemList(payload: Array(box[headerSize...]), path: location)
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
        try shift(&moov, range: 8..<moov.count, path: BoxPath(components: ["moov"]), delta: delta, threshold: threshold)
    }

    private static func shift(_ bytes: inout [UInt8], range: Range<Int>, path: BoxPath, delta: Int64, threshold: Int64) throws(MP4Error) {
        var iterator = try BoxIterator(ByteReader(bytes, range: range), path: path)
        var boxes: [(type: String, code: FourCharacterCode, start: Int, header: Int, end: Int)] = []
        while let child = try iterator.next() {
            boxes.append((MetadataTags.latin1(child.header.type), child.header.type, Int(child.header.offset), child.header.headerSize,
                          Int(child.header.offset + child.header.size)))
        }
        for box in boxes {
            switch box.type {
            case "trak", "mdia", "minf", "stbl":
                try shift(&bytes, range: (box.start + box.header)..<box.end, path: path.appending(box.code), delta: delta, threshold: threshold)
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
                    guard Int64(value) >= threshold else { continue }
                    let moved = Int64(value) + delta
                    guard moved >= 0, wide || moved <= Int64(UInt32.max) else {
                        throw .invalidField(path: path.appending(box.code), field: "chunk_offset", value: moved, offset: Int64(at),
                                            allowed: "a 32-bit offset (the file would need co64)")
                    }
                    for byte in 0..<width { bytes[at + byte] = UInt8(truncatingIfNeeded: UInt64(moved) >> (8 * (width - 1 - byte))) }
                }
            default:
                break
            }
        }
    }
}
