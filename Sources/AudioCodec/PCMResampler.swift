public import MediaCore

/// Converts PCM to another rate, channel count or sample type, as a transform between a PCM
/// source and its sink: libswresample with the soxr engine at 28-bit precision for rate changes,
/// and libswresample's default matrix (ITU-R BS.775: centre and surrounds at −3 dB, no LFE) for
/// downmixes. Output is interleaved.
///
/// The first buffer fixes the input layout; a later buffer in another layout is an error. Any
/// field of the output left `nil` keeps the input's.
public final class PCMResampler {
    /// The output's sample rate, or `nil` for the input's.
    public let sampleRate: Int?
    /// The output's channel count, or `nil` for the input's.
    public let channelCount: Int?
    /// The output's sample type.
    public let sampleFormat: PCMSampleFormat
    /// With no ``sampleRate``: the rates the output may have (an encoder's); an input at
    /// another rate is resampled to ``nearestRate(to:in:)``. `nil` allows any.
    public let allowedSampleRates: [Int]?
    /// Input frames taken so far.
    public private(set) var inputFrameCount: Int64 = 0
    /// Output frames delivered so far.
    public private(set) var outputFrameCount: Int64 = 0
    private var converter: SampleConverter?
    private var passThrough = false
    private var firstFormat: PCMFormat?

    /// A resampler to the given rate, channel count and sample type.
    public init(sampleRate: Int? = nil, channelCount: Int? = nil, sampleFormat: PCMSampleFormat = .float32,
                allowedSampleRates: [Int]? = nil) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.sampleFormat = sampleFormat
        self.allowedSampleRates = allowedSampleRates
    }

    /// The output layout for `input`.
    public func outputFormat(for input: PCMFormat) -> PCMFormat {
        let rate = sampleRate ?? allowedSampleRates.map { Self.nearestRate(to: input.sampleRate, in: $0) } ?? input.sampleRate
        // The speakers stay those of the input unless the channels are remixed.
        let keepsChannels = channelCount == nil || channelCount == input.channelCount
        return PCMFormat(sampleRate: rate, channelCount: channelCount ?? input.channelCount,
                         sampleFormat: sampleFormat, isInterleaved: true, channelMask: keepsChannels ? input.channelMask : nil)
    }

    /// The rate of `allowed` to resample `rate` to: `rate` itself if allowed; above the highest
    /// allowed, 48 kHz (44.1 kHz for a multiple of it: 176.4 kHz → 44.1 kHz), where it is
    /// allowed; else the lowest allowed rate above `rate`, or the highest below it.
    public static func nearestRate(to rate: Int, in allowed: [Int]) -> Int {
        guard !allowed.contains(rate), let highest = allowed.max() else { return rate }
        if rate > highest {
            let preferred = rate % 44100 == 0 ? 44100 : 48000
            return allowed.contains(preferred) ? preferred : highest
        }
        return allowed.filter { $0 > rate }.min() ?? highest
    }

    /// Whether a resampler is needed at all for `input`: the output would differ from it.
    public func changes(_ input: PCMFormat) -> Bool {
        outputFormat(for: input) != PCMFormat(sampleRate: input.sampleRate, channelCount: input.channelCount,
                                             sampleFormat: input.sampleFormat, isInterleaved: true, channelMask: input.channelMask)
            || !input.isInterleaved
    }
}

extension PCMResampler: MediaTransform {
    /// Converts one buffer; returns what is ready (a rate change holds a few frames back).
    public func transform(_ buffer: PCMBuffer) throws(CodecError) -> [PCMBuffer] {
        guard buffer.format.isInterleaved else {
            throw .unsupportedInput("the resampler takes interleaved PCM (a planar buffer's planes are not laid out in PCMBuffer)")
        }
        if let first = firstFormat, first != buffer.format {
            throw .unsupportedInput("the PCM layout changed mid-stream (\(first.sampleRate) Hz, \(first.channelCount) ch, "
                                    + "\(first.sampleFormat.rawValue) → \(buffer.format.sampleRate) Hz, \(buffer.format.channelCount) ch, "
                                    + "\(buffer.format.sampleFormat.rawValue))")
        }
        firstFormat = buffer.format
        if passThrough {
            inputFrameCount += Int64(buffer.frameCount)
            outputFrameCount += Int64(buffer.frameCount)
            return buffer.bytes.isEmpty ? [] : [buffer]
        }
        var input = buffer
        if input.format.sampleFormat == .int24 { input = Self.widened(input) }
        if converter == nil && !passThrough {
            if changes(buffer.format) {
                // libswresample has no packed 24-bit type: 24-bit output is made as 32-bit and
                // narrowed (its low byte is zero whenever the input had 24 bits or fewer).
                var target = outputFormat(for: input.format)
                if target.sampleFormat == .int24 { target.sampleFormat = .int32 }
                converter = try SampleConverter(from: input.format, to: target)
            } else {
                passThrough = true
            }
        }
        if passThrough { input = buffer }
        inputFrameCount += Int64(input.frameCount)
        guard let converter else {
            outputFrameCount += Int64(input.frameCount)
            return input.bytes.isEmpty ? [] : [input]
        }
        let bytes = try converter.convert(interleaved: input.bytes)
        return emit(bytes, format: converter.outputFormat)
    }

    /// What the resampler still holds.
    public func finish() throws(CodecError) -> [PCMBuffer] {
        guard let converter else { return [] }
        var buffers: [PCMBuffer] = []
        while true {
            let rest = try converter.drain()
            if rest.isEmpty { break }
            buffers += emit(rest, format: converter.outputFormat)
        }
        return buffers
    }

    private func emit(_ bytes: [UInt8], format: PCMFormat) -> [PCMBuffer] {
        guard !bytes.isEmpty else { return [] }
        var buffer = PCMBuffer(format: format, bytes: bytes)
        if sampleFormat == .int24 { buffer = Self.narrowed(buffer) }
        outputFrameCount += Int64(buffer.frameCount)
        return [buffer]
    }

    /// Packed 24-bit samples as 32-bit (libswresample has no packed 24-bit type): each sample
    /// in the top three bytes, exactly.
    static func widened(_ buffer: PCMBuffer) -> PCMBuffer {
        let count = buffer.bytes.count / 3
        var wide = [UInt8](repeating: 0, count: count * 4)
        buffer.bytes.withUnsafeBufferPointer { narrow in
            wide.withUnsafeMutableBufferPointer { wide in
                for index in 0..<count {
                    wide[4 * index + 1] = narrow[3 * index]
                    wide[4 * index + 2] = narrow[3 * index + 1]
                    wide[4 * index + 3] = narrow[3 * index + 2]
                }
            }
        }
        var format = buffer.format
        format.sampleFormat = .int32
        return PCMBuffer(format: format, bytes: wide, presentationTime: buffer.presentationTime)
    }

    /// 32-bit samples as packed 24-bit: the top three bytes of each, rounded to nearest (and
    /// saturated), so a 24-bit value widened by ``widened(_:)`` comes back exactly.
    static func narrowed(_ buffer: PCMBuffer) -> PCMBuffer {
        let count = buffer.bytes.count / 4
        var narrow = [UInt8](repeating: 0, count: count * 3)
        buffer.bytes.withUnsafeBytes { wide in
            narrow.withUnsafeMutableBufferPointer { narrow in
                for index in 0..<count {
                    let sample = Int64(Int32(littleEndian: wide.loadUnaligned(fromByteOffset: 4 * index, as: Int32.self)))
                    let rounded = min((sample + 128) >> 8, Int64(0x7F_FFFF))
                    let value = UInt32(truncatingIfNeeded: rounded)
                    narrow[3 * index] = UInt8(truncatingIfNeeded: value)
                    narrow[3 * index + 1] = UInt8(truncatingIfNeeded: value >> 8)
                    narrow[3 * index + 2] = UInt8(truncatingIfNeeded: value >> 16)
                }
            }
        }
        var format = buffer.format
        format.sampleFormat = .int24
        return PCMBuffer(format: format, bytes: narrow, presentationTime: buffer.presentationTime)
    }
}

@available(*, unavailable)
extension PCMResampler: Sendable {}
