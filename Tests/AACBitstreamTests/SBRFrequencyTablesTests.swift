@testable import AACBitstream
import Testing

/// `SBRFrequencyTables` (ISO/IEC 14496-3, 4.6.18.3.2): the band tables of the design note's
/// tunings, and no trap for any header at any rate.
@Suite struct SBRFrequencyTablesTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var rate: Int, start: UInt8, stop: UInt8, kx: Int, k2: Int, high: Int, low: Int, noise: Int
        var testDescription: String { "\(rate) Hz start \(start) stop \(stop)" }
    }

    /// The tunings of the design note (§2.2), with default extras and crossover 0.
    static let cases: [Case] = [
        Case(rate: 48000, start: 6, stop: 7, kx: 14, k2: 38, high: 14, low: 7, noise: 3),
        Case(rate: 48000, start: 10, stop: 9, kx: 18, k2: 45, high: 12, low: 6, noise: 3),
        Case(rate: 48000, start: 12, stop: 9, kx: 22, k2: 45, high: 10, low: 5, noise: 2),
        Case(rate: 44100, start: 10, stop: 9, kx: 19, k2: 47, high: 12, low: 6, noise: 3),
        Case(rate: 44100, start: 11, stop: 10, kx: 21, k2: 51, high: 12, low: 6, noise: 3),
        Case(rate: 32000, start: 8, stop: 9, kx: 20, k2: 52, high: 12, low: 6, noise: 3),
        Case(rate: 32000, start: 11, stop: 10, kx: 23, k2: 55, high: 12, low: 6, noise: 3),
        Case(rate: 16000, start: 8, stop: 12, kx: 24, k2: 62, high: 12, low: 6, noise: 3),
    ]

    @Test(arguments: cases)
    func noteTunings(_ c: Case) throws {
        let tables = try SBRFrequencyTables(header: SBRHeader(startFrequency: c.start, stopFrequency: c.stop), outputSampleRate: c.rate)
        #expect(tables.kx == c.kx)
        #expect(tables.k2 == c.k2)
        #expect(tables.highBandCount == c.high)
        #expect(tables.lowBandCount == c.low)
        #expect(tables.noiseBandCount == c.noise)
        #expect(tables.kx + tables.m == tables.k2)
        #expect(tables.bands(highResolution: true) == tables.high && tables.bands(highResolution: false) == tables.low)
    }

    /// 48 kHz, start 10, stop 9: k0 = startMin 11 + offset 7; the derived tables relate as
    /// 4.6.18.3.2 says.
    @Test func fullTablesAt48k() throws {
        let tables = try SBRFrequencyTables(header: SBRHeader(startFrequency: 10, stopFrequency: 9), outputSampleRate: 48000)
        #expect(tables.k0 == 18)
        #expect(tables.master == tables.high)
        #expect(tables.low == stride(from: 0, through: 12, by: 2).map { tables.high[$0] })
        #expect(tables.noise.first == tables.low.first && tables.noise.last == tables.low.last)
        #expect(tables.patches.map(\.count).reduce(0, +) <= tables.m)
        #expect(tables.patches.allSatisfy { $0.count > 0 && $0.sourceStart >= 1 && $0.sourceStart + $0.count <= tables.kx })
    }

    @Test func unsupportedRatesAreTypedErrors() {
        for rate in [8000, 11025, 12000, 64000, 96000, 0, -1] {
            #expect(throws: AACBitstreamError.self) { try SBRFrequencyTables(header: SBRHeader(startFrequency: 5, stopFrequency: 5), outputSampleRate: rate) }
        }
    }

    @Test func crossoverPastTheMasterTableIsAnError() {
        #expect(throws: AACBitstreamError.self) {
            try SBRFrequencyTables(header: SBRHeader(startFrequency: 15, stopFrequency: 0, crossoverBand: 7), outputSampleRate: 48000)
        }
    }

    /// Every start/stop/crossover at every rate (and every scale, alter scale and noise band
    /// count at crossover 0) gives tables or a typed error, and valid tables keep the invariants.
    @Test func everyHeaderAtEveryRateNeverTraps() {
        var valid = 0
        for rate in [16000, 22050, 24000, 32000, 44100, 48000] {
            for start in UInt8(0)...15 {
                for stop in UInt8(0)...15 {
                    var headers = (UInt8(0)...7).map { SBRHeader(startFrequency: start, stopFrequency: stop, crossoverBand: $0) }
                    for scale in UInt8(0)...3 {
                        for alter in [false, true] {
                            for noise in UInt8(0)...3 {
                                headers.append(SBRHeader(startFrequency: start, stopFrequency: stop, frequencyScale: scale, alterScale: alter, noiseBands: noise))
                            }
                        }
                    }
                    for header in headers {
                        guard let tables = try? SBRFrequencyTables(header: header, outputSampleRate: rate) else { continue }
                        valid += 1
                        #expect(zip(tables.master, tables.master.dropFirst()).allSatisfy { $0 < $1 })
                        #expect(tables.kx <= 32 && tables.kx + tables.m <= 64)
                        #expect((1...5).contains(tables.noiseBandCount))
                        #expect(tables.lowBandCount == (tables.highBandCount + 1) / 2)
                        #expect(Set(tables.low).isSubset(of: Set(tables.high)) && Set(tables.noise).isSubset(of: Set(tables.low)))
                        #expect(tables.patches.count <= 6 && tables.patches.allSatisfy { $0.count > 0 })
                    }
                }
            }
        }
        #expect(valid > 10_000)
    }
}
