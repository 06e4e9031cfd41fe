public import MediaCore

/// The metadata of a movie or a track, from its `udta` box (ISO/IEC 14496-12, 8.10.1
/// UserDataBox): the iTunes-style `meta` box (14496-12, 8.11.1 MetaBox, with handler `mdir`
/// and an `ilst` item list, as Apple and FFmpeg write it; or handler `mdta` with a `keys` box,
/// as QuickTime writes it), QuickTime `©xxx` text entries, and the 3GPP asset boxes of
/// 3GPP TS 26.244, 8 (`titl`, `perf`, `albm`, `yrrc`, …).
///
/// Parsing is lenient about items and strict about containers: an item that does not parse is
/// skipped; a `udta`, `meta` or `ilst` whose boxes do not fit is an error naming the box and
/// the byte offset.
public struct MetadataTags: Sendable, Hashable {
    /// `©nam` (or the 3GPP `titl`, or an `mdta` key `com.apple.quicktime.title` or `title`, as
    /// FFmpeg's `-movflags use_metadata_tags` writes it; likewise for the other fields).
    public var title: String?
    /// `©ART` (or `perf`, or `com.apple.quicktime.artist`).
    public var artist: String?
    /// `©alb` (or `albm`, or `com.apple.quicktime.album`).
    public var album: String?
    /// `©too`, the encoding tool (or `©enc`, `©swr`, `com.apple.quicktime.software`).
    public var encoder: String?
    /// `©cmt` (or `com.apple.quicktime.comment`).
    public var comment: String?
    /// `©day` (or `yrrc`, or `com.apple.quicktime.creationdate`).
    public var date: String?
    /// Every tag, in file order (a key may repeat: an item with several `data` boxes, or the
    /// same key in `ilst` and as a QuickTime entry).
    public var all: [MetadataTag]
    /// The iTunes gapless information of a `----:com.apple.iTunes:iTunSMPB` tag that parses.
    public var gapless: ITunesGaplessInfo?

    /// The tags `all`, with the named fields and ``gapless`` taken from the first tag of each
    /// kind.
    public init(all: [MetadataTag] = []) {
        self.all = all
        func first(_ keys: Set<String>) -> String? { all.first { keys.contains($0.key) }?.value }
        title = first(["©nam", "titl", "com.apple.quicktime.title", "title"])
        artist = first(["©ART", "perf", "com.apple.quicktime.artist", "artist"])
        album = first(["©alb", "albm", "com.apple.quicktime.album", "album"])
        encoder = first(["©too", "©enc", "©swr", "com.apple.quicktime.software", "encoder"])
        comment = first(["©cmt", "com.apple.quicktime.comment", "comment"])
        date = first(["©day", "yrrc", "com.apple.quicktime.creationdate", "date"])
        gapless = first([Self.gaplessKey]).flatMap { ITunesGaplessInfo(text: $0) }
    }

    /// The key of the iTunes gapless tag.
    public static let gaplessKey = "----:com.apple.iTunes:iTunSMPB"

    /// Whether there is no tag at all.
    public var isEmpty: Bool { all.isEmpty }

    /// The value of the first tag with `key`.
    public subscript(key: String) -> String? { all.first { $0.key == key }?.value }

    /// Reads the tags of a `udta` box (of `moov` or of a `trak`) from its payload.
    ///
    /// - Throws: ``MP4Error`` when the boxes of the `udta`, of a `meta` or of an `ilst` do not
    ///   fit their container (with the path and the byte offset). A malformed item is skipped.
    public static func parse(udta reader: ByteReader, path: BoxPath) throws(MP4Error) -> MetadataTags {
        var tags: [MetadataTag] = []
        var children = try BoxIterator(reader, path: path)
        while let child = try children.next() {
            let type = child.header.type
            if type == "meta" {
                tags += try metaTags(child.payload, path: child.path)
            } else if threeGPPTypes.contains(type) {
                if let tag = threeGPPTag(type, child.payload) { tags.append(tag) }
            } else if type.rawValue >> 24 == 0xA9 {
                if let tag = quickTimeTextTag(type, child.payload) { tags.append(tag) }
            }
        }
        return MetadataTags(all: tags)
    }

    /// Reads the tags of a `meta` box from its payload (for a `meta` directly in `moov`, as
    /// QuickTime writes it); the payload may start with a FullBox header or not.
    public static func parse(meta reader: ByteReader, path: BoxPath) throws(MP4Error) -> MetadataTags {
        MetadataTags(all: try metaTags(reader, path: path))
    }
}

extension MetadataTags {
    /// 3GPP TS 26.244 asset boxes read as text.
    static let threeGPPTypes: Set<FourCharacterCode> = ["titl", "dscp", "cprt", "perf", "auth", "gnre", "albm", "yrrc"]

    /// Box types with an integer value in iTunes files that some writers mark "implicit" (0).
    static let integerItems: Set<String> = ["tmpo", "cpil", "pgap", "pcst", "hdvd", "stik", "rtng", "akID", "sfID", "cnID",
                                           "atID", "plID", "geID", "cmID", "tves", "tvsn", "gnre", "shwm"]

    /// The tags of a `meta` box: a FullBox in ISO files, a plain box in some QuickTime files.
    /// When the first 8 bytes of the payload read as the header of a box that fits, the
    /// payload holds boxes directly; otherwise a version and flags come first.
    static func metaTags(_ payload: ByteReader, path: BoxPath) throws(MP4Error) -> [MetadataTag] {
        var reader = payload
        if !startsWithBox(reader) {
            try MP4Error.reading(path) { () throws(BinaryReadError) in try reader.skip(4) }
        }
        var handler: FourCharacterCode?
        var keys: [String] = []
        var lists: [(ByteReader, BoxPath)] = []
        var children = try BoxIterator(reader, path: path)
        while let child = try children.next() {
            switch child.header.type {
            case "hdlr":
                // FullBox header, pre_defined, handler_type; a short hdlr leaves the handler unknown.
                var box = child.payload
                if (try? box.skip(8)) != nil, let word = try? box.readUInt32() {
                    handler = FourCharacterCode(rawValue: word)
                }
            case "keys":
                keys = quickTimeKeys(child.payload)
            case "ilst":
                lists.append((child.payload, child.path))
            default:
                break
            }
        }
        var tags: [MetadataTag] = []
        for (list, listPath) in lists {
            tags += try itemListTags(list, path: listPath, keys: handler == "mdta" ? keys : nil)
        }
        return tags
    }

    /// Whether the reader starts with a plausible box header: a size that fits, and a type of
    /// printable characters (or `©`).
    static func startsWithBox(_ reader: ByteReader) -> Bool {
        var probe = reader
        guard let size = try? probe.readUInt32(), let type = try? probe.readBytes(4) else { return false }
        guard size >= 8, Int64(size) <= Int64(reader.remaining) else { return false }
        return type.allSatisfy { (0x20...0x7E).contains($0) || $0 == 0xA9 }
    }

    /// The key names of a QuickTime `keys` box (FullBox, entry_count, then size, namespace,
    /// name); empty when it does not parse.
    static func quickTimeKeys(_ payload: ByteReader) -> [String] {
        var reader = payload
        do throws(BinaryReadError) {
            try reader.skip(4)
            let count = try reader.readUInt32()
            guard Int64(count) * 8 <= Int64(reader.remaining) else { return [] }
            var keys: [String] = []
            for _ in 0..<count {
                let size = Int(try reader.readUInt32())
                guard size >= 8 else { return [] }
                try reader.skip(4)   // key_namespace, usually 'mdta'
                keys.append(String(decoding: try reader.readBytes(size - 8), as: UTF8.self))
            }
            return keys
        } catch {
            return []
        }
    }

    /// The tags of an `ilst`: one per `data` box of each item. `keys` maps the item types of an
    /// `mdta` list (1-based indices) to names.
    static func itemListTags(_ list: ByteReader, path: BoxPath, keys: [String]?) throws(MP4Error) -> [MetadataTag] {
        var tags: [MetadataTag] = []
        var items = try BoxIterator(list, path: path)
        while let item = try items.next() {
            let type = item.header.type
            var key: String
            if let keys {
                let index = Int(type.rawValue)
                guard index >= 1, index <= keys.count else { continue }
                key = keys[index - 1]
            } else {
                key = latin1(type)
            }
            var values: [(type: UInt32, bytes: [UInt8])] = []
            var mean = ""
            var name = ""
            do throws(MP4Error) {
                var children = try BoxIterator(item.payload, path: item.path)
                while let child = try children.next() {
                    var payload = child.payload
                    switch child.header.type {
                    case "data":
                        let (indicator, bytes) = try MP4Error.reading(child.path) { () throws(BinaryReadError) in
                            let indicator = try payload.readUInt32()
                            try payload.skip(4)   // locale
                            return (indicator, try payload.readBytes(payload.remaining))
                        }
                        values.append((indicator & 0xFF_FFFF, bytes))
                    case "mean", "name":
                        let text = try MP4Error.reading(child.path) { () throws(BinaryReadError) in
                            try payload.skip(4)
                            return try payload.readBytes(payload.remaining)
                        }
                        if child.header.type == "mean" { mean = utf8(text) } else { name = utf8(text) }
                    default:
                        break
                    }
                }
            } catch {
                continue   // a malformed item is skipped
            }
            if type == "----" { key = "----:\(mean):\(name)" }
            for value in values {
                let picture = ITunesMetadata.Artwork.Format(rawValue: value.type).map { ITunesMetadata.Artwork(data: value.bytes, format: $0) }
                tags.append(MetadataTag(key: key, value: format(value.bytes, type: value.type, key: key), picture: picture))
            }
        }
        return tags
    }

    /// A `data` box's value as text (well-known types of the iTunes metadata format).
    static func format(_ bytes: [UInt8], type: UInt32, key: String) -> String {
        switch type {
        case 1, 4:
            return utf8(bytes)
        case 2, 5:
            return utf16(bytes)
        case 21:
            if let value = bigEndian(bytes) {
                let shift = UInt64(64 - 8 * bytes.count)
                return String(Int64(bitPattern: value << shift) >> Int64(shift))
            }
        case 22:
            if let value = bigEndian(bytes) { return String(value) }
        case 23 where bytes.count == 4:
            return String(Float(bitPattern: UInt32(truncatingIfNeeded: bigEndian(bytes) ?? 0)))
        case 24 where bytes.count == 8:
            return String(Double(bitPattern: bigEndian(bytes) ?? 0))
        case 13:
            return "JPEG image, \(bytes.count) bytes"
        case 14:
            return "PNG image, \(bytes.count) bytes"
        case 27:
            return "BMP image, \(bytes.count) bytes"
        case 0:
            if key == "trkn" || key == "disk", bytes.count >= 6 {
                let number = Int(bytes[2]) << 8 | Int(bytes[3])
                let total = Int(bytes[4]) << 8 | Int(bytes[5])
                return total > 0 ? "\(number)/\(total)" : "\(number)"
            }
            if integerItems.contains(key), let value = bigEndian(bytes) { return String(value) }
        default:
            break
        }
        return "\(bytes.count) bytes of data type \(type)"
    }

    /// A big-endian unsigned integer of 1, 2, 3, 4 or 8 bytes.
    static func bigEndian(_ bytes: [UInt8]) -> UInt64? {
        guard [1, 2, 3, 4, 8].contains(bytes.count) else { return nil }
        return bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// A QuickTime `udta` text entry (QuickTime File Format, "User data text"): a 16-bit length,
    /// a 16-bit language code, the text; the first string of the entry is taken. Language codes
    /// below 0x400 (Macintosh codes) mean Mac OS Roman text, as FFmpeg reads it.
    static func quickTimeTextTag(_ type: FourCharacterCode, _ payload: ByteReader) -> MetadataTag? {
        var reader = payload
        guard let length = try? reader.readUInt16(), let language = try? reader.readUInt16(),
              let text = try? reader.readBytes(Int(length)) else { return nil }
        let value = language < 0x400 || language == 0x7FFF ? macRoman(text) : utf8(text)
        return MetadataTag(key: latin1(type), value: value)
    }

    /// A 3GPP asset box (TS 26.244, 8): FullBox, then a pad bit and a 15-bit language, then a
    /// null-terminated UTF-8 or UTF-16 (with byte-order mark) string; `yrrc` holds a 16-bit year.
    static func threeGPPTag(_ type: FourCharacterCode, _ payload: ByteReader) -> MetadataTag? {
        var reader = payload
        guard (try? reader.skip(4)) != nil else { return nil }
        if type == "yrrc" {
            guard let year = try? reader.readUInt16() else { return nil }
            return MetadataTag(key: type.description, value: String(year))
        }
        guard (try? reader.skip(2)) != nil else { return nil }
        var bytes = Array(reader.remainingBytes)
        if bytes.count >= 2, bytes[0] == 0xFE, bytes[1] == 0xFF {
            // UTF-16: up to the first 16-bit null.
            var end = 2
            while end + 1 < bytes.count, bytes[end] != 0 || bytes[end + 1] != 0 { end += 2 }
            return MetadataTag(key: type.description, value: utf16(Array(bytes[2..<min(end, bytes.count)])))
        }
        if let end = bytes.firstIndex(of: 0) { bytes = Array(bytes[..<end]) }
        return MetadataTag(key: type.description, value: utf8(bytes))
    }

    /// A box type with each byte read as ISO 8859-1, so `0xA9` is `©` (as Apple and mutagen
    /// spell the keys).
    static func latin1(_ type: FourCharacterCode) -> String {
        var text = ""
        for shift in stride(from: 24, through: 0, by: -8) {
            text.unicodeScalars.append(Unicode.Scalar(UInt8(truncatingIfNeeded: type.rawValue >> UInt32(shift))))
        }
        return text
    }

    /// UTF-8 text without trailing nulls (invalid sequences become U+FFFD).
    static func utf8(_ bytes: [UInt8]) -> String {
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0 { end -= 1 }
        return String(decoding: bytes[..<end], as: UTF8.self)
    }

    /// Big-endian UTF-16 text without trailing nulls; an odd last byte is dropped.
    static func utf16(_ bytes: [UInt8]) -> String {
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var index = 0
        while index + 1 < bytes.count {
            units.append(UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]))
            index += 2
        }
        while units.last == 0 { units.removeLast() }
        return String(decoding: units, as: UTF16.self)
    }

    /// Mac OS Roman text (trailing nulls dropped).
    static func macRoman(_ bytes: [UInt8]) -> String {
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0 { end -= 1 }
        var text = ""
        for byte in bytes[..<end] {
            let scalar = byte < 0x80 ? UInt32(byte) : UInt32(macRomanHigh[Int(byte) - 0x80])
            text.unicodeScalars.append(Unicode.Scalar(scalar) ?? "\u{FFFD}")
        }
        return text
    }

    /// Unicode code points of Mac OS Roman bytes 0x80 to 0xFF.
    static let macRomanHigh: [UInt16] = [
        0x00C4, 0x00C5, 0x00C7, 0x00C9, 0x00D1, 0x00D6, 0x00DC, 0x00E1, 0x00E0, 0x00E2, 0x00E4, 0x00E3, 0x00E5, 0x00E7, 0x00E9, 0x00E8,
        0x00EA, 0x00EB, 0x00ED, 0x00EC, 0x00EE, 0x00EF, 0x00F1, 0x00F3, 0x00F2, 0x00F4, 0x00F6, 0x00F5, 0x00FA, 0x00F9, 0x00FB, 0x00FC,
        0x2020, 0x00B0, 0x00A2, 0x00A3, 0x00A7, 0x2022, 0x00B6, 0x00DF, 0x00AE, 0x00A9, 0x2122, 0x00B4, 0x00A8, 0x2260, 0x00C6, 0x00D8,
        0x221E, 0x00B1, 0x2264, 0x2265, 0x00A5, 0x00B5, 0x2202, 0x2211, 0x220F, 0x03C0, 0x222B, 0x00AA, 0x00BA, 0x03A9, 0x00E6, 0x00F8,
        0x00BF, 0x00A1, 0x00AC, 0x221A, 0x0192, 0x2248, 0x2206, 0x00AB, 0x00BB, 0x2026, 0x00A0, 0x00C0, 0x00C3, 0x00D5, 0x0152, 0x0153,
        0x2013, 0x2014, 0x201C, 0x201D, 0x2018, 0x2019, 0x00F7, 0x25CA, 0x00FF, 0x0178, 0x2044, 0x20AC, 0x2039, 0x203A, 0xFB01, 0xFB02,
        0x2021, 0x00B7, 0x201A, 0x201E, 0x2030, 0x00C2, 0x00CA, 0x00C1, 0x00CB, 0x00C8, 0x00CD, 0x00CE, 0x00CF, 0x00CC, 0x00D3, 0x00D4,
        0xF8FF, 0x00D2, 0x00DA, 0x00DB, 0x00D9, 0x0131, 0x02C6, 0x02DC, 0x00AF, 0x02D8, 0x02D9, 0x02DA, 0x00B8, 0x02DD, 0x02DB, 0x02C7,
    ]
}
