public import MediaCore

/// An ALSA capture device as a ``/MediaCore/PCMSource``: periods of interleaved PCM with
/// presentation times on the capture's monotonic clock (see ``AudioCapture``).
///
/// The capture thread never waits for the consumer: it queues each period, and ``next()``,
/// called on the consumer's own thread, waits for the next batch. When the consumer falls more
/// than the queue behind, periods are dropped and counted
/// (``AudioCapture/Statistics/consumerOverruns``). ``next()`` returns `nil` once the capture
/// has ended (frame limit, ``AudioCapture/stop()``, a device failure) and the queue is empty.
public struct AudioCaptureSource: PCMSource {
    /// The capture: open, start and stop it, read its statistics.
    public let capture: AudioCapture
    private var pending: [MediaSample] = []
    private var pendingIndex = 0
    private var framesDelivered: Int64 = 0

    /// A source over a new capture of `configuration` from `device` (see
    /// ``AudioCapture/init(configuration:device:periodFrames:periodCount:queueCapacity:deliveryBatch:frameLimit:alsaConfiguration:onSample:onEnd:)``
    /// for the parameters).
    public init(
        configuration: AudioConfiguration,
        device: String = "default",
        periodFrames: Int? = nil,
        periodCount: Int = 4,
        queueCapacity: Int = 64,
        deliveryBatch: Int = 1,
        frameLimit: Int? = nil,
        alsaConfiguration: ALSAConfiguration? = nil,
        onEnd: (@Sendable (AudioCapture.Ending) -> Void)? = nil
    ) {
        capture = AudioCapture(configuration: configuration, device: device, periodFrames: periodFrames, periodCount: periodCount,
                               queueCapacity: queueCapacity, deliveryBatch: deliveryBatch, frameLimit: frameLimit,
                               alsaConfiguration: alsaConfiguration, onSample: nil, isPulled: true, onEnd: onEnd)
    }

    /// The capture format.
    public var pcmFormat: PCMFormat? { capture.configuration.pcmFormat }

    /// The next captured period, waiting for it; `nil` once capture has ended and the queue is
    /// drained. Device failures are not thrown here: they end the stream and are in
    /// ``AudioCapture/failure``.
    public mutating func next() throws(ALSAError) -> PCMBuffer? {
        while pendingIndex == pending.count {
            guard let batch = capture.nextBatch() else { return nil }
            pending = batch
            pendingIndex = 0
        }
        let sample = pending[pendingIndex]
        pendingIndex += 1
        let format = capture.configuration.pcmFormat
        let buffer = PCMBuffer(format: format, bytes: sample.data, presentationTime: sample.presentationTime)
        framesDelivered += Int64(buffer.frameCount)
        return buffer
    }

    /// Seconds delivered, out of the frame limit when there is one.
    public var progress: MediaProgress {
        let rate = Double(max(capture.configuration.sampleRate, 1))
        return MediaProgress(mediaSeconds: Double(framesDelivered) / rate, totalSeconds: capture.frameLimit.map { Double($0) / rate })
    }
}

/// An ALSA playback device as a ``/MediaCore/PCMSink``: the device is opened with the first
/// buffer's layout (a decoder's output is known only then), its buffer paces the writer, and
/// ``finish()`` drains it, so everything written has been heard when it returns.
public struct AudioPlayerSink: PCMSink {
    /// The ALSA PCM name.
    public let device: String
    /// Where ``device`` is looked up instead of the system configuration.
    public let alsaConfiguration: ALSAConfiguration?
    /// The player, once the first buffer has opened it.
    public private(set) var player: AudioPlayer?
    /// Frames written.
    public private(set) var framesWritten: Int64 = 0

    /// A sink that plays on `device`.
    public init(device: String = "default", alsaConfiguration: ALSAConfiguration? = nil) {
        self.device = device
        self.alsaConfiguration = alsaConfiguration
    }

    /// Plays a buffer, opening the device with the first.
    ///
    /// - Throws: the errors of ``AudioPlayer``; ``ALSAError/invalidState(_:)`` when a buffer's
    ///   layout differs from the first's.
    public mutating func write(_ buffer: PCMBuffer) throws(ALSAError) {
        guard !buffer.bytes.isEmpty else { return }
        if player == nil { player = try AudioPlayer(format: buffer.format, device: device, alsaConfiguration: alsaConfiguration) }
        guard let player, player.format == buffer.format else {
            throw .invalidState("the stream's format changed mid-way to \(buffer.format.sampleRate) Hz, \(buffer.format.channelCount) ch")
        }
        try player.write(bytes: buffer.bytes)
        framesWritten += Int64(buffer.frameCount)
    }

    /// Waits until the device has played everything written.
    public mutating func finish() throws(ALSAError) {
        try player?.drain()
    }

    /// Stops without draining (what was written may be cut short).
    public mutating func cancel() {
        player = nil
    }
}
