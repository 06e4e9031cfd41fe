import AACBitstream
import FuzzTargets
import MediaCore
import MPEGTS
import Testing

/// The `ts` fuzz target replayed on crafted hostile inputs, and the reader's typed answer to each:
/// never a trap, never a read past what a length allows.
@Suite struct TransportStreamFuzzRegressionTests {
    /// A clean stream: tables and three PES packets of ffmpeg-sized frames.
    static func clean() throws -> [UInt8] {
        var muxer = try TransportStreamMuxer(audioSpecificConfig: AudioSpecificConfig(sampleRate: 48000, channelCount: 2), framesPerPES: 2)
        var out = muxer.programTables()
        for index in 0..<6 {
            out += try muxer.write(frame: [UInt8](repeating: UInt8(index), count: 20 + 97 * index), sampleTime: Int64(index) * 1024)
        }
        return out + muxer.flush()
    }

    /// The error reading `bytes` to the end, if any.
    static func readError(_ bytes: [UInt8]) -> TransportStreamError? {
        var reader = TransportStreamReader(bytes: bytes)
        do {
            _ = try reader.readAll()
            return nil
        } catch {
            return error
        }
    }

    static func packetIndex(_ bytes: [UInt8], pid: UInt16, startOnly: Bool = true) -> Int? {
        stride(from: 0, to: bytes.count, by: 188).first {
            (UInt16(bytes[$0 + 1] & 0x1F) << 8 | UInt16(bytes[$0 + 2])) == pid && (!startOnly || bytes[$0 + 1] & 0x40 != 0)
        }
    }

    @Test func hostileInputsGiveTypedErrors() throws {
        let clean = try Self.clean()
        #expect(Self.readError(clean) == nil)
        var inputs: [(String, [UInt8], (TransportStreamError) -> Bool)] = []

        // Truncated: the last packet cut short.
        inputs.append(("truncated", Array(clean.dropLast(100)), { if case .truncated = $0 { true } else { false } }))
        // Lost sync.
        var unsynced = clean
        unsynced[188 * 2] = 0x48
        inputs.append(("lost sync", unsynced, { $0 == .lostSync(offset: 376, byte: 0x48) }))
        // A PAT whose section_length runs past 1021.
        var badSection = clean
        badSection[6] = 0xBF
        badSection[7] = 0xFF
        inputs.append(("section_length", badSection, { if case .invalidField(_, "section_length", _, _, _) = $0 { true } else { false } }))
        // A PAT whose section_length is shorter than it says: the CRC no longer checks.
        var shortSection = clean
        shortSection[7] = 0x09
        inputs.append(("section CRC", shortSection, { if case .crcMismatch = $0 { true } else { false } }))
        // adaptation_field_length past the packet (in the first audio packet, which has a payload).
        let audio = try #require(Self.packetIndex(clean, pid: 0x100))
        var longField = clean
        longField[audio + 4] = 184
        inputs.append(("adaptation_field_length", longField, { if case .invalidField("adaptation field", "adaptation_field_length", 184, _, _) = $0 { true } else { false } }))
        // PES_packet_length past the data: the next PES packet starts before it is whole.
        var longPES = clean
        // The first PES packet is shorter than a transport packet: stuffing comes before it.
        let pesStart = audio + 5 + Int(clean[audio + 4])
        #expect(clean[pesStart..<(pesStart + 4)] == [0, 0, 1, 0xC0])
        longPES[pesStart + 4] = 0x7F
        inputs.append(("PES_packet_length", longPES, { if case .invalidField("PES packet", "PES_packet_length", _, _, _) = $0 { true } else { false } }))
        // PES_packet_length past the end of the stream.
        inputs.append(("PES at the end", Array(longPES.prefix(audio + 188)), { if case .truncated("PES packet", _) = $0 { true } else { false } }))
        // PES_header_data_length past the PES packet.
        var longHeader = clean
        longHeader[pesStart + 8] = 0xF0
        inputs.append(("PES_header_data_length", longHeader, { if case .invalidField("PES packet", "PES_header_data_length", _, _, _) = $0 { true } else { false } }))
        // A pointer_field past the packet.
        var pointer = clean
        pointer[4] = 200
        inputs.append(("pointer_field", pointer, { if case .invalidField("PSI", "pointer_field", 200, _, _) = $0 { true } else { false } }))
        // A PMT whose ES_info_length runs past the section (CRC recomputed, so only the length is wrong).
        var pmt = clean
        pmt[188 + 5 + 16] = 0xF3
        let crc = MPEGCRC32.checksum(pmt[(188 + 5)..<(188 + 5 + 18 + 3 - 4)])
        pmt.replaceSubrange((188 + 5 + 17)..<(188 + 5 + 21), with: [UInt8(crc >> 24), UInt8(truncatingIfNeeded: crc >> 16),
                                                                     UInt8(truncatingIfNeeded: crc >> 8), UInt8(truncatingIfNeeded: crc)])
        inputs.append(("ES_info_length", pmt, { if case .invalidField("program map section", "ES_info_length", _, _, _) = $0 { true } else { false } }))

        for (name, bytes, expected) in inputs {
            let error = Self.readError(bytes)
            #expect(error.map(expected) == true, "\(name): \(String(describing: error))")
            #expect(error.map { PipelineError($0).code } == .container)
            FuzzTarget.ts.run(bytes)
            for length in stride(from: 0, through: bytes.count, by: 47) { FuzzTarget.ts.run(Array(bytes.prefix(length))) }
        }
    }

    @Test func aLostPacketIsADiscontinuityAndItsPESPacketIsDropped() throws {
        let clean = try Self.clean()
        // A packet in the middle of a PES packet: on the audio PID, after one on it.
        func isAudio(_ index: Int) -> Bool { clean[index + 1] & 0x1F == 0x01 && clean[index + 2] == 0x00 }
        func continuesPES(_ index: Int) -> Bool { isAudio(index) && clean[index + 1] & 0x40 == 0 && isAudio(index - 188) }
        let middle = try #require(stride(from: 188, to: clean.count, by: 188).first(where: continuesPES))
        var lost = clean
        lost.removeSubrange(middle..<(middle + 188))
        var reader = TransportStreamReader(bytes: lost)
        let packets = try reader.readAll()
        #expect(reader.statistics.continuityErrorCount == 1)
        #expect(reader.statistics.droppedPESCount == 1)
        #expect(packets.count == 2)
        // A packet sent twice is skipped, not counted as a discontinuity.
        var twice = clean
        twice.insert(contentsOf: clean[middle..<(middle + 188)], at: middle + 188)
        var again = TransportStreamReader(bytes: twice)
        #expect(try again.readAll().count == 3)
        #expect(again.statistics.duplicatePacketCount == 1 && again.statistics.continuityErrorCount == 0)
    }

    @Test func theFuzzTargetTakesEveryFlipAndCutOfACleanStream() throws {
        let clean = try Self.clean()
        FuzzTarget.ts.run(clean)
        for index in stride(from: 0, to: clean.count, by: 5) {
            var flipped = clean
            flipped[index] ^= 0xA5
            FuzzTarget.ts.run(flipped)
        }
        for length in stride(from: 0, through: clean.count, by: 11) { FuzzTarget.ts.run(Array(clean.prefix(length))) }
        FuzzTarget.ts.run([])
        FuzzTarget.ts.run([UInt8](repeating: 0x47, count: 188 * 3))
        FuzzTarget.ts.run([UInt8](repeating: 0xFF, count: 4096))
    }
}
