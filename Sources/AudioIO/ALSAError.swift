internal import CALSA
public import MediaCore

/// Everything that can go wrong in ALSA capture, playback or device listing: the one error type of
/// AudioIO. Negative ALSA return codes become Swift errors in one place,
/// `ALSAError.check(_:device:opening:operation:)`, carrying `snd_strerror`'s text, the device and
/// the operation. When opening a device, `-ENOENT` and `-EBUSY` become ``deviceNotFound(_:)`` and
/// ``deviceBusy(_:)``; from any other call they stay ``alsa(device:operation:code:message:)``.
public enum ALSAError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No PCM of that name (`-ENOENT`): not in the configuration, or its card is absent.
    case deviceNotFound(String)
    /// The device is open elsewhere (`-EBUSY`).
    case deviceBusy(String)
    /// The device cannot deliver or take this sample format.
    case unsupportedFormat(device: String, PCMSampleFormat)
    /// The device cannot run at this rate; `nearest` is the closest rate it offers, if any.
    case unsupportedSampleRate(device: String, requested: Int, nearest: Int?)
    /// The device cannot carry this many channels.
    case unsupportedChannelCount(device: String, Int)
    /// An in-process ALSA configuration could not be read or parsed.
    case invalidConfiguration(message: String)
    /// A sample whose format is not the PCM the device was opened with.
    case formatMismatch(device: String, expected: PCMFormat, got: FormatDescription)
    /// A call in the wrong state (start after stop, …).
    case invalidState(String)
    /// Any other failed ALSA call.
    case alsa(device: String, operation: String, code: Int32, message: String)

    /// A sentence for people: what failed, on which device, and why.
    public var description: String {
        switch self {
        case .deviceNotFound(let device):
            "ALSA device '\(device)' not found (no such PCM, or its sound card is absent)"
        case .deviceBusy(let device):
            "ALSA device '\(device)' is busy (opened by another program)"
        case .unsupportedFormat(let device, let format):
            "ALSA device '\(device)' does not support sample format \(format.rawValue)"
        case .unsupportedSampleRate(let device, let requested, let nearest):
            "ALSA device '\(device)' does not support \(requested) Hz"
                + (nearest.map { " (nearest: \($0) Hz)" } ?? "")
        case .unsupportedChannelCount(let device, let count):
            "ALSA device '\(device)' does not support \(count) channel\(count == 1 ? "" : "s")"
        case .invalidConfiguration(let message):
            "invalid ALSA configuration: \(message)"
        case .formatMismatch(let device, let expected, let got):
            "ALSA device '\(device)' was opened for \(expected.channelCount) ch \(expected.sampleFormat.rawValue) at \(expected.sampleRate) Hz, not \(got)"
        case .invalidState(let what):
            what
        case .alsa(let device, let operation, let code, let message):
            "\(operation) on ALSA device '\(device)' failed: \(message) (error \(code))"
        }
    }
}

extension ALSAError {
    /// alsa-lib's message for a negative return code.
    static func message(for code: Int32) -> String {
        String(cString: snd_strerror(code))
    }

    /// The one place ALSA return codes become Swift errors: throws for a negative `code`.
    ///
    /// - Parameter opening: whether `code` came from opening the device, where `-ENOENT` means
    ///   "no such PCM" and `-EBUSY` "in use".
    @discardableResult
    static func check(_ code: Int32, device: String, opening: Bool = false,
                      operation: @autoclosure () -> String) throws(ALSAError) -> Int32 {
        guard code < 0 else { return code }
        throw error(code, device: device, opening: opening, operation: operation())
    }

    /// The error for the negative return code `code`.
    static func error(_ code: Int32, device: String, opening: Bool = false, operation: String) -> ALSAError {
        switch (-code, opening) {
        case (ENOENT, true): .deviceNotFound(device)
        case (EBUSY, true): .deviceBusy(device)
        default: .alsa(device: device, operation: operation, code: code, message: message(for: code))
        }
    }
}

extension ALSAError: PipelineErrorConvertible {
    /// ``/MediaCore/PipelineError/Code/audioDevice``.
    public static var pipelineErrorCode: PipelineError.Code { .audioDevice }
}

extension PipelineError {
    /// The audio device failed (missing, busy, an unsupported format, or an error while running).
    public static func audioDevice(_ error: ALSAError) -> PipelineError { PipelineError(.audioDevice, underlying: error) }
}
