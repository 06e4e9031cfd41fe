import ArgumentParser
import KeyFrameKit

/// Inputs and outputs named by an object store's URL (`s3://bucket/key`,
/// `https://host/path/file`, `env:NAME`): what `probe` reads in ranges, and what `convert`
/// reads and writes through a private staging directory, so that a worker in a job system can
/// run `keyframe convert s3://in/… s3://out/…` with no state of its own.
enum RemoteObjects {
    /// `text` as messages show it: a URL's user information masked (`user:****@`, a token
    /// given as the user `****@`); `env:NAME` as it is.
    static func shown(_ text: String) -> String {
        guard let scheme = text.firstRange(of: "://") else { return text }
        let rest = text[scheme.upperBound...]
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return text }
        let user = rest[..<at]
        let masked = user.firstIndex(of: ":").map { user[..<$0] + ":****" } ?? "****"
        return text[..<scheme.upperBound] + masked + rest[at...]
    }

    /// Whether `text` names an object in a store rather than a local path.
    static func isRemote(_ text: String, objectStore: ObjectStoreOptions) -> Bool {
        text.hasPrefix("env:") || (objectStore.destinations.namesStore(text) && URLReference.scheme(of: text) != "file")
    }

    /// Refuses inputs named by a store's URL (`s3://…`, `https://…`, `env:NAME`) for a
    /// `command` that reads local files only, with a usage error that names the commands that
    /// read objects in stores.
    static func requireLocal(_ inputs: [String], command: String) throws {
        for input in inputs where input.hasPrefix("env:") || (Keyframe.destinations.namesStore(input) && URLReference.scheme(of: input) != "file") {
            throw CommandFailure("\(shown(input)): \(command) reads local files; probe, validate, convert, encode and package read objects "
                                 + "in stores ('keyframe convert \(shown(input)) -o FILE' copies one here)", status: .usage)
        }
    }

    /// The store and name of the object `text` names: the URL up to its last `/` is the store,
    /// the rest the object's name. A URL that does not read is a usage error; a store that
    /// cannot be reached as named (no keys for it) fails an input as unreadable (2) and an
    /// `output` as any failure (1).
    static func object(_ text: String, objectStore: ObjectStoreOptions, output: Bool = false) throws -> (store: any ReadableObjectStore, name: String) {
        let url: String
        do { url = try ObjectStoreOptions.url(named: text) } catch { throw CommandFailure("\(error)", status: .usage) }
        guard let slash = url.lastIndex(of: "/"), url[..<slash].contains("://"), url.index(after: slash) < url.endIndex,
              !url[..<slash].hasSuffix("/") else {
            throw CommandFailure("\(shown(text)): an object's URL names the object after the store (s3://bucket/key, https://host/path/file)", status: .usage)
        }
        let name = String(url[url.index(after: slash)...])
        let store: (any ObjectStore)?
        do { store = try objectStore.store(named: String(url[..<slash])) } catch {
            throw CommandFailure("\(error)", status: error.reason == .invalidDestination ? .usage : output ? .failed : .unreadableInput)
        }
        guard let readable = store as? any ReadableObjectStore else {
            throw CommandFailure("\(store?.description ?? shown(text)): objects cannot be read from this store", status: .usage)
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

    /// Puts the file `path` into the store as the object `text` names, a part or a piece at a
    /// time (``ObjectStore/put(_:contentsOfFile:attributes:)``), with the type its extension
    /// says (`audio/mp4` for `.m4a`) and ``fileCacheControl``.
    static func upload(_ path: FilePath, as text: String, objectStore: ObjectStoreOptions) throws {
        let (store, name) = try object(text, objectStore: objectStore, output: true)
        let type = name.split(separator: ".").last.flatMap { MediaFileFormat.mimeType(ofFileExtension: String($0).lowercased()) }
        do { try store.put(name, contentsOfFile: path, attributes: ObjectAttributes(contentType: type, cacheControl: fileCacheControl)) } catch {
            throw CommandFailure("\(error)")
        }
    }

    /// How long a CDN in front of a store keeps a file `convert` put there: a day, as the
    /// origin keeps a complete playlist. Not a segment's year and `immutable`: `convert` may
    /// put another file under the same name (RFC 9111 5.2.2.1).
    static let fileCacheControl = "public, max-age=86400"

    /// The most objects ``mirror(_:into:objectStore:)`` copies for one object named.
    static let mirroredObjectLimit = 100_000

    /// What `validate` reads of an object in a store, copied into `staging` under the same
    /// relative names: the object itself; for an HLS playlist every object it names
    /// (segments, parts, init segments, and the playlists a master names with theirs); for a
    /// DASH MPD every Representation's init segment and media segments its `SegmentTemplate`
    /// names (``/MediaValidation/DASHManifest/relativeNames(of:in:set:)``); ranged reads each,
    /// at most ``mirroredObjectLimit``. URIs with a scheme of their own, and names leading out
    /// of the store, are not followed; an object that cannot be read is left out, for validate
    /// to report missing. Returns the copy of the object, and the prefix that names the copies
    /// as the store does.
    static func mirror(_ text: String, into staging: FilePath, objectStore: ObjectStoreOptions) throws -> (path: FilePath, shownAs: String) {
        let (store, name) = try object(text, objectStore: objectStore)
        do { try FileSystemCalls.makeDirectory(staging) } catch { throw CommandFailure("cannot make \(staging): \(error)") }
        // The store's own description masks its secrets.
        let shownAs = store.description + "/" + (name.contains("/") ? String(name[..<name.lastIndex(of: "/")!]) + "/" : "")
        var queue = [name]
        var seen: Set<String> = [name]
        while !queue.isEmpty {
            let next = queue.removeFirst()
            let path = staging.appending(next)
            do {
                var parent = staging
                for component in next.split(separator: "/").dropLast() {
                    parent.append(String(component))
                    try FileSystemCalls.makeDirectory(parent)
                }
                let source = try ObjectRangeSource(store: store, name: next)
                try download(source, to: path)
            } catch let error as CommandFailure where next == name {
                throw error
            } catch where next == name {
                throw CommandFailure("\(shown(text)): \(error)", status: .unreadableInput)
            } catch {
                continue
            }
            guard next.hasSuffix(".m3u8") || next.hasSuffix(".mpd"),
                  let bytes = try? FileByteSource(regularFileAt: path).read(at: 0, count: 16 << 20) else { continue }
            let directory = next.contains("/") ? String(next[..<next.lastIndex(of: "/")!]) + "/" : ""
            let contents = String(decoding: bytes, as: UTF8.self)
            // An MPD that does not parse is copied alone, for validate to say why.
            let references = next.hasSuffix(".mpd") ? (try? manifestReferences(contents)) ?? [] : playlistReferences(contents)
            for uri in references {
                guard let resolved = resolve(uri, against: directory), seen.insert(resolved).inserted else { continue }
                guard seen.count <= mirroredObjectLimit else {
                    throw CommandFailure("\(shown(text)): names more than \(mirroredObjectLimit) objects; validate reads at most that many "
                                         + "from a store", status: .unreadableInput)
                }
                queue.append(resolved)
            }
        }
        return (staging.appending(name), shownAs)
    }

    /// The names a DASH MPD's Representations give their init and media segments, relative to
    /// the MPD; a Representation addressed otherwise, or by absolute URLs, names none.
    static func manifestReferences(_ text: String) throws -> [String] {
        let manifest = try DASHManifest(text: text)
        var names: [String] = []
        for period in manifest.periods {
            for set in period.adaptationSets {
                for representation in set.representations {
                    guard let named = try manifest.relativeNames(of: representation, in: period, set: set) else { continue }
                    names.append(named.initialization)
                    names += named.media
                    guard names.count <= mirroredObjectLimit else { return names }
                }
            }
        }
        return names
    }

    /// The URIs an HLS playlist names (RFC 8216 4.1): each line that is not a tag or a comment,
    /// and each tag's `URI` attribute (`EXT-X-MAP`, `EXT-X-MEDIA`, `EXT-X-PART`,
    /// `EXT-X-I-FRAME-STREAM-INF`); a preload hint's and a rendition report's are left out
    /// (the one not yet written, the other a playlist already named).
    static func playlistReferences(_ text: String) -> [String] {
        var uris: [String] = []
        for raw in text.split(whereSeparator: \.isNewline) {
            var line = Substring(raw)
            while let last = line.last, last == " " || last == "\t" { line.removeLast() }
            while let first = line.first, first == " " || first == "\t" { line.removeFirst() }
            if line.isEmpty { continue }
            guard line.hasPrefix("#") else {
                uris.append(String(line))
                continue
            }
            guard !line.hasPrefix("#EXT-X-PRELOAD-HINT"), !line.hasPrefix("#EXT-X-RENDITION-REPORT"),
                  let start = line.firstRange(of: "URI=\"") else { continue }
            let rest = line[start.upperBound...]
            if let end = rest.firstIndex(of: "\"") { uris.append(String(rest[..<end])) }
        }
        return uris
    }

    /// The name in the store a playlist's relative `uri` names from `directory` (`""` or
    /// `dir/`): its query dropped, `.` and `..` resolved; `nil` for a URI with a scheme or a
    /// host of its own, an absolute path, or one leading out of the store.
    static func resolve(_ uri: String, against directory: String) -> String? {
        let path = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? uri
        guard !path.isEmpty, !path.contains("://"), !path.hasPrefix("/"), !path.contains(":") else { return nil }
        var components: [Substring] = directory.split(separator: "/")
        for component in path.split(separator: "/", omittingEmptySubsequences: false) {
            switch component {
            case ".", "": continue
            case "..":
                guard !components.isEmpty else { return nil }
                components.removeLast()
            default: components.append(component)
            }
        }
        return components.isEmpty ? nil : components.joined(separator: "/")
    }
}

