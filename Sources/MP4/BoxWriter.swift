internal import MediaCore

/// Builds ISO BMFF boxes in memory (ISO/IEC 14496-12, 4.2): a box's size is filled in when its
/// body is done, and a box whose size does not fit 32 bits gets a 64-bit `largesize`.
struct BoxWriter {
    private(set) var writer = ByteWriter()

    var bytes: [UInt8] { writer.bytes }
    var count: Int { writer.count }

    mutating func box(_ type: FourCharacterCode, _ body: (inout BoxWriter) -> Void) {
        let start = writer.count
        writer.write(UInt32(0))
        writer.write(type.rawValue)
        body(&self)
        let size = writer.count - start
        if size <= Int(UInt32.max) {
            writer.patchBigEndian(UInt64(size), byteCount: 4, at: start)
        } else {
            // size = 1, then the 64-bit size after the type.
            var bytes = writer.bytes
            bytes.insert(contentsOf: [UInt8](repeating: 0, count: 8), at: start + 8)
            writer = ByteWriter()
            writer.write(contentsOf: bytes)
            writer.patchBigEndian(1, byteCount: 4, at: start)
            writer.patchBigEndian(UInt64(size + 8), byteCount: 8, at: start + 8)
        }
    }

    mutating func fullBox(_ type: FourCharacterCode, version: UInt8 = 0, flags: UInt32 = 0, _ body: (inout BoxWriter) -> Void) {
        box(type) { box in
            box.u32(UInt32(version) << 24 | flags & 0xFF_FFFF)
            body(&box)
        }
    }

    mutating func u8(_ value: UInt8) { writer.write(value) }
    mutating func u16(_ value: UInt16) { writer.write(value) }
    mutating func u32(_ value: UInt32) { writer.write(value) }
    mutating func u64(_ value: UInt64) { writer.write(value) }
    mutating func i32(_ value: Int32) { writer.write(UInt32(bitPattern: value)) }
    mutating func zeros(_ count: Int) { writer.write(contentsOf: repeatElement(UInt8(0), count: count)) }
    mutating func raw(_ bytes: some Sequence<UInt8>) { writer.write(contentsOf: bytes) }
    mutating func fourCC(_ code: FourCharacterCode) { writer.write(code.rawValue) }
}
