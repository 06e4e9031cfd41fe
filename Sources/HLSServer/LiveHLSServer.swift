public import Hummingbird
public import MediaStreaming
public import MediaCore
public import SystemPackage
internal import HTTPTypes
internal import HummingbirdTLS
internal import HummingbirdCore
internal import NIOCore
internal import NIOSSL
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif
internal import Synchronization
internal import Dispatch

/// An ``/MediaStreaming/HLSOrigin`` on Hummingbird: a live rendition with low-latency HLS
/// (blocking playlist reload, the preload-hinted part held), or a packaged directory as it is
/// (playlists, MPDs, init segments and segments, in subdirectories too), with `HEAD` and
/// single byte ranges.
///
/// Mount ``addRoutes(to:)`` in a Hummingbird app of your own, or let ``start(host:port:headerDeadline:stallLimit:tls:)``
/// run a server of its own on a task of its own. Any other framework serves the same origin
/// by forwarding its requests to ``/MediaStreaming/HLSOrigin/respond(to:)``.
public struct LiveHLSServer: Sendable {
    /// What is served.
    public let origin: HLSOrigin

    /// A server of `publication`, whose files are in `directory`; `allowedOrigin` is the CORS
    /// origin allowed (`*` by default, `nil` for no CORS headers).
    public init(publication: LiveHLSPublication?, directory: FilePath, playlistName: String = "index.m3u8", allowedOrigin: String? = "*") {
        origin = HLSOrigin(publication: publication, directory: directory, playlistName: playlistName, allowedOrigin: allowedOrigin)
    }

    /// A server of `origin`.
    public init(origin: HLSOrigin) {
        self.origin = origin
    }

    /// What is published live; `nil` when only the directory's files are served.
    public var publication: LiveHLSPublication? { origin.publication }
    /// Where the files are.
    public var directory: FilePath { origin.directory }
    /// The live playlist's name.
    public var playlistName: String { origin.playlistName }

    /// Adds `GET`, `HEAD` and `OPTIONS` (CORS preflights) of `/` (the player page) and every
    /// path below it (the playlist with blocking reload, the init segment, segments, parts) to
    /// `router`, and the methods that write, which the origin answers 405.
    public func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        let origin = self.origin
        let respond: @Sendable (Request, Context) async throws -> Response = { request, context in
            let query = request.uri.queryParameters
            // The method as asked: the origin answers GET, HEAD and OPTIONS, and 405 (with
            // `Allow`) to the writing methods routed below.
            let method = request.method.rawValue
            let asked = HLSOrigin.Request(
                method: method,
                path: context.parameters.getCatchAll().map(String.init).filter { !$0.isEmpty },
                query: Dictionary(query.map { (String($0.key), String($0.value)) }, uniquingKeysWith: { first, _ in first }),
                range: request.headers[.range], ifNoneMatch: request.headers[.ifNoneMatch], ifModifiedSince: request.headers[.ifModifiedSince],
                ifRange: request.headers[.ifRange])
            return Self.response(await origin.respond(to: asked))
        }
        // Methods that write, HTTP's and WebDAV's (RFC 9110 9.3, RFC 4918 9): 405, not 404, and
        // nothing is written.
        let writing: [HTTPRequest.Method] = [.post, .put, .delete, .patch, .trace]
            + ["PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK"].compactMap { HTTPRequest.Method($0) }
        for path: RouterPath in ["/", "**"] {
            router.get(path, use: respond)
            router.head(path, use: respond)
            router.on(path, method: .options, use: respond)
            for method in writing { router.on(path, method: method, use: respond) }
        }
    }

    /// `answer` as a Hummingbird response; a file body is read in 256 KiB pieces as it is sent.
    static func response(_ answer: HLSOrigin.Response) -> Response {
        var headers = HTTPFields()
        for (name, value) in answer.headers {
            if let field = HTTPField.Name(name), field != .contentLength { headers[field] = value }
        }
        let status = HTTPResponse.Status(code: answer.status)
        switch answer.body {
        case .empty:
            var response = Response(status: status, headers: headers, body: ResponseBody())
            if let length = answer.header("Content-Length") { response.headers[.contentLength] = length }
            return response
        case .text(let text):
            return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
        case .file(let file):
            return Response(status: status, headers: headers, body: ResponseBody(contentLength: file.range.count) { writer in
                let chunks = file.chunks()
                while let chunk = chunks.next() { try await writer.write(ByteBuffer(bytes: chunk)) }
                try await writer.finish(nil)
            })
        }
    }

    /// The PEM files of an HTTPS server: its certificate chain (the server's certificate first)
    /// and its private key. A page served over HTTPS can fetch only HTTPS media.
    public struct TLSFiles: Sendable {
        /// The certificate chain, PEM.
        public var certificateChain: FilePath
        /// The private key, PEM (unencrypted).
        public var privateKey: FilePath

        /// The files of a certificate chain and its key.
        public init(certificateChain: FilePath, privateKey: FilePath) {
            self.certificateChain = certificateChain
            self.privateKey = privateKey
        }

        /// swift-nio-ssl's server configuration of the files.
        func configuration() throws -> TLSConfiguration {
            let chain = try NIOSSLCertificate.fromPEMFile(certificateChain.string).map { NIOSSLCertificateSource.certificate($0) }
            let key = try NIOSSLPrivateKey(file: privateKey.string, format: .pem)
            return TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        }
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
    /// A connection whose next request head has not arrived whole within `headerDeadline` of its
    /// opening, or of the end of its last response, is closed (``RequestHeadDeadline``: slowloris
    /// clients trickling header bytes are cut off; a request being answered is not); one whose
    /// client takes no bytes of a response for `stallLimit` is closed too. With `tls`
    /// it serves HTTPS (swift-nio-ssl through HummingbirdTLS).
    ///
    /// - Throws: `PipelineError.unsupported` naming the certificate and key when they cannot be
    ///   read, or the address when it
    ///   cannot be bound (a port in use).
    public func start(host: String, port: Int, headerDeadline: Duration = RequestHeadDeadline.defaultDeadline,
                      stallLimit: Duration = RequestHeadDeadline.defaultStallLimit, tls: TLSFiles? = nil) throws(PipelineError) -> Running {
        let router = Router()
        addRoutes(to: router)
        let bound = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        var server: HTTPServerBuilder = .http1(configuration: .init(additionalChannelHandlers: [RequestHeadDeadline(headerDeadline, stallLimit: stallLimit)]))
        if let tls {
            do { server = try .tls(server, tlsConfiguration: try tls.configuration()) } catch {
                throw .unsupported("cannot serve HTTPS with \(tls.certificateChain) and \(tls.privateKey): \(error)", path: tls.certificateChain)
            }
        }
        let app = Application(router: router, server: server,
                              configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "keyframe"),
                              onServerRunning: { _ in bound.signal() })
        let task = Task {
            do {
                try await app.runService(gracefulShutdownSignals: [])
            } catch {
                // A socket's error in the system's words (`Address already in use`).
                let reason = (error as? IOError).map { systemErrorWords($0.errnoCode) } ?? "\(error)"
                failure.withLock { $0 = reason }
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
