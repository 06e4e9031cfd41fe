public import MediaCore

/// An in-place edit of a movie's tags planned from the `moov`'s child headers and its `udta`
/// alone: the sample tables before the `udta` are never read. What ``MovieEditor/editTags(boxes:source:items:)``
/// returns when the new tags fit in the padding.
public struct MovieUserDataEdit: Sendable {
    /// The `moov` box.
    public var movie: BoxHeader
    /// The new `moov` size.
    public var newMovieSize: Int64
    /// Where the rewritten tail of the `moov` (its `udta` and what follows it) starts.
    public var tailOffset: Int64
    /// The new tail: the new `udta`, the `moov` children after the old one, then a `free` box
    /// header over the rest of the padding (whose old bytes stay: a `free` box's content is
    /// ignored).
    public var tail: [UInt8]

    /// The writes: the `moov` size field when it changes, then the tail.
    public var patches: [(offset: Int64, bytes: [UInt8])] {
        var patches: [(offset: Int64, bytes: [UInt8])] = []
        if newMovieSize != movie.size { patches.append((movie.offset, ITunesItemList.u32(UInt32(newMovieSize)))) }
        patches.append((tailOffset, tail))
        return patches
    }
}

extension MovieEditor {
    /// The `udta` of the movie among `boxes` (the file's top-level boxes), read alone after the
    /// `moov`'s child headers: its header and bytes, `nil` when the movie has none.
    static func userData(boxes: [BoxHeader], source: some RandomAccessByteSource) throws(MP4Error)
        -> (movie: BoxHeader, userData: (header: BoxHeader, bytes: [UInt8])?) {
        guard let moov = boxes.first(where: { $0.type == "moov" }) else { throw .noMovie(offset: 0) }
        let children = try Self.boxes(of: source, in: moov.payloadOffset..<(moov.offset + moov.size), path: BoxPath(components: ["moov"]))
        guard let udta = children.first(where: { $0.type == "udta" }) else { return (moov, nil) }
        guard udta.size <= MP4File.maximumHeaderBoxSize else {
            throw .invalidBoxSize(path: BoxPath(components: ["moov", "udta"]), offset: udta.offset, size: udta.size, reason: "it is larger than a header box may be")
        }
        let bytes: [UInt8]
        do { bytes = try source.read(at: udta.offset, count: Int(udta.size)) } catch { throw .stream(error) }
        return (moov, (udta, bytes))
    }

    /// The item list of a `udta` box's bytes (`udta/meta/ilst`), empty when it has none.
    static func itemList(userData bytes: [UInt8], headerSize: Int) throws(MP4Error) -> ITunesItemList {
        var box = bytes
        var inner = headerSize
        var location = BoxPath(components: ["moov", "udta"])
        for name in ["meta", "ilst"] {
            var iterator = try BoxIterator(ByteReader(box, range: min(inner, box.count)..<box.count), path: location)
            var next: (bytes: [UInt8], header: Int)?
            while next == nil, let child = try iterator.next() {
                guard MetadataTags.latin1(child.header.type) == name else { continue }
                let start = Int(child.header.offset)
                let childBytes = Array(box[start..<min(box.count, start + Int(child.header.size))])
                var header = child.header.headerSize
                // `meta` is a full box in iTunes files (ISO), a plain one in some QuickTime files.
                if name == "meta", childBytes.count >= header + 8, Array(childBytes[(header + 4)..<(header + 8)]) != Array("hdlr".utf8) { header += 4 }
                next = (childBytes, header)
                location = location.appending(child.header.type)
            }
            guard let found = next else { return ITunesItemList() }
            box = found.bytes
            inner = found.header
        }
        return try ITunesItemList(payload: Array(box[min(inner, box.count)...]), path: location)
    }

    /// The in-place edit of the tags of the file whose top-level boxes are `boxes` to `items`,
    /// planned from the `moov`'s child headers and its `udta` only; `nil` when the new tags do
    /// not fit in the `free`/`skip` padding after the `moov` (then ``edit(boxes:source:items:chapters:fragmentedDuration:)``
    /// plans a rewrite).
    ///
    /// - Throws: ``MP4Error`` when there is no `moov`, or its children or `udta` are malformed.
    public static func editTags(boxes: [BoxHeader], source: some RandomAccessByteSource, items: ITunesItemList) throws(MP4Error) -> MovieUserDataEdit? {
        let (moov, userData) = try userData(boxes: boxes, source: source)
        guard moov.headerSize == 8, let index = boxes.firstIndex(where: { $0.offset == moov.offset }) else { return nil }
        let moovEnd = moov.offset + moov.size
        // What follows the udta in the moov moves with it (usually nothing: udta comes last).
        let tailOffset = userData?.header.offset ?? moovEnd
        let after: [UInt8]
        do { after = try source.read(at: userData.map { $0.header.offset + $0.header.size } ?? moovEnd,
                                     count: Int(moovEnd - (userData.map { $0.header.offset + $0.header.size } ?? moovEnd))) } catch { throw .stream(error) }
        let newUserData: [UInt8]
        if let userData {
            newUserData = try replace(in: userData.bytes, headerSize: userData.header.headerSize, path: ["meta", "ilst"], with: items.box,
                                      where: BoxPath(components: ["moov", "udta"]))
        } else {
            newUserData = built(["udta", "meta", "ilst"], leaf: items.box)
        }
        var paddingEnd = moovEnd
        var next = index + 1
        while next < boxes.count, boxes[next].offset == paddingEnd, boxes[next].type == "free" || boxes[next].type == "skip" {
            paddingEnd += boxes[next].size
            next += 1
        }
        var tail = newUserData + after
        let newSize = (tailOffset - moov.offset) + Int64(tail.count)
        let rest = paddingEnd - (moov.offset + newSize)
        guard newSize <= Int64(UInt32.max), rest == 0 || rest >= 8 else { return nil }
        if rest > 0 { tail += ITunesItemList.header(size: Int(rest), type: "free") }
        return MovieUserDataEdit(movie: moov, newMovieSize: newSize, tailOffset: tailOffset, tail: tail)
    }
}
