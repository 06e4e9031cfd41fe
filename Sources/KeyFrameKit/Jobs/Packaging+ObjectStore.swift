public import MediaCore
internal import Synchronization
internal import Dispatch
public import MediaStreaming
public import SystemPackage

extension Packaging {
    /// Packages `input` as `hls(_:to:options:codecs:control:progress:)` with a directory does, into an object
    /// store (a directory, or a store a program registers: ``/Publishing/DestinationRegistry/store(for:)``):
    /// the package is made in a private staging directory, then put into the store by
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
        for name in ["index.m3u8", "master.m3u8", "manifest.mpd", "index.html"] where try store.contains(name) {
            throw .unsupported("\(store.description) already holds a package (\(name)); choose another place or remove it")
        }
        let staging: FilePath
        do { staging = try FileSystemCalls.makeTemporaryDirectory(prefix: "keyframe-package-") } catch {
            throw .stream(.system(operation: "make a staging directory", path: FileSystemCalls.temporaryDirectory, errno: error))
        }
        UncommittedFiles.insertTree(staging)
        defer { UncommittedFiles.removeTree(staging) }
        let package = staging.appending("package")
        var summary = try hls(input, to: package, options: options, codecs: codecs, control: control, progress: progress)
        // The player page beside the top playlist, so that a CDN in front of the store serves it.
        var top = summary.playlist
        _ = top.removePrefix(package)
        try FileByteSink.write(Array(HLSOrigin.playerPage(playing: top.string).utf8), to: package.appending("index.html"))
        try put(package, into: store, control: control)
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
        try put(directory, into: store, control: control, concurrentUploads: 4)
    }

    /// ``put(_:into:control:)`` with `concurrentUploads` media objects going up at once.
    static func put(_ directory: FilePath, into store: any ObjectStore, control: JobControl?, concurrentUploads: Int) throws(PipelineError) -> Int64 {
        let names: [String]
        do { names = try FileSystemCalls.regularFiles(under: directory) } catch {
            throw .stream(.system(operation: "list", path: directory, errno: error))
        }
        func rank(_ name: String) -> Int {
            if name.hasSuffix(".html") { return 3 }
            let isManifest = name.hasSuffix(".m3u8") || name.hasSuffix(".mpd")
            return !isManifest ? 0 : name.contains("/") ? 1 : 2
        }
        let ordered = names.enumerated().sorted { (rank($0.element), $0.offset) < (rank($1.element), $1.offset) }.map(\.element)
        for name in ordered where try store.contains(name) {
            throw .unsupported("\(store.description) already holds \(name); choose another place or remove it")
        }
        // The media go up several at once (they name nothing); the playlists, manifests and
        // pages after them, one at a time in their order.
        let put = Mutex<(names: [String], bytes: Int64)>(([], 0))
        let failure = Mutex<PipelineError?>(nil)
        @Sendable func putOne(_ name: String) throws(PipelineError) {
            if control?.isCancelled == true { throw .cancelled }
            let source: FileByteSource
            do { source = try FileByteSource(regularFileAt: directory.appending(name)) } catch { throw .stream(error) }
            let contents: [UInt8]
            do { contents = try source.read(at: 0, count: Int(source.byteCount)) } catch { throw .stream(error) }
            try store.put(name, contents, attributes: HLSOrigin.objectAttributes(ofName: name, contents: contents))
            put.withLock { put in
                put.names.append(name)
                put.bytes += Int64(contents.count)
            }
        }
        let media = ordered.filter { rank($0) == 0 }
        let lanes = min(concurrentUploads, max(1, media.count))
        DispatchQueue.concurrentPerform(iterations: lanes) { lane in
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
