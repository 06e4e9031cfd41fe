public import MediaCore
internal import Synchronization
internal import Dispatch
public import MediaStreaming
public import SystemPackage

extension Packaging {
    /// The objects whose presence says a store's place already holds a package: its playlists,
    /// MPD and player page.
    public static let packageObjectNames = ["index.m3u8", "master.m3u8", "manifest.mpd", "index.html"]

    /// Refuses a place in `store` that already holds a package (any of ``packageObjectNames``),
    /// so that a new one never overwrites objects an old playlist names.
    ///
    /// - Throws: ``/MediaCore/PipelineError/Code/unsupported`` naming the object found; the
    ///   store's errors.
    public static func requireNoPackage(in store: any ObjectStore) throws(PipelineError) {
        for name in packageObjectNames where try store.contains(name) {
            throw .unsupported("\(store.description) already holds a package (\(name)); choose another place or remove it")
        }
    }

    /// Packages `input` as `hls(_:to:options:codecs:control:progress:)` with a directory does, into an object
    /// store (a directory, or a store a program registers: ``/Publishing/DestinationRegistry/store(for:)``):
    /// the package is made in a private staging directory, each media segment put into the
    /// store as soon as it is written (``SegmentUploads``), the rest once the package is whole by
    /// `put(_:into:control:)`, the media before the playlists that name it, and the player page
    /// (``/MediaStreaming/HLSOrigin/playerPage(playing:)``, `index.html`) last. The summary's
    /// paths (``/MediaStreaming/Packaging/Summary/playlist``, ``/MediaStreaming/Packaging/Summary/mpd``)
    /// are the objects' names in the store (`master.m3u8`).
    ///
    /// - Throws: what packaging throws; ``/MediaCore/PipelineError/Code/unsupported`` when the
    ///   store already holds a package (`index.m3u8`, `master.m3u8` or `manifest.mpd`, asked
    ///   before packaging) or any object of the names this one puts (asked before the first is
    ///   put); the store's errors, after which what was put is removed.
    public static func hls(_ input: FilePath, to store: any ObjectStore, options: Options = Options(), codecs: AudioCodecRegistry = .standard,
                           control: JobControl? = nil, progress: ((MediaProgress) -> Void)? = nil) throws(PipelineError) -> Summary {
        try requireNoPackage(in: store)
        let staging: FilePath
        do { staging = try FileSystemCalls.makeTemporaryDirectory(prefix: "keyframe-package-") } catch {
            throw .stream(.system(operation: "make a staging directory", path: FileSystemCalls.temporaryDirectory, errno: error))
        }
        UncommittedFiles.insertTree(staging)
        defer { UncommittedFiles.removeTree(staging) }
        let package = staging.appending("package")
        // Segments go up while the package is made; the rest once it is whole.
        let early = SegmentUploads(directory: package, store: store, control: control)
        var summary: Summary
        do throws(PipelineError) {
            summary = try hls(input, to: package, options: options, codecs: codecs, control: control, progress: progress)
            // The player page beside the top playlist, so that a CDN in front of the store serves it.
            var top = summary.playlist
            _ = top.removePrefix(package)
            try FileByteSink.write(Array(HLSOrigin.playerPage(playing: top.string).utf8), to: package.appending("index.html"))
        } catch {
            early.abandon()
            throw error
        }
        let alreadyPut = try early.finish()
        _ = try put(package, into: store, control: control, concurrentUploads: 4, alreadyPut: alreadyPut)
        func rebased(_ path: FilePath) -> FilePath {
            var relative = path
            return relative.removePrefix(package) ? relative : path
        }
        summary.playlist = rebased(summary.playlist)
        summary.mpd = summary.mpd.map(rebased)
        return summary
    }

    /// Puts every regular file under `directory` into `store`, named by its path below the
    /// directory, in the order a reader needs: media (segments, init segments, DASH headers)
    /// first, four at once, then each rendition's playlist, then the top-level playlists and manifests, then
    /// pages (`.html`), so that no playlist or page is ever visible before what it names; each with the `Content-Type` and
    /// `Cache-Control` the origin serves it with (``/MediaStreaming/HLSOrigin/objectAttributes(ofName:contents:)``),
    /// which a store that serves over HTTP keeps. Nothing is put over an object that
    /// exists: every name is asked first. Returns the bytes put.
    ///
    /// - Throws: ``/MediaCore/PipelineError/Code/unsupported`` naming an object that exists;
    ///   the store's errors, or ``/MediaCore/PipelineError/Code/cancelled`` when `control` is
    ///   cancelled; what was put is then removed.
    @discardableResult
    public static func put(_ directory: FilePath, into store: any ObjectStore, control: JobControl? = nil) throws(PipelineError) -> Int64 {
        try put(directory, into: store, control: control, concurrentUploads: 4, alreadyPut: SegmentUploads.PutObjects())
    }

    /// Puts the file `name` of a package `directory` into `store` as the object `name`, with the
    /// `Content-Type` and `Cache-Control` the origin serves it with; returns its bytes.
    static func putFile(_ name: String, of directory: FilePath, into store: any ObjectStore) throws(PipelineError) -> Int64 {
        let contents: [UInt8]
        do {
            let source = try FileByteSource(regularFileAt: directory.appending(name))
            contents = try source.read(at: 0, count: Int(source.byteCount))
        } catch { throw .stream(error) }
        try store.put(name, contents, attributes: HLSOrigin.objectAttributes(ofName: name, contents: contents))
        return Int64(contents.count)
    }

    /// ``put(_:into:control:)`` with `concurrentUploads` media objects going up at once, the
    /// objects of `alreadyPut` (put while the package was made) neither asked for nor put again,
    /// but removed with the rest when a later one fails.
    static func put(_ directory: FilePath, into store: any ObjectStore, control: JobControl?, concurrentUploads: Int,
                    alreadyPut: SegmentUploads.PutObjects) throws(PipelineError) -> Int64 {
        let names: [String]
        do { names = try FileSystemCalls.regularFiles(under: directory) } catch {
            throw .stream(.system(operation: "list", path: directory, errno: error))
        }
        func rank(_ name: String) -> Int {
            if name.hasSuffix(".html") { return 3 }
            let isManifest = name.hasSuffix(".m3u8") || name.hasSuffix(".mpd")
            return !isManifest ? 0 : name.contains("/") ? 1 : 2
        }
        let done = Set(alreadyPut.names)
        let ordered = names.enumerated().sorted { (rank($0.element), $0.offset) < (rank($1.element), $1.offset) }.map(\.element)
            .filter { !done.contains($0) }
        do throws(PipelineError) {
            for name in ordered where try store.contains(name) {
                throw .unsupported("\(store.description) already holds \(name); choose another place or remove it")
            }
        } catch {
            for name in alreadyPut.names.reversed() { try? store.remove(name) }
            throw error
        }
        // The media go up several at once (they name nothing); the playlists, manifests and
        // pages after them, one at a time in their order.
        let put = Mutex<(names: [String], bytes: Int64)>((alreadyPut.names, alreadyPut.bytes))
        let failure = Mutex<PipelineError?>(nil)
        @Sendable func putOne(_ name: String) throws(PipelineError) {
            if control?.isCancelled == true { throw .cancelled }
            let bytes = try putFile(name, of: directory, into: store)
            put.withLock { put in
                put.names.append(name)
                put.bytes += bytes
            }
        }
        let media = ordered.filter { rank($0) == 0 }
        let lanes = min(concurrentUploads, max(1, media.count))
        DispatchQueue.performBlocking(iterations: lanes, label: "KeyFrameKit.Packaging.put") { lane in
            for name in stride(from: lane, to: media.count, by: lanes).map({ media[$0] }) {
                guard failure.withLock({ $0 == nil }) else { return }
                do throws(PipelineError) { try putOne(name) } catch { failure.withLock { $0 = $0 ?? error } }
            }
        }
        do throws(PipelineError) {
            if let error = failure.withLock({ $0 }) { throw error }
            for name in ordered where rank(name) > 0 { try putOne(name) }
        } catch {
            for name in put.withLock({ $0.names }).reversed() { try? store.remove(name) }
            throw error
        }
        let bytes = put.withLock { $0.bytes }
        return bytes
    }
}

/// The media segments of a package put into a store while the package is still being made
/// (``/MediaStreaming/Packaging/hls(_:to:options:codecs:control:progress:)`` into a store): a
/// thread looks in the package directory four times a second for segments (`.m4s`, `.aac`: each
/// is renamed into place whole, and never written again) not yet put, and puts them, four at
/// once, each asked for first; playlists, init segments and pages wait for
/// ``Packaging/put(_:into:control:)`` once the package is whole. The first failure stops it.
final class SegmentUploads: Sendable {
    /// What went up: the objects' names, in order, and their bytes.
    struct PutObjects: Sendable {
        var names: [String] = []
        var bytes: Int64 = 0
    }

    private struct State: Sendable {
        var put = PutObjects()
        var taken: Set<String> = []
        var failure: PipelineError?
        var stopping = false
    }

    private let directory: FilePath
    private let store: any ObjectStore
    private let control: JobControl?
    private let state = Mutex(State())
    private let ended = DispatchSemaphore(value: 0)

    init(directory: FilePath, store: any ObjectStore, control: JobControl?) {
        self.directory = directory
        self.store = store
        self.control = control
        DispatchQueue(label: "KeyFrameKit.SegmentUploads").async { self.run() }
    }

    /// Stops looking, waits for the segments going up, and returns what went up; throws the
    /// first failure (what went up is then removed).
    func finish() throws(PipelineError) -> PutObjects {
        state.withLock { $0.stopping = true }
        ended.wait()
        let (put, failure) = state.withLock { ($0.put, $0.failure) }
        if let failure {
            for name in put.names.reversed() { try? store.remove(name) }
            throw failure
        }
        return put
    }

    /// Stops, and removes what went up (the package failed).
    func abandon() {
        state.withLock { $0.stopping = true }
        ended.wait()
        for name in state.withLock({ $0.put.names }).reversed() { try? store.remove(name) }
    }

    private func run() {
        defer { ended.signal() }
        while true {
            let stopping = state.withLock { $0.stopping || $0.failure != nil }
            if stopping || control?.isCancelled == true { return }
            let found = (try? FileSystemCalls.regularFiles(under: directory)) ?? []
            let fresh: [String] = state.withLock { state in
                let fresh = found.filter { ($0.hasSuffix(".m4s") || $0.hasSuffix(".aac")) && !state.taken.contains($0) }
                state.taken.formUnion(fresh)
                return fresh
            }
            let lanes = min(4, fresh.count)
            if lanes > 0 {
                DispatchQueue.performBlocking(iterations: lanes, label: "KeyFrameKit.SegmentUploads") { [self] lane in
                    for name in stride(from: lane, to: fresh.count, by: lanes).map({ fresh[$0] }) {
                        guard state.withLock({ $0.failure == nil }), control?.isCancelled != true else { return }
                        do throws(PipelineError) { try putOne(name) } catch { state.withLock { $0.failure = $0.failure ?? error } }
                    }
                }
            } else {
                _ = DispatchSemaphore(value: 0).wait(for: .milliseconds(250))
            }
        }
    }

    private func putOne(_ name: String) throws(PipelineError) {
        if try store.contains(name) {
            throw .unsupported("\(store.description) already holds \(name); choose another place or remove it")
        }
        let bytes = try Packaging.putFile(name, of: directory, into: store)
        state.withLock { state in
            state.put.names.append(name)
            state.put.bytes += bytes
        }
    }
}

