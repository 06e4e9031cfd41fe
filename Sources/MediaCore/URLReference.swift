/// A URL with an authority taken apart as RFC 3986 (3) does, `scheme://[userinfo@]host[:port]`
/// and what follows, nothing percent-decoded: the one parser under every destination's URL
/// (`rtmp://`, `srt://`, `icecast://`, `http://`), each of which then says what its parts mean
/// and which of them are secret.
///
/// - The scheme is lowercased (3.1).
/// - The authority ends at the first `/`, `?` or `#` (3.2). The userinfo runs to the last `@`
///   before that; with ``Options/userInfoRunsToLastAt`` to the last `@` of all, so that a
///   password holding `/` or `?` stays in it (Icecast's source passwords).
/// - A host in brackets is an IPv6 address (3.2.2), given without them; otherwise the port
///   follows the last `:` (3.2.3). A port must be ASCII digits from 1 to 65,535: 3.2.3 allows
///   any digits or none, but every destination here connects to it.
/// - No destination gives `#` a meaning past the authority: it stays, as written, in the path
///   or the query (an SRT stream id may hold one).
public struct URLReference: Sendable, Hashable {
    /// What stops a URL from being taken apart.
    public enum Problem: Error, Sendable, Hashable {
        /// No `scheme://`.
        case notAURL
        /// `[` without its `]`.
        case unclosedBracket
        /// A port that is not a number from 1 to 65,535.
        case invalidPort
    }

    /// How the URL is read.
    public struct Options: Sendable, Hashable {
        /// The userinfo runs to the last `@` of the URL rather than of the authority.
        public var userInfoRunsToLastAt: Bool

        /// Options; by default RFC 3986's authority.
        public init(userInfoRunsToLastAt: Bool = false) { self.userInfoRunsToLastAt = userInfoRunsToLastAt }
    }

    /// The scheme, lowercased.
    public var scheme: String
    /// The userinfo before `@`, as written; `nil` when there is none.
    public var userInfo: Substring?
    /// The authority after the userinfo, as written (`host:port`, `[::1]:9000`).
    public var authority: Substring
    /// The host, as written, without the brackets of an IPv6 address.
    public var host: Substring
    /// The port, when the URL gives one.
    public var port: Int?
    /// Everything after the authority, as written: the path, query and fragment.
    public var remainder: Substring

    /// Takes `text` apart.
    ///
    /// - Throws: ``Problem``.
    public init(_ text: String, options: Options = Options()) throws(Problem) {
        guard let colon = text.firstIndex(of: ":"), colon > text.startIndex, text[colon...].hasPrefix("://") else {
            throw .notAURL
        }
        scheme = text[..<colon].lowercased()
        var rest = text[text.index(colon, offsetBy: 3)...]
        func authorityEnd(_ text: Substring) -> Substring.Index {
            text.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? text.endIndex
        }
        if let at = (options.userInfoRunsToLastAt ? rest : rest[..<authorityEnd(rest)]).lastIndex(of: "@") {
            userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
        } else {
            userInfo = nil
        }
        let end = authorityEnd(rest)
        authority = rest[..<end]
        remainder = rest[end...]
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .unclosedBracket }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .invalidPort }
                portText = after.dropFirst()
            }
        } else if let separator = authority.lastIndex(of: ":") {
            host = authority[..<separator]
            portText = authority[authority.index(after: separator)...]
        } else {
            host = authority
        }
        if let portText {
            guard !portText.isEmpty, portText.utf8.count <= 5, portText.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                  let value = Int(portText), (1...65_535).contains(value) else { throw .invalidPort }
            port = value
        } else {
            port = nil
        }
    }

    /// The path: the ``remainder`` up to its `?`.
    public var path: Substring {
        remainder[..<(remainder.firstIndex(of: "?") ?? remainder.endIndex)]
    }

    /// The query after the first `?` of the ``remainder``, as written; `nil` without `?`.
    public var query: Substring? {
        remainder.firstIndex(of: "?").map { remainder[remainder.index(after: $0)...] }
    }

    /// The lowercased scheme `text` starts with (before its first `:`), even when the rest does
    /// not parse: what a message may show of a URL that was refused; empty without a `:`.
    public static func scheme(of text: String) -> String {
        text.firstIndex(of: ":").map { text[..<$0].lowercased() } ?? ""
    }

    /// `host`, in brackets when it is an IPv6 address.
    public static func bracketed(_ host: some StringProtocol) -> String { host.contains(":") ? "[\(host)]" : String(host) }
}
