public import MediaCore

/// A page of an Ogg bitstream (RFC 3533 6): the capture pattern `OggS`, a header (flags, the
/// granule position, the stream's serial number, the page's sequence number, its CRC), the
/// segment table of lacing values, and the body: the packets, or parts of them, the table cuts
/// it into (a lacing value of 255 continues the packet; a smaller one ends it).
public struct OggPage: Sendable, Hashable {
    /// The header's flags.
    public struct Flags: OptionSet, Sendable, Hashable {
        /// The raw value.
        public let rawValue: UInt8
        /// Flags of a raw value.
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The first packet on the page continues one from the page before.
        public static let continued = Flags(rawValue: 0x01)
        /// The first page of the stream.
        public static let beginningOfStream = Flags(rawValue: 0x02)
        /// The last page of the stream.
        public static let endOfStream = Flags(rawValue: 0x04)
    }

    /// The flags.
    public var flags: Flags
    /// The codec's position at the end of the last packet that ends on the page (for Opus,
    /// samples at 48 kHz, the pre-skip included); -1 when none ends on it.
    public var granulePosition: Int64
    /// The logical stream's serial number.
    public var serialNumber: UInt32
    /// The page's number in its stream, from 0.
    public var sequenceNumber: UInt32
    /// The lacing values.
    public var segmentTable: [UInt8]
    /// The body: the lacing values' bytes.
    public var body: [UInt8]

    /// The most lacing values a page holds.
    public static let maximumSegments = 255
    /// The header's length before the segment table.
    public static let headerLength = 27

    /// A page of `body` cut by `segmentTable`.
    public init(flags: Flags, granulePosition: Int64, serialNumber: UInt32, sequenceNumber: UInt32, segmentTable: [UInt8], body: [UInt8]) {
        self.flags = flags
        self.granulePosition = granulePosition
        self.serialNumber = serialNumber
        self.sequenceNumber = sequenceNumber
        self.segmentTable = segmentTable
        self.body = body
    }

    /// Reads the page at the reader's position and checks its CRC (unless `verifyingCRC` is
    /// false: a fuzz target reaches past it so).
    ///
    /// - Throws: ``AudioBitstreamError`` when there is no capture pattern, the version is not 0,
    ///   the page runs past the bytes, or the CRC does not match (naming the page's offset).
    public static func read(_ reader: inout ByteReader, verifyingCRC: Bool = true) throws(AudioBitstreamError) -> OggPage {
        let start = reader.offset
        let structure = "Ogg page at byte \(start)"
        let header = try reading(structure) { () throws(BinaryReadError) in try reader.readBytes(headerLength) }
        guard header.starts(with: Array("OggS".utf8)) else { throw AudioBitstreamError(structure, "no OggS capture pattern") }
        guard header[4] == 0 else { throw AudioBitstreamError(structure, "stream structure version \(header[4]); only 0 is defined") }
        var fields = ByteReader(header, range: 5..<headerLength)
        let (flags, granule, serial, sequence, crc, count) = try reading(structure) { () throws(BinaryReadError) in
            (try fields.readUInt8(), Int64(bitPattern: try fields.readLittleEndian(byteCount: 8)), UInt32(try fields.readLittleEndian(byteCount: 4)),
             UInt32(try fields.readLittleEndian(byteCount: 4)), UInt32(try fields.readLittleEndian(byteCount: 4)), Int(try fields.readUInt8()))
        }
        let table = try reading(structure) { () throws(BinaryReadError) in try reader.readBytes(count) }
        let length = table.reduce(0) { $0 + Int($1) }
        let body = try reading(structure) { () throws(BinaryReadError) in try reader.readBytes(length) }
        let page = OggPage(flags: Flags(rawValue: flags & 0x07), granulePosition: granule, serialNumber: serial, sequenceNumber: sequence,
                           segmentTable: table, body: body)
        var unchecked = header
        for index in 22..<26 { unchecked[index] = 0 }
        let computed = CyclicRedundancyCheck.crc32(body, preset: CyclicRedundancyCheck.crc32(unchecked + table, preset: 0))
        guard computed == crc || !verifyingCRC else {
            throw AudioBitstreamError(structure, "CRC is 0x\(String(crc, radix: 16)); the page's bytes give 0x\(String(computed, radix: 16))")
        }
        guard flags & 0xF8 == 0 else { throw AudioBitstreamError(structure, "reserved header flags 0x\(String(flags, radix: 16))") }
        return page
    }

    /// The page's bytes, its CRC computed.
    public var bytes: [UInt8] {
        var writer = ByteWriter()
        writer.write(contentsOf: Array("OggS".utf8))
        writer.write(UInt8(0))
        writer.write(flags.rawValue)
        writer.writeLittleEndian(UInt64(bitPattern: granulePosition), byteCount: 8)
        writer.writeLittleEndian(UInt64(serialNumber), byteCount: 4)
        writer.writeLittleEndian(UInt64(sequenceNumber), byteCount: 4)
        writer.writeLittleEndian(0, byteCount: 4)
        // At most 255 lacing values (a longer table is cut, with its bytes).
        let table = segmentTable.prefix(Self.maximumSegments)
        writer.write(UInt8(table.count))
        writer.write(contentsOf: table)
        writer.write(contentsOf: body)
        var bytes = writer.bytes
        let crc = CyclicRedundancyCheck.crc32(bytes, preset: 0)
        for index in 0..<4 { bytes[22 + index] = UInt8((crc >> (8 * UInt32(index))) & 0xFF) }
        return bytes
    }

    /// The body cut into its packets' parts: each with whether it ends its packet (a lacing
    /// value below 255 ends it; a part that runs to the page's end without one continues on the
    /// next page).
    public var parts: [(bytes: ArraySlice<UInt8>, endsPacket: Bool)] {
        var parts: [(ArraySlice<UInt8>, Bool)] = []
        var start = 0, end = 0
        for value in segmentTable {
            end = min(body.count, end + Int(value))
            if value < 255 {
                parts.append((body[start..<end], true))
                start = end
            }
        }
        if start < end || segmentTable.last == 255 { parts.append((body[start..<end], false)) }
        return parts
    }
}

/// The pages of one logical Ogg stream being written (RFC 3533): packets in, each with the
/// granule position at its end, pages out. A page is closed when the next packet would take it
/// past ``OggPage/maximumSegments`` lacing values or past `pageDuration` of granule, or when
/// the caller asks (``flush(endOfStream:granulePosition:)``); a packet longer than a page's
/// 255 × 255 bytes continues on the next page.
///
/// The packet last appended stays pending until the next one or a flush, so that the stream's
/// last page, the one that carries the end-of-stream flag and the trimming granule position,
/// always holds a packet.
public struct OggStreamWriter: Sendable {
    /// The stream's serial number.
    public let serialNumber: UInt32
    /// Granule a page spans before it is closed at a packet boundary.
    public var pageDuration: Int64
    private var sequence: UInt32 = 0
    private var segments: [UInt8] = []
    private var body: [UInt8] = []
    private var pageStartGranule: Int64?
    private var lastGranule: Int64 = -1
    private var continued = false
    private var wroteFirst = false

    /// A stream `serialNumber` whose pages span `pageDuration` of granule at most (for Opus,
    /// 48,000: one second, as `opusenc` and FFmpeg write), its first page numbered
    /// `sequenceNumber` (the beginning of the stream when 0; a rewrite of a stream's later pages
    /// starts further on).
    public init(serialNumber: UInt32, pageDuration: Int64, sequenceNumber: UInt32 = 0) {
        self.serialNumber = serialNumber
        self.pageDuration = pageDuration
        sequence = sequenceNumber
        wroteFirst = sequenceNumber > 0
    }

    /// Adds `packet`, which ends at `granulePosition`, and returns the pages it closed.
    public mutating func append(_ packet: [UInt8], granulePosition: Int64) -> [OggPage] {
        var pages: [OggPage] = []
        let lacing = packet.count / 255 + 1
        if !segments.isEmpty, segments.count + lacing > OggPage.maximumSegments
            || (pageStartGranule.map { granulePosition - $0 > pageDuration } ?? false) {
            pages.append(closePage(flags: []))
        }
        if pageStartGranule == nil { pageStartGranule = lastGranule < 0 ? 0 : lastGranule }
        var remaining = packet[...]
        while true {
            let room = OggPage.maximumSegments - segments.count
            let whole = remaining.count / 255
            if whole < room {
                segments += [UInt8](repeating: 255, count: whole) + [UInt8(remaining.count % 255)]
                body += remaining
                break
            }
            // Fill this page with 255s and continue the packet on the next.
            segments += [UInt8](repeating: 255, count: room)
            body += remaining.prefix(room * 255)
            remaining = remaining.dropFirst(room * 255)
            pages.append(closePage(flags: [], granule: -1))
            continued = true
        }
        lastGranule = granulePosition
        return pages
    }

    /// Closes the pending page (its granule the last packet's, or `granulePosition` when given,
    /// which trims the end of the last page of a stream), flagged end of stream when asked.
    public mutating func flush(endOfStream: Bool = false, granulePosition: Int64? = nil) -> [OggPage] {
        guard !segments.isEmpty else { return [] }
        return [closePage(flags: endOfStream ? .endOfStream : [], granule: granulePosition ?? lastGranule)]
    }

    private mutating func closePage(flags: OggPage.Flags, granule: Int64? = nil) -> OggPage {
        var all = flags
        if !wroteFirst { all.insert(.beginningOfStream) }
        if continued { all.insert(.continued) }
        let page = OggPage(flags: all, granulePosition: granule ?? lastGranule, serialNumber: serialNumber, sequenceNumber: sequence,
                           segmentTable: segments, body: body)
        sequence += 1
        wroteFirst = true
        continued = false
        segments = []
        body = []
        pageStartGranule = nil
        return page
    }
}

/// The packets of one logical Ogg stream, put together from its pages' parts (RFC 3533 6: a
/// packet ends at a lacing value below 255 and may continue across pages).
public struct OggPacketAssembler: Sendable {
    /// The most bytes one packet may take; a longer one is an error.
    public let maximumPacketBytes: Int
    private var partial: [UInt8] = []
    private var hasPartial = false

    /// An assembler of packets of at most `maximumPacketBytes`.
    public init(maximumPacketBytes: Int) {
        self.maximumPacketBytes = maximumPacketBytes
    }

    /// The packets `page` completes, in order; the part of one it begins is kept for the next
    /// page.
    ///
    /// - Throws: ``AudioBitstreamError`` for a packet longer than ``maximumPacketBytes``.
    public mutating func append(_ page: OggPage) throws(AudioBitstreamError) -> [[UInt8]] {
        var packets: [[UInt8]] = []
        // A page that says it continues nothing drops what a lost page left unfinished.
        if !page.flags.contains(.continued) {
            partial = []
            hasPartial = false
        }
        // A page that continues a packet this assembler never began (a page lost before it, or
        // the stream read from its middle): that packet's end is dropped (RFC 3533 6).
        let orphan = page.flags.contains(.continued) && !hasPartial
        for (index, part) in page.parts.enumerated() {
            if orphan, index == 0 { continue }
            guard partial.count + part.bytes.count <= maximumPacketBytes else {
                throw AudioBitstreamError("Ogg page \(page.sequenceNumber)", "a packet longer than \(maximumPacketBytes) bytes")
            }
            partial += part.bytes
            hasPartial = true
            if part.endsPacket {
                packets.append(partial)
                partial = []
                hasPartial = false
            }
        }
        return packets
    }

    /// Whether a packet is unfinished, waiting for the next page.
    public var isInsidePacket: Bool { hasPartial }
}
