public import MediaCore

/// `sidx` (ISO/IEC 14496-12, 8.16.3 SegmentIndexBox): where each subsegment of a segment lies
/// and how long it lasts.
public struct SegmentIndex: Sendable, Hashable {
    /// One reference.
    public struct Reference: Sendable, Hashable {
        /// `reference_type`: 1 when it points at another `sidx`.
        public var isIndex: Bool
        /// `referenced_size` in bytes.
        public var size: UInt32
        /// `subsegment_duration` in the index's timescale.
        public var duration: UInt32
        /// `starts_with_SAP`.
        public var startsWithSAP: Bool
    }

    /// `reference_ID`.
    public var referenceID: UInt32
    /// `timescale`.
    public var timescale: UInt32
    /// `earliest_presentation_time`.
    public var earliestPresentationTime: UInt64
    /// `first_offset`: bytes from the end of this box to the first referenced byte.
    public var firstOffset: UInt64
    /// The references.
    public var references: [Reference]

    /// Parses the payload of a `sidx`.
    public init(from payload: ByteReader, path: BoxPath) throws(MP4Error) {
        var reader = payload
        let full = try FullBoxHeader.parse(from: &reader, path: path)
        (referenceID, timescale, earliestPresentationTime, firstOffset) = try MP4Error.reading(path) {
            () throws(BinaryReadError) -> (UInt32, UInt32, UInt64, UInt64) in
            let id = try reader.readUInt32()
            let scale = try reader.readUInt32()
            let time = full.version == 0 ? UInt64(try reader.readUInt32()) : try reader.readUInt64()
            let offset = full.version == 0 ? UInt64(try reader.readUInt32()) : try reader.readUInt64()
            return (id, scale, time, offset)
        }
        let count = try MP4Error.reading(path) { () throws(BinaryReadError) -> UInt16 in
            try reader.skip(2)
            return try reader.readUInt16()
        }
        try reader.checkTable(count: UInt32(count), entrySize: 12, path: path, field: "reference_count")
        var references: [Reference] = []
        references.reserveCapacity(Int(count))
        try MP4Error.reading(path) { () throws(BinaryReadError) in
            for _ in 0..<count {
                let word = try reader.readUInt32()
                let duration = try reader.readUInt32()
                let sap = try reader.readUInt32()
                references.append(Reference(isIndex: word >> 31 == 1, size: word & 0x7FFF_FFFF, duration: duration, startsWithSAP: sap >> 31 == 1))
            }
        }
        self.references = references
    }
}
