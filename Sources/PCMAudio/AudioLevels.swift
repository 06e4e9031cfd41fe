public import MediaCore
internal import RealModule

/// Peak and RMS level per channel of the PCM seen so far, in dB relative to full scale: what a
/// recorder's level meter shows (sox's `rec` draws the same two figures). RMS follows the convention of sox and ffmpeg's `astats`: a
/// full-scale square wave is 0 dBFS, so a full-scale sine reads −3.01 dBFS RMS and 0 dBFS peak
/// (AES17, which references RMS to a full-scale sine, would call that sine 0 dB FS).
///
/// ``add(_:format:)`` reads interleaved integer or float PCM in place, once, without copying.
public struct AudioLevels: Sendable, Hashable {
    /// Channels measured.
    public let channelCount: Int
    /// Frames measured.
    public private(set) var frameCount: Int64 = 0
    private var peaks: [Double]
    private var sumsOfSquares: [Double]

    /// Levels of nothing yet, for `channelCount` channels.
    public init(channelCount: Int) {
        self.channelCount = max(0, channelCount)
        peaks = Array(repeating: 0, count: self.channelCount)
        sumsOfSquares = Array(repeating: 0, count: self.channelCount)
    }

    /// The largest magnitude per channel, 0…1 of full scale.
    public var peak: [Double] { peaks }

    /// The root mean square per channel, 0…1 of full scale.
    public var rms: [Double] {
        sumsOfSquares.map { frameCount > 0 ? ($0 / Double(frameCount)).squareRoot() : 0 }
    }

    /// ``peak`` in dBFS (−∞ for digital silence).
    public var peakDBFS: [Double] { peak.map(Self.decibels) }

    /// ``rms`` in dBFS (a full-scale sine reads −3.01; −∞ for digital silence).
    public var rmsDBFS: [Double] { rms.map(Self.decibels) }

    /// `20·log10(amplitude)`, −∞ at 0.
    public static func decibels(_ amplitude: Double) -> Double {
        amplitude > 0 ? 20 * Double.log10(amplitude) : -.infinity
    }

    /// Measures the whole frames of interleaved `pcm` laid out as `format`; a planar `format`
    /// or another channel count is ignored.
    public mutating func add(_ pcm: UnsafeRawBufferPointer, format: PCMFormat) {
        guard format.isInterleaved, format.channelCount == channelCount, channelCount > 0 else { return }
        let frames = pcm.count / format.bytesPerFrame
        guard frames > 0 else { return }
        switch format.sampleFormat {
        case .int16: accumulate(pcm, frames: frames, bytes: 2, scale: 1.0 / 32768) { Double(Int16(bitPattern: UInt16($0) | UInt16($1) << 8)) }
        case .int32: accumulate(pcm, frames: frames, bytes: 4, scale: 1.0 / 2_147_483_648) { raw, offset in
            Double(Int32(bitPattern: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian))
        }
        case .int24: accumulate(pcm, frames: frames, bytes: 3, scale: 1.0 / 8_388_608) { raw, offset in
            let word = UInt32(raw[offset]) << 8 | UInt32(raw[offset + 1]) << 16 | UInt32(raw[offset + 2]) << 24
            return Double(Int32(bitPattern: word) >> 8)
        }
        case .uint8: accumulate(pcm, frames: frames, bytes: 1, scale: 1.0 / 128) { raw, offset in Double(Int(raw[offset]) - 128) }
        case .float32: accumulate(pcm, frames: frames, bytes: 4, scale: 1) { raw, offset in
            Double(Float(bitPattern: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian))
        }
        case .float64: accumulate(pcm, frames: frames, bytes: 8, scale: 1) { raw, offset in
            Double(bitPattern: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian)
        }
        }
        frameCount += Int64(frames)
    }

    /// Measures a PCM sample (see ``add(_:format:)``); other samples are ignored.
    public mutating func add(_ buffer: PCMBuffer) {
        buffer.bytes.withUnsafeBytes { add($0, format: buffer.format) }
    }

    /// Adds a captured PCM sample's frames.
    public mutating func add(_ sample: MediaSample) {
        guard case .pcm(let format) = sample.format else { return }
        sample.data.withUnsafeBytes { add($0, format: format) }
    }

    /// Adds the frames another measurement saw (same channel count).
    public mutating func merge(_ other: AudioLevels) {
        guard other.channelCount == channelCount else { return }
        for channel in 0..<channelCount {
            peaks[channel] = max(peaks[channel], other.peaks[channel])
            sumsOfSquares[channel] += other.sumsOfSquares[channel]
        }
        frameCount += other.frameCount
    }

    /// The 16-bit path, which capture uses by default, reads two bytes; the others go through `value`.
    @inline(__always)
    private mutating func accumulate(_ pcm: UnsafeRawBufferPointer, frames: Int, bytes: Int, scale: Double,
                                     _ value: (UnsafeRawBufferPointer, Int) -> Double) {
        let channels = channelCount
        for channel in 0..<channels {
            var peak = peaks[channel] / scale
            var sum = 0.0
            var offset = channel * bytes
            let stride = channels * bytes
            for _ in 0..<frames {
                let sample = value(pcm, offset)
                peak = max(peak, abs(sample))
                sum += sample * sample
                offset += stride
            }
            peaks[channel] = min(1, peak * scale)
            sumsOfSquares[channel] += sum * scale * scale
        }
    }

    @inline(__always)
    private mutating func accumulate(_ pcm: UnsafeRawBufferPointer, frames: Int, bytes: Int, scale: Double,
                                     _ int16: (UInt8, UInt8) -> Double) {
        accumulate(pcm, frames: frames, bytes: bytes, scale: scale) { raw, offset in int16(raw[offset], raw[offset + 1]) }
    }
}
