internal import RealModule
public import MediaCore

/// A look-ahead true-peak limiter for interleaved 32-bit float PCM: applies a gain, then holds
/// the true peak (ITU-R BS.1770-4, Annex 2) at or below a ceiling. The second pass of
/// `convert --normalize`, where the gain to the target loudness would push the peaks past the
/// ceiling.
///
/// **Detection.** Each channel is oversampled 4× with the polyphase interpolator of
/// BS.1770-4, Annex 2 (the 48-tap FIR of its example, four phases of 12 taps); the peak of a
/// sample is the largest magnitude, over all channels (the gain is linked across them), of the
/// sample and of the interpolated values on either side of it. The gain the sample needs is
/// `ceiling / peak`, or 1 below the ceiling.
///
/// **Gain envelope.** The needed gain is held for the look-ahead (a sliding minimum), recovers
/// towards 1 with the release time constant, and is smoothed by two moving averages of half the
/// look-ahead each: the gain falls in an S-shaped curve across the look-ahead *before* the peak
/// it makes room for, and never exceeds what any sample under it needs. The audio is delayed by
/// the look-ahead (plus the interpolator's 6 samples) inside the limiter, and that delay is
/// compensated: the output holds exactly the input's frames, in place, and ``finish()`` hands
/// over the last of them.
///
/// Where no sample needs limiting (and the gain is 0 dB), the output is bit-for-bit the input.
/// Memory is a few look-aheads of frames, whatever the length of the programme; each sample is
/// copied once, into the output buffer.
///
/// A true peak between the 4× oversampled points can still exceed the detected one by a
/// fraction of a dB near the Nyquist frequency; an encoder can add more. Aim the ceiling lower
/// for lossy outputs (`convert` aims 0.5 dB under `--true-peak` for AAC, then measures the
/// decoded output and encodes again lower while it is over).
public final class TruePeakLimiter {
    /// What the limiter did.
    public struct Statistics: Sendable, Hashable, Codable {
        /// The largest gain reduction applied, in dB (0 when the limiter never acted).
        public var maxGainReduction: Double
        /// Frames attenuated by more than 0.1 dB.
        public var limitedFrames: Int64
        /// Frames passed through.
        public var frames: Int64
        /// The sample rate of the frames (0 before any).
        public var sampleRate: Int

        /// Seconds during which the limiter attenuated by more than 0.1 dB.
        public var limitedSeconds: Double { sampleRate > 0 ? Double(limitedFrames) / Double(sampleRate) : 0 }
    }

    /// The ceiling, in dBTP.
    public let ceiling: Double
    /// The gain applied before limiting, in dB.
    public let gain: Double
    /// The look-ahead in seconds: how long before a peak the gain starts to fall.
    public let lookAhead: Double
    /// The release time constant in seconds: how fast the gain recovers after a peak.
    public let release: Double
    /// What the limiter has done so far.
    public private(set) var statistics = Statistics(maxGainReduction: 0, limitedFrames: 0, frames: 0, sampleRate: 0)

    private let ceilingFactor: Float
    private let gainFactor: Float
    private var state: State?

    /// A limiter to `ceiling` dBTP, applying `gain` dB first; `lookAhead` (at least 4 samples
    /// at the stream's rate) and `release` in seconds.
    public init(ceiling: Double = -1, gain: Double = 0, lookAhead: Double = 0.002, release: Double = 0.1) {
        self.ceiling = ceiling
        self.gain = gain
        self.lookAhead = lookAhead
        self.release = release
        ceilingFactor = Float(Double.exp10(ceiling / 20))
        gainFactor = Float(Double.exp10(gain / 20))
    }

    /// Frames held inside the limiter, at the stream's sample rate (`nil` before the first
    /// buffer): the look-ahead plus the interpolator's delay. The output is not delayed by it.
    public private(set) var latency: Int?

    /// The polyphase interpolator of ITU-R BS.1770-4, Annex 2 (4× oversampling, a 48-tap FIR
    /// in four phases of 12 taps, one after the other); tap `i` of a phase multiplies the frame `i`
    /// back.
    static let coefficients: [Float] = [
        // phase 0
        0.0017089843750, 0.0109863281250, -0.0196533203125, 0.0332031250000, -0.0594482421875, 0.1373291015625,
        0.9721679687500, -0.1022949218750, 0.0476074218750, -0.0266113281250, 0.0148925781250, -0.0083007812500,
        // phase 1
        -0.0291748046875, 0.0292968750000, -0.0517578125000, 0.0891113281250, -0.1665039062500, 0.4650878906250,
        0.7797851562500, -0.2003173828125, 0.1015625000000, -0.0582275390625, 0.0330810546875, -0.0189208984375,
        // phase 2
        -0.0189208984375, 0.0330810546875, -0.0582275390625, 0.1015625000000, -0.2003173828125, 0.7797851562500,
        0.4650878906250, -0.1665039062500, 0.0891113281250, -0.0517578125000, 0.0292968750000, -0.0291748046875,
        // phase 3
        -0.0083007812500, 0.0148925781250, -0.0266113281250, 0.0476074218750, -0.1022949218750, 0.9721679687500,
        0.1373291015625, -0.0594482421875, 0.0332031250000, -0.0196533203125, 0.0109863281250, 0.0017089843750,
    ]
    /// Taps per phase.
    static let taps = 12
    /// The frames by which the interpolated values lag the input: at frame `k`, the four phases
    /// lie between frames `k − 6` and `k − 5`.
    static let interpolatorDelay = 6

    /// Adds `value` to the moving average over `ring` (`length` values) at `position` and
    /// returns the mean; `sum` is recomputed at each turn of the ring, so that no rounding
    /// accumulates.
    @inline(__always)
    private static func average(adding value: Double, to ring: UnsafeMutablePointer<Double>, length: Int,
                                position: inout Int, sum: inout Double) -> Double {
        sum += value - ring[position]
        ring[position] = value
        position += 1
        if position == length {
            position = 0
            sum = 0
            for i in 0..<length { sum += ring[i] }
        }
        return sum / Double(length)
    }

    /// The limiter's working memory, sized by the layout of the first buffer: a few look-aheads
    /// of frames, allocated once.
    private final class State {
        let format: PCMFormat
        let channels: Int
        /// Output lag in frames: interpolator delay + look-ahead − 2.
        let delay: Int
        /// The lengths of the two moving averages; the hold is their sum − 1.
        let firstLength: Int, secondLength: Int, hold: Int
        /// Per-frame factor of the release towards 1.
        let releaseFactor: Double
        /// The last 12 frames of each channel, written twice (at `i` and `i + 12`) so that a
        /// run of 12 is always contiguous: `channels × 24` floats.
        let history: UnsafeMutablePointer<Float>
        /// The delay line: `delay` frames of gained input.
        let line: UnsafeMutablePointer<Float>
        /// The sliding minimum over `hold` frames: a monotonic queue of (needed gain, frame).
        let queueValues: UnsafeMutablePointer<Float>, queueFrames: UnsafeMutablePointer<Int>
        /// The rings of the two moving averages.
        let first: UnsafeMutablePointer<Double>, second: UnsafeMutablePointer<Double>

        /// Frames still to drop at the start (the delay line filling).
        var toSkip: Int
        var historyPosition = 0, linePosition = 0
        /// The peak of the interpolated values one frame earlier.
        var previousInterpolated: Float = 0
        var queueHead = 0, queueCount = 0
        /// Frames taken in (silence of the flush included).
        var frame = 0
        /// The envelope after the hold and the release.
        var held: Double = 1
        var firstPosition = 0, secondPosition = 0
        var firstSum: Double, secondSum: Double

        init(format: PCMFormat, lookAhead: Double, release: Double) {
            self.format = format
            channels = format.channelCount
            let span = max(4, Int((lookAhead * Double(format.sampleRate)).rounded()))
            firstLength = span / 2
            secondLength = span - span / 2
            hold = span - 1
            delay = TruePeakLimiter.interpolatorDelay + span - 2
            releaseFactor = release > 0 ? Double.exp(-1 / (release * Double(format.sampleRate))) : 0
            toSkip = delay
            history = .allocate(capacity: channels * 2 * TruePeakLimiter.taps)
            history.initialize(repeating: 0, count: channels * 2 * TruePeakLimiter.taps)
            line = .allocate(capacity: channels * delay)
            line.initialize(repeating: 0, count: channels * delay)
            queueValues = .allocate(capacity: hold)
            queueValues.initialize(repeating: 1, count: hold)
            queueFrames = .allocate(capacity: hold)
            queueFrames.initialize(repeating: 0, count: hold)
            first = .allocate(capacity: firstLength)
            first.initialize(repeating: 1, count: firstLength)
            second = .allocate(capacity: secondLength)
            second.initialize(repeating: 1, count: secondLength)
            firstSum = Double(firstLength)
            secondSum = Double(secondLength)
        }

        deinit {
            history.deallocate()
            line.deallocate()
            queueValues.deallocate()
            queueFrames.deallocate()
            first.deallocate()
            second.deallocate()
        }
    }

    /// Runs `frames` frames of `input` (`nil`: silence, to flush) through the limiter, writing the
    /// frames that come out to `output` (which has room for `frames`); returns how many.
    private func process(_ input: UnsafePointer<Float>?, frames: Int, into output: UnsafeMutablePointer<Float>, state s: State) -> Int {
        let channels = s.channels, taps = Self.taps, lag = Self.interpolatorDelay
        let ceiling = ceilingFactor, gain = gainFactor
        let limitedBelow = Float(Double.exp10(-0.1 / 20))
        let history = s.history, line = s.line, queueValues = s.queueValues, queueFrames = s.queueFrames
        let first = s.first, second = s.second
        let hold = s.hold, delay = s.delay, firstLength = s.firstLength, secondLength = s.secondLength
        let releaseFactor = s.releaseFactor
        var toSkip = s.toSkip, historyPosition = s.historyPosition, linePosition = s.linePosition
        var previousInterpolated = s.previousInterpolated, queueHead = s.queueHead, queueCount = s.queueCount
        var frame = s.frame, held = s.held, firstPosition = s.firstPosition, secondPosition = s.secondPosition
        var firstSum = s.firstSum, secondSum = s.secondSum
        var written = 0
        var lowest: Float = 1
        var limited: Int64 = 0
        Self.coefficients.withUnsafeBufferPointer { coefficients in
            let p0 = coefficients.baseAddress!, p1 = p0 + taps, p2 = p1 + taps, p3 = p2 + taps
            for index in 0..<frames {
                // The frame, gained, into the interpolator's history.
                var interpolated: Float = 0, sample: Float = 0
                for channel in 0..<channels {
                    let value = input.map { $0[index * channels + channel] * gain } ?? 0
                    let base = history + channel * 2 * taps
                    base[historyPosition] = value
                    base[historyPosition + taps] = value
                    // The newest frame is at `position + 12`, the one `i` back at `position + 12 − i`.
                    let newest = base + historyPosition + taps
                    var y0: Float = 0, y1: Float = 0, y2: Float = 0, y3: Float = 0
                    for tap in 0..<taps {
                        let x = newest[-tap]
                        y0 += p0[tap] * x
                        y1 += p1[tap] * x
                        y2 += p2[tap] * x
                        y3 += p3[tap] * x
                    }
                    interpolated = max(interpolated, abs(y0), abs(y1), abs(y2), abs(y3))
                    sample = max(sample, abs(newest[-lag]))
                }
                historyPosition = historyPosition + 1 == taps ? 0 : historyPosition + 1
                // The peak around frame k − 6: the sample and the interpolated values either side.
                let peak = max(sample, interpolated, previousInterpolated)
                previousInterpolated = interpolated
                let needed: Float = peak > ceiling ? ceiling / peak : 1

                // Sliding minimum over the hold.
                while queueCount > 0 {
                    var last = queueHead + queueCount - 1
                    if last >= hold { last -= hold }
                    guard queueValues[last] >= needed else { break }
                    queueCount -= 1
                }
                var tail = queueHead + queueCount
                if tail >= hold { tail -= hold }
                queueValues[tail] = needed
                queueFrames[tail] = frame
                queueCount += 1
                if queueFrames[queueHead] <= frame - hold {
                    queueHead = queueHead + 1 == hold ? 0 : queueHead + 1
                    queueCount -= 1
                }
                let minimum = Double(queueValues[queueHead])
                frame += 1

                // Release towards 1, never above what the hold allows; snapped to 1 within 1e-4
                // (0.001 dB), so that the output is the input again.
                held = 1 - (1 - held) * releaseFactor
                if held > 1 - 1e-4 { held = 1 }
                held = min(held, minimum)

                // Two moving averages.
                let smoothed = Self.average(adding: held, to: first, length: firstLength, position: &firstPosition, sum: &firstSum)
                let envelope = Float(min(1, Self.average(adding: smoothed, to: second, length: secondLength,
                                                         position: &secondPosition, sum: &secondSum)))

                // Out: the frame `delay` back times the envelope; the new frame into its place.
                let slot = line + linePosition * channels
                if toSkip > 0 {
                    toSkip -= 1
                } else {
                    let out = output + written * channels
                    for channel in 0..<channels { out[channel] = slot[channel] * envelope }
                    written += 1
                    lowest = min(lowest, envelope)
                    if envelope < limitedBelow { limited += 1 }
                }
                let newestIndex = (historyPosition == 0 ? taps : historyPosition) - 1 + taps
                for channel in 0..<channels { slot[channel] = history[channel * 2 * taps + newestIndex] }
                linePosition = linePosition + 1 == delay ? 0 : linePosition + 1
            }
        }
        s.toSkip = toSkip
        s.historyPosition = historyPosition
        s.linePosition = linePosition
        s.previousInterpolated = previousInterpolated
        s.queueHead = queueHead
        s.queueCount = queueCount
        s.frame = frame
        s.held = held
        s.firstPosition = firstPosition
        s.secondPosition = secondPosition
        s.firstSum = firstSum
        s.secondSum = secondSum
        statistics.frames += Int64(written)
        statistics.limitedFrames += limited
        if lowest < 1 { statistics.maxGainReduction = max(statistics.maxGainReduction, -20 * Double.log10(Double(lowest))) }
        return written
    }
}

extension TruePeakLimiter: MediaTransform {
    /// The buffer gained and limited, delayed by ``latency`` frames inside the limiter: the
    /// first buffers give that many frames fewer than they take, ``finish()`` the rest.
    public func transform(_ buffer: PCMBuffer) throws(CodecError) -> [PCMBuffer] {
        guard buffer.format.sampleFormat == .float32, buffer.format.isInterleaved else {
            throw .unsupportedInput("the true-peak limiter takes interleaved 32-bit float PCM, not \(buffer.format.sampleFormat.rawValue)")
        }
        if state == nil {
            guard buffer.format.channelCount > 0, buffer.format.sampleRate > 0 else {
                throw .unsupportedInput("the true-peak limiter needs a sample rate and at least one channel")
            }
            state = State(format: buffer.format, lookAhead: lookAhead, release: release)
            latency = state?.delay
            statistics.sampleRate = buffer.format.sampleRate
        }
        guard let state, buffer.format == state.format else { throw .unsupportedInput("the PCM layout changed mid-stream") }
        let frames = buffer.frameCount
        guard frames > 0 else { return [] }
        // The output's first frame entered this many frames before the buffer's first.
        let lead = min(state.frame, state.delay)
        var written = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: frames * state.format.bytesPerFrame) { raw, count in
            raw.withMemoryRebound(to: Float.self) { output in
                buffer.bytes.withUnsafeBytes { source in
                    source.withMemoryRebound(to: Float.self) { input in
                        written = process(input.baseAddress!, frames: frames, into: output.baseAddress!, state: state)
                    }
                }
            }
            count = written * state.format.bytesPerFrame
        }
        guard written > 0 else { return [] }
        var time = buffer.presentationTime
        if let start = time, lead > 0 {
            time = try? start.subtracting(MediaTime(value: Int64(lead), timescale: Int32(clamping: state.format.sampleRate)))
        }
        return [PCMBuffer(format: state.format, bytes: bytes, presentationTime: time)]
    }

    /// The frames still in the delay line.
    public func finish() throws(CodecError) -> [PCMBuffer] {
        guard let state else { return [] }
        self.state = nil
        // Frames not yet given: all of a stream shorter than the delay, else the delay.
        let pending = min(state.delay, state.frame)
        guard pending > 0 else { return [] }
        var written = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: state.delay * state.format.bytesPerFrame) { raw, count in
            raw.withMemoryRebound(to: Float.self) { output in
                written = process(nil, frames: state.delay, into: output.baseAddress!, state: state)
            }
            count = written * state.format.bytesPerFrame
        }
        return [PCMBuffer(format: state.format, bytes: bytes)]
    }
}

@available(*, unavailable)
extension TruePeakLimiter: Sendable {}
