internal import MediaCore

/// The HTTP origin of an HLS (and DASH) rendition, free of any HTTP framework: it turns a
/// request (method, path, query, `Range`) into a response (status, headers, body), and an app
/// answers with it from whatever server it runs (Hummingbird: `HLSServer.LiveHLSServer`; Vapor,
/// SwiftNIO, …: a route that forwards to ``respond(to:)``).
///
/// - A live playlist comes from a ``LiveHLSPublication``, with blocking reload (RFC 8216bis
///   6.2.5.2): held until it holds the `_HLS_msn` and `_HLS_part` asked for, 400 for a request
///   too far ahead, 503 after three target durations.
/// - A GET of the preload-hinted part is held until the part exists (RFC 8216bis 6.2.6).
/// - Files of the directory (playlists, MPDs, init segments, segments, parts, in
///   subdirectories too) are served with their content types, a single `Range` (RFC 9110 14),
///   and `HEAD`. Nothing outside the directory: no path component may be empty or start with a
///   dot.
/// - `/` is a player page (`playerPage`): an `<audio>` element fed by a small Media Source
///   Extensions loader, gapless, live with blocking reload.
/// - For caches and CDNs: a `Cache-Control` per kind of response (`cacheControl(_:)`),
///   `ETag` and `Last-Modified`, and 304 for `If-None-Match` and `If-Modified-Since`.
/// - For players on other origins: CORS headers on every response (Fetch standard, "CORS
///   protocol") and `OPTIONS` preflights answered.
public struct HLSOrigin: Sendable {
    /// What is published live; `nil` to serve the directory's files only.
    public let publication: LiveHLSPublication?
    /// Where the files are.
    public let directory: FilePath
    /// The name of the live playlist (the path a player asks for).
    public let playlistName: String
    /// The `Access-Control-Allow-Origin` of every response (`*` by default: any page may
    /// fetch the media and use it in WebAudio); `nil` sends no CORS headers.
    public var allowedOrigin: String?

    /// An origin of `publication`, whose files are in `directory`; `allowedOrigin` is the CORS
    /// origin allowed.
    public init(publication: LiveHLSPublication?, directory: FilePath, playlistName: String = "index.m3u8", allowedOrigin: String? = "*") {
        self.publication = publication
        self.directory = directory
        self.playlistName = playlistName
        self.allowedOrigin = allowedOrigin
    }

    /// An HTTP request, as much of it as an origin reads.
    public struct Request: Sendable {
        /// `GET` or `HEAD`, or `OPTIONS` (a CORS preflight); anything else is answered 405.
        public var method: String
        /// The path's components as the request names them (`["128k", "segment-00001.m4s"]`);
        /// an empty one, or one that starts with a dot, is answered 404.
        public var path: [String]
        /// The query's parameters (`_HLS_msn`, `_HLS_part`).
        public var query: [String: String]
        /// The `Range` header's value, if any.
        public var range: String?
        /// The `If-None-Match` header's value, if any.
        public var ifNoneMatch: String?
        /// The `If-Modified-Since` header's value, if any.
        public var ifModifiedSince: String?
        /// The `If-Range` header's value, if any: a `Range` is honoured only when it names the
        /// file as it is (RFC 9110 13.1.5).
        public var ifRange: String?

        /// A request for `path` (its components).
        public init(method: String = "GET", path: [String], query: [String: String] = [:], range: String? = nil,
                    ifNoneMatch: String? = nil, ifModifiedSince: String? = nil, ifRange: String? = nil) {
            self.method = method
            self.path = path
            self.query = query
            self.range = range
            self.ifNoneMatch = ifNoneMatch
            self.ifModifiedSince = ifModifiedSince
            self.ifRange = ifRange
        }
    }

    /// An HTTP response.
    public struct Response: Sendable {
        /// The status code.
        public var status: Int
        /// The header fields (`Content-Type`, `Content-Length`, `Content-Range`, `Cache-Control`,
        /// `Accept-Ranges`, `ETag`, `Last-Modified`, the CORS fields), in order.
        public var headers: [(name: String, value: String)]
        /// The body.
        public var body: Body

        /// What a response carries.
        public enum Body: Sendable {
            /// Nothing (an error, or a `HEAD`).
            case empty
            /// A playlist's text.
            case text(String)
            /// `range` of an open file: read it with ``HLSOrigin/FileRange/chunks(of:)``.
            case file(FileRange)
        }

        /// The value of the header field `name` (case-insensitive).
        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        static func status(_ status: Int) -> Response { Response(status: status, headers: [], body: .empty) }

        /// A status with no body and its `Cache-Control`.
        static func status(_ status: Int, cacheControl: String) -> Response {
            Response(status: status, headers: [("Cache-Control", cacheControl)], body: .empty)
        }
    }

    /// The header fields that CORS lets a page's script read (Fetch standard, "CORS-safelisted
    /// response-header name" are read anyway): what players look at.
    static let exposedHeaders = "Content-Length, Content-Range, Accept-Ranges, ETag, Last-Modified, Age, Date"

    /// `response` with the CORS headers of ``allowedOrigin``.
    func withCORS(_ response: Response) -> Response {
        guard let allowedOrigin else { return response }
        var response = response
        response.headers.append(("Access-Control-Allow-Origin", allowedOrigin))
        if allowedOrigin != "*" { response.headers.append(("Vary", "Origin")) }
        response.headers.append(("Access-Control-Expose-Headers", Self.exposedHeaders))
        return response
    }

    /// The answer to a CORS preflight (`OPTIONS`): the methods and request headers a player uses.
    func preflight() -> Response {
        var response = Response(status: 204, headers: [("Allow", "GET, HEAD, OPTIONS")], body: .empty)
        if allowedOrigin != nil {
            response.headers += [("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS"),
                                 ("Access-Control-Allow-Headers", "Range, If-None-Match, If-Modified-Since"),
                                 ("Access-Control-Max-Age", "86400")]
        }
        return withCORS(response)
    }

    /// A byte range of a file opened when the request was answered (so a segment removed from a
    /// sliding window meanwhile is still served whole).
    public struct FileRange: Sendable {
        let source: FileByteSource
        /// The bytes to send.
        public let range: Range<Int64>

        /// The bytes in pieces of at most `size` bytes, in order; `nil` after the last. A read
        /// error ends them early (the connection's length then tells the client).
        public func chunks(of size: Int = 256 * 1024) -> AnyIterator<[UInt8]> {
            var offset = range.lowerBound
            return AnyIterator {
                guard offset < range.upperBound,
                      let bytes = try? source.read(at: offset, count: Int(min(Int64(size), range.upperBound - offset))), !bytes.isEmpty else { return nil }
                offset += Int64(bytes.count)
                return bytes
            }
        }
    }

    /// The kinds of file a rendition has: the only ones served.
    static let servedExtensions: Set<String> = ["m4s", "mp4", "m3u8", "mpd", "vtt"]

    /// The content type of a served kind of file, from the format table
    /// (``/MediaFormats/MediaFileFormat/mimeType(ofFileExtension:)``); `nil` for any other.
    static func contentType(ofFileExtension fileExtension: String) -> String? {
        servedExtensions.contains(fileExtension) ? MediaFileFormat.mimeType(ofFileExtension: fileExtension) : nil
    }

    /// The response to `request`: it may wait, for a blocking playlist reload or the hinted part,
    /// at most three target durations.
    public func respond(to request: Request) async -> Response {
        if request.method == "OPTIONS" { return preflight() }
        guard request.method == "GET" || request.method == "HEAD" else {
            var refused = Response.status(405)
            refused.headers.append(("Allow", "GET, HEAD, OPTIONS"))
            return withCORS(refused)
        }
        var response: Response
        if request.path.isEmpty || request.path == ["index.html"] {
            response = pageResponse()
        } else if let publication, request.path == [playlistName] {
            response = await playlistResponse(publication, query: request.query)
        } else {
            // The preload-hinted part is held until it exists (RFC 8216bis 6.2.6).
            if let publication, request.path.count == 1, let (segment, part) = Self.part(named: request.path[0]),
               !FileSystemCalls.exists(directory.appending(request.path[0])) {
                _ = await publication.waitForPart(segment: segment, part: part, timeout: .seconds(3 * publication.targetDuration))
            }
            // RFC 9110 14.2: a Range is for GET only.
            response = fileResponse(request.path, for: request)
        }
        response = Self.conditional(response, for: request)
        if request.method == "HEAD" { response.body = .empty }
        return withCORS(response)
    }

    /// The playlist, held until it holds the segment and part asked for.
    func playlistResponse(_ publication: LiveHLSPublication, query: [String: String]) async -> Response {
        // RFC 8216bis 6.2.5.2: decimal-integers.
        let segment = query["_HLS_msn"].flatMap { UInt32($0) }.map(Int.init)
        let part = query["_HLS_part"].flatMap { UInt32($0) }.map(Int.init)
        if (query["_HLS_msn"] != nil && segment == nil) || (query["_HLS_part"] != nil && part == nil) {
            return .status(400, cacheControl: cacheControl(.transientError))
        }
        let timeout = Duration.seconds(3 * publication.targetDuration)
        switch await publication.playlist(segment: segment, part: part, timeout: timeout) {
        case .ready(let text):
            let lifetime = cacheControl(segment == nil ? .livePlaylist : .blockingPlaylist)
            return Response(status: 200, headers: [("Content-Type", MediaFileFormat.hlsPlaylist.mimeType), ("Cache-Control", lifetime),
                                                   ("ETag", Self.entityTag(text: text)), ("Content-Length", String(text.utf8.count))],
                            body: .text(text))
        case .tooFarAhead: return .status(400, cacheControl: cacheControl(.transientError))
        case .timedOut: return .status(503, cacheControl: cacheControl(.overload))
        case .notStarted: return .status(404, cacheControl: cacheControl(.transientError))
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

    /// A file of the rendition by its path components: only the kinds a rendition has, no
    /// component that is empty or starts with a dot, and no symbolic link that leads outside the
    /// directory (so nothing outside it). The
    /// request's validators come before its range (RFC 9110 13.2.2): a matching `If-None-Match`
    /// is 304 whatever the range; `If-Range` that does not name the file as it is sends it whole.
    func fileResponse(_ components: [String], for request: Request) -> Response {
        guard let name = components.last, components.allSatisfy({ !$0.isEmpty && !$0.hasPrefix(".") && !$0.contains("/") && !$0.contains("\0") }),
              let kind = name.split(separator: ".").last.map(String.init), let type = Self.contentType(ofFileExtension: kind),
              let resolved = FileSystemCalls.resolvedPath(components.reduce(directory) { $0.appending($1) }),
              let root = FileSystemCalls.resolvedPath(directory), resolved.starts(with: root), resolved != root,
              // A regular file only (a FIFO would hold the connection), and not claimed as an
              // input: a publisher in this process replaces playlists while they are served.
              let source = try? FileByteSource(regularFileAt: resolved, claimingInput: false),
              source.isRegularFile, let size = source.size() else {
            return .status(404, cacheControl: cacheControl(.transientError))
        }
        let modified = source.modificationTime
        let tag = Self.entityTag(size: size, modified: modified)
        let lastModified = modified.map { HTTPDate.imfFixdate($0.seconds) }
        var headers: [(name: String, value: String)] = [("Content-Type", type), ("Accept-Ranges", "bytes"),
                                                        ("Cache-Control", cacheControl(resource(kind: kind, name: name, source: source, size: size))),
                                                        ("ETag", tag)]
        if let lastModified { headers.append(("Last-Modified", lastModified)) }
        let whole = Response(status: 200, headers: headers + [("Content-Length", String(size))],
                             body: .file(FileRange(source: source, range: 0..<size)))
        let validated = Self.conditional(whole, for: request)
        // RFC 9110 14.2: a Range is for GET only; If-Range must match exactly (a strong tag or the date).
        guard validated.status == 200, request.method == "GET", let range = request.range,
              request.ifRange.map({ $0.trimmingWhitespace == tag || $0.trimmingWhitespace == lastModified }) ?? true else {
            return validated
        }
        switch Self.byteRange(range, size: size) {
        case .whole:
            return whole
        case .part(let part):
            headers += [("Content-Range", "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(size)"), ("Content-Length", String(part.count))]
            return Response(status: 206, headers: headers, body: .file(FileRange(source: source, range: part)))
        case .unsatisfiable:
            return Response(status: 416, headers: [("Content-Range", "bytes */\(size)"), ("Cache-Control", cacheControl(.transientError))],
                            body: .empty)
        }
    }

    /// What a served file is, for its cache lifetime: a manifest is complete when it says so
    /// (`#EXT-X-ENDLIST`, `type="static"`, looked for in its last 64 KiB or whole head); a live
    /// rendition's `init.mp4` is rewritten at the end.
    func resource(kind: String, name: String, source: FileByteSource, size: Int64) -> Resource {
        switch kind {
        case "m3u8":
            let tail = (try? source.read(at: max(0, size - 65536), count: 65536)) ?? []
            return Self.manifestResource(kind: kind, text: String(decoding: tail, as: UTF8.self), live: publication != nil)
        case "mpd":
            let head = (try? source.read(at: 0, count: 65536)) ?? []
            return Self.manifestResource(kind: kind, text: String(decoding: head, as: UTF8.self), live: publication != nil)
        default:
            return publication != nil && kind == "mp4" ? .liveInitSegment : .media
        }
    }

    /// What a manifest of `kind` (`m3u8`, `mpd`) whose `text` (a playlist's end, an MPD's head)
    /// is, for its cache lifetime: complete when it says so (`#EXT-X-ENDLIST`, `type="static"`),
    /// or when it is the master playlist of a package (it lists renditions, never segments, and
    /// changes no more than they do); not when `live` (a master served beside a rendition being
    /// recorded).
    static func manifestResource(kind: String, text: String, live: Bool) -> Resource {
        if kind == "mpd" { return .manifestFile(complete: text.contains("type=\"static\"") || text.contains("type='static'")) }
        let master = text.contains("#EXT-X-STREAM-INF") && !text.contains("#EXTINF")
        return .manifestFile(complete: text.contains("#EXT-X-ENDLIST") || (master && !live))
    }

    /// What a `Range` header asks of a file of `size` bytes.
    enum ByteRange: Equatable {
        /// The whole file: no range this origin answers (several ranges, another unit, a
        /// malformed value), which RFC 9110 14.2 lets a server ignore.
        case whole
        /// One range of bytes.
        case part(Range<Int64>)
        /// A range starting past the end: 416.
        case unsatisfiable
    }

    /// A single `bytes=first-last`, `bytes=first-` or `bytes=-suffix` range (RFC 9110 14.1.2).
    static func byteRange(_ value: String, size: Int64) -> ByteRange {
        let trimmed = value.trimmingWhitespace
        guard trimmed.lowercased().hasPrefix("bytes=") else { return .whole }
        let spec = trimmed.dropFirst("bytes=".count).trimmingWhitespace
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .whole }
        let (first, last) = (spec[..<dash].trimmingWhitespace, spec[spec.index(after: dash)...].trimmingWhitespace)
        let digits = { (text: String) in !text.isEmpty && text.utf8.count <= 18 && text.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
        if first.isEmpty {
            guard digits(last), let suffix = Int64(last) else { return .whole }
            guard suffix > 0, size > 0 else { return .unsatisfiable }
            return .part(max(0, size - suffix)..<size)
        }
        guard digits(first), let start = Int64(first) else { return .whole }
        var end = size - 1
        if !last.isEmpty {
            guard digits(last), let stated = Int64(last), stated >= start else { return .whole }
            end = min(stated, size - 1)
        }
        guard start < size else { return .unsatisfiable }
        return .part(start..<(end + 1))
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    var trimmingWhitespace: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
