import MediaCore
@testable import MP4
import Testing

/// `emsg` (ISO/IEC 23009-1 5.10.3.3): version 1 written and read back, version 0 read, a string
/// without its NUL refused, and a segment whose fragments follow event messages still read by
/// our demuxer sample for sample.
@Suite struct EventMessageTests {
    @Test func versionOneRoundTripsAndPrecedesTheFragment() throws {
        let message = EventMessage(scheme: EventMessage.id3Scheme, timescale: 48_000, presentationTime: 984_000, id: 7,
                                   data: Array("ID3 payload".utf8))
        let bytes = message.bytes
        #expect(Array(bytes[4..<8]) == Array("emsg".utf8) && bytes[8] == 1, "a version 1 full box")
        let read = try EventMessage(from: ByteReader(bytes, range: 8..<bytes.count), path: .root)
        #expect(read == message && read.seconds == 20.5 && read.duration == EventMessage.unknownDuration)

        let segmenter = try CMAFSegmenter(format: MuxerTests.format, priming: 1024)
        segmenter.carriesTimedMetadata = true
        for index in 0..<4 { segmenter.append(MuxerTests.packet(index, size: 40 + index)) }
        let segment = try #require(segmenter.cutSegment(messages: [message, message]))
        #expect(try EventMessage.messages(inSegment: segment.bytes) == [message, message])
        let header = segmenter.header(validFrameCount: 2000, mediaDuration: 4 * 1024)
        #expect(String(decoding: header.prefix(64), as: UTF8.self).contains("aid3"), "the ftyp lists aid3")
        let samples = try MuxerTests.audioSamples(header + segment.bytes)
        #expect(samples.map(\.data) == (0..<4).map { MuxerTests.packet($0, size: 40 + $0).data }, "the samples read past the messages")
    }

    @Test func versionZeroIsReadAndAnUnendedStringRefused() throws {
        var payload: [UInt8] = [0, 0, 0, 0]
        payload += Array("urn:scte:scte35:2013:bin".utf8) + [0] + [0]
        payload += [0, 0, 0x03, 0xE8, 0, 0, 0, 50, 0, 0, 0, 10, 0, 0, 0, 2] + [0xFC, 0x30]
        let read = try EventMessage(from: ByteReader(payload), path: .root)
        #expect(read.version == 0 && read.scheme == EventMessage.scte35Scheme && read.timescale == 1000 && read.presentationTime == 50
                && read.duration == 10 && read.id == 2 && read.data == [0xFC, 0x30])
        let unended: [UInt8] = [1, 0, 0, 0] + [UInt8](repeating: 0, count: 20) + Array("https://aomedia.org".utf8)
        #expect(throws: MP4Error.self) { try EventMessage(from: ByteReader(unended), path: .root) }
    }
}
