public import MediaCore

/// The children of a container box held in memory, one at a time, each with a reader over just
/// its payload. Sizes are checked against the parent before anything is read; nesting is capped.
public struct BoxIterator {
    /// The deepest nesting accepted (real files use under 12 levels).
    public static let maximumDepth = 24

    private var reader: ByteReader
    /// The container's path.
    public let path: BoxPath
    private var counts: [FourCharacterCode: Int] = [:]

    /// Iterates the boxes in `reader`'s window, which belongs to the container at `path`.
    public init(_ reader: ByteReader, path: BoxPath) throws(MP4Error) {
        guard path.depth <= Self.maximumDepth else { throw .nestingTooDeep(path: path, offset: reader.offset) }
        self.reader = reader
        self.path = path
    }

    /// The next child: its header, its path (with an index for repeated types) and a reader over
    /// its payload; `nil` at the end. Fewer than 8 trailing bytes are ignored, as players do.
    public mutating func next() throws(MP4Error) -> (header: BoxHeader, path: BoxPath, payload: ByteReader)? {
        guard reader.remaining >= 8 else { return nil }
        let header = try BoxHeader.parse(from: &reader, containerRemaining: Int64(reader.remaining) + 8, path: path)
        let count = (counts[header.type] ?? 0) + 1
        counts[header.type] = count
        let childPath = path.appending(header.type, index: header.type == "trak" || header.type == "traf" || header.type == "trun" ? count : nil)
        let payloadLength = Int(header.payloadSize)
        let payload = try MP4Error.reading(childPath) { () throws(BinaryReadError) in try reader.readReader(payloadLength) }
        return (header, childPath, payload)
    }
}

/// A full box's `version` and `flags` (ISO/IEC 14496-12, 4.2 `FullBox`).
public struct FullBoxHeader: Sendable, Hashable {
    /// `version`.
    public var version: UInt8
    /// `flags` (24 bits).
    public var flags: UInt32

    /// A header.
    public init(version: UInt8, flags: UInt32) {
        self.version = version
        self.flags = flags
    }

    /// Reads version and flags.
    static func parse(from reader: inout ByteReader, path: BoxPath) throws(MP4Error) -> FullBoxHeader {
        let word = try MP4Error.reading(path) { () throws(BinaryReadError) in try reader.readUInt32() }
        return FullBoxHeader(version: UInt8(word >> 24), flags: word & 0xFF_FFFF)
    }

    /// Throws unless `version` is one of `supported`.
    func require(versions supported: ClosedRange<UInt8>, path: BoxPath, offset: Int64) throws(MP4Error) {
        guard supported.contains(version) else {
            throw .invalidField(path: path, field: "version", value: Int64(version), offset: offset,
                                allowed: "\(supported.lowerBound)...\(supported.upperBound)")
        }
    }
}

extension ByteReader {
    /// Checks that `count` entries of `entrySize` bytes fit in what remains, before a table is read.
    func checkTable(count: UInt32, entrySize: Int, path: BoxPath, field: String) throws(MP4Error) {
        let needed = Int64(count) * Int64(entrySize)
        guard needed <= Int64(remaining) else {
            throw .invalidField(path: path, field: field, value: Int64(count), offset: offset,
                                allowed: "at most \(remaining / Swift.max(entrySize, 1)) (the \(remaining) bytes that remain hold no more)")
        }
    }
}
