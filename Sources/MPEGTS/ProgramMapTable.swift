import MediaCore

/// A `TS_program_map_section()` (ISO/IEC 13818-1, 2.4.4.8, semantics 2.4.4.9): a program's PCR
/// PID and its elementary streams.
public struct ProgramMapTable: Sendable, Hashable {
    /// One elementary stream of the program.
    public struct Stream: Sendable, Hashable {
        /// `stream_type` (table 2-34): 0x0F is AAC in ADTS.
        public var streamType: UInt8
        /// `elementary_PID`: 13 bits.
        public var pid: UInt16
        /// The descriptors of the `ES_info` loop, as they are.
        public var descriptors: [UInt8]

        /// A stream entry.
        public init(streamType: UInt8, pid: UInt16, descriptors: [UInt8] = []) {
            self.streamType = streamType
            self.pid = pid & 0x1FFF
            self.descriptors = descriptors
        }
    }

    /// `table_id` of a program map section.
    public static let tableID: UInt8 = 0x02

    /// `program_number`.
    public var programNumber: UInt16
    /// `version_number`.
    public var versionNumber: UInt8
    /// `PCR_PID`: the PID whose adaptation fields carry the program's PCR.
    public var pcrPID: UInt16
    /// The descriptors of the program-info loop, as they are.
    public var programDescriptors: [UInt8]
    /// The elementary streams, in the order of the section.
    public var streams: [Stream]

    /// A table.
    public init(programNumber: UInt16, versionNumber: UInt8 = 0, pcrPID: UInt16, programDescriptors: [UInt8] = [], streams: [Stream]) {
        self.programNumber = programNumber
        self.versionNumber = versionNumber & 0x1F
        self.pcrPID = pcrPID & 0x1FFF
        self.programDescriptors = programDescriptors
        self.streams = streams
    }

    /// The first stream of AAC in ADTS (`stream_type` 0x0F), when there is one.
    public var adtsAudioStream: Stream? { streams.first { $0.streamType == MPEGTS.adtsAudioStreamType } }

    /// The section (one, `section_number` 0 of 0), CRC included.
    public var section: PSISection {
        var body: [UInt8] = [0xE0 | UInt8(pcrPID >> 8), UInt8(truncatingIfNeeded: pcrPID),
                             0xF0 | UInt8(programDescriptors.count >> 8) & 0x0F, UInt8(truncatingIfNeeded: programDescriptors.count)]
        body += programDescriptors
        for stream in streams {
            body += [stream.streamType, 0xE0 | UInt8(stream.pid >> 8), UInt8(truncatingIfNeeded: stream.pid),
                     0xF0 | UInt8(stream.descriptors.count >> 8) & 0x0F, UInt8(truncatingIfNeeded: stream.descriptors.count)]
            body += stream.descriptors
        }
        return PSISection(tableID: Self.tableID, tableIDExtension: programNumber, versionNumber: versionNumber, body: body)
    }

    /// The table a section holds.
    ///
    /// - Throws: ``TransportStreamError/invalidField(structure:field:value:offset:allowed:)`` for
    ///   another `table_id`, or a `program_info_length` or `ES_info_length` past the section.
    public init(section: PSISection, offset: Int64) throws(TransportStreamError) {
        let structure = "program map section"
        guard section.tableID == Self.tableID else {
            throw .invalidField(structure: structure, field: "table_id", value: Int64(section.tableID), offset: offset, allowed: "0x02")
        }
        // The body starts after the 8 bytes of section header.
        var reader = ByteReader(section.body, baseOffset: offset + 8)
        func read<T>(_ field: String, _ body: (inout ByteReader) throws(BinaryReadError) -> T) throws(TransportStreamError) -> T {
            do { return try body(&reader) } catch {
                throw .invalidField(structure: structure, field: field, value: Int64(error.needed), offset: error.offset,
                                    allowed: "at most the \(error.available) bytes left of the section")
            }
        }
        programNumber = section.tableIDExtension
        versionNumber = section.versionNumber
        pcrPID = try read("PCR_PID") { (r: inout ByteReader) throws(BinaryReadError) in try r.readUInt16() & 0x1FFF }
        programDescriptors = try read("program_info_length") { (r: inout ByteReader) throws(BinaryReadError) in
            try r.readBytes(Int(try r.readUInt16() & 0x0FFF))
        }
        var streams: [Stream] = []
        while !reader.isAtEnd {
            let stream = try read("ES_info_length") { (r: inout ByteReader) throws(BinaryReadError) -> Stream in
                let type = try r.readUInt8()
                let pid = try r.readUInt16() & 0x1FFF
                let descriptors = try r.readBytes(Int(try r.readUInt16() & 0x0FFF))
                return Stream(streamType: type, pid: pid, descriptors: descriptors)
            }
            streams.append(stream)
        }
        self.streams = streams
    }
}
