/// A value of Action Message Format 0 (Adobe, *AMF0 File Format Specification*, 2007), the
/// encoding of RTMP's command and data messages (RTMP 1.0 7.1.1, 7.1.2).
///
/// Objects and ECMA arrays keep their properties in order: servers and CDN ingests read
/// `connect`'s command object and `onMetaData` by name, but the order is what goes on the wire.
/// Encoding never fails; ``AMF0Reader`` decodes, with limits.
public enum AMF0Value: Sendable, Hashable {
    /// An IEEE 754 double (AMF0 2.2, marker 0x00).
    case number(Double)
    /// A boolean (AMF0 2.3, marker 0x01).
    case boolean(Bool)
    /// A UTF-8 string (AMF0 2.4, marker 0x02). One longer than 65,535 bytes is written as a
    /// long string (marker 0x0C), as the spec asks.
    case string(String)
    /// An anonymous object: properties in order (AMF0 2.5, marker 0x03). A property with an
    /// empty name is not written (AMF0 reads an empty name as the object's end).
    case object([AMF0Property])
    /// Null (AMF0 2.7, marker 0x05).
    case null
    /// Undefined (AMF0 2.8, marker 0x06).
    case undefined
    /// An associative array (AMF0 2.10, marker 0x08): written with its count, read up to its
    /// object-end marker whatever the count says (as Flash Player does).
    case ecmaArray([AMF0Property])
    /// A dense array (AMF0 2.12, marker 0x0A).
    case strictArray([AMF0Value])
    /// A date: milliseconds since 1970-01-01 UTC and a time zone that AMF0 2.13 says is
    /// reserved (0 when written by Flash) (marker 0x0B).
    case date(milliseconds: Double, timeZone: Int16)
    /// A UTF-8 string of any length up to 4 GiB (AMF0 2.14, marker 0x0C).
    case longString(String)

    /// The type markers of AMF0 2.1 that this module reads and writes.
    public enum Marker {
        /// `number-marker`.
        public static let number: UInt8 = 0x00
        /// `boolean-marker`.
        public static let boolean: UInt8 = 0x01
        /// `string-marker`.
        public static let string: UInt8 = 0x02
        /// `object-marker`.
        public static let object: UInt8 = 0x03
        /// `null-marker`.
        public static let null: UInt8 = 0x05
        /// `undefined-marker`.
        public static let undefined: UInt8 = 0x06
        /// `ecma-array-marker`.
        public static let ecmaArray: UInt8 = 0x08
        /// `object-end-marker`, after an empty name (`UTF-8-empty`, 0x00 0x00).
        public static let objectEnd: UInt8 = 0x09
        /// `strict-array-marker`.
        public static let strictArray: UInt8 = 0x0A
        /// `date-marker`.
        public static let date: UInt8 = 0x0B
        /// `long-string-marker`.
        public static let longString: UInt8 = 0x0C
    }

    /// The value's bytes: marker and payload.
    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        encode(into: &bytes)
        return bytes
    }

    /// Appends the value's bytes (marker and payload) to `bytes`.
    public func encode(into bytes: inout [UInt8]) {
        switch self {
        case .number(let value):
            bytes.append(Marker.number)
            Self.append(value.bitPattern, byteCount: 8, to: &bytes)
        case .boolean(let value):
            bytes.append(Marker.boolean)
            bytes.append(value ? 1 : 0)
        case .string(let value):
            let utf8 = Array(value.utf8)
            if utf8.count > 0xFFFF {
                bytes.append(Marker.longString)
                Self.append(UInt64(utf8.count), byteCount: 4, to: &bytes)
            } else {
                bytes.append(Marker.string)
                Self.append(UInt64(utf8.count), byteCount: 2, to: &bytes)
            }
            bytes += utf8
        case .object(let properties):
            bytes.append(Marker.object)
            Self.encode(properties, into: &bytes)
        case .null:
            bytes.append(Marker.null)
        case .undefined:
            bytes.append(Marker.undefined)
        case .ecmaArray(let properties):
            bytes.append(Marker.ecmaArray)
            Self.append(UInt64(min(properties.count, Int(UInt32.max))), byteCount: 4, to: &bytes)
            Self.encode(properties, into: &bytes)
        case .strictArray(let values):
            bytes.append(Marker.strictArray)
            Self.append(UInt64(min(values.count, Int(UInt32.max))), byteCount: 4, to: &bytes)
            for value in values { value.encode(into: &bytes) }
        case .date(let milliseconds, let timeZone):
            bytes.append(Marker.date)
            Self.append(milliseconds.bitPattern, byteCount: 8, to: &bytes)
            Self.append(UInt64(UInt16(bitPattern: timeZone)), byteCount: 2, to: &bytes)
        case .longString(let value):
            bytes.append(Marker.longString)
            let utf8 = Array(value.utf8)
            Self.append(UInt64(min(utf8.count, Int(UInt32.max))), byteCount: 4, to: &bytes)
            bytes += utf8
        }
    }

    /// The bytes of `values` one after the other: a command's or a data message's body
    /// (RTMP 1.0 7.1.1, 7.1.2).
    public static func encode(_ values: [AMF0Value]) -> [UInt8] {
        var bytes: [UInt8] = []
        for value in values { value.encode(into: &bytes) }
        return bytes
    }

    /// The value of the property named `key` of an object or ECMA array (the first, if several);
    /// `nil` for other values.
    public subscript(key: String) -> AMF0Value? {
        switch self {
        case .object(let properties), .ecmaArray(let properties):
            properties.first { $0.key == key }?.value
        default:
            nil
        }
    }

    /// The text of a string or long string; `nil` for other values.
    public var stringValue: String? {
        switch self {
        case .string(let text), .longString(let text): text
        default: nil
        }
    }

    /// The number of a number; `nil` for other values.
    public var numberValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// Properties (AMF0 2.5 `object-property`*) then the object end: each name as a 16-bit
    /// length and UTF-8 (a name over 65,535 bytes is cut there), then `0x00 0x00 0x09`. A
    /// property with an empty name cannot be written (it would read as the end) and is left out.
    private static func encode(_ properties: [AMF0Property], into bytes: inout [UInt8]) {
        for property in properties where !property.key.isEmpty {
            let key = Array(property.key.utf8.prefix(0xFFFF))
            append(UInt64(key.count), byteCount: 2, to: &bytes)
            bytes += key
            property.value.encode(into: &bytes)
        }
        bytes += [0x00, 0x00, Marker.objectEnd]
    }

    private static func append(_ value: UInt64, byteCount: Int, to bytes: inout [UInt8]) {
        for shift in stride(from: (byteCount - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
