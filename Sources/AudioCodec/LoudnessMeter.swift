internal import CEBUR128
internal import RealModule
public import MediaCore

/// A programme's loudness as EBU R 128 measures it (ITU-R BS.1770-4): integrated loudness,
/// loudness range (EBU Tech 3342) and true peak.
public struct Loudness: Sendable, Hashable, Codable {
    /// Integrated loudness in LUFS (gated, over the whole programme); −∞ for silence or a
    /// programme shorter than one 400 ms gating block (JSON `null`).
    public var integrated: Double
    /// Loudness range in LU.
    public var range: Double
    /// The highest true peak of any channel, in dBTP (4× oversampled).
    public var truePeak: Double

    /// A measurement.
    public init(integrated: Double, range: Double, truePeak: Double) {
        self.integrated = integrated
        self.range = range
        self.truePeak = truePeak
    }

    private enum CodingKeys: String, CodingKey { case integrated, range, truePeak }

    /// Encodes each figure, `null` for one that is not finite (silence measures −∞, which JSON
    /// cannot carry).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        for (key, value) in [(CodingKeys.integrated, integrated), (.range, range), (.truePeak, truePeak)] {
            if value.isFinite { try container.encode(value, forKey: key) } else { try container.encodeNil(forKey: key) }
        }
    }

    /// Decodes a measurement; `null` is −∞.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func value(_ key: CodingKeys) throws -> Double { try container.decodeIfPresent(Double.self, forKey: key) ?? -Double.infinity }
        self.init(integrated: try value(.integrated), range: try value(.range), truePeak: try value(.truePeak))
    }

    /// The gain in dB that brings ``integrated`` to `target` LUFS, lowered where needed so that
    /// the true peak after it stays at or below `peakCeiling` dBTP (EBU R 128's −1 dBTP by default).
    public func gain(toReach target: Double, peakCeiling: Double = -1) -> Double {
        guard integrated.isFinite, integrated > -70 else { return 0 }
        let wanted = target - integrated
        let allowed = truePeak.isFinite ? peakCeiling - truePeak : wanted
        return min(wanted, allowed)
    }
}

/// Measures the loudness of interleaved 32-bit float PCM with libebur128, as a sink: the
/// measuring pass of `probe --loudness` and of `convert --normalize`. Memory is libebur128's
/// histogram, the same for any length.
///
/// Channels are weighted in libebur128's default order, which is the order of 1.0 to 5.1
/// (L, R, C, LFE — not counted —, Ls, Rs); a mono programme counts once.
public final class LoudnessMeter {
    private var state: UnsafeMutablePointer<ebur128_state>?
    /// The layout being measured, set by the first buffer.
    public private(set) var format: PCMFormat?
    /// Frames measured.
    public private(set) var frameCount: Int64 = 0

    /// Whether the true peak (4× oversampled, the costly part) and the loudness range are
    /// measured besides the integrated loudness; else the sample peak only.
    public let measuresTruePeak: Bool

    /// A meter; it opens on the first buffer. Without `truePeak` it measures the integrated
    /// loudness and the sample peak alone, at a small part of the cost.
    public init(truePeak: Bool = true) {
        measuresTruePeak = truePeak
    }

    deinit {
        if state != nil { ebur128_destroy(&state) }
    }

    /// Adds `buffer` (interleaved 32-bit float) to the measurement.
    public func add(_ buffer: PCMBuffer) throws(CodecError) {
        guard buffer.format.sampleFormat == .float32, buffer.format.isInterleaved else {
            throw .unsupportedInput("the loudness meter takes interleaved 32-bit float PCM, not \(buffer.format.sampleFormat.rawValue)")
        }
        if state == nil {
            let mode = measuresTruePeak ? Int32(EBUR128_MODE_I.rawValue | EBUR128_MODE_LRA.rawValue | EBUR128_MODE_TRUE_PEAK.rawValue)
                : Int32(EBUR128_MODE_I.rawValue | EBUR128_MODE_SAMPLE_PEAK.rawValue)
            guard let opened = ebur128_init(UInt32(buffer.format.channelCount), UInt(buffer.format.sampleRate), mode) else {
                throw .unsupportedInput("libebur128 cannot measure \(buffer.format.channelCount) channels at \(buffer.format.sampleRate) Hz")
            }
            state = opened
            format = buffer.format
            for (channel, weight) in Self.channelMap(count: buffer.format.channelCount).enumerated() {
                _ = ebur128_set_channel(opened, UInt32(channel), Int32(weight.rawValue))
            }
        }
        guard buffer.format == format else { throw .unsupportedInput("the PCM layout changed mid-stream") }
        let frames = buffer.frameCount
        guard frames > 0 else { return }
        let result = buffer.bytes.withUnsafeBytes { raw in
            ebur128_add_frames_float(state, raw.baseAddress!.assumingMemoryBound(to: Float.self), frames)
        }
        guard result == Int32(EBUR128_SUCCESS.rawValue) else {
            throw .unsupportedInput("libebur128 failed to add frames (error \(result))")
        }
        frameCount += Int64(frames)
    }

    /// How each channel counts (ITU-R BS.1770-4, Table 3), for FFmpeg's default layout of each
    /// channel count: 3.0, 4.0 (with a back centre), 5.0 and 5.1 (sides or backs as surrounds),
    /// 6.1 and 7.1 (backs and sides as surrounds); the LFE never counts.
    static func channelMap(count: Int) -> [channel] {
        switch count {
        case 1: [EBUR128_CENTER]
        case 2: [EBUR128_LEFT, EBUR128_RIGHT]
        case 3: [EBUR128_LEFT, EBUR128_RIGHT, EBUR128_CENTER]
        case 4: [EBUR128_LEFT, EBUR128_RIGHT, EBUR128_CENTER, EBUR128_Mp180]
        case 5: [EBUR128_LEFT, EBUR128_RIGHT, EBUR128_CENTER, EBUR128_LEFT_SURROUND, EBUR128_RIGHT_SURROUND]
        case 6: [EBUR128_LEFT, EBUR128_RIGHT, EBUR128_CENTER, EBUR128_UNUSED, EBUR128_LEFT_SURROUND, EBUR128_RIGHT_SURROUND]
        case 7: [EBUR128_LEFT, EBUR128_RIGHT, EBUR128_CENTER, EBUR128_UNUSED, EBUR128_Mp180, EBUR128_LEFT_SURROUND, EBUR128_RIGHT_SURROUND]
        case 8: [EBUR128_LEFT, EBUR128_RIGHT, EBUR128_CENTER, EBUR128_UNUSED, EBUR128_Mp135, EBUR128_Mm135, EBUR128_Mp090, EBUR128_Mm090]
        default: (0..<count).map { $0 < 2 ? ($0 == 0 ? EBUR128_LEFT : EBUR128_RIGHT) : EBUR128_CENTER }
        }
    }

    /// The measurement of everything added; `nil` before any audio. Without the true peak
    /// measured, ``Loudness/truePeak`` is the sample peak and the range 0.
    public func measurement() throws(CodecError) -> Loudness? {
        guard let state, let format else { return nil }
        var integrated = 0.0, range = 0.0
        guard ebur128_loudness_global(state, &integrated) == Int32(EBUR128_SUCCESS.rawValue),
              !measuresTruePeak || ebur128_loudness_range(state, &range) == Int32(EBUR128_SUCCESS.rawValue) else {
            throw .unsupportedInput("libebur128 could not compute the loudness")
        }
        return Loudness(integrated: integrated, range: range, truePeak: peakDecibels(state, channelCount: format.channelCount))
    }

    /// The highest peak of any channel measured in `state`, in dB (the true peak when measured,
    /// else the sample peak); −∞ for silence.
    private func peakDecibels(_ state: UnsafeMutablePointer<ebur128_state>, channelCount: Int) -> Double {
        var peak = 0.0
        for channel in 0..<channelCount {
            var value = 0.0
            let found = measuresTruePeak ? ebur128_true_peak(state, UInt32(channel), &value) : ebur128_sample_peak(state, UInt32(channel), &value)
            if found == Int32(EBUR128_SUCCESS.rawValue) { peak = max(peak, value) }
        }
        return peak > 0 ? 20 * Double.log10(peak) : -Double.infinity
    }
}

extension LoudnessMeter {
    /// The measurement of one programme measured in consecutive parts, one meter each (a
    /// measurement split across threads): integrated loudness and range gated over the blocks
    /// of every part together (libebur128's `ebur128_loudness_global_multiple` and
    /// `ebur128_loudness_range_multiple`), the highest peak of any part. The 400 ms blocks that
    /// would straddle two parts are not measured. `nil` when no part has audio.
    ///
    /// - Throws: ``CodecError/unsupportedInput(_:)`` when the parts were measured in different
    ///   layouts or with different modes.
    public static func measurement(combining meters: [LoudnessMeter]) throws(CodecError) -> Loudness? {
        let measured = meters.filter { $0.state != nil }
        guard let first = measured.first, let format = first.format else { return nil }
        guard measured.count > 1 else { return try first.measurement() }
        guard measured.allSatisfy({ $0.format == format && $0.measuresTruePeak == first.measuresTruePeak }) else {
            throw .unsupportedInput("the parts of one measurement were measured in different layouts")
        }
        var states = measured.map(\.state)
        var integrated = 0.0, range = 0.0
        guard ebur128_loudness_global_multiple(&states, states.count, &integrated) == Int32(EBUR128_SUCCESS.rawValue),
              !first.measuresTruePeak
                || ebur128_loudness_range_multiple(&states, states.count, &range) == Int32(EBUR128_SUCCESS.rawValue) else {
            throw .unsupportedInput("libebur128 could not compute the loudness")
        }
        let peak = measured.map { $0.peakDecibels($0.state!, channelCount: format.channelCount) }.max() ?? -Double.infinity
        return Loudness(integrated: integrated, range: range, truePeak: peak)
    }
}

extension LoudnessMeter: PCMSink {
    /// ``add(_:)``.
    public func write(_ buffer: PCMBuffer) throws(CodecError) { try add(buffer) }
    /// Nothing to complete: read ``measurement()``.
    public func finish() throws(CodecError) {}
    /// Nothing to remove.
    public func cancel() {}
}

@available(*, unavailable)
extension LoudnessMeter: Sendable {}

/// Multiplies interleaved 32-bit float PCM by a fixed gain: the second pass of
/// `convert --normalize`.
public struct PCMGain: MediaTransform, Sendable {
    /// The gain in dB.
    public let decibels: Double
    private let factor: Float

    /// A gain of `decibels` dB.
    public init(decibels: Double) {
        self.decibels = decibels
        factor = Float(Double.exp10(decibels / 20))
    }

    /// The buffer with every sample scaled.
    public func transform(_ buffer: PCMBuffer) throws(CodecError) -> [PCMBuffer] {
        guard buffer.format.sampleFormat == .float32 else {
            throw .unsupportedInput("a gain applies to 32-bit float PCM, not \(buffer.format.sampleFormat.rawValue)")
        }
        var scaled = buffer
        scaled.bytes.withUnsafeMutableBytes { raw in
            for offset in stride(from: 0, to: raw.count - 3, by: 4) {
                raw.storeBytes(of: raw.loadUnaligned(fromByteOffset: offset, as: Float.self) * factor, toByteOffset: offset, as: Float.self)
            }
        }
        return [scaled]
    }

    /// Nothing held.
    public func finish() throws(CodecError) -> [PCMBuffer] { [] }
}

/// A transform that passes PCM on unchanged and measures its integrated loudness and sample
/// peak (``LoudnessMeter`` without the true peak, ITU-R BS.1770-4): once the stream has ended it tells the measurement down the stream
/// (``/MediaCore/StreamEvent/loudness(_:)``), for a sink whose header carries it (an HLS init
/// segment's `ludt`). PCM other than interleaved 32-bit float is measured through a float copy.
///
/// Not `Sendable`: the meter is a class one thread at a time feeds.
public struct LoudnessTap: MediaTransform {
    private let meter = LoudnessMeter(truePeak: false)
    private var converter: PCMResampler?
    private var told = false
    private var finished = false
    private var failed = false

    /// A tap; with `measuring` false it passes the stream on and measures nothing (a package
    /// made without a `ludt`).
    public init(measuring: Bool = true) {
        failed = !measuring
    }

    /// Measures `buffer` (a layout the meter cannot take stops the measuring, not the stream)
    /// and passes it on.
    public mutating func transform(_ buffer: PCMBuffer) -> [PCMBuffer] {
        guard !failed else { return [buffer] }
        do {
            if buffer.format.sampleFormat == .float32, buffer.format.isInterleaved {
                try meter.add(buffer)
            } else {
                if converter == nil { converter = PCMResampler(sampleFormat: .float32) }
                for converted in try converter!.transform(buffer) { try meter.add(converted) }
            }
        } catch {
            failed = true
        }
        return [buffer]
    }

    /// Nothing is held back.
    public mutating func finish() -> [PCMBuffer] {
        finished = true
        return []
    }

    /// The measurement, once, after the end.
    public mutating func takeEvents() -> [StreamEvent] {
        guard finished, !told, !failed else { return [] }
        told = true
        guard let measured = try? meter.measurement().flatMap(StreamLoudness.init(samplePeakMeasurement:)) else { return [] }
        return [.loudness(measured)]
    }
}

@available(*, unavailable)
extension LoudnessTap: Sendable {}

extension StreamLoudness {
    /// What a ``LoudnessMeter`` without the true peak measured (its ``Loudness/truePeak`` is the
    /// sample peak): the integrated loudness and the sample peak; `nil` for silence (−∞).
    public init?(samplePeakMeasurement measured: Loudness) {
        guard measured.integrated.isFinite else { return nil }
        self.init(integrated: measured.integrated, samplePeak: measured.truePeak.isFinite ? measured.truePeak : nil)
    }
}
