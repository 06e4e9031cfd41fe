public import SystemPackage

/// A file written under a temporary name and renamed to its own only by ``commit()``, so that
/// an error, a crash or a cancelled job never leaves a half-written file under the output name.
///
/// ``commit()`` flushes, `fsync(2)`s and closes the temporary file, gives it its name with one
/// `rename(2)` (which replaces an existing file atomically: a crash at any moment leaves the
/// old file or the complete new one, never neither), then `fsync(2)`s the directory so that the
/// new name survives a power cut too.
///
/// Writes are gathered in a 256 KiB buffer, so writing many small packets costs few system calls.
///
/// A sink at ``standardOutputPath`` (`-`) writes to standard output instead, as a stream: in
/// order, nothing renamed or synced, and nothing already written rewritten (``canOverwrite`` is
/// false).
public final class FileByteSink: SeekableByteSink {
    /// The path that names standard output: `-`, as on every command line.
    public static let standardOutputPath: FilePath = "-"

    let descriptor: FileDescriptor
    /// The name the file gets on ``commit()``.
    public let path: FilePath
    /// Where ``commit()`` renames the file: ``path``, or, when ``path`` is a symbolic link, the
    /// file the link names (the link stays a link).
    let destination: FilePath
    /// The path as errors name it, made once.
    /// Where the bytes go until ``commit()``.
    public let temporaryPath: FilePath
    private var isOpen = true
    private let isAtomic: Bool
    /// Whether this writes to standard output (a stream, not a file).
    public let isStandardOutput: Bool
    /// Whether ``commit()`` renames ``temporaryPath`` onto the destination: always for an atomic
    /// sink, and for one written in place beside a file it replaces.
    private let renamesOnCommit: Bool

    /// Whether this sink, written in place (not atomic), writes beside an older output that it
    /// replaces on ``commit()`` (`NAME.partial.EXT`), rather than under its own name.
    public var writesBeside: Bool { renamesOnCommit && !isAtomic }
    private var buffer: [UInt8] = []
    private var flushedCount: Int64 = 0
    /// The length at the last ``flush()``: where the writer's last complete unit (a fragment, a
    /// packet) ends. A sink written in place whose write fails is cut back to it, so that what it
    /// keeps ends with a whole unit and plays without a warning.
    private var completeCount: Int64 = 0
    /// Set when a write has failed: the sink is dead, and is never flushed again (what is
    /// buffered is part of an unfinished unit).
    private var hasFailed = false
    /// Where the bytes not yet handed to writeback start (see `startWriteback()`).
    private var writebackStart: Int64 = 0
    private static let bufferCapacity = 256 * 1024
    /// How many written bytes gather before their writeback is started.
    private static let writebackStride: Int64 = 4 * 1024 * 1024

    /// Creates `path`'s temporary sibling for writing; with `atomic` false, writes where a
    /// killed job leaves a playable file (crash-safe recording, where what is written must
    /// survive a kill): `path` itself when nothing is there, else a new file beside it,
    /// `NAME.partial.EXT` (`NAME.partial-2.EXT`… when taken), that replaces `path` only on
    /// ``commit()``, so an existing output is never written over.
    ///
    /// A sink that replaces a file keeps what the file was: its permission bits, and its owner
    /// and group where this process may set them; through a symbolic link, the link's target is
    /// replaced (beside it) and the link stays. A device, a directory, a FIFO or a socket is never
    /// written to nor replaced, and neither is a file this process is reading (`InputFiles`),
    /// unless `replacingInput`: an atomic sink may then replace the file it was made from (a
    /// rewrite of a file's own tags), which stays whole until the commit's rename.
    public init(path: FilePath, atomic: Bool = true, replacingInput: Bool = false) throws(ByteStreamError) {
        self.path = path
        if path == Self.standardOutputPath {
            isStandardOutput = true
            destination = path
            temporaryPath = path
            isAtomic = false
            renamesOnCommit = false
            descriptor = .standardOutput
            buffer.reserveCapacity(Self.bufferCapacity)
            return
        }
        isStandardOutput = false
        do throws(Errno) { destination = try FileSystemCalls.followingSymbolicLinks(path) } catch {
            throw .system(operation: "follow the link", path: path, errno: error)
        }
        // A device, a directory or a FIFO is never replaced by a regular file, nor written.
        if let kind = FileSystemCalls.kindOtherThanRegularFile(at: destination) {
            throw .refused(path: destination, reason: "\(kind), not a regular file: an output is written only as a regular file")
        }
        // Nor is any file this process reads, under whatever name or link.
        if !(replacingInput && atomic), InputFiles.contains(destination) {
            throw .refused(path: path, reason: "an input of this job (the same file, or a link to it): the output would destroy it; choose another name")
        }
        let directory = destination.removingLastComponent()
        func sibling(_ name: String) -> FilePath { directory.isEmpty ? FilePath(name) : directory.appending(name) }
        let replaced = FileSystemCalls.regularFile(at: destination)
        isAtomic = atomic
        if atomic {
            temporaryPath = sibling(".\(destination.lastComponent?.string ?? "output").partial-\(Self.uniqueSuffix())")
        } else if replaced != nil {
            // Beside the old output, under a name a player still opens by its extension.
            let stem = destination.lastComponent?.stem ?? "output"
            let suffix = destination.lastComponent?.extension.map { ".\($0)" } ?? ""
            var candidate = sibling("\(stem).partial\(suffix)")
            var number = 2
            while FileSystemCalls.exists(candidate), number < 1000 {
                candidate = sibling("\(stem).partial-\(number)\(suffix)")
                number += 1
            }
            temporaryPath = candidate
        } else {
            temporaryPath = destination
        }
        renamesOnCommit = temporaryPath != destination
        do {
            // A temporary name is never an existing file (nor a link someone planted there).
            descriptor = try FileDescriptor.open(
                temporaryPath, .readWrite,
                options: renamesOnCommit || atomic ? [.create, .exclusiveCreate, .closeOnExec] : [.create, .truncate, .closeOnExec],
                permissions: [.ownerReadWrite, .groupRead, .otherRead])
        } catch {
            throw .system(operation: "create", path: path, errno: error as? Errno ?? .ioError)
        }
        if let replaced { FileSystemCalls.keep(replaced, on: descriptor) }
        if atomic { UncommittedFiles.insert(temporaryPath) }
        buffer.reserveCapacity(Self.bufferCapacity)
    }

    private static func uniqueSuffix() -> String {
        String(UInt64.random(in: 0...UInt64.max), radix: 36)
    }

    /// An atomic sink left without ``commit()`` deletes its temporary file; a non-atomic one keeps
    /// what it wrote (flushing its buffer), which is the point of writing in place.
    deinit {
        if isAtomic {
            cancel()
        } else if isOpen {
            if !hasFailed { try? flush() }
            if !isStandardOutput { try? descriptor.close() }
        }
    }

    /// False for standard output, a stream.
    public var canOverwrite: Bool { !isStandardOutput }

    /// Bytes written so far, buffered or not.
    public var byteCount: Int64 { flushedCount + Int64(buffer.count) }

    /// Writes all of `bytes` (buffered).
    public func write(_ bytes: UnsafeRawBufferPointer) throws(ByteStreamError) {
        // Large writes (a run of samples) go straight to the file rather than through the buffer:
        // one copy fewer, and the system call is worth its cost at that size.
        if bytes.count >= Self.bufferCapacity / 4 {
            try drainBuffer()
            try writeThrough(bytes)
            return
        }
        if buffer.count + bytes.count > Self.bufferCapacity { try drainBuffer() }
        buffer.append(contentsOf: bytes)
    }

    /// Writes all of `bytes` (buffered).
    public func write(_ bytes: [UInt8]) throws(ByteStreamError) {
        var failure: ByteStreamError?
        bytes.withUnsafeBytes { raw in
            do throws(ByteStreamError) { try self.write(raw) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Overwrites bytes already written (flushing the buffer first).
    public func overwrite(_ bytes: [UInt8], at offset: Int64) throws(ByteStreamError) {
        if isStandardOutput {
            throw .refused(path: path, reason: "standard output is a stream: what is written cannot be rewritten")
        }
        try flush()
        guard offset >= 0, offset + Int64(bytes.count) <= flushedCount else {
            throw .system(operation: "overwrite", path: path, errno: .invalidArgument)
        }
        do {
            _ = try bytes.withUnsafeBytes { try descriptor.writeAll(toAbsoluteOffset: offset, $0) }
        } catch {
            throw .system(operation: "write", path: path, errno: error as? Errno ?? .ioError)
        }
    }

    /// Writes the buffered bytes to the file, and notes that what is written so far ends with a
    /// complete unit: a writer flushes after each fragment or packet it completes.
    public func flush() throws(ByteStreamError) {
        try drainBuffer()
        completeCount = flushedCount
    }

    /// Writes the buffered bytes to the file.
    private func drainBuffer() throws(ByteStreamError) {
        guard !hasFailed else { throw .system(operation: "write", path: path, errno: .ioError) }
        guard !buffer.isEmpty else { return }
        var failure: ByteStreamError?
        buffer.withUnsafeBytes { raw in
            do throws(ByteStreamError) { try writeThrough(raw) } catch { failure = error }
        }
        buffer.removeAll(keepingCapacity: true)
        if let failure { throw failure }
    }

    private func writeThrough(_ bytes: UnsafeRawBufferPointer) throws(ByteStreamError) {
        do {
            if isStandardOutput {
                _ = try descriptor.writeAll(bytes)
            } else {
                _ = try descriptor.writeAll(toAbsoluteOffset: flushedCount, bytes)
            }
            flushedCount += Int64(bytes.count)
        } catch {
            hasFailed = true
            // What was written in place ends with the last complete unit, not half of the next.
            if !isAtomic, !isStandardOutput { _ = try? descriptor.resize(to: completeCount) }
            throw writeFailure(error as? Errno ?? .ioError)
        }
        if !isStandardOutput, flushedCount - writebackStart >= Self.writebackStride { startWriteback() }
    }

    /// A failed write (`ENOSPC`, `EIO`, `EFBIG`) in words that say what is left: an atomic
    /// sink's temporary file is removed when the job cancels it; one written in place keeps
    /// what was written, under the name given here, and an older output it was to replace is
    /// as it was.
    private func writeFailure(_ errno: Errno) -> ByteStreamError {
        if isAtomic || isStandardOutput { return .system(operation: "write", path: path, errno: errno) }
        if writesBeside {
            return .system(operation: "write (\(destination) is kept as it was; what was written stays playable in)",
                           path: temporaryPath, errno: errno)
        }
        return .system(operation: "write (what was written stays playable in)", path: path, errno: errno)
    }

    /// Starts writing the bytes flushed since the last call to storage, without waiting for
    /// them, so that the `fsync(2)` of ``commit()`` finds most of the file already written: the
    /// device works while the job goes on (a 43 MB output commits in ~1 ms instead of ~15 ms).
    /// The bytes are durable only after the commit's sync, as before.
    private func startWriteback() {
        FileSystemCalls.startWriteback(descriptor, offset: writebackStart, count: flushedCount - writebackStart)
        writebackStart = flushedCount
    }

    /// Makes the output final: flushes, `fsync(2)`s and closes the file; an atomic sink then
    /// gives it its name with one `rename(2)` onto ``path`` (replacing a file there atomically);
    /// last, the directory is `fsync(2)`ed so that the name is durable.
    ///
    /// If the flush, the file's sync, the close or the rename fails, an atomic sink deletes its
    /// temporary file, and a file already at ``path`` is untouched. If only the directory's sync
    /// fails, the file already has its name; the error says its durability is not known.
    public func commit() throws(ByteStreamError) {
        try commit(syncing: true)
    }

    /// Completes the file like ``commit()``; with `syncing` false, without waiting for the data
    /// and the directory to reach the disk (no `fsync`): for many files committed in a row that
    /// are synced together afterwards (one `syncfs(2)` for the file system), before
    /// anything names them.
    public func commit(syncing: Bool) throws(ByteStreamError) {
        guard isOpen else { return }
        do throws(ByteStreamError) { try flush() } catch {
            cancel()
            throw error
        }
        isOpen = false
        // Standard output is flushed and left open: the summary may still be printed to it.
        if isStandardOutput { return }
        if syncing {
            do throws(Errno) { try FileSystemCalls.sync(descriptor) } catch {
                try? descriptor.close()
                removeTemporaryFile()
                throw .system(operation: "sync", path: path, errno: error)
            }
        }
        do {
            try descriptor.close()
        } catch {
            removeTemporaryFile()
            throw .system(operation: "close", path: path, errno: error as? Errno ?? .ioError)
        }
        if renamesOnCommit {
            do throws(Errno) { try FileSystemCalls.rename(temporaryPath, to: destination) } catch {
                removeTemporaryFile()
                throw .system(operation: "rename into place", path: path, errno: error)
            }
            if isAtomic { UncommittedFiles.remove(temporaryPath) }
        }
        guard syncing else { return }
        do throws(Errno) { try FileSystemCalls.syncDirectory(directory) } catch {
            throw .system(operation: "sync the directory of", path: path, errno: error)
        }
    }

    /// The directory that holds the file renamed into place (and the temporary file).
    private var directory: FilePath {
        let parent = destination.removingLastComponent()
        return parent.isEmpty ? FilePath(".") : parent
    }

    /// Deletes the temporary file of an atomic sink; a file written in place is kept.
    private func removeTemporaryFile() {
        if isAtomic {
            try? FileSystemCalls.unlink(temporaryPath)
            UncommittedFiles.remove(temporaryPath)
        }
    }

    /// Closes and deletes what was written, atomic or not.
    public func discard() {
        guard isOpen else { return }
        isOpen = false
        if isStandardOutput { return }
        try? descriptor.close()
        try? FileSystemCalls.unlink(temporaryPath)
        UncommittedFiles.remove(temporaryPath)
    }

    /// Atomic: closes and deletes the temporary file; nothing appears under ``path``.
    /// Writing in place: flushes, `fsync(2)`s and closes, keeping what was written (it is the
    /// point of writing in place that a recording survives).
    public func cancel() {
        guard isOpen else { return }
        if isStandardOutput {
            // What is whole so far goes out; nothing is removed (there is nothing to remove).
            if !hasFailed { try? flush() }
            isOpen = false
            return
        }
        if !isAtomic, !hasFailed {
            try? flush()
            try? FileSystemCalls.sync(descriptor)
        }
        isOpen = false
        try? descriptor.close()
        removeTemporaryFile()
    }
}

/// Not `Sendable`: writes append to a buffer and move the output; one thread at a time writes.
@available(*, unavailable)
extension FileByteSink: Sendable {}

extension FileByteSink {
    /// Writes `bytes` as the file `path`, atomically: under a temporary name, synced unless
    /// `syncing` is `false`, then renamed; nothing of it is visible on an error.
    package static func write(_ bytes: [UInt8], to path: FilePath, syncing: Bool = true) throws(PipelineError) {
        let sink: FileByteSink
        do { sink = try FileByteSink(path: path) } catch { throw .stream(error) }
        do throws(ByteStreamError) {
            try sink.write(bytes)
            try sink.commit(syncing: syncing)
        } catch {
            sink.cancel()
            throw .stream(error)
        }
    }
}

extension FileByteSink {
    /// Writes `range` of `source` after what was written, in 1 MiB reads: the bytes a rewrite
    /// keeps from the file it replaces.
    public func copy(from source: some RandomAccessByteSource, range: Range<Int64>) throws(ByteStreamError) {
        var offset = range.lowerBound
        while offset < range.upperBound {
            let count = Int(min(Int64(1 << 20), range.upperBound - offset))
            let bytes = try source.read(at: offset, count: count)
            // A file that ends before the range does is not copied short and committed.
            guard !bytes.isEmpty else { throw .refused(path: path, reason: "the file copied from ended at byte \(offset), before \(range.upperBound)") }
            try write(bytes)
            offset += Int64(bytes.count)
        }
    }
}
