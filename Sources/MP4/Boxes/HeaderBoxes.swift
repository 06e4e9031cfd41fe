public import MediaCore

/// `ftyp` / `styp` (ISO/IEC 14496-12, 4.3 FileTypeBox; 8.16.2 SegmentTypeBox).
public struct FileTypeBox: Sendable, Hashable {
    /// `major_brand`.
    public var majorBrand: FourCharacterCode
    /// `minor_version`.
    public var minorVersion: UInt32
    /// `compatible_brands`.
    public var compatibleBrands: [FourCharacterCode]

    /// Parses the payload.
    public init(from reader: inout ByteReader, path: BoxPath) throws(MP4Error) {
        var r = reader
        let (major, minor) = try MP4Error.reading(path) { () throws(BinaryReadError) in (try r.readUInt32(), try r.readUInt32()) }
        majorBrand = FourCharacterCode(rawValue: major)
        minorVersion = minor
        var brands: [FourCharacterCode] = []
        while r.remaining >= 4 {
            brands.append(FourCharacterCode(rawValue: try MP4Error.reading(path) { () throws(BinaryReadError) in try r.readUInt32() }))
        }
        compatibleBrands = brands
        reader = r
    }
}

/// `mvhd` (ISO/IEC 14496-12, 8.2.2 MovieHeaderBox), versions 0 and 1.
public struct MovieHeaderBox: Sendable, Hashable {
    /// `timescale`: units per second of the movie timeline (edit lists, tkhd durations).
    public var timescale: UInt32
    /// `duration` in movie timescale units.
    public var duration: UInt64
    /// `next_track_ID`.
    public var nextTrackID: UInt32

    /// Parses the payload.
    public init(from reader: inout ByteReader, path: BoxPath) throws(MP4Error) {
        let start = reader.offset
        let full = try FullBoxHeader.parse(from: &reader, path: path)
        try full.require(versions: 0...1, path: path, offset: start)
        let wide = full.version == 1
        let fields = try MP4Error.reading(path) { () throws(BinaryReadError) -> (UInt32, UInt64, UInt32) in
            try reader.skip(wide ? 16 : 8)   // creation and modification times
            let scale = try reader.readUInt32()
            let duration = wide ? try reader.readUInt64() : UInt64(try reader.readUInt32())
            try reader.skip(4 + 2 + 10 + 36 + 24)   // rate, volume, reserved, matrix, pre_defined
            return (scale, duration, try reader.readUInt32())
        }
        (timescale, duration, nextTrackID) = fields
        guard timescale > 0 else {
            throw .invalidField(path: path, field: "timescale", value: 0, offset: start, allowed: "1...\(UInt32.max)")
        }
    }
}

/// `tkhd` (ISO/IEC 14496-12, 8.3.2 TrackHeaderBox), versions 0 and 1.
public struct TrackHeaderBox: Sendable, Hashable {
    /// `flags`: 1 enabled, 2 in movie, 4 in preview.
    public var flags: UInt32
    /// `track_ID`.
    public var trackID: UInt32
    /// `duration` in movie timescale units.
    public var duration: UInt64
    /// The transformation `matrix` (a, b, u, c, d, v, x, y, w).
    public var matrix: [Int32]
    /// `width` (16.16 fixed point), the visual presentation width before the matrix.
    public var width: UInt32
    /// `height` (16.16 fixed point).
    public var height: UInt32

    /// A header with every field given.
    public init(flags: UInt32, trackID: UInt32, duration: UInt64, matrix: [Int32], width: UInt32, height: UInt32) {
        self.flags = flags
        self.trackID = trackID
        self.duration = duration
        self.matrix = matrix
        self.width = width
        self.height = height
    }

    /// Parses the payload.
    public init(from reader: inout ByteReader, path: BoxPath) throws(MP4Error) {
        let start = reader.offset
        let full = try FullBoxHeader.parse(from: &reader, path: path)
        try full.require(versions: 0...1, path: path, offset: start)
        flags = full.flags
        let wide = full.version == 1
        let fields = try MP4Error.reading(path) { () throws(BinaryReadError) -> (UInt32, UInt64, [Int32], UInt32, UInt32) in
            try reader.skip(wide ? 16 : 8)
            let id = try reader.readUInt32()
            try reader.skip(4)
            let duration = wide ? try reader.readUInt64() : UInt64(try reader.readUInt32())
            try reader.skip(8 + 2 + 2 + 2 + 2)   // reserved, layer, alternate_group, volume, reserved
            var matrix: [Int32] = []
            for _ in 0..<9 { matrix.append(Int32(bitPattern: try reader.readUInt32())) }
            return (id, duration, matrix, try reader.readUInt32(), try reader.readUInt32())
        }
        (trackID, duration, matrix, width, height) = fields
    }
}

/// `mdhd` (ISO/IEC 14496-12, 8.4.2 MediaHeaderBox), versions 0 and 1.
public struct MediaHeaderBox: Sendable, Hashable {
    /// `timescale` of the media: sample times and durations count in it.
    public var timescale: UInt32
    /// `duration` in media timescale units.
    public var duration: UInt64
    /// The ISO-639-2/T language code (`und` when unset).
    public var language: String

    /// A header with every field given.
    public init(timescale: UInt32, duration: UInt64, language: String) {
        self.timescale = timescale
        self.duration = duration
        self.language = language
    }

    /// Parses the payload.
    public init(from reader: inout ByteReader, path: BoxPath) throws(MP4Error) {
        let start = reader.offset
        let full = try FullBoxHeader.parse(from: &reader, path: path)
        try full.require(versions: 0...1, path: path, offset: start)
        let wide = full.version == 1
        let fields = try MP4Error.reading(path) { () throws(BinaryReadError) -> (UInt32, UInt64, UInt16) in
            try reader.skip(wide ? 16 : 8)
            let scale = try reader.readUInt32()
            let duration = wide ? try reader.readUInt64() : UInt64(try reader.readUInt32())
            return (scale, duration, try reader.readUInt16())
        }
        (timescale, duration, _) = fields
        guard timescale > 0 else {
            throw .invalidField(path: path, field: "timescale", value: 0, offset: start, allowed: "1...\(UInt32.max)")
        }
        let packed = fields.2
        let letters = [(packed >> 10) & 0x1F, (packed >> 5) & 0x1F, packed & 0x1F]
        language = letters.allSatisfy({ $0 > 0 }) ? String(decoding: letters.map { UInt8($0 + 0x60) }, as: UTF8.self) : "und"
    }
}

/// `hdlr` (ISO/IEC 14496-12, 8.4.3 HandlerBox).
public struct HandlerBox: Sendable, Hashable {
    /// `handler_type`: `soun`, `vide`, `hint`, `meta`, `text`, `sbtl`, …
    public var handlerType: FourCharacterCode
    /// `name`, without its terminator.
    public var name: String

    /// Parses the payload.
    public init(from reader: inout ByteReader, path: BoxPath) throws(MP4Error) {
        _ = try FullBoxHeader.parse(from: &reader, path: path)
        let type = try MP4Error.reading(path) { () throws(BinaryReadError) -> UInt32 in
            try reader.skip(4)
            let type = try reader.readUInt32()
            try reader.skip(12)
            return type
        }
        handlerType = FourCharacterCode(rawValue: type)
        let rest = Array(reader.remainingBytes)
        name = String(decoding: rest.prefix { $0 != 0 }, as: UTF8.self)
    }
}

/// One entry of `elst` (ISO/IEC 14496-12, 8.6.6 EditListBox).
public struct EditListEntry: Sendable, Hashable {
    /// `segment_duration` in movie timescale units.
    public var segmentDuration: UInt64
    /// `media_time` in media timescale units; −1 is an empty edit (a gap).
    public var mediaTime: Int64
    /// `media_rate_integer`.
    public var mediaRate: Int16

    /// An entry.
    public init(segmentDuration: UInt64, mediaTime: Int64, mediaRate: Int16 = 1) {
        self.segmentDuration = segmentDuration
        self.mediaTime = mediaTime
        self.mediaRate = mediaRate
    }

    /// Parses the entries of an `elst` payload (versions 0 and 1).
    static func parseList(from reader: inout ByteReader, path: BoxPath) throws(MP4Error) -> [EditListEntry] {
        let start = reader.offset
        let full = try FullBoxHeader.parse(from: &reader, path: path)
        try full.require(versions: 0...1, path: path, offset: start)
        let count = try MP4Error.reading(path) { () throws(BinaryReadError) in try reader.readUInt32() }
        let wide = full.version == 1
        try reader.checkTable(count: count, entrySize: wide ? 20 : 12, path: path, field: "entry_count")
        return try MP4Error.reading(path) { () throws(BinaryReadError) -> [EditListEntry] in
            var entries: [EditListEntry] = []
            entries.reserveCapacity(Int(count))
            for _ in 0..<count {
                let duration = wide ? try reader.readUInt64() : UInt64(try reader.readUInt32())
                let time = wide ? Int64(bitPattern: try reader.readUInt64()) : Int64(Int32(bitPattern: try reader.readUInt32()))
                let rate = Int16(bitPattern: try reader.readUInt16())
                try reader.skip(2)
                entries.append(EditListEntry(segmentDuration: duration, mediaTime: time, mediaRate: rate))
            }
            return entries
        }
    }
}
