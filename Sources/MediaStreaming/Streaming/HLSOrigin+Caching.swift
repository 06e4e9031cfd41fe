public import MediaCore
internal import MediaFormats

/// How long caches and CDNs keep what the origin serves (RFC 9111 5.2, `Cache-Control`), and
/// the validators that let them ask again cheaply (RFC 9110 8.8: `ETag`, `Last-Modified`;
/// 13.1: `If-None-Match`, `If-Modified-Since` answered 304).
extension HLSOrigin {
    /// What a response is, for its cache lifetime.
    enum Resource {
        /// The live playlist asked plainly: it changes with every part.
        case livePlaylist
        /// The live playlist asked for a segment and part not yet published (`_HLS_msn`): its
        /// URL names one state of the playlist, which never changes.
        case blockingPlaylist
        /// A playlist or MPD file: `complete` when it lists its end (`EXT-X-ENDLIST`, a static MPD).
        case manifestFile(complete: Bool)
        /// An init segment rewritten at the end of a live stream (its valid length).
        case liveInitSegment
        /// A segment, part or a packaged init segment: written once, whole, under its name.
        case media
        /// The player page.
        case page
        /// An error that may change soon (a 404 for a part not yet written, a 400 too far ahead).
        case transientError
        /// An overload (503): never stored.
        case overload
    }

    /// The `Cache-Control` of `resource`:
    /// - segments, parts and a package's init: a year, `immutable` (RFC 8246);
    /// - a complete playlist or a static MPD: a day; a live or unfinished one: one second;
    /// - a blocking-reload response: six target durations, as LL-HLS lets a CDN keep the
    ///   answer to one `_HLS_msn`/`_HLS_part` query (its URL names one playlist state);
    /// - a live init segment: revalidated every time (it is rewritten when the stream ends);
    /// - 404 and 400: one second (a part that does not exist yet will); 503: not stored.
    func cacheControl(_ resource: Resource) -> String {
        Self.cacheControl(resource, targetDuration: publication?.targetDuration)
    }

    /// The `Cache-Control` of `resource` (``cacheControl(_:)``) for a stream of
    /// `targetDuration` seconds.
    static func cacheControl(_ resource: Resource, targetDuration: Int?) -> String {
        switch resource {
        case .media: "public, max-age=31536000, immutable"
        case .manifestFile(complete: true): "public, max-age=86400"
        case .manifestFile(complete: false), .livePlaylist: "public, max-age=1"
        case .blockingPlaylist: "public, max-age=\(6 * max(1, targetDuration ?? 1))"
        case .liveInitSegment, .page: "no-cache"
        case .transientError: "max-age=1"
        case .overload: "no-store"
        }
    }

    /// What a store that serves over HTTP (an S3 bucket behind a CDN) keeps the file `name` of a
    /// package with, `contents` its bytes: the `Content-Type` and `Cache-Control` this origin
    /// serves it with (a playlist or MPD complete or not, as ``manifestResource(kind:text:live:)``
    /// says; a player page revalidated; a live init segment, written again at the end,
    /// revalidated; anything else media, kept a year).
    public static func objectAttributes(ofName name: String, contents: [UInt8], live: Bool = false) -> ObjectAttributes {
        let file = name.split(separator: "/").last ?? ""
        let fileExtension = file.contains(".") ? String(file.split(separator: ".").last ?? "").lowercased() : ""
        switch fileExtension {
        case "m3u8", "mpd":
            let resource = manifestResource(kind: fileExtension, text: String(decoding: contents, as: UTF8.self), live: live)
            return ObjectAttributes(contentType: contentType(ofFileExtension: fileExtension), cacheControl: cacheControl(resource, targetDuration: nil))
        case "html":
            return ObjectAttributes(contentType: "text/html; charset=utf-8", cacheControl: cacheControl(.page, targetDuration: nil))
        default:
            // A live init segment is written again at the end (its gapless numbers).
            let resource: Resource = live && file == Substring(HLSSegmentStore.initSegmentName) ? .liveInitSegment : .media
            return ObjectAttributes(contentType: MediaFileFormat.mimeType(ofFileExtension: fileExtension),
                                    cacheControl: cacheControl(resource, targetDuration: nil))
        }
    }

    /// A strong entity tag for a file: its size and modification time (a file is replaced by
    /// a rename, which changes both or the time).
    static func entityTag(size: Int64, modified: (seconds: Int64, nanoseconds: Int64)?) -> String {
        let time = modified.map { "\(String($0.seconds, radix: 16))\(String($0.nanoseconds, radix: 16))" } ?? "0"
        return "\"\(String(size, radix: 16))-\(time)\""
    }

    /// A strong entity tag for text: its FNV-1a 64-bit hash.
    static func entityTag(text: String) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return "\"\(String(hash, radix: 16))\""
    }

    /// Whether a request's `If-None-Match` matches `tag` (RFC 9110 13.1.2: weak comparison,
    /// a list, or `*`).
    static func matches(ifNoneMatch: String, tag: String) -> Bool {
        let strip = { (value: Substring) -> Substring in
            let trimmed = value.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }
            let forward = Substring(trimmed.reversed())
            return forward.hasPrefix("W/") ? forward.dropFirst(2) : forward
        }
        let wanted = strip(Substring(tag))
        return ifNoneMatch.split(separator: ",").contains { strip($0) == wanted || strip($0) == "*" }
    }

    /// `response` turned into 304 Not Modified when the request's validators match it
    /// (`If-None-Match` first; else `If-Modified-Since` equal to its `Last-Modified`, the
    /// value a cache sends back), keeping the headers a 304 must repeat (RFC 9110 15.4.5).
    static func conditional(_ response: Response, for request: Request) -> Response {
        guard response.status == 200, let tag = response.header("ETag") else { return response }
        let notModified: Bool
        if let ifNoneMatch = request.ifNoneMatch {
            notModified = matches(ifNoneMatch: ifNoneMatch, tag: tag)
        } else if let since = request.ifModifiedSince, let modified = response.header("Last-Modified") {
            notModified = since.trimmingWhitespace == modified
        } else {
            notModified = false
        }
        guard notModified else { return response }
        let kept: Set<String> = ["cache-control", "etag", "last-modified", "content-location", "date", "expires", "vary"]
        return Response(status: 304, headers: response.headers.filter { kept.contains($0.name.lowercased()) }, body: .empty)
    }
}
