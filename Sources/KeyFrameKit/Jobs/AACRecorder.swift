public import AudioIO

/// Records AAC-LC (ISO/IEC 14496-3, object type 2) from an ALSA device: capture and encode in
/// one object, handing out raw AAC packets as they are encoded (what `AudioQueueNewInput`
/// with `kAudioFormatMPEG4AAC` does on Apple's platforms, with ALSA and libavcodec).
///
/// Next to the packets it gives the *magic cookie*: ``magicCookie`` is the
/// ES_Descriptor (ISO/IEC 14496-1, 7.2.6.5) that Core Audio's cookie holds and an `esds` box
/// carries; ``audioSpecificConfig`` is the AudioSpecificConfig inside it (ISO/IEC 14496-3,
/// 1.6.2.1). Both are known at `init`, before any audio.
///
/// A thin wrapper over ``LiveEncoding``: the registry's AAC-LC encoder
/// (``/AudioCodec/AudioCodecRegistry``, libavcodec's ``/AudioCodec/AACEncoder``) → a
/// ``/MediaCore/CallbackSink`` calling `onPackets`. Use ``LiveEncoding`` with a `CallbackSink`
/// branch: any codec, any other sinks beside it. ``stop()`` flushes the encoder, so the last
/// packets arrive before it returns.
///
/// `Sendable` because ``LiveEncoding`` is.
@available(*, deprecated, message: "use LiveEncoding with a CallbackSink branch")
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

    /// What a recorder did, from ``stop()``: ``LiveEncoding/Summary``.
    public typealias Summary = LiveEncoding.Summary

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

    /// The graph: capture → encoder → callback.
    public let live: LiveEncoding
    /// The lifecycle (``LiveCaptureJob``): the same as every live job's.
    public var job: LiveCaptureJob { live.job }

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
        live = try LiveEncoding(
            capture: LiveEncoding.Capture(audio: configuration.audio, device: configuration.device, alsaConfiguration: configuration.alsaConfiguration,
                                          periodFrames: configuration.periodFrames, queueCapacity: configuration.queueCapacity,
                                          deliveryBatch: configuration.deliveryBatch, frameLimit: configuration.frameLimit),
            encoder: encoder, sinks: [Tee.Branch(CallbackSink<MediaSample> { packet in onPackets([packet]) }, name: "callback")],
            onPCM: onPCM,
            onFailure: { error in if let codecError = error.underlying(as: CodecError.self) { onEncodingFailure?(codecError) } },
            onEnd: onEnd)
    }

    /// The ALSA PCM name.
    public var device: String { live.device }
    /// What the device granted, once started.
    public var parameters: PCMDevice.Parameters? { live.parameters }
    /// The capture's counters so far.
    public var statistics: AudioCapture.Statistics { live.statistics }

    /// Opens and configures the device without capturing yet (see
    /// ``/AudioIO/AudioCapture/open()``); ``start()`` does it when this was not called.
    ///
    /// - Throws: `PipelineError.audioDevice` for a missing or busy device or an
    ///   unsupported format.
    public func open() throws(PipelineError) { try live.open() }

    /// Starts capturing and encoding, opening the device first if ``open()`` was not called.
    /// Starts once.
    ///
    /// - Throws: `PipelineError.audioDevice` for a missing or busy device or an
    ///   unsupported format.
    public func start() throws(PipelineError) { try live.start() }

    /// Stops capturing, encodes what was queued, flushes the encoder (its last packets go to
    /// `onPackets` before this returns) and says what was recorded. Call once, after
    /// ``start()``.
    ///
    /// - Throws: `PipelineError.codec` if encoding failed at any point.
    public func stop() throws(PipelineError) -> Summary { try live.finish() }

    /// Captures and encodes until the frame limit, a device failure or a stop request (a
    /// cancelled task makes one), then stops as ``stop()`` does: for `async` callers.
    ///
    /// - Throws: the errors of ``start()`` and ``stop()``.
    public func run() async throws(PipelineError) -> Summary { try await live.run() }
}
