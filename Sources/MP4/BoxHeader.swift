public import MediaCore

/// The header of an ISO BMFF box (ISO/IEC 14496-12, 4.2 `Box`): size, type, the 64-bit
/// `largesize` when size is 1, "to the end of the container" when size is 0, and the
/// `usertype` of a `uuid` box.
public struct BoxHeader: Sendable, Hashable {
    /// The box type.
    public var type: FourCharacterCode
    /// Absolute offset of the box's first byte.
    public var offset: Int64
    /// Bytes of header: 8, 16 with `largesize`, plus 16 for a `uuid` box's `usertype`.
    public var headerSize: Int
    /// The whole box, header included.
    public var size: Int64
    /// Whether the size field was 0 ("extends to the end of the container").
    public var extendsToEnd: Bool
    /// The `usertype` of a `uuid` box.
    public var userType: [UInt8]?

    /// A header.
    public init(type: FourCharacterCode, offset: Int64, headerSize: Int, size: Int64, extendsToEnd: Bool = false, userType: [UInt8]? = nil) {
        self.type = type
        self.offset = offset
        self.headerSize = headerSize
        self.size = size
        self.extendsToEnd = extendsToEnd
        self.userType = userType
    }

    /// Offset of the first payload byte.
    public var payloadOffset: Int64 { offset + Int64(headerSize) }
    /// Bytes of payload.
    public var payloadSize: Int64 { size - Int64(headerSize) }
    /// Offset just past the box.
    public var end: Int64 { offset.saturatingAdding(size) }

    /// Reads a header at the reader's position. `containerRemaining` is how many bytes remain in
    /// the container from the header's first byte (the file, or the parent's payload): the size
    /// is checked against it.
    ///
    /// - Parameter allowOverrun: accept a box longer than its container and clamp it (for a last
    ///   top-level `mdat` that claims more than the file has); the caller reports the damage.
    static func parse(from reader: inout ByteReader, containerRemaining: Int64, path: BoxPath,
                      allowOverrun: (FourCharacterCode) -> Bool = { _ in false }) throws(MP4Error) -> BoxHeader {
        let offset = reader.offset
        let (size32, rawType) = try MP4Error.reading(path) { () throws(BinaryReadError) in (try reader.readUInt32(), try reader.readUInt32()) }
        let type = FourCharacterCode(rawValue: rawType)
        let boxPath = path.appending(type)
        var headerSize = 8
        var size = Int64(size32)
        var toEnd = false
        if size32 == 1 {
            let large = try MP4Error.reading(boxPath) { () throws(BinaryReadError) in try reader.readUInt64() }
            guard large <= UInt64(Int64.max) else {
                throw .invalidBoxSize(path: boxPath, offset: offset, size: -1, reason: "does not fit 63 bits")
            }
            size = Int64(large)
            headerSize = 16
        } else if size32 == 0 {
            size = containerRemaining
            toEnd = true
        }
        var userType: [UInt8]?
        if type == "uuid" {
            userType = try MP4Error.reading(boxPath) { () throws(BinaryReadError) in try reader.readBytes(16) }
            headerSize += 16
        }
        guard size >= Int64(headerSize) else {
            throw .invalidBoxSize(path: boxPath, offset: offset, size: size, reason: "is less than its \(headerSize)-byte header")
        }
        if size > containerRemaining {
            guard allowOverrun(type) else {
                throw .invalidBoxSize(path: boxPath, offset: offset, size: size,
                                      reason: "exceeds the \(containerRemaining) bytes its container has left")
            }
        }
        return BoxHeader(type: type, offset: offset, headerSize: headerSize, size: size, extendsToEnd: toEnd, userType: userType)
    }
}
