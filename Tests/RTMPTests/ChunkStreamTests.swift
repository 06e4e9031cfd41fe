import RTMP
import Testing

@Suite("Chunk streams")
struct ChunkStreamTests {
    private func message(_ length: Int, timestamp: UInt32 = 0, streamID: UInt32 = 1) -> RTMPMessage {
        RTMPMessage(type: .audio, streamID: streamID, timestamp: timestamp, payload: (0..<length).map { UInt8(truncatingIfNeeded: $0 * 7) })
    }

    private func read(_ bytes: [UInt8], pieces: Int = 1) throws -> [RTMPMessage] {
        var reader = RTMPChunkReader()
        var messages: [RTMPMessage] = []
        let size = max(1, (bytes.count + pieces - 1) / pieces)
        for start in stride(from: 0, to: bytes.count, by: size) {
            reader.append(bytes[start..<min(start + size, bytes.count)])
            while let message = try reader.nextMessage() { messages.append(message) }
        }
        #expect(reader.pendingByteCount == 0)
        return messages
    }

    @Test("a 5000-byte message at the default chunk size of 128: 40 chunks")
    func chunkSize128() throws {
        var writer = RTMPChunkWriter()
        let original = message(5000, timestamp: 1234)
        let bytes = writer.write(original, chunkStreamID: 4)
        // Format 0 header (1 + 11 bytes), 5000 payload bytes, 39 one-byte format 3 headers.
        #expect(bytes.count == 12 + 5000 + 39)
        #expect(Array(bytes.prefix(12)) == [0x04, 0x00, 0x04, 0xD2, 0x00, 0x13, 0x88, 0x08, 0x01, 0x00, 0x00, 0x00])
        #expect(bytes[12 + 128] == 0xC4)
        #expect(bytes[12 + 128 + 1 + 128] == 0xC4)
        #expect(try read(bytes) == [original])
        #expect(try read(bytes, pieces: 97) == [original])
    }

    @Test("a 5000-byte message at 4096 after Set Chunk Size: 2 chunks")
    func chunkSize4096() throws {
        var writer = RTMPChunkWriter()
        let setChunkSize = writer.setChunkSize(4096)
        // Chunk stream 2, message stream 0, type 1, length 4, then 4096.
        #expect(setChunkSize == [0x02, 0, 0, 0, 0, 0, 4, 0x01, 0, 0, 0, 0, 0x00, 0x00, 0x10, 0x00])
        let original = message(5000)
        let bytes = writer.write(original, chunkStreamID: 4)
        #expect(bytes.count == 12 + 5000 + 1)
        #expect(bytes[12 + 4096] == 0xC4)
        let messages = try read(setChunkSize + bytes, pieces: 5)
        #expect(messages.count == 2)
        #expect(messages.last == original)
    }

    @Test("headers compress to format 1 and 2 and read back")
    func compression() throws {
        var writer = RTMPChunkWriter()
        let first = message(10, timestamp: 0)
        let second = message(10, timestamp: 23)
        let third = message(11, timestamp: 46)
        let a = writer.write(first, chunkStreamID: 4)
        let b = writer.write(second, chunkStreamID: 4)
        let c = writer.write(third, chunkStreamID: 4)
        #expect(a[0] == 0x04 && a.count == 12 + 10)
        #expect(Array(b.prefix(4)) == [0x84, 0, 0, 23]) // format 2: delta only
        #expect(b.count == 4 + 10)
        #expect(Array(c.prefix(8)) == [0x44, 0, 0, 23, 0, 0, 11, 0x08]) // format 1: delta, length, type
        #expect(try read(a + b + c, pieces: 9) == [first, second, third])
        // Going backwards (or the 2³² wrap) starts again with format 0.
        let back = writer.write(message(10, timestamp: 5), chunkStreamID: 4)
        #expect(back[0] == 0x04)
    }

    @Test("extended timestamps: in the header and in every format 3 chunk")
    func extendedTimestamp() throws {
        var writer = RTMPChunkWriter()
        let original = message(300, timestamp: 0x0100_0000)
        let bytes = writer.write(original, chunkStreamID: 4)
        #expect(Array(bytes[1..<4]) == [0xFF, 0xFF, 0xFF])
        #expect(Array(bytes[12..<16]) == [0x01, 0x00, 0x00, 0x00])
        // 16 header bytes, 128 payload, then 0xC4 and the extended timestamp again.
        #expect(Array(bytes[(16 + 128)..<(16 + 128 + 5)]) == [0xC4, 0x01, 0x00, 0x00, 0x00])
        #expect(bytes.count == 16 + 300 + 2 * 5)
        // A delta of 0xFFFFFF or more is extended too.
        let later = message(300, timestamp: 0x0100_0000 + 0x0100_0000)
        let more = writer.write(later, chunkStreamID: 4)
        #expect(more[0] == 0x84 && Array(more[1..<4]) == [0xFF, 0xFF, 0xFF])
        #expect(try read(bytes + more, pieces: 13) == [original, later])
    }

    @Test("chunk stream ids of one, two and three bytes")
    func chunkStreamIDs() throws {
        var writer = RTMPChunkWriter()
        let a = writer.write(message(3), chunkStreamID: 63)
        let b = writer.write(message(3), chunkStreamID: 64)
        let c = writer.write(message(3), chunkStreamID: 319)
        let d = writer.write(message(3), chunkStreamID: 65599)
        #expect(a[0] == 63)
        #expect(Array(b.prefix(2)) == [0x00, 0x00])
        #expect(Array(c.prefix(2)) == [0x00, 0xFF])
        #expect(Array(d.prefix(3)) == [0x01, 0xFF, 0xFF])
        #expect(try read(a + b + c + d).count == 4)
    }

    @Test("the reader follows the server's Set Chunk Size and Abort, and keeps its limits")
    func readerControl() throws {
        var server = RTMPChunkWriter()
        var bytes = server.setChunkSize(60)
        bytes += server.write(message(200), chunkStreamID: 6)
        // Abort: a message started on chunk stream 7 is dropped.
        var partial = RTMPChunkWriter()
        _ = partial.setChunkSize(60)
        bytes += partial.write(message(100, streamID: 9), chunkStreamID: 7).prefix(12 + 60)
        bytes += server.write(RTMPControlMessage.abort(chunkStreamID: 7).message, chunkStreamID: 2)
        bytes += server.write(message(5), chunkStreamID: 6)
        let messages = try read(bytes, pieces: 31)
        #expect(messages.map(\.type) == [.setChunkSize, .audio, .abort, .audio])
        #expect(messages[1].payload.count == 200)

        var reader = RTMPChunkReader(maximumMessageLength: 1000)
        var big = RTMPChunkWriter()
        reader.append(big.write(message(1001), chunkStreamID: 4).prefix(12))
        #expect(throws: RTMPError.messageTooLong(length: 1001, limit: 1000)) { try reader.nextMessage() }

        var headless = RTMPChunkReader()
        headless.append([0xC5, 0x00])
        #expect(throws: RTMPError.chunkStreamWithoutHeader(chunkStreamID: 5, format: 3)) { try headless.nextMessage() }

        var zero = RTMPChunkReader()
        zero.append([0x02, 0, 0, 0, 0, 0, 4, 0x01, 0, 0, 0, 0, 0, 0, 0, 0])
        #expect(throws: RTMPError.invalidChunkSize(0)) { try zero.nextMessage() }
    }

    @Test("control messages encode as RTMP 1.0 5.4 and 7.1.7 say")
    func controlMessages() throws {
        #expect(RTMPControlMessage.acknowledgement(sequenceNumber: 0x0102_0304).message.payload == [1, 2, 3, 4])
        #expect(RTMPControlMessage.setPeerBandwidth(windowSize: 5_000_000, limitType: 2).message.payload == [0x00, 0x4C, 0x4B, 0x40, 0x02])
        #expect(RTMPControlMessage.userControl(.pingResponse(7)).message.payload == [0, 7, 0, 0, 0, 7])
        #expect(try RTMPControlMessage(RTMPMessage(type: .userControl, payload: [0, 6, 0, 0, 1, 0])) == .userControl(.pingRequest(256)))
        #expect(throws: RTMPError.malformedControlMessage(type: 5, length: 2)) {
            try RTMPControlMessage(RTMPMessage(type: .windowAcknowledgementSize, payload: [0, 1]))
        }
        #expect(try RTMPControlMessage(RTMPMessage(type: .audio, payload: [])) == nil)
    }

    @Test("FLV AAC tags: 0xAF, then 0 and the AudioSpecificConfig or 1 and the frame")
    func flvTags() {
        #expect(FLVAudioTag.sequenceHeader([0x12, 0x10]).bytes == [0xAF, 0x00, 0x12, 0x10])
        #expect(FLVAudioTag.rawFrameBytes([0x21, 0x1B][...]) == [0xAF, 0x01, 0x21, 0x1B])
        #expect(FLVAudioTag(bytes: [0xAF, 0x01, 0x21]) == FLVAudioTag(packetType: .raw, data: [0x21]))
        #expect(FLVAudioTag(bytes: [0x2F, 0x01]) == nil)
    }
}
