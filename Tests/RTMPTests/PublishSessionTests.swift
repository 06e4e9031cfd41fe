import RTMP
import Testing

@Suite("The publishing state machine against a scripted server")
struct PublishSessionTests {
    static let config: [UInt8] = [0x12, 0x10] // AAC LC, 44.1 kHz, stereo

    static func session(_ url: String = "rtmp://127.0.0.1/live/key?token=1", title: String? = "Test") throws -> RTMPPublishSession {
        RTMPPublishSession(url: try RTMPURL(url), audioSpecificConfig: config,
                           metadata: RTMPStreamMetadata(sampleRate: 44100, channelCount: 2, bitrate: 128_000, title: title),
                           handshake: RTMPHandshake(time: 0, random: Array(repeating: 0x5A, count: 1528)))
    }

    /// Drives `session` with `server` up to publishing; returns what the client sent after the handshake.
    static func publish(_ session: inout RTMPPublishSession, _ server: inout ScriptedRTMPServer) throws -> [RTMPMessage] {
        var sent = try server.read(session.start())
        #expect(session.state == .handshaking)
        let c2 = try session.receive(server.s0s1)
        #expect(c2 == server.s1)
        sent += try server.read(c2)
        #expect(session.takeEvents() == [])
        // S2, then what nginx-rtmp sends after the handshake, and the answer to connect.
        var bytes = server.s2
        bytes += server.control(.windowAcknowledgementSize(5_000_000))
        bytes += server.control(.setPeerBandwidth(windowSize: 5_000_000, limitType: 0))
        bytes += server.writer.setChunkSize(4000)
        sent += try server.read(session.receive(bytes))
        #expect(session.state == .connecting)
        sent += try server.read(session.receive(server.command("_result", 1, .object([AMF0Property("fmsVer", .string("FMS/3,0,1,123"))]),
                                                               [.object([AMF0Property("level", .string("status")),
                                                                         AMF0Property("code", .string("NetConnection.Connect.Success"))])])))
        #expect(session.state == .creatingStream)
        sent += try server.read(session.receive(server.command("_result", 4, .null, [.number(1)])))
        #expect(session.state == .startingPublish)
        #expect(session.streamID == 1)
        sent += try server.read(session.receive(server.onStatus("status", "NetStream.Publish.Start", "Start publishing")))
        #expect(session.state == .publishing)
        return sent
    }

    @Test("the full flow: handshake, connect, createStream, publish, metadata, sequence header, frames, finish")
    func fullFlow() throws {
        var session = try Self.session()
        var server = ScriptedRTMPServer()
        let sent = try Self.publish(&session, &server)
        #expect(session.takeEvents() == [.handshakeDone, .connected, .streamCreated(1), .publishing])

        // C1: time, four zero bytes, random; C2 echoes S1.
        #expect(server.c1.count == 1536 && Array(server.c1[4..<8]) == [0, 0, 0, 0] && server.c1[8] == 0x5A)
        #expect(server.c2 == server.s1)

        // Set Chunk Size 4096 first, then a Window Acknowledgement Size for the hard peer bandwidth.
        #expect(sent.first == RTMPControlMessage.setChunkSize(4096).message)
        #expect(sent.contains(RTMPControlMessage.windowAcknowledgementSize(5_000_000).message))
        let commands = try ScriptedRTMPServer.commands(sent)
        #expect(commands.map(\.name) == ["connect", "releaseStream", "FCPublish", "createStream", "publish"])
        #expect(commands.map(\.transactionID) == [1, 2, 3, 4, 5])
        #expect(commands[0].commandObject["app"] == .string("live"))
        #expect(commands[0].commandObject["type"] == .string("nonprivate"))
        #expect(commands[0].commandObject["tcUrl"] == .string("rtmp://127.0.0.1/live"))
        #expect(commands[1].arguments == [.string("key?token=1")])
        #expect(commands[2].arguments == [.string("key?token=1")])
        #expect(commands[4].arguments == [.string("key?token=1"), .string("live")])
        #expect(sent.last(where: { $0.type == .commandAMF0 })?.streamID == 1)

        // @setDataFrame, then the AAC sequence header.
        let data = try #require(sent.first { $0.type == .dataAMF0 })
        var reader = AMF0Reader(data.payload)
        let values = try reader.readAll()
        #expect(values.prefix(2) == [.string("@setDataFrame"), .string("onMetaData")])
        #expect(values[2]["title"] == .string("Test"))
        let audio = sent.filter { $0.type == .audio }
        #expect(audio.map(\.payload) == [[0xAF, 0x00, 0x12, 0x10]])
        #expect(audio[0].streamID == 1 && audio[0].timestamp == 0)

        // Frames: timestamps from the stream's sample clock (10 s in: 441000 samples at 44.1 kHz).
        var frames: [RTMPMessage] = []
        for (index, sample) in [Int64(441_000), 442_024, 443_048, 444_072].enumerated() {
            frames += try server.read(session.audio(frame: [UInt8(index), 1, 2][...], sampleTime: sample))
        }
        #expect(frames.map(\.timestamp) == [10000, 10023, 10046, 10069])
        #expect(frames.map(\.payload) == [[0xAF, 1, 0, 1, 2], [0xAF, 1, 1, 1, 2], [0xAF, 1, 2, 1, 2], [0xAF, 1, 3, 1, 2]])
        #expect(frames.allSatisfy { $0.streamID == 1 && $0.type == .audio })

        // A new title, then the end.
        let update = try server.read(session.updateTitle("Later"))
        #expect(try AMF0Reader(update[0].payload).readAllCopy()[2]["title"] == .string("Later"))
        let end = try ScriptedRTMPServer.commands(server.read(session.finish()))
        #expect(end.map(\.name) == ["FCUnpublish", "deleteStream"])
        #expect(end[0].arguments == [.string("key?token=1")])
        #expect(end[1].arguments == [.number(1)])
        #expect(session.state == .finished)
        #expect(throws: RTMPError.notPublishing(state: "finished")) { try session.audio(frame: [1][...], sampleTime: 0) }
    }

    @Test("timestamps never go backwards, and wrap at 2³² through extended timestamps")
    func timestamps() throws {
        var session = try Self.session()
        var server = ScriptedRTMPServer()
        _ = try Self.publish(&session, &server)
        // The first sample at 44.1 kHz of millisecond `ms`.
        func sample(_ ms: Int64) -> Int64 { (ms * 441 + 9) / 10 }
        var stamps: [UInt32] = []
        // 1023 samples are 23.19 ms: rounded down; a frame before the last stays at its time.
        for sample: Int64 in [0, 1023, 1024, 1000, sample(0xFF_FFFF + 1000), sample((1 << 32) + 10)] {
            stamps += try server.read(session.audio(frame: [0][...], sampleTime: sample)).map(\.timestamp)
        }
        #expect(stamps == [0, 23, 23, 23, 0xFF_FFFF + 1000, 10])
        #expect(session.lastTimestamp == (Int64(1) << 32) + 10)
    }

    @Test("acknowledgements when the window is crossed; ping answered")
    func acknowledgementsAndPing() throws {
        var session = try Self.session()
        var server = ScriptedRTMPServer()
        _ = try Self.publish(&session, &server)
        // The bytes received so far (the handshake and the answers, about 3.5 kB) cross the new window at once.
        var answer = try server.read(session.receive(server.control(.windowAcknowledgementSize(1000))))
        #expect(answer == [RTMPControlMessage.acknowledgement(sequenceNumber: UInt32(session.bytesReceived)).message])
        answer = try server.read(session.receive(server.control(.userControl(.streamBegin(1)))))
        #expect(answer.isEmpty)
        // 1200 bytes of a message a publisher ignores: the window is crossed again.
        let filler = server.writer.write(RTMPMessage(type: .video, streamID: 1, payload: Array(repeating: 0, count: 1200)), chunkStreamID: 6)
        answer = try server.read(session.receive(filler))
        #expect(answer == [RTMPControlMessage.acknowledgement(sequenceNumber: UInt32(session.bytesReceived)).message])
        #expect(session.bytesReceived > 3073 + 1200)
        answer = try server.read(session.receive(server.control(.userControl(.pingRequest(123_456)))))
        #expect(answer == [RTMPControlMessage.userControl(.pingResponse(123_456)).message])
        // The ping's few bytes do not cross the window again.
        #expect(answer.count == 1)
    }

    @Test("refusals: a name already publishing, a rejected connection, in words", arguments: [
        ("NetStream.Publish.BadName", "Already publishing", "the server refused the stream name: already publishing", true),
        ("NetConnection.Connect.Rejected", "Invalid token", "the server refused the connection: invalid token", true),
        ("NetStream.Publish.Failed", "", "the server reported NetStream.Publish.Failed", false),
    ])
    func refusal(code: String, description: String, words: String, isRefusal: Bool) throws {
        var session = try Self.session()
        var server = ScriptedRTMPServer()
        var bytes = try server.read(session.start())
        bytes += try server.read(session.receive(server.s0s1 + server.s2))
        _ = try session.receive(server.command("_result", 1))
        _ = try session.receive(server.command("_result", 4, .null, [.number(1)]))
        _ = try session.receive(server.onStatus("error", code, description))
        let events = session.takeEvents()
        guard case .error(let status)? = events.last else {
            Issue.record("no error event: \(events)")
            return
        }
        #expect(status.code == code)
        #expect(status.isRefusal == isRefusal)
        #expect(status.explanation == words)
        #expect(session.state == .failed)
        #expect(throws: RTMPError.self) { try session.audio(frame: [0][...], sampleTime: 0) }
        #expect(session.finish().isEmpty)
    }

    @Test("_error to connect is a refusal; _error to releaseStream is not")
    func errorAnswers() throws {
        var session = try Self.session()
        var server = ScriptedRTMPServer()
        _ = try server.read(session.start())
        _ = try session.receive(server.s0s1 + server.s2)
        _ = try session.receive(server.command("_result", 1))
        _ = try session.receive(server.command("_error", 2, .null, [.object([AMF0Property("level", .string("error")),
                                                                             AMF0Property("code", .string("NetStream.Unknown"))])]))
        #expect(session.state == .creatingStream)
        #expect(session.takeEvents().last == .status(RTMPStatus(level: "error", code: "NetStream.Unknown")))

        var refused = try Self.session()
        var other = ScriptedRTMPServer()
        _ = try other.read(refused.start())
        _ = try refused.receive(other.s0s1 + other.s2)
        _ = try refused.receive(other.command("_error", 1, .null, [.object([
            AMF0Property("level", .string("error")), AMF0Property("code", .string("NetConnection.Connect.Rejected")),
            AMF0Property("description", .string("[ AccessManager.Reject ] : [ code=403 need auth; authmod=adobe ] : ")),
        ])]))
        guard case .error(let status)? = refused.takeEvents().last else {
            Issue.record("no error")
            return
        }
        #expect(status.isRefusal)
        #expect(status.explanation.hasPrefix("the server refused the connection: [ AccessManager.Reject ]"))
    }

    @Test("bad bytes from the server are typed errors")
    func protocolErrors() throws {
        var session = try Self.session()
        _ = session.start()
        #expect(throws: RTMPError.unsupportedVersion(6)) { try session.receive([6] + Array(repeating: 0, count: 3072)) }

        var other = try Self.session()
        var server = ScriptedRTMPServer()
        _ = try server.read(other.start())
        _ = try other.receive(server.s0s1 + server.s2)
        _ = try other.receive(server.command("_result", 1))
        #expect(throws: RTMPError.missingStreamID) { try other.receive(server.command("_result", 4, .null, [.string("1")])) }
    }
}

extension AMF0Reader {
    /// Every value (a copy, so a temporary reader can be used).
    func readAllCopy() throws -> [AMF0Value] {
        var copy = self
        return try copy.readAll()
    }
}
