internal import MediaCore

/// A Vorbis comment block (the Vorbis I specification 5.2.1; RFC 9639 8.6 for FLAC, RFC 7845 5.2
/// for Opus's `OpusTags`): a vendor string and `NAME=value` fields, lengths little-endian.
public struct VorbisComment: Sendable, Hashable {
    /// Who wrote the stream.
    public var vendor: String
    /// The fields, in order: names are ASCII, case-insensitive (`TITLE`, `ARTIST`, `CHAPTER001`).
    public var fields: [Field]

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
