import Foundation
import MediaCore
import Publishing
import Synchronization
import Testing

/// The destination registry from outside: a protocol registered in a copy parses its URLs,
/// masks them, takes the codecs it says, and gets every frame even when the input has ended
/// before its thread first connects.
@Suite struct DestinationRegistryTests {
    /// Frames received, by session name.
    static let received = Mutex<[String: Int]>([:])

    struct CountingEndpoint: LiveEndpoint {
        let name: String
        var maskedURL: String { "count://\(name)" }
        var host: String { "" }
        var port: Int { 0 }
        func makeSession(connect: @escaping TCPConnector, statistics: DestinationStatistics) -> any PublishingSession {
            CountingSession(name: name)
        }
    }

    final class CountingSession: PublishingSession {
        let name: String
        init(name: String) { self.name = name }
        func open(_ stream: PublishedStream, deadline: ContinuousClock.Instant) throws(PublishingError) {
            DestinationRegistryTests.received.withLock { $0[name] = 0 }
        }
        func send(frame: ArraySlice<UInt8>, timestamp: Int64, deadline: ContinuousClock.Instant) throws(PublishingError) {
            DestinationRegistryTests.received.withLock { $0[name, default: 0] += 1 }
        }
        func finish(deadline: ContinuousClock.Instant) throws(PublishingError) {}
        func abort() {}
    }

    static let registry: DestinationRegistry = {
        var registry = DestinationRegistry.standard
        registry.register(DestinationRegistry.Entry(scheme: .init("count"), urlSchemes: ["count"], codecs: [AudioCodecID("toy")]) {
            url throws(PublishingError) in CountingEndpoint(name: String(url.dropFirst("count://".count)))
        })
        return registry
    }()

    static func packet(_ index: Int, codec: AudioCodecID) -> MediaSample {
        MediaSample(data: [UInt8(index)], presentationTime: MediaTime(value: Int64(index) * 1024, timescale: 48_000),
                    duration: MediaTime(value: 1024, timescale: 48_000),
                    format: .audio(EncodedAudioFormat(codec: codec, sampleRate: 48_000, channelCount: 2, framesPerPacket: 1024,
                                                      decoderConfiguration: [])))
    }

    @Test("file:// names a directory store; each other form is refused saying what is wrong")
    func fileURLs() throws {
        let registry = DestinationRegistry.standard
        for (url, path) in [("file:///srv/www/show", "/srv/www/show"), ("FILE://localhost/a%20b/c%C3%A9", "/a b/cé")] {
            #expect(registry.namesStore(url))
            let store = try registry.store(for: url)
            #expect(store.description == path, "\(url)")
        }
        for text in ["show", "live/show", "./file:x", "c:dir"] { #expect(!registry.namesStore(text), "\(text)") }
        for (url, why) in [("file://host/x", "the host host is not this machine"), ("file:relative", "not a URL"),
                           ("file:///a?x=1", "a query or a fragment"), ("file:///a#x", "a query or a fragment"),
                           ("file:///a%00b", "NUL or a '/'"), ("file:///a%2Fb", "NUL or a '/'"), ("file:///a%zz", "escapes nothing"),
                           ("file:///a%FF", "does not decode to UTF-8"), ("file:///", "no absolute path"),
                           ("file://u@/a", "a user or a port"), ("webdav://host/x", "no object store is registered")] {
            #expect(registry.namesStore(url), "\(url)")
            do {
                _ = try registry.store(for: url)
                Issue.record("\(url) was taken")
            } catch {
                #expect("\(error)".contains(why), "\(url): \(error)")
            }
        }
    }

    @Test func aShortInputFinishedAtOnceStillReachesAFirstConnection() throws {
        for _ in 0..<20 {
            let name = UUID().uuidString
            let destination = try PublishingDestination.parse("count://\(name)", registry: Self.registry)
            var sink = LiveDestination(destination)
            for index in 0..<5 { try sink.write(Self.packet(index, codec: AudioCodecID("toy"))) }
            try sink.finish()
            #expect(Self.received.withLock { $0[name] } == 5)
            #expect(sink.statistics.snapshot.framesSent == 5)
        }
    }

    @Test func aProtocolRefusesACodecItDoesNotCarryByName() throws {
        let destination = try PublishingDestination.parse("count://refusing", registry: Self.registry)
        var sink = LiveDestination(destination)
        #expect {
            try sink.write(Self.packet(0, codec: .aac))
        } throws: { error in
            "\(error)".contains("count carries toy, not aac")
        }
        sink.cancel()
    }

    @Test func aLaterProtocolWinsAURLSchemeAndTheStandardOnesStayUnknownToIt() throws {
        #expect(throws: PublishingError.self) { _ = try PublishingDestination.parse("count://x") }
        var registry = Self.registry
        registry.register(DestinationRegistry.Entry(scheme: .init("mine"), urlSchemes: ["rtmp"], codecs: []) { url throws(PublishingError) in
            CountingEndpoint(name: "rtmp-claimed")
        })
        let claimed = try PublishingDestination.parse("rtmp://example.com/live/key", registry: registry)
        #expect(claimed.scheme == .init("mine"))
        #expect(try PublishingDestination.parse("rtmp://example.com/live/key").scheme == .rtmp)
    }
}
