/// A `program_association_section()` (ISO/IEC 13818-1, 2.4.4.3, semantics 2.4.4.5): which PID
/// carries each program's map.
public struct ProgramAssociationTable: Sendable, Hashable {
    /// One `program_number` and its PID.
    public struct Program: Sendable, Hashable {
        /// `program_number`: 0 names the network PID, any other a program.
        public var programNumber: UInt16
        /// `program_map_PID` (or `network_PID` for program 0): 13 bits.
        public var pid: UInt16

        /// A program entry.
        public init(programNumber: UInt16, pid: UInt16) {
            self.programNumber = programNumber
            self.pid = pid & 0x1FFF
        }
    }

    /// `table_id` of a program association section.
    public static let tableID: UInt8 = 0x00

    /// `transport_stream_id`.
    public var transportStreamID: UInt16
    /// `version_number`.
    public var versionNumber: UInt8
    /// The programs, in the order of the section.
    public var programs: [Program]

    /// A table.
    public init(transportStreamID: UInt16, versionNumber: UInt8 = 0, programs: [Program]) {
        self.transportStreamID = transportStreamID
        self.versionNumber = versionNumber & 0x1F
        self.programs = programs
    }

    /// The section (one, `section_number` 0 of 0), CRC included.
    public var section: PSISection {
        var body: [UInt8] = []
        for program in programs {
            body += [UInt8(program.programNumber >> 8), UInt8(truncatingIfNeeded: program.programNumber),
                     0xE0 | UInt8(program.pid >> 8), UInt8(truncatingIfNeeded: program.pid)]
        }
        return PSISection(tableID: Self.tableID, tableIDExtension: transportStreamID, versionNumber: versionNumber, body: body)
    }

    /// The table a section holds.
    ///
    /// - Throws: ``TransportStreamError/invalidField(structure:field:value:offset:allowed:)`` for
    ///   another `table_id` or a body that is not whole 4-byte entries.
    public init(section: PSISection, offset: Int64) throws(TransportStreamError) {
        let structure = "program association section"
        guard section.tableID == Self.tableID else {
            throw .invalidField(structure: structure, field: "table_id", value: Int64(section.tableID), offset: offset, allowed: "0x00")
        }
        guard section.body.count % 4 == 0 else {
            throw .invalidField(structure: structure, field: "section_length", value: Int64(PSISection.sectionLength(bodyLength: section.body.count)),
                                offset: offset + 1, allowed: "9 plus 4 per program")
        }
        transportStreamID = section.tableIDExtension
        versionNumber = section.versionNumber
        programs = stride(from: 0, to: section.body.count, by: 4).map { index in
            let body = section.body
            return Program(programNumber: UInt16(body[index]) << 8 | UInt16(body[index + 1]),
                           pid: UInt16(body[index + 2] & 0x1F) << 8 | UInt16(body[index + 3]))
        }
    }
}
