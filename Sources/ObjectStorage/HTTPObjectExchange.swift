internal import AsyncHTTPClient
internal import Dispatch
internal import MediaCore
internal import NIOCore
internal import NIOHTTP1
internal import NIOPosix

/// The HTTP client every store's requests go through, for the life of the process (never shut
/// down), on an event loop of its own (a request waited for from a thread of another loop group
/// never runs on that loop): connections are kept per host, and so reused request after
/// request (HTTP/1.1 persistent connections); redirects are not followed; a connection that cannot be made at once, or
/// within 2 s, fails the try, which ``HTTPObjectExchange/send(_:expecting:refusal:refused:once:)``
/// repeats.
private let storeClient: HTTPClient = {
    var configuration = HTTPClient.Configuration()
    configuration.timeout = .init(connect: .seconds(2), read: .seconds(30))
    configuration.connectionPool.retryConnectionEstablishment = false
    // A PUT redirected would be sent again as a GET, whose 200 is no acknowledgement.
    configuration.redirectConfiguration = .disallow
    return HTTPClient(eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup(numberOfThreads: 1)), configuration: configuration)
}()

/// One request to an object store over HTTP, and the rules by which it is tried again: what
/// ``S3Store`` and ``HTTPIngestStore`` share.
enum HTTPObjectExchange {
    /// What the server answered.
    struct Answer {
        var status: Int
        var body: [UInt8]
        /// The response's `ETag`, when it has one.
        var entityTag: String? = nil
        /// The response's `Content-Range` (RFC 9110 14.4), when it has one.
        var contentRange: String? = nil
        /// The response's `Date` (RFC 9110 6.6.1): the server's clock when it answered.
        var date: String? = nil
    }

    /// The size of an object, from a `GET` of its first byte by `get` (a ranged request's
    /// headers in, the answer out, 200, 206 or 416 expected): the total of `Content-Range`
    /// (`bytes 0-0/12345`; 416's `bytes */0` for an empty object), or a whole answer's length.
    static func byteCount(get: ([(name: String, value: String)]) throws(PipelineError) -> Answer, describing: String) throws(PipelineError) -> Int64 {
        let answer = try get([("Range", "bytes=0-0")])
        if answer.status == 200 { return Int64(answer.body.count) }
        guard let range = answer.contentRange, let slash = range.lastIndex(of: "/"), let total = Int64(range[range.index(after: slash)...]) else {
            throw PipelineError(.network, underlying: ObjectStoreError(.failed, "\(describing): HTTP \(answer.status) without the object's size (Content-Range)"))
        }
        return total
    }

    /// Up to `count` bytes of an object from `offset`, by `get` (a ranged `GET`; a server that
    /// ignores the range answers 200 with the whole object, of which the range is taken; 416:
    /// nothing there).
    static func read(at offset: Int64, count: Int, get: ([(name: String, value: String)]) throws(PipelineError) -> Answer) throws(PipelineError) -> [UInt8] {
        guard count > 0 else { return [] }
        let answer = try get([("Range", "bytes=\(offset)-\(offset + Int64(count) - 1)")])
        switch answer.status {
        case 206: return Array(answer.body.prefix(count))
        case 200:
            guard offset < Int64(answer.body.count) else { return [] }
            return Array(answer.body[Int(offset)..<min(answer.body.count, Int(offset) + count)])
        default: return []
        }
    }

    /// The delays before the second and later tries of a request the server could not take now
    /// (about 4 s in all).
    static let retryDelays: [Duration] = [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2)]

    /// Whether a status says "try again": 408, 429 and the 5xx.
    static func isTransient(status: Int) -> Bool { status == 408 || status == 429 || status >= 500 }

    /// Sends a request by `once` (one try), tried again after ``retryDelays`` while it found no
    /// connection, or, when `method` is repeatable (not `POST`), while the failure is transient
    /// (``ObjectStoreError/isTransient``: a 5xx, 408 or 429, S3's `ExpiredToken` or
    /// `RequestTimeTooSkewed`, no answer in time); `refused` hears each transient refusal, and
    /// the answer it came in, before the next try (an S3 store reads fresh credentials after
    /// `ExpiredToken`, and sets its clock by the server's after `RequestTimeTooSkewed`). An
    /// answer outside `expecting` that is not transient is `refusal`'s error at once.
    static func send(_ method: String, expecting: Set<Int>, refusal: (Answer) -> ObjectStoreError,
                     refused: (ObjectStoreError, Answer) -> Void = { _, _ in },
                     once: () throws(ObjectStoreError) -> Answer) throws(PipelineError) -> Answer {
        let repeatable = method != "POST"
        var failure: ObjectStoreError?
        for attempt in 0...retryDelays.count {
            // A pipeline's thread waits (never the cooperative pool's).
            if attempt > 0 { _ = DispatchSemaphore(value: 0).wait(for: retryDelays[attempt - 1]) }
            let answer: Answer
            do throws(ObjectStoreError) { answer = try once() } catch {
                guard error.kind == .unreachable || (repeatable && error.kind == .timedOut) else { throw PipelineError(.network, underlying: error) }
                failure = error
                continue
            }
            if expecting.contains(answer.status) { return answer }
            let error = refusal(answer)
            guard repeatable, error.isTransient else { throw PipelineError(.network, underlying: error) }
            refused(error, answer)
            failure = error
        }
        throw PipelineError(.network, underlying: failure ?? ObjectStoreError(.unreachable, "no answer"))
    }

    /// One request to `url`, its answer read whole, within `timeout` and a second more for every
    /// 128 KiB sent; `host`, when given, is the `Host` header sent (the one a signature covers).
    /// The body is `body`, or when `file` is given that file, read a MiB at a time as the
    /// connection takes it. A failure is said as "`prefix`: `METHOD` `name`: what happened".
    static func exchange(_ method: String, url: String, headers: [(name: String, value: String)], host: String? = nil, body: [UInt8],
                         file: FileByteSource? = nil, timeout: Duration, prefix: String, name: String) throws(ObjectStoreError) -> Answer {
        do {
            let length = file?.byteCount ?? Int64(body.count)
            let payload: HTTPClient.Body? = if let file { streamed(file) } else if body.isEmpty { nil } else { .bytes(body) }
            var outgoing = try HTTPClient.Request(url: url, method: HTTPMethod(rawValue: method), headers: HTTPHeaders(headers), body: payload)
            if let host { outgoing.headers.replaceOrAdd(name: "Host", value: host) }
            let deadline = NIODeadline.now() + .nanoseconds(timeout.inNanoseconds) + .seconds(length / (128 * 1024))
            let response = try storeClient.execute(request: outgoing, deadline: deadline).wait()
            let bytes = response.body.map { Array($0.readableBytesView) } ?? []
            return Answer(status: Int(response.status.code), body: bytes, entityTag: response.headers.first(name: "ETag"),
                          contentRange: response.headers.first(name: "Content-Range"), date: response.headers.first(name: "Date"))
        } catch {
            let kind: ObjectStoreError.Kind = isConnectionFailure(error) ? .unreachable : isTimeout(error) ? .timedOut
                : isTLSFailure(error) ? .tls : .failed
            throw ObjectStoreError(kind, "\(prefix): \(method) \(name): \(socketErrorWords(error))")
        }
    }
}

extension HTTPObjectExchange {
    /// A request body read from `file` a MiB at a time, each piece read when the connection has
    /// taken the one before, so that memory does not grow with the file.
    static func streamed(_ file: FileByteSource) -> HTTPClient.Body {
        let length = file.byteCount
        return .stream(contentLength: length) { writer in
            @Sendable func write(from offset: Int64) -> EventLoopFuture<Void> {
                let bytes: [UInt8]
                do { bytes = try file.read(at: offset, count: Int(min(Int64(1 << 20), length - offset))) } catch {
                    return writer.write(.byteBuffer(ByteBuffer())).flatMapThrowing { throw error }
                }
                let next = offset + Int64(bytes.count)
                let written = writer.write(.byteBuffer(ByteBuffer(bytes: bytes)))
                guard next < length, !bytes.isEmpty else { return written }
                return written.flatMap { write(from: next) }
            }
            return write(from: 0)
        }
    }
}

/// A store over HTTP whose objects are read by ranged `GET`s (RFC 9110 14.2): its size from the
/// first byte's `Content-Range`, its bytes a range at a time. ``S3Store`` and
/// ``HTTPIngestStore`` are; each says how its `GET` is sent.
protocol RangedHTTPObjects: ReadableObjectStore {
    /// The request path of the object `name`.
    func path(of name: String) -> String
    /// A `GET` of the object at `path` with `headers` (a range), 200, 206 or 416 expected.
    func rangedGet(_ path: String, headers: [(name: String, value: String)], about name: String) throws(PipelineError) -> HTTPObjectExchange.Answer
}

extension RangedHTTPObjects {
    /// The size of the object `name` (a `GET` of its first byte).
    public func byteCount(of name: String) throws(PipelineError) -> Int64 {
        let path = path(of: try checkedName(name))
        return try HTTPObjectExchange.byteCount(get: { headers throws(PipelineError) in
            try rangedGet(path, headers: headers, about: name)
        }, describing: "\(description): \(name)")
    }

    /// Up to `count` bytes of the object `name` from `offset` (a ranged `GET`).
    public func read(_ name: String, at offset: Int64, count: Int) throws(PipelineError) -> [UInt8] {
        let path = path(of: try checkedName(name))
        return try HTTPObjectExchange.read(at: offset, count: count, get: { headers throws(PipelineError) in
            try rangedGet(path, headers: headers, about: name)
        })
    }
}

extension ObjectAttributes {
    /// The header fields a `PUT` carries for these attributes, which an HTTP store keeps and
    /// serves the object with: `Content-Type` (`application/octet-stream` when none is given),
    /// and `Cache-Control` when one is.
    var requestHeaders: [(name: String, value: String)] {
        [("Content-Type", contentType ?? "application/octet-stream")] + (cacheControl.map { [("Cache-Control", $0)] } ?? [])
    }
}
