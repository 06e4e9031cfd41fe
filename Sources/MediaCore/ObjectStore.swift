public import SystemPackage

/// Where a package's files go, by name: the second kind of destination, beside the live ones
/// (a stream sent as it is made). A directory is one (``DirectoryStore``); a program registers
/// others, an S3 bucket or a WebDAV share, as a destination registry's store entry.
///
/// Names are relative, `/`-separated paths (`index.m3u8`, `64k/segment-00001.m4s`), never
/// absolute and never with a `..` component (``checkedName(_:)``). Each object is put whole: a
/// reader sees the old object or the new one, never a part.
public protocol ObjectStore: Sendable {
    /// The store as a message names it, its secrets masked.
    var description: String { get }

    /// Whether an object named `name` exists.
    ///
    /// - Throws: ``PipelineError`` when the store cannot be asked.
    func contains(_ name: String) throws(PipelineError) -> Bool

    /// Stores `bytes` as the object `name`, whole, replacing one of that name.
    ///
    /// - Throws: ``PipelineError`` when it cannot be stored; nothing of it is then visible.
    func put(_ name: String, _ bytes: [UInt8]) throws(PipelineError)

    /// Stores `bytes` as the object `name` with `attributes` (what an HTTP store serves it
    /// with), whole, replacing one of that name. By default the attributes are not kept:
    /// ``put(_:_:)``.
    ///
    /// - Throws: ``PipelineError`` when it cannot be stored; nothing of it is then visible.
    func put(_ name: String, _ bytes: [UInt8], attributes: ObjectAttributes) throws(PipelineError)

    /// Stores the file at `path` as the object `name` with `attributes`, whole, replacing one of
    /// that name, read a piece at a time where the store can send it so (S3 in parts of 8 MiB,
    /// an HTTP ingest point as a stream), so that memory does not grow with the file. By
    /// default the file is read whole and given to ``put(_:_:attributes:)``.
    ///
    /// - Throws: ``PipelineError`` when the file cannot be read or the object stored.
    func put(_ name: String, contentsOfFile path: FilePath, attributes: ObjectAttributes) throws(PipelineError)

    /// Removes the object `name`; one that does not exist is not an error.
    ///
    /// - Throws: ``PipelineError`` when it exists and cannot be removed.
    func remove(_ name: String) throws(PipelineError)
}

/// A store whose objects can be read in ranges, so that an object is an input as much as an
/// output: ``ObjectRangeSource`` reads one as a ``RandomAccessByteSource`` (a probe reads an
/// MP4's boxes without fetching its media).
public protocol ReadableObjectStore: ObjectStore {
    /// The size of the object `name`, in bytes.
    ///
    /// - Throws: ``PipelineError`` when it does not exist or the store cannot be asked.
    func byteCount(of name: String) throws(PipelineError) -> Int64

    /// Up to `count` bytes of the object `name` from `offset`; fewer only at its end.
    ///
    /// - Throws: ``PipelineError`` when it cannot be read.
    func read(_ name: String, at offset: Int64, count: Int) throws(PipelineError) -> [UInt8]
}

/// What a store that serves its objects over HTTP serves an object with: an S3 bucket keeps
/// them with the object, so that a CDN in front of it caches it as the origin would say.
public struct ObjectAttributes: Sendable, Hashable {
    /// The `Content-Type` (`application/vnd.apple.mpegurl`); `nil`: the store's default.
    public var contentType: String?
    /// The `Cache-Control` (RFC 9111 5.2: `public, max-age=31536000, immutable`); `nil`: none.
    public var cacheControl: String?

    /// Attributes.
    public init(contentType: String? = nil, cacheControl: String? = nil) {
        self.contentType = contentType
        self.cacheControl = cacheControl
    }
}

extension ObjectStore {
    /// ``put(_:_:)``: a store that keeps no attributes.
    public func put(_ name: String, _ bytes: [UInt8], attributes: ObjectAttributes) throws(PipelineError) {
        try put(name, bytes)
    }

    /// The file at `path` read whole, then ``put(_:_:attributes:)``.
    public func put(_ name: String, contentsOfFile path: FilePath, attributes: ObjectAttributes) throws(PipelineError) {
        let bytes: [UInt8]
        do {
            let source = try FileByteSource(regularFileAt: path)
            bytes = try source.read(at: 0, count: Int(source.byteCount))
        } catch {
            throw .stream(error)
        }
        try put(name, bytes, attributes: attributes)
    }

    /// `name` when it is a relative, `/`-separated path without an empty, `.` or `..` component.
    ///
    /// - Throws: ``PipelineError/Code/unsupported`` naming the store and the name.
    public func checkedName(_ name: String) throws(PipelineError) -> String {
        let components = name.split(separator: "/", omittingEmptySubsequences: false)
        guard !name.isEmpty, !name.utf8.contains(0), components.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else {
            throw .unsupported("\(description): '\(name)' is not a name an object can have (a relative path without '.', '..', '//' or NUL)")
        }
        return name
    }
}

/// A directory as an ``ObjectStore``: an object is a file under it (subdirectories made as
/// needed), put under a temporary name, synced and renamed, so that a reader never sees a part.
public struct DirectoryStore: ReadableObjectStore {
    /// The directory.
    public let directory: FilePath

    /// The store of the files under `directory` (made, with its parents, when the first object
    /// is put).
    public init(directory: FilePath) {
        self.directory = directory
    }

    /// The directory's path.
    public var description: String { directory.string }

    /// Whether the file `name` exists.
    public func contains(_ name: String) throws(PipelineError) -> Bool {
        FileSystemCalls.exists(directory.appending(try checkedName(name)))
    }

    /// Writes the file `name` atomically (a temporary file, synced, renamed).
    public func put(_ name: String, _ bytes: [UInt8]) throws(PipelineError) {
        let path = directory.appending(try checkedName(name))
        try makeDirectories(path.removingLastComponent())
        try FileByteSink.write(bytes, to: path)
    }

    /// Removes the file `name`, and the directories between it and ``directory`` that this
    /// leaves empty (``directory`` itself stays).
    public func remove(_ name: String) throws(PipelineError) {
        let path = directory.appending(try checkedName(name))
        do { try FileSystemCalls.unlink(path) } catch {
            guard error != .noSuchFileOrDirectory else { return }
            throw .stream(.system(operation: "remove", path: path, errno: error))
        }
        var parent = path.removingLastComponent()
        while parent != directory, parent.starts(with: directory), (try? FileSystemCalls.removeDirectory(parent)) != nil {
            parent = parent.removingLastComponent()
        }
    }

    /// The size of the file `name`.
    public func byteCount(of name: String) throws(PipelineError) -> Int64 {
        let path = directory.appending(try checkedName(name))
        do throws(ByteStreamError) { return try FileByteSource(regularFileAt: path).byteCount } catch { throw .stream(error) }
    }

    /// Up to `count` bytes of the file `name` from `offset`.
    public func read(_ name: String, at offset: Int64, count: Int) throws(PipelineError) -> [UInt8] {
        let path = directory.appending(try checkedName(name))
        do throws(ByteStreamError) { return try FileByteSource(regularFileAt: path).read(at: offset, count: count) } catch { throw .stream(error) }
    }

    /// Makes `path` and the directories above it that are missing.
    private func makeDirectories(_ path: FilePath) throws(PipelineError) {
        do { try FileSystemCalls.makeDirectories(path) } catch {
            throw .stream(.system(operation: "make the directory", path: path, errno: error))
        }
    }
}
