/// A sink that collects what is written in memory.
public struct ArrayByteSink: SeekableByteSink, Sendable {
    /// Everything written so far.
    public private(set) var bytes: [UInt8] = []

    /// An empty sink.
    public init() {}

    /// Writes all of `buffer`.
    public mutating func write(_ buffer: UnsafeRawBufferPointer) throws(ByteStreamError) {
        bytes.append(contentsOf: buffer)
    }

    /// Bytes written so far.
    public var byteCount: Int64 { Int64(bytes.count) }

    /// Overwrites bytes already written.
    public mutating func overwrite(_ data: [UInt8], at offset: Int64) throws(ByteStreamError) {
        guard offset >= 0, offset + Int64(data.count) <= Int64(bytes.count) else {
            throw .system(operation: "overwrite", path: "memory", errno: .invalidArgument)
        }
        bytes.replaceSubrange(Int(offset)..<(Int(offset) + data.count), with: data)
    }
}
