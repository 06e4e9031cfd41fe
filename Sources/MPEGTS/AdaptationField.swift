public import MediaCore

/// An `adaptation_field()` (ISO/IEC 13818-1, 2.4.3.4, semantics 2.4.3.5): the flags, the clock
/// references and the stuffing of one transport packet.
///
/// ``length`` is `adaptation_field_length`, kept so that parsing and writing are exact inverses:
/// the bytes it covers after the fields are stuffing (0xFF). An adaptation field of length 0 is the
/// single length byte (one byte of stuffing in a packet, 2.4.3.5).
public struct AdaptationField: Sendable, Hashable {
    /// `adaptation_field_length`: bytes after this field, flags included.
    public var length: Int
    /// `discontinuity_indicator`: a new system time base (on the PCR PID) or a continuity
    /// counter discontinuity (2.4.3.5).
    public var discontinuityIndicator: Bool
    /// `random_access_indicator`: the next PES packet on the PID starts at an access point.
    public var randomAccessIndicator: Bool
    /// `elementary_stream_priority_indicator`.
    public var elementaryStreamPriorityIndicator: Bool
    /// The `program_clock_reference` when `PCR_flag` is 1.
    public var programClockReference: ProgramClockReference?
    /// The `original_program_clock_reference` when `OPCR_flag` is 1.
    public var originalProgramClockReference: ProgramClockReference?
    /// `splice_countdown` when `splicing_point_flag` is 1.
    public var spliceCountdown: Int8?
    /// The `private_data_byte`s when `transport_private_data_flag` is 1.
    public var transportPrivateData: [UInt8]?
    /// The bytes of `adaptation_field_extension()` after its length byte, when
    /// `adaptation_field_extension_flag` is 1 (kept as they are).
    public var adaptationFieldExtension: [UInt8]?

    /// An adaptation field with the given fields; `length` is raised to ``minimumLength`` if it
    /// is shorter, and whatever it has beyond is stuffing.
    public init(length: Int = 0, discontinuityIndicator: Bool = false, randomAccessIndicator: Bool = false,
                elementaryStreamPriorityIndicator: Bool = false, programClockReference: ProgramClockReference? = nil,
                originalProgramClockReference: ProgramClockReference? = nil, spliceCountdown: Int8? = nil,
                transportPrivateData: [UInt8]? = nil, adaptationFieldExtension: [UInt8]? = nil) {
        self.length = length
        self.discontinuityIndicator = discontinuityIndicator
        self.randomAccessIndicator = randomAccessIndicator
        self.elementaryStreamPriorityIndicator = elementaryStreamPriorityIndicator
        self.programClockReference = programClockReference
        self.originalProgramClockReference = originalProgramClockReference
        self.spliceCountdown = spliceCountdown
        self.transportPrivateData = transportPrivateData
        self.adaptationFieldExtension = adaptationFieldExtension
        self.length = max(length, minimumLength)
    }

    /// Whether the field carries anything besides stuffing: any flag set.
    public var hasFlags: Bool {
        discontinuityIndicator || randomAccessIndicator || elementaryStreamPriorityIndicator || programClockReference != nil
            || originalProgramClockReference != nil || spliceCountdown != nil || transportPrivateData != nil
            || adaptationFieldExtension != nil
    }

    /// The shortest `adaptation_field_length` that holds the fields: 0 with no flags set, else
    /// the flags byte and each present field.
    public var minimumLength: Int {
        guard hasFlags else { return 0 }
        return 1 + (programClockReference == nil ? 0 : 6) + (originalProgramClockReference == nil ? 0 : 6)
            + (spliceCountdown == nil ? 0 : 1) + (transportPrivateData.map { 1 + $0.count } ?? 0)
            + (adaptationFieldExtension.map { 1 + $0.count } ?? 0)
    }

    /// Bytes of stuffing after the fields.
    public var stuffingLength: Int { max(0, length - max(minimumLength, length > 0 ? 1 : 0)) }

    /// The field's bytes, the length byte first: `1 + max(length, minimumLength)` of them.
    public var bytes: [UInt8] {
        let length = max(self.length, minimumLength)
        var out: [UInt8] = [UInt8(truncatingIfNeeded: length)]
        out.reserveCapacity(1 + length)
        guard length > 0 else { return out }
        var flags: UInt8 = 0
        if discontinuityIndicator { flags |= 0x80 }
        if randomAccessIndicator { flags |= 0x40 }
        if elementaryStreamPriorityIndicator { flags |= 0x20 }
        if programClockReference != nil { flags |= 0x10 }
        if originalProgramClockReference != nil { flags |= 0x08 }
        if spliceCountdown != nil { flags |= 0x04 }
        if transportPrivateData != nil { flags |= 0x02 }
        if adaptationFieldExtension != nil { flags |= 0x01 }
        out.append(flags)
        if let programClockReference { out += programClockReference.bytes }
        if let originalProgramClockReference { out += originalProgramClockReference.bytes }
        if let spliceCountdown { out.append(UInt8(bitPattern: spliceCountdown)) }
        if let transportPrivateData {
            out.append(UInt8(truncatingIfNeeded: transportPrivateData.count))
            out += transportPrivateData
        }
        if let adaptationFieldExtension {
            out.append(UInt8(truncatingIfNeeded: adaptationFieldExtension.count))
            out += adaptationFieldExtension
        }
        out += repeatElement(0xFF, count: 1 + length - out.count)
        return out
    }

    /// Reads an adaptation field at the reader's position, its length byte first, checking every
    /// declared length against the field that holds it.
    ///
    /// - Parameters:
    ///   - reader: the bytes, at the field's length byte.
    ///   - maximumLength: the longest `adaptation_field_length` the packet allows: 183 when the
    ///     packet has no payload, 182 when it has one (2.4.3.5).
    /// - Throws: ``TransportStreamError/invalidField(structure:field:value:offset:allowed:)`` for a
    ///   length past the packet or a field past the adaptation field;
    ///   ``TransportStreamError/truncated(structure:_:)``.
    public init(from reader: inout ByteReader, maximumLength: Int) throws(TransportStreamError) {
        let structure = "adaptation field"
        let start = reader.offset
        let declared = Int(try TransportStreamError.reading(structure) { () throws(BinaryReadError) in try reader.readUInt8() })
        guard declared <= maximumLength else {
            throw .invalidField(structure: structure, field: "adaptation_field_length", value: Int64(declared), offset: start,
                                allowed: "0...\(maximumLength)")
        }
        var field = try TransportStreamError.reading(structure) { () throws(BinaryReadError) in try reader.readReader(declared) }
        self.init()
        length = declared
        guard declared > 0 else { return }
        let flags = try TransportStreamError.reading(structure) { () throws(BinaryReadError) in try field.readUInt8() }
        discontinuityIndicator = flags & 0x80 != 0
        randomAccessIndicator = flags & 0x40 != 0
        elementaryStreamPriorityIndicator = flags & 0x20 != 0
        func read<T>(_ name: String, _ body: (inout ByteReader) throws(BinaryReadError) -> T) throws(TransportStreamError) -> T {
            do { return try body(&field) } catch {
                throw .invalidField(structure: structure, field: name, value: Int64(error.needed), offset: error.offset,
                                    allowed: "at most the \(error.available) bytes left of adaptation_field_length \(declared)")
            }
        }
        if flags & 0x10 != 0 {
            programClockReference = try read("program_clock_reference") { (r: inout ByteReader) throws(BinaryReadError) in
                try ProgramClockReference(from: &r)
            }
        }
        if flags & 0x08 != 0 {
            originalProgramClockReference = try read("original_program_clock_reference") { (r: inout ByteReader) throws(BinaryReadError) in
                try ProgramClockReference(from: &r)
            }
        }
        if flags & 0x04 != 0 {
            spliceCountdown = Int8(bitPattern: try read("splice_countdown") { (r: inout ByteReader) throws(BinaryReadError) in try r.readUInt8() })
        }
        if flags & 0x02 != 0 {
            transportPrivateData = try read("transport_private_data_length") { (r: inout ByteReader) throws(BinaryReadError) in
                try r.readBytes(Int(try r.readUInt8()))
            }
        }
        if flags & 0x01 != 0 {
            adaptationFieldExtension = try read("adaptation_field_extension_length") { (r: inout ByteReader) throws(BinaryReadError) in
                try r.readBytes(Int(try r.readUInt8()))
            }
        }
    }
}
