internal import MediaCore

/// A destination URL taken apart (RFC 3986 3: `scheme://[user[:password]@]host[:port]/path[?query]`),
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

    /// Parses `text`.
    ///
    /// - Throws: ``PublishingError/Reason/invalidDestination`` for no scheme, no host, a bad port.
    package init(_ text: String) throws(PublishingError) {
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else {
            throw PublishingError(.invalidDestination, "\(Self.maskedGuess(text)): not a URL (scheme://host/…)")
        }
        scheme = text[..<colon].lowercased()
        var rest = text[text.index(colon, offsetBy: 3)...]
        // Credentials run to the last `@`. Only the schemes that carry them (icecast) look that
        // far: a password with `/`, `?` or `#` in it then stays in the credentials. Elsewhere the
        // authority ends at the first `/` or `?` (RFC 3986 3.2), so a key with `@` in it stays in
        // the path.
        var userInfo: Substring?
        let carriesCredentials = scheme == "icecast" || scheme == "icecasts"
        let authorityLimit = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        if let at = rest.lastIndex(of: "@"), carriesCredentials || at < authorityLimit {
            userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
        }
        if let question = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: question)...])
            rest = rest[..<question]
        } else {
            query = nil
        }
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let rawPath = rest[authorityEnd...]
        var shownUser = ""
        if let userInfo {
            if let separator = userInfo.firstIndex(of: ":") {
                user = Self.percentDecoded(userInfo[..<separator])
                password = Self.percentDecoded(userInfo[userInfo.index(after: separator)...])
                shownUser = "****@"
            } else {
                user = Self.percentDecoded(userInfo)
                password = nil
                // A user alone may be a password (`icecast://SECRET@host`): never shown either.
                shownUser = "****@"
            }
        } else {
            user = nil
            password = nil
        }
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw PublishingError(.invalidDestination, "\(scheme)://…: an IPv6 address without its closing ]")
            }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            portText = after.isEmpty ? nil : (after.hasPrefix(":") ? after.dropFirst() : after)
        } else if let separator = authority.lastIndex(of: ":") {
            host = String(authority[..<separator])
            portText = authority[authority.index(after: separator)...]
        } else {
            host = String(authority)
        }
        // What errors and logs show: never the path (an RTMP key), the query (an SRT stream id or
        // passphrase) or a password; the scheme-specific parsers show more once they know what
        // is secret.
        let shownServer = "\(scheme)://\(shownUser)\(Self.bracketed(host))"
        masked = shownServer + (rawPath.isEmpty && query == nil ? "" : "/…")
        path = Self.percentDecoded(rawPath)
        guard !host.isEmpty else { throw PublishingError(.invalidDestination, "\(scheme)://…: no host") }
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else {
                throw PublishingError(.invalidDestination, "\(shownServer): a port must be 1…65535")
            }
            port = value
        } else {
            port = nil
        }
    }

    /// `host`, in brackets when it is an IPv6 address.
    package static func bracketed(_ host: String) -> String { host.contains(":") ? "[\(host)]" : host }

    /// The query's `name=value` pairs, percent-decoded, in order.
    package var queryItems: [(name: String, value: String)] {
        guard let query, !query.isEmpty else { return [] }
        return query.split(separator: "&").map { item in
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (Self.percentDecoded(pair[0]), pair.count > 1 ? Self.percentDecoded(pair[1]) : "")
        }
    }

    /// `text` with `%XX` escapes decoded (invalid escapes kept as they are).
    package static func percentDecoded(_ text: Substring) -> String { PercentEncoding.decoded(text) }

    /// What can be shown of a string that did not parse: its scheme when it looks like one, or
    /// nothing.
    private static func maskedGuess(_ text: String) -> String {
        if let colon = text.firstIndex(of: ":"), text[..<colon].allSatisfy({ $0.isLetter }), !text[..<colon].isEmpty {
            return "\(text[..<colon]):…"
        }
        return "the destination"
    }
}
