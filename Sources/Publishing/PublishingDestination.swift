public import MediaCore
internal import ObjectStorage
internal import SystemPackage

/// A live destination as the user names it: the URL (RTMP, Icecast or SRT), with its secrets,
/// and what is asked for it alone (a bitrate).
///
/// ## Forms
/// - `rtmp://host[:port]/app/key`, `rtmps://…` (TLS, port 443 by default)
/// - `icecast://[source[:password]@]host[:port]/mount`, `icecasts://…` (TLS)
/// - `srt://host:port?streamid=…&latency=…&passphrase=…` (MPEG-TS inside)
/// - any of them with `#bitrate=64k` at the end: this destination's bitrate (destinations of
///   the same bitrate share one encoder). A fragment is never sent to a server.
/// - `env:NAME`: the URL is the environment variable `NAME`'s value; `file:PATH`: the
///   file's first line. Either keeps a stream key, a password or a passphrase off the command
///   line (and out of `ps`).
///
/// Every description (``maskedURL``, errors, statistics) shows secrets as `****`.
public struct PublishingDestination: Sendable, CustomStringConvertible {
    /// A protocol, as KeyFrameKit identifies it: an ``/MediaCore/OpenIdentifier`` whose static
    /// members are ours.
    public struct Scheme: OpenIdentifier {
        /// The protocol's name, as statistics and `--json` print it (`rtmp`, `icecast`, `srt`).
        public let name: String

        /// The protocol named `name`.
        public init(_ name: String) { self.name = name }

        /// RTMP or RTMPS: FLV audio tags.
        public static let rtmp = Scheme("rtmp")
        /// Icecast (HTTP PUT, or SOURCE): ADTS.
        public static let icecast = Scheme("icecast")
        /// SRT: MPEG-TS.
        public static let srt = Scheme("srt")
    }

    /// The protocol.
    public let scheme: Scheme
    /// The URL with its secrets masked.
    public let maskedURL: String
    /// The host, for checking that it resolves before a capture starts.
    public let host: String
    /// The port.
    public let port: Int
    /// The bitrate asked for this destination alone (`#bitrate=`), in bits per second.
    public let bitrate: Int?
    /// The parsed URL, which makes the destination's sessions.
    public let endpoint: any LiveEndpoint

    /// The codecs the destination's protocol carries (empty: any).
    public let codecs: Set<AudioCodecID>

    /// The masked URL.
    public var description: String { maskedURL }

    /// Parses a destination as given on the command line.
    ///
    /// - Parameters:
    ///   - text: the URL, `env:NAME` or `file:PATH`, with an optional `#bitrate=…`.
    ///   - environment: looks up `env:` names.
    ///   - readFile: reads a `file:` path's contents.
    ///   - registry: the protocols a URL can name (``DestinationRegistry/standard``: RTMP,
    ///     Icecast, SRT, unless a program registers its own in a copy).
    /// - Throws: ``PublishingError/Reason/invalidDestination``: an unknown scheme, a missing
    ///   host, key, password or mount, a variable not set, a file that cannot be read.
    public static func parse(_ text: String, environment: (String) -> String? = { _ in nil },
                             readFile: (String) throws -> String = { _ in throw PublishingError(.invalidDestination, "no file reader") },
                             registry: DestinationRegistry = .standard)
        throws(PublishingError) -> PublishingDestination {
        var url = text
        if text.hasPrefix("env:") {
            let name = String(text.dropFirst(4))
            guard let value = environment(name), !value.isEmpty else {
                throw PublishingError(.invalidDestination, "env:\(name): the environment variable \(name) is not set")
            }
            url = value
        } else if text.hasPrefix("file:") {
            let path = String(text.dropFirst(5))
            do { url = try readFile(path) } catch {
                throw PublishingError(.invalidDestination, "file:\(path): cannot read the destination: \(error)")
            }
            url = String(url.split(whereSeparator: \.isNewline).first ?? "")
        }
        url = url.trimmingWhitespace
        // `#bitrate=…` at the very end is ours; any other `#` belongs to the URL (SRT's stream id
        // syntax `#!::r=…`, a password).
        var bitrate: Int?
        if let hash = url.lastIndex(of: "#"), url[url.index(after: hash)...].hasPrefix("bitrate=") {
            let value = url[url.index(after: hash)...].dropFirst("bitrate=".count)
            guard let parsed = Self.bitrate(value) else {
                throw PublishingError(.invalidDestination, "#bitrate=\(value.prefix(12)): not a bitrate (e.g. #bitrate=64k)")
            }
            bitrate = parsed
            url = String(url[..<hash])
        }
        let parts = try URLParts(url)
        guard let entry = registry.entry(forScheme: parts.scheme) else {
            let known = registry.entries.flatMap(\.urlSchemes).map { "\($0)://" }
            throw PublishingError(.invalidDestination,
                                  "\(parts.masked): unknown scheme \(parts.scheme)://; use \(known.dropLast().joined(separator: ", ")) or \(known.last ?? "")")
        }
        let endpoint = try entry.endpoint(url)
        return PublishingDestination(scheme: entry.scheme, maskedURL: endpoint.maskedURL, host: endpoint.host, port: endpoint.port,
                                     bitrate: bitrate, endpoint: endpoint, codecs: entry.codecs)
    }

    /// Checks that the host resolves, before a capture starts.
    ///
    /// - Throws: ``PublishingError/Reason/unresolved``.
    public func checkResolves() throws(PublishingError) {
        // A destination without a host (a registered protocol's that needs none) has nothing to resolve.
        guard host.isEmpty || HostName.resolves(host, port: port) else {
            throw PublishingError(.unresolved, "\(maskedURL): the host name \(host) does not resolve")
        }
    }

    /// A session to this destination, its bytes counted in `statistics`.
    func makeSession(counting statistics: DestinationStatistics, trustRoots: String?) -> any PublishingSession {
        let name = maskedURL
        let tcp: TCPConnector = {
            host, port, tls, deadline throws(PublishingError) in
            CountedConnection(try TCPConnection.connect(host: host, port: port, tls: tls, trustRoots: trustRoots, describing: name,
                                                        deadline: deadline), statistics: statistics)
        }
        return endpoint.makeSession(connect: tcp, statistics: statistics)
    }

    /// `64k`, `128000`, `1.5m`, in bits per second (``/MediaCore/Bitrate``).
    static func bitrate(_ text: Substring) -> Int? { Bitrate(text)?.bitsPerSecond }
}

/// A destination's parsed URL, as a session factory: what a protocol's entry in a
/// ``DestinationRegistry`` makes of a URL. A protocol of another package is an endpoint, a
/// ``PublishingSession`` it makes, and one ``DestinationRegistry/register(_:)-(DestinationRegistry.Entry)``.
public protocol LiveEndpoint: Sendable {
    /// The URL with its secrets masked (`****`): what every message and statistic shows.
    var maskedURL: String { get }
    /// The host, for checking that it resolves (empty for none).
    var host: String { get }
    /// The port.
    var port: Int { get }
    /// A session to the destination: `connect` opens a TCP connection (TLS when asked) whose
    /// sent bytes are counted; a protocol on another transport counts them in `statistics`.
    func makeSession(connect: @escaping TCPConnector, statistics: DestinationStatistics) -> any PublishingSession
}

/// Opens a TCP connection to a host and port, with TLS when asked, by a deadline.
public typealias TCPConnector = @Sendable (String, Int, Bool, ContinuousClock.Instant) throws(PublishingError) -> any ServerConnection

/// The destinations a URL can name, as a value, of two kinds:
/// - **live** (``Entry``): a protocol a stream is sent over as it is made; for each, the URL
///   schemes that name it, the codecs it carries, and how such a URL becomes a ``LiveEndpoint``;
/// - **object stores** (``StoreEntry``): where a package's files go by name
///   (``/MediaCore/ObjectStore``); for each, its URL schemes and how such a URL becomes a store.
///
/// ``standard`` holds KeyFrameKit's (``registerAll()``); a program that adds its own copies it,
/// registers them, and parses its destinations with the copy
/// (``PublishingDestination/parse(_:environment:readFile:registry:)``, ``store(for:)``).
public struct DestinationRegistry: Sendable {
    /// One protocol.
    public struct Entry: Sendable {
        /// The protocol.
        public let scheme: PublishingDestination.Scheme
        /// The URL schemes that name it (`rtmp`, `rtmps`).
        public let urlSchemes: [String]
        /// The codecs it carries (empty: any).
        public let codecs: Set<AudioCodecID>
        /// Parses a URL of one of ``urlSchemes``, masking its secrets.
        public let endpoint: @Sendable (String) throws(PublishingError) -> any LiveEndpoint

        /// A protocol named by `urlSchemes`, carrying `codecs`, whose URLs `endpoint` parses.
        public init(scheme: PublishingDestination.Scheme, urlSchemes: [String], codecs: Set<AudioCodecID>,
                    endpoint: @escaping @Sendable (String) throws(PublishingError) -> any LiveEndpoint) {
            self.scheme = scheme
            self.urlSchemes = urlSchemes
            self.codecs = codecs
            self.endpoint = endpoint
        }
    }

    /// An object store: the second kind of destination, where a package's files go by name
    /// (a directory; an S3 bucket or a WebDAV share a program registers).
    public struct StoreEntry: Sendable {
        /// The kind of store, as messages name it (`file`).
        public let name: String
        /// The URL schemes that name it (`file`).
        public let urlSchemes: [String]
        /// Parses a URL of one of ``urlSchemes`` into its store, whose description masks the
        /// URL's secrets.
        public let store: @Sendable (String) throws(PublishingError) -> any ObjectStore

        /// A store named by `urlSchemes`, whose URLs `store` parses.
        public init(name: String, urlSchemes: [String], store: @escaping @Sendable (String) throws(PublishingError) -> any ObjectStore) {
            self.name = name
            self.urlSchemes = urlSchemes
            self.store = store
        }
    }

    /// The protocols, in the order they are listed in messages.
    public private(set) var entries: [Entry] = []
    /// The object stores, in the order they are listed in messages.
    public private(set) var stores: [StoreEntry] = []

    /// An empty registry.
    public init() {}

    /// KeyFrameKit's destinations: RTMP, Icecast and SRT; directories (`file://`), S3 (`s3://`)
    /// and HTTP ingest points (`http://`, `https://`; WebDAV `dav://`, `davs://`) as stores (``registerAll()``).
    public static let standard: DestinationRegistry = {
        var registry = DestinationRegistry()
        registry.registerAll()
        return registry
    }()

    /// Registers KeyFrameKit's protocols, each carrying AAC, and its object stores (`file://`,
    /// `s3://`, `http[s]://`, `dav[s]://`): the one place that lists them. One already registered is not registered twice.
    public mutating func registerAll() {
        for entry in Self.builtIn where !entries.contains(where: { $0.scheme == entry.scheme }) { register(entry) }
        for entry in Self.builtInStores where !stores.contains(where: { $0.name == entry.name }) { register(entry) }
    }

    /// Registers the object store `entry`, replacing the store of its name where it stands, or
    /// after the others; of two stores that claim one URL scheme, the later one parses it.
    public mutating func register(_ entry: StoreEntry) {
        Self.replaceOrAppend(entry, in: &stores) { $0.name == entry.name }
    }

    /// `entry` in place of the first element of `list` that `matches`, or after them all.
    private static func replaceOrAppend<Element>(_ entry: Element, in list: inout [Element], where matches: (Element) -> Bool) {
        if let index = list.firstIndex(where: matches) {
            list[index] = entry
        } else {
            list.append(entry)
        }
    }

    /// The live protocol that parses URLs of `scheme`: the one registered last, when two claim it.
    public func entry(forScheme scheme: String) -> Entry? {
        entries.last { $0.urlSchemes.contains(scheme) }
    }

    /// Whether `text` is meant as an object store's URL rather than a file name: it has the
    /// form `scheme://…`, or starts with the scheme of a registered store and a colon
    /// (`file:relative`). ``store(for:)`` then makes the store, or says what is wrong with it.
    public func namesStore(_ text: String) -> Bool {
        let scheme = URLReference.scheme(of: text)
        guard !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }) else { return false }
        return text.contains("://") || stores.contains { $0.urlSchemes.contains(scheme) }
    }

    /// The object store `url` names.
    ///
    /// - Throws: ``PublishingError/Reason/invalidDestination`` for a scheme no store claims, or
    ///   a URL its store refuses.
    public func store(for url: String) throws(PublishingError) -> any ObjectStore {
        let scheme = URLReference.scheme(of: url)
        guard let entry = stores.last(where: { $0.urlSchemes.contains(scheme) }) else {
            let known = stores.flatMap(\.urlSchemes).map { "\($0)://" }.joined(separator: ", ")
            throw PublishingError(.invalidDestination, "\(scheme)://: no object store is registered for it; use \(known)")
        }
        return try entry.store(url)
    }

    /// The directory store: `file:///absolute/path` (RFC 8089 2: the host empty or
    /// `localhost`; the path percent-decoded into UTF-8, without NUL or an encoded `/`); S3
    /// (``s3(endpoint:profile:environment:readFile:)``); HTTP ingest and WebDAV
    /// (``/ObjectStorage/HTTPIngestStore``: `https://user:password@host/path`; WebDAV, making
    /// its collections, `davs://…`).
    static let builtInStores: [StoreEntry] = [
        StoreEntry(name: "file", urlSchemes: ["file"]) { url throws(PublishingError) in try directoryStore(url) },
        s3(),
        StoreEntry(name: "http", urlSchemes: ["http", "https", "dav", "davs"]) { url throws(PublishingError) in
            do { return try HTTPIngestStore(url: url) } catch { throw PublishingError(.invalidDestination, "\(error)") }
        },
    ]

    /// S3 and the stores that speak its API (``/ObjectStorage/S3Store``): `s3://bucket/prefix`,
    /// reached at `endpoint` (path-style; `nil`: the environment's `AWS_ENDPOINT_URL_S3` or
    /// `AWS_ENDPOINT_URL`, else Amazon S3), signed with the credentials of `profile` found in
    /// `environment` and the AWS shared files read by `readFile`
    /// (``/ObjectStorage/S3Credentials/resolve(profile:environment:readFile:)``), looked up when
    /// a URL is parsed, and again when S3 says they expired (`ExpiredToken`). By default the
    /// process environment and its files.
    public static func s3(endpoint: String? = nil, profile: String? = nil,
                          environment: @escaping @Sendable (String) -> String? = ProcessEnvironment.value(of:),
                          readFile: @escaping @Sendable (String) -> String? = ProcessEnvironment.text(ofFile:)) -> StoreEntry {
        StoreEntry(name: "s3", urlSchemes: ["s3"]) { url throws(PublishingError) in
            let endpoint = (endpoint ?? environment("AWS_ENDPOINT_URL_S3") ?? environment("AWS_ENDPOINT_URL")).flatMap { $0.isEmpty ? nil : $0 }
            do throws(ObjectStoreError) {
                // The URL and endpoint first: a mistake in them is said before any key is looked for.
                _ = try S3Store(url: url, endpoint: endpoint, credentials: S3Credentials(accessKeyID: "", secretAccessKey: ""), region: nil)
            } catch {
                throw PublishingError(.invalidDestination, "\(error)")
            }
            do throws(ObjectStoreError) {
                let found = try S3Credentials.resolve(profile: profile, environment: environment, readFile: readFile)
                var store = try S3Store(url: url, endpoint: endpoint, credentials: found.credentials, region: found.region)
                // Keys that expire are read again where they were found.
                store.credentialSource = { () throws(ObjectStoreError) in
                    try S3Credentials.resolve(profile: profile, environment: environment, readFile: readFile).credentials
                }
                return store
            } catch {
                throw PublishingError(.refused, "\(error)")
            }
        }
    }

    /// The ``/MediaCore/DirectoryStore`` a `file://` URL names; each refusal says what is wrong.
    static func directoryStore(_ url: String) throws(PublishingError) -> DirectoryStore {
        func refuse(_ why: String) -> PublishingError {
            PublishingError(.invalidDestination, "\(url): \(why); a file URL is file:///absolute/path")
        }
        let parts: URLReference
        do { parts = try URLReference(url) } catch { throw refuse("not a URL of the form file://…") }
        guard parts.host.isEmpty || parts.host.lowercased() == "localhost" else {
            throw refuse("the host \(parts.host) is not this machine (leave it empty, or localhost)")
        }
        guard parts.userInfo == nil, parts.port == nil else { throw refuse("a user or a port has no meaning here") }
        guard parts.query == nil, !parts.path.contains("#") else { throw refuse("a query or a fragment has no meaning here") }
        guard parts.path.hasPrefix("/"), parts.path.count > 1 else { throw refuse("no absolute path") }
        var components: [String] = []
        for segment in parts.path.split(separator: "/") {
            guard let bytes = PercentEncoding.decodedBytes(segment, invalid: .refused) else { throw refuse("'\(segment)' holds a '%' that escapes nothing") }
            guard !bytes.contains(0), !bytes.contains(UInt8(ascii: "/")) else { throw refuse("'\(segment)' decodes to a NUL or a '/'") }
            let name = String(decoding: bytes, as: UTF8.self)
            guard Array(name.utf8) == bytes else { throw refuse("'\(segment)' does not decode to UTF-8") }
            components.append(name)
        }
        return DirectoryStore(directory: FilePath("/" + components.joined(separator: "/")))
    }

    /// Registers `entry`, replacing the protocol of its scheme where it stands, or after the
    /// others; of two protocols that claim one URL scheme, the later one parses it.
    public mutating func register(_ entry: Entry) {
        Self.replaceOrAppend(entry, in: &entries) { $0.scheme == entry.scheme }
    }

    /// RTMP (FLV audio tags) carrying AAC; Icecast (ADTS, MP3, Ogg Opus) and SRT (MPEG-TS:
    /// ADTS, MP3, Opus) carrying AAC, MP3 and Opus.
    static let builtIn: [Entry] = [
        Entry(scheme: .rtmp, urlSchemes: ["rtmp", "rtmps"], codecs: [.aac]) { url throws(PublishingError) in try RTMPEndpoint(url: url) },
        Entry(scheme: .icecast, urlSchemes: ["icecast", "icecasts"], codecs: [.aac, .mp3, .opus]) { url throws(PublishingError) in
            try IcecastDestination(url: url)
        },
        Entry(scheme: .srt, urlSchemes: ["srt"], codecs: [.aac, .mp3, .opus]) { url throws(PublishingError) in try SRTEndpoint(url: url) },
    ]
}

extension IcecastDestination: LiveEndpoint {
    /// An Icecast session (HTTP PUT, or SOURCE) to this destination.
    public func makeSession(connect: @escaping TCPConnector, statistics: DestinationStatistics) -> any PublishingSession {
        IcecastSession(destination: self, connect: connect)
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}

/// A connection whose sent bytes are counted in a destination's statistics.
final class CountedConnection: ServerConnection {
    private let base: any ServerConnection
    private let statistics: DestinationStatistics

    init(_ base: any ServerConnection, statistics: DestinationStatistics) {
        self.base = base
        self.statistics = statistics
    }

    func send(_ bytes: [UInt8], deadline: ContinuousClock.Instant) throws(PublishingError) {
        try base.send(bytes, deadline: deadline)
        statistics.addBytes(bytes.count)
    }

    func receive(deadline: ContinuousClock.Instant) throws(PublishingError) -> [UInt8] { try base.receive(deadline: deadline) }
    func receiveAvailable() throws(PublishingError) -> [UInt8] { try base.receiveAvailable() }
    func close(graceful: Bool) { base.close(graceful: graceful) }
}
