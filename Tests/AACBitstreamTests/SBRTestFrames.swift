@testable import AACBitstream
import MediaCore

/// A small deterministic generator (SplitMix64).
struct SBRTestRandom {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
    mutating func bool() -> Bool { next() & 1 == 1 }
}

/// Random valid SBR frames for round trips: grids of every class, values that both codings
/// can code, and time deltas wherever the history allows them.
enum SBRTestFrames {
    static func grid(_ random: inout SBRTestRandom, frameClass: SBRGrid.FrameClass? = nil) -> SBRGrid {
        let frameClass = frameClass ?? SBRGrid.FrameClass(rawValue: UInt8(random.int(0...3)))!
        while true {
            var grid: SBRGrid
            switch frameClass {
            case .fixFix:
                grid = .fixFix(envelopeCount: [1, 2, 4][random.int(0...2)], highFrequencyResolution: random.bool())
            case .fixVar:
                grid = SBRGrid(frameClass: .fixVar, trailingBorder: random.int(0...3),
                               trailingRelativeBorders: (0..<random.int(0...3)).map { _ in random.int(0...3) }, frequencyResolutions: [])
            case .varFix:
                grid = SBRGrid(frameClass: .varFix, leadingBorder: random.int(0...3),
                               leadingRelativeBorders: (0..<random.int(0...3)).map { _ in random.int(0...3) }, frequencyResolutions: [])
            case .varVar:
                let leading = random.int(0...3)
                grid = SBRGrid(frameClass: .varVar, leadingBorder: random.int(0...3), trailingBorder: random.int(0...3),
                               leadingRelativeBorders: (0..<leading).map { _ in random.int(0...3) },
                               trailingRelativeBorders: (0..<random.int(0...min(3, 4 - leading))).map { _ in random.int(0...3) },
                               frequencyResolutions: [])
            }
            if frameClass != .fixFix {
                let count = grid.envelopeCount
                grid.frequencyResolutions = (0..<count).map { _ in random.bool() }
                grid.pointer = random.int(0...min(count + 1, (1 << SBRGrid.pointerBits(envelopeCount: count)) - 1))
            }
            if (try? grid.validate()) != nil { return grid }
        }
    }

    /// Values in a band narrow enough that every delta, in frequency or time, fits every table.
    static func values(_ random: inout SBRTestRandom, count: Int, range: ClosedRange<Int>) -> [Int] {
        (0..<count).map { _ in random.int(range) }
    }

    static func channel(_ random: inout SBRTestRandom, grid: SBRGrid, tables: SBRFrequencyTables, balance: Bool,
                        modes: [UInt8]? = nil, history: SBRChannelHistory, independent: Bool) -> SBRChannelData {
        let envelopeRange = balance ? 3...15 : 20...50
        let noiseRange = balance ? 2...14 : 0...30
        let envelopes = grid.frequencyResolutions.map { values(&random, count: tables.bandCount(highResolution: $0), range: envelopeRange) }
        let noise = (0..<grid.noiseFloorCount).map { _ in values(&random, count: tables.noiseBandCount, range: noiseRange) }
        var channel = SBRChannelData(grid: grid, envelopeTimeDelta: [], noiseTimeDelta: [],
                                     inverseFilteringModes: modes ?? (0..<tables.noiseBandCount).map { _ in UInt8(random.int(0...3)) },
                                     envelopes: envelopes, noiseFloors: noise,
                                     addHarmonics: random.bool() ? (0..<tables.highBandCount).map { _ in random.bool() } : nil)
        channel.envelopeTimeDelta = envelopes.indices.map { index in
            random.bool() && !(independent && index == 0)
                && channel.envelopeTimeBase(index, tables: tables, balance: balance, history: history) != nil
        }
        channel.noiseTimeDelta = noise.indices.map { index in
            random.bool() && !(independent && index == 0)
                && channel.noiseTimeBase(index, tables: tables, balance: balance, history: history) != nil
        }
        return channel
    }

    /// One frame of `channelCount` channels against `history`.
    static func frame(_ random: inout SBRTestRandom, tables: SBRFrequencyTables, channelCount: Int, header: SBRHeader?,
                      history: [SBRChannelHistory], coupling: Bool? = nil, independent: Bool = false) -> SBRExtensionData {
        let coupling = channelCount == 2 && (coupling ?? random.bool())
        let grid0 = grid(&random)
        let first = channel(&random, grid: grid0, tables: tables, balance: false, history: history[0], independent: independent)
        var channels = [first]
        if channelCount == 2 {
            channels.append(channel(&random, grid: coupling ? grid0 : grid(&random), tables: tables, balance: coupling,
                                    modes: coupling ? first.inverseFilteringModes : nil, history: history[1], independent: independent))
        }
        var extended: BitString?
        if random.int(0...3) == 0 {
            var bits = BitString()
            for _ in 0..<[1, 14, 15, 40][random.int(0...3)] { bits.append(random.next() & 0xFF, bitCount: 8) }
            extended = bits
        }
        return SBRExtensionData(header: header, coupling: coupling, channels: channels, extendedData: extended)
    }
}
