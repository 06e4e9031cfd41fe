public import AudioIO
internal import Synchronization

/// Records AAC-LC from an ALSA device: capture and encode in one object, the AudioQueue
/// recorder of seed 004 (`AudioQueueNewInput` with `kAudioFormatMPEG4AAC`), with ALSA and
/// libavcodec in place of the AudioQueue.
///
/// Like the seed, it hands out AAC packets and the *magic cookie*: ``magicCookie`` is the
/// ES_Descriptor (ISO/IEC 14496-1, 7.2.6.5) that Core Audio's cookie holds and an `esds` box
/// carries; ``audioSpecificConfig`` is the AudioSpecificConfig inside it (ISO/IEC 14496-3,
/// 1.6.2.1). Both are known at `init`, before any audio.
///
/// The capture thread (an ``AudioCapture``) never waits on encoding: it queues each period,
/// and a delivery thread encodes it and calls `onPackets`. Each packet's presentation time is
/// on the capture's monotonic clock (``AudioCapture``), less the encoder's priming. ``stop()``
/// flushes the encoder, so the last packets arrive before it returns.
public final class AACRecorder: Sendable {
    /// What a recorder did, from ``stop()``.
    public struct Summary: Sendable, Hashable {
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
    }

    /// The capture format.
    public let configuration: AudioConfiguration
    /// The target bitrate in bits per second.
    public let bitrate: Int
    /// The encoder's scale-factor search.
    public let coder: AACEncoder.Coder
    /// The stream's AudioSpecificConfig (ISO/IEC 14496-3, 1.6.2.1).
    public let audioSpecificConfig: AudioSpecificConfig
    /// The magic cookie: an ES_Descriptor (ISO/IEC 14496-1, 7.2.6.5) holding
    /// ``audioSpecificConfig``, as `kAudioQueueProperty_MagicCookie` gives it and as an `esds`
    /// box stores it after its version and flags.
    public let magicCookie: [UInt8]
    /// The encoder's priming in samples (1024 for libavcodec's AAC encoder).
    public let priming: Int

    private let capture: AudioCapture
    private let encoding: EncodingState
    private let onPackets: @Sendable ([MediaSample]) -> Void


    /// A recorder that has not started: the encoder is opened now, so an unsupported rate,
    /// channel count or bitrate is an error here.
    ///
    /// - Parameters:
    ///   - coder: the encoder's scale-factor search; ``AACEncoder/Coder/fast`` by default, which
    ///     halves the encoder's CPU, the larger part of a live recording's cost.
    ///   - device: the ALSA PCM name (`"default"`, `"pulse"`, `"hw:1,0"`, …).
    ///   - periodFrames: frames per capture period; default 20 ms.
    ///   - queueCapacity: periods encoding may fall behind before capture drops them (counted
    ///     in ``AudioCapture/Statistics/consumerOverruns``).
    ///   - deliveryBatch: periods encoded in a row (see ``AudioCapture``); default 5 (100 ms
    ///     at the default period): fewer wake-ups, and the encoder's tables stay in cache.
    ///   - frameLimit: capture exactly this many frames, then end on its own.
    ///   - alsaConfiguration: where to look `device` up instead of the system configuration.
    ///   - onPCM: sees each captured period before it is encoded (a level meter, a tap).
    ///   - onPackets: the packets each period completes, in order, on the delivery thread.
    ///   - onEncodingFailure: encoding failed (once; nothing more is encoded, see
    ///     ``encodingFailure``), on the delivery thread.
    ///   - onEnd: the capture thread ended (frame limit, device failure, or stop).
    public init(
        configuration: AudioConfiguration,
        bitrate: Int = 128_000,
        coder: AACEncoder.Coder = .fast,
        device: String = "default",
        periodFrames: Int? = nil,
        queueCapacity: Int = 100,
        deliveryBatch: Int = 5,
        frameLimit: Int? = nil,
        alsaConfiguration: ALSAConfiguration? = nil,
        onPCM: (@Sendable (MediaSample) -> Void)? = nil,
        onPackets: @escaping @Sendable ([MediaSample]) -> Void,
        onEncodingFailure: (@Sendable (CodecError) -> Void)? = nil,
        onEnd: (@Sendable (AudioCapture.Ending) -> Void)? = nil
    ) throws(PipelineError) {
        let encoder: AACEncoder
        do { encoder = try AACEncoder(format: configuration.pcmFormat, bitrate: bitrate, coder: coder) } catch { throw .codec(error) }
        guard let config = encoder.audioSpecificConfig else { throw .unsupported("the encoder gave no AudioSpecificConfig") }
        do {
            magicCookie = try ESDescriptor(audioSpecificConfig: config, averageBitrate: UInt32(clamping: bitrate)).serialized()
        } catch {
            throw .bitstream(error)
        }
        self.configuration = configuration
        self.bitrate = bitrate
        self.coder = coder
        self.audioSpecificConfig = config
        self.priming = encoder.priming
        self.onPackets = onPackets
        let encoding = EncodingState(encoder)
        self.encoding = encoding
        capture = AudioCapture(
            configuration: configuration, device: device, periodFrames: periodFrames, queueCapacity: queueCapacity,
            deliveryBatch: deliveryBatch, frameLimit: frameLimit, alsaConfiguration: alsaConfiguration,
            onSample: { sample in
                onPCM?(sample)
                let result: Result<[MediaSample], CodecError> = encoding.lock.withLock { state in
                    guard state.failure == nil, !state.stopped else { return .success([]) }
                    do throws(CodecError) { return .success(try state.encoder.encode(sample)) } catch {
                        state.failure = error
                        return .failure(error)
                    }
                }
                switch result {
                case .success(let packets): if !packets.isEmpty { onPackets(packets) }
                case .failure(let error): onEncodingFailure?(error)
                }
            },
            onEnd: onEnd
        )
    }

    /// The ALSA PCM name.
    public var device: String { capture.device }
    /// What the device granted, once started.
    public var parameters: PCMDevice.Parameters? { capture.parameters }
    /// The capture's counters so far.
    public var statistics: AudioCapture.Statistics { capture.statistics }
    /// The first encoding error, if one happened (encoding stops there; capture goes on until
    /// ``stop()``).
    public var encodingFailure: CodecError? { encoding.lock.withLock { $0.failure } }

    /// Opens and configures the device without capturing yet (see ``AudioCapture/open()``);
    /// ``start()`` does it when this was not called.
    ///
    /// - Throws: ``PipelineError/audioDevice(_:)`` for a missing or busy device or an
    ///   unsupported format.
    public func open() throws(PipelineError) {
        do { try capture.open() } catch { throw .audioDevice(error) }
    }

    /// Starts capturing and encoding, opening the device first if ``open()`` was not called.
    ///
    /// - Throws: ``PipelineError/audioDevice(_:)`` for a missing or busy device or an
    ///   unsupported format.
    public func start() throws(PipelineError) {
        do { try capture.start() } catch { throw .audioDevice(error) }
    }

    /// Stops capturing, encodes what was queued, flushes the encoder (its last packets go to
    /// `onPackets` before this returns) and says what was recorded. Call once.
    ///
    /// - Throws: ``PipelineError/codec(_:)`` if encoding failed at any point.
    public func stop() throws(PipelineError) -> Summary {
        capture.stop()
        let flushed: Result<(packets: [MediaSample], frames: Int64, count: Int64, padding: Int), CodecError> = encoding.lock.withLock { state in
            if let failure = state.failure { return .failure(failure) }
            state.stopped = true
            let encoder = state.encoder
            do throws(CodecError) {
                let last = try encoder.flush()
                return .success((last, encoder.inputFrameCount, encoder.packetCount, encoder.padding ?? 0))
            } catch {
                state.failure = error
                return .failure(error)
            }
        }
        let result: (packets: [MediaSample], frames: Int64, count: Int64, padding: Int)
        do { result = try flushed.get() } catch { throw .codec(error) }
        if !result.packets.isEmpty { onPackets(result.packets) }
        return Summary(frames: result.frames, packets: result.count, priming: priming, padding: result.padding,
                       capture: capture.statistics, captureFailure: capture.failure)
    }
}

/// The recorder's encoder and what went wrong in it, under one lock: used on the delivery
/// thread, then by ``AACRecorder/stop()`` (libavcodec's context takes one thread at a time).
private final class EncodingState: Sendable {
    struct Encoding {
        let encoder: AACEncoder
        var failure: CodecError?
        var stopped = false
    }

    let lock: Mutex<Encoding>

    init(_ encoder: sending AACEncoder) {
        lock = Mutex(Encoding(encoder: encoder))
    }
}
