internal import MediaCore

/// An Icecast mount to publish to: `icecast://[user[:password]@]host[:port]/mount`, or
/// `icecasts://` for TLS.
///
/// The user is `source` unless given (Icecast's source login); the port is 8000 (`icecast://`)
/// or 443 (`icecasts://`). The password must be given, in the URL or, to keep it off the
/// command line, by reading the whole URL from an environment variable or a file
/// (``PublishingDestination/parse(_:environment:readFile:registry:)``).
public struct IcecastDestination: Sendable, Hashable {
    /// The server's host name or address.
    public var host: String
    /// The server's port.
    public var port: Int
    /// Whether the connection is TLS (`icecasts://`).
    public var usesTLS: Bool
    /// The source user (`source` by default).
    public var user: String
    /// The source password.
    public var password: String
    /// The mount point, starting with `/`.
    public var mount: String

    /// Parses an `icecast://` or `icecasts://` URL.
    ///
    /// - Throws: ``PublishingError/Reason/invalidDestination`` naming what is missing (never
    ///   the password).
    public init(url: String) throws(PublishingError) {
        let parts = try URLParts(url)
        guard parts.scheme == "icecast" || parts.scheme == "icecasts" else {
            throw PublishingError(.invalidDestination, "\(parts.masked): not an icecast:// or icecasts:// URL")
        }
        usesTLS = parts.scheme == "icecasts"
        host = parts.host
        port = parts.port ?? (usesTLS ? 443 : 8000)
        user = parts.user.map { $0.isEmpty ? "source" : $0 } ?? "source"
        guard let password = parts.password, !password.isEmpty else {
            throw PublishingError(.invalidDestination, "\(parts.masked): no source password (icecast://source:PASSWORD@host:port/mount)")
        }
        self.password = password
        guard parts.path.count > 1 else {
            throw PublishingError(.invalidDestination, "\(parts.masked): no mount point (icecast://source:PASSWORD@host:port/MOUNT)")
        }
        mount = parts.path
    }

    /// The URL with the password masked: what logs, `--json` and errors show.
    public var maskedURL: String {
        "\(usesTLS ? "icecasts" : "icecast")://****@\(URLReference.bracketed(host)):\(port)\(mount)"
    }
}
