@testable import AACBitstream
import MediaCore
import Testing

/// `SBRGrid` (ISO/IEC 14496-3, 4.4.2.8 `sbr_grid()`, 4.5.2.8): every class writes and reads
/// back; borders, noise borders and the transient envelope follow 4.5.2.8; invalid grids are
/// typed errors.
@Suite struct SBRGridTests {
    @Test func fixFixBorders() {
        #expect(SBRGrid.fixFix(envelopeCount: 1, highFrequencyResolution: true).borders == [0, 16])
        #expect(SBRGrid.fixFix(envelopeCount: 2, highFrequencyResolution: true).borders == [0, 8, 16])
        #expect(SBRGrid.fixFix(envelopeCount: 4, highFrequencyResolution: false).borders == [0, 4, 8, 12, 16])
        #expect(SBRGrid.fixFix(envelopeCount: 4, highFrequencyResolution: false).noiseBorders == [0, 8, 16])
        #expect(SBRGrid.fixFix(envelopeCount: 1, highFrequencyResolution: false).noiseBorders == [0, 16])
        #expect(SBRGrid.fixFix(envelopeCount: 1, highFrequencyResolution: false).noiseFloorCount == 1)
        #expect(SBRGrid.fixFix(envelopeCount: 2, highFrequencyResolution: false).transientEnvelope == nil)
    }

    /// One FIXFIX envelope always decodes at 1.5 dB; otherwise the header's resolution.
    @Test func effectiveAmplitudeResolution() {
        let header = SBRHeader(amplitudeResolution: 1, startFrequency: 5, stopFrequency: 5)
        #expect(SBRGrid.fixFix(envelopeCount: 1, highFrequencyResolution: true).amplitudeResolution(header: header) == 0)
        #expect(SBRGrid.fixFix(envelopeCount: 2, highFrequencyResolution: true).amplitudeResolution(header: header) == 1)
        let varFix = SBRGrid(frameClass: .varFix, frequencyResolutions: [true])
        #expect(varFix.amplitudeResolution(header: header) == 1)
    }

    /// VARVAR: leading 2, trailing 16 + 1, relative steps forward 4 and backward 6; pointer 2.
    @Test func variableBordersAndPointer() throws {
        let grid = SBRGrid(frameClass: .varVar, leadingBorder: 2, trailingBorder: 1, leadingRelativeBorders: [1],
                           trailingRelativeBorders: [2], pointer: 2, frequencyResolutions: [true, false, true])
        try grid.validate()
        #expect(grid.borders == [2, 6, 11, 17])
        #expect(grid.transientEnvelope == 2)           // l_A = n + 1 − p
        #expect(grid.noiseBorders == [2, 11, 17])      // t_E[n − max(p − 1, 1)] = t_E[2]
        let fixVar = SBRGrid(frameClass: .fixVar, trailingBorder: 3, trailingRelativeBorders: [0, 3], pointer: 0,
                             frequencyResolutions: [false, true, true])
        #expect(fixVar.borders == [0, 9, 17, 19])
        let varFix = SBRGrid(frameClass: .varFix, leadingBorder: 1, leadingRelativeBorders: [0, 0], pointer: 3,
                             frequencyResolutions: [true, true, false])
        #expect(varFix.borders == [1, 3, 5, 16])
        #expect(varFix.transientEnvelope == 2)         // l_A = p − 1
        #expect(varFix.noiseBorders == [1, 5, 16])     // t_E[p − 1]
    }

    @Test(arguments: SBRGrid.FrameClass.allCases)
    func everyClassRoundTrips(frameClass: SBRGrid.FrameClass) throws {
        var random = SBRTestRandom(state: UInt64(frameClass.rawValue) + 7)
        for _ in 0..<300 {
            let grid = SBRTestFrames.grid(&random, frameClass: frameClass)
            var writer = BitWriter()
            try grid.write(to: &writer)
            var reader = BitReader(writer.bytes)
            #expect(try SBRGrid(from: &reader) == grid)
            #expect(reader.bitsConsumed == writer.bitCount)
            let borders = grid.borders
            #expect(borders.count == grid.envelopeCount + 1 && zip(borders, borders.dropFirst()).allSatisfy { $0 < $1 })
        }
    }

    @Test func invalidGridsAreTypedErrors() {
        var writer = BitWriter()
        #expect(throws: AACBitstreamError.self) { try SBRGrid.fixFix(envelopeCount: 3, highFrequencyResolution: true).write(to: &writer) }
        #expect(throws: AACBitstreamError.self) {   // borders 0, 16 − 8 − 8 = 0: not increasing
            try SBRGrid(frameClass: .fixVar, trailingRelativeBorders: [3, 3], frequencyResolutions: [true, true, true]).write(to: &writer)
        }
        #expect(throws: AACBitstreamError.self) {
            try SBRGrid(frameClass: .varFix, pointer: 3, frequencyResolutions: [true]).write(to: &writer)
        }
        // FIXFIX with bs_num_env 8 (raw 3), VARVAR with 3 + 3 relative borders, and VARVAR from 3
        // forward by 8, 8, 8 past the trailing border 16.
        for bytes: [UInt8] in [[0b0011_1000], [0b1100_0011, 0b1100_0000, 0, 0], [0xF3, 0x3F, 0x00, 0x00]] {
            var reader = BitReader(bytes)
            #expect(throws: AACBitstreamError.self) { try SBRGrid(from: &reader) }
        }
    }
}
