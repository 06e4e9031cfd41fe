public import AudioIO
internal import Synchronization

/// A live job as a graph: a capture (a source) → an encoder → a ``/MediaCore/Tee`` of packet
/// sinks, pumped on a thread of its own, with the one lifecycle of a live job
/// (``LiveCaptureJob``: start, stop, finish, or `run` for `async` callers).
///
/// ```
/// ALSA ──▶ AudioCaptureSource ──▶ (onPCM) ──▶ encoder ──▶ Tee ─┬─▶ AudioPacketOutput (.m4a)
///          (capture thread)        pump thread                  ├─▶ HLSSegmentOutput (live)
///                                                               └─▶ CallbackSink (your code)
/// ```
///
/// Any encoder a codec registry makes goes in, and any ``/MediaCore/PacketSink`` goes out: a
/// file from ``/MediaFormats/MediaFormatRegistry/packetOutput(_:options:)``, a live HLS
/// rendition, a ``/MediaCore/CallbackSink`` that hands packets to the caller (what
/// ``AACRecorder`` was), or a sink of another package. The encoder's gapless numbers travel
/// down the stream, so every sink learns the priming and, at the end, the exact length.
///
/// ```swift
/// let capture = LiveEncoding.Capture(audio: .default, device: "default", frameLimit: 3 * 44_100)
/// let encoder = try AudioCodecRegistry.standard.encoder(for: .aac, settings: .init(bitrate: 128_000, format: capture.audio.pcmFormat))
/// let file = try MediaFormatRegistry.standard.packetOutput("take.m4a")
/// let live = try LiveEncoding(capture: capture, encoder: encoder, sinks: [
///     Tee.Branch(file, name: "file"),
///     Tee.Branch(CallbackSink<MediaSample> { packet in send(packet) }, name: "network"),
/// ])
/// let summary = try await live.run()
/// ```
///
/// `Sendable` because it is synchronized: its public properties are immutable, and the
/// pipeline until ``start()`` is behind a mutex.
public final class LiveEncoding: Sendable {
    /// What to capture, and how the capture hands periods to the pump.
    public struct Capture: Sendable {
        /// The capture format (rate, channels, bit depth).
        public var audio: AudioConfiguration
        /// The ALSA PCM name (`"default"`, `"pulse"`, `"hw:1,0"`, …).
        public var device: String
        /// Where to look ``device`` up instead of the system configuration.
        public var alsaConfiguration: ALSAConfiguration?
        /// Frames per capture period; `nil`: 20 ms.
        public var periodFrames: Int?
        /// Periods encoding may fall behind before capture drops them (counted in
        /// ``/AudioIO/AudioCapture/Statistics/consumerOverruns``).
        public var queueCapacity: Int
        /// Periods encoded in a row: fewer wake-ups, and the encoder's tables stay in cache.
        public var deliveryBatch: Int
        /// Capture exactly this many frames, then end on its own; `nil` for no limit.
        public var frameLimit: Int?

        /// A capture; by default 44.1 kHz stereo from `default`, 100 periods of queue, 5 at a time.
        public init(audio: AudioConfiguration = .default, device: String = "default", alsaConfiguration: ALSAConfiguration? = nil,
                    periodFrames: Int? = nil, queueCapacity: Int = 100, deliveryBatch: Int = 5, frameLimit: Int? = nil) {
            self.audio = audio
            self.device = device
            self.alsaConfiguration = alsaConfiguration
            self.periodFrames = periodFrames
            self.queueCapacity = queueCapacity
            self.deliveryBatch = deliveryBatch
            self.frameLimit = frameLimit
        }
    }

    /// What a live encoding did, from ``finish()``.
    public struct Summary: JobSummary, Sendable, Hashable {
        /// PCM frames captured and encoded.
        public var frames: Int64
        /// Packets the sinks were given.
        public var packets: Int64
        /// The encoder's priming (samples before the first captured one in the decoded output).
        public var priming: Int
        /// Samples after the last captured one in the decoded output.
        public var padding: Int
        /// The capture's counters.
        public var capture: AudioCapture.Statistics
        /// The error that ended capture early, if one did.
        public var captureFailure: ALSAError?
        /// What the pump did, stage by stage: the capture, the encoder, each sink.
        public var report: JobReport
    }

    /// What is captured.
    public let configuration: Capture
    /// The encoder's priming in samples.
    public let priming: Int
    /// The lifecycle: the same as every live job's.
    public let job = LiveCaptureJob()
    private let capture: AudioCapture
    /// The pipeline until ``start()`` takes it.
    private let pending: Mutex<Transfer<Pipeline>?>
    /// What the packets' stream said: counted by the tee's side of the pump.
    private let tally = StreamTally()

    /// A live encoding that has not started: `encoder` (opened, so that its rate, channels and
    /// bitrate were checked) feeds `sinks`, each a branch of a tee (a sink that fails cancels
    /// the job unless its branch is expendable). The encoder and the sinks are handed over: the
    /// pump's thread is the only one that touches them from then on. A live encoding dropped
    /// without being started cancels its sinks (each removes what it created).
    ///
    /// - Parameters:
    ///   - capture: the device and capture format.
    ///   - encoder: the encoder; its input format, when it has one yet, must be the capture's.
    ///   - sinks: where the packets go.
    ///   - onPCM: sees each captured period before it is encoded (a level meter, a tap), on the
    ///     pump thread.
    ///   - onFailure: encoding or a sink failed (once; nothing more is encoded), on that thread.
    ///   - onEnd: the capture thread ended (frame limit, device failure, or stop).
    /// - Throws: `PipelineError.unsupported` when the encoder was opened for another PCM layout
    ///   than the capture's.
    public init(capture: Capture, encoder: sending any AudioEncoder, sinks: sending [Tee<MediaSample>.Branch],
                onPCM: (@Sendable (PCMBuffer) -> Void)? = nil, onFailure: (@Sendable (PipelineError) -> Void)? = nil,
                onEnd: (@Sendable (AudioCapture.Ending) -> Void)? = nil) throws(PipelineError) {
        if let opened = encoder.inputFormat, opened != capture.audio.pcmFormat {
            var tee = Tee(sinks)
            tee.cancel()
            throw .unsupported("the encoder takes \(opened.sampleRate) Hz, \(opened.channelCount) channels of \(opened.sampleFormat); "
                               + "the capture gives \(capture.audio.sampleRate) Hz, \(capture.audio.channelCount) channels of \(capture.audio.pcmFormat.sampleFormat)")
        }
        configuration = capture
        priming = encoder.priming
        let job = self.job
        let source = AudioCaptureSource(
            configuration: capture.audio, device: capture.device, periodFrames: capture.periodFrames,
            queueCapacity: capture.queueCapacity, deliveryBatch: capture.deliveryBatch,
            frameLimit: capture.frameLimit, alsaConfiguration: capture.alsaConfiguration,
            onEnd: { ending in
                job.captureEnded(ending)
                onEnd?(ending)
            })
        self.capture = source.capture
        job.attach(source.capture)
        let observed = ObservedSource(source) { buffer in onPCM?(buffer) }
        let failed = job.failureHandler
        let stop: @Sendable (PipelineError) -> Void = { error in
            failed(error)
            onFailure?(error)
        }
        pending = Mutex(Transfer(Self.pipeline(observed, encoder: encoder, into: TalliedSink(Tee(sinks), tally: tally), onFailure: stop)))
    }

    /// The graph before it runs: what starts its pump, and what cancels its sinks when the
    /// capture cannot start (each removes what it created).
    private struct Pipeline {
        var start: () -> PumpThread
        var cancel: () -> Void
    }

    /// `source` → `encoder` → `sink`, not started.
    private static func pipeline<Encoder: AudioEncoder>(
        _ source: ObservedSource<AudioCaptureSource>, encoder: Encoder, into sink: TalliedSink<Tee<MediaSample>>,
        onFailure: @escaping @Sendable (PipelineError) -> Void
    ) -> Pipeline {
        let chain = source.transformed(by: encoder)
        var sink = sink
        return Pipeline(start: { PumpThread(source: chain, sink: sink, onFailure: onFailure) }, cancel: { sink.cancel() })
    }

    deinit {
        // Never started: the sinks remove what they created, and a threaded branch's thread ends.
        if let handed = pending.withLock({ pending in pending.take() }) { handed.take().cancel() }
    }

    /// The ALSA PCM name.
    public var device: String { capture.device }
    /// What the device granted, once opened.
    public var parameters: PCMDevice.Parameters? { capture.parameters }
    /// The capture's counters so far.
    public var statistics: AudioCapture.Statistics { capture.statistics }

    /// Opens and configures the device without capturing yet (``/AudioIO/AudioCapture/open()``);
    /// ``start()`` does it when this was not called.
    ///
    /// - Throws: `PipelineError.audioDevice` for a missing or busy device or an unsupported format.
    public func open() throws(PipelineError) {
        do { try capture.open() } catch { throw .audioDevice(error) }
    }

    /// Starts capturing and encoding, opening the device first if ``open()`` was not called.
    /// Starts once.
    ///
    /// - Throws: `PipelineError.audioDevice` for a missing or busy device or an unsupported
    ///   format; `PipelineError.unsupported` when started before.
    public func start() throws(PipelineError) {
        guard let handed = pending.withLock({ pending -> Transfer<Pipeline>? in
            defer { pending = nil }
            return pending
        }) else { throw .unsupported("this live encoding was already started") }
        try job.start { () throws(PipelineError) -> PumpThread in
            let pipeline = handed.take()
            do throws(ALSAError) { try capture.start() } catch {
                // Nothing was written: the sinks remove what they created.
                pipeline.cancel()
                throw .audioDevice(error)
            }
            return pipeline.start()
        }
    }

    /// Asks the job to stop (safe from any thread and a signal handler's thread); ``finish()``
    /// then ends it.
    public func requestStop() { job.requestStop() }

    /// Stops capturing, encodes what was queued, flushes the encoder and finishes every sink
    /// (their last packets arrive before this returns), and says what was done. Call once,
    /// after ``start()``.
    ///
    /// - Throws: the first error of the encoder or a required sink.
    public func finish() throws(PipelineError) -> Summary {
        summary(of: try job.finish())
    }

    /// Captures and encodes until the frame limit, a device failure or a stop request (a
    /// cancelled task makes one), then finishes as ``finish()`` does: for `async` callers, with
    /// no thread of Swift's cooperative pool waiting on the device or the pump.
    ///
    /// - Throws: the errors of ``start()`` and ``finish()``.
    public func run() async throws(PipelineError) -> Summary {
        summary(of: try await job.run { () throws(PipelineError) in try self.start() })
    }

    /// What the job did, once finished, and what its pump did.
    private func summary(of report: JobReport) -> Summary {
        let told = tally.snapshot
        return Summary(frames: told.gapless?.validLength ?? 0, packets: told.elements, priming: priming,
                       padding: Int(told.gapless?.padding ?? 0), capture: capture.statistics, captureFailure: capture.failure,
                       report: report)
    }
}
