internal import MediaCore

/// A destination URL taken apart (``/MediaCore/URLReference``: RFC 3986 3,
/// `scheme://[user[:password]@]host[:port]/path[?query]`), its user, password and path
/// percent-decoded, with a masked form that never shows the password.
package struct URLParts: Sendable, Hashable {
    /// The scheme, lowercased.
    package var scheme: String
    /// The user, when given.
    package var user: String?
    /// The password, when given.
    package var password: String?
    /// The host, without brackets for IPv6.
    package var host: String
    /// The port, when given.
    package var port: Int?
    /// The path, percent-decoded, starting with `/` (or empty).
    package var path: String
    /// The query, undecoded, without `?` (or `nil`).
    package var query: String?
    /// What may be shown of the URL: its scheme and host (`scheme://****@host/…`), never its
    /// user-info (a user alone may be a password), path or query.
    package var masked: String

    /// Parses `text`. Only the schemes that carry credentials (`icecast`, `icecasts`) take
    /// them to the last `@`, so that a password with `/`, `?` or `#` in it stays in the
    /// credentials; elsewhere a key with `@` in it stays in the path.
    ///
    /// - Throws: ``PublishingError/Reason/invalidDestination`` for no scheme, no host, a bad port.
    package init(_ text: String) throws(PublishingError) {
        let scheme = URLReference.scheme(of: text)
        let reference: URLReference
        do {
            reference = try URLReference(text, options: .init(userInfoRunsToLastAt: scheme == "icecast" || scheme == "icecasts"))
        } catch {
            // What errors show: never the path (an RTMP key), the query (an SRT stream id or
            // passphrase) or the user-info.
            switch error {
            case .notAURL: throw PublishingError(.invalidDestination, "\(Self.maskedGuess(text)): not a URL (scheme://host/…)")
            case .unclosedBracket: throw PublishingError(.invalidDestination, "\(scheme)://…: an IPv6 address without its closing ]")
            case .invalidPort: throw PublishingError(.invalidDestination, "\(scheme)://…: a port must be 1…65535")
            }
        }
        self.scheme = reference.scheme
        if let userInfo = reference.userInfo {
            if let separator = userInfo.firstIndex(of: ":") {
                user = PercentEncoding.decoded(userInfo[..<separator])
                password = PercentEncoding.decoded(userInfo[userInfo.index(after: separator)...])
            } else {
                // A user alone may be a password (`icecast://SECRET@host`): never shown either.
                user = PercentEncoding.decoded(userInfo)
                password = nil
            }
        } else {
            user = nil
            password = nil
        }
        host = String(reference.host)
        port = reference.port
        query = reference.query.map(String.init)
        path = PercentEncoding.decoded(reference.path)
        masked = "\(reference.scheme)://\(reference.userInfo == nil ? "" : "****@")\(URLReference.bracketed(host))"
            + (reference.remainder.isEmpty ? "" : "/…")
        guard !host.isEmpty else { throw PublishingError(.invalidDestination, "\(reference.scheme)://…: no host") }
    }

    /// What can be shown of a string that did not parse: its scheme when it looks like one, or
    /// nothing.
    private static func maskedGuess(_ text: String) -> String {
        if let colon = text.firstIndex(of: ":"), text[..<colon].allSatisfy({ $0.isLetter }), !text[..<colon].isEmpty {
            return "\(text[..<colon]):…"
        }
        return "the destination"
    }
}
