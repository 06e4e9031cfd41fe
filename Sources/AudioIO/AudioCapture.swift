internal import CALSA
public import MediaCore
internal import Synchronization

/// Records PCM from an ALSA device (what an `AudioQueue` input does on Apple's platforms).
///
/// ``start()`` opens and configures the device (so a missing or busy device, or an unsupported
/// rate or format, is an error there) and starts a dedicated capture thread. That thread only
/// reads periods and hands them on without waiting: to the `onSample` callback through a bounded
/// queue and a delivery thread, or, without a callback, to ``samples``. When the consumer falls
/// behind, the newest periods are dropped and counted in ``Statistics/consumerOverruns``,
/// separately from the device's own xruns.
///
/// Each ``/MediaCore/MediaSample`` holds one period of interleaved PCM in
/// ``/MediaCore/AudioConfiguration/pcmFormat``.
/// Its presentation time, in units of the sample rate, is `CLOCK_MONOTONIC` at the return of the
/// read minus the period's duration and minus the frames still waiting in the device (so a late
/// wake-up of the capture thread does not make the stamps late; `KFAudioCapture` uses host time
/// the same way), but never earlier than the end of the previous period, so samples never overlap; a
/// device xrun shows as a gap, and its length is counted in ``Statistics/lostFrames``.
///
/// `Sendable` because it is synchronized: its settings are immutable, and the state the capture
/// thread shares (device parameters, counters, the stop request) is behind a mutex and atomics,
/// so ``stop()`` may be called from any thread.
public final class AudioCapture: Sendable {
    /// Counters since ``start()``.
    public struct Statistics: Sendable, Hashable {
        /// Periods read from the device.
        public var periods = 0
        /// Frames read from the device (delivered or dropped; up to the frame limit).
        public var frames = 0
        /// Device overruns (the capture thread did not read in time; frames lost in ALSA).
        public var deviceXruns = 0
        /// Frames lost to device overruns and suspends: the monotonic clock's advance beyond the
        /// frames read, measured across each read that had to recover.
        public var lostFrames = 0
        /// System suspends recovered from.
        public var deviceSuspends = 0
        /// Periods dropped because the consumer had not taken the earlier ones.
        public var consumerOverruns = 0
    }

    /// Why the capture thread ended.
    public enum Ending: Sendable, Hashable {
        /// ``stop()`` was called.
        case stopped
        /// The frame limit given at `init` was reached.
        case frameLimitReached
        /// The device failed (unplugged, an unrecoverable error); see ``failure``.
        case failed(ALSAError)
    }

    /// The capture format.
    public let configuration: AudioConfiguration
    /// The ALSA PCM name.
    public let device: String
    /// Frames after which capture ends on its own (the last period is cut to fit), if any.
    public let frameLimit: Int?
    /// Samples as they are captured, when no `onSample` callback was given; finishes at ``stop()``,
    /// at the frame limit, or when capture fails (see ``failure``).
    public let samples: AsyncStream<MediaSample>

    private let requestedPeriodFrames: Int
    private let periodCount: Int
    private let queueCapacity: Int
    private let deliveryBatch: Int
    private let alsaConfiguration: ALSAConfiguration?
    private let onSample: (@Sendable (MediaSample) -> Void)?
    /// Whether the consumer pulls samples with ``nextBatch()`` (see ``AudioCaptureSource``).
    private let isPulled: Bool
    /// What the capture thread shares with this object. The thread holds this, never the
    /// capture itself, so dropping the last reference to an ``AudioCapture`` stops it.
    private let state: CaptureState

    /// A capture that has not started.
    ///
    /// - Parameters:
    ///   - configuration: the sample rate and channel count to capture (16-bit interleaved).
    ///   - device: the ALSA PCM name; `"default"` is the system's default input.
    ///   - periodFrames: frames per delivered sample; default 20 ms. The device may round it.
    ///   - periodCount: periods in the device's buffer (how long the capture thread may stall).
    ///   - queueCapacity: periods the consumer may fall behind before periods are dropped.
    ///   - deliveryBatch: periods `onSample` gets in a row, once that many are queued (or the
    ///     oldest has waited 200 ms): an encoder wakes less often and runs with a warm cache.
    ///     1 (the default) delivers each period as soon as it is read.
    ///   - frameLimit: capture exactly this many frames, then end (``Ending/frameLimitReached``).
    ///   - alsaConfiguration: where to look `device` up instead of the system configuration.
    ///   - onSample: called on a delivery thread for each sample; `nil` to use ``samples``.
    ///   - onEnd: called once on the capture thread when it ends, for any reason; samples
    ///     already queued may still be in delivery (``stop()`` waits for them).
    public convenience init(
        configuration: AudioConfiguration,
        device: String = "default",
        periodFrames: Int? = nil,
        periodCount: Int = 4,
        queueCapacity: Int = 64,
        deliveryBatch: Int = 1,
        frameLimit: Int? = nil,
        alsaConfiguration: ALSAConfiguration? = nil,
        onSample: (@Sendable (MediaSample) -> Void)? = nil,
        onEnd: (@Sendable (Ending) -> Void)? = nil
    ) {
        self.init(configuration: configuration, device: device, periodFrames: periodFrames, periodCount: periodCount,
                  queueCapacity: queueCapacity, deliveryBatch: deliveryBatch, frameLimit: frameLimit,
                  alsaConfiguration: alsaConfiguration, onSample: onSample, isPulled: false, onEnd: onEnd)
    }

    /// A capture whose consumer pulls batches with ``nextBatch()`` on a thread of its own.
    init(
        configuration: AudioConfiguration, device: String, periodFrames: Int?, periodCount: Int, queueCapacity: Int,
        deliveryBatch: Int, frameLimit: Int?, alsaConfiguration: ALSAConfiguration?,
        onSample: (@Sendable (MediaSample) -> Void)?, isPulled: Bool, onEnd: (@Sendable (Ending) -> Void)?
    ) {
        self.isPulled = isPulled
        self.configuration = configuration
        self.device = device
        self.requestedPeriodFrames = periodFrames ?? configuration.sampleRate / 50
        self.periodCount = periodCount
        self.queueCapacity = max(1, queueCapacity)
        self.deliveryBatch = max(1, deliveryBatch)
        self.frameLimit = frameLimit.map { max(0, $0) }
        self.alsaConfiguration = alsaConfiguration
        self.onSample = onSample
        let (samples, continuation) = AsyncStream.makeStream(of: MediaSample.self,
                                                             bufferingPolicy: .bufferingOldest(max(1, queueCapacity)))
        self.samples = samples
        let state = CaptureState(continuation: continuation, onEnd: onEnd)
        self.state = state
        // A consumer that stops iterating ``samples`` stops the capture thread too.
        continuation.onTermination = { _ in state.stopRequested.store(true, ordering: .releasing) }
    }

    deinit {
        stop()
    }

    /// What the device granted (period and buffer size), once started.
    public var parameters: PCMDevice.Parameters? { state.shared.withLock { $0.parameters } }
    /// Counters so far.
    public var statistics: Statistics { state.shared.withLock { $0.statistics } }
    /// The error that ended capture early, if one did.
    public var failure: ALSAError? { state.shared.withLock { $0.failure } }

    /// Opens and configures the device without capturing yet, so that a missing or busy device
    /// or an unsupported format is known before anything else is set up (a recording opens its
    /// file only after this). ``start()`` calls it when it was not called. Opens once.
    ///
    /// - Throws: ``ALSAError/deviceNotFound(_:)``, ``ALSAError/deviceBusy(_:)``,
    ///   ``ALSAError/unsupportedSampleRate(device:requested:nearest:)``, … or
    ///   ``ALSAError/invalidState(_:)`` when already opened.
    public func open() throws(ALSAError) {
        let alreadyOpened = state.shared.withLock { shared in
            defer { shared.opened = true }
            return shared.opened
        }
        guard !alreadyOpened else { throw .invalidState("AudioCapture on '\(device)' was already opened") }
        let pcm = try PCMDevice(name: device, direction: .capture, configuration: alsaConfiguration)
        let granted = try pcm.configure(format: configuration.pcmFormat, periodFrames: requestedPeriodFrames, periodCount: periodCount)
        let owned = Transfer(pcm)
        state.shared.withLock { shared in
            shared.parameters = granted
            shared.device = owned
        }
    }

    /// Starts capturing, opening the device first if ``open()`` was not called. A capture
    /// starts once.
    ///
    /// - Throws: the errors of ``open()``, or ``ALSAError/invalidState(_:)`` when already started.
    public func start() throws(ALSAError) {
        let (alreadyStarted, opened) = state.shared.withLock { shared in
            defer { shared.started = true }
            return (shared.started, shared.opened)
        }
        guard !alreadyStarted else { throw .invalidState("AudioCapture on '\(device)' was already started") }
        if !opened { try open() }
        guard let (owned, granted) = state.shared.withLock({ shared in
            zip(shared.device, shared.parameters)
        }) else { throw .invalidState("AudioCapture on '\(device)' has no open device") }
        let queue = onSample != nil || isPulled ? SampleQueue(capacity: queueCapacity, batchSize: deliveryBatch) : nil
        let deliveryThread = zip(queue, onSample).map { queue, onSample in
            JoinableThread {
                while let batch = queue.takeBatch() {
                    for sample in batch { onSample(sample) }
                }
            }
        }
        let state = self.state
        let frameLimit = self.frameLimit
        let captureThread = JoinableThread {
            state.capture(owned.take(), parameters: granted, queue: queue, frameLimit: frameLimit)
        }
        state.shared.withLock { shared in
            shared.queue = queue
            shared.deliveryThread = deliveryThread
            shared.captureThread = captureThread
        }
    }

    /// The next batch of captured periods, oldest first, for a capture made to be pulled
    /// (``AudioCaptureSource``): waits until a batch is ready, and returns `nil` once capture has
    /// ended and everything queued was taken.
    func nextBatch() -> [MediaSample]? {
        guard let queue = state.shared.withLock({ $0.queue }) else { return nil }
        return queue.takeBatch()
    }

    /// Stops capturing and waits for the capture thread to end (within a period, or 100 ms on a
    /// stalled device); delivers what was already queued, then finishes ``samples``. Safe to
    /// call more than once and from several threads (a second caller returns once capture has
    /// stopped), but not from the capture's own threads (`onSample`, `onEnd`).
    public func stop() {
        state.stopRequested.store(true, ordering: .releasing)
        state.stopping.withLock { _ in
            let (captureThread, deliveryThread, queue) = state.shared.withLock { shared in
                defer { (shared.captureThread, shared.deliveryThread) = (nil, nil) }
                return (shared.captureThread, shared.deliveryThread, shared.queue)
            }
            captureThread?.join()
            queue?.close()
            deliveryThread?.join()
            state.continuation.finish()
            // A device opened and never started is closed here (a started one is the capture
            // thread's, which closes it when it ends).
            state.shared.withLock { $0.device = nil }
        }
    }
}

/// The part of an ``AudioCapture`` its capture thread uses.
private final class CaptureState: Sendable {
    struct Shared {
        var opened = false
        var started = false
        var device: Transfer<PCMDevice>?
        var parameters: PCMDevice.Parameters?
        var statistics = AudioCapture.Statistics()
        var failure: ALSAError?
        var captureThread: JoinableThread?
        var deliveryThread: JoinableThread?
        var queue: SampleQueue?
    }

    let stopRequested = Atomic<Bool>(false)
    let shared = Mutex(Shared())
    /// Held for the whole of ``AudioCapture/stop()``, so that a second caller waits for the first.
    let stopping = Mutex(())
    let continuation: AsyncStream<MediaSample>.Continuation
    let onEnd: (@Sendable (AudioCapture.Ending) -> Void)?

    init(continuation: AsyncStream<MediaSample>.Continuation, onEnd: (@Sendable (AudioCapture.Ending) -> Void)?) {
        self.continuation = continuation
        self.onEnd = onEnd
    }

    /// The capture thread: reads periods until stopped, at the frame limit, or failed; never
    /// waits on the consumer.
    func capture(_ pcm: PCMDevice, parameters: PCMDevice.Parameters, queue: SampleQueue?, frameLimit: Int?) {
        let format = FormatDescription.pcm(parameters.format)
        let rate = parameters.format.sampleRate
        let frameBytes = parameters.format.bytesPerFrame
        let periodFrames = parameters.periodFrames
        let timescale = Int32(clamping: rate)
        var nextPTS = Int64.min
        var captured = 0
        var ending = AudioCapture.Ending.stopped
        while !stopRequested.load(ordering: .acquiring) {
            let wanted = frameLimit.map { min(periodFrames, $0 - captured) } ?? periodFrames
            guard wanted > 0 else {
                ending = .frameLimitReached
                break
            }
            let recoveriesBefore = pcm.xrunCount + pcm.suspendCount
            var bytes = [UInt8](repeating: 0, count: wanted * frameBytes)
            let result = bytes.withUnsafeMutableBytes { buffer in
                Result { () throws(ALSAError) in
                    try pcm.read(into: buffer) { self.stopRequested.load(ordering: .acquiring) }
                }
            }
            let now = kf_alsa_monotonic_nanoseconds()
            // Frames still in the device were captured after the ones just read.
            let buffered = pcm.bufferedFrames()
            let frames: Int
            do {
                frames = try result.get()
            } catch {
                shared.withLock { $0.failure = error }
                ending = .failed(error)
                break
            }
            guard frames > 0 else { break }
            if frames < wanted { bytes.removeLast((wanted - frames) * frameBytes) }
            captured += frames
            let clockPTS = Int64(Int128(now) * Int128(rate) / 1_000_000_000) - Int64(frames) - Int64(buffered)
            let recovered = pcm.xrunCount + pcm.suspendCount > recoveriesBefore
            let lost = recovered && nextPTS != .min ? max(0, clockPTS - nextPTS) : 0
            let pts = max(clockPTS, nextPTS)
            nextPTS = pts + Int64(frames)
            let sample = MediaSample(
                data: bytes,
                presentationTime: MediaTime(value: pts, timescale: timescale),
                duration: MediaTime(value: Int64(frames), timescale: timescale),
                format: format
            )
            let delivered = if let queue {
                queue.offer(sample)
            } else {
                switch continuation.yield(sample) {
                case .dropped: false
                default: true
                }
            }
            shared.withLock { shared in
                shared.statistics.periods += 1
                shared.statistics.frames += frames
                shared.statistics.deviceXruns = pcm.xrunCount
                shared.statistics.deviceSuspends = pcm.suspendCount
                shared.statistics.lostFrames += Int(lost)
                if !delivered { shared.statistics.consumerOverruns += 1 }
            }
        }
        // Stopping and closing may wait on the device (PulseAudio's plugin waits for the server);
        // a stalled one must not hold up stop(), so that happens on a thread of its own.
        let closing = Transfer(pcm)
        JoinableThread.detached {
            let device = closing.take()
            try? device.drop()
        }
        // The stream ends where capture ends (its frame limit, a device failure): a consumer
        // pulling from the queue gets what is left, then the end, without waiting for stop().
        queue?.close()
        if queue == nil { continuation.finish() }
        onEnd?(ending)
    }
}

private func zip<A, B>(_ a: A?, _ b: B?) -> (A, B)? {
    guard let a, let b else { return nil }
    return (a, b)
}
