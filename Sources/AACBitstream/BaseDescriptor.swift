public import MediaCore

/// The tag and size that start every descriptor of ISO/IEC 14496-1, 7.2.2.1 (`BaseDescriptor`),
/// with the 1–4 byte expandable size field of 8.3.3 (`sizeOfInstance`).
public struct DescriptorHeader: Sendable, Hashable {
    /// `ES_DescrTag`.
    public static let esDescriptorTag: UInt8 = 0x03
    /// `DecoderConfigDescrTag`.
    public static let decoderConfigTag: UInt8 = 0x04
    /// `DecSpecificInfoTag`.
    public static let decoderSpecificInfoTag: UInt8 = 0x05
    /// `SLConfigDescrTag`.
    public static let slConfigTag: UInt8 = 0x06

    /// The descriptor's tag.
    public var tag: UInt8
    /// Bytes of payload after the header.
    public var size: Int
    /// Bytes the size field took (1–4); writers that pad the field (Apple's, old QuickTime's) use 4.
    public var sizeFieldLength: Int

    /// A header.
    public init(tag: UInt8, size: Int, sizeFieldLength: Int = 1) {
        self.tag = tag
        self.size = size
        self.sizeFieldLength = sizeFieldLength
    }

    /// The largest size four 7-bit groups can hold.
    public static let maximumSize = (1 << 28) - 1

    /// Reads a tag and an expandable size, and checks the size against the bytes that remain.
    public init(from reader: inout ByteReader, structure: String) throws(AACBitstreamError) {
        let start = reader.offset
        let (tag, size, fieldLength) = try AACBitstreamError.reading(structure) { () throws(BinaryReadError) -> (UInt8, Int, Int) in
            let tag = try reader.readUInt8()
            var size = 0
            for length in 1...4 {
                let byte = try reader.readUInt8()
                size = size << 7 | Int(byte & 0x7F)
                if byte & 0x80 == 0 { return (tag, size, length) }
            }
            return (tag, -1, 4)
        }
        guard size >= 0 else {
            throw .invalidField(structure: structure, field: "sizeOfInstance", value: -1, offset: start + 1,
                                allowed: "at most 4 bytes (the 4th has its continuation bit set)")
        }
        guard size <= reader.remaining else {
            throw .invalidField(structure: structure, field: "sizeOfInstance", value: Int64(size), offset: start + 1,
                                allowed: "0...\(reader.remaining) (the bytes that remain)")
        }
        self.init(tag: tag, size: size, sizeFieldLength: fieldLength)
    }

    /// Writes the tag and the size, in `sizeFieldLength` bytes or as few as the size needs if more.
    public func write(to writer: inout ByteWriter) throws(AACBitstreamError) {
        guard (0...Self.maximumSize).contains(size) else {
            throw .unrepresentable(structure: "descriptor 0x\(String(tag, radix: 16))", field: "sizeOfInstance",
                                   value: Int64(size), allowed: "0...\(Self.maximumSize)")
        }
        var needed = 1
        while needed < 4 && size >= 1 << (7 * needed) { needed += 1 }
        let length = max(needed, min(sizeFieldLength, 4))
        writer.write(tag)
        for index in stride(from: length - 1, through: 0, by: -1) {
            let group = UInt8((size >> (7 * index)) & 0x7F)
            writer.write(index == 0 ? group : group | 0x80)
        }
    }
}

/// A descriptor of ISO/IEC 14496-1 (7.2.2.1 `BaseDescriptor` and its subclasses) that KeyFrameKit
/// does not interpret, kept whole (IPI, IPMP, language, QoS, registration, profile-level
/// indication, …).
public struct OpaqueDescriptor: Sendable, Hashable {
    /// Its tag and size field.
    public var header: DescriptorHeader
    /// Its payload.
    public var payload: [UInt8]

    /// A descriptor with `payload`; the header's size is set from it.
    public init(tag: UInt8, payload: [UInt8], sizeFieldLength: Int = 1) {
        self.header = DescriptorHeader(tag: tag, size: payload.count, sizeFieldLength: sizeFieldLength)
        self.payload = payload
    }

    /// Writes header and payload.
    public func write(to writer: inout ByteWriter) throws(AACBitstreamError) {
        var header = self.header
        header.size = payload.count
        try header.write(to: &writer)
        writer.write(contentsOf: payload)
    }
}

extension ByteWriter {
    /// Writes a descriptor whose payload `body` writes, with the size filled in.
    mutating func writeDescriptor(tag: UInt8, sizeFieldLength: Int,
                                  _ body: (inout ByteWriter) throws(AACBitstreamError) -> Void) throws(AACBitstreamError) {
        var payload = ByteWriter()
        try body(&payload)
        try DescriptorHeader(tag: tag, size: payload.count, sizeFieldLength: sizeFieldLength).write(to: &self)
        write(contentsOf: payload.bytes)
    }
}
