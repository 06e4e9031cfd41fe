import AACBitstream
import MediaCore
import MPEGTS
import TestSupport
import Testing

/// The muxer's packets checked field by field against ISO/IEC 13818-1 and read back by our reader:
/// CRCs, continuity counters, PTS and PCR, stuffing, the 33-bit wrap.
@Suite struct TransportStreamMuxerTests {
    static func config(rate: Int = 48000, channels: Int = 2) throws -> AudioSpecificConfig {
        try AudioSpecificConfig(sampleRate: rate, channelCount: channels)
    }

    static func frames(count: Int, seed: UInt64 = 1, sizes: ClosedRange<Int> = 6...700) -> [[UInt8]] {
        var random = SplitMix64(state: seed)
        return (0..<count).map { _ in
            (0..<Int.random(in: sizes, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        }
    }

    /// Muxes `frames` from `start` (contiguous), tables first, flushed at the end.
    static func mux(_ frames: [[UInt8]], rate: Int = 48000, framesPerPES: Int? = nil, start: Int64 = 0) throws -> [UInt8] {
        var muxer = try TransportStreamMuxer(audioSpecificConfig: config(rate: rate), framesPerPES: framesPerPES)
        var out = muxer.programTables()
        for (index, frame) in frames.enumerated() {
            out += try muxer.write(frame: frame, sampleTime: start + Int64(index) * 1024)
        }
        return out + muxer.flush()
    }

    static func packets(_ bytes: [UInt8]) throws -> [TransportPacket] {
        var reader = ByteReader(bytes)
        var packets: [TransportPacket] = []
        while !reader.isAtEnd { packets.append(try TransportPacket(from: &reader)) }
        return packets
    }

    /// The raw data blocks of the ADTS frames of a PES payload.
    static func rawBlocks(_ payload: [UInt8]) throws -> [[UInt8]] {
        var reader = ByteReader(payload)
        var blocks: [[UInt8]] = []
        while !reader.isAtEnd {
            var peek = reader
            let header = try ADTSHeader(from: &peek)
            let frame = try reader.readBytes(header.frameLength)
            blocks.append(Array(frame[header.headerLength...]))
        }
        return blocks
    }

    // MARK: - Tables

    @Test func crcIsMPEG2() {
        // CRC-32/MPEG-2's check value (the CRC of "123456789").
        #expect(MPEGCRC32.checksum(Array("123456789".utf8)) == 0x0376_E6E7)
        // A section with its CRC appended checks to zero (Annex A).
        let section = ProgramAssociationTable(transportStreamID: 7, programs: [.init(programNumber: 3, pid: 0x123)]).section.bytes
        #expect(MPEGCRC32.checksum(section) == 0)
    }

    @Test func tablesAreByteForByteFFmpegs() throws {
        var muxer = try TransportStreamMuxer(audioSpecificConfig: Self.config())
        let tables = muxer.programTables()
        #expect(tables.count == 2 * 188)
        // `ffmpeg -f lavfi -i sine -c:a aac out.ts` (FFmpeg 5.1): its PAT and PMT packets.
        let pat = HexBytes.bytes("474000100000b00d0001c100000001f0002ab104b2")
        let pmt = HexBytes.bytes("475000100002b0120001c10000e100f0000fe100f000b69bc0d9")
        #expect(Array(tables[0..<pat.count]) == pat)
        #expect(tables[pat.count..<188].allSatisfy { $0 == 0xFF })
        #expect(Array(tables[188..<(188 + pmt.count)]) == pmt)
        #expect(tables[(188 + pmt.count)...].allSatisfy { $0 == 0xFF })

        var reader = ByteReader(Array(tables[5..<188]))
        let section = try PSISection(from: &reader, structure: "PAT")
        #expect(try ProgramAssociationTable(section: section, offset: 5) == muxer.programAssociationTable)
        var mapReader = ByteReader(Array(tables[193...]))
        let mapSection = try PSISection(from: &mapReader, structure: "PMT")
        let map = try ProgramMapTable(section: mapSection, offset: 193)
        #expect(map == muxer.programMapTable)
        #expect(map.adtsAudioStream?.pid == 0x100 && map.pcrPID == 0x100)
    }

    @Test func tableCountersAdvanceOnEveryCallAndWrap() throws {
        var muxer = try TransportStreamMuxer(audioSpecificConfig: Self.config())
        for call in 0..<40 {
            let packets = try Self.packets(muxer.programTables())
            #expect(packets.map(\.pid) == [0, 0x1000])
            #expect(packets.allSatisfy { $0.continuityCounter == UInt8(call % 16) && $0.payloadUnitStartIndicator })
        }
    }

    @Test func reconnectTablesMidStreamKeepEveryCounterContinuous() throws {
        let frames = Self.frames(count: 60)
        var muxer = try TransportStreamMuxer(audioSpecificConfig: Self.config())
        var out = muxer.programTables()
        for (index, frame) in frames.enumerated() {
            if index == 17 || index == 18 || index == 41 { out += muxer.programTables() }   // reconnects, one right after another
            out += try muxer.write(frame: frame, sampleTime: Int64(index) * 1024)
        }
        out += muxer.flush()
        var reader = TransportStreamReader(bytes: out)
        let packets = try reader.readAll()
        #expect(reader.statistics.continuityErrorCount == 0)
        #expect(reader.statistics.duplicatePacketCount == 0)
        #expect(try packets.flatMap { try Self.rawBlocks($0.pes.payload) } == frames)
        // The PAT's counter runs 0, 1, 2, … through the periodic and the requested tables alike.
        let counters = try Self.packets(out).filter { $0.pid == 0 }.map(\.continuityCounter)
        #expect(counters == (0..<counters.count).map { UInt8($0 % 16) })
        // 15 PES packets of 85 ms: the tables go before every other one (0.1 s apart or more),
        // and before the first after each reconnect's own.
        #expect(counters.count >= 15 / 2 + 1)
    }

    // MARK: - Timing

    @Test func ptsAndPCRAreFFmpegsOffsets() throws {
        let frames = Self.frames(count: 12)
        var reader = TransportStreamReader(bytes: try Self.mux(frames, framesPerPES: 4))
        let packets = try reader.readAll()
        let times: [Int64?] = [126_000, 133_680, 141_360]   // 4 frames of 1920 ticks apart
        let clocks: [Int64?] = [63_000, 70_680, 78_360]
        #expect(packets.map(\.pes.presentationTime) == times)
        #expect(packets.map { $0.programClockReference?.base } == clocks)
        #expect(packets.allSatisfy { $0.programClockReference?.extensionValue == 0 })
        #expect(packets.allSatisfy { $0.randomAccessIndicator && !$0.discontinuityIndicator && $0.pes.dataAlignmentIndicator })
        #expect(packets.allSatisfy { $0.pes.streamID == 0xC0 && $0.pes.decodeTime == nil })
    }

    @Test func ptsAt44100IsRoundedFromTheSampleCountWithoutDrift() throws {
        let muxer = try TransportStreamMuxer(audioSpecificConfig: Self.config(rate: 44100))
        #expect(muxer.framesPerPES == 4)
        #expect(muxer.presentationTime(sampleTime: 1024) == 126_000 + 2090)   // 2089.80 ticks
        #expect(muxer.presentationTime(sampleTime: 4096) == 126_000 + 8359)   // 8359.18
        // An hour of frames: exactly 90000 ticks per 44100 samples.
        #expect(muxer.presentationTime(sampleTime: 44100 * 3600) == 126_000 + 90_000 * 3600)
        #expect(muxer.presentationTime(sampleTime: -44100) == 126_000 - 90_000)
    }

    @Test func ptsAndPCRWrapAt33Bits() throws {
        let modulus: Int64 = 1 << 33
        // Frames whose PTS crosses 2^33 (about 26.5 hours in).
        let start = (modulus - 126_000 - 5 * 1920) / 1920 * 1024
        let frames = Self.frames(count: 24)
        let bytes = try Self.mux(frames, framesPerPES: 2, start: start)
        var reader = TransportStreamReader(bytes: bytes)
        let packets = try reader.readAll()
        let muxer = try TransportStreamMuxer(audioSpecificConfig: Self.config())
        let expected = (0..<12).map { muxer.presentationTime(sampleTime: start + Int64($0) * 2048) % modulus }
        #expect(packets.map(\.pes.presentationTime) == expected)
        #expect(expected.contains { $0 < 20_000 } && expected.contains { $0 > modulus - 20_000 })
        #expect(packets.allSatisfy { $0.pes.presentationTime! < modulus && $0.programClockReference!.base < modulus })
        #expect(packets.allSatisfy { ($0.pes.presentationTime! - $0.programClockReference!.base + modulus) % modulus == 63_000 })
        // A wrap is not a new time base.
        #expect(packets.allSatisfy { !$0.discontinuityIndicator })
        #expect(try packets.flatMap { try Self.rawBlocks($0.pes.payload) } == frames)
    }

    @Test func pcrsAreAtMostATenthOfASecondApartAtLowRates() throws {
        // 8 kHz: one frame is 128 ms, so PCR-only packets fill in between PES packets.
        let bytes = try Self.mux(Self.frames(count: 30, sizes: 6...60), rate: 8000)
        let clocks = try Self.packets(bytes).compactMap { $0.adaptationField?.programClockReference?.base }
        #expect(clocks.count > 30)
        #expect(zip(clocks, clocks.dropFirst()).allSatisfy { $1 > $0 && $1 - $0 <= 9000 })
        var reader = TransportStreamReader(bytes: bytes)
        let packets = try reader.readAll()
        #expect(packets.count == 30)
        #expect(reader.statistics.continuityErrorCount == 0)
        #expect(reader.statistics.programClockReferenceCount == clocks.count)
    }

    @Test func timestampsThatGoBackStartANewTimeBase() throws {
        var muxer = try TransportStreamMuxer(audioSpecificConfig: Self.config(), framesPerPES: 1)
        var out = muxer.programTables()
        for (index, time) in [0, 1024, 2048, 0, 1024].enumerated() {
            out += try muxer.write(frame: [UInt8(index), 1, 2], sampleTime: Int64(time))
        }
        var reader = TransportStreamReader(bytes: out)
        let packets = try reader.readAll()
        #expect(packets.map(\.discontinuityIndicator) == [false, false, false, true, false])
        #expect(reader.statistics.continuityErrorCount == 0)
    }

    @Test func aGapInTheTimestampsEndsThePESPacket() throws {
        var muxer = try TransportStreamMuxer(audioSpecificConfig: Self.config(), framesPerPES: 4)
        var out = muxer.programTables()
        for time: Int64 in [0, 1024, 4096, 5120, 6144, 7168] {
            out += try muxer.write(frame: [1, 2, 3], sampleTime: time)
        }
        out += muxer.flush()
        var reader = TransportStreamReader(bytes: out)
        let packets = try reader.readAll()
        let times: [Int64?] = [126_000, 133_680]
        #expect(packets.map(\.pes.presentationTime) == times)
        #expect(try packets.map { try Self.rawBlocks($0.pes.payload).count } == [2, 4])
    }

    // MARK: - Packets

    @Test func everyWriteReturnsWholePacketsAndGroupsFrames() throws {
        var muxer = try TransportStreamMuxer(audioSpecificConfig: Self.config(), framesPerPES: 3)
        #expect(muxer.programTables().count == 376)
        var sizes: [Int] = []
        for (index, frame) in Self.frames(count: 9).enumerated() {
            sizes.append(try muxer.write(frame: frame, sampleTime: Int64(index) * 1024).count)
        }
        #expect(sizes.enumerated().allSatisfy { $0.offset % 3 == 2 ? $0.element > 0 : $0.element == 0 })
        #expect(sizes.allSatisfy { $0 % 188 == 0 })
        #expect(muxer.flush().isEmpty)
    }

    @Test func pesPacketsStopShortOfWhatPESPacketLengthCounts() throws {
        // 8 frames of 8184 bytes would be 65528 bytes of ADTS: one more than a PES packet holds.
        let frames = Self.frames(count: 16, sizes: 8184...8184)
        var reader = TransportStreamReader(bytes: try Self.mux(frames, framesPerPES: 8))
        let packets = try reader.readAll()
        #expect(packets.allSatisfy { $0.pes.payload.count <= 65527 })
        #expect(try packets.flatMap { try Self.rawBlocks($0.pes.payload) } == frames)
    }

    @Test(arguments: [0, 1, 2, 3, 100, 175, 176, 177, 360, 361, 362])
    func theLastPacketOfAPESPacketIsStuffedInItsAdaptationField(free: Int) throws {
        // A PES packet of one frame: 14 bytes of PES header, 7 of ADTS, the raw data. The first
        // packet holds 176 bytes after the PCR's adaptation field, the others 184: choose the
        // raw length so that `free` bytes are left in the last packet.
        let pesLength = free <= 175 ? 176 - free : 176 + 184 * ((free - 176) / 184 + 1) - (free - 176) % 184 - 0
        let raw = max(0, pesLength - 21)
        let bytes = try Self.mux([[UInt8](repeating: 0x5A, count: raw)], framesPerPES: 1)
        let audio = try Self.packets(bytes).filter { $0.pid == 0x100 }
        let last = try #require(audio.last)
        let stuffing = 14 + 7 + raw <= 176 ? 176 - (21 + raw) : (184 - (21 + raw - 176) % 184) % 184
        if audio.count == 1 {
            #expect(last.adaptationField?.length == 7 + stuffing)
            #expect(last.adaptationField?.stuffingLength == stuffing)
        } else if stuffing == 0 {
            #expect(last.adaptationField == nil && last.payload.count == 184)
        } else {
            // One byte free: an adaptation field of length 0; more: the flags byte and 0xFF.
            #expect(last.adaptationField?.length == stuffing - 1)
            #expect(last.adaptationField?.hasFlags == false)
            #expect(last.payload.count == 184 - stuffing)
        }
        #expect(last.bytes == Array(bytes.suffix(188)))
        // Stuffing is 0xFF.
        let field = last.adaptationField?.bytes ?? []
        #expect(field.dropFirst(min(field.count, audio.count == 1 ? 8 : 2)).allSatisfy { $0 == 0xFF })
        var reader = TransportStreamReader(bytes: bytes)
        #expect(try reader.readAll().map { try Self.rawBlocks($0.pes.payload) } == [[[UInt8](repeating: 0x5A, count: raw)]])
    }

    @Test func roundTripsRandomFramesAtEveryGrouping() throws {
        for framesPerPES in [1, 2, 3, 5, 8] {
            let frames = Self.frames(count: 101, seed: UInt64(framesPerPES), sizes: 0...1500)
            let bytes = try Self.mux(frames, framesPerPES: framesPerPES, start: 48_000)
            #expect(bytes.count % 188 == 0)
            #expect(stride(from: 0, to: bytes.count, by: 188).allSatisfy { bytes[$0] == 0x47 })
            var reader = TransportStreamReader(bytes: bytes)
            let packets = try reader.readAll()
            #expect(packets.count == (101 + framesPerPES - 1) / framesPerPES)
            #expect(try packets.flatMap { try Self.rawBlocks($0.pes.payload) } == frames)
            let muxer = try TransportStreamMuxer(audioSpecificConfig: Self.config())
            #expect(packets.enumerated().allSatisfy {
                $0.element.pes.presentationTime == muxer.presentationTime(sampleTime: 48_000 + Int64($0.offset * framesPerPES) * 1024)
            })
            #expect(reader.statistics.continuityErrorCount == 0 && reader.statistics.droppedPESCount == 0)
            #expect(reader.statistics.skippedPayloadBytes == 0)
        }
    }

    // MARK: - Errors

    @Test func whatADTSCannotCarryIsATypedError() throws {
        var config = try Self.config()
        config.channelConfiguration = 0
        #expect(throws: TransportStreamError.self) { try TransportStreamMuxer(audioSpecificConfig: config) }
        var muxer = try TransportStreamMuxer(audioSpecificConfig: Self.config())
        let error = #expect(throws: TransportStreamError.self) {
            try muxer.write(frame: [UInt8](repeating: 0, count: 8185), sampleTime: 0)
        }
        #expect(error.map { PipelineError($0).code } == .container)
        // Nothing was written or kept.
        #expect(try muxer.write(frame: [1], sampleTime: 0).isEmpty)
        #expect(muxer.flush().count == 3 * 188)
    }
}

/// Hex text to bytes, for expected packets written out in the tests.
enum HexBytes {
    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }
}
