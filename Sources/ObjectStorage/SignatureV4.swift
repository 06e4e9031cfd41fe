internal import Crypto
internal import MediaCore

/// AWS Signature Version 4 for Amazon S3 and the stores that speak its API: what signs each
/// request an ``S3Store`` sends (AWS's "Signature Version 4 signing process", as its S3 API
/// reference gives it for the `Authorization` header).
///
/// The canonical request of S3 encodes each path segment once (RFC 3986 unreserved characters
/// kept, every other byte `%XX` in upper case; `/` kept between segments), sorts the query's
/// encoded pairs, lists the signed headers lower-cased and sorted with their values trimmed, and
/// ends with the hex SHA-256 of the payload actually sent (`x-amz-content-sha256`).
public struct SignatureV4: Sendable {
    /// The keys a request is signed with.
    public var credentials: S3Credentials
    /// The region (`us-east-1`).
    public var region: String
    /// The service (`s3`).
    public var service: String

    /// A signer for `service` in `region`.
    public init(credentials: S3Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// One request to sign: its method, its path and query as sent (before encoding), and its
    /// header fields.
    public struct Request: Sendable {
        /// `GET`, `PUT`, `HEAD`, `DELETE`, `POST`.
        public var method: String
        /// The path, each segment not yet encoded (`/bucket/a b+c.m4s`).
        public var path: String
        /// The query's pairs, not yet encoded (`("uploads", "")`).
        public var query: [(name: String, value: String)]
        /// The header fields, `Host` among them.
        public var headers: [(name: String, value: String)]
        /// The hex SHA-256 of the payload (``SignatureV4/payloadHash(_:)``).
        public var payloadHash: String

        /// A request.
        public init(method: String, path: String, query: [(name: String, value: String)] = [],
                    headers: [(name: String, value: String)], payloadHash: String) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
            self.payloadHash = payloadHash
        }
    }

    /// The hex SHA-256 of `payload`, lower case.
    public static func payloadHash(_ payload: some Sequence<UInt8>) -> String {
        Array(SHA256.hash(data: Array(payload))).hexDigits()
    }

    /// `text` encoded as a canonical request encodes it: every byte but RFC 3986's unreserved
    /// characters `%XX` (``/MediaCore/PercentEncoding/encoded(_:keepingSlashes:)``), with
    /// `keepingSlash` the `/` kept.
    public static func uriEncoded(_ text: String, keepingSlash: Bool = false) -> String {
        PercentEncoding.encoded(text, keepingSlashes: keepingSlash)
    }

    /// The canonical query string: each name and value encoded, the pairs sorted by name, then
    /// value, joined with `&` (`uploads=` for a name without a value).
    public static func canonicalQuery(_ query: [(name: String, value: String)]) -> String {
        query.map { (uriEncoded($0.name), uriEncoded($0.value)) }
            .sorted { $0.0 == $1.0 ? $0.1 < $1.1 : $0.0 < $1.0 }
            .map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    /// The signed headers' names, lower case, sorted and `;`-joined, and their canonical lines.
    static func canonicalHeaders(_ headers: [(name: String, value: String)]) -> (names: String, lines: String) {
        var merged: [String: [String]] = [:]
        for (name, value) in headers {
            let trimmed = value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            merged[name.lowercased(), default: []].append(trimmed)
        }
        let names = merged.keys.sorted()
        return (names.joined(separator: ";"), names.map { "\($0):\(merged[$0]!.joined(separator: ","))\n" }.joined())
    }

    /// The canonical request of `request`.
    public func canonicalRequest(_ request: Request) -> String {
        let headers = Self.canonicalHeaders(request.headers)
        return [request.method, Self.uriEncoded(request.path, keepingSlash: true), Self.canonicalQuery(request.query),
                headers.lines, headers.names, request.payloadHash].joined(separator: "\n")
    }

    /// The scope of a signature made on `day` (`20130524`): `day/region/service/aws4_request`.
    public func scope(day: String) -> String { "\(day)/\(region)/\(service)/aws4_request" }

    /// The string to sign for `request` at `timestamp` (ISO 8601 basic, `20130524T000000Z`).
    public func stringToSign(_ request: Request, timestamp: String) -> String {
        ["AWS4-HMAC-SHA256", timestamp, scope(day: String(timestamp.prefix(8))),
         Array(SHA256.hash(data: Array(canonicalRequest(request).utf8))).hexDigits()].joined(separator: "\n")
    }

    /// The hex signature of `request` at `timestamp`.
    public func signature(_ request: Request, timestamp: String) -> String {
        func mac(_ key: SymmetricKey, _ text: String) -> SymmetricKey {
            SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(text.utf8), using: key)))
        }
        var key = SymmetricKey(data: Array(("AWS4" + credentials.secretAccessKey).utf8))
        for part in [String(timestamp.prefix(8)), region, service, "aws4_request"] { key = mac(key, part) }
        return Array(HMAC<SHA256>.authenticationCode(for: Array(stringToSign(request, timestamp: timestamp).utf8), using: key)).hexDigits()
    }

    /// `request`'s header fields with what signs it added: `x-amz-date`, `x-amz-content-sha256`,
    /// with a session token `x-amz-security-token` (all three signed), and `Authorization`.
    public func signed(_ request: Request, timestamp: String) -> [(name: String, value: String)] {
        var signing = request
        signing.headers += [("x-amz-date", timestamp), ("x-amz-content-sha256", request.payloadHash)]
        if let token = credentials.sessionToken { signing.headers.append(("x-amz-security-token", token)) }
        let names = Self.canonicalHeaders(signing.headers).names
        let authorization = "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope(day: String(timestamp.prefix(8)))), "
            + "SignedHeaders=\(names), Signature=\(signature(signing, timestamp: timestamp))"
        return signing.headers + [("Authorization", authorization)]
    }

    /// The seconds since 1970 of a UTC time in ISO 8601 extended form, as S3 writes its
    /// `ServerTime` (`2026-12-01T11:30:00Z`, `2026-12-01T11:30:00.123Z`: the fraction dropped);
    /// `nil` for any other text.
    public static func seconds(iso8601 text: String) -> Int64? {
        let bytes = Array(text.utf8)
        func number(_ start: Int, _ count: Int) -> Int64? {
            guard start + count <= bytes.count else { return nil }
            return bytes[start..<(start + count)].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) ? Int64(String(decoding: bytes[start..<(start + count)], as: UTF8.self)) : nil
        }
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z"), bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              bytes.count == 20 || (bytes[19] == UInt8(ascii: ".") && number(20, bytes.count - 21) != nil),
              let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
              let minute = number(14, 2), let second = number(17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second <= 60 else { return nil }
        return CivilDate(year: year, month: month, day: day).daysSince1970 * 86400 + hour * 3600 + minute * 60 + second
    }

    /// The timestamp of `secondsSince1970` in ISO 8601 basic form, UTC (`20130524T000000Z`).
    public static func timestamp(secondsSince1970 seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let date = CivilDate(daysSince1970: days)
        let time = seconds - days * 86400
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(date.year)\(two(date.month))\(two(date.day))T\(two(time / 3600))\(two(time / 60 % 60))\(two(time % 60))Z"
    }
}
