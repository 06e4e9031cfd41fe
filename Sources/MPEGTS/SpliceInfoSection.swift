public import MediaCore

/// A SCTE-35 splice information section (ANSI/SCTE 35 9.6, `splice_info_section()`): the cue
/// that marks an ad break's start (out of the network) and its return, as HLS carries it in
/// `EXT-X-DATERANGE`'s `SCTE35-OUT`/`-IN` (RFC 8216bis 4.4.5.1.1), DASH under
/// `urn:scte:scte35:2013:bin`, and a transport stream on a PID of its own.
///
/// KeyFrameKit writes the unencrypted section (protocol version 0, `tier` 0xFFF, `sap_type`
/// 3, "not specified") with one command: a `splice_insert` (9.7.3) or a `time_signal` (9.7.4)
/// whose `segmentation_descriptor` (10.3.3) says what starts or ends, then the `CRC_32` of
/// ISO/IEC 13818-1 Annex A. Reading checks the CRC, every length against the bytes that
/// remain, and keeps a command or descriptor it does not model as its bytes.
public struct SpliceInfoSection: Sendable, Hashable {
    /// The command (9.7).
    public enum Command: Sendable, Hashable {
        /// `splice_null` (9.7.1): a heartbeat.
        case null
        /// `splice_insert` (9.7.3).
        case insert(SpliceInsert)
        /// `time_signal` (9.7.4): a time, which the descriptors give a meaning.
        case timeSignal(ptsTime: UInt64?)
        /// Any other command: its type and bytes.
        case other(type: UInt8, bytes: [UInt8])

        /// `splice_command_type` (table 7).
        public var type: UInt8 {
            switch self {
            case .null: 0x00
            case .insert: 0x05
            case .timeSignal: 0x06
            case .other(let type, _): type
            }
        }
    }

    /// A `splice_insert()` (9.7.3) of the whole program (`program_splice_flag` 1).
    public struct SpliceInsert: Sendable, Hashable {
        /// `splice_event_id`: the same in an out and its in.
        public var eventID: UInt32
        /// `out_of_network_indicator`: 1 leaves the network (the break starts), 0 returns.
        public var outOfNetwork: Bool
        /// `splice_time()`'s `pts_time`, 90 kHz; `nil` with `splice_immediate_flag` 1.
        public var ptsTime: UInt64?
        /// `break_duration()`'s `duration`, 90 kHz, with `auto_return` 1; `nil` without one.
        public var breakDuration: UInt64?
        /// `unique_program_id`.
        public var uniqueProgramID: UInt16
        /// `avail_num`.
        public var availNumber: UInt8
        /// `avails_expected`.
        public var availsExpected: UInt8

        /// A splice of the whole program.
        public init(eventID: UInt32, outOfNetwork: Bool, ptsTime: UInt64?, breakDuration: UInt64? = nil, uniqueProgramID: UInt16 = 1,
                    availNumber: UInt8 = 0, availsExpected: UInt8 = 0) {
            self.eventID = eventID
            self.outOfNetwork = outOfNetwork
            self.ptsTime = ptsTime
            self.breakDuration = breakDuration
            self.uniqueProgramID = uniqueProgramID
            self.availNumber = availNumber
            self.availsExpected = availsExpected
        }
    }

    /// A `segmentation_descriptor()` (10.3.3) of the whole program, delivery not restricted.
    public struct Segmentation: Sendable, Hashable {
        /// `segmentation_event_id`.
        public var eventID: UInt32
        /// `segmentation_type_id` (table 23): 0x34 a provider placement opportunity starts,
        /// 0x35 it ends; 0x30/0x31 a provider advertisement; 0x22/0x23 a break.
        public var typeID: UInt8
        /// `segmentation_duration`, 90 kHz; `nil` without one.
        public var duration: UInt64?
        /// `segmentation_upid_type` (table 22) and the UPID's bytes: 0x0C (MPU) or 0x09
        /// (ADI), 0 and none by default.
        public var upidType: UInt8
        /// The UPID's bytes.
        public var upid: [UInt8]
        /// `segment_num`.
        public var segmentNumber: UInt8
        /// `segments_expected`.
        public var segmentsExpected: UInt8

        /// A placement opportunity's start.
        public static let placementOpportunityStart: UInt8 = 0x34
        /// A placement opportunity's end.
        public static let placementOpportunityEnd: UInt8 = 0x35

        /// A segmentation descriptor.
        public init(eventID: UInt32, typeID: UInt8, duration: UInt64? = nil, upidType: UInt8 = 0, upid: [UInt8] = [],
                    segmentNumber: UInt8 = 0, segmentsExpected: UInt8 = 0) {
            self.eventID = eventID
            self.typeID = typeID
            self.duration = duration
            self.upidType = upidType
            self.upid = upid
            self.segmentNumber = segmentNumber
            self.segmentsExpected = segmentsExpected
        }

        /// Whether `sub_segment_num` and `sub_segments_expected` follow (10.3.3.1: the
        /// placement-opportunity starts).
        var hasSubSegments: Bool { [0x34, 0x36, 0x38, 0x3A, 0x44, 0x46].contains(typeID) }
    }

    /// A splice descriptor (10.2).
    public enum Descriptor: Sendable, Hashable {
        /// A `segmentation_descriptor()` (tag 0x02).
        case segmentation(Segmentation)
        /// Any other descriptor: its tag and the bytes after its length.
        case other(tag: UInt8, bytes: [UInt8])
    }

    /// `pts_adjustment`, 90 kHz, added to every `pts_time`.
    public var ptsAdjustment: UInt64
    /// The command.
    public var command: Command
    /// The descriptors.
    public var descriptors: [Descriptor]

    /// A section.
    public init(command: Command, descriptors: [Descriptor] = [], ptsAdjustment: UInt64 = 0) {
        self.command = command
        self.descriptors = descriptors
        self.ptsAdjustment = ptsAdjustment
    }

    /// `table_id`.
    public static let tableID: UInt8 = 0xFC
    /// `CUEI`: the identifier of SCTE's own descriptors (10.2).
    static let identifier: UInt32 = 0x4355_4549
    /// A 33-bit PTS.
    static let ptsMask: UInt64 = (1 << 33) - 1

    /// The section's bytes, `CRC_32` included.
    public var bytes: [UInt8] {
        let commandBytes = Self.commandBytes(command)
        var loop: [UInt8] = []
        for descriptor in descriptors { loop += Self.descriptorBytes(descriptor) }
        var body = BitWriter()
        body.write(UInt8(0), bits: 8)  // protocol_version
        body.writeFlag(false)  // encrypted_packet
        body.write(UInt8(0), bits: 6)  // encryption_algorithm
        body.write(ptsAdjustment & Self.ptsMask, bits: 33)
        body.write(UInt8(0), bits: 8)  // cw_index
        body.write(UInt16(0xFFF), bits: 12)  // tier
        body.write(UInt16(commandBytes.count), bits: 12)
        body.write(command.type, bits: 8)
        var section = body.bytes + commandBytes
        section += [UInt8(truncatingIfNeeded: loop.count >> 8), UInt8(truncatingIfNeeded: loop.count)] + loop
        // section_length counts what follows it, the CRC included.
        let length = section.count + 4
        var head = BitWriter()
        head.write(Self.tableID, bits: 8)
        head.writeFlag(false)  // section_syntax_indicator
        head.writeFlag(false)  // private_indicator
        head.write(UInt8(3), bits: 2)  // sap_type: not specified
        head.write(UInt16(length), bits: 12)
        section = head.bytes + section
        let crc = MPEGCRC32.checksum(section)
        return section + [UInt8(crc >> 24), UInt8(truncatingIfNeeded: crc >> 16), UInt8(truncatingIfNeeded: crc >> 8), UInt8(truncatingIfNeeded: crc)]
    }

    /// `0x` and the section's bytes in upper-case hex: the attribute value of RFC 8216bis
    /// 4.4.5.1.1's `SCTE35-OUT`, `SCTE35-IN` and `SCTE35-CMD`.
    public var hexadecimal: String { "0x" + bytes.hexDigits(uppercase: true) }

    private static func spliceTime(_ pts: UInt64?, into writer: inout BitWriter) {
        if let pts {
            writer.writeFlag(true)
            writer.write(UInt8(0x3F), bits: 6)
            writer.write(pts & ptsMask, bits: 33)
        } else {
            writer.writeFlag(false)
            writer.write(UInt8(0x7F), bits: 7)
        }
    }

    private static func commandBytes(_ command: Command) -> [UInt8] {
        var writer = BitWriter()
        switch command {
        case .null: break
        case .timeSignal(let pts): spliceTime(pts, into: &writer)
        case .insert(let insert):
            writer.write(insert.eventID, bits: 32)
            writer.writeFlag(false)  // splice_event_cancel_indicator
            writer.write(UInt8(0x7F), bits: 7)
            writer.writeFlag(insert.outOfNetwork)
            writer.writeFlag(true)  // program_splice_flag
            writer.writeFlag(insert.breakDuration != nil)
            writer.writeFlag(insert.ptsTime == nil)  // splice_immediate_flag
            writer.write(UInt8(0xF), bits: 4)
            if insert.ptsTime != nil { spliceTime(insert.ptsTime, into: &writer) }
            if let duration = insert.breakDuration {
                writer.writeFlag(true)  // auto_return
                writer.write(UInt8(0x3F), bits: 6)
                writer.write(duration & ptsMask, bits: 33)
            }
            writer.write(insert.uniqueProgramID, bits: 16)
            writer.write(insert.availNumber, bits: 8)
            writer.write(insert.availsExpected, bits: 8)
        case .other(_, let bytes): return bytes
        }
        return writer.bytes
    }

    private static func descriptorBytes(_ descriptor: Descriptor) -> [UInt8] {
        switch descriptor {
        case .other(let tag, let bytes):
            return [tag, UInt8(min(255, bytes.count))] + bytes.prefix(255)
        case .segmentation(let segmentation):
            var writer = BitWriter()
            writer.write(identifier, bits: 32)
            writer.write(segmentation.eventID, bits: 32)
            writer.writeFlag(false)  // segmentation_event_cancel_indicator
            writer.writeFlag(false)  // segmentation_event_id_compliance_indicator
            writer.write(UInt8(0x3F), bits: 6)
            writer.writeFlag(true)  // program_segmentation_flag
            writer.writeFlag(segmentation.duration != nil)
            writer.writeFlag(true)  // delivery_not_restricted_flag
            writer.write(UInt8(0x1F), bits: 5)
            if let duration = segmentation.duration { writer.write(duration & ((1 << 40) - 1), bits: 40) }
            // The descriptor's length is one byte: the UPID is cut to what fits beside the other fields.
            let upid = segmentation.upid.prefix(255 - 24)
            writer.write(segmentation.upidType, bits: 8)
            writer.write(UInt8(upid.count), bits: 8)
            for byte in upid { writer.write(byte, bits: 8) }
            writer.write(segmentation.typeID, bits: 8)
            writer.write(segmentation.segmentNumber, bits: 8)
            writer.write(segmentation.segmentsExpected, bits: 8)
            if segmentation.hasSubSegments {
                writer.write(UInt8(0), bits: 8)
                writer.write(UInt8(0), bits: 8)
            }
            let body = writer.bytes
            return [0x02, UInt8(min(255, body.count))] + body
        }
    }
}

extension SpliceInfoSection {
    /// Reads a whole section (`bytes` holds it and nothing after).
    ///
    /// - Throws: ``TransportStreamError/truncated(structure:_:)`` for a section shorter than
    ///   its fields or lengths say; ``TransportStreamError/crcMismatch(structure:offset:stored:computed:)``
    ///   for a `CRC_32` that does not check; ``TransportStreamError/invalidField(structure:field:value:offset:allowed:)``
    ///   for a wrong table ID, a `section_length` other than the bytes, an encrypted section,
    ///   or a command or descriptor longer than what holds it.
    public init(parsing bytes: [UInt8]) throws(TransportStreamError) {
        let structure = "SCTE-35 splice_info_section"
        func invalid(_ field: String, _ value: Int, at offset: Int, allowed: String) -> TransportStreamError {
            .invalidField(structure: structure, field: field, value: Int64(value), offset: Int64(offset), allowed: allowed)
        }
        guard bytes.count >= 17 else {
            throw .truncated(structure: structure, BinaryReadError(offset: 0, needed: 17, available: bytes.count, unit: .bytes))
        }
        guard bytes[0] == Self.tableID else { throw invalid("table_id", Int(bytes[0]), at: 0, allowed: "0xFC") }
        let length = Int(bytes[1] & 0x0F) << 8 | Int(bytes[2])
        guard length + 3 == bytes.count else { throw invalid("section_length", length, at: 1, allowed: "\(bytes.count - 3), the bytes after it") }
        let tail = bytes.count - 4
        let stored = UInt32(bytes[tail]) << 24 | UInt32(bytes[tail + 1]) << 16 | UInt32(bytes[tail + 2]) << 8 | UInt32(bytes[tail + 3])
        let computed = MPEGCRC32.checksum(bytes[..<tail])
        guard stored == computed else { throw .crcMismatch(structure: structure, offset: Int64(tail), stored: stored, computed: computed) }
        func malformed(_ field: String, _ value: Int, allowed: String) -> TransportStreamError { invalid(field, value, at: 3, allowed: allowed) }
        var reader = BitReader(bytes, range: 3..<(bytes.count - 4))
        func bits(_ count: Int) throws(TransportStreamError) -> UInt64 {
            do { return try reader.readBits(count) } catch { throw .truncated(structure: structure, error) }
        }
        func flag() throws(TransportStreamError) -> Bool { try bits(1) == 1 }
        func skip(_ count: Int) throws(TransportStreamError) {
            do { try reader.skipBits(count) } catch { throw .truncated(structure: structure, error) }
        }
        // splice_time() (9.8.1): the PTS when time_specified_flag is set.
        func spliceTime() throws(TransportStreamError) -> UInt64? {
            guard try flag() else {
                try skip(7)
                return nil
            }
            try skip(6)
            return try bits(33)
        }
        _ = try bits(8)  // protocol_version
        guard try !flag() else { throw malformed("encrypted_packet", 1, allowed: "0 (an encrypted section is not read)") }
        _ = try bits(6)
        ptsAdjustment = try bits(33)
        _ = try bits(8 + 12)
        let commandLength = Int(try bits(12))
        let type = UInt8(try bits(8))
        guard commandLength == 0xFFF || commandLength * 8 <= reader.bitsRemaining else {
            throw malformed("splice_command_length", commandLength, allowed: "at most the \(reader.bitsRemaining / 8) bytes left")
        }
        let commandStart = reader.bitsConsumed
        switch type {
        case 0x00: command = .null
        case 0x06: command = .timeSignal(ptsTime: try spliceTime())
        case 0x05:
            let eventID = UInt32(try bits(32))
            let cancelled = try flag()
            _ = try bits(7)
            guard !cancelled else {
                command = .insert(SpliceInsert(eventID: eventID, outOfNetwork: false, ptsTime: nil))
                break
            }
            let out = try flag()
            let program = try flag()
            let hasDuration = try flag()
            let immediate = try flag()
            _ = try bits(4)
            var pts: UInt64?
            if program, !immediate { pts = try spliceTime() }
            if !program {
                let components = Int(try bits(8))
                for _ in 0..<components {
                    _ = try bits(8)
                    if !immediate { _ = try spliceTime() }
                }
            }
            var duration: UInt64?
            if hasDuration {
                _ = try bits(7)
                duration = try bits(33)
            }
            command = .insert(SpliceInsert(eventID: eventID, outOfNetwork: out, ptsTime: pts, breakDuration: duration,
                                           uniqueProgramID: UInt16(try bits(16)), availNumber: UInt8(try bits(8)),
                                           availsExpected: UInt8(try bits(8))))
        default:
            var body: [UInt8] = []
            for _ in 0..<commandLength { body.append(UInt8(try bits(8))) }
            command = .other(type: type, bytes: body)
        }
        // The length the section gives wins over what the command read.
        let read = reader.bitsConsumed - commandStart
        guard read <= commandLength * 8 || commandLength == 0xFFF else {
            throw malformed("splice_command_length", commandLength, allowed: "at least the \((read + 7) / 8) bytes of the command")
        }
        if commandLength != 0xFFF { try skip(commandLength * 8 - read) }
        let loopLength = Int(try bits(16))
        guard loopLength * 8 <= reader.bitsRemaining else {
            throw malformed("descriptor_loop_length", loopLength, allowed: "at most the \(reader.bitsRemaining / 8) bytes left")
        }
        var descriptors: [Descriptor] = []
        var left = loopLength
        while left >= 2 {
            let tag = UInt8(try bits(8))
            let size = Int(try bits(8))
            guard size + 2 <= left else { throw malformed("descriptor_length", size, allowed: "at most the \(left - 2) bytes left in the loop") }
            var body: [UInt8] = []
            for _ in 0..<size { body.append(UInt8(try bits(8))) }
            left -= size + 2
            descriptors.append(tag == 0x02 ? (Self.segmentation(body).map(Descriptor.segmentation) ?? .other(tag: tag, bytes: body)) : .other(tag: tag, bytes: body))
        }
        self.descriptors = descriptors
    }

    /// A segmentation descriptor's body (after its tag and length) of the whole program, or
    /// `nil` for one this reader does not model (cancelled, components, or too short).
    private static func segmentation(_ body: [UInt8]) -> Segmentation? {
        var reader = BitReader(body)
        do throws(BinaryReadError) {
            guard UInt32(try reader.readBits(32)) == identifier else { return nil }
            let eventID = UInt32(try reader.readBits(32))
            guard try !reader.readFlag() else { return nil }
            _ = try reader.readBits(7)
            guard try reader.readFlag() else { return nil }
            let hasDuration = try reader.readFlag()
            _ = try reader.readBits(6)
            let duration: UInt64? = hasDuration ? try reader.readBits(40) : nil
            let upidType = UInt8(try reader.readBits(8))
            let upidLength = Int(try reader.readBits(8))
            guard upidLength * 8 <= reader.bitsRemaining else { return nil }
            var upid: [UInt8] = []
            for _ in 0..<upidLength { upid.append(UInt8(try reader.readBits(8))) }
            return Segmentation(eventID: eventID, typeID: UInt8(try reader.readBits(8)), duration: duration, upidType: upidType, upid: upid,
                                segmentNumber: UInt8(try reader.readBits(8)), segmentsExpected: UInt8(try reader.readBits(8)))
        } catch { return nil }
    }
}

extension SpliceInfoSection {
    /// The `splice_insert` of an ad break's start (out of the network, with the planned
    /// duration and `auto_return`) or end (back in), at the marker's time in 90 kHz plus
    /// `ptsOrigin` (a transport stream's first PTS); `nil` for another kind of marker.
    ///
    /// The `splice_event_id` is the marker's ID when that is a number, else a hash of it (FNV-1a),
    /// so that a start and its end share it.
    public init?(marker: StreamMarker, ptsOrigin: UInt64 = 0) {
        guard marker.kind == .adBreakStart || marker.kind == .adBreakEnd else { return nil }
        func ticks(_ time: MediaTime) -> UInt64 { UInt64(max(0, (time.seconds * 90_000).rounded())) }
        let out = marker.kind == .adBreakStart
        self.init(command: .insert(SpliceInsert(
            eventID: Self.eventID(marker.id), outOfNetwork: out, ptsTime: (ticks(marker.time) + ptsOrigin) & Self.ptsMask,
            breakDuration: out ? marker.duration.map(ticks) : nil)))
    }

    /// A `splice_event_id` for an ID: the number it is, or its FNV-1a hash.
    static func eventID(_ id: String?) -> UInt32 {
        guard let id else { return 1 }
        if let number = UInt32(id) { return number }
        var hash: UInt32 = 0x811C_9DC5
        for byte in id.utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        return hash
    }
}
