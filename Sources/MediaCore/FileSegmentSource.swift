internal import Synchronization
public import SystemPackage

/// One file of many read as one stream (a playlist's init segment and media segments), opened
/// only while it is read: the files share a ``FileSegmentSource/OpenFiles`` that keeps a few of
/// them open, the most recently read, so a stream of thousands of segments holds a handful of
/// descriptors, not one per segment (the common limit of 1,024 would make the later ones fail).
public struct FileSegmentSource: RandomAccessByteSource, Sendable {
    /// The files of one stream kept open: at most ``capacity``, the least recently read closed
    /// first.
    public final class OpenFiles: Sendable {
        /// How many files stay open at once.
        public let capacity: Int
        private let open = Mutex<[FileByteSource]>([])

        /// Room for `capacity` open files (at least 1).
        public init(capacity: Int = 4) { self.capacity = max(1, capacity) }

        /// How many are open now.
        public var count: Int { open.withLock { $0.count } }

        /// The file at `path`, opened (a regular file) unless it is among the open ones.
        func file(at path: FilePath) throws(ByteStreamError) -> FileByteSource {
            if let file = open.withLock({ files -> FileByteSource? in
                guard let index = files.firstIndex(where: { $0.path == path }) else { return nil }
                let file = files.remove(at: index)
                files.append(file)
                return file
            }) {
                return file
            }
            let file = try FileByteSource(regularFileAt: path)
            open.withLock { files in
                files.append(file)
                // A file still being read by another thread stays open until its reader lets
                // it go (it is a class): dropping it here only forgets it.
                if files.count > capacity { files.removeFirst(files.count - capacity) }
            }
            return file
        }
    }

    /// The file.
    public let path: FilePath
    /// Its length, taken when the source was made.
    public let byteCount: Int64
    private let files: OpenFiles
    /// The segment held as an input while the job may read it (its descriptor may be closed
    /// between reads).
    private let claim: InputFiles.Claim?

    /// The regular file at `path`, measured now and opened through `files` when read.
    ///
    /// - Throws: ``ByteStreamError`` when it cannot be opened, or is not a regular file.
    public init(path: FilePath, files: OpenFiles) throws(ByteStreamError) {
        self.path = path
        self.files = files
        let file = try files.file(at: path)
        byteCount = file.byteCount
        claim = file.claim
    }

    /// Reads up to `count` bytes at `offset`; fewer only at the end of the file.
    public func read(at offset: Int64, count: Int) throws(ByteStreamError) -> [UInt8] {
        try files.file(at: path).read(at: offset, count: count)
    }
}
