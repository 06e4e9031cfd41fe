internal import SystemPackage

extension FileByteSink: RandomAccessByteSource {
    /// Reads back up to `count` bytes already written at absolute `offset` (flushing the buffer
    /// first); fewer only past the end of what was written. What lets a muxer move media it has
    /// written (the faststart layout) without a second file.
    public func read(at offset: Int64, count: Int) throws(ByteStreamError) -> [UInt8] {
        guard offset >= 0, count >= 0 else {
            throw .system(operation: "read back at \(offset)", path: path, errno: .invalidArgument)
        }
        try flush()
        return try descriptor.readFully(at: offset, count: count, path: path)
    }
}

extension ArrayByteSink: RandomAccessByteSource {
    /// Reads back up to `count` bytes written at `offset`; fewer only at the end.
    public func read(at offset: Int64, count: Int) throws(ByteStreamError) -> [UInt8] {
        guard offset >= 0, count >= 0, offset <= byteCount else {
            throw .system(operation: "read back at \(offset)", path: "memory", errno: .invalidArgument)
        }
        let start = Int(offset)
        return Array(bytes[start..<min(bytes.count, start + count)])
    }
}

extension FileDescriptor {
    /// Reads up to `count` bytes at absolute `offset` with `pread`, retrying short reads; fewer
    /// only at the end of the file. The one positioned read of the file sources and sinks.
    func readFully(at offset: Int64, count: Int, path: FilePath) throws(ByteStreamError) -> [UInt8] {
        // The array is filled by the reads, not zeroed first (that would be a second pass over
        // every byte); only the bytes read count as initialised.
        var failure: Errno?
        let result = [UInt8](unsafeUninitializedCapacity: count) { raw, initializedCount in
            var filled = 0
            let bytes = UnsafeMutableRawBufferPointer(raw)
            while filled < count {
                do {
                    let got = try read(fromAbsoluteOffset: offset + Int64(filled),
                                       into: UnsafeMutableRawBufferPointer(rebasing: bytes[filled...]), retryOnInterrupt: true)
                    if got == 0 { break }
                    filled += got
                } catch {
                    failure = error as? Errno ?? .ioError
                    break
                }
            }
            initializedCount = filled
        }
        if let failure { throw .system(operation: "read", path: path, errno: failure) }
        return result
    }
}
