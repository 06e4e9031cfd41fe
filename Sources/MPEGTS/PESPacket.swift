public import MediaCore

/// A `PES_packet()` (ISO/IEC 13818-1, 2.4.3.6, semantics 2.4.3.7) of an audio or video stream:
/// the header fields a player uses and the elementary stream bytes.
///
/// Of the optional header fields, PTS and DTS are read and written; the others (ESCR, ES_rate,
/// DSM trick mode, CRC, extension) are skipped when read, by `PES_header_data_length`.
public struct PESPacket: Sendable, Hashable {
    /// `stream_id` (table 2-22): 0xC0…0xDF audio, 0xE0…0xEF video.
    public var streamID: UInt8
    /// `data_alignment_indicator`: the payload starts with an access unit's syncword (for ADTS,
    /// alignment type 01 of 2.6.11).
    public var dataAlignmentIndicator: Bool
    /// The `PTS` in 90 kHz units (33 bits), when present.
    public var presentationTime: Int64?
    /// The `DTS` in 90 kHz units (33 bits), when present (only with a PTS).
    public var decodeTime: Int64?
    /// The `PES_packet_data_byte`s.
    public var payload: [UInt8]

    /// The most payload one PES packet holds with a PTS and no other optional field:
    /// `PES_packet_length` is 16 bits and counts 3 bytes of flags and 5 of PTS.
    public static let maximumPayloadLengthWithPresentationTime = 0xFFFF - 8

    /// A packet.
    public init(streamID: UInt8, dataAlignmentIndicator: Bool = false, presentationTime: Int64? = nil,
                decodeTime: Int64? = nil, payload: [UInt8]) {
        self.streamID = streamID
        self.dataAlignmentIndicator = dataAlignmentIndicator
        self.presentationTime = presentationTime.map { $0 & (MPEGTS.timestampModulus - 1) }
        self.decodeTime = presentationTime == nil ? nil : decodeTime.map { $0 & (MPEGTS.timestampModulus - 1) }
        self.payload = payload
    }

    /// The stream ids whose packets have no optional header (2.4.3.6): program_stream_map,
    /// padding, private_stream_2, ECM, EMM, program_stream_directory, DSMCC, H.222.1 type E.
    static func hasOptionalHeader(_ streamID: UInt8) -> Bool {
        ![0xBC, 0xBE, 0xBF, 0xF0, 0xF1, 0xFF, 0xF2, 0xF8].contains(streamID)
    }

    /// Bytes of optional header fields: 5 for a PTS, 10 for a PTS and a DTS.
    var headerDataLength: Int { presentationTime == nil ? 0 : decodeTime == nil ? 5 : 10 }

    /// The packet's bytes, `packet_start_code_prefix` to the last payload byte, with
    /// `PES_packet_length` counting what follows it.
    ///
    /// A payload longer than `PES_packet_length` can count is a programming error, caught here.
    public var bytes: [UInt8] {
        let length = 3 + headerDataLength + payload.count
        precondition(length <= 0xFFFF, "a PES payload of \(payload.count) bytes is longer than PES_packet_length can count")
        var out: [UInt8] = [0x00, 0x00, 0x01, streamID, UInt8(length >> 8), UInt8(truncatingIfNeeded: length)]
        out.reserveCapacity(6 + length)
        // '10', PES_scrambling_control 00, PES_priority 0, data_alignment_indicator, copyright 0,
        // original_or_copy 0; then PTS_DTS_flags and no other optional field.
        out.append(0x80 | (dataAlignmentIndicator ? 0x04 : 0))
        out.append(presentationTime == nil ? 0x00 : decodeTime == nil ? 0x80 : 0xC0)
        out.append(UInt8(headerDataLength))
        if let presentationTime { Self.appendTimestamp(presentationTime, prefix: decodeTime == nil ? 0b0010 : 0b0011, to: &out) }
        if let decodeTime { Self.appendTimestamp(decodeTime, prefix: 0b0001, to: &out) }
        out += payload
        return out
    }

    /// The 5 bytes of a PTS or DTS: the 4-bit prefix, then the 33 bits in three runs each
    /// followed by a `marker_bit`.
    static func appendTimestamp(_ value: Int64, prefix: UInt8, to out: inout [UInt8]) {
        let time = UInt64(value & (MPEGTS.timestampModulus - 1))
        out.append(prefix << 4 | UInt8(truncatingIfNeeded: time >> 29) & 0x0E | 1)
        out.append(UInt8(truncatingIfNeeded: time >> 22))
        out.append(UInt8(truncatingIfNeeded: time >> 14) | 1)
        out.append(UInt8(truncatingIfNeeded: time >> 7))
        out.append(UInt8(truncatingIfNeeded: time << 1) | 1)
    }

    /// Parses a whole PES packet: every byte of `reader` is the packet.
    ///
    /// - Throws: ``TransportStreamError/invalidField(structure:field:value:offset:allowed:)`` for a
    ///   wrong start code, a `PES_packet_length` other than the bytes there are (0, unbounded, is
    ///   allowed for video only), a header longer than the packet, a PTS or DTS that does not fit
    ///   `PES_header_data_length`, `PTS_DTS_flags` 01, or a marker bit of 0;
    ///   ``TransportStreamError/truncated(structure:_:)``.
    public init(from reader: inout ByteReader) throws(TransportStreamError) {
        let structure = "PES packet"
        let start = reader.offset
        let (prefix, streamID, declared) = try TransportStreamError.reading(structure) { () throws(BinaryReadError) in
            (try reader.readUInt24(), try reader.readUInt8(), Int(try reader.readUInt16()))
        }
        guard prefix == 0x000001 else {
            throw .invalidField(structure: structure, field: "packet_start_code_prefix", value: Int64(prefix), offset: start, allowed: "0x000001")
        }
        let isVideo = (0xE0...0xEF).contains(streamID)
        guard declared == reader.remaining || (declared == 0 && isVideo) else {
            throw .invalidField(structure: structure, field: "PES_packet_length", value: Int64(declared), offset: start + 4,
                                allowed: "\(reader.remaining), the bytes of the packet")
        }
        self.streamID = streamID
        dataAlignmentIndicator = false
        presentationTime = nil
        decodeTime = nil
        guard Self.hasOptionalHeader(streamID) else {
            payload = Array(reader.remainingBytes)
            return
        }
        let flagsOffset = reader.offset
        let (flags, timeFlags, headerLength) = try TransportStreamError.reading(structure) { () throws(BinaryReadError) in
            (try reader.readUInt8(), try reader.readUInt8(), Int(try reader.readUInt8()))
        }
        guard flags >> 6 == 0b10 else {
            throw .invalidField(structure: structure, field: "'10' before PES_scrambling_control", value: Int64(flags >> 6),
                                offset: flagsOffset, allowed: "2")
        }
        dataAlignmentIndicator = flags & 0x04 != 0
        guard headerLength <= reader.remaining else {
            throw .invalidField(structure: structure, field: "PES_header_data_length", value: Int64(headerLength), offset: flagsOffset + 2,
                                allowed: "0...\(reader.remaining), the bytes left of the packet")
        }
        var header = try TransportStreamError.reading(structure) { () throws(BinaryReadError) in try reader.readReader(headerLength) }
        let ptsDTS = timeFlags >> 6
        guard ptsDTS != 0b01 else {
            throw .invalidField(structure: structure, field: "PTS_DTS_flags", value: 1, offset: flagsOffset + 1, allowed: "0, 2 or 3")
        }
        let needed = ptsDTS == 0b10 ? 5 : ptsDTS == 0b11 ? 10 : 0
        guard needed <= headerLength else {
            throw .invalidField(structure: structure, field: "PES_header_data_length", value: Int64(headerLength), offset: flagsOffset + 2,
                                allowed: "at least \(needed) for PTS_DTS_flags \(ptsDTS)")
        }
        if ptsDTS & 0b10 != 0 {
            presentationTime = try Self.readTimestamp(&header, prefix: ptsDTS == 0b11 ? 0b0011 : 0b0010, field: "PTS")
        }
        if ptsDTS == 0b11 {
            decodeTime = try Self.readTimestamp(&header, prefix: 0b0001, field: "DTS")
        }
        payload = Array(reader.remainingBytes)
    }

    /// Reads the 5 bytes of a PTS or DTS, checking its prefix and marker bits.
    static func readTimestamp(_ reader: inout ByteReader, prefix: UInt8, field: String) throws(TransportStreamError) -> Int64 {
        let offset = reader.offset
        let word = try TransportStreamError.reading("PES packet") { () throws(BinaryReadError) in try reader.readBigEndian(byteCount: 5) }
        guard UInt8(word >> 36) == prefix else {
            throw .invalidField(structure: "PES packet", field: "'\(String(prefix, radix: 2))' before \(field)", value: Int64(word >> 36),
                                offset: offset, allowed: "\(prefix)")
        }
        guard word & 0x1_0001_0001 == 0x1_0001_0001 else {
            throw .invalidField(structure: "PES packet", field: "marker_bit of \(field)", value: 0, offset: offset, allowed: "1")
        }
        return Int64((word >> 33) & 0x7) << 30 | Int64((word >> 17) & 0x7FFF) << 15 | Int64((word >> 1) & 0x7FFF)
    }
}
