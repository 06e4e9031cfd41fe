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
        /// PCM frames captured and encoded (without an encoder: captured).
        public var frames: Int64
        /// Packets the packet sinks were given.
        public var packets: Int64
        /// The encoder's priming (samples before the first captured one in the decoded output).
        public var priming: Int
        /// Samples after the last captured one in the decoded output.
        public var padding: Int
        /// The capture's counters.
        public var capture: AudioCapture.Statistics
        /// The error that ended capture early, if one did.
        public var captureFailure: ALSAError?
        /// Peak and RMS of everything captured.
        public var levels: AudioLevels
        /// What the pump did, stage by stage: the capture, the encoder, each sink.
        public var report: JobReport
    }

    /// What the capture feeds: packet sinks behind the encoder, and PCM sinks beside it (a
    /// WAV file, another encoder on a thread of its own). Each is a branch of a tee: a sink
    /// that fails cancels the job unless its branch is expendable.
    ///
    /// ```
    /// capture ──▶ Tee<PCMBuffer> ─┬─▶ encoder ──▶ Tee<MediaSample> ──▶ packets[…]
    ///                             └─▶ pcm[…]
    /// ```
    public struct Sinks {
        /// Fed by the encoder.
        public var packets: [Tee<MediaSample>.Branch]
        /// Fed the captured PCM.
        public var pcm: [Tee<PCMBuffer>.Branch]

        /// Sinks of packets and of PCM.
        public init(packets: [Tee<MediaSample>.Branch] = [], pcm: [Tee<PCMBuffer>.Branch] = []) {
            self.packets = packets
            self.pcm = pcm
        }

        /// Every sink removes what it created.
        mutating func cancel() {
            var packets = Tee(packets)
            packets.cancel()
            var pcm = Tee(pcm)
            pcm.cancel()
        }
    }

    /// Makes the sinks once the device is open and before capture starts, so that a missing or
    /// busy device leaves every output untouched. It is handed the job's ``Progress`` (the
    /// capture clock a live playlist dates its segments by). A factory that throws removes what
    /// it made before.
    public typealias SinkFactory = @Sendable (Progress) throws(PipelineError) -> Sinks

    /// What has been captured so far, for a meter and for sinks that date what they write:
    /// written by the pump thread, read from any.
    ///
    /// `Sendable` because it is synchronized: its state is behind a mutex.
    public final class Progress: Sendable {
        private struct State {
            var meter: AudioLevels
            var total: AudioLevels
            var captureStart: Double?
        }

        private let state: Mutex<State>
        private let sampleRate: Double

        init(format: PCMFormat) {
            state = Mutex(State(meter: AudioLevels(channelCount: format.channelCount), total: AudioLevels(channelCount: format.channelCount)))
            sampleRate = Double(format.sampleRate)
        }

        /// Frames captured so far.
        public var frames: Int64 { state.withLock { $0.total.frameCount } }

        /// Peak and RMS of everything captured so far.
        public var levels: AudioLevels { state.withLock { $0.total } }

        /// The levels since the last call (for a meter), then measures afresh.
        public func takeLevels() -> AudioLevels {
            state.withLock { state in
                defer { state.meter = AudioLevels(channelCount: state.meter.channelCount) }
                return state.meter
            }
        }

        /// The wall-clock time of the first captured frame, in seconds since 1970-01-01
        /// 00:00:00 UTC (when its period came, less the period); `nil` before it.
        public var captureStart: Double? { state.withLock { $0.captureStart } }

        /// Measures a captured period.
        func measure(_ buffer: PCMBuffer) {
            var levels = AudioLevels(channelCount: buffer.format.channelCount)
            levels.add(buffer)
            let rate = sampleRate
            state.withLock { state in
                state.meter.merge(levels)
                state.total.merge(levels)
                if state.captureStart == nil { state.captureStart = WallClock.now() - Double(buffer.frameCount) / rate }
            }
        }
    }

    /// What is captured.
    public let configuration: Capture
    /// The encoder's priming in samples (zero without an encoder).
    public let priming: Int
    /// The encoder's bitrate in bits per second; `nil` without an encoder.
    public let bitrate: Int?
    /// The figures of the live destinations the sinks feed, when they were made with the
    /// encoding (``init(recording:)``), in the order of ``RecordingOptions/destinations``; empty
    /// otherwise.
    public let destinations: [DestinationStatistics]
    /// What has been captured so far: frames, levels, the capture clock.
    public let progress: Progress
    /// The lifecycle: the same as every live job's.
    public let job = LiveCaptureJob()
    /// Where ``announce(_:)`` posts events for the sinks.
    private let inlet = StreamEventInlet()
    private let capture: AudioCapture
    /// The graph until ``start()`` takes it.
    private let pending: Mutex<Transfer<Pending>?>
    /// What the packets' stream said: counted by the tee's side of the pump.
    private let tally = StreamTally()

    /// The graph before it runs.
    private struct Pending {
        var source: AnnouncingSource<ObservedSource<AudioCaptureSource>>
        var encoder: (any AudioEncoder)?
        /// The sinks given at `init`, or
        var sinks: Sinks?
        /// what makes them once the device is open.
        var makeSinks: SinkFactory?
        var onFailure: @Sendable (PipelineError) -> Void
    }

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
    public convenience init(capture: Capture, encoder: sending any AudioEncoder, sinks: sending [Tee<MediaSample>.Branch],
                            onPCM: (@Sendable (PCMBuffer) -> Void)? = nil, onFailure: (@Sendable (PipelineError) -> Void)? = nil,
                            onEnd: (@Sendable (AudioCapture.Ending) -> Void)? = nil) throws(PipelineError) {
        try self.init(capture: capture, encoder: encoder, given: Sinks(packets: sinks), makeSinks: nil,
                      onPCM: onPCM, onFailure: onFailure, onEnd: onEnd, destinations: [])
    }

    /// A live encoding whose sinks are made by `makeSinks` once the device is open, before
    /// capture starts: a missing or busy device leaves an existing file untouched. Without an
    /// `encoder`, the capture feeds the PCM sinks alone (a WAV recording, or encoders of their
    /// own on threads of their own); with one, packet sinks follow it and PCM sinks go beside it.
    ///
    /// - Parameters:
    ///   - capture: the device and capture format.
    ///   - encoder: the encoder of the packet sinks; its input format, when it has one yet, must
    ///     be the capture's.
    ///   - makeSinks: makes the sinks, on the thread that calls ``start()``.
    ///   - onPCM: sees each captured period before it is encoded, on the pump thread.
    ///   - onFailure: encoding or a sink failed (once; nothing more is encoded), on that thread.
    ///   - onEnd: the capture thread ended (frame limit, device failure, or stop).
    ///   - destinations: the figures of the live destinations `makeSinks` feeds, if it feeds
    ///     any (``destinations``).
    /// - Throws: `PipelineError.unsupported` when the encoder was opened for another PCM layout
    ///   than the capture's.
    public convenience init(capture: Capture, encoder: sending (any AudioEncoder)?, makeSinks: @escaping SinkFactory,
                            onPCM: (@Sendable (PCMBuffer) -> Void)? = nil, onFailure: (@Sendable (PipelineError) -> Void)? = nil,
                            onEnd: (@Sendable (AudioCapture.Ending) -> Void)? = nil,
                            destinations: [DestinationStatistics] = []) throws(PipelineError) {
        try self.init(capture: capture, encoder: encoder, given: nil, makeSinks: makeSinks, onPCM: onPCM, onFailure: onFailure, onEnd: onEnd,
                      destinations: destinations)
    }

    private init(capture: Capture, encoder: sending (any AudioEncoder)?, given sinks: sending Sinks?, makeSinks: SinkFactory?,
                 onPCM: (@Sendable (PCMBuffer) -> Void)?, onFailure: (@Sendable (PipelineError) -> Void)?,
                 onEnd: (@Sendable (AudioCapture.Ending) -> Void)?, destinations: [DestinationStatistics]) throws(PipelineError) {
        if let opened = encoder?.inputFormat, opened != capture.audio.pcmFormat {
            var sinks = sinks
            sinks?.cancel()
            throw .unsupported("the encoder takes \(opened.sampleRate) Hz, \(opened.channelCount) channels of \(opened.sampleFormat); "
                               + "the capture gives \(capture.audio.sampleRate) Hz, \(capture.audio.channelCount) channels of \(capture.audio.pcmFormat.sampleFormat)")
        }
        configuration = capture
        self.destinations = destinations
        priming = encoder?.priming ?? 0
        bitrate = encoder?.bitrate
        let progress = Progress(format: capture.audio.pcmFormat)
        self.progress = progress
        let job = self.job
        let source = AudioCaptureSource(
            configuration: capture.audio, device: capture.device, periodFrames: capture.periodFrames,
            queueCapacity: capture.queueCapacity, deliveryBatch: capture.deliveryBatch,
            frameLimit: capture.frameLimit, alsaConfiguration: capture.alsaConfiguration,
            onEnd: { [weak job] ending in
                job?.captureEnded(ending)
                onEnd?(ending)
            })
        self.capture = source.capture
        job.attach(source.capture)
        let observed = AnnouncingSource(ObservedSource(source) { buffer in
            progress.measure(buffer)
            onPCM?(buffer)
        }, announcing: [], inlet: inlet)
        let failed = job.failureHandler
        let stop: @Sendable (PipelineError) -> Void = { error in
            failed(error)
            onFailure?(error)
        }
        pending = Mutex(Transfer(Pending(source: observed, encoder: encoder, sinks: sinks, makeSinks: makeSinks, onFailure: stop)))
    }

    /// `source` → (`encoder` → the packet sinks, beside the PCM sinks), not started.
    private static func pump(_ pending: consuming Pending, sinks: consuming Sinks, tally: StreamTally) -> PumpThread {
        guard let encoder = pending.encoder, !sinks.packets.isEmpty else {
            return PumpThread(source: pending.source, sink: Tee(sinks.pcm), onFailure: pending.onFailure)
        }
        return encoded(pending.source, encoder: encoder, sinks: sinks, tally: tally, onFailure: pending.onFailure)
    }

    private static func encoded<Encoder: AudioEncoder>(
        _ source: AnnouncingSource<ObservedSource<AudioCaptureSource>>, encoder: Encoder, sinks: Sinks, tally: StreamTally,
        onFailure: @escaping @Sendable (PipelineError) -> Void
    ) -> PumpThread {
        let packets = TalliedSink(Tee(sinks.packets), tally: tally)
        // The loudness measured on the way to the encoder ends the stream (an HLS init segment's ludt).
        guard !sinks.pcm.isEmpty else {
            return PumpThread(source: source.transformed(by: LoudnessTap()).transformed(by: encoder), sink: packets, onFailure: onFailure)
        }
        let tee = Tee<PCMBuffer>([Tee.Branch(packets.transforming(by: encoder).transforming(by: LoudnessTap()), name: "\(encoder.bitrate / 1000)k")]
                                 + sinks.pcm)
        return PumpThread(source: source, sink: tee, onFailure: onFailure)
    }

    deinit {
        // Never started: the sinks remove what they created, and a threaded branch's thread ends.
        if let handed = pending.withLock({ pending in pending.take() }) {
            var sinks = handed.take().sinks
            sinks?.cancel()
        }
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

    /// Starts capturing and encoding, opening the device first if ``open()`` was not called,
    /// then making the sinks (``SinkFactory``), then starting capture. Starts once.
    ///
    /// - Throws: `PipelineError.audioDevice` for a missing or busy device or an unsupported
    ///   format (nothing was created); what the sink factory throws (`.stream` for a file that
    ///   cannot be created, `.unsupported` for a directory that holds something else, `.codec`
    ///   for an encoder of a branch), after which the device is closed again;
    ///   `PipelineError.unsupported` when started before, or for packet sinks without an encoder.
    public func start() throws(PipelineError) {
        guard let handed = pending.withLock({ pending -> Transfer<Pending>? in
            defer { pending = nil }
            return pending
        }) else { throw .unsupported("this live encoding was already started") }
        let capture = self.capture
        let progress = self.progress
        let tally = self.tally
        try job.start { () throws(PipelineError) -> PumpThread in
            let pending = handed.take()
            var sinks = pending.sinks
            if capture.parameters == nil {
                do throws(ALSAError) { try capture.open() } catch {
                    // Nothing was written: the sinks remove what they created.
                    sinks?.cancel()
                    throw .audioDevice(error)
                }
            }
            var made = Sinks()
            do throws(PipelineError) {
                if let sinks { made = sinks } else if let make = pending.makeSinks { made = try make(progress) }
                guard pending.encoder != nil || made.packets.isEmpty else { throw .unsupported("packet sinks need an encoder") }
            } catch {
                // The factory removed what it made; the device opened for nothing is closed.
                made.cancel()
                capture.stop()
                throw error
            }
            do throws(ALSAError) { try capture.start() } catch {
                made.cancel()
                throw .audioDevice(error)
            }
            return Self.pump(pending, sinks: made, tally: tally)
        }
    }

    /// Tells the sinks `events` from the next captured period on, in order with the audio
    /// (safe from any thread): a title change (``/MediaCore/TimedMetadata/nowPlaying(_:at:)``),
    /// an ad break (``/MediaCore/StreamMarker/adBreak(start:duration:id:uri:)``). Their times
    /// are on the presentation timeline, from the first captured frame; a sink holds an event
    /// whose time has not come (an HLS rendition writes it in the segment its time falls in),
    /// and writes one whose time has passed as soon as it can.
    public func announce(_ events: [StreamEvent]) {
        inlet.post(events)
    }

    /// The time on the stream's presentation timeline of the wall-clock time `date` (seconds
    /// since 1970, UTC), once the first frame was captured: how a caller places a
    /// ``announce(_:)`` it knows by the clock.
    public func streamTime(ofWallClock date: Double) -> MediaTime? {
        guard let start = progress.captureStart else { return nil }
        return MediaTime(value: Int64(((date - start) * 1000).rounded()), timescale: 1000)
    }

    /// The stream's presentation time now: the frames captured so far.
    public var streamTime: MediaTime {
        MediaTime(value: progress.frames, timescale: Int32(configuration.audio.sampleRate))
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
        // The priming and padding the stream told its sinks (none when no packet sink was fed).
        return Summary(frames: told.gapless?.validLength ?? progress.frames, packets: told.elements, priming: Int(told.gapless?.priming ?? 0),
                       padding: Int(told.gapless?.padding ?? 0), capture: capture.statistics, captureFailure: capture.failure,
                       levels: progress.levels, report: report)
    }
}
