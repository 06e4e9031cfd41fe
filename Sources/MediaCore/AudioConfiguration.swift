/// Capture and encode parameters — channels, sample rate, bits per sample — validated so that an unsupported value is an error up front, not a failure deep in ALSA or
/// the encoder.
public struct AudioConfiguration: Sendable, Hashable {
    /// The rates AAC has a sampling-frequency index for (ISO/IEC 14496-3, Table 1.18), except 7350.
    public static let supportedSampleRates = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000]
    /// Channel counts the pipeline carries (AAC channel configurations 1–7 cover up to 8).
    public static let supportedChannelCounts = 1...8
    /// Bits per PCM sample that capture can deliver.
    public static let supportedBitDepths = [16, 24, 32]

    /// Channels per frame.
    public let channelCount: Int
    /// Frames per second.
    public let sampleRate: Int
    /// Bits per sample of the PCM.
    public let bitDepth: Int

    /// Stereo, 44 100 Hz, 16 bit.
    public static let `default` = AudioConfiguration(uncheckedChannelCount: 2, sampleRate: 44100, bitDepth: 16)

    /// A configuration, checked against what the pipeline supports.
    public init(channelCount: Int = 2, sampleRate: Int = 44100, bitDepth: Int = 16) throws(AudioConfigurationError) {
        guard Self.supportedChannelCounts.contains(channelCount) else { throw .unsupportedChannelCount(channelCount) }
        guard Self.supportedSampleRates.contains(sampleRate) else { throw .unsupportedSampleRate(sampleRate) }
        guard Self.supportedBitDepths.contains(bitDepth) else { throw .unsupportedBitDepth(bitDepth) }
        self.init(uncheckedChannelCount: channelCount, sampleRate: sampleRate, bitDepth: bitDepth)
    }

    private init(uncheckedChannelCount: Int, sampleRate: Int, bitDepth: Int) {
        self.channelCount = uncheckedChannelCount
        self.sampleRate = sampleRate
        self.bitDepth = bitDepth
    }

    /// The interleaved PCM layout capture delivers for this configuration.
    public var pcmFormat: PCMFormat {
        let format: PCMSampleFormat = switch bitDepth {
        case 24: .int24
        case 32: .int32
        default: .int16
        }
        return PCMFormat(sampleRate: sampleRate, channelCount: channelCount, sampleFormat: format, isInterleaved: true)
    }
}

/// A value ``AudioConfiguration`` does not support.
public enum AudioConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Channel count outside ``AudioConfiguration/supportedChannelCounts``.
    case unsupportedChannelCount(Int)
    /// A rate not in ``AudioConfiguration/supportedSampleRates``.
    case unsupportedSampleRate(Int)
    /// A bit depth not in ``AudioConfiguration/supportedBitDepths``.
    case unsupportedBitDepth(Int)

    /// A sentence for people: what it is and, for errors, where.
    public var description: String {
        switch self {
        case .unsupportedChannelCount(let count):
            "unsupported channel count \(count): use 1 to 8"
        case .unsupportedSampleRate(let rate):
            "unsupported sample rate \(rate) Hz: use one of "
                + AudioConfiguration.supportedSampleRates.map(String.init).joined(separator: ", ")
        case .unsupportedBitDepth(let depth):
            "unsupported bit depth \(depth): use 16, 24 or 32"
        }
    }
}
