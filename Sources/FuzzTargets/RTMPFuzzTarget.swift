import RTMP

// The `rtmp` fuzz target: what a server (or anyone on the path) can send a publisher. The input
// is read three ways: as AMF0 values, as chunk streams, and as everything after the handshake
// of a publishing session.

extension FuzzTarget {
    /// Small limits, so that libFuzzer reaches them.
    private static let rtmpMessageLimit = 4096

    static func rtmp(_ data: [UInt8]) {
        rtmpAMF0(data)
        rtmpChunks(data)
        rtmpSession(data)
    }

    /// AMF0: decoding never traps; each value decoded encodes to bytes that decode to a value
    /// that encodes to the same bytes (the bytes, not the values: NaN is not equal to itself);
    /// a command that parses writes back to a command that parses to itself.
    private static func rtmpAMF0(_ data: [UInt8]) {
        var reader = AMF0Reader(data, maximumDepth: 8)
        while !reader.isAtEnd {
            let before = reader.offset
            guard let value = try? reader.next() else { break }
            precondition(reader.offset > before, "an AMF0 value read no bytes")
            let encoded = value.encoded
            var again = AMF0Reader(encoded, maximumDepth: 8)
            let decoded = try? again.next()
            precondition(decoded?.encoded == encoded && again.isAtEnd, "an AMF0 value does not encode to itself")
        }
        if let command = try? RTMPCommand(payload: data) {
            let payload = command.payload
            let reparsed = try? RTMPCommand(payload: payload)
            precondition(reparsed?.payload == payload, "an RTMP command does not write back to itself")
            _ = command.status.explanation
        }
    }

    /// Chunk streams: the messages and the error do not depend on how the bytes arrive; every
    /// message is within the limit; messages written again by ``RTMPChunkWriter`` (at a chunk
    /// size the input picks, headers compressed or not) read back the same.
    private static func rtmpChunks(_ data: [UInt8]) {
        let whole = readChunks([data[...]])
        let cut = Int(data.first ?? 0) % (data.count + 1)
        let split = readChunks([data[..<cut], data[cut...]])
        precondition(whole.messages == split.messages, "RTMP messages depend on how the bytes arrive")
        precondition(whole.error == split.error, "RTMP chunk errors depend on how the bytes arrive")
        let bytewise = readChunks(data.indices.map { data[$0...$0] })
        precondition(bytewise.messages == whole.messages && bytewise.error == whole.error, "RTMP messages differ byte by byte")
        for message in whole.messages {
            precondition(message.payload.count <= rtmpMessageLimit, "an RTMP message beyond the limit")
        }

        // Set Chunk Size and Abort change the reader itself: the writer sends them its own way.
        let plain = whole.messages.filter { $0.type != .setChunkSize && $0.type != .abort }
        var writer = RTMPChunkWriter(compressesHeaders: (data.last ?? 0) & 1 == 0)
        var bytes = writer.setChunkSize(Int(data.last ?? 0) + 1)
        for (index, message) in plain.enumerated() {
            bytes += writer.write(message, chunkStreamID: [2, 3, 63, 64, 319, 320, 65599][index % 7])
        }
        let written = readChunks([bytes[...]])
        precondition(written.error == nil, "RTMP chunks we wrote do not read: \(written.error.map { "\($0)" } ?? "")")
        precondition(Array(written.messages.dropFirst()) == plain, "RTMP messages change through the chunk writer")
    }

    private static func readChunks(_ parts: [ArraySlice<UInt8>]) -> (messages: [RTMPMessage], error: RTMPError?) {
        var reader = RTMPChunkReader(maximumMessageLength: rtmpMessageLimit, maximumChunkStreams: 16)
        var messages: [RTMPMessage] = []
        do {
            for part in parts {
                reader.append(part)
                while let message = try reader.nextMessage() { messages.append(message) }
            }
        } catch {
            return (messages, error)
        }
        return (messages, nil)
    }

    /// A publishing session fed the input after a server's handshake: never traps, and what it
    /// answers is always chunks that read (at the chunk size it announced).
    private static func rtmpSession(_ data: [UInt8]) {
        guard let url = try? RTMPURL("rtmp://127.0.0.1/live/key?token=1") else { preconditionFailure("the fuzz URL does not parse") }
        var session = RTMPPublishSession(url: url, audioSpecificConfig: [0x12, 0x10],
                                         metadata: RTMPStreamMetadata(sampleRate: 44100, channelCount: 2, bitrate: 128_000),
                                         handshake: RTMPHandshake(random: []), maximumMessageLength: rtmpMessageLimit)
        _ = session.start()
        let handshake = [UInt8(3)] + [UInt8](repeating: 0, count: 2 * RTMPHandshake.packetSize)
        var output: [UInt8] = []
        do {
            let c2 = try session.receive(handshake)
            output = Array(c2.dropFirst(RTMPHandshake.packetSize))
            let cut = Int(data.first ?? 0) % (data.count + 1)
            output += try session.receive(data[..<cut])
            output += try session.receive(data[cut...])
            if session.state == .publishing {
                output += try session.audio(frame: data.prefix(20), sampleTime: Int64(data.count) * 1024)
            }
            output += session.finish()
        } catch {
            // Hostile bytes end the session with a typed error (its last answer is not sent);
            // what was sent before still reads.
        }
        var reader = RTMPChunkReader(maximumMessageLength: 1 << 20)
        reader.append(output)
        do {
            while try reader.nextMessage() != nil {}
        } catch {
            preconditionFailure("an RTMP session sent chunks that do not read: \(error)")
        }
        precondition(reader.pendingByteCount == 0, "an RTMP session sent a partial chunk")
        _ = session.takeEvents()
    }
}
