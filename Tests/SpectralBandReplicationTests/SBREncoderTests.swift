import AACBitstream
import Foundation
import MediaCore
import Testing
@testable import SpectralBandReplication

/// The SBR encoder's own parts: its tuning over every rate and channel count, the tonality
/// measure, the inverse-filtering table, and where it puts headers and independent frames
/// (read back by the AACBitstream stream parser).
@Suite struct SBREncoderTests {
    /// Every supported rate, mono and stereo: the ends of the allowed range make a tuning whose
    /// crossover lies below its stop frequency and below the core's Nyquist frequency, and whose
    /// core gets at least libavcodec's 8 kb/s; just outside the range is refused.
    @Test(arguments: SBRTuning.supportedOutputSampleRates, [1, 2])
    func tuningsAcrossTheRange(rate: Int, channels: Int) throws {
        let allowed = SBRTuning.allowedBitrates(channelCount: channels, outputSampleRate: rate)
        for bitrate in [allowed.lowerBound, (allowed.lowerBound + allowed.upperBound) / 2, allowed.upperBound] {
            let tuning = try SBRTuning(bitrate: bitrate, channelCount: channels, outputSampleRate: rate)
            #expect(tuning.coreBitrate >= 8000, "\(rate) Hz ×\(channels) at \(bitrate): core \(tuning.coreBitrate)")
            #expect(tuning.crossoverFrequency < tuning.stopFrequency && tuning.crossoverFrequency < rate / 4,
                    "\(rate) Hz ×\(channels) at \(bitrate): crossover \(tuning.crossoverFrequency), stop \(tuning.stopFrequency)")
        }
        #expect(throws: SBREncodingError.self) { try SBRTuning(bitrate: allowed.lowerBound - 1, channelCount: channels, outputSampleRate: rate) }
        #expect(throws: SBREncodingError.self) { try SBRTuning(bitrate: allowed.upperBound + 1, channelCount: channels, outputSampleRate: rate) }
    }

    @Test func unsupportedRatesAndLayoutsAreRefused() {
        #expect(throws: SBREncodingError.self) { try SBRTuning(bitrate: 32000, channelCount: 1, outputSampleRate: 8000) }
        #expect(throws: SBREncodingError.self) { try SBRTuning(bitrate: 32000, channelCount: 1, outputSampleRate: 96000) }
        #expect(throws: SBREncodingError.self) { try SBRTuning(bitrate: 96000, channelCount: 6, outputSampleRate: 48000) }
    }

    /// 48 kb/s stereo at 48 kHz crosses over near 6.75 kHz and stops near 16.9 kHz (the design's
    /// table); 64 kb/s crosses over higher.
    @Test func crossoverRisesWithTheBitrate() throws {
        let at48 = try SBRTuning(bitrate: 48000, channelCount: 2, outputSampleRate: 48000)
        let at64 = try SBRTuning(bitrate: 64000, channelCount: 2, outputSampleRate: 48000)
        #expect((6000...7500).contains(at48.crossoverFrequency) && (15500...17500).contains(at48.stopFrequency),
                "48k: \(at48.crossoverFrequency)–\(at48.stopFrequency) Hz")
        #expect(at64.crossoverFrequency > at48.crossoverFrequency)
    }

    /// One QMF slot history holding one subband: a complex exponential (a sinusoid in that
    /// subband) or seeded noise.
    static func history(slots: Int, band: Int, tone: Bool) -> QMFSlotHistory {
        var history = QMFSlotHistory()
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func noise() -> Float {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(Int64(bitPattern: state) >> 11) / Float(1 << 52)
        }
        for slot in 0..<slots {
            var real = [Float](repeating: 0, count: 64), imaginary = [Float](repeating: 0, count: 64)
            if tone {
                real[band] = Float(1000 * cos(0.7 * Double(slot)))
                imaginary[band] = Float(1000 * sin(0.7 * Double(slot)))
            } else {
                real[band] = 1000 * noise()
                imaginary[band] = 1000 * noise()
            }
            real.withUnsafeBufferPointer { r in imaginary.withUnsafeBufferPointer { i in history.append(real: r, imaginary: i) } }
        }
        return history
    }

    @Test func aSinusoidIsPredictableAndNoiseIsNot() {
        let tone = SubbandTonality.predictionGain(Self.history(slots: 40, band: 20, tone: true), band: 20, slots: 4..<36)
        let noise = SubbandTonality.predictionGain(Self.history(slots: 40, band: 20, tone: false), band: 20, slots: 4..<36)
        let silent = SubbandTonality.predictionGain(Self.history(slots: 40, band: 20, tone: true), band: 30, slots: 4..<36)
        #expect(tone > 1000, "a sinusoid's prediction gain: \(tone)")
        #expect(noise < 3, "noise's prediction gain: \(noise)")
        #expect(silent == 1)
    }

    /// 3GPP TS 26.404's region table: a tonal original needs no inverse filtering; a noisy
    /// original over a tonal source needs it strong.
    @Test func inverseFilteringFollowsTheRegionTable() {
        #expect(SBREncoder.inverseFilteringMode(original: 1000, source: 1) == 0)
        #expect(SBREncoder.inverseFilteringMode(original: 1000, source: 1000) == 0)
        #expect(SBREncoder.inverseFilteringMode(original: 1, source: 1000) == 3)
        #expect(SBREncoder.inverseFilteringMode(original: 1, source: 1) == 1)
    }

    /// A transient anywhere in the frame gets a border at (or just before) its onset, the grid
    /// is valid, starts at 0 and ends at 16, and the pointer names the envelope that starts
    /// there (where the class can name it).
    @Test func transientsGetABorderAtTheOnset() throws {
        let steady = SBREncoder.grid(transientAt: nil)
        #expect(steady.frameClass == .fixFix && steady.envelopeCount == 1 && steady.frequencyResolutions == [true])
        for onset in 0..<16 {
            let grid = SBREncoder.grid(transientAt: onset)
            try grid.validate()
            let borders = grid.borders
            #expect(borders.first == 0 && borders.last == 16, "onset \(onset): \(borders)")
            let at = onset / 2 * 2
            #expect(borders.contains(at == 0 ? 0 : at), "onset \(onset): borders \(borders)")
            if at >= 2 {
                let index = try #require(borders.firstIndex(of: at))
                #expect(grid.transientEnvelope == index, "onset \(onset): l_A \(String(describing: grid.transientEnvelope)), borders \(borders)")
                #expect(grid.noiseBorders.contains(at), "onset \(onset): noise borders \(grid.noiseBorders)")
            }
        }
    }

    /// A second of stereo noise: every 8th frame (and the first) carries a header and codes its
    /// first envelope and noise floor in frequency, so a decoder can start there; the stream
    /// parser reads every frame back.
    @Test func headersAndIndependentFramesEveryEighthFrame() throws {
        let tuning = try SBRTuning(bitrate: 48000, channelCount: 2, outputSampleRate: 48000)
        var encoder = SBREncoder(tuning: tuning)
        var state: UInt64 = 1
        let frames = 48000
        let planes: [[Float]] = (0..<2).map { _ in
            (0..<frames).map { _ in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return 0.25 * Float(Int64(bitPattern: state) >> 11) / Float(1 << 52)
            }
        }
        var core: [[Float]] = [[], []]
        planes[0].withUnsafeBufferPointer { left in
            planes[1].withUnsafeBufferPointer { right in encoder.analyze([left, right], frameCount: frames, core: &core) }
        }
        #expect(core[0].count >= frames / 2 - 64 && core[0].count <= (frames + 1) / 2, "core samples: \(core[0].count)")
        var parser = SBRStreamParser(outputSampleRate: 48000)
        // Frame p needs slots up to 32p − 7: 23 frames fit in a second.
        for frame in 0..<23 {
            let independent = frame == 11
            let fill = try encoder.nextFrame(independent: independent)
            #expect(fill.extensionType == FillElement.ExtensionType.sbrData)
            var reader = BitReader(fill.payload)
            try reader.skipBits(4)
            let data = try #require(try parser.parse(&reader, channelCount: 2, bitLimit: fill.payload.count * 8 - 4))
            let startsHere = frame % SBREncoder.headerInterval == 0 || independent
            #expect((data.header != nil) == startsHere, "frame \(frame): header \(data.header != nil)")
            if startsHere {
                #expect(data.channels.allSatisfy { $0.envelopeTimeDelta.first == false && $0.noiseTimeDelta.first == false },
                        "frame \(frame) codes its first values against the frame before")
            }
        }
        #expect(encoder.frameCount == 23)
    }
}
