import MediaCore

/// Reads a transport stream (ISO/IEC 13818-1) for its AAC audio: finds the program in the PAT
/// (2.4.4.3) and the ADTS stream (`stream_type` 0x0F) in its PMT (2.4.4.8), and reassembles the
/// PES packets (2.4.3.6) of that stream, each with its PTS and the PCR that came with it.
///
/// Bounded: every packet is read through a ``/MediaCore/ByteReader`` and every length is checked
/// against the bytes that hold it before anything is kept; a PSI section is at most 1024 bytes
/// and a PES packet at most `PES_packet_length` + 6 (65541) bytes, so memory stays within the
/// input plus one of each.
///
/// Continuity counters (2.4.3.3) are checked on every PID: a packet with a payload whose counter
/// is not one more than the last (mod 16) is a discontinuity, counted in ``statistics``; the PES
/// packet it interrupts is dropped and counted, and reading goes on at the next PES start. One
/// duplicate packet (the same counter again) is skipped, as 2.4.3.3 allows. Packets with
/// `transport_error_indicator` set, null packets and reserved `adaptation_field_control` 00 are
/// skipped and counted.
///
/// Malformed syntax is a ``TransportStreamError``; after one, ``next()`` returns `nil`.
public struct TransportStreamReader: Sendable {
    /// A PES packet of the audio stream and where it came from.
    public struct AudioPacket: Sendable, Hashable {
        /// The PES packet.
        public var pes: PESPacket
        /// The byte offset of the transport packet it starts in.
        public var offset: Int64
        /// The PCR of the adaptation field of that packet, when it had one.
        public var programClockReference: ProgramClockReference?
        /// `random_access_indicator` of that packet.
        public var randomAccessIndicator: Bool
        /// `discontinuity_indicator` of that packet.
        public var discontinuityIndicator: Bool
    }

    /// Running totals over the packets read so far.
    public struct Statistics: Sendable, Hashable {
        /// Transport packets read.
        public var packetCount = 0
        /// Program association sections read.
        public var programAssociationCount = 0
        /// Program map sections read (of the program followed).
        public var programMapCount = 0
        /// Continuity counter discontinuities (not signalled by `discontinuity_indicator`).
        public var continuityErrorCount = 0
        /// Duplicate packets skipped.
        public var duplicatePacketCount = 0
        /// PES packets of the audio stream dropped, cut by a discontinuity.
        public var droppedPESCount = 0
        /// Packets skipped for `transport_error_indicator`, reserved `adaptation_field_control`,
        /// or as null packets.
        public var skippedPacketCount = 0
        /// PCRs seen on the PCR PID.
        public var programClockReferenceCount = 0
        /// Audio payload bytes before the first PES start (or after a drop), skipped.
        public var skippedPayloadBytes = 0
    }

    private var reader: ByteReader
    private var failed = false
    /// Running totals.
    public private(set) var statistics = Statistics()
    /// The PAT last read.
    public private(set) var programAssociationTable: ProgramAssociationTable?
    /// The PMT last read of the program followed (the first in the PAT).
    public private(set) var programMapTable: ProgramMapTable?
    /// The last PCR on the program's PCR PID.
    public private(set) var lastProgramClockReference: ProgramClockReference?

    private var counters: [UInt16: UInt8] = [:]
    private var sections: [UInt16: (bytes: [UInt8], offset: Int64)] = [:]
    private var assembly: (bytes: [UInt8], start: AudioPacket)?

    /// A reader of the transport stream in `bytes`, whose first byte is at `baseOffset`.
    public init(bytes: [UInt8], baseOffset: Int64 = 0) {
        reader = ByteReader(bytes, baseOffset: baseOffset)
    }

    /// The PID of the audio stream, once the PMT is read.
    public var audioPID: UInt16? { programMapTable?.adtsAudioStream?.pid }

    /// The next PES packet of the audio stream, or `nil` at the end of the stream.
    ///
    /// - Throws: ``TransportStreamError``: a lost sync byte, a packet cut short, a field out of
    ///   its range or past its structure, a section whose CRC does not check, a PES packet longer
    ///   or shorter than its `PES_packet_length`.
    public mutating func next() throws(TransportStreamError) -> AudioPacket? {
        guard !failed else { return nil }
        do throws(TransportStreamError) {
            while !reader.isAtEnd {
                let packet = try TransportPacket(from: &reader)
                let offset = reader.offset - Int64(MPEGTS.packetSize)
                if let done = try take(packet, offset: offset) { return done }
            }
            if let assembly {
                self.assembly = nil
                let needed = Self.declaredLength(assembly.bytes) ?? 6
                throw TransportStreamError.truncated(
                    structure: "PES packet",
                    BinaryReadError(offset: assembly.start.offset, needed: needed, available: assembly.bytes.count, unit: .bytes))
            }
            return nil
        } catch {
            failed = true
            throw error
        }
    }

    /// Every remaining PES packet of the audio stream.
    public mutating func readAll() throws(TransportStreamError) -> [AudioPacket] {
        var packets: [AudioPacket] = []
        while let packet = try next() { packets.append(packet) }
        return packets
    }

    // MARK: - Packets

    private mutating func take(_ packet: TransportPacket, offset: Int64) throws(TransportStreamError) -> AudioPacket? {
        statistics.packetCount += 1
        guard !packet.transportErrorIndicator, packet.adaptationFieldControl != 0, packet.pid != MPEGTS.nullPacketPID else {
            statistics.skippedPacketCount += 1
            return nil
        }
        if let clock = packet.adaptationField?.programClockReference, packet.pid == programMapTable?.pcrPID {
            statistics.programClockReferenceCount += 1
            lastProgramClockReference = clock
        }
        guard packet.hasPayload else { return nil }
        // 2.4.3.3: the counter advances with each packet that has a payload.
        var continuous = true
        if let last = counters[packet.pid], packet.adaptationField?.discontinuityIndicator != true {
            if packet.continuityCounter == last {
                statistics.duplicatePacketCount += 1
                return nil
            }
            continuous = packet.continuityCounter == (last + 1) & 0x0F
        }
        counters[packet.pid] = packet.continuityCounter
        if !continuous { statistics.continuityErrorCount += 1 }

        if packet.pid == MPEGTS.programAssociationPID || packet.pid == programAssociationTable?.programs.first(where: { $0.programNumber != 0 })?.pid {
            try takeSection(packet, offset: offset, continuous: continuous)
            return nil
        }
        guard packet.pid == audioPID else { return nil }
        guard packet.transportScramblingControl == 0 else {
            throw .invalidField(structure: "transport packet", field: "transport_scrambling_control",
                                value: Int64(packet.transportScramblingControl), offset: offset + 3, allowed: "0 (not scrambled)")
        }
        return try takeAudio(packet, offset: offset, continuous: continuous)
    }

    /// Adds the packet's payload to the PES packet being reassembled; returns it when it is whole.
    private mutating func takeAudio(_ packet: TransportPacket, offset: Int64, continuous: Bool) throws(TransportStreamError) -> AudioPacket? {
        if !continuous, assembly != nil {
            assembly = nil
            statistics.droppedPESCount += 1
        }
        if packet.payloadUnitStartIndicator {
            if let assembly {
                // The next PES packet starts before this one has the bytes it declared.
                let declared = Self.declaredLength(assembly.bytes)
                throw .invalidField(structure: "PES packet", field: "PES_packet_length", value: Int64((declared ?? 6) - 6),
                                    offset: assembly.start.offset, allowed: "the \(assembly.bytes.count - 6) bytes before the next PES packet")
            }
            let field = packet.adaptationField
            let start = AudioPacket(pes: PESPacket(streamID: 0, payload: []), offset: offset, programClockReference: field?.programClockReference,
                                    randomAccessIndicator: field?.randomAccessIndicator ?? false,
                                    discontinuityIndicator: field?.discontinuityIndicator ?? false)
            assembly = ([], start)
        }
        guard var current = assembly else {
            statistics.skippedPayloadBytes += packet.payload.count
            return nil
        }
        assembly = nil
        let declared = current.bytes.count >= 6 ? Self.declaredLength(current.bytes) : Self.declaredLength(current.bytes + packet.payload.prefix(6))
        if let declared, declared == 6 + 0 {
            throw .invalidField(structure: "PES packet", field: "PES_packet_length", value: 0, offset: current.start.offset + 4,
                                allowed: "1...65535 (0, unbounded, is for video only)")
        }
        if let declared, current.bytes.count + packet.payload.count > declared {
            throw .invalidField(structure: "PES packet", field: "PES_packet_length", value: Int64(declared - 6), offset: current.start.offset + 4,
                                allowed: "at least the \(current.bytes.count + packet.payload.count - 6) bytes its transport packets carry")
        }
        current.bytes += packet.payload
        guard let length = declared ?? Self.declaredLength(current.bytes), current.bytes.count == length else {
            assembly = current
            return nil
        }
        var pesReader = ByteReader(current.bytes, baseOffset: current.start.offset)
        var done = current.start
        done.pes = try PESPacket(from: &pesReader)
        return done
    }

    /// `PES_packet_length` + 6 once the first 6 bytes are there.
    private static func declaredLength(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 6 else { return nil }
        return 6 + (Int(bytes[4]) << 8 | Int(bytes[5]))
    }

    // MARK: - Sections

    /// Reassembles the section on a PSI PID; reads the first section that starts in a packet
    /// (2.4.4.1: `pointer_field` says where).
    private mutating func takeSection(_ packet: TransportPacket, offset: Int64, continuous: Bool) throws(TransportStreamError) {
        var payload = packet.payload
        var payloadOffset = offset + Int64(MPEGTS.packetSize - payload.count)
        if !continuous { sections[packet.pid] = nil }
        if packet.payloadUnitStartIndicator {
            let pointer = Int(payload.first ?? 0)
            guard pointer + 1 <= payload.count else {
                throw .invalidField(structure: "PSI", field: "pointer_field", value: Int64(pointer), offset: payloadOffset,
                                    allowed: "0...\(payload.count - 1), within the packet")
            }
            // The end of a section begun in earlier packets comes first; a new one starts after it.
            if var partial = sections[packet.pid] {
                partial.bytes += payload.dropFirst().prefix(pointer)
                sections[packet.pid] = partial
                try readSection(pid: packet.pid)
            }
            payload = payload.dropFirst(1 + pointer)
            payloadOffset += Int64(1 + pointer)
            // A table_id of 0xFF is stuffing: no section starts here.
            guard let first = payload.first, first != 0xFF else {
                sections[packet.pid] = nil
                return
            }
            sections[packet.pid] = ([], payloadOffset)
        }
        guard var partial = sections[packet.pid] else { return }
        let wanted = PSISection.totalLength(of: partial.bytes + payload.prefix(3)).map { min($0, MPEGTS.maximumSectionLength) }
            ?? MPEGTS.maximumSectionLength
        partial.bytes += payload.prefix(max(0, wanted - partial.bytes.count))
        sections[packet.pid] = partial
        try readSection(pid: packet.pid)
    }

    /// Parses the section being reassembled on `pid` if it is whole.
    private mutating func readSection(pid: UInt16) throws(TransportStreamError) {
        guard let partial = sections[pid], let length = PSISection.totalLength(of: partial.bytes) else { return }
        guard length <= MPEGTS.maximumSectionLength else {
            sections[pid] = nil
            throw .invalidField(structure: pid == MPEGTS.programAssociationPID ? "program association section" : "program map section",
                                field: "section_length", value: Int64(length - 3), offset: partial.offset + 1, allowed: "9...1021")
        }
        guard partial.bytes.count >= length else { return }
        sections[pid] = nil
        var reader = ByteReader(partial.bytes, baseOffset: partial.offset)
        if pid == MPEGTS.programAssociationPID {
            let section = try PSISection(from: &reader, structure: "program association section")
            guard section.currentNextIndicator else { return }
            let table = try ProgramAssociationTable(section: section, offset: partial.offset)
            statistics.programAssociationCount += 1
            if table.programs.first(where: { $0.programNumber != 0 }) != programAssociationTable?.programs.first(where: { $0.programNumber != 0 }) {
                programMapTable = nil
            }
            programAssociationTable = table
        } else {
            let section = try PSISection(from: &reader, structure: "program map section")
            guard section.currentNextIndicator, section.tableID == ProgramMapTable.tableID,
                  section.tableIDExtension == programAssociationTable?.programs.first(where: { $0.programNumber != 0 })?.programNumber else { return }
            let table = try ProgramMapTable(section: section, offset: partial.offset)
            statistics.programMapCount += 1
            if table.adtsAudioStream?.pid != audioPID, assembly != nil {
                assembly = nil
                statistics.droppedPESCount += 1
            }
            programMapTable = table
        }
    }
}
