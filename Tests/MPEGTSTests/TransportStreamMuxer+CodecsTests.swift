import AudioBitstreams
import MediaCore
import MPEGTS
import Testing

/// MP3 and Opus in the muxer (issue 38): the `stream_type` and descriptors of the PMT, the
/// `stream_id`, and Opus's `opus_control_header` with the pre-skip as `start_trim` on the first
/// packets (the Opus-in-MPEG-TS draft, 5.1 and 6).
@Suite struct TransportStreamMuxerCodecsTests {
    static func opusFormat(channels: Int = 2, preSkip: Int = 312) -> EncodedAudioFormat {
        EncodedAudioFormat(codec: .opus, sampleRate: 48000, channelCount: channels, framesPerPacket: 960,
                           decoderConfiguration: OpusHeader(channelCount: channels, preSkip: preSkip, inputSampleRate: 44100).bytes)
    }

    @Test func mp3IsStreamType3At32kHzAndAbove4Below() throws {
        for (rate, type) in [(44100, UInt8(0x03)), (32000, 0x03), (24000, 0x04), (8000, 0x04)] {
            let muxer = try TransportStreamMuxer(format: EncodedAudioFormat(codec: .mp3, sampleRate: rate, channelCount: 2, framesPerPacket: 1152,
                                                                            decoderConfiguration: []))
            #expect(muxer.programMapTable.streams.map(\.streamType) == [type], "\(rate) Hz")
            #expect(muxer.programMapTable.streams[0].descriptors.isEmpty)
        }
    }

    @Test func opusHasItsRegistrationAndExtensionDescriptors() throws {
        let muxer = try TransportStreamMuxer(format: Self.opusFormat())
        let stream = try #require(muxer.programMapTable.streams.first)
        #expect(stream.streamType == 0x06)
        #expect(stream.descriptors == [0x05, 4, 0x4F, 0x70, 0x75, 0x73, 0x7F, 2, 0x80, 2])
        #expect(muxer.sampleRate == 48000)
    }

    @Test func opusPacketsFollowAControlHeaderAndThePreSkipIsTrimmedFromTheFirst() throws {
        // A 20-ms CELT packet (config 31: TOC 0xF8) of 300 bytes: au_size 255 + 45.
        let packet = [UInt8(0xF8)] + [UInt8](repeating: 0xAA, count: 299)
        var muxer = try TransportStreamMuxer(format: Self.opusFormat(preSkip: 1000), framesPerPES: 2)
        var out = muxer.programTables()
        out += try muxer.write(frame: packet, sampleTime: 0)
        out += try muxer.write(frame: packet, sampleTime: 960)
        out += muxer.flush()
        // The PES payload: the first packet trims 960 of the pre-skip, the second the other 40.
        var reader = ByteReader(out)
        var payload: [UInt8] = []
        var streamIDs: [UInt8] = []
        while !reader.isAtEnd {
            let transport = try TransportPacket(from: &reader)
            guard transport.pid == TransportStreamMuxer.audioPID else { continue }
            if transport.payloadUnitStartIndicator, let id = transport.payload.dropFirst(3).first { streamIDs.append(id) }
            payload += transport.payload
        }
        #expect(streamIDs == [0xBD], "one PES packet, private_stream_1")
        let headerLength = 9 + Int(payload[8])
        let units = Array(payload[headerLength...])
        #expect(Array(units.prefix(6)) == [0x7F, 0xF0, 0xFF, 45, 0x03, 0xC0], "prefix, start_trim_flag, au_size 300, start_trim 960")
        #expect(Array(units[(6 + 300)..<(6 + 300 + 6)]) == [0x7F, 0xF0, 0xFF, 45, 0x00, 40])
        #expect(units.count == 2 * (6 + 300))
    }

    /// After the pre-skip, a packet's header has no trim; an `au_size` of 255 is `FF 00`; a
    /// muxer made again for a reconnect (its first packet far into the stream) trims nothing.
    @Test func laterPacketsAndAReconnectedStreamCarryNoTrim() throws {
        for (start, size) in [(Int64(960), 255), (Int64(48_000 * 60), 300)] {
            let packet = [UInt8(0xF8)] + [UInt8](repeating: 0x55, count: size - 1)
            var muxer = try TransportStreamMuxer(format: Self.opusFormat(preSkip: 312), framesPerPES: 1)
            _ = muxer.programTables()
            var reader = ByteReader(try muxer.write(frame: packet, sampleTime: start))
            var payload: [UInt8] = []
            while !reader.isAtEnd {
                let transport = try TransportPacket(from: &reader)
                if transport.pid == TransportStreamMuxer.audioPID { payload += transport.payload }
            }
            let units = Array(payload[(9 + Int(payload[8]))...])
            let expected: [UInt8] = size == 255 ? [0x7F, 0xE0, 0xFF, 0x00] : [0x7F, 0xE0, 0xFF, 45]
            #expect(Array(units.prefix(4)) == expected, "a packet at \(start) of \(size) bytes: \(units.prefix(6).map { String($0, radix: 16) })")
            #expect(units.count == 4 + size)
        }
    }

    @Test func whatTheMuxerDoesNotCarryIsRefusedByName() {
        let surround = EncodedAudioFormat(codec: .opus, sampleRate: 48000, channelCount: 6, framesPerPacket: 960, decoderConfiguration: OpusHeader(
            channelCount: 6, preSkip: 312, inputSampleRate: 48000, mappingFamily: 1, streamCount: 4, coupledCount: 2, mapping: [0, 4, 1, 2, 3, 5]).bytes)
        for (format, words) in [(surround, "not 6 of family 1"),
                                (EncodedAudioFormat(codec: .flac, sampleRate: 44100, channelCount: 2, framesPerPacket: 0, decoderConfiguration: []),
                                 "not flac")] {
            do {
                _ = try TransportStreamMuxer(format: format)
                Issue.record("\(format.codec) was not refused")
            } catch {
                guard case .unsupportedStream(let reason) = error else { Issue.record("\(error)"); continue }
                #expect(reason.contains(words), "\(reason)")
            }
        }
    }
}
