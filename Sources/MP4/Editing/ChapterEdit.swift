internal import MediaCore

/// A `moov` ready for a new chapter track: the movie without it (``base``, whose chunk offsets a
/// rewrite shifts), and the track to insert once its samples' place in the file is known.
struct ChapterTrackPlan {
    /// The `moov` without the chapter track.
    var base: [UInt8]
    /// Where in ``base`` the track goes (after the last `trak`).
    let insertAt: Int
    /// The chapters, normalized.
    let chapters: [MovieChapter]
    /// The track's ID.
    let trackID: UInt32
    /// The movie timescale and duration.
    let timescale: UInt32
    let duration: UInt64
    /// The track's samples, back to back.
    let samples: [UInt8]

    /// The `moov` with the chapter track, its samples at `offset` in the file.
    func movie(withTrackAt offset: UInt64, wide: Bool) -> [UInt8] {
        let track = ChapterTrack.track(chapters: chapters, trackID: trackID, timescale: timescale, duration: duration,
                                       chunkOffset: offset, wideOffset: wide)
        var movie = Array(base[..<insertAt]) + track + Array(base[insertAt...])
        ChapterEdit.setSize(&movie)
        return movie
    }
}

/// Replaces the chapters of a `moov`: removes its Nero `chpl` and its QuickTime chapter tracks
/// (the `text` tracks a `tref/chap` points to) and those references, then adds new ones: a
/// `chpl` in `udta`, a `tref/chap` in the first audio track, and a `ChapterTrackPlan` for the
/// text track; `mvhd`'s `next_track_ID` moves past the new track.
enum ChapterEdit {
    static func apply(_ chapters: [MovieChapter], to moov: [UInt8], location: BoxPath,
                      fragmentedDuration: Double? = nil) throws(MP4Error) -> ([UInt8], ChapterTrackPlan?) {
        var children = try Self.children(of: moov, path: location)
        // What the tracks are and what they point to.
        var chapterIDs: Set<UInt32> = []
        var tracks: [(index: Int, id: UInt32, handler: String)] = []
        for (index, child) in children.enumerated() where type(of: child) == "trak" {
            let path = location.appending("trak")
            let parts = try Self.children(of: child, path: path)
            var id: UInt32 = 0
            var handler = ""
            for part in parts {
                switch type(of: part) {
                case "tkhd":
                    let at = part.count > 8 && part[8] == 1 ? 8 + 4 + 16 : 8 + 4 + 8
                    guard part.count >= at + 4 else { throw .truncated(path: path.appending("tkhd"), BinaryReadError(offset: 0, needed: at + 4, available: part.count, unit: .bytes)) }
                    id = Self.u32(part, at)
                case "tref":
                    for reference in try Self.children(of: part, path: path.appending("tref")) where type(of: reference) == "chap" {
                        var at = 8
                        while at + 4 <= reference.count {
                            chapterIDs.insert(Self.u32(reference, at))
                            at += 4
                        }
                    }
                case "mdia":
                    for box in try Self.children(of: part, path: path.appending("mdia")) where type(of: box) == "hdlr" && box.count >= 20 {
                        handler = MetadataTags.latin1(FourCharacterCode(rawValue: Self.u32(box, 16)))
                    }
                default:
                    break
                }
            }
            tracks.append((index, id, handler))
        }
        // Remove the old chapter tracks, references and list.
        let removed = Set(tracks.filter { chapterIDs.contains($0.id) && $0.handler == "text" }.map(\.index))
        var kept: [[UInt8]] = []
        for (index, child) in children.enumerated() where !removed.contains(index) {
            switch type(of: child) {
            case "trak":
                var parts = try Self.children(of: child, path: location.appending("trak"))
                if let at = parts.firstIndex(where: { type(of: $0) == "tref" }) {
                    let references = try Self.children(of: parts[at], path: location.appending("trak").appending("tref"))
                        .filter { type(of: $0) != "chap" }
                    if references.isEmpty { parts.remove(at: at) } else { parts[at] = assemble(parts[at], references) }
                }
                kept.append(assemble(child, parts))
            case "udta":
                let parts = try Self.children(of: child, path: location.appending("udta")).filter { type(of: $0) != "chpl" }
                kept.append(assemble(child, parts))
            default:
                kept.append(child)
            }
        }
        children = kept
        // mvhd (ISO/IEC 14496-12 8.2.2): version 0 is 108 bytes, version 1 120, next_track_ID last.
        guard let headerIndex = children.firstIndex(where: { type(of: $0) == "mvhd" }) else { throw .missingBox(path: location, type: "mvhd") }
        let header = children[headerIndex]
        let wideHeader = header.count > 8 && header[8] == 1
        let nextIDAt = wideHeader ? 116 : 104
        guard header.count >= nextIDAt + 4 else {
            throw .invalidBoxSize(path: location.appending("mvhd"), offset: 0, size: Int64(header.count),
                                  reason: "a version \(wideHeader ? 1 : 0) movie header has \(nextIDAt + 4) bytes")
        }
        let timescale = Self.u32(header, wideHeader ? 8 + 4 + 16 : 8 + 4 + 8)
        var duration = wideHeader
            ? UInt64(Self.u32(header, 8 + 4 + 16 + 4)) << 32 | UInt64(Self.u32(header, 8 + 4 + 16 + 8))
            : UInt64(Self.u32(header, 8 + 4 + 8 + 4))
        guard timescale > 0 else {
            throw .invalidField(path: location.appending("mvhd"), field: "timescale", value: 0, offset: 0, allowed: "1...\(UInt32.max)")
        }
        // A fragmented file's movie header may say 0 (`empty_moov`): its fragments' length counts.
        if duration == 0, let seconds = fragmentedDuration, seconds.isFinite, seconds > 0, seconds < 1e9 {
            duration = UInt64((seconds * Double(timescale)).rounded(.up))
        }
        let list = chapters.normalized(duration: timescale <= UInt32(Int32.max) ? MediaTime(value: Int64(clamping: duration), timescale: Int32(timescale)) : nil)
        guard !list.isEmpty else { return (assemble(moov, children), nil) }
        // The new track's ID, past every other.
        let remaining = tracks.filter { !removed.contains($0.index) }
        let candidate = max(UInt64(Self.u32(header, nextIDAt)), UInt64(remaining.map(\.id).max() ?? 0) + 1)
        guard candidate < UInt64(UInt32.max) else {
            throw .invalidField(path: location.appending("mvhd"), field: "next_track_ID", value: Int64(candidate), offset: 0,
                                allowed: "below \(UInt32.max), to number a chapter track")
        }
        let trackID = UInt32(candidate)
        var newHeader = header
        setU32(&newHeader, nextIDAt, trackID + 1)
        children[headerIndex] = newHeader
        // The reference from the first audio track (else the first track).
        let audioIDs = Set(remaining.filter { $0.handler == "soun" }.map(\.id))
        let audioIndex = children.indices.first { type(of: children[$0]) == "trak" && Self.trackID(ofTrak: children[$0]).map(audioIDs.contains) == true }
            ?? children.firstIndex { type(of: $0) == "trak" }
        guard let audioIndex else { throw .missingBox(path: location, type: "trak") }
        var parts = try Self.children(of: children[audioIndex], path: location.appending("trak"))
        if let at = parts.firstIndex(where: { type(of: $0) == "tref" }) {
            var references = try Self.children(of: parts[at], path: location.appending("trak").appending("tref"))
            references.append(Array(ChapterTrack.reference(to: trackID).dropFirst(8)))
            parts[at] = assemble(parts[at], references)
        } else {
            let after = (parts.firstIndex { type(of: $0) == "tkhd" } ?? -1) + 1
            parts.insert(ChapterTrack.reference(to: trackID), at: after)
        }
        children[audioIndex] = assemble(children[audioIndex], parts)
        // The Nero list in udta (made when there is none).
        let chpl = ChapterListBox(chapters: list).box
        if let at = children.firstIndex(where: { type(of: $0) == "udta" }) {
            var parts = try Self.children(of: children[at], path: location.appending("udta"))
            parts.append(chpl)
            children[at] = assemble(children[at], parts)
        } else {
            children.append(assemble(ITunesItemList.header(size: 8, type: "udta"), [chpl]))
        }
        let lastTrack = children.lastIndex { type(of: $0) == "trak" } ?? headerIndex
        let insertAt = 8 + children[...lastTrack].reduce(0) { $0 + $1.count }
        let base = assemble(moov, children)
        let samples = ChapterTrack.samples(list).bytes
        return (base, ChapterTrackPlan(base: base, insertAt: insertAt, chapters: list, trackID: trackID, timescale: timescale,
                                       duration: duration, samples: samples))
    }

    /// The `track_ID` of a `trak` box's `tkhd`.
    private static func trackID(ofTrak trak: [UInt8]) -> UInt32? {
        guard let parts = try? children(of: trak, path: BoxPath(components: ["trak"])),
              let header = parts.first(where: { type(of: $0) == "tkhd" }), header.count >= 8 + 4 + 8 + 4 else { return nil }
        return u32(header, header[8] == 1 ? 8 + 4 + 16 : 8 + 4 + 8)
    }

    /// The size of a whole box's header: 16 with a 64-bit size, else 8.
    static func headerSize(of box: [UInt8]) -> Int {
        box.count >= 16 && u32(box, 0) == 1 ? 16 : 8
    }

    /// The child boxes of a (plain, not full) box, each whole.
    static func children(of box: [UInt8], path: BoxPath) throws(MP4Error) -> [[UInt8]] {
        let headerSize = headerSize(of: box)
        guard box.count >= headerSize else { return [] }
        var result: [[UInt8]] = []
        var iterator = try BoxIterator(ByteReader(box, range: headerSize..<box.count), path: path)
        while let child = try iterator.next() {
            let start = Int(child.header.offset)
            let end = start + Int(child.header.size)
            guard start >= headerSize, end <= box.count else {
                throw .invalidBoxSize(path: child.path, offset: child.header.offset, size: child.header.size, reason: "it runs past its parent")
            }
            result.append(Array(box[start..<end]))
        }
        return result
    }

    /// The type of a whole box, as text.
    static func type(of box: [UInt8]) -> String {
        box.count >= 8 ? MetadataTags.latin1(FourCharacterCode(rawValue: u32(box, 4))) : ""
    }

    /// A box of the type of `original` (a whole box) holding `children`, with an 8-byte header.
    static func assemble(_ original: [UInt8], _ children: [[UInt8]]) -> [UInt8] {
        var box = [0, 0, 0, 0] + Array(original[4..<8]) + children.flatMap { $0 }
        setSize(&box)
        return box
    }

    /// Sets a box's 32-bit size field to its length.
    static func setSize(_ box: inout [UInt8]) {
        setU32(&box, 0, UInt32(clamping: box.count))
    }

    static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        bytes[at..<(at + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    static func setU32(_ bytes: inout [UInt8], _ at: Int, _ value: UInt32) {
        for index in 0..<4 { bytes[at + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * index)) }
    }
}
