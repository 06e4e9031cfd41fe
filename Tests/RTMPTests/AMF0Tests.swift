import RTMP
import Testing

/// Bytes of ASCII text.
func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

/// An AMF0 string as the spec writes it (2.4): marker 0x02, 16-bit length, UTF-8.
func amfString(_ text: String) -> [UInt8] { [0x02, 0x00, UInt8(text.utf8.count)] + ascii(text) }

/// An object property's name (2.5): 16-bit length, UTF-8.
func amfKey(_ text: String) -> [UInt8] { [0x00, UInt8(text.utf8.count)] + ascii(text) }

@Suite("AMF0")
struct AMF0Tests {
    @Test("every type round-trips and keeps property order")
    func roundTrips() throws {
        let values: [AMF0Value] = [
            .number(0), .number(-1.5), .number(.infinity), .number(1e300), .boolean(true), .boolean(false),
            .string(""), .string("héllo ✓"), .null, .undefined,
            .object([AMF0Property("z", .number(1)), AMF0Property("a", .string("x")), AMF0Property("m", .null)]),
            .ecmaArray([AMF0Property("duration", .number(0)), AMF0Property("stereo", .boolean(true))]),
            .strictArray([.number(1), .string("two"), .strictArray([]), .object([])]),
            .date(milliseconds: 1_700_000_000_000, timeZone: -60),
            .longString(String(repeating: "x", count: 70_000)),
            .object([AMF0Property("nested", .object([AMF0Property("deeper", .ecmaArray([AMF0Property("k", .undefined)]))]))]),
        ]
        for value in values {
            var reader = AMF0Reader(value.encoded)
            #expect(try reader.next() == value)
            #expect(reader.isAtEnd)
        }
        var all = AMF0Reader(AMF0Value.encode(values))
        #expect(try all.readAll() == values)
    }

    @Test("known bytes from the AMF0 spec")
    func knownBytes() {
        // 2.2: number-marker, then the IEEE 754 double big-endian; 1.0 is 0x3FF0000000000000.
        #expect(AMF0Value.number(1).encoded == [0x00, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0])
        #expect(AMF0Value.boolean(true).encoded == [0x01, 0x01])
        #expect(AMF0Value.string("ab").encoded == [0x02, 0x00, 0x02, 0x61, 0x62])
        #expect(AMF0Value.null.encoded == [0x05])
        #expect(AMF0Value.undefined.encoded == [0x06])
        #expect(AMF0Value.object([AMF0Property("a", .null)]).encoded == [0x03, 0x00, 0x01, 0x61, 0x05, 0x00, 0x00, 0x09])
        // 2.10: the ECMA array's 32-bit count, then the properties and the object end.
        #expect(AMF0Value.ecmaArray([AMF0Property("a", .boolean(false))]).encoded
            == [0x08, 0, 0, 0, 1, 0x00, 0x01, 0x61, 0x01, 0x00, 0x00, 0x00, 0x09])
        #expect(AMF0Value.strictArray([.null, .null]).encoded == [0x0A, 0, 0, 0, 2, 0x05, 0x05])
        #expect(AMF0Value.date(milliseconds: 0, timeZone: 0).encoded == [0x0B, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        #expect(AMF0Value.longString("a").encoded == [0x0C, 0, 0, 0, 1, 0x61])
        // A string beyond 65,535 bytes goes as a long string (2.14).
        #expect(AMF0Value.string(String(repeating: "y", count: 65_536)).encoded.prefix(5) == [0x0C, 0x00, 0x01, 0x00, 0x00])
    }

    @Test("connect encodes to the bytes derived from RTMP 1.0 7.2.1.1 and AMF0")
    func connectBytes() throws {
        let command = RTMPCommand.connect(application: "live", tcURL: "rtmp://localhost/live")
        let flashVer = "FMLE/3.0 (compatible; KeyFrameKit)"
        var expected: [UInt8] = amfString("connect")
        expected += [0x00, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0] // transaction id 1
        expected += [0x03] // command object
        expected += amfKey("app") + amfString("live")
        expected += amfKey("type") + amfString("nonprivate")
        expected += amfKey("flashVer") + amfString(flashVer)
        expected += amfKey("tcUrl") + amfString("rtmp://localhost/live")
        expected += [0x00, 0x00, 0x09]
        #expect(command.payload == expected)
        #expect(try RTMPCommand(payload: expected) == command)
    }

    @Test("publish, createStream and onMetaData carry what servers read")
    func commands() throws {
        let publish = RTMPCommand.publish("key?token=1", transactionID: 5)
        #expect(publish.payload == amfString("publish") + AMF0Value.number(5).encoded + [0x05] + amfString("key?token=1") + amfString("live"))
        let metadata = RTMPStreamMetadata(sampleRate: 48000, channelCount: 2, bitrate: 128_000, title: "Morning")
        let message = metadata.setDataFrame(streamID: 1)
        #expect(message.type == .dataAMF0 && message.streamID == 1)
        var reader = AMF0Reader(message.payload)
        let values = try reader.readAll()
        #expect(values.count == 3)
        #expect(values[0] == .string("@setDataFrame") && values[1] == .string("onMetaData"))
        let array = values[2]
        #expect(array["audiocodecid"] == .number(10))
        #expect(array["audiosamplerate"] == .number(48000))
        #expect(array["audiosamplesize"] == .number(16))
        #expect(array["stereo"] == .boolean(true))
        #expect(array["audiodatarate"] == .number(128))
        #expect(array["duration"] == .number(0))
        #expect(array["encoder"] == .string("KeyFrameKit"))
        #expect(array["title"] == .string("Morning"))
        #expect(RTMPStreamMetadata(sampleRate: 44100, channelCount: 1, bitrate: 64000).properties.contains { $0.key == "title" } == false)
    }

    @Test("hostile AMF0 gives typed errors, never traps or allocates its counts")
    func hostile() {
        func fails(_ bytes: [UInt8], maximumDepth: Int = 32) -> RTMPError? {
            var reader = AMF0Reader(bytes, maximumDepth: maximumDepth)
            do {
                _ = try reader.readAll()
                return nil
            } catch {
                return error
            }
        }
        // A strict array claiming 4 billion values in 5 bytes.
        #expect(fails([0x0A, 0xFF, 0xFF, 0xFF, 0xFF]) != nil)
        // A long string claiming 4 GiB.
        #expect(fails([0x0C, 0xFF, 0xFF, 0xFF, 0xFF, 0x61]) != nil)
        // An object that never ends.
        #expect(fails([0x03, 0x00, 0x01, 0x61, 0x05]) != nil)
        // An empty name without the object end.
        #expect(fails([0x03, 0x00, 0x00, 0x05]) == .missingAMF0ObjectEnd(offset: 3))
        // Reference, AMF3 switch, unknown markers.
        #expect(fails([0x07, 0x00, 0x01]) == .unsupportedAMF0Marker(0x07, offset: 0))
        #expect(fails([0x11]) == .unsupportedAMF0Marker(0x11, offset: 0))
        // Nesting: 100 strict arrays of one inside each other, limit 32.
        let deep = [UInt8](Array(repeating: [0x0A, 0, 0, 0, 1], count: 100).joined()) + [0x05]
        #expect(fails(deep) == .amf0NestingTooDeep(limit: 32, offset: 32 * 5))
        #expect(fails(Array(deep.suffix(5 * 3 + 1))) == nil)
        // Truncated numbers and strings.
        #expect(fails([0x00, 0x3F]) != nil)
        #expect(fails([0x02, 0x00, 0x05, 0x61]) != nil)
    }
}
