public import AudioIO
public import SystemPackage
internal import Dispatch
internal import Synchronization

/// A recording from an ALSA device to a PCM, WAV, ADTS or M4A file, as a composition:
/// ``/AudioIO/AudioCaptureSource`` (with a level meter watching) → the registry's AAC-LC encoder
/// (``/AudioCodec/AudioCodecRegistry``, libavcodec's ``/AudioCodec/AACEncoder``; for `.aac`, `.m4a`
/// and HLS) → ``/MediaFormats/AudioPacketOutput``, ``/MediaStreaming/HLSSegmentOutput`` or
/// ``/MediaFormats/PCMFileOutput``, pumped on a thread of its own
/// (capture → encoder → muxer, as AVFoundation's recording pipelines are built).
///
/// The container is a ``/MediaFormats/MediaFileFormat`` (``containers``), by default the one the
/// output's name says (``container(of:)``). The capture
/// thread never waits on the encoder or the disk: the pump thread encodes and writes, and when
/// it falls more than the queue behind, periods are dropped and counted (``Summary/capture``).
///
/// Lifecycle: ``start()``; then ``wait(timeout:)`` until the duration is reached, the device
/// fails, or someone calls ``requestStop()`` (a signal handler may); then ``finish()``, which
/// stops capture, encodes and writes what was queued, and finalizes the file. Meanwhile
/// ``takeLevels()`` and ``recordedFrames`` feed a meter.
///
/// Files: `.pcm`, `.wav` and `.aac` are written in place as they are recorded (a crash keeps
/// what was flushed); `.m4a` is written under a temporary name and renamed when finished, or,
/// with ``Options/crashSafe``, fragmented in place with one-second fragments, so that a kill
/// (SIGKILL, a crash) loses at most the last second. With ``Options/crashSafe`` the other
/// containers are flushed every second too (and the WAV header updated). Flushing hands the
/// bytes to the kernel; it does not `fsync`, so a power cut can lose what the kernel had not yet
/// written back.
///
/// `Sendable` because it is synchronized: the options are immutable, and the pipeline, the pump
/// and the progress the meter reads are behind mutexes, so ``requestStop()`` and the meter's
/// reads may come from other threads.
public final class Recording: Sendable {
    /// The containers a recording writes: ``/MediaFormats/MediaFileFormat/rawPCM`` (exactly the
    /// bytes captured, `.pcm`, `.raw`), ``/MediaFormats/MediaFileFormat/wav``,
    /// ``/MediaFormats/MediaFileFormat/adts`` (AAC-LC, `.aac`), ``/MediaFormats/MediaFileFormat/mp4``
    /// (AAC-LC with a sample-exact edit list, `.m4a`, `.mp4`) and
    /// ``/MediaFormats/MediaFileFormat/hlsPlaylist``: a live HLS rendition in a directory, CMAF
    /// segments each written whole and a playlist rewritten after each
    /// (``/MediaStreaming/HLSSegmentOutput``), never chosen by a name.
    public static let containers: [MediaFileFormat] = [.rawPCM, .wav, .adts, .mp4, .hlsPlaylist]

    /// The file container `path`'s name says (``/MediaFormats/MediaFileFormat/init(nameOf:)``),
    /// if it is one a recording writes: raw PCM, WAV, ADTS or MP4.
    public static func container(of path: FilePath) -> MediaFileFormat? {
        guard let format = MediaFileFormat(nameOf: path), format != .hlsPlaylist, containers.contains(format) else { return nil }
        return format
    }

    /// What to record, from where, to where.
    public struct Options: Sendable {
        /// The output file.
        public var outputPath: FilePath
        /// The output's container, one of ``Recording/containers``; by default from
        /// ``outputPath``'s extension (``Recording/container(of:)``).
        public var container: MediaFileFormat
        /// The capture format (rate, channels, bit depth).
        public var configuration: AudioConfiguration
        /// The AAC bitrate (`.aac`, `.m4a`), bits per second.
        public var bitrate: Int
        /// Whether ``bitrate`` is a default, lowered to the most AAC carries at the capture's
        /// rate and channel count (``/AudioCodec/AACEncoder/fittingBitrate(_:channels:sampleRate:)``).
        public var lowersBitrateToFit = false
        /// The AAC encoder's scale-factor search (`.aac`, `.m4a`).
        public var coder: AACEncoder.Coder
        /// The AAC profile (`.aac`, `.m4a`, HLS, destinations): AAC-LC (`.aacLC`, the default),
        /// HE-AAC v1 (`.sbr`, ``/AudioCodec/HEAACEncoder``), which takes a capture rate of
        /// 16–48 kHz (``/SpectralBandReplication/SBRTuning/supportedOutputSampleRates``), mono or
        /// stereo, HE-AAC v2 (`.ps`, the same rates, stereo only), or `.automatic`: chosen by the
        /// capture's channels and the bitrate (``bitrate`` unless it is a default, which is
        /// AAC-LC's; each destination's own), by
        /// ``/MediaFormats/AACProfileChoice/automaticObjectType(channelCount:bitrate:sampleRate:)``. With
        /// HE-AAC a live HLS rendition's every segment (and part) starts with an SBR header.
        public var profile: AACProfileChoice = .aacLC
        /// The ALSA PCM name.
        public var device: String
        /// Where to look ``device`` up instead of the system configuration.
        public var alsaConfiguration: ALSAConfiguration?
        /// Record exactly this many frames, then stop; `nil` to record until ``requestStop()``.
        public var frameLimit: Int?
        /// Write so that a kill loses at most the last second (see ``Recording``).
        public var crashSafe: Bool
        /// Frames per capture period; default 20 ms.
        public var periodFrames: Int?
        /// Periods encoding and writing may fall behind before capture drops them.
        public var queueCapacity: Int
        /// HLS (``/MediaFormats/MediaFileFormat/hlsPlaylist``, or ``hlsDirectory``): the wanted
        /// segment length, rounded to whole AAC frames; 6 s by default.
        public var hlsSegmentDuration: Duration = .seconds(6)
        /// HLS: segments the playlist lists (0: an event playlist with all of them).
        public var hlsWindow: Int = 0
        /// HLS: the wall-clock time capture starts, as the time since 1970-01-01 00:00:00 UTC
        /// (the Unix epoch), for `EXT-X-PROGRAM-DATE-TIME`; `nil` writes no program date-times.
        public var hlsStartDate: Duration?
        /// HLS: low-latency parts of at most this long (``/MediaStreaming/HLSSegmentOutput/Live/partDuration``);
        /// `nil` for none.
        public var hlsPartDuration: Duration?
        /// HLS: where each playlist is published for a server (``/MediaStreaming/LiveHLSPublication``).
        public var hlsPublication: LiveHLSPublication?
        /// A live HLS rendition written beside an `.aac` or `.m4a` ``outputPath``, from the same
        /// capture and the same encoder (a ``/MediaCore/Tee``); `nil` for the file alone. The
        /// `hls` options above apply to it.
        public var hlsDirectory: FilePath?
        /// Live destinations fed from the same capture: RTMP, Icecast, SRT
        /// (``/Publishing/LiveDestination``, each an expendable branch of the tee that never holds
        /// the capture or the file up). Those without a bitrate of their own
        /// (``/Publishing/PublishingDestination/bitrate``) share the file's encoder; each other
        /// bitrate gets one encoder, on a thread of its own.
        public var destinations: [PublishingDestination] = []
        /// Audio each destination queues while its server is slow or away.
        public var publishQueueDuration: Duration = .seconds(5)
        /// How destinations reconnect.
        public var reconnectPolicy = ReconnectPolicy()
        /// Certificate authorities for `rtmps://` and `icecasts://` (the system's when `nil`).
        public var trustRoots: String?
        /// The title the destinations announce.
        public var publishTitle: String?
        /// Whether ``outputPath`` is written; `false` publishes (and writes ``hlsDirectory``)
        /// only. ``container`` still says what the destinations get: ADTS/MP4 mean AAC.
        public var writesFile = true

        /// The codecs the job's encoder comes from (``/AudioCodec/AudioCodecRegistry/standard``
        /// unless a program registers its own in a copy).
        public var codecs: AudioCodecRegistry = .standard
        /// The files the job opens and creates (``/MediaFormats/MediaFormatRegistry`` `standard`
        /// unless a program registers its own in a copy): inputs by what their bytes are,
        /// outputs by their names.
        public var formats: MediaFormatRegistry = .standard

        /// Options for recording to `outputPath`; throws when its extension names no container a
        /// recording writes and none is given, or when `container` is not one
        /// (``Recording/containers``).
        public init(outputPath: FilePath, configuration: AudioConfiguration = .default, bitrate: Int = 128_000,
                    coder: AACEncoder.Coder = .fast, device: String = "default", alsaConfiguration: ALSAConfiguration? = nil, frameLimit: Int? = nil,
                    crashSafe: Bool = false, periodFrames: Int? = nil, queueCapacity: Int = 250,
                    container explicit: MediaFileFormat? = nil) throws(PipelineError) {
            if let explicit, !Recording.containers.contains(explicit) {
                throw .unsupported("\(outputPath): a recording cannot write \(explicit); it writes "
                                   + Recording.containers.map(\.description).joined(separator: ", "))
            }
            guard let container = explicit ?? Recording.container(of: outputPath) else {
                throw .unsupported("\(outputPath): unknown output type; use \(MediaFileFormat.extensionList(holding: [.pcm, .audioPackets]))")
            }
            self.outputPath = outputPath
            self.container = container
            self.configuration = configuration
            self.bitrate = bitrate
            self.coder = coder
            self.device = device
            self.alsaConfiguration = alsaConfiguration
            self.frameLimit = frameLimit
            self.crashSafe = crashSafe
            self.periodFrames = periodFrames
            self.queueCapacity = queueCapacity
        }
    }

    /// Why a recording stopped: ``LiveCaptureJob/StopReason``.
    public typealias StopReason = LiveCaptureJob.StopReason

    /// What was recorded.
    public struct Summary: JobSummary, Sendable {
        /// The file written.
        public var outputPath: FilePath
        /// Its container (one of ``Recording/containers``).
        public var container: MediaFileFormat
        /// The live HLS rendition written beside the file, if one was (``Options/hlsDirectory``).
        public var hlsDirectory: FilePath?
        /// The ALSA PCM recorded from.
        public var device: String
        /// The PCM layout captured.
        public var format: PCMFormat
        /// The device's period, in frames.
        public var periodFrames: Int
        /// Frames in the file (for AAC: the frames encoded, which the edit list keeps exactly).
        public var frames: Int64
        /// Why recording stopped.
        public var stopReason: StopReason
        /// The capture's counters: device xruns and the frames they lost, periods dropped
        /// because encoding or the disk fell behind.
        public var capture: AudioCapture.Statistics
        /// The error that ended capture, when ``stopReason`` is ``/KeyFrameKit/LiveCaptureJob/StopReason/device``.
        public var deviceFailure: ALSAError?
        /// Peak and RMS of the whole recording.
        public var levels: AudioLevels
        /// The AAC encoder's priming in samples (zero for PCM).
        public var priming: Int
        /// The AAC encoder's padding after the last recorded sample (zero for PCM).
        public var padding: Int
        /// What the pump did, stage by stage: the capture, the encoder, the outputs (with an
        /// HLS rendition beside the file, a tee's branches `file` and `hls`).
        public var report: JobReport
        /// Each live destination's figures, in the order given.
        public var destinations: [DestinationStatistics.Snapshot] = []
        /// Whether ``outputPath`` was written (``Options/writesFile``).
        public var writesFile = true
        /// The AAC profile of the file and rendition (``Options/profile``, resolved when it is
        /// `.automatic`); `nil` for PCM.
        public var profile: AudioObjectType?
        /// The bitrate of the file's and the rendition's encoder; `nil` for PCM.
        public var bitrate: Int?

        /// Seconds of audio in the file.
        public var seconds: Double { Double(frames) / Double(max(format.sampleRate, 1)) }
        /// Whether any audio was lost: device xruns or dropped periods.
        public var hasOverruns: Bool { capture.deviceXruns > 0 || capture.lostFrames > 0 || capture.consumerOverruns > 0 }
    }

    /// The options recorded with.
    public let options: Options
    /// The profile of the file's and the rendition's encoder: ``Options/profile`` resolved for
    /// the capture's channels and ``Options/bitrate`` (AAC-LC's default when it is one).
    private let profile: AudioObjectType
    /// The bitrate that encoder took (`nil` for PCM).
    private let encoderBitrate: Int?
    /// Each live destination's figures, live, in the order of ``Options/destinations``.
    public let destinationStatistics: [DestinationStatistics]
    private let capture: AudioCapture
    private let progress: ProgressState
    /// The lifecycle: start once, stop, finish.
    public let job = LiveCaptureJob()
    /// The pipeline until ``start()`` takes it.
    private let pending: Mutex<Transfer<PendingPipeline>?>

    /// The metered capture and the encoder, made by `init` and started by ``start()``.
    private struct PendingPipeline {
        var metered: ObservedSource<AudioCaptureSource>
        var encoder: (any AudioEncoder)?
    }

    /// What the stream told the output: packets, the gapless numbers.
    private let tally = StreamTally()

    /// The meter's levels and the whole recording's: written by the pump thread, read by the
    /// caller.
    private final class ProgressState: Sendable {
        struct Progress {
            var meter: AudioLevels
            var total: AudioLevels
            /// The wall-clock time of the first frame captured (the capture clock's origin, for
            /// HLS program date-times): when its period came, less the period.
            var captureStart: Double?
        }

        let lock: Mutex<Progress>

        init(channelCount: Int) {
            lock = Mutex(Progress(meter: AudioLevels(channelCount: channelCount), total: AudioLevels(channelCount: channelCount)))
        }
    }

    /// A recording that has not started. The encoder is opened now (`.aac`, `.m4a`), so an
    /// unsupported format or bitrate is an error before the device or the file is touched.
    public init(options: Options) throws(PipelineError) {
        self.options = options
        destinationStatistics = options.destinations.map { DestinationStatistics(destination: $0.maskedURL, scheme: $0.scheme.name) }
        guard options.destinations.isEmpty || options.container.contents.contains(.audioPackets) else {
            throw .unsupported("live destinations need AAC: record to .aac, .m4a or --hls (\(options.outputPath) is \(options.container))")
        }
        guard options.writesFile || !options.destinations.isEmpty || options.container == .hlsPlaylist else {
            throw .unsupported("a recording that writes no file needs live destinations")
        }
        let channels = options.configuration.channelCount
        let progress = ProgressState(channelCount: channels)
        let job = self.job
        let onEnd: @Sendable (AudioCapture.Ending) -> Void = { ending in job.captureEnded(ending) }
        let source = AudioCaptureSource(
            configuration: options.configuration, device: options.device, periodFrames: options.periodFrames,
            queueCapacity: options.queueCapacity, deliveryBatch: 5, frameLimit: options.frameLimit,
            alsaConfiguration: options.alsaConfiguration, onEnd: onEnd)
        capture = source.capture
        job.attach(capture)
        let rate = Double(options.configuration.sampleRate)
        let metered = ObservedSource(source) { buffer in
            var levels = AudioLevels(channelCount: channels)
            levels.add(buffer)
            progress.lock.withLock { state in
                state.meter.merge(levels)
                state.total.merge(levels)
                if state.captureStart == nil { state.captureStart = WallClock.now() - Double(buffer.frameCount) / rate }
            }
        }
        var encoder: (any AudioEncoder)?
        let profile = options.profile.resolved(channelCount: channels, bitrate: options.lowersBitrateToFit ? nil : options.bitrate,
                                               sampleRate: options.configuration.sampleRate)
        self.profile = profile
        if options.container.contents.contains(.audioPackets) {
            let rates = AACProfiles.sampleRates(of: profile)
            if profile.usesSpectralBandReplication, !rates.contains(options.configuration.sampleRate) {
                throw .unsupported("HE-AAC records at \(rates.map(String.init).joined(separator: ", ")) Hz; "
                                   + "the capture rate is \(options.configuration.sampleRate) Hz: choose one of those (--sample-rate) or AAC-LC")
            }
            do {
                encoder = try options.codecs.encoder(for: .aac, profile: profile, settings: .init(
                    bitrate: profile.usesSpectralBandReplication && options.lowersBitrateToFit ? AACProfiles.defaultBitrate(of: profile)
                        : options.bitrate,
                    lowersBitrateToFit: options.lowersBitrateToFit, format: options.configuration.pcmFormat, aac: .init(coder: options.coder)))
            } catch {
                throw .codec(error)
            }
        }
        encoderBitrate = encoder?.bitrate
        self.progress = progress
        guard options.hlsDirectory == nil || options.container == .adts || options.container == .mp4 else {
            throw .unsupported("an HLS rendition beside the file needs an .aac or .m4a file (\(options.outputPath) is \(options.container))")
        }
        pending = Mutex(Transfer(PendingPipeline(metered: metered, encoder: encoder)))
    }

    /// Opens the device, then creates the output file, then starts capturing: a missing or
    /// busy device leaves an existing file at the output path untouched. Starts once.
    ///
    /// - Throws: `PipelineError.audioDevice` for a missing or busy device or a format it
    ///   cannot record; `PipelineError.stream` when the file cannot be created.
    public func start() throws(PipelineError) {
        guard let handed = pending.withLock({ pending -> Transfer<PendingPipeline>? in
            defer { pending = nil }
            return pending
        }) else {
            throw .unsupported("this recording of \(options.outputPath) was already started")
        }
        try job.start { () throws(PipelineError) -> PumpThread in try launch(handed.take()) }
    }

    /// Opens the device, the outputs, then starts capture and the pump.
    private func launch(_ pending: PendingPipeline) throws(PipelineError) -> PumpThread {
        do { try capture.open() } catch { throw .audioDevice(error) }
        let options = self.options
        let stopForError = job.failureHandler
        let crashSafeInterval = options.crashSafe ? Int64(options.configuration.sampleRate) : nil
        if var encoder = pending.encoder {
            // HE-AAC with a live rendition: the packets that start its segments (and parts)
            // carry an SBR header, so that a player joining there gets the full band at once.
            if profile.usesSpectralBandReplication, options.container == .hlsPlaylist || options.hlsDirectory != nil {
                let interval = HLSSegmentOutput.randomAccessInterval(
                    segmentDuration: Self.seconds(options.hlsSegmentDuration), live: true, partDuration: options.hlsPartDuration.map(Self.seconds),
                    packetFrames: AACProfiles.framesPerPacket(of: profile), sampleRate: options.configuration.sampleRate)
                encoder = Packaging.aligned(encoder, interval: interval)
            }
            return try launch(pending.metered, encoder: encoder, crashSafeInterval: crashSafeInterval, onFailure: stopForError)
        }
        let output = try options.formats.pcmOutput(options.outputPath, as: PCMFileOutput.self, options: MediaFormatRegistry.OutputOptions(
            inPlace: true, emptyMessage: "\(options.outputPath): nothing was recorded", format: options.container))
        return try launch(pending.metered, into: output, checkpointFrames: crashSafeInterval, onFailure: stopForError)
    }

    /// The AAC outputs (ADTS or MP4, with an HLS rendition beside it; or HLS alone) fed by
    /// `metered` through `encoder`.
    private func launch<Encoder: AudioEncoder>(
        _ metered: ObservedSource<AudioCaptureSource>, encoder: Encoder, crashSafeInterval: Int64?,
        onFailure stopForError: @escaping @Sendable (PipelineError) -> Void
    ) throws(PipelineError) -> PumpThread {
        let options = self.options
        let progress = self.progress
        // Program date-times from the capture clock: the first frame's wall-clock time.
        let captureStart: @Sendable () -> Double? = { progress.lock.withLock { $0.captureStart } }
        let makeHLS = { (directory: FilePath) throws(PipelineError) -> HLSSegmentOutput in
            try HLSSegmentOutput(directory: directory, segmentDuration: Self.seconds(options.hlsSegmentDuration),
                                 live: HLSSegmentOutput.Live(window: options.hlsWindow, startDate: options.hlsStartDate.map(Self.seconds),
                                                             partDuration: options.hlsPartDuration.map(Self.seconds),
                                                             publication: options.hlsPublication, clock: captureStart),
                                 audioCodecs: options.codecs.descriptions)
        }
        // The packets' branches: the file and the rendition (required), the destinations at
        // the file's bitrate (expendable). The rendition first: a directory that holds a package
        // is refused before the file, which an in-place output would truncate, is opened.
        var hls: RecordingSink<HLSSegmentOutput>? = nil
        if options.container == .hlsPlaylist {
            hls = RecordingSink(try makeHLS(options.outputPath), checkpointFrames: nil)
        } else if let directory = options.hlsDirectory {
            hls = RecordingSink(try makeHLS(directory), checkpointFrames: nil)
        }
        var file: RecordingSink<AudioPacketOutput>? = nil
        if options.writesFile, options.container != .hlsPlaylist {
            do {
                file = RecordingSink(try options.formats.packetOutput(options.outputPath, as: AudioPacketOutput.self, options: .init(
                    fragmentDuration: options.crashSafe && options.container == .mp4 ? MediaTime(value: 1, timescale: 1) : nil,
                    inPlace: true, encoderName: "KeyFrameKit (libavcodec aac)", format: options.container)), checkpointFrames: crashSafeInterval)
            } catch {
                hls?.discardOutput()
                throw error
            }
        }
        if options.destinations.isEmpty, let file, hls == nil {
            return try launch(metered.transformed(by: encoder), into: file, onFailure: stopForError)
        }
        if options.destinations.isEmpty, let hls, file == nil {
            return try launch(metered.transformed(by: encoder), into: hls, onFailure: stopForError)
        }
        let settings = LiveDestinationSettings(codecs: options.codecs, queueDuration: options.publishQueueDuration, policy: options.reconnectPolicy,
                                               trustRoots: options.trustRoots, title: options.publishTitle)
        let asked = options.bitrate
        let destinations = Array(zip(options.destinations, destinationStatistics))
        let shared = destinations.filter { ($0.0.bitrate ?? asked) == asked }
        // One encoder per other bitrate, each on a thread of its own.
        var others: [Tee<PCMBuffer>.Branch] = []
        for bitrate in Set(destinations.compactMap { $0.0.bitrate }).subtracting([asked]).sorted() {
            do throws(PipelineError) {
                // A destination's own bitrate: `auto` chooses by it; HE-AAC takes or refuses it.
                let profile = options.profile.resolved(channelCount: options.configuration.channelCount, bitrate: bitrate,
                                                       sampleRate: options.configuration.sampleRate)
                others.append(try settings.encodingBranch(bitrate: bitrate, format: options.configuration.pcmFormat, coder: options.coder,
                                                          profile: profile, lowersBitrateToFit: !profile.usesSpectralBandReplication,
                                                          destinations: destinations.filter { $0.0.bitrate == bitrate }).0)
            } catch {
                file?.discardOutput()
                hls?.discardOutput()
                var made = Tee(others)
                made.cancel()
                throw error
            }
        }
        do { try capture.start() } catch {
            file?.discardOutput()
            hls?.discardOutput()
            var made = Tee(others)
            made.cancel()
            throw .audioDevice(error)
        }
        var branches: [Tee<MediaSample>.Branch] = []
        if let file { branches.append(Tee.Branch(file, name: "file")) }
        if let hls { branches.append(Tee.Branch(hls, name: "hls")) }
        branches += settings.packetBranches(shared, bitrate: encoder.bitrate)
        // Publishing only, every destination at a bitrate of its own: the file's encoder has
        // nothing to feed, and the job ends when every destination has stopped.
        if branches.isEmpty { return PumpThread(source: metered, sink: Tee(others), onFailure: stopForError) }
        let packets = TalliedSink(Tee(branches), tally: tally)
        guard !others.isEmpty else {
            return PumpThread(source: metered.transformed(by: encoder), sink: packets, onFailure: stopForError)
        }
        let tee = Tee<PCMBuffer>([Tee.Branch(packets.transforming(by: encoder), name: "\(encoder.bitrate / 1000)k")] + others)
        return PumpThread(source: metered, sink: tee, onFailure: stopForError)
    }

    /// `duration` in seconds, for the HLS output's `Double`s.
    private static func seconds(_ duration: Duration) -> Double {
        duration.inSeconds
    }

    /// Starts capturing, then the pump from `source` into `sink`; if capture cannot start, the
    /// sink's output is removed.
    private func launch<Source: MediaSource, Output: RecordingOutput>(
        _ source: Source, into sink: RecordingSink<Output>, onFailure: @escaping @Sendable (PipelineError) -> Void
    ) throws(PipelineError) -> PumpThread where Source.Element == Output.Element {
        do { try capture.start() } catch {
            var sink = sink
            sink.discardOutput()
            throw .audioDevice(error)
        }
        return PumpThread(source: source, sink: TalliedSink(sink, tally: tally), onFailure: onFailure)
    }

    /// Starts capturing, then the pump from `source` into `output`; if capture cannot start,
    /// the output is removed.
    private func launch<Source: MediaSource, Output: RecordingOutput>(
        _ source: Source, into output: Output, checkpointFrames: Int64?,
        onFailure: @escaping @Sendable (PipelineError) -> Void
    ) throws(PipelineError) -> PumpThread where Source.Element == Output.Element {
        do { try capture.start() } catch {
            var output = output
            output.discard()
            throw .audioDevice(error)
        }
        return PumpThread(source: source, sink: TalliedSink(RecordingSink(output, checkpointFrames: checkpointFrames), tally: tally),
                          onFailure: onFailure)
    }


    /// Asks the recording to stop; ``wait(timeout:)`` returns `true` from then on. Safe from any
    /// thread, and cheap (it does not stop the device: ``finish()`` does).
    public func requestStop() { job.requestStop() }

    /// Waits up to `timeout` for the recording to end (frame limit, device failure, or
    /// ``requestStop()``); returns whether it has.
    public func wait(timeout: Duration) -> Bool { job.wait(timeout: timeout) }

    /// Why the recording ended, once it has.
    public var stopReason: StopReason? { job.stopReason }

    /// Frames captured so far.
    public var recordedFrames: Int64 { progress.lock.withLock { $0.total.frameCount } }

    /// The capture's counters so far (overruns for a meter).
    public var statistics: AudioCapture.Statistics { capture.statistics }

    /// The levels since the last call (for a meter), then starts measuring afresh.
    public func takeLevels() -> AudioLevels {
        let channels = options.configuration.channelCount
        return progress.lock.withLock { state in
            defer { state.meter = AudioLevels(channelCount: channels) }
            return state.meter
        }
    }

    /// What the device granted, once started.
    public var parameters: PCMDevice.Parameters? { capture.parameters }

    /// Stops capturing, writes what was queued, and finalizes the file; call once, after
    /// ``start()`` succeeded. A device failure is not thrown: the file keeps what was recorded
    /// and ``Summary/deviceFailure`` says what happened.
    ///
    /// - Throws: a codec, container or file error; the file then keeps what was written (an
    ///   M4A gets its moov where the muxer can still write it).
    public func finish() throws(PipelineError) -> Summary {
        summary(of: try job.finish())
    }

    /// Records until the frame limit, a device failure or ``requestStop()`` (a cancelled task
    /// asks for one), then finishes the file: ``start()``, then ``finish()``, for `async`
    /// callers (a Vapor or Hummingbird app). No thread of Swift's cooperative pool waits on the
    /// device or the pump.
    ///
    /// - Throws: the errors of ``start()`` and ``finish()``.
    public func run() async throws(PipelineError) -> Summary {
        summary(of: try await job.run { () throws(PipelineError) in try self.start() })
    }

    /// What was recorded, once finished, and what its pump did.
    private func summary(of report: JobReport) -> Summary {
        let told = tally.snapshot.gapless
        let frames: Int64 = told?.validLength ?? progress.lock.withLock { $0.total.frameCount }
        let failure = capture.failure
        let total = progress.lock.withLock { $0.total }
        let reason = job.stopReason ?? .requested
        return Summary(outputPath: options.outputPath, container: options.container, hlsDirectory: options.hlsDirectory, device: options.device,
                       format: options.configuration.pcmFormat, periodFrames: parameters?.periodFrames ?? 0, frames: frames,
                       stopReason: failure != nil ? .device : reason, capture: capture.statistics, deviceFailure: failure,
                       levels: total, priming: Int(told?.priming ?? 0), padding: Int(told?.padding ?? 0), report: report,
                       destinations: destinationStatistics.map(\.snapshot), writesFile: options.writesFile,
                       profile: options.container.contents.contains(.audioPackets) ? profile : nil, bitrate: encoderBitrate)
    }
}

/// A recording's output: checkpoints every second of audio when crash-safe, and keeps what was
/// written when the pump fails (``MediaSink/cancel()`` salvages instead of removing).
struct RecordingSink<Output: RecordingOutput>: MediaSink {
    private var output: Output
    private let checkpointFrames: Int64?
    private var framesSinceCheckpoint: Int64 = 0

    init(_ output: Output, checkpointFrames: Int64?) {
        self.output = output
        self.checkpointFrames = checkpointFrames
    }

    mutating func write(_ element: Output.Element) throws(PipelineError) {
        try output.write(element)
        guard let checkpointFrames else { return }
        framesSinceCheckpoint += Output.frames(in: element)
        if framesSinceCheckpoint >= checkpointFrames {
            framesSinceCheckpoint = 0
            try output.checkpoint()
        }
    }

    mutating func receive(_ event: StreamEvent) throws(PipelineError) { try output.receive(event) }

    mutating func finish() throws(PipelineError) { try output.finish() }

    mutating func cancel() { output.salvage() }

    /// Removes the output (capture never started).
    mutating func discardOutput() { output.discard() }
}

extension RecordingSink: StageReporting {
    /// The output's stages.
    func appendStages(to stages: inout [JobReport.Stage], elements: Int64, busy: Duration) {
        JobReport.appendStages(of: output, role: .sink, elements: elements, busy: busy, to: &stages)
    }
}

/// An output a recording writes: checkpointed when crash-safe, salvaged on failure.
protocol RecordingOutput: MediaSink where Failure == PipelineError {
    /// Frames an element holds.
    static func frames(in element: Element) -> Int64
    /// Pushes what is written to the file.
    mutating func checkpoint() throws(PipelineError)
    /// Keeps what was written after a failure.
    mutating func salvage()
    /// Removes the output (capture never started).
    mutating func discard()
}

/// Its ``/MediaFormats/AudioPacketOutput/frames(in:)`` counts a packet's frames.
extension AudioPacketOutput: RecordingOutput {}

extension HLSSegmentOutput: RecordingOutput {
    /// Segments are written whole as they are cut: nothing to push.
    mutating func checkpoint() throws(PipelineError) {}
    /// Removes what was written (capture never started).
    mutating func discard() { cancel() }
}

extension PCMFileOutput: RecordingOutput {
    static func frames(in element: PCMBuffer) -> Int64 { Int64(element.frameCount) }
    /// A file written in place keeps what it has.
    mutating func salvage() { cancel() }
}
