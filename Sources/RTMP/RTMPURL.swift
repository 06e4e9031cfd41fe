internal import MediaCore

/// A publishing URL, `rtmp://host[:port]/app[/instance]/key` or `rtmps://…` (RTMP over TLS),
/// taken apart as FFmpeg's RTMP protocol (`libavformat/rtmpproto.c`) does.
///
/// - The default port is 1935 for `rtmp` and 443 for `rtmps`.
/// - The application (`connect`'s `app`, RTMP 1.0 7.2.1.1) is the path's first component, or
///   its first two when a third follows (`/app/instance/key`) and no `:` comes before that third
///   slash (so `/app/mp4:dir/file` keeps `app` alone). `/ondemand/…` has the application
///   `ondemand`. Everything after the application is the stream key (`publish`'s name, 7.2.2.6),
///   query string included: CDNs put tokens there.
/// - ``tcURL`` is `scheme://host[:port]/app`, with the port only when the URL gave one.
/// - ``masked`` shows the stream key as `****`: use it in every message.
///
/// Unlike FFmpeg (which plays as well as publishes), the key is never rewritten (`mp4:`
/// prefixes, a `.flv` suffix dropped), and a URL without a key or an application is refused.
public struct RTMPURL: Sendable, Hashable, CustomStringConvertible {
    /// Why a URL cannot be used for publishing.
    public enum Problem: String, Sendable, Hashable, CustomStringConvertible {
        /// The scheme is not `rtmp` or `rtmps`.
        case unsupportedScheme
        /// There is no host.
        case noHost
        /// The port is not a number in 1…65535.
        case invalidPort
        /// Credentials (`user:password@`) in the authority, which RTMP does not carry.
        case credentials
        /// The path has no application.
        case noApplication
        /// The path has no stream key after the application.
        case noStreamKey

        /// What is wrong, in words.
        public var description: String {
            switch self {
            case .unsupportedScheme: "not an rtmp:// or rtmps:// URL"
            case .noHost: "no host"
            case .invalidPort: "a port must be 1…65535"
            case .credentials: "user and password in an RTMP URL are not supported (put them in the stream key)"
            case .noApplication: "no application name (rtmp://host/app/key)"
            case .noStreamKey: "no stream key after the application name (rtmp://host/app/key)"
            }
        }
    }

    /// The default port of `rtmp://` (RTMP 1.0 4).
    public static let defaultPort = 1935
    /// The default port of `rtmps://`.
    public static let defaultSecurePort = 443

    /// `rtmp` or `rtmps`, lowercased.
    public var scheme: String
    /// The host name or address (an IPv6 address without brackets).
    public var host: String
    /// The port the URL gives, if any.
    public var explicitPort: Int?
    /// The application: `connect`'s `app`.
    public var application: String
    /// The stream key: `releaseStream`'s, `FCPublish`'s and `publish`'s name, query included.
    public var streamKey: String

    /// Parses `text`.
    ///
    /// - Throws: ``RTMPError/invalidURL(masked:problem:)``.
    public init(_ text: String) throws(RTMPError) {
        func fail(_ problem: Problem, _ shown: String) -> RTMPError { .invalidURL(masked: shown, problem: problem) }
        let reference: URLReference
        do { reference = try URLReference(text) } catch {
            let scheme = URLReference.scheme(of: text)
            switch error {
            case .notAURL: throw fail(.unsupportedScheme, Self.firstWord(text))
            case .unclosedBracket: throw fail(.noHost, "\(scheme)://…")
            case .invalidPort: throw fail(.invalidPort, "\(scheme)://…")
            }
        }
        scheme = reference.scheme
        guard scheme == "rtmp" || scheme == "rtmps" else { throw fail(.unsupportedScheme, "\(scheme)://…") }
        guard reference.userInfo == nil else { throw fail(.credentials, "\(scheme)://****@…") }
        let shownServer = "\(scheme)://\(reference.authority)"
        host = String(reference.host)
        explicitPort = reference.port
        guard !host.isEmpty else { throw fail(.noHost, shownServer) }
        // The key is everything after the application, query included: CDNs put tokens there.
        let path = reference.remainder

        // rtmpproto.c, rtmp_open: "extract 'app' part from path".
        guard let (application, key) = Self.split(path) else {
            throw fail(.noStreamKey, "\(shownServer)\(path.isEmpty ? "" : "/…")")
        }
        guard !application.isEmpty else { throw fail(.noApplication, "\(shownServer)/****") }
        guard !key.isEmpty else { throw fail(.noStreamKey, "\(shownServer)/\(application)") }
        self.application = application
        streamKey = key
    }

    /// The port to connect to: the URL's, or the scheme's default.
    public var port: Int { explicitPort ?? (isSecure ? Self.defaultSecurePort : Self.defaultPort) }

    /// Whether the connection is TLS (`rtmps`).
    public var isSecure: Bool { scheme == "rtmps" }

    /// `scheme://host[:port]`, the host in brackets when it is an IPv6 address.
    public var server: String {
        let bracketed = URLReference.bracketed(host)
        return "\(scheme)://\(bracketed)" + (explicitPort.map { ":\($0)" } ?? "")
    }

    /// `connect`'s `tcUrl` (RTMP 1.0 7.2.1.1): `scheme://host[:port]/app`.
    public var tcURL: String { "\(server)/\(application)" }

    /// The URL with the stream key shown as `****`.
    public var masked: String { "\(tcURL)/****" }

    /// ``masked``.
    public var description: String { masked }

    /// The application and the stream key of `path` (from its `/`, query included), or `nil`
    /// when it has no second component.
    private static func split(_ path: Substring) -> (String, String)? {
        if path.hasPrefix("/ondemand/") { return ("ondemand", String(path.dropFirst(10))) }
        let next = path.hasPrefix("/") ? path.dropFirst() : path
        guard let slash = next.firstIndex(of: "/") else { return nil }
        let afterSlash = next[next.index(after: slash)...]
        let colon = afterSlash.firstIndex(of: ":")
        if let second = afterSlash.firstIndex(of: "/"), colon.map({ $0 > second }) ?? true {
            return (String(next[..<second]), String(afterSlash[afterSlash.index(after: second)...]))
        }
        return (String(next[..<slash]), String(afterSlash))
    }

    private static func firstWord(_ text: String) -> String {
        text.firstIndex(of: ":").map { "\(text[..<$0]):…" } ?? "the destination"
    }
}
