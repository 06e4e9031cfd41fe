import SpectralBandReplication
import Testing

/// The transcription of ISO/IEC 14496-3 Table 4.A.89 and the structure the spec relies on.
@Suite struct QMFPrototypeTests {
    let c = QMFPrototype.coefficients

    @Test func hasTheTableShape() {
        #expect(c.count == 640)
        #expect(c[0] == 0)
        #expect(c[320] == 0.8537385600)
        #expect(c.indices.allSatisfy { c[$0] <= c[320] })
        // Spot values as printed in the table.
        #expect(c[1] == -0.0005525286)
        #expect(c[127] == -0.0121849995)
        #expect(c[128] == 0.0132718220)
        #expect(c[255] == -0.3499914122)
        #expect(c[256] == 0.3611589903)
        #expect(c[639] == -0.0005525286)
    }

    /// `c[320 + n] = c[320 − n]` for n = 1..<320, except n = 64 and 192 (c[384] and c[512]),
    /// which the table prints negated (FFmpeg ≤ 5 mirrors 321 stored values and negates those
    /// two); the sign of the window flips at 128, 256, 384 and 512 on both halves.
    @Test func isSymmetricAboutTheCentreWithTwoSignExceptions() {
        for n in 1..<320 {
            if n == 64 || n == 192 {
                #expect(c[320 + n] == -c[320 - n], "c[\(320 + n)]")
            } else {
                #expect(c[320 + n] == c[320 - n], "c[\(320 + n)]")
            }
        }
        #expect(c[384] == -0.3611589903)
        #expect(c[512] == -0.0132718220)
        let flips = (1..<640).filter { (c[$0 - 1] < 0) != (c[$0] < 0) && abs(c[$0]) > 0.01 }
        #expect(flips == [128, 256, 384, 512])
    }

    /// The decoder's 32-band analysis window (4.6.18.4.1, `c[2n]`; FFmpeg `sbr_qmf_window_ds`).
    @Test func everyOtherCoefficientIsTheDecoders32BandWindow() {
        let ds = QMFPrototype.halfRateCoefficients
        #expect(ds.count == 320)
        for n in 0..<320 { #expect(ds[n] == c[2 * n]) }
        // Values of the 32-band window as FFmpeg's `sbr_qmf_window_ds` prints them.
        let printed: [Int: Float] = [1: -0.0005617692, 2: -0.0004875227, 63: -0.0111315548, 64: 0.0132718220,
                                     127: -0.3388722693, 128: 0.3611589903, 160: 0.8537385600, 191: 0.3836350013,
                                     192: -0.3611589903, 256: -0.0132718220, 319: -0.0005617692]
        for (n, value) in printed { #expect(ds[n] == value, "c[2·\(n)]") }
        // Its own symmetry about 160, with the same exceptions at 192 and 256.
        for n in 1..<160 {
            #expect(ds[160 + n] == ((n == 32 || n == 96) ? -ds[160 - n] : ds[160 - n]))
        }
    }
}
