internal import MediaCore

/// A Vorbis comment block (the Vorbis I specification 5.2.1; RFC 9639 8.6 for FLAC, RFC 7845 5.2
/// for Opus's `OpusTags`): a vendor string and `NAME=value` fields, lengths little-endian.
public struct VorbisComment: Sendable, Hashable {
    /// Who wrote the stream.
    public var vendor: String
    /// The fields, in order: names are ASCII, case-insensitive (`TITLE`, `ARTIST`, `CHAPTER001`).
    public var fields: [Field]
    /// Bytes after the last field that are kept when the block is written again (an `OpusTags`
    /// packet's binary data whose first byte's low bit is set, RFC 7845 5.2); empty otherwise.
    public var trailingBytes: [UInt8] = []

    /// One `NAME=value` field.
    public struct Field: Sendable, Hashable {
        /// The field name.
        public var name: String
        /// The value (UTF-8).
        public var value: String

        /// A field `name=value`.
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A block from `vendor` holding `fields`.
    public init(vendor: String, fields: [Field] = []) {
        self.vendor = vendor
        self.fields = fields
    }

    /// Reads a block's body (RFC 9639 8.6): the vendor string, the field count, each field;
    /// a field without `=` is kept as a name with an empty value. Bytes after the last field
    /// are kept in ``trailingBytes``.
    ///
    /// - Throws: ``AudioBitstreamError`` when a length runs past the bytes (the count is checked
    ///   against the bytes that remain before anything is allocated).
    public init(bytes: some Collection<UInt8>) throws(AudioBitstreamError) {
        var reader = ByteReader(Array(bytes))
        func string() throws(AudioBitstreamError) -> String {
            try reading("Vorbis comment") { () throws(BinaryReadError) in
                let length = Int(try reader.readLittleEndian(byteCount: 4))
                return String(decoding: try reader.readBytes(length), as: UTF8.self)
            }
        }
        vendor = try string()
        let count = try reading("Vorbis comment") { () throws(BinaryReadError) in Int(try reader.readLittleEndian(byteCount: 4)) }
        // Each field takes at least its four length bytes.
        guard count <= reader.remaining / 4 else {
            throw AudioBitstreamError("Vorbis comment", "\(count) fields cannot fit in the \(reader.remaining) bytes left")
        }
        fields = []
        fields.reserveCapacity(count)
        for _ in 0..<count {
            let field = try string()
            if let equals = field.firstIndex(of: "=") {
                fields.append(Field(String(field[..<equals]), String(field[field.index(after: equals)...])))
            } else {
                fields.append(Field(field, ""))
            }
        }
        trailingBytes = Array(reader.remainingBytes)
    }

    /// The values of the fields named `name` (case-insensitive), in order.
    public func values(of name: String) -> [String] {
        let upper = name.uppercased()
        return fields.filter { $0.name.uppercased() == upper }.map(\.value)
    }

    /// The block's body.
    public var bytes: [UInt8] {
        var writer = ByteWriter()
        func string(_ text: String) {
            let utf8 = Array(text.utf8)
            writer.writeLittleEndian(UInt64(utf8.count), byteCount: 4)
            writer.write(contentsOf: utf8)
        }
        string(vendor)
        writer.writeLittleEndian(UInt64(fields.count), byteCount: 4)
        for field in fields { string(field.name + "=" + field.value) }
        writer.write(contentsOf: trailingBytes)
        return writer.bytes
    }

    /// The Vorbis field names of KeyFrameKit's common tag names (`title` → `TITLE`, `track` →
    /// `TRACKNUMBER`, `date` → `DATE`); another name is written upper-cased.
    public static func fieldName(ofTag key: String) -> String {
        switch key {
        case "track": "TRACKNUMBER"
        case "disc": "DISCNUMBER"
        case "album_artist": "ALBUMARTIST"
        default: key.uppercased()
        }
    }
}
