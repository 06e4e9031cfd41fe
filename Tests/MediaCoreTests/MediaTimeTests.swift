import MediaCore
import Testing

@Suite struct MediaTimeTests {
    @Test func comparesExactlyAcrossTimescales() {
        let half = MediaTime(value: 1, timescale: 2)
        let twoQuarters = MediaTime(value: 2, timescale: 4)
        #expect(half == twoQuarters)
        #expect(half.hashValue == twoQuarters.hashValue)
        #expect(MediaTime(value: 1023, timescale: 44100) < MediaTime(value: 1024, timescale: 44100))
        #expect(MediaTime(value: 1, timescale: 3) > MediaTime(value: 33333, timescale: 100000))
        // Values whose cross products overflow 64 bits still compare right.
        let big = MediaTime(value: .max, timescale: .max)
        let bigger = MediaTime(value: .max, timescale: .max - 1)
        #expect(big < bigger)
    }

    @Test func addsInTheLeastCommonMultiple() throws {
        let sum = try MediaTime(value: 1024, timescale: 44100).adding(MediaTime(value: 1, timescale: 48000))
        #expect(sum.timescale == 7_056_000)
        #expect(sum == MediaTime(value: 1024 * 160 + 147, timescale: 7_056_000))
        let same = try MediaTime(value: 3, timescale: 10).subtracting(MediaTime(value: 5, timescale: 10))
        #expect(same == MediaTime(value: -2, timescale: 10))
    }

    @Test func reportsOverflowInsteadOfTrapping() {
        #expect(throws: MediaTimeError.self) { try MediaTime(value: .max, timescale: 1).adding(MediaTime(value: 1, timescale: 1)) }
        #expect(throws: MediaTimeError.self) { try MediaTime(value: .min, timescale: 1).subtracting(MediaTime(value: 1, timescale: 1)) }
        #expect(throws: MediaTimeError.self) { try MediaTime(value: .max / 2, timescale: 1).multiplied(by: 3) }
        // LCM of two large coprime timescales does not fit in 32 bits.
        #expect(throws: MediaTimeError.self) {
            try MediaTime(value: 1, timescale: 2_147_483_647).adding(MediaTime(value: 1, timescale: 2_147_483_646))
        }
        #expect(throws: MediaTimeError.self) { try MediaTime(value: .max, timescale: 1).converted(to: 2) }
        #expect(throws: MediaTimeError.invalidTimescale(0)) { try MediaTime(validatingValue: 1, timescale: 0) }
        #expect(throws: MediaTimeError.invalidTimescale(1 << 40)) { try MediaTime(validatingValue: 1, timescale: 1 << 40) }
    }

    @Test func convertsWithTheRequestedRounding() throws {
        let time = MediaTime(value: 1025, timescale: 44100)
        #expect(try time.converted(to: 1000, rounding: .down).value == 23)
        #expect(try time.converted(to: 1000, rounding: .up).value == 24)
        #expect(try time.converted(to: 1000, rounding: .nearest).value == 23)
        #expect(try MediaTime(value: -1025, timescale: 44100).converted(to: 1000, rounding: .down).value == -24)
        #expect(try MediaTime(value: -1025, timescale: 44100).converted(to: 1000, rounding: .towardZero).value == -23)
        #expect(try MediaTime(value: 1024, timescale: 48000).converted(to: 96000, rounding: .exact).value == 2048)
        #expect(throws: MediaTimeError.self) { try time.converted(to: 1000, rounding: .exact) }
        #expect(abs(time.seconds - 1025.0 / 44100.0) < 1e-15)
    }
}
