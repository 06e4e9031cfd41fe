public import MediaCore

/// One 188-byte `transport_packet()` (ISO/IEC 13818-1, 2.4.3.2, semantics 2.4.3.3): the 4-byte
/// header, an optional adaptation field (2.4.3.4) and the payload.
public struct TransportPacket: Sendable, Hashable {
    /// `transport_error_indicator`: at least one uncorrectable bit error in the packet.
    public var transportErrorIndicator: Bool
    /// `payload_unit_start_indicator`: the payload starts a PES packet, or holds a
    /// `pointer_field` and the start of a PSI section.
    public var payloadUnitStartIndicator: Bool
    /// `transport_priority`.
    public var transportPriority: Bool
    /// `PID`: 13 bits.
    public var pid: UInt16
    /// `transport_scrambling_control`: 0 for a packet that is not scrambled.
    public var transportScramblingControl: UInt8
    /// `continuity_counter`: 4 bits, one more (mod 16) per packet of the PID that has a payload.
    public var continuityCounter: UInt8
    /// The `adaptation_field()`, when `adaptation_field_control` is 10 or 11.
    public var adaptationField: AdaptationField?
    /// The `data_byte`s after the header and adaptation field; empty without a payload.
    public var payload: ArraySlice<UInt8>
    /// `adaptation_field_control` as read (2 bits); ``bytes`` writes the value the adaptation
    /// field and payload call for.
    public var adaptationFieldControl: UInt8

    /// A packet; ``bytes`` stuffs what the adaptation field and payload leave of the 188 bytes.
    public init(pid: UInt16, payloadUnitStartIndicator: Bool = false, continuityCounter: UInt8,
                adaptationField: AdaptationField? = nil, payload: ArraySlice<UInt8> = [],
                transportErrorIndicator: Bool = false, transportPriority: Bool = false, transportScramblingControl: UInt8 = 0) {
        self.transportErrorIndicator = transportErrorIndicator
        self.payloadUnitStartIndicator = payloadUnitStartIndicator
        self.transportPriority = transportPriority
        self.pid = pid & 0x1FFF
        self.transportScramblingControl = transportScramblingControl & 0x03
        self.continuityCounter = continuityCounter & 0x0F
        self.adaptationField = adaptationField
        self.payload = payload
        adaptationFieldControl = (adaptationField == nil ? 0 : 0b10) | (payload.isEmpty ? 0 : 0b01)
    }

    /// Whether the packet carries a payload (`adaptation_field_control` 01 or 11): only then does
    /// its continuity counter advance.
    public var hasPayload: Bool { adaptationFieldControl & 0b01 != 0 }

    /// The most payload a packet holds after the header and an adaptation field of
    /// `adaptationFieldBytes` bytes (its length byte included).
    public static func payloadCapacity(adaptationFieldBytes: Int) -> Int { MPEGTS.packetSize - 4 - adaptationFieldBytes }

    /// Appends the packet's 188 bytes to `bytes`. What the payload leaves free is stuffing in the
    /// adaptation field (2.4.3.5): the field is lengthened, or one is added; one free byte is an
    /// adaptation field of length 0.
    ///
    /// A payload that does not fit beside the adaptation field is a programming error, caught here
    /// rather than written wrong.
    public func append(to bytes: inout [UInt8]) {
        var field = adaptationField
        let fieldBytes = field.map { 1 + max($0.length, $0.minimumLength) } ?? 0
        let free = MPEGTS.packetSize - 4 - fieldBytes - payload.count
        precondition(free >= 0, "a transport packet payload of \(payload.count) bytes does not fit beside \(fieldBytes) of adaptation field")
        if free > 0 {
            if var existing = field {
                existing.length = max(existing.length, existing.minimumLength) + free
                field = existing
            } else {
                field = AdaptationField(length: free - 1)
            }
        }
        let control: UInt8 = (field == nil ? 0 : 0b10) | (payload.isEmpty ? 0 : 0b01)
        bytes.append(MPEGTS.syncByte)
        bytes.append((transportErrorIndicator ? 0x80 : 0) | (payloadUnitStartIndicator ? 0x40 : 0) | (transportPriority ? 0x20 : 0)
            | UInt8(truncatingIfNeeded: pid >> 8) & 0x1F)
        bytes.append(UInt8(truncatingIfNeeded: pid))
        bytes.append((transportScramblingControl & 0x03) << 6 | control << 4 | continuityCounter & 0x0F)
        if let field { bytes += field.bytes }
        bytes += payload
    }

    /// The packet's 188 bytes (see ``append(to:)``).
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(MPEGTS.packetSize)
        append(to: &out)
        return out
    }

    /// Reads one packet: 188 bytes from the reader's position.
    ///
    /// - Throws: ``TransportStreamError/lostSync(offset:byte:)`` when the first byte is not 0x47;
    ///   ``TransportStreamError/truncated(structure:_:)`` when fewer than 188 bytes remain;
    ///   ``TransportStreamError/invalidField(structure:field:value:offset:allowed:)`` for an
    ///   adaptation field longer than the packet allows.
    public init(from reader: inout ByteReader) throws(TransportStreamError) {
        let structure = "transport packet"
        let start = reader.offset
        var packet = try TransportStreamError.reading(structure) { () throws(BinaryReadError) in try reader.readReader(MPEGTS.packetSize) }
        let header = try TransportStreamError.reading(structure) { () throws(BinaryReadError) in try packet.readUInt32() }
        let sync = UInt8(header >> 24)
        guard sync == MPEGTS.syncByte else { throw .lostSync(offset: start, byte: sync) }
        transportErrorIndicator = header & 0x0080_0000 != 0
        payloadUnitStartIndicator = header & 0x0040_0000 != 0
        transportPriority = header & 0x0020_0000 != 0
        pid = UInt16(truncatingIfNeeded: header >> 8) & 0x1FFF
        transportScramblingControl = UInt8(truncatingIfNeeded: header >> 6) & 0x03
        adaptationFieldControl = UInt8(truncatingIfNeeded: header >> 4) & 0x03
        continuityCounter = UInt8(truncatingIfNeeded: header) & 0x0F
        adaptationField = nil
        if adaptationFieldControl & 0b10 != 0 {
            // 2.4.3.5: 183 without a payload, at most 182 with one.
            let field = try AdaptationField(from: &packet, maximumLength: adaptationFieldControl == 0b10 ? 183 : 182)
            guard adaptationFieldControl == 0b11 || field.length == 183 else {
                throw .invalidField(structure: "adaptation field", field: "adaptation_field_length", value: Int64(field.length),
                                    offset: start + 4, allowed: "183 in a packet without a payload")
            }
            adaptationField = field
        }
        payload = adaptationFieldControl & 0b01 != 0 ? packet.remainingBytes : []
    }
}
