/// Where a stream reader gets its bytes: a file, a pipe, memory.
public protocol ByteSource {
    /// Appends at most `maxCount` bytes to `buffer`; returns how many, 0 only at the end.
    mutating func read(into buffer: inout [UInt8], maxCount: Int) throws(ByteStreamError) -> Int
}

/// A source read at any offset: a file, or bytes in memory. The MP4 demuxer reads boxes and
/// samples through it, so memory holds what is being parsed, never the whole file.
public protocol RandomAccessByteSource {
    /// The source's length in bytes.
    var byteCount: Int64 { get }
    /// Reads up to `count` bytes at `offset`; fewer only at the end of the source.
    func read(at offset: Int64, count: Int) throws(ByteStreamError) -> [UInt8]
}
