public import AACBitstream

/// Why an SBR encoder cannot be made or cannot go on: the one error type of
/// SpectralBandReplication.
public enum SBREncodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// HE-AAC is not defined here at this output rate.
    case unsupportedSampleRate(Int, supported: [Int])
    /// HE-AAC v1 here codes one channel (an SCE) or two (a CPE).
    case unsupportedChannelCount(Int)
    /// The bitrate is outside what HE-AAC is for at this channel count.
    case bitrateOutOfRange(Int, allowed: ClosedRange<Int>)
    /// No valid SBR header exists for the rate (never for a supported rate).
    case noHeader(outputSampleRate: Int)
    /// The SBR data could not be written.
    case bitstream(AACBitstreamError)

    /// A sentence for people.
    public var description: String {
        switch self {
        case .unsupportedSampleRate(let rate, let supported):
            "HE-AAC cannot be made at \(rate) Hz: the output rate must be one of "
                + supported.map(String.init).joined(separator: ", ") + " Hz (resample first, or use --profile lc)"
        case .unsupportedChannelCount(let count):
            "HE-AAC is made here for mono or stereo, not \(count) channels (use --profile lc)"
        case .bitrateOutOfRange(let rate, let allowed):
            "bitrate \(rate) b/s is outside HE-AAC's \(allowed.lowerBound)...\(allowed.upperBound) b/s at this channel count"
        case .noHeader(let rate): "no SBR header fits \(rate) Hz"
        case .bitstream(let error): "writing SBR data: \(error)"
        }
    }
}
