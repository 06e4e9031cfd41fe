import ArgumentParser
import KeyFrameKit

/// Inputs and outputs named by an object store's URL (`s3://bucket/key`,
/// `https://host/path/file`, `env:NAME`): what `probe` reads in ranges, and what `convert`
/// reads and writes through a private staging directory, so that a worker in a job system can
/// run `keyframe convert s3://in/… s3://out/…` with no state of its own.
enum RemoteObjects {
    /// Whether `text` names an object in a store rather than a local path.
    static func isRemote(_ text: String, objectStore: ObjectStoreOptions) -> Bool {
        text.hasPrefix("env:") || (objectStore.destinations.namesStore(text) && URLReference.scheme(of: text) != "file")
    }

    /// The store and name of the object `text` names: the URL up to its last `/` is the store,
    /// the rest the object's name.
    static func object(_ text: String, objectStore: ObjectStoreOptions) throws -> (store: any ReadableObjectStore, name: String) {
        let url: String
        do { url = try ObjectStoreOptions.url(named: text) } catch { throw CommandFailure("\(error)", status: .usage) }
        guard let slash = url.lastIndex(of: "/"), url[..<slash].contains("://"), url.index(after: slash) < url.endIndex,
              !url[..<slash].hasSuffix("/") else {
            throw CommandFailure("\(text): an object's URL names the object after the store (s3://bucket/key, https://host/path/file)", status: .usage)
        }
        let name = String(url[url.index(after: slash)...])
        let store: (any ObjectStore)?
        do { store = try objectStore.store(named: String(url[..<slash])) } catch { throw CommandFailure("\(error)", status: .usage) }
        guard let readable = store as? any ReadableObjectStore else {
            throw CommandFailure("\(store?.description ?? text): objects cannot be read from this store", status: .usage)
        }
        return (readable, name)
    }

    /// The object `text` names as a source read in ranges.
    static func source(_ text: String, objectStore: ObjectStoreOptions) throws -> ObjectRangeSource {
        let (store, name) = try object(text, objectStore: objectStore)
        do { return try ObjectRangeSource(store: store, name: name) } catch {
            throw CommandFailure("\(error)", status: .unreadableInput)
        }
    }

    /// A private staging directory, removed by ``discard(_:)`` (or when the process ends by a
    /// signal).
    static func stagingDirectory() throws -> FilePath {
        do {
            let directory = try FileSystemCalls.makeTemporaryDirectory(prefix: "keyframe-remote-")
            UncommittedFiles.insertTree(directory)
            return directory
        } catch {
            throw CommandFailure("cannot make a staging directory in \(FileSystemCalls.temporaryDirectory): \(error)")
        }
    }

    /// Removes a staging directory.
    static func discard(_ directory: FilePath) {
        UncommittedFiles.removeTree(directory)
    }

    /// Copies the object `source` into the file `path`, 8 MiB at a time (ranged reads).
    static func download(_ source: ObjectRangeSource, to path: FilePath) throws {
        do throws(ByteStreamError) {
            let file = try FileByteSink(path: path)
            var offset: Int64 = 0
            while offset < source.byteCount {
                let bytes = try source.read(at: offset, count: 8 << 20)
                guard !bytes.isEmpty else { break }
                try file.write(bytes)
                offset += Int64(bytes.count)
            }
            try file.commit()
        } catch {
            throw CommandFailure("\(source.description): \(error)", status: .unreadableInput)
        }
    }

    /// Runs `command` again with its input (at `input`) copied from its store into a staging
    /// directory, when that input names an object; returns whether it did (`encode`, `package`).
    static func ranWithLocalInput<Command: ParsableCommand>(_ command: Command, input: WritableKeyPath<Command, String>,
                                                            objectStore: ObjectStoreOptions) throws -> Bool {
        guard isRemote(command[keyPath: input], objectStore: objectStore) else { return false }
        try withLocalInput(command[keyPath: input], objectStore: objectStore) { path in
            var local = command
            local[keyPath: input] = path
            try local.run()
        }
        return true
    }

    /// Runs `body` with the path of `input`: the file itself, or, when `input` names an object
    /// in a store, a copy of it in a private staging directory (ranged reads), removed after.
    static func withLocalInput<Result>(_ input: String, objectStore: ObjectStoreOptions, _ body: (String) throws -> Result) throws -> Result {
        guard isRemote(input, objectStore: objectStore) else { return try body(input) }
        let source = try self.source(input, objectStore: objectStore)
        let staging = try stagingDirectory()
        defer { discard(staging) }
        let path = staging.appending(source.name.split(separator: "/").last.map(String.init) ?? "input")
        try download(source, to: path)
        return try body(path.string)
    }

    /// Puts the file `path` into the store as the object `text` names, with the type its
    /// extension says (`audio/mp4` for `.m4a`) and no caching rule.
    static func upload(_ path: FilePath, as text: String, objectStore: ObjectStoreOptions) throws {
        let (store, name) = try object(text, objectStore: objectStore)
        do {
            let source = try FileByteSource(regularFileAt: path)
            let bytes = try source.read(at: 0, count: Int(source.byteCount))
            let type = name.split(separator: ".").last.flatMap { MediaFileFormat.mimeType(ofFileExtension: String($0).lowercased()) }
            try store.put(name, bytes, attributes: ObjectAttributes(contentType: type))
        } catch let error as ByteStreamError {
            throw CommandFailure("\(path): \(error)")
        } catch {
            throw CommandFailure("\(error)")
        }
    }
}
