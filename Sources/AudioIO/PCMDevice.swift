internal import CALSA
public import MediaCore

/// One open ALSA PCM (`snd_pcm_t`), closed in `deinit`: the layer under ``AudioCapture`` and
/// ``AudioPlayer`` (where an `AudioQueue` sits on Apple's platforms).
///
/// Not thread-safe: one thread at a time uses a device (ALSA's own rule for a `snd_pcm_t`).
/// Reads and writes recover from over- and underruns (`-EPIPE`) and from system suspend
/// (`-ESTRPIPE`) with `snd_pcm_recover`, counting them in ``xrunCount``.
public final class PCMDevice {
    /// Which way the audio flows.
    public enum Direction: Sendable, Hashable {
        /// Recording: the device fills buffers (`SND_PCM_STREAM_CAPTURE`).
        case capture
        /// Playing: the device drains buffers (`SND_PCM_STREAM_PLAYBACK`).
        case playback
    }

    /// What the device granted in ``configure(format:periodFrames:periodCount:)``.
    public struct Parameters: Sendable, Hashable {
        /// The interleaved PCM layout (rate, channels, sample format).
        public var format: PCMFormat
        /// Frames per period: the device's transfer unit, one interrupt's worth.
        public var periodFrames: Int
        /// Frames in the whole ring buffer (usually a few periods).
        public var bufferFrames: Int
    }

    /// The PCM's name as opened (`default`, `hw:0,0`, `pulse`, a name from an ``ALSAConfiguration``).
    public let name: String
    /// Capture or playback.
    public let direction: Direction
    /// What the device granted, once configured.
    public private(set) var parameters: Parameters?
    /// Overruns (capture) or underruns (playback) recovered from since opening.
    public private(set) var xrunCount = 0
    /// System suspends recovered from since opening.
    public private(set) var suspendCount = 0
    /// A capture error met after part of a read: thrown by the next read.
    private var pendingError: ALSAError?

    let handle: OpaquePointer
    /// Keeps the tree `snd_pcm_open_lconf` was given alive as long as the PCM.
    private let configuration: ALSAConfiguration?

    /// Opens the PCM `name` in blocking mode.
    ///
    /// - Parameters:
    ///   - name: the ALSA PCM name (`default`, `hw:0,0`, a name from `configuration`, …).
    ///   - direction: capture or playback.
    ///   - configuration: definitions to look `name` up in instead of the system's
    ///     (`snd_pcm_open_lconf`); `nil` for the system configuration (`snd_pcm_open`).
    /// - Throws: ``ALSAError/deviceNotFound(_:)``, ``ALSAError/deviceBusy(_:)``, or
    ///   ``ALSAError/alsa(device:operation:code:message:)``.
    public init(name: String, direction: Direction, configuration: ALSAConfiguration? = nil) throws(ALSAError) {
        let stream = direction == .capture ? SND_PCM_STREAM_CAPTURE : SND_PCM_STREAM_PLAYBACK
        // Capture is non-blocking: ``read(into:pollInterval:until:)`` waits in `snd_pcm_wait`
        // with a timeout, never inside `snd_pcm_readi`, so a stalled device cannot hold it.
        let mode: Int32 = direction == .capture ? SND_PCM_NONBLOCK : 0
        var pcm: OpaquePointer?
        let code = if let configuration {
            snd_pcm_open_lconf(&pcm, name, stream, mode, configuration.tree)
        } else {
            snd_pcm_open(&pcm, name, stream, mode)
        }
        try ALSAError.check(code, device: name, opening: true, operation: "opening for \(direction)")
        guard let pcm else { throw .deviceNotFound(name) }
        self.handle = pcm
        self.name = name
        self.direction = direction
        self.configuration = configuration
    }

    deinit {
        snd_pcm_close(handle)
    }

    /// Sets the hardware parameters: interleaved access, `format`, a period of about
    /// `periodFrames` (default: 20 ms) and a buffer of about `periodCount` periods; then prepares
    /// the device. Returns what the device granted (period and buffer sizes are rounded to what
    /// it can do; rate, channels and sample format are exact or an error).
    ///
    /// - Throws: ``ALSAError/unsupportedFormat(device:_:)``,
    ///   ``ALSAError/unsupportedChannelCount(device:_:)``,
    ///   ``ALSAError/unsupportedSampleRate(device:requested:nearest:)``, or another ``ALSAError``.
    @discardableResult
    public func configure(format: PCMFormat, periodFrames: Int? = nil, periodCount: Int = 4) throws(ALSAError) -> Parameters {
        guard format.isInterleaved else { throw .invalidState("AudioIO carries interleaved PCM only") }
        var params: OpaquePointer?
        try ALSAError.check(snd_pcm_hw_params_malloc(&params), device: name, operation: "snd_pcm_hw_params_malloc")
        guard let params else { throw .invalidState("snd_pcm_hw_params_malloc returned nothing") }
        defer { snd_pcm_hw_params_free(params) }

        try ALSAError.check(snd_pcm_hw_params_any(handle, params), device: name, operation: "reading hardware parameters")
        try ALSAError.check(snd_pcm_hw_params_set_access(handle, params, SND_PCM_ACCESS_RW_INTERLEAVED),
                            device: name, operation: "setting interleaved access")
        guard snd_pcm_hw_params_set_format(handle, params, format.sampleFormat.alsaFormat) >= 0 else {
            throw .unsupportedFormat(device: name, format.sampleFormat)
        }
        guard let channels = UInt32(exactly: format.channelCount),
              snd_pcm_hw_params_set_channels(handle, params, channels) >= 0 else {
            throw .unsupportedChannelCount(device: name, format.channelCount)
        }
        var rate = UInt32(clamping: format.sampleRate)
        var direction: Int32 = 0
        let rateCode = snd_pcm_hw_params_set_rate_near(handle, params, &rate, &direction)
        guard rateCode >= 0, Int(rate) == format.sampleRate, direction == 0 else {
            throw .unsupportedSampleRate(device: name, requested: format.sampleRate, nearest: rateCode >= 0 ? Int(rate) : nil)
        }
        var period = snd_pcm_uframes_t(max(1, periodFrames ?? format.sampleRate / 50))
        direction = 0
        try ALSAError.check(snd_pcm_hw_params_set_period_size_near(handle, params, &period, &direction),
                            device: name, operation: "setting the period size")
        var buffer = period * snd_pcm_uframes_t(max(2, periodCount))
        try ALSAError.check(snd_pcm_hw_params_set_buffer_size_near(handle, params, &buffer),
                            device: name, operation: "setting the buffer size")
        try ALSAError.check(snd_pcm_hw_params(handle, params), device: name, operation: "applying hardware parameters")

        direction = 0
        try ALSAError.check(snd_pcm_hw_params_get_period_size(params, &period, &direction),
                            device: name, operation: "reading the period size")
        try ALSAError.check(snd_pcm_hw_params_get_buffer_size(params, &buffer),
                            device: name, operation: "reading the buffer size")
        let granted = Parameters(format: format, periodFrames: Int(period), bufferFrames: Int(buffer))
        parameters = granted
        return granted
    }

    /// Makes the device ready to start (after ``configure(format:periodFrames:periodCount:)``,
    /// which already does, or after ``drop()``).
    public func prepare() throws(ALSAError) {
        try ALSAError.check(snd_pcm_prepare(handle), device: name, operation: "snd_pcm_prepare")
    }

    /// Starts the stream now, instead of at the first read (capture) or when the buffer is
    /// full (playback).
    public func start() throws(ALSAError) {
        try ALSAError.check(snd_pcm_start(handle), device: name, operation: "snd_pcm_start")
    }

    /// Stops at once, discarding pending frames.
    public func drop() throws(ALSAError) {
        try ALSAError.check(snd_pcm_drop(handle), device: name, operation: "snd_pcm_drop")
    }

    /// Playback: blocks until every written frame has been played, then stops.
    public func drain() throws(ALSAError) {
        var code = snd_pcm_drain(handle)
        if code == -EPIPE || code == -ESTRPIPE {
            try recover(code, operation: "snd_pcm_drain")
            code = snd_pcm_drain(handle)
        }
        try ALSAError.check(code, device: name, operation: "snd_pcm_drain")
    }

    /// Capture: reads `buffer.count / bytesPerFrame` frames, waiting for them, recovering from
    /// overruns (the frames lost to one are not in `buffer`: the stream restarts). Returns the
    /// frames read: all of them, unless `shouldStop` said yes while waiting (checked at least
    /// every `pollInterval`), so a stalled device (a stopped sound server) cannot hold a caller
    /// that wants to stop. When the device fails after some frames were read, those frames are
    /// returned and the error is thrown by the next call.
    @discardableResult
    public func read(into buffer: UnsafeMutableRawBufferPointer, pollInterval: Duration = .milliseconds(100),
                     until shouldStop: () -> Bool = { false }) throws(ALSAError) -> Int {
        if let pendingError {
            self.pendingError = nil
            throw pendingError
        }
        let frameBytes = try bytesPerFrame()
        let total = buffer.count / frameBytes
        var done = 0
        do {
            try read(into: buffer, frameBytes: frameBytes, total: total, done: &done, pollInterval: pollInterval, until: shouldStop)
        } catch {
            guard done > 0 else { throw error }
            pendingError = error
        }
        return done
    }

    private func read(into buffer: UnsafeMutableRawBufferPointer, frameBytes: Int, total: Int, done: inout Int,
                      pollInterval: Duration, until shouldStop: () -> Bool) throws(ALSAError) {
        let timeout = Int32(clamping: pollInterval.inMilliseconds())
        while done < total, let base = buffer.baseAddress {
            // A capture stream is started by its first read; waiting on one that is only
            // prepared (at first, after an overrun) would wait forever.
            if snd_pcm_state(handle) == SND_PCM_STATE_PREPARED {
                try ALSAError.check(snd_pcm_start(handle), device: name, operation: "snd_pcm_start")
            }
            let ready = snd_pcm_wait(handle, max(1, timeout))
            if ready < 0 {
                try recover(ready, operation: "snd_pcm_wait")
                continue
            }
            if ready == 0 {
                if shouldStop() { break }
                continue
            }
            let result = snd_pcm_readi(handle, base + done * frameBytes, snd_pcm_uframes_t(total - done))
            if result < 0 {
                // -EAGAIN (fewer frames than asked for, not one): wait again.
                try recover(Int32(result), operation: "snd_pcm_readi")
            } else {
                done += result
            }
        }
    }

    /// Capture: frames the device holds that have not been read yet (0 when it cannot say).
    public func bufferedFrames() -> Int {
        max(0, snd_pcm_avail_update(handle))
    }

    /// Capture: reads `frames` frames (blocking) into a new array.
    public func read(frames: Int) throws(ALSAError) -> [UInt8] {
        let frameBytes = try bytesPerFrame()
        var bytes = [UInt8](repeating: 0, count: frames * frameBytes)
        let result = bytes.withUnsafeMutableBytes { buffer in Result { () throws(ALSAError) in try read(into: buffer) } }
        bytes.removeLast(bytes.count - (try result.get()) * frameBytes)
        return bytes
    }

    /// Playback: writes every whole frame of `bytes` (blocking), recovering from underruns.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(ALSAError) {
        let frameBytes = try bytesPerFrame()
        let total = bytes.count / frameBytes
        var done = 0
        while done < total, let base = bytes.baseAddress {
            let result = snd_pcm_writei(handle, base + done * frameBytes, snd_pcm_uframes_t(total - done))
            if result < 0 {
                try recover(Int32(result), operation: "snd_pcm_writei")
            } else {
                done += result
            }
        }
    }

    /// Frames the device can take (playback) or has ready (capture) now, recovering from xruns.
    public func availableFrames() throws(ALSAError) -> Int {
        var result = snd_pcm_avail_update(handle)
        if result < 0 {
            try recover(Int32(result), operation: "snd_pcm_avail_update")
            result = snd_pcm_avail_update(handle)
        }
        try ALSAError.check(Int32(clamping: min(result, 0)), device: name, operation: "snd_pcm_avail_update")
        return result
    }

    private func bytesPerFrame() throws(ALSAError) -> Int {
        guard let parameters else { throw .invalidState("ALSA device '\(name)' used before configure(format:)") }
        return parameters.format.bytesPerFrame
    }

    /// `-EPIPE` (xrun) and `-ESTRPIPE` (suspend) go through `snd_pcm_recover` and are counted;
    /// `-EINTR` and `-EAGAIN` are retried; anything else (or a failed recovery) throws.
    private func recover(_ code: Int32, operation: String) throws(ALSAError) {
        switch -code {
        case EINTR, EAGAIN:
            return
        case EPIPE:
            xrunCount += 1
        case ESTRPIPE:
            suspendCount += 1
        default:
            throw ALSAError.error(code, device: name, operation: operation)
        }
        try ALSAError.check(snd_pcm_recover(handle, code, 1), device: name, operation: "recovering from \(operation)")
    }
}

extension PCMSampleFormat {
    /// The ALSA sample format for this type (little-endian; 24-bit packed in 3 bytes).
    var alsaFormat: snd_pcm_format_t {
        switch self {
        case .uint8: SND_PCM_FORMAT_U8
        case .int16: SND_PCM_FORMAT_S16_LE
        case .int24: SND_PCM_FORMAT_S24_3LE
        case .int32: SND_PCM_FORMAT_S32_LE
        case .float32: SND_PCM_FORMAT_FLOAT_LE
        case .float64: SND_PCM_FORMAT_FLOAT64_LE
        }
    }
}

/// Process-wide alsa-lib settings.
public enum ALSALibrary {
    private static let silenced: Void = kf_alsa_silence_library_errors()

    /// Stops alsa-lib printing its own "ALSA lib pcm.c:…" lines on stderr for every failure
    /// (``ALSAError`` already reports each one). This replaces alsa-lib's error handler for the
    /// whole process, so AudioIO never does it on its own: a program calls it once, as `keyframe`
    /// does at start. Idempotent and thread-safe.
    public static func silenceDiagnostics() {
        _ = silenced
    }
}

extension PCMDevice.Direction: CustomStringConvertible {
    /// `capture` or `playback`.
    public var description: String { self == .capture ? "capture" : "playback" }
}

/// A device handle is used by one thread at a time; hand it over, don't share it.
@available(*, unavailable)
extension PCMDevice: Sendable {}
