import AACBitstream
@testable import Publishing
import RTMP
import Synchronization
import Testing

/// A server connection that plays an RTMP server from a script: it reads the client's chunks and
/// answers `connect`, `createStream` and `publish` as `publishAnswer` says.
final class RTMPScriptedConnection: ServerConnection {
    enum PublishAnswer: Sendable {
        /// `onStatus` `NetStream.Publish.Start`.
        case start
        /// `onStatus` of level `error` with `code` and `description`.
        case refuse(code: String, description: String)
        /// The connection ends after `connect` (nginx-rtmp on an unknown application).
        case closeAfterConnect
    }

    private struct State {
        var handshake: [UInt8] = []
        var handshakeDone = false
        var reader = RTMPChunkReader(maximumMessageLength: 1 << 24)
        var writer = RTMPChunkWriter()
        var inbound: [UInt8] = []
        var received: [RTMPMessage] = []
        var closed: Bool?
        var ended = false
    }

    private let state = Mutex(State())
    let answer: PublishAnswer

    init(answer: PublishAnswer) { self.answer = answer }

    /// The messages the client sent.
    var received: [RTMPMessage] { state.withLock { $0.received } }
    /// How the client closed the connection (graceful or not), if it did.
    var closedGracefully: Bool? { state.withLock { $0.closed } }

    /// Queues `bytes` for the client, as if the server sent them now.
    func push(_ body: (inout RTMPChunkWriter) -> [UInt8]) {
        state.withLock { $0.inbound += body(&$0.writer) }
    }

    func send(_ bytes: [UInt8], deadline: ContinuousClock.Instant) throws(PublishingError) {
        try state.withLock { (state: inout State) throws(PublishingError) in
            guard state.closed == nil, !state.ended else { throw PublishingError(.connectionLost, "closed") }
            var rest = bytes[...]
            if !state.handshakeDone {
                let needed = 1 + 2 * RTMPHandshake.packetSize - state.handshake.count
                state.handshake += rest.prefix(needed)
                rest = rest.dropFirst(needed)
                if state.handshake.count == 1 + RTMPHandshake.packetSize {
                    // S0, S1 (zeros), S2 (C1 echoed).
                    state.inbound += [3] + [UInt8](repeating: 0, count: RTMPHandshake.packetSize) + state.handshake.dropFirst()
                }
                state.handshakeDone = state.handshake.count == 1 + 2 * RTMPHandshake.packetSize
            }
            state.reader.append(rest)
            do {
                while let message = try state.reader.nextMessage() {
                    state.received.append(message)
                    guard message.type == .commandAMF0, let command = try? RTMPCommand(payload: message.payload) else { continue }
                    respond(to: command, in: &state)
                }
            } catch {
                throw PublishingError(.protocolViolation, "the client sent bad chunks: \(error)")
            }
        }
    }

    private func respond(to command: RTMPCommand, in state: inout State) {
        func status(_ level: String, _ code: String, _ description: String) -> AMF0Value {
            .object([AMF0Property("level", .string(level)), AMF0Property("code", .string(code)), AMF0Property("description", .string(description))])
        }
        switch command.name {
        case "connect":
            if case .closeAfterConnect = answer {
                state.ended = true
                return
            }
            state.inbound += state.writer.write(RTMPControlMessage.windowAcknowledgementSize(5_000_000).message, chunkStreamID: 2)
            state.inbound += state.writer.write(RTMPCommand(name: "_result", transactionID: command.transactionID,
                                                            arguments: [status("status", "NetConnection.Connect.Success", "Connection succeeded.")]).message(),
                                                chunkStreamID: 3)
        case "createStream":
            state.inbound += state.writer.write(RTMPCommand(name: "_result", transactionID: command.transactionID, arguments: [.number(1)]).message(),
                                                chunkStreamID: 3)
        case "publish":
            let info = switch answer {
            case .start: status("status", "NetStream.Publish.Start", "Start publishing")
            case .refuse(let code, let description): status("error", code, description)
            case .closeAfterConnect: AMF0Value.null
            }
            state.inbound += state.writer.write(RTMPCommand(name: "onStatus", transactionID: 0, arguments: [info]).message(streamID: 1),
                                                chunkStreamID: 5)
        default:
            break
        }
    }

    func receive(deadline: ContinuousClock.Instant) throws(PublishingError) -> [UInt8] {
        try state.withLock { (state: inout State) throws(PublishingError) in
            if !state.inbound.isEmpty {
                defer { state.inbound = [] }
                return state.inbound
            }
            if state.ended || state.closed != nil { throw PublishingError(.connectionLost, "127.0.0.1:1935: the server closed the connection") }
            throw PublishingError(.timedOut, "127.0.0.1:1935: no answer")
        }
    }

    func receiveAvailable() throws(PublishingError) -> [UInt8] {
        state.withLock { state in
            defer { state.inbound = [] }
            return state.inbound
        }
    }

    func close(graceful: Bool) {
        state.withLock { $0.closed = $0.closed ?? graceful }
    }
}

@Suite("RTMPSession over a scripted server")
struct RTMPServerTests {
    static let url = "rtmp://127.0.0.1/live/secretkey?token=abc"

    static func stream() throws -> PublishedStream {
        PublishedStream(audioSpecificConfig: try AudioSpecificConfig(sampleRate: 48000, channelCount: 2),
                        sampleRate: 48000, channelCount: 2, bitrate: 128_000, title: "Radio")
    }

    static func session(_ connection: RTMPScriptedConnection) throws -> RTMPSession {
        try RTMPSession(destination: url) { (_: ContinuousClock.Instant) throws(PublishingError) -> any ServerConnection in connection }
    }

    static var soon: ContinuousClock.Instant { .now + .seconds(5) }

    @Test("open, frames on the sample clock, a ping answered, finish with FCUnpublish and deleteStream")
    func publishes() throws {
        let connection = RTMPScriptedConnection(answer: .start)
        let session = try Self.session(connection)
        try session.open(Self.stream(), deadline: Self.soon)
        for index in 0..<3 {
            try session.send(frame: [0x21, UInt8(index)][...], timestamp: 96_000 + Int64(index) * 1024, deadline: Self.soon)
        }
        connection.push { $0.write(RTMPControlMessage.userControl(.pingRequest(42)).message, chunkStreamID: 2) }
        try session.send(frame: [0x21, 3][...], timestamp: 96_000 + 3 * 1024, deadline: Self.soon)
        try session.update(title: "Next", deadline: Self.soon)
        try session.finish(deadline: Self.soon)

        let received = connection.received
        let audio = received.filter { $0.type == .audio }
        #expect(audio.first?.payload == [0xAF, 0x00, 0x11, 0x90]) // AAC LC, 48 kHz, stereo
        #expect(audio.dropFirst().map(\.timestamp) == [2000, 2021, 2042, 2064])
        #expect(audio.dropFirst().map(\.payload) == [[0xAF, 1, 0x21, 0], [0xAF, 1, 0x21, 1], [0xAF, 1, 0x21, 2], [0xAF, 1, 0x21, 3]])
        #expect(received.contains(RTMPControlMessage.userControl(.pingResponse(42)).message))
        let commands = received.filter { $0.type == .commandAMF0 }.compactMap { try? RTMPCommand(payload: $0.payload) }
        #expect(commands.map(\.name) == ["connect", "releaseStream", "FCPublish", "createStream", "publish", "FCUnpublish", "deleteStream"])
        #expect(received.filter { $0.type == .dataAMF0 }.count == 2)
        #expect(connection.closedGracefully == true)
    }

    @Test("a name already publishing is refused for good, in the server's words, the key masked")
    func alreadyPublishing() throws {
        let connection = RTMPScriptedConnection(answer: .refuse(code: "NetStream.Publish.BadName", description: "Already publishing"))
        let session = try Self.session(connection)
        #expect {
            try session.open(Self.stream(), deadline: Self.soon)
        } throws: { error in
            guard let error = error as? PublishingError else { return false }
            return error.reason == .nameInUse && error.isPermanent
                && error.message == "rtmp://127.0.0.1/live/****: the server refused the stream name: already publishing"
        }
        #expect(connection.closedGracefully == false)
    }

    @Test("the stream key is masked in the server's words too")
    func keyMaskedInServerWords() throws {
        let connection = RTMPScriptedConnection(answer: .refuse(code: "NetStream.Publish.Denied", description: "stream live/secretkey is busy"))
        let session = try Self.session(connection)
        let stream = try Self.stream()
        do {
            try session.open(stream, deadline: Self.soon)
            Issue.record("opened")
        } catch {
            #expect(error.reason == .refused)
            #expect(!error.message.contains("secretkey") && !error.message.contains("token"))
            #expect(error.message == "rtmp://127.0.0.1/live/****: the server refused to let us publish: stream live/**** is busy")
        }
    }

    @Test("a connection closed after connect is passing, and names the application")
    func closedAfterConnect() throws {
        let session = try Self.session(RTMPScriptedConnection(answer: .closeAfterConnect))
        let stream = try Self.stream()
        do {
            try session.open(stream, deadline: Self.soon)
            Issue.record("opened")
        } catch {
            #expect(error.reason == .connectionLost && !error.isPermanent)
            #expect(error.message.hasPrefix("rtmp://127.0.0.1/live/****: the server closed the connection after `connect`"))
            #expect(error.message.contains("\"live\""))
        }
    }

    @Test("an error status while publishing fails the next frame; a bad URL is an invalid destination")
    func errorWhilePublishing() throws {
        let connection = RTMPScriptedConnection(answer: .start)
        let session = try Self.session(connection)
        try session.open(Self.stream(), deadline: Self.soon)
        connection.push {
            $0.write(RTMPCommand(name: "onStatus", transactionID: 0, arguments: [.object([
                AMF0Property("level", .string("error")), AMF0Property("code", .string("NetStream.Publish.BadName")),
                AMF0Property("description", .string("Already publishing")),
            ])]).message(streamID: 1), chunkStreamID: 5)
        }
        do {
            try session.send(frame: [0x21][...], timestamp: 0, deadline: Self.soon)
            Issue.record("sent")
        } catch {
            #expect(error.reason == .nameInUse)
        }
        #expect(connection.closedGracefully == false)
        #expect(throws: PublishingError.self) { try session.send(frame: [0x21][...], timestamp: 1024, deadline: Self.soon) }

        #expect {
            _ = try RTMPSession(destination: "rtmp://host/live") { (_: ContinuousClock.Instant) throws(PublishingError) -> any ServerConnection in connection }
        } throws: { error in
            (error as? PublishingError)?.reason == .invalidDestination
        }
    }
}
