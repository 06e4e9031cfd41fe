public import MediaCore
internal import Synchronization

/// An HTTP ingest point, or a WebDAV share, as an ``/MediaCore/ObjectStore``:
/// `https://[user:password@]host[:port]/path`, where each object is one request below the path:
/// `PUT` with its `Content-Type` and `Cache-Control` (``/MediaCore/ObjectAttributes``), `HEAD`
/// to ask for it, `DELETE` to remove it (what Akamai MSL, AWS MediaPackage's WebDAV and
/// `ffmpeg -method PUT` speak).
///
/// A WebDAV share needs a directory made before a file goes in it. Named `dav://` or `davs://`
/// (`http` and `https` in WebDAV mode, as GVfs and KDE name them), the store makes each
/// collection above an object before its first `PUT` there, from the top down (`MKCOL`, RFC
/// 4918 9.3; 405 says one exists), remembering what it made: nginx's `dav_methods` without
/// `create_full_put_path` answers such a `PUT` 500, not RFC 4918's 409. Named `http` or
/// `https`, it makes them only after a `PUT` answered 409 Conflict (RFC 4918 9.7.1), then puts
/// again.
///
/// Credentials in the URL go as HTTP Basic (RFC 7617) on every request: over `https`, or over
/// `http` to this machine only (`localhost`, `127.0.0.0/8`, `::1`), since elsewhere anyone on the
/// way reads them. ``description`` masks the password.
///
/// Requests are tried again as ``S3Store``'s are: a connection not made, and a `PUT`, `HEAD`,
/// `DELETE` or `MKCOL` answered 5xx, 408 or 429 or not answered in time, after 0.25, 0.5, 1 and
/// 2 s; any other refusal (401, 403, 404 of the share) is an ``ObjectStoreError`` at once.
public struct HTTPIngestStore: ObjectStore {
    /// `scheme://host[:port]`.
    public let origin: String
    /// The path every object's name is put under, without a trailing `/` (empty for the root),
    /// as written in the URL (percent-encoded).
    public let basePath: String
    /// Whether collections are made before the first `PUT` into each (`dav://`, `davs://`).
    public let makesCollections: Bool
    /// The `Authorization` header's value, when the URL has credentials.
    let authorization: String?
    /// The URL, its password masked.
    public let description: String
    /// How long one request may take.
    public var timeout: Duration = .seconds(30)
    /// The collections made or found by `MKCOL`, shared by the store's copies.
    private let collections = Collections()

    /// The paths of the collections known to exist.
    private final class Collections: Sendable {
        let known = Mutex<Set<String>>([])
    }

    /// The store `url` (`http[s]://[user:password@]host[:port][/path]`, or `dav[s]://…` for a
    /// WebDAV share) names.
    ///
    /// - Throws: ``ObjectStoreError/Kind/address`` for a URL that is not one, or credentials
    ///   that would go in the clear to another machine.
    public init(url: String) throws(ObjectStoreError) {
        let parts: URLReference
        do { parts = try URLReference(url) } catch { throw ObjectStoreError(.address, "not a URL of the form http[s]://host[:port]/path") }
        let scheme = ["dav": "http", "davs": "https"][parts.scheme] ?? parts.scheme
        makesCollections = scheme != parts.scheme
        let masked = "\(parts.scheme)://\(parts.userInfo.map { Self.maskedUserInfo($0) + "@" } ?? "")\(parts.authority)\(parts.path)"
        guard scheme == "http" || scheme == "https", !parts.host.isEmpty else {
            throw ObjectStoreError(.address, "\(masked): not a URL of the form http[s]://host[:port]/path or dav[s]://host[:port]/path")
        }
        guard parts.query == nil, !parts.path.contains("#") else {
            throw ObjectStoreError(.address, "\(masked): a query or a fragment has no meaning here (the objects go below the path)")
        }
        var segments: [String] = []
        for segment in parts.path.split(separator: "/") {
            guard let bytes = PercentEncoding.decodedBytes(segment, invalid: .refused), !bytes.contains(0), segment != ".", segment != ".." else {
                throw ObjectStoreError(.address, "\(masked): '\(segment)' is not a path component")
            }
            segments.append(String(segment))
        }
        if let userInfo = parts.userInfo {
            guard scheme == "https" || Self.isThisMachine(String(parts.host)) else {
                throw ObjectStoreError(.address, "\(masked): a password goes over https only (http sends it in the clear to \(parts.host))")
            }
            let decoded = PercentEncoding.decodedBytes(userInfo, invalid: .kept) ?? Array(userInfo.utf8)
            authorization = "Basic " + Base64.encode(decoded)
        } else {
            authorization = nil
        }
        origin = "\(scheme)://\(parts.authority)"
        basePath = segments.isEmpty ? "" : "/" + segments.joined(separator: "/")
        description = masked.hasSuffix("/") ? String(masked.dropLast()) : masked
    }

    /// `user:****` (the user alone when there is no password).
    static func maskedUserInfo(_ userInfo: Substring) -> String {
        guard let colon = userInfo.firstIndex(of: ":") else { return String(userInfo) }
        return userInfo[..<colon] + ":****"
    }

    /// Whether `host` names this machine.
    static func isThisMachine(_ host: String) -> Bool {
        host.lowercased() == "localhost" || host == "::1" || (host.hasPrefix("127.") && host.split(separator: ".").count == 4)
    }

    /// The request path of the object `name`: the base path, then each component
    /// percent-encoded (RFC 3986 3.3).
    func path(of name: String) -> String {
        basePath + "/" + name.split(separator: "/").map { PercentEncoding.encoded(String($0)) }.joined(separator: "/")
    }

    /// Whether the object `name` exists (`HEAD`: 2xx yes, 404 or 410 no).
    public func contains(_ name: String) throws(PipelineError) -> Bool {
        let answer = try send("HEAD", path(of: try checkedName(name)), expecting: [200, 204, 404, 410], about: name)
        return answer.status < 300
    }

    /// Puts `bytes` as the object `name`, without attributes.
    public func put(_ name: String, _ bytes: [UInt8]) throws(PipelineError) {
        try put(name, bytes, attributes: ObjectAttributes())
    }

    /// Puts `bytes` as the object `name` (`PUT`) with its `Content-Type` and `Cache-Control`;
    /// on 409, after making the collections above it (`MKCOL`), once more.
    public func put(_ name: String, _ bytes: [UInt8], attributes: ObjectAttributes) throws(PipelineError) {
        var headers: [(name: String, value: String)] = [("Content-Type", attributes.contentType ?? "application/octet-stream")]
        if let cacheControl = attributes.cacheControl { headers.append(("Cache-Control", cacheControl)) }
        let path = path(of: try checkedName(name))
        if makesCollections { try makeCollections(above: path, about: name) }
        let answer = try send("PUT", path, headers: headers, body: bytes, expecting: [200, 201, 204, 409], about: name)
        guard answer.status == 409 else { return }
        // A conflict with no collection above to make is the server's own.
        guard path.split(separator: "/").count > 1 else { throw refusal(answer, method: "PUT", name: name) }
        try makeCollections(above: path, about: name)
        _ = try send("PUT", path, headers: headers, body: bytes, expecting: [200, 201, 204], about: name)
    }

    /// Removes the object `name` (`DELETE`; one that does not exist is not an error).
    public func remove(_ name: String) throws(PipelineError) {
        _ = try send("DELETE", path(of: try checkedName(name)), expecting: [200, 202, 204, 404, 410], about: name)
    }

    /// Makes each collection above `path` not known to exist, from the top (`MKCOL`: 201 made,
    /// 405 there already).
    private func makeCollections(above path: String, about name: String) throws(PipelineError) {
        let components = path.split(separator: "/").dropLast()
        var collection = ""
        for component in components {
            collection += "/" + component
            if collections.known.withLock({ $0.contains(collection) }) { continue }
            _ = try send("MKCOL", collection + "/", expecting: [201, 405], about: name)
            collections.known.withLock { _ = $0.insert(collection) }
        }
    }

    /// The error an answer is: the method, the object, the status and the server's reason.
    private func refusal(_ answer: HTTPObjectExchange.Answer, method: String, name: String) -> PipelineError {
        PipelineError(.network, underlying: Self.refusal(answer, method: method, object: name, store: description))
    }

    /// The error a refusal is: the store, the method, the object and the status, with what the
    /// server said when it is a short line of text.
    static func refusal(_ answer: HTTPObjectExchange.Answer, method: String, object: String, store: String) -> ObjectStoreError {
        let text = String(decoding: answer.body.prefix(200), as: UTF8.self)
        let said = answer.body.count <= 200 && !text.contains("<") ? text.trimmingSpaces : ""
        let words = answer.status == 401 ? " (the user or password is wrong)" : said.isEmpty ? "" : " (\(said))"
        return ObjectStoreError(.refused, "\(store): \(method) \(object): HTTP \(answer.status)\(words)", status: answer.status)
    }

    /// Sends one request by the store's rules (``HTTPObjectExchange/send(_:expecting:refusal:once:)``).
    func send(_ method: String, _ path: String, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
              expecting: Set<Int>, about name: String) throws(PipelineError) -> HTTPObjectExchange.Answer {
        var all = headers
        if let authorization { all.append(("Authorization", authorization)) }
        return try HTTPObjectExchange.send(method, expecting: expecting, refusal: { answer in
            Self.refusal(answer, method: method, object: name, store: description)
        }, once: { () throws(ObjectStoreError) in
            try HTTPObjectExchange.exchange(method, url: origin + path, headers: all, body: body, timeout: timeout, prefix: description, name: name)
        })
    }
}
