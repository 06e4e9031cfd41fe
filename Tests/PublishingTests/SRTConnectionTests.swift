import Foundation
@testable import Publishing
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `SRTConnection` against srt-live-transmit (srt-tools) as the listener on a loopback port,
/// writing what arrives to its standard output; and `SRTDestination`'s parsing and masking.
@Suite(.blocking, .serialized)
struct SRTConnectionTests {
    // MARK: - Against srt-live-transmit

    /// The linger claim. The listener holds each packet for its latency (300 ms here, more than
    /// our 120: the larger one is negotiated) before writing it out, and drops what it holds when
    /// the connection closes: closing right after the last send (SRTO_LINGER alone returns at
    /// once on loopback, where everything is acknowledged within a millisecond) loses the last
    /// 0.3 s, about 210 packets at this rate. A graceful close waits for the acknowledgements
    /// and then the negotiated latency, so every packet arrives.
    @Test func everyPacketArrivesInOrderIncludingTheTail() throws {
        let port = try Self.freeUDPPort()
        let listener = try Self.listener(port: port, latency: 300)
        defer { listener.stop(grace: .milliseconds(200)) }
        let destination = try SRTDestination(url: "srt://127.0.0.1:\(port)?latency=120")
        let connection = try SRTConnection.connect(to: destination, deadline: .now + .seconds(5))
        let packets = Self.packets(2000)
        // Live pacing: about 7 packets every 10 ms (~1 Mb/s), in sends of 1 to 13 packets, so
        // that messages straddle sends; 2000 = 285 × 7 + 5 leaves a remainder for the close.
        var sent = 0
        var sizes = SplitMix64(state: 7)
        let start = ContinuousClock.now
        let total = packets.count / 188
        while sent < total {
            let count = min(Int(sizes.next() % 13) + 1, total - sent)
            try connection.send(Array(packets[sent * 188..<(sent + count) * 188]), deadline: .now + .seconds(2))
            sent += count
            let due = start + .microseconds(sent * 10_000 / 7)
            if due > .now { Subprocess.sleep(due - .now) }
        }
        let closeStart = ContinuousClock.now
        connection.close(graceful: true)
        let closeTime = ContinuousClock.now - closeStart
        let finished = try listener.wait(timeout: .seconds(15))
        let received = [UInt8](finished.result.outputData)
        #expect(received.count == packets.count, "received \(received.count) of \(packets.count) bytes; close took \(closeTime)")
        #expect(received == packets, "first difference at byte \(zip(received, packets).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(received.count, packets.count))")
        #expect(closeTime >= .milliseconds(300) && closeTime < .seconds(3), "close took \(closeTime)")
    }

    @Test func aPassphraseOnBothSidesWorks() throws {
        let port = try Self.freeUDPPort()
        let passphrase = "correct-horse-battery"
        let listener = try Self.listener(port: port, extra: "&passphrase=\(passphrase)&pbkeylen=32")
        defer { listener.stop(grace: .milliseconds(200)) }
        let destination = try SRTDestination(url: "srt://127.0.0.1:\(port)?passphrase=\(passphrase)&pbkeylen=32")
        let connection = try SRTConnection.connect(to: destination, deadline: .now + .seconds(5))
        let packets = Self.packets(700)
        for chunk in stride(from: 0, to: packets.count, by: 188 * 10) {
            try connection.send(Array(packets[chunk..<min(chunk + 188 * 10, packets.count)]), deadline: .now + .seconds(2))
            Subprocess.sleep(.milliseconds(10))
        }
        connection.close(graceful: true)
        let received = [UInt8](try listener.wait(timeout: .seconds(15)).result.outputData)
        #expect(received == packets, "received \(received.count) of \(packets.count) bytes")
    }

    @Test func aWrongPassphraseIsRefusedWithoutSayingIt() throws {
        let port = try Self.freeUDPPort()
        let listener = try Self.listener(port: port, extra: "&passphrase=the-listeners-secret")
        defer { listener.stop(grace: .milliseconds(200)) }
        let wrong = "not-the-right-one-42"
        let destination = try SRTDestination(url: "srt://127.0.0.1:\(port)?passphrase=\(wrong)&streamid=live/secret-key")
        let start = ContinuousClock.now
        let error = #expect(throws: PublishingError.self) {
            _ = try SRTConnection.connect(to: destination, deadline: .now + .seconds(5))
        }
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(error?.reason == .refused, "\(String(describing: error))")
        #expect(error?.isPermanent == true)
        #expect(error?.message.contains("passphrase") == true, "\(String(describing: error))")
        #expect(error?.message.contains(wrong) == false)
        #expect(error?.message.contains("secret-key") == false)
    }

    @Test func aMissingPassphraseIsRefusedInWords() throws {
        let port = try Self.freeUDPPort()
        let listener = try Self.listener(port: port, extra: "&passphrase=the-listeners-secret")
        defer { listener.stop(grace: .milliseconds(200)) }
        let destination = try SRTDestination(url: "srt://127.0.0.1:\(port)")
        let error = #expect(throws: PublishingError.self) {
            _ = try SRTConnection.connect(to: destination, deadline: .now + .seconds(5))
        }
        #expect(error?.reason == .refused, "\(String(describing: error))")
        #expect(error?.message.contains("requires a passphrase") == true, "\(String(describing: error))")
    }

    @Test func noListenerIsATransientErrorWithinTheDeadline() throws {
        let port = try Self.freeUDPPort()
        let destination = try SRTDestination(url: "srt://127.0.0.1:\(port)")
        let start = ContinuousClock.now
        let error = #expect(throws: PublishingError.self) {
            _ = try SRTConnection.connect(to: destination, deadline: .now + .milliseconds(1500))
        }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed < .milliseconds(2500), "took \(elapsed)")
        #expect(error?.isPermanent == false, "\(String(describing: error))")
        #expect(error?.reason == .timedOut || error?.reason == .connectionFailed, "\(String(describing: error))")
    }

    @Test func localhostTriesEveryAddress() throws {
        // The listener is on IPv4 only; `localhost` may resolve to ::1 first.
        let port = try Self.freeUDPPort()
        let listener = try Self.listener(port: port)
        defer { listener.stop(grace: .milliseconds(200)) }
        let connection = try SRTConnection.connect(to: SRTDestination(url: "srt://localhost:\(port)"), deadline: .now + .seconds(5))
        connection.close(graceful: false)
    }

    @Test func aListenerKilledMidStreamMakesSendThrowSoon() throws {
        let port = try Self.freeUDPPort()
        let listener = try Self.listener(port: port)
        let connection = try SRTConnection.connect(to: SRTDestination(url: "srt://127.0.0.1:\(port)"), deadline: .now + .seconds(5))
        defer { connection.close(graceful: false) }
        let packets = Self.packets(7 * 50)
        for message in stride(from: 0, to: packets.count, by: 1316) {
            try connection.send(Array(packets[message..<message + 1316]), deadline: .now + .seconds(1))
            Subprocess.sleep(.milliseconds(10))
        }
        listener.send(SIGKILL)
        _ = try? listener.wait(timeout: .seconds(5))
        let killed = ContinuousClock.now
        var failure: PublishingError?
        while failure == nil && ContinuousClock.now - killed < .seconds(15) {
            do {
                try connection.send(Array(packets[0..<1316]), deadline: .now + .seconds(1))
                Subprocess.sleep(.milliseconds(10))
            } catch {
                failure = error
            }
        }
        let elapsed = ContinuousClock.now - killed
        #expect(failure != nil)
        #expect(failure?.isPermanent == false, "\(String(describing: failure))")
        #expect(failure?.reason == .connectionLost, "\(String(describing: failure))")
        // libsrt's peer-idle timeout is 5 s.
        #expect(elapsed < .seconds(8), "send went on for \(elapsed) after the listener died")
        #expect(throws: PublishingError.self) { _ = try connection.receiveAvailable() }
    }

    @Test func receiveWaitsForTheDeadlineAndCloseIsIdempotent() throws {
        let port = try Self.freeUDPPort()
        let listener = try Self.listener(port: port)
        defer { listener.stop(grace: .milliseconds(200)) }
        let connection = try SRTConnection.connect(to: SRTDestination(url: "srt://127.0.0.1:\(port)"), deadline: .now + .seconds(5))
        #expect(try connection.receiveAvailable().isEmpty)
        let start = ContinuousClock.now
        let timedOut = #expect(throws: PublishingError.self) { _ = try connection.receive(deadline: .now + .milliseconds(200)) }
        #expect(timedOut?.reason == .timedOut)
        #expect(ContinuousClock.now - start >= .milliseconds(200))
        // A close from another thread ends a waiting receive.
        let closer = Thread { Subprocess.sleep(.milliseconds(100)); connection.close(graceful: false) }
        closer.start()
        let lost = #expect(throws: PublishingError.self) { _ = try connection.receive(deadline: .now + .seconds(5)) }
        #expect(lost?.reason == .connectionLost)
        #expect(ContinuousClock.now - start < .seconds(2))
        connection.close(graceful: true)
        connection.close(graceful: false)
        let closed = #expect(throws: PublishingError.self) { try connection.send([0x47], deadline: .now + .seconds(1)) }
        #expect(closed?.reason == .connectionLost)
    }

    // MARK: - URLs

    @Test func parsesEveryParameter() throws {
        let destination = try SRTDestination(
            url: "srt://ingest.example.com:9000?streamid=%23!::r=live/show,m=publish&latency=250&passphrase=abc%26def%3D123&pbkeylen=24&mode=caller")
        #expect(destination.host == "ingest.example.com")
        #expect(destination.port == 9000)
        #expect(destination.streamID == "#!::r=live/show,m=publish")
        #expect(destination.latency == .milliseconds(250))
        #expect(destination.passphrase == "abc&def=123")
        #expect(destination.keyLength == 24)
    }

    @Test func defaultsAndLiteralCharacters() throws {
        let destination = try SRTDestination(url: "SRT://[::1]:5000/?streamid=#!::r=live,m=publish,s=key+1")
        #expect(destination.host == "::1")
        #expect(destination.port == 5000)
        #expect(destination.streamID == "#!::r=live,m=publish,s=key+1")
        #expect(destination.latency == SRTDestination.defaultLatency)
        #expect(destination.passphrase == nil)
        #expect(destination.keyLength == nil)
        #expect(destination.endpoint == "[::1]:5000")
    }

    @Test func descriptionMasksTheSecrets() throws {
        let destination = try SRTDestination(url: "srt://host:9000?streamid=live/key-123&passphrase=very-secret-words")
        #expect(destination.description == "srt://host:9000?streamid=****&latency=120&passphrase=****")
        #expect(!destination.description.contains("secret"))
        #expect(!destination.description.contains("key-123"))
        #expect(try SRTDestination(url: "srt://[::1]:9000").description == "srt://[::1]:9000?latency=120")
    }

    @Test(arguments: [
        ("rtmp://host:9000", "not an srt:// URL"),
        ("srt://host", "needs a port"),
        ("srt://:9000", "needs a host"),
        ("srt://host:0", "1 to 65535"),
        ("srt://host:port", "must be a number"),
        ("srt://host:9000/live", "no path"),
        ("srt://user:pw@host:9000", "no user"),
        ("srt://::1:9000", "in brackets"),
        ("srt://host:9000?mode=listener", "caller only"),
        ("srt://host:9000?mode=rendezvous", "caller only"),
        ("srt://host:9000?latency=fast", "milliseconds"),
        ("srt://host:9000?latency=-5", "milliseconds"),
        ("srt://host:9000?passphrase=short", "10 to 79"),
        ("srt://host:9000?passphrase=long-enough-secret&pbkeylen=20", "16, 24 or 32"),
        ("srt://host:9000?pbkeylen=16", "needs a passphrase"),
        ("srt://host:9000?latency=1&latency=2", "twice"),
        ("srt://host:9000?laterncy=100", "unknown SRT parameter"),
        ("srt://host:9000?streamid=%zz", "%-escape"),
    ])
    func refusesBadURLs(url: String, words: String) {
        let error = #expect(throws: PublishingError.self) { _ = try SRTDestination(url: url) }
        #expect(error?.reason == .invalidDestination)
        #expect(error?.message.contains(words) == true, "\(String(describing: error))")
    }

    @Test func aTooShortPassphraseIsNotShown() {
        let error = #expect(throws: PublishingError.self) {
            _ = try SRTDestination(url: "srt://host:9000?passphrase=tiny-pw")
        }
        #expect(error?.message.contains("tiny-pw") == false)
        #expect(error?.message.contains("7 bytes") == true, "\(String(describing: error))")
    }

    @Test func rejectionsInWords() {
        let destination = try! SRTDestination(url: "srt://host:9000?streamid=live/key-123&passphrase=very-secret-words")
        let conflict = SRTRejection.error(code: 1409, destination: destination)
        #expect(conflict.reason == .nameInUse && conflict.isPermanent)
        #expect(conflict.message.contains("already being published"))
        #expect(!conflict.message.contains("key-123"))
        #expect(SRTRejection.error(code: 1503, destination: destination).isPermanent == false)
        #expect(SRTRejection.error(code: 1403, destination: destination).isPermanent)
        #expect(SRTRejection.error(code: 2042, destination: destination).reason == .refused)
    }

    // MARK: - Helpers

    /// `count` 188-byte TS packets: sync byte, a 16-bit counter, then bytes that follow from it.
    static func packets(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count * 188)
        for index in 0..<count {
            bytes.append(0x47)
            bytes.append(UInt8(index >> 8 & 0xFF))
            bytes.append(UInt8(index & 0xFF))
            for offset in 3..<188 { bytes.append(UInt8(truncatingIfNeeded: index &* 31 &+ offset)) }
        }
        return bytes
    }

    static func listener(port: Int, latency: Int = 120, extra: String = "") throws -> RunningProcess {
        try SRTListener.start(port: port, latency: latency, extra: extra)
    }

    static func freeUDPPort() throws -> Int { try LocalPort.freeUDP() }
}
