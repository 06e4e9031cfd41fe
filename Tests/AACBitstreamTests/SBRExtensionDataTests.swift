@testable import AACBitstream
import FuzzTargets
import MediaCore
import Testing

/// `SBRHeader`, `SBRExtensionData`, `SBRStreamParser` and the SBR fill element (ISO/IEC
/// 14496-3, 4.4.2.8): generated streams write and read back bit-exactly with their histories;
/// delta coding is chosen and values clamped so that every frame is writable; hostile bytes give
/// typed errors.
@Suite struct SBRExtensionDataTests {
    static let header48k = SBRHeader(amplitudeResolution: 1, startFrequency: 10, stopFrequency: 9)

    // MARK: header

    @Test func headerDefaultsAndLengths() throws {
        var writer = BitWriter()
        try Self.header48k.write(to: &writer)
        #expect(writer.bitCount == 16)
        var reader = BitReader(writer.bytes)
        let read = try SBRHeader(from: &reader)
        #expect(read == Self.header48k)
        #expect(read.frequencyScale == 2 && read.alterScale && read.noiseBands == 2)
        #expect(read.limiterBands == 2 && read.limiterGains == 2 && read.interpolatesFrequency && read.smoothingMode)

        var extra = Self.header48k
        extra.noiseBands = 1
        writer = BitWriter()
        try extra.write(to: &writer)
        #expect(writer.bitCount == 21)
        extra.smoothingMode = false
        writer = BitWriter()
        try extra.write(to: &writer)
        #expect(writer.bitCount == 27)
        reader = BitReader(writer.bytes)
        #expect(try SBRHeader(from: &reader) == extra)
    }

    /// A header without extra blocks takes the defaults, not the previous header's values.
    @Test func headerWithoutExtrasTakesDefaultsNotPreviousValues() throws {
        let tables = try SBRFrequencyTables(header: Self.header48k, outputSampleRate: 48000)
        var odd = Self.header48k
        odd.limiterGains = 0
        odd.interpolatesFrequency = false
        var parser = SBRStreamParser(outputSampleRate: 48000)
        var random = SBRTestRandom(state: 1)
        for header in [odd, Self.header48k] {
            var history = parser.histories.isEmpty ? [SBRChannelHistory()] : parser.histories
            let frame = SBRTestFrames.frame(&random, tables: tables, channelCount: 1, header: header, history: history)
            var writer = BitWriter()
            try frame.write(to: &writer, tables: tables, history: &history)
            var reader = BitReader(writer.bytes)
            let read = try parser.parse(&reader, channelCount: 1, bitLimit: writer.bytes.count * 8)
            #expect(read?.header == header)
            #expect(parser.header == header)
        }
        #expect(parser.header?.limiterGains == 2 && parser.header?.interpolatesFrequency == true)
    }

    @Test func reservedBitsAreReadAndIgnored() throws {
        // bs_amp_res 1, start 10, stop 9, xover 0, bs_reserved 3, no extras.
        var writer = BitWriter()
        for (value, bits) in [(1, 1), (10, 4), (9, 4), (0, 3), (3, 2), (0, 1), (0, 1)] { writer.write(value, bits: bits) }
        var reader = BitReader(writer.bytes)
        #expect(try SBRHeader(from: &reader) == Self.header48k)
    }

    // MARK: streams

    /// Writes `count` generated frames with `write` and reads them with one parser; every frame
    /// reads back equal, bit lengths agree, and the histories of writer and parser agree.
    func roundTrip(rate: Int, header: SBRHeader, channelCount: Int, coupling: Bool?, count: Int, seed: UInt64,
                   headerEvery: Int = 8) throws {
        let tables = try SBRFrequencyTables(header: header, outputSampleRate: rate)
        var random = SBRTestRandom(state: seed)
        var history = Array(repeating: SBRChannelHistory(), count: channelCount)
        var parser = SBRStreamParser(outputSampleRate: rate)
        var sawTime = false
        for index in 0..<count {
            let independent = index % headerEvery == 0
            let frame = SBRTestFrames.frame(&random, tables: tables, channelCount: channelCount, header: independent ? header : nil,
                                            history: history, coupling: coupling, independent: independent)
            sawTime = sawTime || frame.channels.contains { $0.envelopeTimeDelta.contains(true) || $0.noiseTimeDelta.contains(true) }
            let length = try frame.bitLength(tables: tables, history: history)
            let historyBefore = history
            var writer = BitWriter()
            try frame.write(to: &writer, tables: tables, history: &history)
            #expect(writer.bitCount == length)
            // As a fill element: type 13, the bits, zero fill; parse its payload after the type.
            var scratch = historyBefore
            let fill = try FillElement(sbr: frame, tables: tables, history: &scratch)
            #expect(fill.extensionType == FillElement.ExtensionType.sbrData)
            #expect(fill.payload.count == (4 + writer.bitCount + 7) / 8)
            #expect(scratch == history)
            var reader = BitReader(fill.payload)
            _ = try reader.readBits(4)
            let read = try #require(try parser.parse(&reader, channelCount: channelCount, bitLimit: fill.payload.count * 8 - 4))
            #expect(read == frame)
            #expect(parser.histories == history)
            // Bit-exact: what was read writes the same bits again.
            var again = historyBefore
            var rewritten = BitWriter()
            try read.write(to: &rewritten, tables: tables, history: &again)
            #expect(rewritten.bits == writer.bits)
        }
        #expect(sawTime)
    }

    @Test(arguments: [16000, 22050, 24000, 32000, 44100, 48000])
    func monoStreams(rate: Int) throws {
        try roundTrip(rate: rate, header: SBRHeader(amplitudeResolution: UInt8(rate % 2), startFrequency: 8, stopFrequency: 9),
                      channelCount: 1, coupling: nil, count: 40, seed: UInt64(rate))
    }

    @Test(arguments: [false, true])
    func stereoStreams(coupled: Bool) throws {
        try roundTrip(rate: 48000, header: Self.header48k, channelCount: 2, coupling: coupled, count: 60, seed: coupled ? 5 : 6)
        var amp = Self.header48k
        amp.amplitudeResolution = 0
        amp.noiseBands = 3
        try roundTrip(rate: 44100, header: amp, channelCount: 2, coupling: coupled, count: 60, seed: coupled ? 7 : 8)
    }

    /// Coupling switched at random frame by frame: time coding never crosses level and balance.
    @Test func stereoWithCouplingChanges() throws {
        try roundTrip(rate: 32000, header: SBRHeader(startFrequency: 8, stopFrequency: 9), channelCount: 2, coupling: nil, count: 80, seed: 9, headerEvery: 1000)
    }

    /// 1, 2 and 4 FIXFIX envelopes with all-time and all-frequency deltas, SCE and coupled CPE,
    /// byte for byte stable through read and write.
    @Test func fixFixEnvelopeCountsAndDeltaDirections() throws {
        let tables = try SBRFrequencyTables(header: Self.header48k, outputSampleRate: 48000)
        for channelCount in [1, 2] {
            for envelopes in [1, 2, 4] {
                var random = SBRTestRandom(state: UInt64(envelopes * 10 + channelCount))
                var history = Array(repeating: SBRChannelHistory(), count: channelCount)
                var parser = SBRStreamParser(outputSampleRate: 48000)
                for frameIndex in 0..<4 {
                    let grid = SBRGrid.fixFix(envelopeCount: envelopes, highFrequencyResolution: frameIndex % 2 == 0)
                    var channels: [SBRChannelData] = []
                    for channel in 0..<channelCount {
                        var data = SBRTestFrames.channel(&random, grid: grid, tables: tables, balance: channel == 1,
                                                         modes: channels.first?.inverseFilteringModes, history: history[channel], independent: false)
                        let time = frameIndex > 0
                        data.envelopeTimeDelta = Array(repeating: time, count: envelopes)
                        data.noiseTimeDelta = Array(repeating: time, count: grid.noiseFloorCount)
                        channels.append(data)
                    }
                    let frame = SBRExtensionData(header: frameIndex == 0 ? Self.header48k : nil, coupling: channelCount == 2, channels: channels)
                    let before = history
                    var writer = BitWriter()
                    try frame.write(to: &writer, tables: tables, history: &history)
                    var reader = BitReader(writer.bytes)
                    let read = try #require(try parser.parse(&reader, channelCount: channelCount, bitLimit: writer.bytes.count * 8))
                    #expect(read == frame)
                    var rewritten = BitWriter()
                    var again = before
                    try read.write(to: &rewritten, tables: tables, history: &again)
                    #expect(rewritten.bits == writer.bits)
                }
            }
        }
    }

    @Test func dataBeforeTheFirstHeaderIsSkipped() throws {
        let tables = try SBRFrequencyTables(header: Self.header48k, outputSampleRate: 48000)
        var random = SBRTestRandom(state: 3)
        var history = [SBRChannelHistory()]
        let frame = SBRTestFrames.frame(&random, tables: tables, channelCount: 1, header: nil, history: history, independent: true)
        var writer = BitWriter()
        try frame.write(to: &writer, tables: tables, history: &history)
        var parser = SBRStreamParser(outputSampleRate: 48000)
        var reader = BitReader(writer.bytes + [0])
        #expect(try parser.parse(&reader, channelCount: 1, bitLimit: writer.bytes.count * 8) == nil)
        #expect(reader.bitsRemaining == 8)   // exactly the bit limit is consumed
    }

    // MARK: writer refusals

    @Test func unrepresentableValuesAreTypedErrors() throws {
        let tables = try SBRFrequencyTables(header: Self.header48k, outputSampleRate: 48000)
        let grid = SBRGrid.fixFix(envelopeCount: 2, highFrequencyResolution: true)
        let bands = tables.highBandCount
        func channel(_ envelope: [Int], time: Bool = false) -> SBRChannelData {
            SBRChannelData(grid: grid, envelopeTimeDelta: [time, false], noiseTimeDelta: [false, false],
                           inverseFilteringModes: Array(repeating: 0, count: tables.noiseBandCount),
                           envelopes: [envelope, Array(repeating: 40, count: bands)],
                           noiseFloors: Array(repeating: Array(repeating: 10, count: tables.noiseBandCount), count: 2))
        }
        var jump = Array(repeating: 10, count: bands)
        jump[3] = 100   // a frequency delta of 90 > LAV 31 (3 dB)
        var start = Array(repeating: 64, count: bands)   // 64 does not fit the 6-bit start value
        start[0] = 64
        for data in [channel(jump), channel(start), channel(Array(repeating: 10, count: bands), time: true)] {
            var writer = BitWriter()
            var history = [SBRChannelHistory()]
            #expect(throws: AACBitstreamError.self) {
                try SBRExtensionData(header: Self.header48k, channels: [data]).write(to: &writer, tables: tables, history: &history)
            }
            #expect(writer.bitCount == 0 && history == [SBRChannelHistory()])
        }
    }

    // MARK: delta coding choice

    @Test func chooseDeltaCodingUsesFrequencyWhenIndependentAndClampsJumps() throws {
        let tables = try SBRFrequencyTables(header: Self.header48k, outputSampleRate: 48000)
        let bands = tables.highBandCount
        let grid = SBRGrid.fixFix(envelopeCount: 2, highFrequencyResolution: true)
        var jumpy = Array(repeating: 5, count: bands)
        jumpy[2] = 120          // +115, then −115: beyond LAV 31 both ways
        jumpy[0] = 90           // beyond the 6-bit start value
        let steady = Array(repeating: 30, count: bands)
        let previous = SBRChannelHistory(envelope: steady, highResolution: true, noiseFloor: Array(repeating: 12, count: tables.noiseBandCount))
        var frame = SBRExtensionData(channels: [SBRChannelData(
            grid: grid, envelopeTimeDelta: [true, true], noiseTimeDelta: [true, true],
            inverseFilteringModes: Array(repeating: 1, count: tables.noiseBandCount),
            envelopes: [steady, jumpy], noiseFloors: [Array(repeating: 12, count: tables.noiseBandCount), Array(repeating: 40, count: tables.noiseBandCount)])])

        var independent = frame
        independent.chooseDeltaCoding(tables: tables, history: [previous], independent: true)
        #expect(independent.channels[0].envelopeTimeDelta[0] == false)
        #expect(independent.channels[0].noiseTimeDelta[0] == false)

        frame.chooseDeltaCoding(tables: tables, history: [previous], independent: false)
        let channel = frame.channels[0]
        #expect(channel.envelopeTimeDelta[0] == true)     // equal to the previous frame: time deltas of 0
        #expect(channel.envelopes[0] == steady)
        #expect(channel.noiseTimeDelta[0] == true)
        // The jumpy envelope was clamped: start ≤ 63, every step within ±31, values 0...127.
        let clamped = channel.envelopes[1]
        #expect(clamped != jumpy)
        #expect(clamped[0] <= 63)
        #expect(zip(clamped, clamped.dropFirst()).allSatisfy { abs($1 - $0) <= 31 })
        #expect(channel.noiseFloors[1].allSatisfy { (0...30).contains($0) })
        var writer = BitWriter()
        var history = [previous]
        try frame.write(to: &writer, tables: tables, history: &history)
        #expect(history[0].envelope == clamped)
    }

    /// chooseDeltaCoding never leaves data unwritable, whatever the values.
    @Test func chooseDeltaCodingAlwaysWritable() throws {
        let tables = try SBRFrequencyTables(header: Self.header48k, outputSampleRate: 48000)
        var random = SBRTestRandom(state: 77)
        var history = Array(repeating: SBRChannelHistory(), count: 2)
        for index in 0..<100 {
            var frame = SBRTestFrames.frame(&random, tables: tables, channelCount: 2, header: nil, history: history)
            for channel in frame.channels.indices {
                for envelope in frame.channels[channel].envelopes.indices {
                    frame.channels[channel].envelopes[envelope] = frame.channels[channel].envelopes[envelope].map { _ in random.int(-50...300) }
                }
                for floor in frame.channels[channel].noiseFloors.indices {
                    frame.channels[channel].noiseFloors[floor] = frame.channels[channel].noiseFloors[floor].map { _ in random.int(-10...60) }
                }
            }
            frame.chooseDeltaCoding(tables: tables, history: history, independent: index % 5 == 0)
            var writer = BitWriter()
            try frame.write(to: &writer, tables: tables, history: &history)
        }
    }

    // MARK: hostile input

    @Test func hostileBytesGiveTypedErrorsOrData() {
        var random = SBRTestRandom(state: 99)
        for rate in [16000, 22050, 24000, 32000, 44100, 48000] {
            for channelCount in [1, 2] {
                var parser = SBRStreamParser(outputSampleRate: rate)
                for _ in 0..<300 {
                    let count = random.int(0...40)
                    var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                    if !bytes.isEmpty, random.bool() { bytes[0] |= 0x80 }   // bs_header_flag
                    var reader = BitReader(bytes)
                    do {
                        _ = try parser.parse(&reader, channelCount: channelCount, bitLimit: bytes.count * 8)
                    } catch {
                        #expect(parser.header == nil)
                    }
                }
            }
        }
        var parser = SBRStreamParser(outputSampleRate: 48000)
        var reader = BitReader([0xFF])
        #expect(throws: AACBitstreamError.self) { try parser.parse(&reader, channelCount: 3, bitLimit: 8) }
        #expect(throws: AACBitstreamError.self) { try parser.parse(&reader, channelCount: 1, bitLimit: 16) }
    }

    /// The `sbr` fuzz target over generated streams, and their truncations.
    @Test func fuzzTargetOverGeneratedStreams() throws {
        for seed in SBRExtensionDataTests.seedInputs() {
            FuzzTarget.sbr.run(seed)
            for length in stride(from: 0, to: seed.count, by: 3) { FuzzTarget.sbr.run(Array(seed.prefix(length))) }
            for index in stride(from: 1, to: seed.count, by: 5) {
                var flipped = seed
                flipped[index] ^= 0x24
                FuzzTarget.sbr.run(flipped)
            }
        }
    }

    /// Fuzz inputs in the `sbr` target's format: selector byte, then length-prefixed frames of a
    /// generated stream (the seeds under Regressions/sbr were made by this).
    static func seedInputs() -> [[UInt8]] {
        var inputs: [[UInt8]] = []
        let rates = [16000, 22050, 24000, 32000, 44100, 48000]
        let headers = [SBRHeader(startFrequency: 8, stopFrequency: 12), SBRHeader(startFrequency: 9, stopFrequency: 10),
                       SBRHeader(startFrequency: 9, stopFrequency: 10), SBRHeader(startFrequency: 8, stopFrequency: 9),
                       SBRHeader(amplitudeResolution: 0, startFrequency: 10, stopFrequency: 9, noiseBands: 1),
                       header48k]
        for (rateIndex, rate) in rates.enumerated() {
            for channelCount in [1, 2] {
                guard let tables = try? SBRFrequencyTables(header: headers[rateIndex], outputSampleRate: rate) else { continue }
                var random = SBRTestRandom(state: UInt64(rateIndex * 2 + channelCount))
                var history = Array(repeating: SBRChannelHistory(), count: channelCount)
                var input: [UInt8] = [UInt8(rateIndex) | (channelCount == 2 ? 8 : 0)]
                for index in 0..<6 {
                    let frame = SBRTestFrames.frame(&random, tables: tables, channelCount: channelCount,
                                                    header: index % 3 == 0 ? headers[rateIndex] : nil, history: history)
                    var writer = BitWriter()
                    guard (try? frame.write(to: &writer, tables: tables, history: &history)) != nil, writer.bytes.count < 256 else { break }
                    input.append(UInt8(writer.bytes.count))
                    input += writer.bytes
                }
                inputs.append(input)
            }
        }
        return inputs
    }
}
