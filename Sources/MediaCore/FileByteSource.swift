public import SystemPackage

/// A file opened for reading, closed when the value is released.
///
/// `Sendable`: ``read(at:count:)`` reads at an offset (`pread(2)`) and a regular file's
/// ``size()`` comes from `fstat(2)`, so any number of threads may use one file at once;
/// ``read(into:maxCount:)`` moves the file's one position, so sequential reading belongs to one
/// owner at a time.
public final class FileByteSource: ByteSource, RandomAccessByteSource, Sendable {
    private let descriptor: FileDescriptor
    /// The path the file was opened from.
    public let path: FilePath
    /// The file held as an input while this source lives: no output may replace it.
    package let claim: InputFiles.Claim?

    /// Opens `path` for reading.
    ///
    /// - Throws: ``ByteStreamError/system(operation:path:errno:)`` with `EISDIR` for a directory
    ///   (a playlist may name one; opened, it would read as a file of 2⁶³ bytes).
    public init(path: FilePath) throws(ByteStreamError) {
        self.path = path
        do {
            descriptor = try FileDescriptor.open(path, .readOnly, options: [.closeOnExec])
        } catch {
            throw .system(operation: "open", path: path, errno: error as? Errno ?? .ioError)
        }
        claim = InputFiles.Claim(descriptor)
        // Fully initialised: `deinit` closes the descriptor when this throws.
        if FileSystemCalls.isDirectory(descriptor) { throw .system(operation: "open", path: path, errno: .isDirectory) }
    }

    /// Opens `path` for reading at any offset: a regular file, as a container's segments must
    /// be. A FIFO, a device or a socket (which a playlist may name) is refused at once, without
    /// waiting for a writer to open the FIFO's other end.
    ///
    /// - Throws: ``ByteStreamError/system(operation:path:errno:)`` with `EISDIR` for a directory
    ///   and `ESPIPE` (`Illegal seek`) for anything else that is not a regular file.
    public convenience init(regularFileAt path: FilePath) throws(ByteStreamError) {
        try self.init(regularFileAt: path, claimingInput: true)
    }

    /// Opens `path` like ``init(regularFileAt:)``; with `claimingInput` false, the file is not
    /// held as an input (`InputFiles`): a file an origin serves, which a publisher in the same
    /// process may replace at any moment.
    package init(regularFileAt path: FilePath, claimingInput: Bool) throws(ByteStreamError) {
        self.path = path
        do {
            // Non-blocking, so that a FIFO with no writer opens at once to be refused; a
            // regular file reads the same either way.
            descriptor = try FileDescriptor.open(path, .readOnly, options: [.closeOnExec, .nonBlocking])
        } catch {
            throw .system(operation: "open", path: path, errno: error as? Errno ?? .ioError)
        }
        claim = claimingInput ? InputFiles.Claim(descriptor) : nil
        guard FileSystemCalls.regularFileSize(descriptor) != nil else {
            // Fully initialised: `deinit` closes the descriptor when this throws.
            throw FileSystemCalls.isDirectory(descriptor) ? .system(operation: "open", path: path, errno: .isDirectory)
                : .system(operation: "read at any offset (not a regular file)", path: path, errno: .illegalSeek)
        }
    }

    deinit { try? descriptor.close() }

    /// The regular file at `path`, opened, for a look at its bytes (a format's sniff, a tag);
    /// `nil` when nothing readable is there, or something other than a regular file. A FIFO is
    /// never opened by this: a reader that opened it only to look, and closed it, would wake its
    /// writer and then leave it with no reader (`SIGPIPE`), or take bytes the job needs.
    public static func regularFile(at path: FilePath) -> FileByteSource? {
        guard FileSystemCalls.isRegularFile(at: path) else { return nil }
        return try? FileByteSource(regularFileAt: path)
    }

    /// The file's size in bytes (0 for a pipe or device).
    public var byteCount: Int64 { size() ?? 0 }

    /// Whether the file is a regular file (not a directory, pipe, device or socket).
    public var isRegularFile: Bool { FileSystemCalls.regularFileSize(descriptor) != nil }

    /// When the file's data last changed, in seconds and nanoseconds since 1970-01-01 UTC
    /// (`fstat(2)`'s `st_mtim`): what an HTTP origin's validators are made from.
    public var modificationTime: (seconds: Int64, nanoseconds: Int64)? { FileSystemCalls.modificationTime(descriptor) }

    /// The file's size in bytes, or `nil` for a pipe or device. A regular file's comes from
    /// `fstat(2)`, without touching the file position; a device's from seeking to its end.
    public func size() -> Int64? {
        if let size = FileSystemCalls.regularFileSize(descriptor) { return size }
        guard let current = try? descriptor.seek(offset: 0, from: .current),
              let end = try? descriptor.seek(offset: 0, from: .end) else { return nil }
        _ = try? descriptor.seek(offset: current, from: .start)
        return end
    }

    /// Reads up to `count` bytes at absolute `offset` without moving the stream position (pread);
    /// fewer only at the end of the file.
    public func read(at offset: Int64, count: Int) throws(ByteStreamError) -> [UInt8] {
        guard offset >= 0, count >= 0 else {
            throw .system(operation: "read at \(offset)", path: path, errno: .invalidArgument)
        }
        return try descriptor.readFully(at: offset, count: count, path: path)
    }

    /// Appends at most `maxCount` bytes to `buffer`; returns how many, 0 only at the end.
    public func read(into buffer: inout [UInt8], maxCount: Int) throws(ByteStreamError) -> Int {
        guard maxCount > 0 else { return 0 }
        let oldCount = buffer.count
        var failure: Errno?
        buffer.append(contentsOf: repeatElement(0, count: maxCount))
        let readCount = buffer.withUnsafeMutableBytes { raw -> Int in
            let target = UnsafeMutableRawBufferPointer(rebasing: raw[oldCount...])
            do { return try descriptor.read(into: target, retryOnInterrupt: true) } catch {
                failure = error as? Errno ?? .ioError
                return 0
            }
        }
        buffer.removeLast(maxCount - readCount)
        if let failure { throw .system(operation: "read", path: path, errno: failure) }
        return readCount
    }
}
