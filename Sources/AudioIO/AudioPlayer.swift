internal import CALSA
public import MediaCore

/// Plays interleaved PCM on an ALSA device, with underruns recovered and counted (what an
/// `AudioQueue` output does on Apple's platforms).
///
/// Not thread-safe; use from one thread or task at a time. ``write(_:)`` blocks while the
/// device's buffer is full, which paces the caller in real time.
public final class AudioPlayer {
    /// The PCM layout the device was opened with.
    public let format: PCMFormat
    private let pcm: PCMDevice

    /// Opens `device` for playback of `format`.
    ///
    /// - Parameters:
    ///   - format: the PCM layout to play (rate, channels, sample format).
    ///   - device: the ALSA PCM name; `"default"` is the system's default output.
    ///   - periodFrames: the device's period; default 20 ms.
    ///   - periodCount: periods in the device's buffer: how long decoding may stall before the
    ///     device runs dry (an underrun, recovered and counted).
    ///   - alsaConfiguration: where to look `device` up instead of the system configuration.
    /// - Throws: ``ALSAError`` for a missing or busy device or an unsupported format.
    public init(
        format: PCMFormat,
        device: String = "default",
        periodFrames: Int? = nil,
        periodCount: Int = 4,
        alsaConfiguration: ALSAConfiguration? = nil
    ) throws(ALSAError) {
        self.format = format
        pcm = try PCMDevice(name: device, direction: .playback, configuration: alsaConfiguration)
        try pcm.configure(format: format, periodFrames: periodFrames, periodCount: periodCount)
    }

    /// The ALSA PCM name.
    public var device: String { pcm.name }
    /// What the device granted.
    public var parameters: PCMDevice.Parameters? { pcm.parameters }
    /// Underruns recovered from (the device ran dry before the next write).
    public var underrunCount: Int { pcm.xrunCount }

    /// Queues `sample`'s PCM, blocking while the device's buffer is full.
    ///
    /// - Throws: ``ALSAError/formatMismatch(device:expected:got:)`` for a sample that is not
    ///   PCM in ``format``; another ``ALSAError`` if the device fails.
    public func write(_ sample: MediaSample) throws(ALSAError) {
        guard case .pcm(let sampleFormat) = sample.format, sampleFormat == format else {
            throw .formatMismatch(device: pcm.name, expected: format, got: sample.format)
        }
        try write(bytes: sample.data)
    }

    /// Queues interleaved PCM bytes in ``format`` (a trailing partial frame is ignored).
    public func write(bytes: [UInt8]) throws(ALSAError) {
        let result = bytes.withUnsafeBytes { buffer in Result { () throws(ALSAError) in try pcm.write(buffer) } }
        try result.get()
    }

    /// Queues interleaved PCM bytes in ``format`` without copying them (a trailing partial frame
    /// is ignored), blocking while the device's buffer is full.
    public func write(bytes: UnsafeRawBufferPointer) throws(ALSAError) {
        try pcm.write(bytes)
    }

    /// Blocks until everything written has been played; the player can then be written to again.
    public func drain() throws(ALSAError) {
        try pcm.drain()
        try pcm.prepare()
    }
}

/// A player is used by one thread at a time (ALSA's handle is not thread-safe).
@available(*, unavailable)
extension AudioPlayer: Sendable {}
