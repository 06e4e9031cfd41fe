import KeyFrameKit
import Synchronization

// A protocol that KeyFrameKit does not have, written against the public API alone:
// `null://NAME[?key=SECRET]` takes any codec's packets and counts them.

extension PublishingDestination.Scheme {
    /// The null protocol.
    static let null = PublishingDestination.Scheme("null")
}

extension DestinationRegistry {
    /// KeyFrameKit's protocols and `null://`.
    static let withNull: DestinationRegistry = {
        var registry = DestinationRegistry.standard
        registry.register(Entry(scheme: .null, urlSchemes: ["null"], codecs: []) { url throws(PublishingError) in try NullEndpoint(url: url) })
        // The same counter behind a protocol that, like KeyFrameKit's, carries AAC alone.
        registry.register(Entry(scheme: .init("aaconly"), urlSchemes: ["aaconly"], codecs: [.aac]) { url throws(PublishingError) in
            try NullEndpoint(url: "null://" + url.dropFirst("aaconly://".count))
        })
        return registry
    }()
}

/// What each null destination received, by name.
struct NullReception: Sendable, Equatable {
    var codec: AudioCodecID?
    var frames = 0
    var bytes = 0
    var lastTimestamp: Int64 = -1
    var finished = false

    static let byName = Mutex<[String: NullReception]>([:])
}

/// A parsed `null://` URL.
struct NullEndpoint: LiveEndpoint {
    let name: String
    let maskedURL: String
    var host: String { "" }
    var port: Int { 0 }

    init(url: String) throws(PublishingError) {
        let rest = url.dropFirst("null://".count)
        let parts = rest.split(separator: "?", maxSplits: 1)
        guard let name = parts.first, !name.isEmpty else { throw PublishingError(.invalidDestination, "null://: give a name") }
        self.name = String(name)
        let query = parts.count > 1 ? parts[1] : nil
        maskedURL = "null://\(name)" + (query.map { "?" + $0.split(separator: "&").map { $0.hasPrefix("key=") ? "key=****" : String($0) }.joined(separator: "&") } ?? "")
    }

    func makeSession(connect: @escaping TCPConnector, statistics: DestinationStatistics) -> any PublishingSession {
        NullSession(name: name)
    }
}

/// Counts what it is sent.
final class NullSession: PublishingSession {
    let name: String
    init(name: String) { self.name = name }

    func open(_ stream: PublishedStream, deadline: ContinuousClock.Instant) throws(PublishingError) {
        NullReception.byName.withLock { $0[name, default: NullReception()].codec = stream.format.codec }
    }

    func send(frame: ArraySlice<UInt8>, timestamp: Int64, deadline: ContinuousClock.Instant) throws(PublishingError) {
        NullReception.byName.withLock {
            $0[name, default: NullReception()].frames += 1
            $0[name, default: NullReception()].bytes += frame.count
            $0[name, default: NullReception()].lastTimestamp = timestamp
        }
    }

    func finish(deadline: ContinuousClock.Instant) throws(PublishingError) {
        NullReception.byName.withLock { $0[name, default: NullReception()].finished = true }
    }

    func abort() {}
}
