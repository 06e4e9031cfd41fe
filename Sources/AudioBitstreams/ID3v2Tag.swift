internal import MediaCore

/// An ID3v2 tag (ID3v2.4.0 structure, with ID3v2.3.0 read too): a 10-byte header, frames,
/// padding. KeyFrameKit writes version 2.4 with UTF-8 text, the picture as `APIC`, and chapters
/// as the ID3v2 Chapter Frame Addendum's `CHAP` and `CTOC` (podcast players read these).
///
/// Reading checks every size against the bytes that remain, undoes unsynchronisation (the whole
/// tag's in 2.3, a frame's in 2.4), and keeps a frame it does not model (compressed, encrypted,
/// or of another kind) as ``Frame/other(id:flags:body:)``, so a rewrite loses nothing.
public struct ID3v2Tag: Sendable, Hashable {
    /// The major version read (3 or 4); a tag is written as 4.
    public var majorVersion: UInt8
    /// The frames, in order.
    public var frames: [Frame]

    /// One frame.
    public enum Frame: Sendable, Hashable {
        /// A text information frame (`T***` but `TXXX`; 4.2): its values (2.4 separates several
        /// with a NUL).
        case text(id: String, values: [String])
        /// A user-defined text frame (`TXXX`, 4.2.6).
        case userText(description: String, value: String)
        /// A comment (`COMM`, 4.10): a three-letter ISO 639-2 language, a description, the text.
        case comment(language: String, description: String, text: String)
        /// An attached picture (`APIC`, 4.14).
        case picture(Picture)
        /// A chapter (`CHAP`, ID3v2 Chapter Frame Addendum 3.1).
        case chapter(Chapter)
        /// A table of contents (`CTOC`, ID3v2 Chapter Frame Addendum 3.2).
        case tableOfContents(TableOfContents)
        /// A URL link frame (`W***` but `WXXX`, 4.3.1).
        case url(id: String, url: String)
        /// A user-defined URL (`WXXX`, 4.3.2).
        case userURL(description: String, url: String)
        /// Any other frame, or one compressed or encrypted: its ID, its flags (2.4 layout) and
        /// its body as stored.
        case other(id: String, flags: UInt16, body: [UInt8])

        /// The frame's four-character ID.
        public var id: String {
            switch self {
            case .text(let id, _), .url(let id, _), .other(let id, _, _): id
            case .userText: "TXXX"
            case .comment: "COMM"
            case .picture: "APIC"
            case .chapter: "CHAP"
            case .tableOfContents: "CTOC"
            case .userURL: "WXXX"
            }
        }
    }

    /// An attached picture.
    public struct Picture: Sendable, Hashable {
        /// The MIME type (`image/jpeg`, `image/png`).
        public var mimeType: String
        /// The picture type (4.14): 3 is the front cover.
        public var pictureType: UInt8
        /// A description.
        public var description: String
        /// The image file's bytes.
        public var data: [UInt8]

        /// A picture of `data`.
        public init(mimeType: String, pictureType: UInt8 = 3, description: String = "", data: [UInt8]) {
            self.mimeType = mimeType
            self.pictureType = pictureType
            self.description = description
            self.data = data
        }
    }

    /// A chapter: its element ID, its span in milliseconds and bytes, and frames of its own
    /// (a `TIT2` title, a `WXXX` link).
    public struct Chapter: Sendable, Hashable {
        /// The element ID, unique in the tag.
        public var elementID: String
        /// The start, in milliseconds from the start of the audio.
        public var startMilliseconds: UInt32
        /// The end, in milliseconds.
        public var endMilliseconds: UInt32
        /// The byte offset of the start, 0xFFFFFFFF when unused.
        public var startOffset: UInt32
        /// The byte offset of the end, 0xFFFFFFFF when unused.
        public var endOffset: UInt32
        /// The chapter's own frames.
        public var subframes: [Frame]

        /// A chapter `elementID` from `start` to `end` milliseconds, its offsets unused.
        public init(elementID: String, startMilliseconds: UInt32, endMilliseconds: UInt32, subframes: [Frame] = []) {
            self.elementID = elementID
            self.startMilliseconds = startMilliseconds
            self.endMilliseconds = endMilliseconds
            startOffset = 0xFFFF_FFFF
            endOffset = 0xFFFF_FFFF
            self.subframes = subframes
        }

        /// The title: the first value of the first `TIT2` subframe.
        public var title: String? {
            for case .text("TIT2", let values) in subframes { return values.first }
            return nil
        }
    }

    /// A table of contents: the chapters (or nested tables) it lists, in order.
    public struct TableOfContents: Sendable, Hashable {
        /// The element ID.
        public var elementID: String
        /// Whether it is the root of the tables.
        public var isTopLevel: Bool
        /// Whether its entries are ordered.
        public var isOrdered: Bool
        /// The element IDs it lists.
        public var children: [String]
        /// Its own frames (a `TIT2` title).
        public var subframes: [Frame]

        /// A table `elementID` listing `children`.
        public init(elementID: String, isTopLevel: Bool = true, isOrdered: Bool = true, children: [String], subframes: [Frame] = []) {
            self.elementID = elementID
            self.isTopLevel = isTopLevel
            self.isOrdered = isOrdered
            self.children = children
            self.subframes = subframes
        }
    }

    /// A version 2.4 tag of `frames`.
    public init(frames: [Frame] = []) {
        majorVersion = 4
        self.frames = frames
    }

    /// The header's length.
    public static let headerLength = 10

    /// The length of the whole tag that `head` starts with (header, frames, padding and a
    /// footer), from its header; `nil` when `head` does not start with one.
    public static func length(ofTagStarting head: some Collection<UInt8>) -> Int? {
        let bytes = Array(head.prefix(10))
        guard bytes.count == 10, bytes[0] == 0x49, bytes[1] == 0x44, bytes[2] == 0x33, bytes[3] != 0xFF, bytes[4] != 0xFF,
              bytes[6..<10].allSatisfy({ $0 < 0x80 }) else { return nil }
        return syncsafe(bytes[6..<10]) + 10 + (bytes[5] & 0x10 != 0 ? 10 : 0)
    }

    /// Reads the tag that `bytes` starts with.
    ///
    /// - Throws: ``AudioBitstreamError`` when there is no header, the version is not 2.3 or 2.4,
    ///   the tag runs past the bytes, or a frame's size runs past the tag.
    public init(bytes: [UInt8]) throws(AudioBitstreamError) {
        guard let length = Self.length(ofTagStarting: bytes) else { throw AudioBitstreamError("ID3v2", "no ID3v2 header") }
        guard bytes[3] == 3 || bytes[3] == 4 else { throw AudioBitstreamError("ID3v2", "version 2.\(bytes[3]) is not read (2.3 and 2.4 are)") }
        guard length <= bytes.count else { throw AudioBitstreamError("ID3v2", "the tag's \(length) bytes run past the \(bytes.count) given") }
        let version = bytes[3]
        let flags = bytes[5]
        var body = Array(bytes[10..<(length - (flags & 0x10 != 0 ? 10 : 0))])
        // 2.3 unsynchronises the whole tag; 2.4 each frame (and says so per frame too).
        if version == 3, flags & 0x80 != 0 { body = Self.resynchronised(body) }
        var reader = ByteReader(body, baseOffset: 10)
        if flags & 0x40 != 0 {
            try reading("ID3v2 extended header") { () throws(BinaryReadError) in
                let size = Int(try reader.readUInt32())
                try reader.skip(version == 4 ? max(0, Self.syncsafe(size) - 4) : size)
            }
        }
        majorVersion = version
        frames = try Self.readFrames(&reader, version: version, tagUnsynchronised: flags & 0x80 != 0, depth: 0)
    }

    /// The tag as version 2.4 bytes: the header, the frames, then `padding` zero bytes (room
    /// for a later edit in place).
    public func bytes(padding: Int = 0) -> [UInt8] {
        var writer = ByteWriter()
        for frame in frames { Self.write(frame, to: &writer) }
        let size = writer.bytes.count + padding
        var header: [UInt8] = [0x49, 0x44, 0x33, 4, 0, 0]
        header += Self.syncsafeBytes(size)
        return header + writer.bytes + [UInt8](repeating: 0, count: padding)
    }

    // MARK: Reading

    static func readFrames(_ reader: inout ByteReader, version: UInt8, tagUnsynchronised: Bool, depth: Int) throws(AudioBitstreamError) -> [Frame] {
        var frames: [Frame] = []
        while reader.remaining >= 10, let first = reader.peekUInt8(), first != 0 {
            let start = reader.offset
            let (id, size, flags) = try reading("ID3v2 frame header at byte \(start)") { () throws(BinaryReadError) in
                let id = try reader.readBytes(4)
                let raw = Int(try reader.readUInt32())
                return (id, raw, try reader.readUInt16())
            }
            guard id.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }) else {
                throw AudioBitstreamError("ID3v2", "a frame ID that is not four letters or digits at byte \(start)")
            }
            let name = String(decoding: id, as: UTF8.self)
            let length = version == 4 ? syncsafe(size) : size
            guard length <= reader.remaining else {
                throw AudioBitstreamError("ID3v2", "frame \(name) at byte \(start) says \(length) bytes; \(reader.remaining) remain")
            }
            var body = try reading("ID3v2 frame \(name)") { () throws(BinaryReadError) in try reader.readBytes(length) }
            // Flags in 2.4's layout: grouping 0x40, compression 0x08, encryption 0x04,
            // unsynchronisation 0x02, data length 0x01 (2.3: compression 0x80, encryption 0x40,
            // grouping 0x20 in the low byte).
            var format = flags & 0xFF
            var status = flags & 0xFF00
            if version == 3 {
                format = (flags & 0x80 != 0 ? 0x08 : 0) | (flags & 0x40 != 0 ? 0x04 : 0) | (flags & 0x20 != 0 ? 0x40 : 0) | (flags & 0x80 != 0 ? 0x01 : 0)
                // 2.3's tag- and file-alter preservation and read-only bits, one place lower in 2.4.
                status = (flags >> 1) & 0x7000
            }
            if format & 0x0C != 0 {
                frames.append(.other(id: name, flags: status | format, body: body))
                continue
            }
            var skip = (format & 0x40 != 0 ? 1 : 0) + (format & 0x01 != 0 ? 4 : 0)
            if version == 4, format & 0x02 != 0 || tagUnsynchronised { body = resynchronised(Array(body.dropFirst(skip))); skip = 0 }
            guard skip <= body.count else { throw AudioBitstreamError("ID3v2", "frame \(name) at byte \(start) is shorter than its flags say") }
            frames.append(try frame(name, Array(body.dropFirst(skip)), flags: flags, version: version, depth: depth, at: start))
        }
        return frames
    }

    static func frame(_ id: String, _ body: [UInt8], flags: UInt16, version: UInt8, depth: Int, at offset: Int64) throws(AudioBitstreamError) -> Frame {
        var reader = ByteReader(body, baseOffset: offset + 10)
        let structure = "ID3v2 frame \(id) at byte \(offset)"
        switch id {
        case "TXXX", "WXXX":
            guard let encoding = body.first else { throw AudioBitstreamError(structure, "empty") }
            let (description, rest) = terminated(body[1...], encoding: encoding)
            if id == "TXXX" { return .userText(description: description, value: text(rest, encoding: encoding).first ?? "") }
            return .userURL(description: description, url: latin1(rest))
        case _ where id.hasPrefix("T"):
            guard let encoding = body.first else { return .text(id: id, values: []) }
            return .text(id: id, values: text(body[1...], encoding: encoding))
        case _ where id.hasPrefix("W"):
            return .url(id: id, url: latin1(body[...]))
        case "COMM":
            guard body.count >= 4 else { throw AudioBitstreamError(structure, "shorter than its language") }
            let (description, rest) = terminated(body[4...], encoding: body[0])
            return .comment(language: latin1(body[1..<4]), description: description, text: text(rest, encoding: body[0]).first ?? "")
        case "APIC":
            guard let encoding = body.first else { throw AudioBitstreamError(structure, "empty") }
            let (mime, afterMIME) = terminated(body[1...], encoding: 0)
            guard let type = afterMIME.first else { throw AudioBitstreamError(structure, "no picture type") }
            let (description, data) = terminated(afterMIME.dropFirst(), encoding: encoding)
            return .picture(Picture(mimeType: mime, pictureType: type, description: description, data: Array(data)))
        case "CHAP", "CTOC":
            guard depth == 0 else { return .other(id: id, flags: version == 3 ? (flags >> 1) & 0x7000 : flags & 0xFF00, body: body) }
            let (elementID, _) = terminated(body[...], encoding: 0)
            try reading(structure) { () throws(BinaryReadError) in try reader.skip(min(reader.remaining, elementID.unicodeScalars.count + 1)) }
            if id == "CHAP" {
                let times = try reading(structure) { () throws(BinaryReadError) in
                    (try reader.readUInt32(), try reader.readUInt32(), try reader.readUInt32(), try reader.readUInt32())
                }
                var chapter = Chapter(elementID: elementID, startMilliseconds: times.0, endMilliseconds: times.1)
                chapter.startOffset = times.2
                chapter.endOffset = times.3
                chapter.subframes = try readFrames(&reader, version: version, tagUnsynchronised: false, depth: depth + 1)
                return .chapter(chapter)
            }
            let (tableFlags, count) = try reading(structure) { () throws(BinaryReadError) in (try reader.readUInt8(), Int(try reader.readUInt8())) }
            var children: [String] = []
            for _ in 0..<count {
                let rest = reader.remainingBytes
                guard !rest.isEmpty else { throw AudioBitstreamError(structure, "lists \(count) entries; the frame ends after \(children.count)") }
                let (child, _) = terminated(rest, encoding: 0)
                children.append(child)
                try reading(structure) { () throws(BinaryReadError) in try reader.skip(min(reader.remaining, child.unicodeScalars.count + 1)) }
            }
            return .tableOfContents(TableOfContents(elementID: elementID, isTopLevel: tableFlags & 0x02 != 0, isOrdered: tableFlags & 0x01 != 0,
                                                    children: children,
                                                    subframes: try readFrames(&reader, version: version, tagUnsynchronised: false, depth: depth + 1)))
        default:
            return .other(id: id, flags: version == 3 ? (flags >> 1) & 0x7000 : flags & 0xFF00, body: body)
        }
    }

    /// The text up to the encoding's terminator (one NUL, or two on a 16-bit boundary in
    /// UTF-16), and the bytes after it; all of them when there is none.
    static func terminated(_ bytes: ArraySlice<UInt8>, encoding: UInt8) -> (String, ArraySlice<UInt8>) {
        let wide = encoding == 1 || encoding == 2
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if wide {
                if index + 1 < bytes.endIndex, bytes[index] == 0, bytes[index + 1] == 0 {
                    return (text(bytes[bytes.startIndex..<index], encoding: encoding).first ?? "", bytes[(index + 2)...])
                }
                index += 2
            } else {
                if bytes[index] == 0 { return (text(bytes[bytes.startIndex..<index], encoding: encoding).first ?? "", bytes[(index + 1)...]) }
                index += 1
            }
        }
        return (text(bytes, encoding: encoding).first ?? "", bytes[bytes.endIndex...])
    }

    /// The NUL-separated values of text in `encoding` (0 ISO-8859-1, 1 UTF-16 with a byte-order
    /// mark, 2 UTF-16BE, 3 UTF-8), without a trailing terminator.
    static func text(_ bytes: ArraySlice<UInt8>, encoding: UInt8) -> [String] {
        let string: String
        switch encoding {
        case 1, 2:
            var units: [UInt16] = []
            units.reserveCapacity(bytes.count / 2)
            var bigEndian = true
            var index = bytes.startIndex
            var atStart = true
            while index + 1 < bytes.endIndex {
                let pair = (bytes[index], bytes[index + 1])
                index += 2
                if encoding == 1, pair == (0xFF, 0xFE) || pair == (0xFE, 0xFF), atStart || units.last == 0 {
                    bigEndian = pair.0 == 0xFE
                    atStart = false
                    continue
                }
                atStart = false
                units.append(bigEndian ? UInt16(pair.0) << 8 | UInt16(pair.1) : UInt16(pair.1) << 8 | UInt16(pair.0))
            }
            string = String(decoding: units, as: UTF16.self)
        case 3: string = String(decoding: bytes, as: UTF8.self)
        default: string = latin1(bytes)
        }
        var values = string.split(separator: "\0", omittingEmptySubsequences: false).map(String.init)
        while values.last == "" { values.removeLast() }
        return values
    }

    /// ISO-8859-1 bytes as a string, one scalar a byte.
    static func latin1(_ bytes: ArraySlice<UInt8>) -> String {
        String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }

    /// `bytes` with each `FF 00` made `FF` again (4.1.2).
    static func resynchronised(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var previous: UInt8 = 0
        for byte in bytes {
            if !(previous == 0xFF && byte == 0) { out.append(byte) }
            previous = byte
        }
        return out
    }

    /// A 28-bit syncsafe integer (four bytes of seven bits).
    static func syncsafe(_ bytes: some Collection<UInt8>) -> Int { bytes.reduce(0) { $0 << 7 | Int($1 & 0x7F) } }
    /// A 32-bit field read as a syncsafe integer.
    static func syncsafe(_ value: Int) -> Int {
        (value >> 24 & 0x7F) << 21 | (value >> 16 & 0x7F) << 14 | (value >> 8 & 0x7F) << 7 | value & 0x7F
    }
    /// `value` as four syncsafe bytes.
    static func syncsafeBytes(_ value: Int) -> [UInt8] {
        [UInt8(value >> 21 & 0x7F), UInt8(value >> 14 & 0x7F), UInt8(value >> 7 & 0x7F), UInt8(value & 0x7F)]
    }

    // MARK: Writing

    static func write(_ frame: Frame, to writer: inout ByteWriter) {
        var body = ByteWriter()
        var flags: UInt16 = 0
        func utf8(_ text: String, terminated: Bool) {
            body.write(contentsOf: Array(text.utf8))
            if terminated { body.write(UInt8(0)) }
        }
        func latin1(_ text: String, terminated: Bool) {
            body.write(contentsOf: text.unicodeScalars.map { $0.value < 256 ? UInt8($0.value) : 0x3F })
            if terminated { body.write(UInt8(0)) }
        }
        switch frame {
        case .text(_, let values):
            body.write(UInt8(3))
            utf8(values.joined(separator: "\0"), terminated: false)
        case .userText(let description, let value):
            body.write(UInt8(3))
            utf8(description, terminated: true)
            utf8(value, terminated: false)
        case .comment(let language, let description, let text):
            body.write(UInt8(3))
            latin1(String(String.UnicodeScalarView((Array(language.unicodeScalars) + Array("XXX".unicodeScalars)).prefix(3))), terminated: false)
            utf8(description, terminated: true)
            utf8(text, terminated: false)
        case .picture(let picture):
            body.write(UInt8(3))
            latin1(picture.mimeType, terminated: true)
            body.write(picture.pictureType)
            utf8(picture.description, terminated: true)
            body.write(contentsOf: picture.data)
        case .chapter(let chapter):
            latin1(chapter.elementID, terminated: true)
            for value in [chapter.startMilliseconds, chapter.endMilliseconds, chapter.startOffset, chapter.endOffset] { body.write(value) }
            for subframe in chapter.subframes { write(subframe, to: &body) }
        case .tableOfContents(let table):
            latin1(table.elementID, terminated: true)
            body.write(UInt8((table.isTopLevel ? 2 : 0) | (table.isOrdered ? 1 : 0)))
            body.write(UInt8(min(255, table.children.count)))
            for child in table.children.prefix(255) { latin1(child, terminated: true) }
            for subframe in table.subframes { write(subframe, to: &body) }
        case .url(_, let url):
            latin1(url, terminated: false)
        case .userURL(let description, let url):
            body.write(UInt8(3))
            utf8(description, terminated: true)
            latin1(url, terminated: false)
        case .other(_, let otherFlags, let bytes):
            flags = otherFlags
            body.write(contentsOf: bytes)
        }
        writer.write(contentsOf: Array(frame.id.utf8.prefix(4)))
        writer.write(contentsOf: syncsafeBytes(body.bytes.count))
        writer.write(flags)
        writer.write(contentsOf: body.bytes)
    }
}
