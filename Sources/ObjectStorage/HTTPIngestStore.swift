public import MediaCore
public import SystemPackage
internal import Synchronization

/// An HTTP ingest point, or a WebDAV share, as an ``/MediaCore/ObjectStore``:
/// `https://[user:password@]host[:port]/path`, where each object is one request below the path:
/// `PUT` with its `Content-Type` and `Cache-Control` (``/MediaCore/ObjectAttributes``), `HEAD`
/// to ask for it, `DELETE` to remove it (what Akamai MSL, AWS MediaPackage's WebDAV and
/// `ffmpeg -method PUT` speak).
///
/// A WebDAV share needs a directory made before a file goes in it. Named `dav://` or `davs://`
/// (`http` and `https` in WebDAV mode, as GVfs and KDE name them), the store makes the
/// collections above an object before its first `PUT` there (`MKCOL`, RFC 4918 9.3: the
/// deepest first, up a level at each 409, then down; 405 says one exists), remembering what it
/// made: nginx's `dav_methods` without
/// `create_full_put_path` answers such a `PUT` 500, not RFC 4918's 409. Named `http` or
/// `https`, it makes them only after a `PUT` answered 409 Conflict (RFC 4918 9.7.1), then puts
/// again.
///
/// Credentials in the URL go as HTTP Basic (RFC 7617) on every request: over `https`, or over
/// `http` to this machine only (`localhost`, `127.0.0.0/8`, `::1`), since elsewhere anyone on the
/// way reads them. ``description`` masks the password (the whole user part when it has no
/// colon: a token). Redirects are not followed: a 3xx is a refusal.
///
/// Requests are tried again as ``S3Store``'s are: a connection not made, and a `PUT`, `HEAD`,
/// `DELETE` or `MKCOL` answered 5xx, 408 or 429 or not answered in time, after 0.25, 0.5, 1 and
/// 2 s; any other refusal (401, 403, 404 of the share) is an ``ObjectStoreError`` at once.
public struct HTTPIngestStore: RangedHTTPObjects {
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
            // RFC 7617 2: user-id ":" password, the colon there without a password too.
            var decoded = PercentEncoding.decodedBytes(userInfo, invalid: .kept) ?? Array(userInfo.utf8)
            if !userInfo.contains(":") { decoded.append(UInt8(ascii: ":")) }
            authorization = "Basic " + Base64.encode(decoded)
        } else {
            authorization = nil
        }
        origin = "\(scheme)://\(parts.authority)"
        basePath = segments.isEmpty ? "" : "/" + segments.joined(separator: "/")
        description = masked.hasSuffix("/") ? String(masked.dropLast()) : masked
    }

    /// `user:****`; `****` when there is no colon (a token given as the user).
    static func maskedUserInfo(_ userInfo: Substring) -> String {
        guard let colon = userInfo.firstIndex(of: ":") else { return "****" }
        return userInfo[..<colon] + ":****"
    }

    /// Whether `host` names this machine.
    static func isThisMachine(_ host: String) -> Bool {
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return host.lowercased() == "localhost" || host == "::1"
            || (octets.count == 4 && octets[0] == "127" && octets.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && UInt8($0) != nil })
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
        try put(name, bytes, file: nil, attributes: attributes)
    }

    /// Puts the file at `path` as the object `name`, as ``put(_:_:attributes:)`` puts bytes,
    /// its body read from the file as the connection takes it.
    public func put(_ name: String, contentsOfFile path: FilePath, attributes: ObjectAttributes) throws(PipelineError) {
        let file: FileByteSource
        do { file = try FileByteSource(regularFileAt: path) } catch { throw .stream(error) }
        try put(name, [], file: file, attributes: attributes)
    }

    /// A `PUT` of `bytes`, or of `file` when it is given.
    private func put(_ name: String, _ bytes: [UInt8], file: FileByteSource?, attributes: ObjectAttributes) throws(PipelineError) {
        let headers = attributes.requestHeaders
        let path = path(of: try checkedName(name))
        if makesCollections { try makeCollections(above: path, about: name) }
        let answer = try send("PUT", path, headers: headers, body: bytes, file: file, expecting: Set(200...299).union([409]), about: name)
        guard answer.status == 409 else { return }
        // A conflict with no collection above to make is the server's own.
        guard path.split(separator: "/").count > 1 else { throw refusal(answer, method: "PUT", name: name) }
        // What was made may have gone since.
        collections.known.withLock { known in known = known.filter { !path.hasPrefix($0 + "/") } }
        try makeCollections(above: path, about: name)
        _ = try send("PUT", path, headers: headers, body: bytes, file: file, expecting: Set(200...299), about: name)
    }

    /// A `GET` of the object at `path` with `headers` (a range), 200, 206 or 416 expected.
    func rangedGet(_ path: String, headers: [(name: String, value: String)], about name: String) throws(PipelineError) -> HTTPObjectExchange.Answer {
        try send("GET", path, headers: headers, expecting: [200, 206, 416], about: name)
    }

    /// Removes the object `name` (`DELETE`; one that does not exist is not an error).
    public func remove(_ name: String) throws(PipelineError) {
        _ = try send("DELETE", path(of: try checkedName(name)), expecting: [200, 202, 204, 404, 410], about: name)
    }

    /// Makes the collections above `path` not known to exist: the deepest first, going up a
    /// level at each 409 (its parent is missing) until one is made or found (405: it exists),
    /// then down again (RFC 4918 9.3.1); so a share mounted below a path that is not WebDAV
    /// (`/remote.php/dav/…`) is never asked above what it needs.
    private func makeCollections(above path: String, about name: String) throws(PipelineError) {
        var collections: [String] = []
        var collection = ""
        for component in path.split(separator: "/").dropLast() {
            collection += "/" + component
            collections.append(collection)
        }
        var made = collections.count
        while made > 0, !self.collections.known.withLock({ $0.contains(collections[made - 1]) }) {
            let answer = try send("MKCOL", collections[made - 1] + "/", expecting: [201, 405, 409], about: name)
            guard answer.status == 409 else {
                self.collections.known.withLock { _ = $0.insert(collections[made - 1]) }
                break
            }
            made -= 1
        }
        guard made > 0 || collections.isEmpty || self.collections.known.withLock({ $0.contains(collections[0]) }) else {
            throw PipelineError(.network, underlying: ObjectStoreError(.refused, "\(description): MKCOL \(collections[0])/: HTTP 409 (no collection above it)", status: 409))
        }
        for index in made..<collections.count {
            _ = try send("MKCOL", collections[index] + "/", expecting: [201, 405], about: name)
            self.collections.known.withLock { _ = $0.insert(collections[index]) }
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
        let words = answer.status == 401 ? (store.contains("@") ? " (the user or password is wrong)" : " (credentials are needed: https://user:password@…)")
            : !said.isEmpty ? " (\(said))"
            // nginx's WebDAV module answers 500 to a PUT into a directory that is not there.
            : answer.status == 500 && method == "PUT" && store.hasPrefix("http")
            ? " (a WebDAV share answers so when a directory above the object is missing: dav://… or davs://… makes them)" : ""
        return ObjectStoreError(.refused, "\(store): \(method) \(object): HTTP \(answer.status)\(words)", status: answer.status)
    }

    /// Sends one request by the store's rules (``HTTPObjectExchange/send(_:expecting:refusal:refused:once:)``).
    func send(_ method: String, _ path: String, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
              file: FileByteSource? = nil, expecting: Set<Int>, about name: String) throws(PipelineError) -> HTTPObjectExchange.Answer {
        var all = headers
        if let authorization { all.append(("Authorization", authorization)) }
        return try HTTPObjectExchange.send(method, expecting: expecting, refusal: { answer in
            Self.refusal(answer, method: method, object: name, store: description)
        }, once: { () throws(ObjectStoreError) in
            try HTTPObjectExchange.exchange(method, url: origin + path, headers: all, body: body, file: file, timeout: timeout,
                                            prefix: description, name: name)
        })
    }
}
