public import AACBitstream

/// The SBR settings of one stream, chosen from its bitrate, channel count and output rate: the
/// `sbr_header` (ISO/IEC 14496-3, 4.4.2.8 Table 4.63) and the frequency tables it implies
/// (4.6.18.3.2), the crossover the AAC-LC core is cut at, and the share of the bitrate the SBR
/// data is expected to take.
///
/// The targets are frequencies, not header indices, so one table serves every rate: the
/// crossover (the lowest frequency SBR rebuilds) rises with the bits each channel has, from
/// about 5 kHz at 16 kb/s per channel to 8.3 kHz at 32 kb/s, as 3GPP TS 26.404 §5.3's tunings
/// do; the stop frequency is about 16–17 kHz. The header nearest the targets among the valid
/// ones is taken (`bs_freq_scale` 2, `bs_alter_scale` 1, `bs_noise_bands` 2, the defaults).
public struct SBRTuning: Sendable, Hashable {
    /// The output sample rate (the core runs at half of it).
    public let outputSampleRate: Int
    /// Channels the SBR data and the core code: 1 (one SCE) or 2 (one CPE). With
    /// ``parametricStereo``, 1 for a stereo input.
    public let channelCount: Int
    /// Whether a stereo input is coded as a mono downmix plus parametric stereo (HE-AAC v2,
    /// ISO/IEC 14496-3 8): one SCE whose SBR data carries the PS data.
    public let parametricStereo: Bool
    /// Channels of the input: 2 with ``parametricStereo``, else ``channelCount``.
    public var inputChannelCount: Int { parametricStereo ? 2 : channelCount }
    /// The total bitrate asked for, core and SBR together.
    public let bitrate: Int
    /// The header every stream of these settings sends.
    public let header: SBRHeader
    /// The frequency tables of ``header`` at ``outputSampleRate``.
    public let tables: SBRFrequencyTables

    /// Output rates HE-AAC takes here: those whose core (half the rate) is an AAC-LC rate and
    /// whose SBR tables ISO/IEC 14496-3 defines (4.6.18.3.2).
    public static let supportedOutputSampleRates = [16000, 22050, 24000, 32000, 44100, 48000]

    /// The lowest frequency SBR rebuilds, in hertz: the core codes below it
    /// (`kx · fs / 128`, with `kx` the first QMF band of the high table).
    public var crossoverFrequency: Int { tables.kx * outputSampleRate / 128 }

    /// The highest frequency SBR rebuilds, in hertz (`k2 · fs / 128`).
    public var stopFrequency: Int { tables.k2 * outputSampleRate / 128 }

    /// The bitrate the SBR data is expected to take, which the core does not get: about
    /// 1.8 kb/s per channel at 48 kHz (headers every 8 frames, one or two envelopes a frame, and
    /// now and then the sine flags of missing harmonics), in proportion to the frame rate
    /// elsewhere.
    /// With parametric stereo, about 1.8 kb/s more for the PS data (20 stereo bands a frame).
    public var reservedBitrate: Int {
        Self.reservedBitrate(channelCount: channelCount, outputSampleRate: outputSampleRate, parametricStereo: parametricStereo)
    }

    /// ``reservedBitrate`` for `channelCount` coded channels at `outputSampleRate`.
    static func reservedBitrate(channelCount: Int, outputSampleRate: Int, parametricStereo: Bool = false) -> Int {
        ((channelCount == 1 ? 2000 : 3600) + (parametricStereo ? 1800 : 0)) * outputSampleRate / 48000
    }

    /// The bitrates HE-AAC takes for `channelCount` channels at `outputSampleRate`: a core of at
    /// least 8 kb/s (libavcodec's floor) and at most what AAC carries at the core's rate (6144
    /// bits per channel per 1024-sample frame, ISO/IEC 14496-3 4.5.3.2), plus the SBR data; and
    /// no more than 64 kb/s per channel.
    ///
    /// With `parametricStereo` (a stereo input coded as mono plus PS), the range of one coded
    /// channel plus the PS data.
    public static func allowedBitrates(channelCount: Int, outputSampleRate: Int, parametricStereo: Bool = false) -> ClosedRange<Int> {
        let channelCount = parametricStereo ? 1 : channelCount
        let reserve = reservedBitrate(channelCount: channelCount, outputSampleRate: outputSampleRate, parametricStereo: parametricStereo)
        let coreLimit = 6144 * channelCount * (outputSampleRate / 2) / 1024
        let low = 8000 + reserve
        return low...max(low, min(64000 * channelCount, coreLimit + reserve))
    }

    /// The core's bitrate: what was asked for, less ``reservedBitrate``.
    public var coreBitrate: Int { bitrate - reservedBitrate }

    /// The settings for `bitrate` over `channelCount` input channels at `outputSampleRate`.
    ///
    /// - Parameters:
    ///   - bitrate: bits per second, core and SBR (and PS) together.
    ///   - channelCount: the input's channels, 1 or 2.
    ///   - outputSampleRate: the input's (and the decoded output's) rate, one of
    ///     ``supportedOutputSampleRates``.
    ///   - parametricStereo: code a stereo input as a mono downmix plus parametric stereo
    ///     (HE-AAC v2); then ``channelCount`` is 1.
    /// - Throws: ``SBREncodingError`` for a rate outside ``supportedOutputSampleRates``, a
    ///   channel count other than 1 or 2 (2 with `parametricStereo`), or a bitrate outside
    ///   ``allowedBitrates(channelCount:outputSampleRate:parametricStereo:)``.
    public init(bitrate: Int, channelCount: Int, outputSampleRate: Int, parametricStereo: Bool = false) throws(SBREncodingError) {
        guard Self.supportedOutputSampleRates.contains(outputSampleRate) else {
            throw .unsupportedSampleRate(outputSampleRate, supported: Self.supportedOutputSampleRates)
        }
        guard channelCount == 1 || channelCount == 2, !parametricStereo || channelCount == 2 else {
            throw .unsupportedChannelCount(channelCount)
        }
        let allowed = Self.allowedBitrates(channelCount: channelCount, outputSampleRate: outputSampleRate, parametricStereo: parametricStereo)
        guard allowed.contains(bitrate) else { throw .bitrateOutOfRange(bitrate, allowed: allowed) }
        self.outputSampleRate = outputSampleRate
        self.parametricStereo = parametricStereo
        let channelCount = parametricStereo ? 1 : channelCount
        self.channelCount = channelCount
        self.bitrate = bitrate
        let perChannel = bitrate / channelCount
        let (crossover, stop) = Self.targets(bitsPerChannel: perChannel, outputSampleRate: outputSampleRate)
        guard let (header, tables) = Self.nearestHeader(crossover: crossover, stop: stop, outputSampleRate: outputSampleRate) else {
            throw .noHeader(outputSampleRate: outputSampleRate)
        }
        self.header = header
        self.tables = tables
    }

    /// The crossover and stop frequencies, in hertz, for `bitsPerChannel`.
    static func targets(bitsPerChannel: Int, outputSampleRate: Int) -> (crossover: Int, stop: Int) {
        let crossover: Int
        let stop: Int
        switch bitsPerChannel {
        case ..<12000: (crossover, stop) = (4000, 11000)
        case ..<16000: (crossover, stop) = (4500, 12500)
        case ..<20000: (crossover, stop) = (5300, 14000)
        case ..<24000: (crossover, stop) = (6000, 15500)
        case ..<28000: (crossover, stop) = (6800, 16500)
        case ..<36000: (crossover, stop) = (8300, 16800)
        default: (crossover, stop) = (9500, 17000)
        }
        // Never above what the rate carries: the band ends below the Nyquist frequency.
        let nyquist = outputSampleRate / 2
        return (min(crossover, nyquist * 4 / 10), min(stop, nyquist * 95 / 100))
    }

    /// The valid header (of the default frequency scale) whose crossover and stop frequencies
    /// are nearest `crossover` and `stop`, crossover first.
    static func nearestHeader(crossover: Int, stop: Int, outputSampleRate: Int) -> (SBRHeader, SBRFrequencyTables)? {
        var best: (SBRHeader, SBRFrequencyTables, Double)?
        for start in 0...15 {
            for stopIndex in 0...15 {
                let header = SBRHeader(amplitudeResolution: 1, startFrequency: UInt8(start), stopFrequency: UInt8(stopIndex))
                guard let tables = try? SBRFrequencyTables(header: header, outputSampleRate: outputSampleRate) else { continue }
                let crossoverHz = Double(tables.kx * outputSampleRate) / 128
                let stopHz = Double(tables.k2 * outputSampleRate) / 128
                let cost = 2 * abs(crossoverHz - Double(crossover)) + abs(stopHz - Double(stop))
                if best == nil || cost < best!.2 { best = (header, tables, cost) }
            }
        }
        return best.map { ($0.0, $0.1) }
    }
}
