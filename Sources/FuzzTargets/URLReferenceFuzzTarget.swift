import MediaCore

// The `url` fuzz target: what a user or an environment variable hands a destination. The input,
// read as UTF-8 (invalid bytes replaced), goes through ``URLReference`` both ways of finding the
// userinfo's end, and the parts it finds through percent-decoding.

extension FuzzTarget {
    static func url(_ data: [UInt8]) {
        let text = String(decoding: data, as: UTF8.self)
        for options in [URLReference.Options(), URLReference.Options(userInfoRunsToLastAt: true)] {
            guard let url = try? URLReference(text, options: options) else { continue }
            guard let colon = text.firstIndex(of: ":") else { preconditionFailure("a URL without a colon") }
            precondition(text[..<colon].lowercased() == url.scheme && text[colon...].hasPrefix("://"), "the scheme is not the text's")
            for separator in ["/", "?", "#", "@"] {
                precondition(!url.authority.contains(separator), "the authority holds a \(separator)")
            }
            if !options.userInfoRunsToLastAt, let userInfo = url.userInfo {
                precondition(!userInfo.contains("/") && !userInfo.contains("?") && !userInfo.contains("#"), "the userinfo runs past the authority")
            }
            precondition(url.port.map { (1...65_535).contains($0) } ?? true, "a port out of range")
            precondition(text.hasSuffix(String(url.remainder)), "the remainder is not the text's end")
            precondition(url.path.utf8.count + (url.query.map { $0.utf8.count + 1 } ?? 0) == url.remainder.utf8.count,
                         "the path and query are not the remainder")
            // The parts written back in order read as the same parts.
            let written = url.scheme + "://" + (url.userInfo.map { $0 + "@" } ?? "") + url.authority + url.remainder
            guard let again = try? URLReference(written, options: options) else { preconditionFailure("\(written) does not read back") }
            precondition(again.scheme == url.scheme && again.userInfo == url.userInfo && again.host == url.host && again.port == url.port
                         && again.remainder == url.remainder, "\(written) reads back otherwise")
            for part in [url.userInfo, url.host, url.path, url.query].compactMap({ $0 }) {
                _ = PercentEncoding.decoded(part)
                if let bytes = PercentEncoding.decodedBytes(part, invalid: .kept) {
                    precondition(bytes.count <= part.utf8.count, "decoding made more bytes than were written")
                }
            }
        }
    }
}
