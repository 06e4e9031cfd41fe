internal import MediaCore

/// One run of `stts` (ISO/IEC 14496-12, 8.6.1.2 TimeToSampleBox): `count` samples of `delta`.
public struct TimeToSampleEntry: Sendable, Hashable {
    /// `sample_count`.
    public var count: UInt32
    /// `sample_delta` in media timescale units.
    public var delta: UInt32

    /// An entry.
    public init(count: UInt32, delta: UInt32) {
        self.count = count
        self.delta = delta
    }
}

/// One run of `ctts` (8.6.1.3 CompositionOffsetBox): `count` samples whose presentation time is
/// their decode time plus `offset` (signed in version 1, and read as signed in version 0 too, as
/// players do).
public struct CompositionOffsetEntry: Sendable, Hashable {
    /// `sample_count`.
    public var count: UInt32
    /// `sample_offset`.
    public var offset: Int32

    /// An entry.
    public init(count: UInt32, offset: Int32) {
        self.count = count
        self.offset = offset
    }
}

/// One entry of `stsc` (8.7.4 SampleToChunkBox).
public struct SampleToChunkEntry: Sendable, Hashable {
    /// `first_chunk` (1-based).
    public var firstChunk: UInt32
    /// `samples_per_chunk`.
    public var samplesPerChunk: UInt32
    /// `sample_description_index` (1-based).
    public var sampleDescriptionIndex: UInt32

    /// An entry.
    public init(firstChunk: UInt32, samplesPerChunk: UInt32, sampleDescriptionIndex: UInt32) {
        self.firstChunk = firstChunk
        self.samplesPerChunk = samplesPerChunk
        self.sampleDescriptionIndex = sampleDescriptionIndex
    }
}

/// Sample sizes from `stsz` or `stz2` (8.7.3): one size for all, or a table.
public enum SampleSizes: Sendable, Hashable {
    /// Every one of `count` samples has `size` bytes.
    case constant(size: UInt32, count: UInt32)
    /// Each sample's size.
    case table([UInt32])

    /// How many samples.
    public var count: Int {
        switch self {
        case .constant(_, let count): Int(count)
        case .table(let sizes): sizes.count
        }
    }

    /// The size of sample `index` (0-based, in range).
    @inlinable
    public func size(at index: Int) -> UInt32 {
        switch self {
        case .constant(let size, _): size
        case .table(let sizes): sizes[index]
        }
    }
}

/// Parsers of the sample table boxes. Each checks its entry count against the bytes the box holds
/// before it allocates, so a table can never be larger than the file describes.
enum SampleTableBoxes {
    static func timeToSample(_ reader: inout ByteReader, path: BoxPath) throws(MP4Error) -> [TimeToSampleEntry] {
        _ = try FullBoxHeader.parse(from: &reader, path: path)
        let count = try MP4Error.reading(path) { () throws(BinaryReadError) in try reader.readUInt32() }
        try reader.checkTable(count: count, entrySize: 8, path: path, field: "entry_count")
        return try MP4Error.reading(path) { () throws(BinaryReadError) -> [TimeToSampleEntry] in
            var entries: [TimeToSampleEntry] = []
            entries.reserveCapacity(Int(count))
            for _ in 0..<count { entries.append(TimeToSampleEntry(count: try reader.readUInt32(), delta: try reader.readUInt32())) }
            return entries
        }
    }

    static func compositionOffsets(_ reader: inout ByteReader, path: BoxPath) throws(MP4Error) -> [CompositionOffsetEntry] {
        _ = try FullBoxHeader.parse(from: &reader, path: path)
        let count = try MP4Error.reading(path) { () throws(BinaryReadError) in try reader.readUInt32() }
        try reader.checkTable(count: count, entrySize: 8, path: path, field: "entry_count")
        return try MP4Error.reading(path) { () throws(BinaryReadError) -> [CompositionOffsetEntry] in
            var entries: [CompositionOffsetEntry] = []
            entries.reserveCapacity(Int(count))
            for _ in 0..<count {
                entries.append(CompositionOffsetEntry(count: try reader.readUInt32(), offset: Int32(bitPattern: try reader.readUInt32())))
            }
            return entries
        }
    }

    /// The `stsc` entries, and a sentence for each entry dropped: one whose `first_chunk` repeats
    /// the next entry's covers no chunk (some muxers write it; mp4parse and FFmpeg read past it),
    /// so it is dropped and reported rather than the track refused.
    static func sampleToChunk(_ reader: inout ByteReader, path: BoxPath) throws(MP4Error) -> (entries: [SampleToChunkEntry], repairs: [String]) {
        _ = try FullBoxHeader.parse(from: &reader, path: path)
        let start = reader.offset
        let count = try MP4Error.reading(path) { () throws(BinaryReadError) in try reader.readUInt32() }
        try reader.checkTable(count: count, entrySize: 12, path: path, field: "entry_count")
        let entries = try MP4Error.reading(path) { () throws(BinaryReadError) -> [SampleToChunkEntry] in
            var entries: [SampleToChunkEntry] = []
            entries.reserveCapacity(Int(count))
            for _ in 0..<count {
                entries.append(SampleToChunkEntry(firstChunk: try reader.readUInt32(), samplesPerChunk: try reader.readUInt32(),
                                                  sampleDescriptionIndex: try reader.readUInt32()))
            }
            return entries
        }
        // first_chunk starts at 1 and increases; an entry that repeats the one before covers
        // no chunk and gives way to the later one.
        var previous: UInt32 = 0
        var kept: [SampleToChunkEntry] = []
        kept.reserveCapacity(entries.count)
        var repairs: [String] = []
        for (index, entry) in entries.enumerated() {
            if index > 0, entry.firstChunk == previous {
                repairs.append("\(path) at byte \(start + 4 + Int64((index - 1) * 12)): entry \(index) repeats first_chunk \(previous) "
                               + "of entry \(index + 1), so covers no chunk; it is ignored")
                kept[kept.count - 1] = entry
                continue
            }
            guard entry.firstChunk > previous else {
                throw .invalidField(path: path, field: "first_chunk of entry \(index + 1)", value: Int64(entry.firstChunk),
                                    offset: start + 4 + Int64(index * 12), allowed: "greater than \(previous)")
            }
            previous = entry.firstChunk
            kept.append(entry)
        }
        if let first = kept.first, first.firstChunk != 1 {
            throw .invalidField(path: path, field: "first_chunk of entry 1", value: Int64(first.firstChunk), offset: start + 4, allowed: "1")
        }
        return (kept, repairs)
    }

    static func sampleSizes(_ reader: inout ByteReader, path: BoxPath) throws(MP4Error) -> SampleSizes {
        _ = try FullBoxHeader.parse(from: &reader, path: path)
        let (size, count) = try MP4Error.reading(path) { () throws(BinaryReadError) in (try reader.readUInt32(), try reader.readUInt32()) }
        if size != 0 { return .constant(size: size, count: count) }
        try reader.checkTable(count: count, entrySize: 4, path: path, field: "sample_count")
        return .table(try MP4Error.reading(path) { () throws(BinaryReadError) -> [UInt32] in
            var sizes: [UInt32] = []
            sizes.reserveCapacity(Int(count))
            for _ in 0..<count { sizes.append(try reader.readUInt32()) }
            return sizes
        })
    }

    static func compactSampleSizes(_ reader: inout ByteReader, path: BoxPath) throws(MP4Error) -> SampleSizes {
        _ = try FullBoxHeader.parse(from: &reader, path: path)
        let start = reader.offset
        let (fieldSize, count) = try MP4Error.reading(path) { () throws(BinaryReadError) -> (UInt8, UInt32) in
            try reader.skip(3)
            return (try reader.readUInt8(), try reader.readUInt32())
        }
        guard [4, 8, 16].contains(fieldSize) else {
            throw .invalidField(path: path, field: "field_size", value: Int64(fieldSize), offset: start + 3, allowed: "4, 8 or 16")
        }
        let bytes = (Int64(count) * Int64(fieldSize) + 7) / 8
        guard bytes <= Int64(reader.remaining) else {
            throw .invalidField(path: path, field: "sample_count", value: Int64(count), offset: start + 4,
                                allowed: "at most \(Int64(reader.remaining) * 8 / Int64(fieldSize)) (the bytes that remain)")
        }
        var bits = reader.bitReader()
        return .table(try MP4Error.reading(path) { () throws(BinaryReadError) -> [UInt32] in
            var sizes: [UInt32] = []
            sizes.reserveCapacity(Int(count))
            for _ in 0..<count { sizes.append(UInt32(try bits.readBits(Int(fieldSize)))) }
            return sizes
        })
    }

    static func chunkOffsets(_ reader: inout ByteReader, path: BoxPath, wide: Bool) throws(MP4Error) -> [UInt64] {
        _ = try FullBoxHeader.parse(from: &reader, path: path)
        let count = try MP4Error.reading(path) { () throws(BinaryReadError) in try reader.readUInt32() }
        try reader.checkTable(count: count, entrySize: wide ? 8 : 4, path: path, field: "entry_count")
        return try MP4Error.reading(path) { () throws(BinaryReadError) -> [UInt64] in
            var offsets: [UInt64] = []
            offsets.reserveCapacity(Int(count))
            for _ in 0..<count { offsets.append(wide ? try reader.readUInt64() : UInt64(try reader.readUInt32())) }
            return offsets
        }
    }

    static func syncSamples(_ reader: inout ByteReader, path: BoxPath) throws(MP4Error) -> [UInt32] {
        _ = try FullBoxHeader.parse(from: &reader, path: path)
        let count = try MP4Error.reading(path) { () throws(BinaryReadError) in try reader.readUInt32() }
        try reader.checkTable(count: count, entrySize: 4, path: path, field: "entry_count")
        return try MP4Error.reading(path) { () throws(BinaryReadError) -> [UInt32] in
            var numbers: [UInt32] = []
            numbers.reserveCapacity(Int(count))
            for _ in 0..<count { numbers.append(try reader.readUInt32()) }
            return numbers
        }
    }
}
