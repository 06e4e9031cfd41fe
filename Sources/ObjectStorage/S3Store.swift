#if canImport(Glibc)
internal import Glibc
#endif
public import MediaCore
public import SystemPackage
internal import Synchronization
internal import XMLReader

/// An S3 bucket, or a prefix in one, as an ``/MediaCore/ObjectStore``: `s3://bucket/prefix`.
/// Each object is one signed request (``SignatureV4``): `PUT` with its `Content-Type` and
/// `Cache-Control` (``/MediaCore/ObjectAttributes``), a ranged `GET` to ask for it, `DELETE` to
/// remove it. Amazon S3 is addressed virtual-hosted (`https://bucket.s3.REGION.amazonaws.com/key`;
/// a bucket with a `.` path-style, which AWS's certificate does not cover); any other store,
/// given its endpoint (SeaweedFS, MinIO, Ceph), path-style (`http://127.0.0.1:8333/bucket/key`).
/// Asking for a missing object needs the `s3:ListBucket` permission (without it, AWS answers
/// 403 `AccessDenied` where it would answer 404).
///
/// A request that found no connection is tried again after 0.25, 0.5, 1 and 2 s (about 4 s in
/// all), and so is a `PUT`, `GET` or `DELETE` the server answered 5xx, 408, 429, or S3's
/// `SlowDown`, `RequestTimeout`, `RequestTimeTooSkewed` or `ExpiredToken`, or did not answer in
/// time (30 s, and a second more for every 128 KiB sent); after `ExpiredToken` the credentials
/// are read again by ``credentialSource`` (a temporary session's keys renewed in the shared
/// credentials file), and the next try is signed with them; after `RequestTimeTooSkewed` every
/// request is signed by the server's clock (its `ServerTime`, or its `Date`), as AWS's SDKs
/// correct a skewed clock. A `POST` (a multipart upload's
/// start or end) is not sent twice. Any other refusal (403 `SignatureDoesNotMatch`, 404
/// `NoSuchBucket`) or failure (a TLS handshake refused) is an ``ObjectStoreError`` at once, with the
/// server's code and message.
public struct S3Store: RangedHTTPObjects {
    /// The bucket.
    public let bucket: String
    /// The prefix every object's name is put under (`shows/2026`), without a trailing `/`;
    /// empty for the bucket's root.
    public let prefix: String
    /// Where the requests go: `scheme://host[:port]`.
    public let endpoint: String
    /// Whether the bucket is the first path segment (`endpoint/bucket/key`) rather than part of
    /// the host name.
    public let pathStyle: Bool
    /// The signer, shared by the store's copies: ``credentialSource``'s fresh keys replace its
    /// own for every request after.
    let signing: SigningKeys
    /// Where fresh credentials are read after S3 answers `ExpiredToken`; `nil`: nowhere (the
    /// keys given are the only ones).
    public var credentialSource: (@Sendable () throws(ObjectStoreError) -> S3Credentials)?
    /// The endpoint's `host[:port]`: the `Host` each request is signed with and sent with.
    let authority: String
    /// How long one request may take.
    public var timeout: Duration = .seconds(30)

    /// The store `url` (`s3://bucket[/prefix]`) names, reached at `endpoint`
    /// (`http://127.0.0.1:8333`, path-style) or, without one, at Amazon S3 in `region`
    /// (virtual-hosted), signed with `credentials`.
    ///
    /// - Throws: ``ObjectStoreError/Kind/address`` for a URL or endpoint that is not one.
    public init(url: String, endpoint: String? = nil, credentials: S3Credentials, region: String?) throws(ObjectStoreError) {
        let parts: URLReference
        do { parts = try URLReference(url) } catch { throw ObjectStoreError(.address, "\(url): not a URL of the form s3://bucket/prefix") }
        guard parts.scheme == "s3", !parts.host.isEmpty, parts.userInfo == nil, parts.port == nil, parts.query == nil else {
            throw ObjectStoreError(.address, "\(url): an S3 URL is s3://bucket/prefix (no user, port or query; the endpoint is --s3-endpoint)")
        }
        bucket = String(parts.host)
        let isIPAddress = bucket.split(separator: ".").count == 4 && bucket.split(separator: ".").allSatisfy { UInt8($0) != nil }
        guard bucket.utf8.count >= 3, bucket.utf8.count <= 63,
              bucket.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x2E }),
              let first = bucket.utf8.first, let last = bucket.utf8.last, first != 0x2D, first != 0x2E, last != 0x2D, last != 0x2E,
              !bucket.contains(".."), !isIPAddress else {
            throw ObjectStoreError(.address, "\(url): '\(bucket)' is not a bucket name (3 to 63 lower-case letters, digits, '-' and '.', "
                          + "beginning and ending with a letter or digit, not an IP address)")
        }
        var components: [String] = []
        for segment in parts.path.split(separator: "/") {
            guard let bytes = PercentEncoding.decodedBytes(segment, invalid: .refused), !bytes.contains(0),
                  let name = String(validating: bytes, as: UTF8.self), name != ".", name != ".." else {
                throw ObjectStoreError(.address, "\(url): '\(segment)' is not a prefix component")
            }
            components.append(name)
        }
        prefix = components.joined(separator: "/")
        let region = region ?? "us-east-1"
        if let endpoint {
            guard let parsed = try? URLReference(endpoint), parsed.scheme == "http" || parsed.scheme == "https", !parsed.host.isEmpty,
                  parsed.userInfo == nil, parsed.path.isEmpty || parsed.path == "/", parsed.query == nil else {
                throw ObjectStoreError(.address, "--s3-endpoint \(endpoint): not an endpoint of the form http[s]://host[:port]")
            }
            self.endpoint = "\(parsed.scheme)://\(parsed.authority)"
            pathStyle = true
        } else if bucket.contains(".") {
            self.endpoint = "https://s3.\(region).amazonaws.com"
            pathStyle = true
        } else {
            self.endpoint = "https://\(bucket).s3.\(region).amazonaws.com"
            pathStyle = false
        }
        signing = SigningKeys(SignatureV4(credentials: credentials, region: region))
        authority = self.endpoint.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first.map(String.init) ?? ""
    }

    /// `s3://bucket/prefix`; no credential.
    public var description: String { "s3://\(bucket)\(prefix.isEmpty ? "" : "/" + prefix)" }

    /// The request path of the object `name`, not yet encoded.
    func path(of name: String) -> String {
        let key = prefix.isEmpty ? name : prefix + "/" + name
        return pathStyle ? "/\(bucket)/\(key)" : "/\(key)"
    }

    /// Whether the object `name` exists: a `GET` of its first byte (200 or 206, or 416 for an
    /// empty object: yes; 404 `NoSuchKey`: no). Unlike a `HEAD`, a refusal carries S3's reason
    /// (`SignatureDoesNotMatch`, `NoSuchBucket`), which is an error.
    public func contains(_ name: String) throws(PipelineError) -> Bool {
        let answer = try send("GET", path(of: try checkedName(name)), headers: [("Range", "bytes=0-0")], expecting: [200, 206, 404, 416],
                              about: name)
        guard answer.status == 404 else { return true }
        let refusal = Self.refusal(answer, method: "GET", object: name, store: description)
        guard refusal.code == nil || refusal.code == "NoSuchKey" else { throw PipelineError(.network, underlying: refusal) }
        return false
    }

    /// Puts `bytes` as the object `name`, without attributes.
    public func put(_ name: String, _ bytes: [UInt8]) throws(PipelineError) {
        try put(name, bytes, attributes: ObjectAttributes())
    }

    /// The size above which an object is put in parts (S3's multipart upload), and the size of
    /// each part but the last: 8 MiB (S3 takes parts of 5 MiB to 5 GiB).
    public static let multipartThreshold = 8 << 20

    /// Puts `bytes` as the object `name` (`PUT`, the payload's SHA-256 signed), with its
    /// `Content-Type` and `Cache-Control`; above ``multipartThreshold``, in parts of that size
    /// (CreateMultipartUpload, UploadPart, CompleteMultipartUpload; an upload that fails is
    /// aborted, so that no part is left stored).
    public func put(_ name: String, _ bytes: [UInt8], attributes: ObjectAttributes) throws(PipelineError) {
        let headers = attributes.requestHeaders
        let path = path(of: try checkedName(name))
        guard bytes.count > Self.multipartThreshold else {
            _ = try send("PUT", path, headers: headers, body: bytes, expecting: [200], about: name)
            return
        }
        try putInParts(name, path: path, headers: headers, byteCount: bytes.count) { start, count in
            Array(bytes[start..<(start + count)])
        }
    }

    /// Puts the file at `path` as the object `name`, as ``put(_:_:attributes:)`` puts bytes:
    /// above ``multipartThreshold``, one part in memory at a time.
    public func put(_ name: String, contentsOfFile file: FilePath, attributes: ObjectAttributes) throws(PipelineError) {
        let source: FileByteSource
        do { source = try FileByteSource(regularFileAt: file) } catch { throw .stream(error) }
        func read(_ start: Int, _ count: Int) throws(PipelineError) -> [UInt8] {
            do throws(ByteStreamError) {
                let bytes = try source.read(at: Int64(start), count: count)
                guard bytes.count == count else { throw ByteStreamError.refused(path: file, reason: "shorter than it was (\(start + bytes.count) bytes) while it was read") }
                return bytes
            } catch { throw .stream(error) }
        }
        guard source.byteCount > Int64(Self.multipartThreshold) else {
            try put(name, try read(0, Int(source.byteCount)), attributes: attributes)
            return
        }
        let headers = attributes.requestHeaders
        try putInParts(name, path: path(of: try checkedName(name)), headers: headers, byteCount: Int(source.byteCount), part: read)
    }

    /// A multipart upload of `byteCount` bytes, each part of ``multipartThreshold`` read by
    /// `part` (its start and length) when it is sent.
    private func putInParts(_ name: String, path: String, headers: [(name: String, value: String)], byteCount: Int,
                            part read: (Int, Int) throws(PipelineError) -> [UInt8]) throws(PipelineError) {
        let created = try send("POST", path, query: [("uploads", "")], headers: headers, expecting: [200], about: name)
        guard let uploadID = Self.element("UploadId", in: created.body) else {
            throw PipelineError(.network, underlying: ObjectStoreError(.refused, "\(description): POST \(name)?uploads: no UploadId in the answer"))
        }
        do throws(PipelineError) {
            var completion = "<CompleteMultipartUpload>"
            for (index, start) in stride(from: 0, to: byteCount, by: Self.multipartThreshold).enumerated() {
                let part = try read(start, min(byteCount, start + Self.multipartThreshold) - start)
                let answer = try send("PUT", path, query: [("partNumber", "\(index + 1)"), ("uploadId", uploadID)], body: part,
                                      expecting: [200], about: name)
                guard let tag = answer.entityTag else {
                    throw PipelineError(.network, underlying: ObjectStoreError(.refused, "\(description): PUT \(name) part \(index + 1): no ETag in the answer"))
                }
                completion += "<Part><PartNumber>\(index + 1)</PartNumber><ETag>\(XMLElementTree.escapedText(tag))</ETag></Part>"
            }
            completion += "</CompleteMultipartUpload>"
            let completed = try send("POST", path, query: [("uploadId", uploadID)], headers: [("Content-Type", "application/xml")],
                                     body: Array(completion.utf8), expecting: [200], about: name)
            // S3 may answer 200 and then fail the completion in the body.
            if Self.element("Code", in: completed.body) != nil {
                throw PipelineError(.network, underlying: Self.refusal(completed, method: "POST", object: name, store: description))
            }
        } catch {
            _ = try? send("DELETE", path, query: [("uploadId", uploadID)], expecting: [200, 204, 404], about: name)
            throw error
        }
    }

    /// A `GET` of the object at `path` with `headers` (a range), 200, 206 or 416 expected.
    func rangedGet(_ path: String, headers: [(name: String, value: String)], about name: String) throws(PipelineError) -> HTTPObjectExchange.Answer {
        try send("GET", path, headers: headers, expecting: [200, 206, 416], about: name)
    }

    /// Removes the object `name` (`DELETE`; one that does not exist answers 204 too).
    public func remove(_ name: String) throws(PipelineError) {
        _ = try send("DELETE", path(of: try checkedName(name)), expecting: [200, 204, 404], about: name)
    }

    typealias Answer = HTTPObjectExchange.Answer

    /// Sends one signed request by the store's rules (``HTTPObjectExchange/send(_:expecting:refusal:refused:once:)``).
    func send(_ method: String, _ path: String, query: [(name: String, value: String)] = [], headers: [(name: String, value: String)] = [],
              body: [UInt8] = [], expecting: Set<Int>, about name: String) throws(PipelineError) -> Answer {
        let payloadHash = SignatureV4.payloadHash(body)
        return try HTTPObjectExchange.send(method, expecting: expecting, refusal: { answer in
            Self.refusal(answer, method: method, object: name, store: "\(description) at \(endpoint)")
        }, refused: { error, answer in
            switch error.code {
            case "ExpiredToken":
                guard let fresh = try? credentialSource?() else { return }
                signing.signer.withLock { $0.credentials = fresh }
            case "RequestTimeTooSkewed":
                guard let server = Self.serverClock(of: answer) else { return }
                signing.clockOffset.withLock { $0 = server - Int64(time(nil)) }
            default: break
            }
        }, once: { () throws(ObjectStoreError) in
            try sendOnce(method, path, query: query, headers: headers, body: body, payloadHash: payloadHash, about: name)
        })
    }

    /// The error a refusal is: the method, the object, the status, and S3's `Code` and `Message`.
    static func refusal(_ answer: Answer, method: String, object: String, store: String) -> ObjectStoreError {
        let code = element("Code", in: answer.body)
        let said = [code, element("Message", in: answer.body)].compactMap { $0 }.joined(separator: ": ")
        return ObjectStoreError(.refused, "\(store): \(method) \(object): HTTP \(answer.status)\(said.isEmpty ? "" : " (\(said))")",
                       status: answer.status, code: code)
    }

    /// The server's clock, in seconds since 1970, when it gave `answer`: S3's `ServerTime`
    /// (`2026-12-01T11:30:00Z`, in the body of a `RequestTimeTooSkewed` refusal), or else the
    /// answer's `Date` header; `nil` when it says neither.
    static func serverClock(of answer: Answer) -> Int64? {
        if let text = element("ServerTime", in: answer.body), let seconds = SignatureV4.seconds(iso8601: text) { return seconds }
        return answer.date.flatMap(HTTPDate.seconds(imfFixdate:))
    }

    /// The text of the first element `name` of an S3 answer's XML document (an error's `Code`
    /// and `Message`, an `UploadId`); `nil` when the body is not XML or has none.
    static func element(_ name: String, in body: [UInt8]) -> String? {
        guard !body.isEmpty, let document = try? XMLElementTree(bytes: body) else { return nil }
        return document.firstElement(named: name)?.text
    }

    /// One signed request (`payloadHash` the SHA-256 of `body`), its answer read whole.
    func sendOnce(_ method: String, _ path: String, query: [(name: String, value: String)], headers: [(name: String, value: String)],
                  body: [UInt8], payloadHash: String, about name: String) throws(ObjectStoreError) -> Answer {
        let request = SignatureV4.Request(method: method, path: path, query: query, headers: [("Host", authority)] + headers,
                                          payloadHash: payloadHash)
        let now = Int64(time(nil)) + signing.clockOffset.withLock { $0 }
        let signed = signing.signer.withLock { $0 }.signed(request, timestamp: SignatureV4.timestamp(secondsSince1970: now))
        let queryText = query.isEmpty ? "" : "?" + SignatureV4.canonicalQuery(query)
        let url = endpoint + SignatureV4.uriEncoded(path, keepingSlash: true) + queryText
        return try HTTPObjectExchange.exchange(method, url: url, headers: signed, host: authority, body: body, timeout: timeout,
                                               prefix: "\(description) at \(endpoint)", name: name)
    }
}

/// The signer an ``S3Store`` and its copies share, its keys replaced when they expire, and the
/// seconds the server's clock is ahead of this machine's (set when S3 answers
/// `RequestTimeTooSkewed`: a request is signed with its time, which S3 takes within 15 minutes
/// of its own).
final class SigningKeys: Sendable {
    let signer: Mutex<SignatureV4>
    let clockOffset = Mutex<Int64>(0)

    init(_ signer: SignatureV4) {
        self.signer = Mutex(signer)
    }
}
