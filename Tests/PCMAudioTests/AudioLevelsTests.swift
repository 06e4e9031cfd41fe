import Foundation
import MediaCore
import PCMAudio
import Testing

/// ``AudioLevels``: the figures of the record meter (full-scale square = 0 dBFS RMS, as in sox and ffmpeg's astats).
@Suite struct AudioLevelsTests {
    /// Interleaved s16 stereo: a sine of `amplitude` (of full scale) on the left, silence on the right.
    static func sineLeft(amplitude: Double, frames: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        for index in 0..<frames {
            let value = Int16((amplitude * 32767 * sin(2 * Double.pi * 1000 * Double(index) / 48000)).rounded())
            let word = UInt16(bitPattern: value)
            bytes += [UInt8(word & 0xFF), UInt8(word >> 8), 0, 0]
        }
        return bytes
    }

    @Test func fullScaleSineReadsZeroPeakAndMinusThreeRMS() {
        let format = PCMFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .int16)
        var levels = AudioLevels(channelCount: 2)
        let pcm = Self.sineLeft(amplitude: 1, frames: 48000)
        pcm.withUnsafeBytes { levels.add($0, format: format) }
        #expect(levels.frameCount == 48000)
        #expect(abs(levels.peakDBFS[0]) < 0.01)
        #expect(abs(levels.rmsDBFS[0] - -3.0103) < 0.01)
        #expect(levels.peakDBFS[1] == -.infinity && levels.rmsDBFS[1] == -.infinity)
    }

    @Test func formatsAgreeAndMergeEqualsOnePass() {
        let int16 = PCMFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .int16)
        let pcm = Self.sineLeft(amplitude: 0.25, frames: 4800)
        // The same signal as f32.
        var floats: [UInt8] = []
        for index in stride(from: 0, to: pcm.count, by: 2) {
            let value = Float(Int16(bitPattern: UInt16(pcm[index]) | UInt16(pcm[index + 1]) << 8)) / 32768
            withUnsafeBytes(of: value.bitPattern.littleEndian) { floats += $0 }
        }
        var a = AudioLevels(channelCount: 2), b = AudioLevels(channelCount: 2)
        pcm.withUnsafeBytes { a.add($0, format: int16) }
        floats.withUnsafeBytes { b.add($0, format: PCMFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .float32)) }
        #expect(abs(a.rmsDBFS[0] - b.rmsDBFS[0]) < 1e-6 && abs(a.peakDBFS[0] - b.peakDBFS[0]) < 1e-6)
        #expect(abs(a.rmsDBFS[0] - (20 * log10(0.25) - 3.0103)) < 0.02)

        var first = AudioLevels(channelCount: 2), second = AudioLevels(channelCount: 2)
        pcm.prefix(8000).withUnsafeBytes { first.add($0, format: int16) }
        pcm.dropFirst(8000).withUnsafeBytes { second.add($0, format: int16) }
        first.merge(second)
        #expect(first.frameCount == a.frameCount)
        #expect(abs(first.rmsDBFS[0] - a.rmsDBFS[0]) < 1e-9 && first.peakDBFS[0] == a.peakDBFS[0])
    }

    @Test func anotherChannelCountIsIgnored() {
        var levels = AudioLevels(channelCount: 2)
        let mono = PCMFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .int16)
        [UInt8](repeating: 0x40, count: 100).withUnsafeBytes { levels.add($0, format: mono) }
        #expect(levels.frameCount == 0)
    }

    @Test func int16NegativeFullScaleIsClampedToOne() {
        var levels = AudioLevels(channelCount: 1)
        let format = PCMFormat(sampleRate: 8000, channelCount: 1, sampleFormat: .int16)
        [UInt8]([0x00, 0x80]).withUnsafeBytes { levels.add($0, format: format) }
        #expect(levels.peak == [1])
    }
}
