public import Hummingbird
public import KeyFrameKit
internal import Synchronization
internal import Dispatch

/// A low-latency HLS server for a live rendition (RFC 8216bis): the playlist from a
/// ``/KeyFrameKit/LiveHLSPublication``, with blocking reload (`_HLS_msn`, `_HLS_part`), and the
/// init segment, segments and parts from the rendition's directory. Without a publication it
/// serves a packaged directory as it is: playlists, MPDs, init segments and segments, in
/// subdirectories too (a ladder).
///
/// Mount ``addRoutes(to:)`` in a Hummingbird app of your own, or let ``start(host:port:)``
/// run a server of its own on a thread of its own.
public struct LiveHLSServer: Sendable {
    /// What is published live; `nil` to serve the directory's files only.
    public let publication: LiveHLSPublication?
    /// Where the files are.
    public let directory: FilePath
    /// The playlist's name.
    public let playlistName: String

    /// A server of `publication`, whose files are in `directory`.
    public init(publication: LiveHLSPublication?, directory: FilePath, playlistName: String = "index.m3u8") {
        self.publication = publication
        self.directory = directory
        self.playlistName = playlistName
    }

    /// Adds `GET /index.m3u8` (blocking reload) and `GET /{file}` (the init segment, segments,
    /// parts) to `router`.
    public func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        let server = self
        if publication != nil {
            router.get(RouterPath(stringLiteral: playlistName)) { request, _ -> Response in
                await server.playlistResponse(request)
            }
        }
        router.get("**") { _, context -> Response in
            let components = context.parameters.getCatchAll().map(String.init)
            // The preload-hinted part is held until it exists (RFC 8216bis 6.2.6).
            if let publication = server.publication, components.count == 1, let (segment, part) = Self.part(named: components[0]),
               !FileSystemCalls.exists(server.directory.appending(components[0])) {
                _ = await publication.waitForPart(segment: segment, part: part, timeout: .seconds(3 * publication.targetDuration))
            }
            return server.fileResponse(components)
        }
    }

    /// The playlist, held until it holds the segment and part asked for (RFC 8216bis 6.2.5.2):
    /// 400 for a segment more than two past the last, 503 after three target durations.
    func playlistResponse(_ request: Request) async -> Response {
        guard let publication else { return Response(status: .notFound) }
        let query = request.uri.queryParameters
        let segment = query["_HLS_msn"].flatMap { Int(String($0)) }
        let part = query["_HLS_part"].flatMap { Int(String($0)) }
        let timeout = Duration.seconds(3 * publication.targetDuration)
        switch await publication.playlist(segment: segment, part: part, timeout: timeout) {
        case .ready(let text):
            var headers = HTTPFields()
            headers[.contentType] = "application/vnd.apple.mpegurl"
            headers[.cacheControl] = "no-cache"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
        case .tooFarAhead:
            return Response(status: .badRequest)
        case .timedOut:
            return Response(status: .serviceUnavailable)
        case .notStarted:
            return Response(status: .notFound)
        }
    }

    /// The media sequence number and part index (from 0) of `segment-00002.3.m4s` (segment 1,
    /// part 2), `nil` for any other name.
    static func part(named name: String) -> (Int, Int)? {
        guard name.hasPrefix("segment-"), name.hasSuffix(".m4s") else { return nil }
        let numbers = name.dropFirst("segment-".count).dropLast(".m4s".count).split(separator: ".")
        guard numbers.count == 2, let segment = Int(numbers[0]), let part = Int(numbers[1]), segment >= 1, part >= 1 else { return nil }
        return (segment - 1, part - 1)
    }

    /// The content types of the files a rendition has (RFC 8216 4, ISO/IEC 23009-1 Annex C).
    static let contentTypes = ["m4s": "video/iso.segment", "mp4": "video/mp4", "m3u8": "application/vnd.apple.mpegurl",
                               "mpd": "application/dash+xml"]

    /// A file of the rendition, by its path components: only the kinds a rendition has, no
    /// component that is empty or starts with a dot (so nothing outside the directory).
    func fileResponse(_ components: [String]) -> Response {
        guard let name = components.last, !components.isEmpty, components.allSatisfy({ !$0.isEmpty && !$0.hasPrefix(".") && !$0.contains("/") }),
              let kind = name.split(separator: ".").last.map(String.init), let type = Self.contentTypes[kind] else {
            return Response(status: .notFound)
        }
        guard let source = try? FileByteSource(path: components.reduce(directory) { $0.appending($1) }.string),
              source.byteCount <= 1 << 30, let bytes = try? source.read(at: 0, count: Int(source.byteCount)) else {
            return Response(status: .notFound)
        }
        var headers = HTTPFields()
        headers[.contentType] = type
        if kind == "m3u8" || kind == "mpd" { headers[.cacheControl] = "no-cache" }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// A running server: ``stop()`` ends it.
    public final class Running: Sendable {
        private let task: Mutex<Task<Void, any Error>?>

        init(task: Task<Void, any Error>) { self.task = Mutex(task) }

        /// Stops serving (a graceful shutdown: requests in flight are answered).
        public func stop() {
            task.withLock { $0?.cancel() }
        }
    }

    /// Starts serving on `host:port` on a task of its own and returns once the port is bound.
    ///
    /// - Throws: ``/KeyFrameKit/PipelineError/unsupported(_:)`` naming the address when it
    ///   cannot be bound (a port in use).
    public func start(host: String, port: Int) throws(PipelineError) -> Running {
        let router = Router()
        addRoutes(to: router)
        let bound = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        let app = Application(router: router, configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "keyframe"),
                              onServerRunning: { _ in bound.signal() })
        let task = Task {
            do {
                try await app.runService(gracefulShutdownSignals: [])
            } catch {
                failure.withLock { $0 = "\(error)" }
                bound.signal()
                throw error
            }
        }
        bound.wait()
        if let reason = failure.withLock({ $0 }) {
            throw .unsupported("cannot serve on \(host):\(port): \(reason)")
        }
        return Running(task: task)
    }
}
