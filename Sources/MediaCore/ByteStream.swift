public import SystemPackage

/// Why reading or writing a byte stream failed.
public enum ByteStreamError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The operating system refused `operation` on `path`.
    case system(operation: String, path: FilePath, errno: Errno)
    /// `path` is refused before any system call could fail on it: an output that would write
    /// over a device or an input of the job; `reason` says why.
    case refused(path: FilePath, reason: String)

    /// A sentence for people: what it is and, for errors, where.
    public var description: String {
        switch self {
        case .system(let operation, let path, let errno): "cannot \(operation) \(path): \(errno)"
        case .refused(let path, let reason): "\(path): \(reason)"
        }
    }
}

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

/// Where a stream writer puts its bytes.
public protocol ByteSink {
    /// Writes all of `bytes`.
    mutating func write(_ bytes: UnsafeRawBufferPointer) throws(ByteStreamError)
}

extension ByteSink {
    /// Writes all of `bytes`.
    public mutating func write(_ bytes: [UInt8]) throws(ByteStreamError) {
        // withUnsafeBytes is rethrows-untyped; carry the typed error out by hand.
        var failure: ByteStreamError?
        bytes.withUnsafeBytes { buffer in
            do throws(ByteStreamError) { try self.write(buffer) } catch { failure = error }
        }
        if let failure { throw failure }
    }
}

/// A sink whose earlier bytes can be rewritten: for headers whose sizes are known only at the end
/// (WAV and RF64, MP4 box sizes).
public protocol SeekableByteSink: ByteSink {
    /// Bytes written so far (the length of the output).
    var byteCount: Int64 { get }
    /// Overwrites `bytes` already written, starting at absolute `offset`.
    mutating func overwrite(_ bytes: [UInt8], at offset: Int64) throws(ByteStreamError)
    /// Whether ``overwrite(_:at:)`` can be used: false for a stream (standard output), where a
    /// writer leaves what a streaming writer leaves (a WAV's sizes 0xFFFFFFFF, "unknown").
    var canOverwrite: Bool { get }
}

extension SeekableByteSink {
    /// A sink that can seek can overwrite.
    public var canOverwrite: Bool { true }
}

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

/// Several sources read as one, end to end: a CMAF init segment followed by its media segments.
///
/// A part read several times in a row (a playlist that names one segment again and again) is
/// kept once, with its number of repeats.
public struct ConcatenatedByteSource<Part: RandomAccessByteSource>: RandomAccessByteSource {
    /// One part, read `repeats` times in a row from `start`.
    private struct Run {
        let part: Part
        /// The part's length, taken once (a file's length is a system call).
        let partCount: Int64
        let repeats: Int64
        let start: Int64
        /// `partCount × repeats`, or `Int64.max` past it.
        let byteCount: Int64
    }

    private let runs: [Run]
    /// The total length.
    public let byteCount: Int64

    /// The parts, in order.
    public init(_ parts: [Part]) {
        self.init(runs: parts.lazy.map { ($0, 1) })
    }

    /// Each part read `repeats` times in a row (a part with no repeat is left out), in order.
    public init<Runs: Sequence<(part: Part, repeats: Int)>>(runs: Runs) {
        var built: [Run] = []
        built.reserveCapacity(runs.underestimatedCount)
        var total: Int64 = 0
        // Lengths come from the file system (a device's from seeking to its end) and repeats
        // from a playlist: multiplied and added without trapping, a total past Int64.max held
        // there, which no read reaches.
        for (part, repeats) in runs where repeats > 0 {
            let partCount = max(0, part.byteCount)
            let (product, overflow) = partCount.multipliedReportingOverflow(by: Int64(repeats))
            let count = overflow ? Int64.max : product
            built.append(Run(part: part, partCount: partCount, repeats: Int64(repeats), start: total, byteCount: count))
            let (sum, past) = total.addingReportingOverflow(count)
            total = past ? .max : sum
        }
        self.runs = built
        self.byteCount = total
    }

    /// Reads up to `count` bytes at `offset`, across part boundaries.
    public func read(at offset: Int64, count: Int) throws(ByteStreamError) -> [UInt8] {
        guard offset >= 0, count >= 0 else {
            throw .system(operation: "read at \(offset)", path: "concatenated source", errno: .invalidArgument)
        }
        guard offset < byteCount else { return [] }
        // The last run starting at or before the offset, by binary search (a sequence of
        // thousands of segments is read box by box).
        var low = 0, high = runs.count
        while low < high {
            let middle = (low + high) / 2
            if runs[middle].start <= offset { low = middle + 1 } else { high = middle }
        }
        var index = max(0, low - 1)
        // No further than the total, so no position passes Int64.max.
        var left = min(Int64(count), byteCount - offset)
        // Within one repeat of one part (the common case): that part's bytes, not a copy of them.
        if index < runs.count, runs[index].partCount > 0, offset - runs[index].start < runs[index].byteCount {
            let within = (offset - runs[index].start) % runs[index].partCount
            if left <= runs[index].partCount - within { return try runs[index].part.read(at: within, count: Int(left)) }
        }
        var result: [UInt8] = []
        var position = offset
        while left > 0, index < runs.count {
            let run = runs[index]
            let local = position - run.start
            guard run.partCount > 0, local < run.byteCount else {
                index += 1
                continue
            }
            let available = run.partCount - local % run.partCount
            let chunk = try run.part.read(at: local % run.partCount, count: Int(min(left, available)))
            result += chunk
            position += Int64(chunk.count)
            left -= Int64(chunk.count)
            // A part shorter than it was: the stream ends there.
            if Int64(chunk.count) < min(left + Int64(chunk.count), available) { break }
        }
        return result
    }
}

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
    /// held as an input (``InputFiles``): a file an origin serves, which a publisher in the same
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
    /// written to nor replaced, and neither is a file this process is reading (``InputFiles``),
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

/// Bytes written over part of an existing file, in place, and made durable (`fsync(2)`): the
/// in-place edits that change a file without moving anything in it (new tags in a movie's
/// padding). Unlike ``FileByteSink``'s commit this is not atomic: a crash in the middle can
/// leave part of the patch written.
public enum FilePatch {
    /// Writes `bytes` at `offset` of the existing file at `path`, then syncs the file.
    ///
    /// - Throws: ``ByteStreamError/system(operation:path:errno:)`` for an `open`, `pwrite` or
    ///   `fsync` that fails; a patch that would extend the file is refused.
    public static func apply(_ bytes: [UInt8], at offset: Int64, to path: FilePath) throws(ByteStreamError) {
        try apply([(offset, bytes)], to: path)
    }

    /// Writes each patch at its offset of the existing file at `path`, then syncs the file once.
    public static func apply(_ patches: [(offset: Int64, bytes: [UInt8])], to path: FilePath) throws(ByteStreamError) {
        let descriptor: FileDescriptor
        do { descriptor = try FileDescriptor.open(path, .writeOnly, options: [.closeOnExec]) } catch {
            throw .system(operation: "open", path: path, errno: error as? Errno ?? .ioError)
        }
        defer { try? descriptor.close() }
        let size: Int64
        do { size = try descriptor.seek(offset: 0, from: .end) } catch {
            throw .system(operation: "seek", path: path, errno: error as? Errno ?? .ioError)
        }
        for (offset, bytes) in patches {
            guard offset >= 0, offset + Int64(bytes.count) <= size else {
                throw .system(operation: "patch past the end of", path: path, errno: .invalidArgument)
            }
        }
        for (offset, bytes) in patches where !bytes.isEmpty {
            do { _ = try bytes.withUnsafeBytes { try descriptor.writeAll(toAbsoluteOffset: offset, $0) } } catch {
                throw .system(operation: "write", path: path, errno: error as? Errno ?? .ioError)
            }
        }
        do throws(Errno) { try FileSystemCalls.sync(descriptor) } catch {
            throw .system(operation: "sync", path: path, errno: error)
        }
    }
}
