public import MediaCore

/// The Nero chapter list, `moov/udta/chpl`: not in ISO/IEC 14496-12, but written by Nero, FFmpeg
/// and mp4v2 and read by most players and by mutagen. A full box (version 1 adds 4 reserved
/// bytes), an 8-bit chapter count, then per chapter a 64-bit start in 100-nanosecond units and a
/// title of at most 255 UTF-8 bytes after an 8-bit length.
public struct ChapterListBox: Sendable, Hashable {
    /// The chapters.
    public var chapters: [MovieChapter]

    /// The most chapters the 8-bit count can hold.
    public static let maximumCount = 255
    /// The unit of the start times: 100 ns.
    public static let timescale: Int32 = 10_000_000

    /// A box of `chapters` (only the first ``maximumCount`` are written).
    public init(chapters: [MovieChapter]) {
        self.chapters = chapters
    }

    /// Parses a `chpl` payload (after the box header).
    ///
    /// - Throws: ``MP4Error`` naming the field when the count promises more chapters than the
    ///   payload holds, or a title runs past its end.
    public init(from reader: inout ByteReader, path: BoxPath) throws(MP4Error) {
        let start = reader.offset
        let full = try FullBoxHeader.parse(from: &reader, path: path)
        try full.require(versions: 0...1, path: path, offset: start)
        let count = try MP4Error.reading(path) { () throws(BinaryReadError) -> Int in
            if full.version == 1 { try reader.skip(4) }
            return Int(try reader.readUInt8())
        }
        // Each chapter takes at least 9 bytes: check before reserving anything.
        guard count * 9 <= reader.remaining else {
            throw .invalidField(path: path, field: "chapter count", value: Int64(count), offset: reader.offset - 1,
                                allowed: "at most \(reader.remaining / 9) (9 bytes each in the \(reader.remaining) that remain)")
        }
        chapters = try MP4Error.reading(path) { () throws(BinaryReadError) -> [MovieChapter] in
            var chapters: [MovieChapter] = []
            chapters.reserveCapacity(count)
            for _ in 0..<count {
                let time = try reader.readUInt64()
                let length = Int(try reader.readUInt8())
                let title = try reader.readBytes(length)
                chapters.append(MovieChapter(startTime: MediaTime(value: Int64(clamping: time), timescale: Self.timescale),
                                             title: String(decoding: title, as: UTF8.self)))
            }
            return chapters
        }
    }

    /// The whole box, header included.
    public var box: [UInt8] {
        var box = BoxWriter()
        box.fullBox("chpl", version: 1) { b in
            b.u32(0)
            let written = chapters.prefix(Self.maximumCount)
            b.u8(UInt8(written.count))
            for chapter in written {
                let time = (try? chapter.startTime.converted(to: Self.timescale, rounding: .nearest).value) ?? 0
                b.u64(UInt64(max(0, time)))
                let title = Self.truncated(chapter.title, to: 255)
                b.u8(UInt8(title.count))
                b.raw(title)
            }
        }
        return box.bytes
    }

    /// The UTF-8 of `text`, cut at a character boundary to at most `limit` bytes.
    static func truncated(_ text: String, to limit: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        for character in text {
            let utf8 = Array(String(character).utf8)
            guard bytes.count + utf8.count <= limit else { break }
            bytes += utf8
        }
        return bytes
    }
}
