import FuzzTargets
import RTMP
import TestSupport
import Testing

@Suite("Hostile bytes through the rtmp fuzz target")
struct RTMPFuzzTests {
    /// What a server sends a publisher after the handshake, up to publishing and a ping.
    static func transcript() -> [UInt8] {
        var server = ScriptedRTMPServer()
        var bytes = server.control(.windowAcknowledgementSize(100))
        bytes += server.control(.setPeerBandwidth(windowSize: 5_000_000, limitType: 2))
        bytes += server.writer.setChunkSize(40)
        bytes += server.command("_result", 1, .object([AMF0Property("fmsVer", .string("FMS/3,0,1,123"))]),
                                [.object([AMF0Property("code", .string("NetConnection.Connect.Success"))])])
        bytes += server.command("_result", 4, .null, [.number(1)])
        bytes += server.onStatus("status", "NetStream.Publish.Start", "Start publishing")
        bytes += server.control(.userControl(.pingRequest(99)))
        bytes += server.writer.write(RTMPMessage(type: .audio, streamID: 1, timestamp: 0xFF_FFFF + 7, payload: Array(repeating: 0xAF, count: 90)),
                                     chunkStreamID: 70)
        return bytes
    }

    @Test("a server's transcript, every truncation and every byte flipped")
    func transcriptMutations() {
        let input = Self.transcript()
        for length in stride(from: 0, through: input.count, by: 1) { FuzzTarget.rtmp.run(Array(input.prefix(length))) }
        for index in input.indices {
            var flipped = input
            flipped[index] ^= 0x5A
            FuzzTarget.rtmp.run(flipped)
        }
    }

    @Test("the transcript brings the session to publishing")
    func transcriptPublishes() throws {
        var session = try PublishSessionTests.session()
        _ = session.start()
        _ = try session.receive([3] + Array(repeating: 0, count: 3072))
        _ = try session.receive(Self.transcript())
        #expect(session.state == .publishing)
    }

    @Test("random bytes, and random bytes after chunk and AMF0 headers")
    func random() {
        var generator = SplitMix64(state: 0x5254_4D50)
        let prefixes: [[UInt8]] = [
            [],
            [0x03, 0, 0, 0, 0, 0, 0x40, 0x14, 0, 0, 0, 0], // a command message of 64 bytes
            [0x02, 0, 0, 0, 0, 0, 0x04, 0x01, 0, 0, 0, 0, 0, 0, 0, 1], // Set Chunk Size 1
            [0x02, 0x00, 0x07, 0x6F, 0x6E, 0x53, 0x74, 0x61, 0x74, 0x75, 0x73], // AMF0 "onStatus"
        ]
        for round in 0..<3000 {
            let count = Int.random(in: 0...200, using: &generator)
            let body = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            FuzzTarget.rtmp.run(prefixes[round % prefixes.count] + body)
        }
    }

    @Test("crafted: limits on length, nesting and chunk streams; extended timestamps")
    func crafted() {
        let inputs: [[UInt8]] = [
            // A message of 16 MiB − 1 declared.
            [0x04, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0x08, 1, 0, 0, 0],
            // Chunk streams 64…: format 0 headers of empty messages, far more than 16.
            (64..<200).flatMap { [0x00, UInt8($0 - 64), 0, 0, 0, 0, 0, 0, 0x12, 0, 0, 0, 0] as [UInt8] },
            // Many unfinished messages.
            (3..<60).flatMap { [UInt8($0), 0, 0, 0, 0, 0x10, 0, 0x12, 0, 0, 0, 0] + [UInt8](repeating: 0x41, count: 128) },
            // Nesting far past the limit.
            [UInt8](Array(repeating: [0x03, 0x00, 0x01, 0x61], count: 500).joined()),
            [UInt8](Array(repeating: [0x0A, 0xFF, 0xFF, 0xFF, 0xFF], count: 500).joined()),
            // An extended timestamp on format 0 then format 3 chunks.
            [0x04, 0xFF, 0xFF, 0xFF, 0, 0, 0x05, 0x08, 1, 0, 0, 0, 0x12, 0x34, 0x56, 0x78, 1, 2, 3, 4, 5, 0xC4, 0x12, 0x34, 0x56, 0x78, 6, 7, 8, 9, 10],
            // Set Chunk Size with the top bit set, and 0.
            [0x02, 0, 0, 0, 0, 0, 4, 0x01, 0, 0, 0, 0, 0x80, 0, 0, 0],
            [0x02, 0, 0, 0, 0, 0, 4, 0x01, 0, 0, 0, 0, 0, 0, 0, 0],
            // Abort of a chunk stream that never was.
            [0x02, 0, 0, 0, 0, 0, 4, 0x02, 0, 0, 0, 0, 0, 1, 0, 0],
            // A three-byte basic header for chunk stream 65599, format 3 first.
            [0xC1, 0xFF, 0xFF],
        ]
        for input in inputs { FuzzTarget.rtmp.run(input) }
    }
}
