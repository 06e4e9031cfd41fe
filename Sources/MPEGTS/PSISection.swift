public import MediaCore

/// A long-form PSI section (ISO/IEC 13818-1, 2.4.4.10 and the tables of 2.4.4.3 and 2.4.4.8):
/// the header every table with `section_syntax_indicator` 1 starts with, the table's bytes, and
/// the `CRC_32` (Annex A) that ends it.
public struct PSISection: Sendable, Hashable {
    /// `table_id`: 0x00 for a program association section, 0x02 for a program map section.
    public var tableID: UInt8
    /// `transport_stream_id` (PAT) or `program_number` (PMT).
    public var tableIDExtension: UInt16
    /// `version_number`: 5 bits.
    public var versionNumber: UInt8
    /// `current_next_indicator`: the table applies now (not next).
    public var currentNextIndicator: Bool
    /// `section_number`.
    public var sectionNumber: UInt8
    /// `last_section_number`.
    public var lastSectionNumber: UInt8
    /// The table's bytes between `last_section_number` and `CRC_32`.
    public var body: [UInt8]

    /// A section with the given fields.
    public init(tableID: UInt8, tableIDExtension: UInt16, versionNumber: UInt8 = 0, currentNextIndicator: Bool = true,
                sectionNumber: UInt8 = 0, lastSectionNumber: UInt8 = 0, body: [UInt8]) {
        self.tableID = tableID
        self.tableIDExtension = tableIDExtension
        self.versionNumber = versionNumber & 0x1F
        self.currentNextIndicator = currentNextIndicator
        self.sectionNumber = sectionNumber
        self.lastSectionNumber = lastSectionNumber
        self.body = body
    }

    /// The longest body a section holds: `section_length` is at most 1021 (2.4.4.3), of which
    /// 5 bytes of header and 4 of CRC.
    public static let maximumBodyLength = 1021 - 9

    /// `section_length` for a section of `bodyLength` bytes of table.
    static func sectionLength(bodyLength: Int) -> Int { 5 + bodyLength + 4 }

    /// The section's bytes from `table_id` to `CRC_32`, the CRC computed over all before it.
    ///
    /// A body longer than ``maximumBodyLength`` is a programming error, caught here.
    public var bytes: [UInt8] {
        precondition(body.count <= Self.maximumBodyLength, "a PSI section body of \(body.count) bytes is longer than section_length allows")
        let length = Self.sectionLength(bodyLength: body.count)
        var out: [UInt8] = [tableID, 0xB0 | UInt8(length >> 8), UInt8(truncatingIfNeeded: length),
                            UInt8(tableIDExtension >> 8), UInt8(truncatingIfNeeded: tableIDExtension),
                            0xC0 | (versionNumber & 0x1F) << 1 | (currentNextIndicator ? 1 : 0), sectionNumber, lastSectionNumber]
        out += body
        let crc = MPEGCRC32.checksum(out)
        out += [UInt8(crc >> 24), UInt8(truncatingIfNeeded: crc >> 16), UInt8(truncatingIfNeeded: crc >> 8), UInt8(truncatingIfNeeded: crc)]
        return out
    }

    /// How many bytes the section starting at `bytes` occupies (`section_length` + 3), once its
    /// first 3 bytes are there; `nil` before.
    static func totalLength(of bytes: some Collection<UInt8>) -> Int? {
        guard bytes.count >= 3 else { return nil }
        let index = bytes.startIndex
        let high = bytes[bytes.index(index, offsetBy: 1)]
        let low = bytes[bytes.index(index, offsetBy: 2)]
        return 3 + (Int(high & 0x0F) << 8 | Int(low))
    }

    /// Parses the section at the reader's position, `structure` naming it in errors.
    ///
    /// - Throws: ``TransportStreamError/invalidField(structure:field:value:offset:allowed:)`` for
    ///   `section_syntax_indicator` 0 or a `section_length` outside 9...1021;
    ///   ``TransportStreamError/truncated(structure:_:)`` for a section longer than the bytes;
    ///   ``TransportStreamError/crcMismatch(structure:offset:stored:computed:)``.
    public init(from reader: inout ByteReader, structure: String) throws(TransportStreamError) {
        let start = reader.offset
        var head = reader
        let (tableID, flagsAndLength) = try TransportStreamError.reading(structure) { () throws(BinaryReadError) in
            (try head.readUInt8(), try head.readUInt16())
        }
        guard flagsAndLength & 0x8000 != 0 else {
            throw .invalidField(structure: structure, field: "section_syntax_indicator", value: 0, offset: start + 1, allowed: "1")
        }
        let length = Int(flagsAndLength & 0x0FFF)
        guard (9...1021).contains(length) else {
            throw .invalidField(structure: structure, field: "section_length", value: Int64(length), offset: start + 1, allowed: "9...1021")
        }
        var section = try TransportStreamError.reading(structure) { () throws(BinaryReadError) in try reader.readReader(3 + length) }
        let whole = section.remainingBytes
        let computed = MPEGCRC32.checksum(whole.dropLast(4))
        let stored = whole.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard computed == stored else {
            throw .crcMismatch(structure: structure, offset: start + Int64(length) - 1, stored: stored, computed: computed)
        }
        self = try TransportStreamError.reading(structure) { () throws(BinaryReadError) -> PSISection in
            try section.skip(3)
            let extensionValue = try section.readUInt16()
            let version = try section.readUInt8()
            let number = try section.readUInt8()
            let last = try section.readUInt8()
            let body = try section.readBytes(length - 9)
            return PSISection(tableID: tableID, tableIDExtension: extensionValue, versionNumber: (version >> 1) & 0x1F,
                              currentNextIndicator: version & 1 != 0, sectionNumber: number, lastSectionNumber: last, body: body)
        }
    }
}
