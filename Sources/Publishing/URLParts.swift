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
    /// The URL with the password (if any) shown as `****`.
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
        if let question = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: question)...])
            rest = rest[..<question]
        } else {
            query = nil
        }
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        let rawPath = rest[authorityEnd...]
        var maskedAuthority = ""
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                user = Self.percentDecoded(userInfo[..<colon])
                password = Self.percentDecoded(userInfo[userInfo.index(after: colon)...])
                maskedAuthority = "\(userInfo[..<colon]):****@"
            } else {
                user = Self.percentDecoded(userInfo)
                password = nil
                maskedAuthority = "\(userInfo)@"
            }
        } else {
            user = nil
            password = nil
        }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw PublishingError(.invalidDestination, "\(scheme)://\(maskedAuthority)\(authority): an IPv6 address without its closing ]")
            }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            port = after.hasPrefix(":") ? Int(after.dropFirst()) ?? -1 : nil
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            port = Int(authority[authority.index(after: colon)...]) ?? -1
        } else {
            host = String(authority)
            port = nil
        }
        masked = "\(scheme)://\(maskedAuthority)\(authority)\(rawPath)" + (query.map { "?" + Self.maskedQuery($0) } ?? "")
        path = Self.percentDecoded(rawPath)
        guard !host.isEmpty else { throw PublishingError(.invalidDestination, "\(masked): no host") }
        if let port, !(1...65535).contains(port) { throw PublishingError(.invalidDestination, "\(masked): a port must be 1…65535") }
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
    package static func percentDecoded(_ text: Substring) -> String {
        guard text.contains("%") else { return String(text) }
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Query parameters whose values are secrets.
    package static let secretParameters: Set<String> = ["passphrase", "password", "pass", "key", "token", "secret", "auth"]

    /// `query` with the values of ``secretParameters`` shown as `****`.
    private static func maskedQuery(_ query: String) -> String {
        query.split(separator: "&", omittingEmptySubsequences: false).map { item in
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return pair.count > 1 && secretParameters.contains(percentDecoded(pair[0]).lowercased()) ? "\(pair[0])=****" : String(item)
        }.joined(separator: "&")
    }

    /// What can be shown of a string that did not parse: its scheme, or nothing.
    private static func maskedGuess(_ text: String) -> String {
        if let colon = text.firstIndex(of: ":") { return "\(text[..<colon]):…" }
        return "the destination"
    }
}
