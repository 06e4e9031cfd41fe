/// Bytes held in memory, read as a stream.
public struct ArrayByteSource: ByteSource, Sendable {
    private let bytes: [UInt8]
    private var position = 0

    /// A source that yields `bytes`.
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Appends at most `maxCount` bytes to `buffer`; returns how many, 0 only at the end.
    public mutating func read(into buffer: inout [UInt8], maxCount: Int) throws(ByteStreamError) -> Int {
        let count = min(max(maxCount, 0), bytes.count - position)
        buffer.append(contentsOf: bytes[position..<(position + count)])
        position += count
        return count
    }
}

/// Bytes in memory, read at any offset.
public struct ArrayRandomAccessSource: RandomAccessByteSource, Sendable {
    private let bytes: [UInt8]

    /// A source over `bytes`.
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The number of bytes.
    public var byteCount: Int64 { Int64(bytes.count) }

    /// Reads up to `count` bytes at `offset`.
    public func read(at offset: Int64, count: Int) throws(ByteStreamError) -> [UInt8] {
        guard offset >= 0, count >= 0, offset <= Int64(bytes.count) else {
            throw .system(operation: "read at \(offset)", path: "memory", errno: .invalidArgument)
        }
        let start = Int(offset)
        return Array(bytes[start..<min(bytes.count, start + count)])
    }
}
