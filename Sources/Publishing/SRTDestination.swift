internal import MediaCore

/// Where and how an SRT stream is published: an `srt://host:port?…` URL, checked and decoded.
///
/// ```
/// srt://ingest.example.com:9000?streamid=%23!::r=live/show,m=publish&latency=200&passphrase=…&pbkeylen=32
/// ```
///
/// Query parameters (each at most once, values percent-decoded; `+` stays a plus sign and `#`
/// is literal, so `streamid=#!::r=live,m=publish` may be written as is; `&` in a value is `%26`):
///
/// | parameter | meaning | default |
/// |---|---|---|
/// | `streamid` | `SRTO_STREAMID`, at most 512 bytes (the server's access control: `#!::r=…,m=publish`) | none |
/// | `latency` | `SRTO_LATENCY` in **milliseconds**, as srt-live-transmit counts (FFmpeg's `latency` counts microseconds) | 120 |
/// | `passphrase` | `SRTO_PASSPHRASE`, 10 to 79 bytes: AES encryption | none (no encryption) |
/// | `pbkeylen` | `SRTO_PBKEYLEN`: 16, 24 or 32 (AES-128, -192, -256); only with a passphrase | 16 |
/// | `mode` | `caller` only: KeyFrameKit connects to a listening server | `caller` |
///
/// Any other parameter is refused rather than ignored, so that a misspelled option never
/// publishes unencrypted or to the wrong stream. A host in brackets is an IPv6 address
/// (`srt://[::1]:9000`).
///
/// ``description`` masks the secrets: the passphrase and the stream id (which often carries a
/// stream key) are both written `****`.
public struct SRTDestination: Sendable, Hashable, CustomStringConvertible {
    /// The listener's host: a name, an IPv4 address or an IPv6 address (without brackets).
    public var host: String
    /// The listener's UDP port.
    public var port: Int
    /// `SRTO_STREAMID`: the stream's name (and often key) at the server, or nil.
    public var streamID: String?
    /// `SRTO_LATENCY`: how long the receiver holds packets to retransmit lost ones.
    public var latency: Duration
    /// `SRTO_PASSPHRASE`: the encryption passphrase (10 to 79 bytes), or nil for none.
    public var passphrase: String?
    /// `SRTO_PBKEYLEN`: the AES key length in bytes (16, 24, 32), or nil for libsrt's default (16).
    public var keyLength: Int?

    /// The latency when the URL names none: libsrt's default for live streams.
    public static let defaultLatency: Duration = .milliseconds(120)
    /// The parameters ``init(url:)`` understands.
    public static let parameterNames = ["streamid", "latency", "passphrase", "pbkeylen", "mode"]

    /// A destination from its parts, checked as ``init(url:)`` checks a URL's.
    ///
    /// - Throws: ``PublishingError/Reason/invalidDestination`` for an empty host, a port out of
    ///   1...65535, a stream id over 512 bytes, a negative or huge latency, a passphrase outside
    ///   10...79 bytes, a key length other than 16, 24, 32 or without a passphrase.
    public init(host: String, port: Int, streamID: String? = nil, latency: Duration = SRTDestination.defaultLatency,
                passphrase: String? = nil, keyLength: Int? = nil) throws(PublishingError) {
        self.host = host
        self.port = port
        self.streamID = streamID
        self.latency = latency
        self.passphrase = passphrase
        self.keyLength = keyLength
        try validate()
    }

    /// Parses `srt://host:port?streamid=…&latency=…&passphrase=…&pbkeylen=…&mode=caller`.
    ///
    /// - Throws: ``PublishingError/Reason/invalidDestination`` for another scheme, no host or
    ///   port, an unknown or repeated parameter, a bad value, or `mode=listener`/`rendezvous`
    ///   (KeyFrameKit only calls). The message never contains the passphrase or the stream id.
    public init(url: String) throws(PublishingError) {
        let reference: URLReference
        do { reference = try URLReference(url) } catch {
            switch error {
            case .notAURL: throw PublishingError(.invalidDestination, "not an srt:// URL")
            case .unclosedBracket: throw PublishingError(.invalidDestination, "srt://…: unclosed [ in an IPv6 address")
            case .invalidPort: throw PublishingError(.invalidDestination, "srt://…: the port must be a number, 1 to 65535")
            }
        }
        guard reference.scheme == "srt" else { throw PublishingError(.invalidDestination, "not an srt:// URL") }
        // No fragment: `#` is literal, as in an access-control stream id (`streamid=#!::r=live`),
        // so the query is everything after `?`. A path is allowed only empty
        // (`srt://host:9000/`): SRT names streams by stream id.
        let query = reference.query ?? ""
        guard reference.remainder.prefix(while: { $0 != "?" }).allSatisfy({ $0 == "/" }) else {
            throw PublishingError(.invalidDestination, "srt://\(reference.authority): an SRT URL has no path; name the stream with ?streamid=")
        }
        guard reference.userInfo == nil else {
            throw PublishingError(.invalidDestination, "an SRT URL has no user or password before the host; use ?passphrase=")
        }
        let (host, port) = try Self.hostAndPort(reference)

        var values: [String: String] = [:]
        for item in query.split(separator: "&", omittingEmptySubsequences: true) {
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = try Self.percentDecoded(pair[0], what: "a parameter name").lowercased()
            guard Self.parameterNames.contains(name) else {
                throw PublishingError(.invalidDestination,
                                      "srt://\(host):\(port): unknown SRT parameter `\(name)` (known: \(Self.parameterNames.joined(separator: ", ")))")
            }
            guard values[name] == nil else {
                throw PublishingError(.invalidDestination, "srt://\(host):\(port): parameter `\(name)` given twice")
            }
            values[name] = pair.count == 2 ? try Self.percentDecoded(pair[1], what: "`\(name)`") : ""
        }

        if let mode = values["mode"], mode.lowercased() != "caller" {
            throw PublishingError(.invalidDestination,
                                  "srt://\(host):\(port): mode=\(mode) is not supported: "
                                  + "KeyFrameKit publishes as an SRT caller only (mode=caller, the default) to a listening server")
        }
        var latency = Self.defaultLatency
        if let text = values["latency"] {
            guard let milliseconds = Int(text), milliseconds >= 0 else {
                throw PublishingError(.invalidDestination, "srt://\(host):\(port): latency=\(text) is not a number of milliseconds")
            }
            latency = .milliseconds(milliseconds)
        }
        var keyLength: Int?
        if let text = values["pbkeylen"] {
            guard let value = Int(text) else {
                throw PublishingError(.invalidDestination, "srt://\(host):\(port): pbkeylen=\(text) is not 16, 24 or 32")
            }
            keyLength = value
        }
        let streamID = values["streamid"].flatMap { $0.isEmpty ? nil : $0 }
        let passphrase = values["passphrase"].flatMap { $0.isEmpty ? nil : $0 }
        try self.init(host: host, port: port, streamID: streamID, latency: latency, passphrase: passphrase, keyLength: keyLength)
    }

    /// The URL with its secrets masked: `srt://host:port?streamid=****&latency=120&passphrase=****`.
    public var description: String {
        var text = "srt://\(URLReference.bracketed(host)):\(port)"
        var parameters: [String] = []
        if streamID != nil { parameters.append("streamid=****") }
        parameters.append("latency=\(latencyMilliseconds)")
        if passphrase != nil { parameters.append("passphrase=****") }
        if let keyLength { parameters.append("pbkeylen=\(keyLength)") }
        text += "?" + parameters.joined(separator: "&")
        return text
    }

    /// ``latency`` in whole milliseconds (what `SRTO_LATENCY` takes).
    public var latencyMilliseconds: Int {
        Int(clamping: latency.inMilliseconds())
    }

    /// `host:port`, the IPv6 address in brackets: for messages (no secret in it).
    var endpoint: String { "\(URLReference.bracketed(host)):\(port)" }

    private func validate() throws(PublishingError) {
        guard !host.isEmpty else { throw PublishingError(.invalidDestination, "an SRT URL needs a host: srt://host:port") }
        guard (1...65_535).contains(port) else {
            throw PublishingError(.invalidDestination, "srt://\(endpoint): the port must be 1 to 65535")
        }
        if let streamID, streamID.utf8.count > 512 {
            throw PublishingError(.invalidDestination, "\(description): the stream id is \(streamID.utf8.count) bytes; SRT allows at most 512")
        }
        guard latency >= .zero, latency <= .seconds(60) else {
            throw PublishingError(.invalidDestination, "srt://\(endpoint): latency must be 0 to 60000 ms")
        }
        if let passphrase, !(10...79).contains(passphrase.utf8.count) {
            // The length, not the passphrase: messages never carry secrets.
            throw PublishingError(.invalidDestination,
                                  "\(description): the passphrase is \(passphrase.utf8.count) bytes; SRT needs 10 to 79")
        }
        if let keyLength {
            guard [16, 24, 32].contains(keyLength) else {
                throw PublishingError(.invalidDestination, "srt://\(endpoint): pbkeylen=\(keyLength) is not 16, 24 or 32")
            }
            guard passphrase != nil else {
                throw PublishingError(.invalidDestination, "srt://\(endpoint): pbkeylen=\(keyLength) needs a passphrase")
            }
        }
    }

    /// The host, percent-decoded, and the port, which an SRT URL must give.
    private static func hostAndPort(_ reference: URLReference) throws(PublishingError) -> (String, Int) {
        let authority = reference.authority
        guard let port = reference.port else {
            throw PublishingError(.invalidDestination, "srt://\(authority): an SRT URL needs a port: srt://host:port")
        }
        if !authority.hasPrefix("["), reference.host.contains(":") {
            throw PublishingError(.invalidDestination, "srt://\(authority): write an IPv6 address in brackets: srt://[address]:port")
        }
        guard !reference.host.isEmpty else { throw PublishingError(.invalidDestination, "an SRT URL needs a host: srt://host:port") }
        return (try percentDecoded(reference.host, what: "the host"), port)
    }

    /// `%XX` escapes decoded; the result must be UTF-8. `what` names the part for the message
    /// (never its value: it may be a secret).
    private static func percentDecoded(_ text: Substring, what: String) throws(PublishingError) -> String {
        guard text.contains("%") else { return String(text) }
        guard let bytes = PercentEncoding.decodedBytes(text, invalid: .refused) else {
            throw PublishingError(.invalidDestination, "a bad %-escape in \(what) of an SRT URL")
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw PublishingError(.invalidDestination, "\(what) of an SRT URL is not UTF-8 once decoded")
        }
        return decoded
    }
}
