public import MediaCore

/// Decodes AMF0 values (AMF0 spec 2) from bytes, with limits: every length is checked against
/// the bytes that remain before anything is allocated (through ``/MediaCore/ByteReader``), and
/// objects and arrays nest at most ``maximumDepth`` deep, so hostile bytes can neither exhaust
/// memory nor the stack.
///
/// Strings that are not valid UTF-8 are read with replacement characters.
public struct AMF0Reader: Sendable {
    /// How deep objects, ECMA arrays and strict arrays may nest (a command's own values are at
    /// depth 1).
    public static let defaultMaximumDepth = 32

    private var reader: ByteReader
    /// How deep values may nest.
    public let maximumDepth: Int

    /// A reader of `bytes`, whose first byte is at absolute offset `baseOffset`.
    public init(_ bytes: [UInt8], baseOffset: Int64 = 0, maximumDepth: Int = AMF0Reader.defaultMaximumDepth) {
        self.init(ByteReader(bytes, baseOffset: baseOffset), maximumDepth: maximumDepth)
    }

    /// A reader of what `reader` has left.
    public init(_ reader: ByteReader, maximumDepth: Int = AMF0Reader.defaultMaximumDepth) {
        self.reader = reader
        self.maximumDepth = max(1, maximumDepth)
    }

    /// Whether every byte has been read.
    public var isAtEnd: Bool { reader.isAtEnd }

    /// Absolute offset of the next byte.
    public var offset: Int64 { reader.offset }

    /// The next value.
    ///
    /// - Throws: ``RTMPError/truncated(structure:_:)``, ``RTMPError/unsupportedAMF0Marker(_:offset:)``,
    ///   ``RTMPError/amf0NestingTooDeep(limit:offset:)``, ``RTMPError/missingAMF0ObjectEnd(offset:)``.
    public mutating func next() throws(RTMPError) -> AMF0Value {
        try value(depth: 1)
    }

    /// Every value up to the end of the bytes (a command's or data message's body).
    public mutating func readAll() throws(RTMPError) -> [AMF0Value] {
        var values: [AMF0Value] = []
        while !reader.isAtEnd { values.append(try next()) }
        return values
    }

    private mutating func value(depth: Int) throws(RTMPError) -> AMF0Value {
        let start = reader.offset
        let marker = try RTMPError.reading("AMF0 value") { () throws(BinaryReadError) in try reader.readUInt8() }
        switch marker {
        case AMF0Value.Marker.number:
            return .number(Double(bitPattern: try read("AMF0 number") { (r: inout ByteReader) throws(BinaryReadError) in try r.readUInt64() }))
        case AMF0Value.Marker.boolean:
            return .boolean(try read("AMF0 boolean") { (r: inout ByteReader) throws(BinaryReadError) in try r.readUInt8() } != 0)
        case AMF0Value.Marker.string:
            return .string(try string(lengthBytes: 2, "AMF0 string"))
        case AMF0Value.Marker.longString:
            return .longString(try string(lengthBytes: 4, "AMF0 long string"))
        case AMF0Value.Marker.null:
            return .null
        case AMF0Value.Marker.undefined:
            return .undefined
        case AMF0Value.Marker.object:
            guard depth <= maximumDepth else { throw .amf0NestingTooDeep(limit: maximumDepth, offset: start) }
            return .object(try properties(depth: depth))
        case AMF0Value.Marker.ecmaArray:
            guard depth <= maximumDepth else { throw .amf0NestingTooDeep(limit: maximumDepth, offset: start) }
            // The count is advisory (AMF0 2.10): the object-end marker ends the array.
            _ = try read("AMF0 ECMA array") { (r: inout ByteReader) throws(BinaryReadError) in try r.readUInt32() }
            return .ecmaArray(try properties(depth: depth))
        case AMF0Value.Marker.strictArray:
            guard depth <= maximumDepth else { throw .amf0NestingTooDeep(limit: maximumDepth, offset: start) }
            let count = Int(try read("AMF0 strict array") { (r: inout ByteReader) throws(BinaryReadError) in try r.readUInt32() })
            // Every value takes at least its marker's byte: a count beyond the bytes left is a lie.
            guard count <= reader.remaining else {
                throw .truncated(structure: "AMF0 strict array",
                                 BinaryReadError(offset: reader.offset, needed: count, available: reader.remaining, unit: .bytes))
            }
            var values: [AMF0Value] = []
            values.reserveCapacity(count)
            for _ in 0..<count { values.append(try value(depth: depth + 1)) }
            return .strictArray(values)
        case AMF0Value.Marker.date:
            let milliseconds = Double(bitPattern: try read("AMF0 date") { (r: inout ByteReader) throws(BinaryReadError) in try r.readUInt64() })
            let zone = Int16(bitPattern: try read("AMF0 date") { (r: inout ByteReader) throws(BinaryReadError) in try r.readUInt16() })
            return .date(milliseconds: milliseconds, timeZone: zone)
        default:
            throw .unsupportedAMF0Marker(marker, offset: start)
        }
    }

    private mutating func properties(depth: Int) throws(RTMPError) -> [AMF0Property] {
        var properties: [AMF0Property] = []
        while true {
            let key = try string(lengthBytes: 2, "AMF0 property name")
            if key.isEmpty {
                let at = reader.offset
                let marker = try read("AMF0 object end") { (r: inout ByteReader) throws(BinaryReadError) in try r.readUInt8() }
                if marker == AMF0Value.Marker.objectEnd { return properties }
                throw .missingAMF0ObjectEnd(offset: at)
            }
            properties.append(AMF0Property(key, try value(depth: depth + 1)))
        }
    }

    private mutating func string(lengthBytes: Int, _ structure: String) throws(RTMPError) -> String {
        let bytes = try read(structure) { (r: inout ByteReader) throws(BinaryReadError) in
            let count = Int(try r.readBigEndian(byteCount: lengthBytes))
            return try r.readBytes(count)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private mutating func read<T>(_ structure: String, _ body: (inout ByteReader) throws(BinaryReadError) -> T) throws(RTMPError) -> T {
        do { return try body(&reader) } catch { throw .truncated(structure: structure, error) }
    }
}
