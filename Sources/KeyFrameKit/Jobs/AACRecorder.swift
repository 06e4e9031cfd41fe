public import AudioIO
internal import Synchronization

/// Records AAC-LC (ISO/IEC 14496-3, object type 2) from an ALSA device: capture and encode in
/// one object, handing out raw AAC packets as they are encoded (what `AudioQueueNewInput`
/// with `kAudioFormatMPEG4AAC` does on Apple's platforms, with ALSA and libavcodec).
///
/// Next to the packets it gives the *magic cookie*: ``magicCookie`` is the
/// ES_Descriptor (ISO/IEC 14496-1, 7.2.6.5) that Core Audio's cookie holds and an `esds` box
/// carries; ``audioSpecificConfig`` is the AudioSpecificConfig inside it (ISO/IEC 14496-3,
/// 1.6.2.1). Both are known at `init`, before any audio.
///
/// Composition: ``/AudioIO/AudioCaptureSource`` → the registry's AAC-LC encoder
/// (``/AudioCodec/AudioCodecRegistry``, libavcodec's ``/AudioCodec/AACEncoder``) → a ``/MediaCore/CallbackSink``
/// calling `onPackets`, pumped on a thread of its own, so the capture thread never waits on
/// encoding. Each packet's presentation time is on the capture's monotonic clock, less the
/// encoder's priming. ``stop()`` flushes the encoder, so the last packets arrive before it returns.
///
/// `Sendable` because it is synchronized: its public properties are immutable, and the pipeline
/// and the running pump are behind a mutex, so ``start()`` and ``stop()`` may be called from any
/// thread.
public final class AACRecorder: Sendable {
    /// What to record and how to encode it.
    public struct Configuration: Sendable {
        /// The capture format (rate, channels, bit depth).
        public var audio: AudioConfiguration
        /// The target bitrate in bits per second.
        public var bitrate: Int
        /// The encoder's scale-factor search; ``/AudioCodec/AACEncoder/Coder/fast`` by default,
        /// which halves the encoder's CPU, the larger part of a live recording's cost.
        public var coder: AACEncoder.Coder
        /// The ALSA PCM name (`"default"`, `"pulse"`, `"hw:1,0"`, …).
        public var device: String
        /// Where to look ``device`` up instead of the system configuration.
        public var alsaConfiguration: ALSAConfiguration?
        /// Frames per capture period; default 20 ms.
        public var periodFrames: Int?
        /// Periods encoding may fall behind before capture drops them (counted in
        /// ``/AudioIO/AudioCapture/Statistics/consumerOverruns``).
        public var queueCapacity: Int
        /// Periods encoded in a row; default 5 (100 ms at the default period): fewer wake-ups,
        /// and the encoder's tables stay in cache.
        public var deliveryBatch: Int
        /// Capture exactly this many frames, then end on its own; `nil` for no limit.
        public var frameLimit: Int?

        /// A configuration; by default 44.1 kHz stereo from `default` at 128 kb/s.
        public init(audio: AudioConfiguration = .default, bitrate: Int = 128_000, coder: AACEncoder.Coder = .fast,
                    device: String = "default", alsaConfiguration: ALSAConfiguration? = nil, periodFrames: Int? = nil,
                    queueCapacity: Int = 100, deliveryBatch: Int = 5, frameLimit: Int? = nil) {
            self.audio = audio
            self.bitrate = bitrate
            self.coder = coder
            self.device = device
            self.alsaConfiguration = alsaConfiguration
            self.periodFrames = periodFrames
            self.queueCapacity = queueCapacity
            self.deliveryBatch = deliveryBatch
            self.frameLimit = frameLimit
        }
    }

    /// What a recorder did, from ``stop()``.
    public struct Summary: JobSummary, Sendable, Hashable {
        /// PCM frames captured and encoded.
        public var frames: Int64
        /// AAC packets delivered.
        public var packets: Int64
        /// The encoder's priming (samples before the first captured one in the decoded output).
        public var priming: Int
        /// Samples after the last captured one in the decoded output.
        public var padding: Int
        /// The capture's counters.
        public var capture: AudioCapture.Statistics
        /// The error that ended capture early, if one did.
        public var captureFailure: ALSAError?
        /// What the pump did, stage by stage: the capture, the encoder, the callback.
        public var report: JobReport
    }

    /// What the recorder was made with.
    public let configuration: Configuration
    /// The stream's AudioSpecificConfig (ISO/IEC 14496-3, 1.6.2.1).
    public let audioSpecificConfig: AudioSpecificConfig
    /// The magic cookie: an ES_Descriptor (ISO/IEC 14496-1, 7.2.6.5) holding
    /// ``audioSpecificConfig``, as `kAudioQueueProperty_MagicCookie` gives it and as an `esds`
    /// box stores it after its version and flags.
    public let magicCookie: [UInt8]
    /// The encoder's priming in samples (1024 for libavcodec's AAC encoder).
    public let priming: Int

    private let capture: AudioCapture
    /// The lifecycle (``LiveCaptureJob``): the same as a ``Recording``'s.
    public let job = LiveCaptureJob()
    /// The pipeline until ``start()`` takes it.
    private let pending: Mutex<Transfer<() -> PumpThread>?>

    /// The pipeline before ``start()`` and the running pump after it.
    private struct Parts: ~Copyable {
        var pending: Transfer<() -> PumpThread>?
        var pump: PumpThread?
    }
    /// What the packets' stream said: counted and told by the sink, on the pump thread.
    private let tally: StreamTally

    /// A recorder that has not started: the encoder is opened now, so an unsupported rate,
    /// channel count or bitrate is an error here.
    ///
    /// - Parameters:
    ///   - configuration: the device, capture format and encoder settings.
    ///   - onPCM: sees each captured period before it is encoded (a level meter, a tap).
    ///   - onPackets: the packets, in order, on the recorder's pump thread.
    ///   - onEncodingFailure: encoding failed (once; nothing more is encoded), on that thread.
    ///   - onEnd: the capture thread ended (frame limit, device failure, or stop).
    public init(
        _ configuration: Configuration,
        onPCM: (@Sendable (PCMBuffer) -> Void)? = nil,
        onPackets: @escaping @Sendable ([MediaSample]) -> Void,
        onEncodingFailure: (@Sendable (CodecError) -> Void)? = nil,
        onEnd: (@Sendable (AudioCapture.Ending) -> Void)? = nil
    ) throws(PipelineError) {
        let encoder: any AudioEncoder
        do {
            encoder = try AudioCodecRegistry.standard.encoder(for: .aac, profile: .aacLC, settings: .init(
                bitrate: configuration.bitrate, format: configuration.audio.pcmFormat, aac: .init(coder: configuration.coder)))
        } catch {
            throw .codec(error)
        }
        guard let config = encoder.audioSpecificConfig else { throw .unsupported("the encoder gave no AudioSpecificConfig") }
        do {
            magicCookie = try ESDescriptor(audioSpecificConfig: config, averageBitrate: UInt32(clamping: configuration.bitrate)).serialized()
        } catch {
            throw .bitstream(error)
        }
        self.configuration = configuration
        audioSpecificConfig = config
        priming = encoder.priming
        let source = AudioCaptureSource(
            configuration: configuration.audio, device: configuration.device, periodFrames: configuration.periodFrames,
            queueCapacity: configuration.queueCapacity, deliveryBatch: configuration.deliveryBatch,
            frameLimit: configuration.frameLimit, alsaConfiguration: configuration.alsaConfiguration,
            onEnd: { [job] ending in
                job.captureEnded(ending)
                onEnd?(ending)
            })
        capture = source.capture
        job.attach(capture)
        let observed = ObservedSource(source) { buffer in onPCM?(buffer) }
        let tally = StreamTally()
        self.tally = tally
        let sink = TalliedSink(CallbackSink<MediaSample> { packet in onPackets([packet]) }, tally: tally)
        let failed = job.failureHandler
        let onFailure: @Sendable (PipelineError) -> Void = { error in
            failed(error)
            if let codecError = error.underlying(as: CodecError.self) { onEncodingFailure?(codecError) }
        }
        pending = Mutex(Transfer(Self.pumpStarter(observed, encoder: encoder, into: sink, onFailure: onFailure)))
    }

    /// What ``start()`` calls to start the pump: `source` → `encoder` → `sink`.
    private static func pumpStarter<Encoder: AudioEncoder>(
        _ source: ObservedSource<AudioCaptureSource>, encoder: Encoder, into sink: TalliedSink<CallbackSink<MediaSample>>,
        onFailure: @escaping @Sendable (PipelineError) -> Void
    ) -> () -> PumpThread {
        let pipeline = source.transformed(by: encoder)
        return { PumpThread(source: pipeline, sink: sink, onFailure: onFailure) }
    }

    /// The ALSA PCM name.
    public var device: String { capture.device }
    /// What the device granted, once started.
    public var parameters: PCMDevice.Parameters? { capture.parameters }
    /// The capture's counters so far.
    public var statistics: AudioCapture.Statistics { capture.statistics }

    /// Opens and configures the device without capturing yet (see
    /// ``/AudioIO/AudioCapture/open()``); ``start()`` does it when this was not called.
    ///
    /// - Throws: `PipelineError.audioDevice` for a missing or busy device or an
    ///   unsupported format.
    public func open() throws(PipelineError) {
        do { try capture.open() } catch { throw .audioDevice(error) }
    }

    /// Starts capturing and encoding, opening the device first if ``open()`` was not called.
    /// Starts once.
    ///
    /// - Throws: `PipelineError.audioDevice` for a missing or busy device or an
    ///   unsupported format.
    public func start() throws(PipelineError) {
        guard let start = pending.withLock({ pending -> Transfer<() -> PumpThread>? in
            defer { pending = nil }
            return pending
        }) else { throw .unsupported("this recorder was already started") }
        try job.start { () throws(PipelineError) -> PumpThread in
            do throws(ALSAError) { try capture.start() } catch { throw .audioDevice(error) }
            return start.take()()
        }
    }

    /// Stops capturing, encodes what was queued, flushes the encoder (its last packets go to
    /// `onPackets` before this returns) and says what was recorded. Call once, after
    /// ``start()``.
    ///
    /// - Throws: `PipelineError.codec` if encoding failed at any point.
    public func stop() throws(PipelineError) -> Summary {
        summary(of: try job.finish())
    }

    /// Captures and encodes until the frame limit, a device failure or a stop request (a
    /// cancelled task makes one), then stops as ``stop()`` does: for `async` callers, with no
    /// thread of Swift's cooperative pool waiting on the device or the pump.
    ///
    /// - Throws: the errors of ``start()`` and ``stop()``.
    public func run() async throws(PipelineError) -> Summary {
        summary(of: try await job.run { () throws(PipelineError) in try self.start() })
    }

    /// What the recorder did, once stopped, and what its pump did.
    private func summary(of report: JobReport) -> Summary {
        let told = tally.snapshot
        return Summary(frames: told.gapless?.validLength ?? 0, packets: told.elements, priming: priming,
                       padding: Int(told.gapless?.padding ?? 0), capture: capture.statistics, captureFailure: capture.failure,
                       report: report)
    }
}
