public import AudioIO
public import SystemPackage

/// What a recording captures and where it goes: a PCM, WAV, ADTS or M4A file, a live HLS
/// rendition, live destinations, or several of them. ``LiveEncoding/init(recording:)``
/// composes it: ``/AudioIO/AudioCaptureSource`` (with a level meter watching) → the registry's
/// encoder (``/AudioCodec/AudioCodecRegistry``; AAC-LC by libavcodec's ``/AudioCodec/AACEncoder``,
/// or HE-AAC; for `.aac`, `.m4a`, HLS and destinations) → a ``/MediaCore/Tee`` of
/// ``/MediaFormats/AudioPacketOutput``, ``/MediaStreaming/HLSSegmentOutput`` and
/// ``/Publishing/LiveDestination``s; or → ``/MediaFormats/PCMFileOutput``. Destinations at a
/// bitrate of their own get an encoder each, on a thread of its own, beside the file's.
///
/// ```
/// capture ──▶ Tee<PCMBuffer> ─┬─▶ encoder ──▶ Tee ─┬─▶ take.m4a (crash-safe: a fragment a second)
///                             │                    ├─▶ live/ (HLS rendition)
///                             │                    └─▶ rtmp://… (expendable)
///                             └─▶ encoder 64k (thread) ──▶ icecast://… (expendable)
/// ```
///
/// The container is a ``/MediaFormats/MediaFileFormat`` (``containers``), by default the one the
/// output's name says (``container(of:)``). The capture thread never waits on the encoder or the
/// disk: the pump thread encodes and writes, and when it falls more than the queue behind,
/// periods are dropped and counted (``RecordingSummary/capture``).
///
/// Files: `.pcm`, `.wav` and `.aac` are written in place as they are recorded (a crash keeps
/// what was flushed); `.m4a` is written under a temporary name and renamed when finished, or,
/// with ``crashSafe``, fragmented in place with one-second fragments, so that a kill (SIGKILL, a
/// crash) loses at most the last second. With ``crashSafe`` the other containers are flushed
/// every second too (and the WAV header updated). Flushing hands the bytes to the kernel; it
/// does not `fsync`, so a power cut can lose what the kernel had not yet written back. The
/// outputs are created once the device is open: a missing or busy device leaves an existing file
/// untouched.
public struct RecordingOptions: Sendable {
    /// The containers a recording writes: ``/MediaFormats/MediaFileFormat/rawPCM`` (exactly the
    /// bytes captured, `.pcm`, `.raw`), ``/MediaFormats/MediaFileFormat/wav``,
    /// ``/MediaFormats/MediaFileFormat/adts`` (AAC-LC, `.aac`), ``/MediaFormats/MediaFileFormat/mp4``
    /// (AAC-LC with a sample-exact edit list, `.m4a`, `.mp4`) and
    /// ``/MediaFormats/MediaFileFormat/hlsPlaylist``: a live HLS rendition in a directory, CMAF
    /// segments each written whole and a playlist rewritten after each
    /// (``/MediaStreaming/HLSSegmentOutput``), never chosen by a name.
    public static let containers: [MediaFileFormat] = [.rawPCM, .wav, .adts, .mp4, .hlsPlaylist] + nativeContainers

    /// The containers of one codec a recording writes whole, under a temporary name renamed when
    /// it ends (a failure commits what was written): MP3 (`.mp3`), Ogg Opus (`.opus`, at
    /// 48 kHz) and FLAC (`.flac`), each its own codec's.
    public static let nativeContainers: [MediaFileFormat] = [.mp3, .oggOpus, .flac]

    /// The file container `path`'s name says (``/MediaFormats/MediaFileFormat/init(nameOf:)``),
    /// if it is one a recording writes: raw PCM, WAV, ADTS or MP4.
    public static func container(of path: FilePath) -> MediaFileFormat? {
        guard let format = MediaFileFormat(nameOf: path), format != .hlsPlaylist, containers.contains(format) else { return nil }
        return format
    }

    /// The output file.
    public var outputPath: FilePath
    /// The output's container, one of ``containers``; by default from
    /// ``outputPath``'s extension (``container(of:)``).
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
    /// The codec of `.m4a` and HLS: AAC (the default), or another the codec registry encodes
    /// and ISO BMFF carries (Opus, which captures at 48 kHz; FLAC and ALAC, lossless). `.aac`
    /// and live destinations take AAC only.
    public var codec: AudioCodecID = .aac
    /// The ALSA PCM name.
    public var device: String
    /// Where to look ``device`` up instead of the system configuration.
    public var alsaConfiguration: ALSAConfiguration?
    /// Record exactly this many frames, then stop; `nil` to record until the job is asked to
    /// stop (``LiveEncoding/requestStop()``).
    public var frameLimit: Int?
    /// Write so that a kill loses at most the last second (see ``RecordingOptions``).
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
    /// The recording carries timed metadata (``LiveEncoding/announce(_:)``): an HLS init
    /// segment lists the `aid3` brand, an SRT destination's PMT a timed ID3 stream. Events
    /// announced are written either way where a format has no such signal.
    public var timedMetadata = false
    /// HLS: remote stores the rendition is copied into as it is written (S3, an HTTP ingest
    /// point), each a ``/MediaStreaming/ObjectStoreReplica`` that never slows the local copy;
    /// the caller finishes them (``/MediaStreaming/ObjectStoreReplica/finish(within:)``) once
    /// the recording has.
    public var hlsReplicas: [ObjectStoreReplica] = []
    /// HLS: a ladder of AAC renditions encoded from the one capture, each by an encoder of its
    /// own on a thread of its own (the first by the recording's), each in a directory of its own
    /// below the HLS directory (``/MediaStreaming/Packaging/LadderRendition/directoryName(ladderCodec:)``:
    /// `64k`), with `master.m3u8` naming them (``LiveLadderMaster``). Empty: one rendition in
    /// the HLS directory itself. A ladder records HLS alone (no file beside).
    public var hlsLadder: [Packaging.LadderRendition] = []
    /// Silence before each ladder rendition's first sample (its encoder's priming short of the
    /// ladder's largest), so that every rendition's segments start and end at the same times
    /// (``alignedForLadder()``).
    var ladderLeadingSilence: [Int] = []
    /// HLS: what the segments are made of (packed audio: AAC in ADTS, no parts).
    public var hlsSegmentFormat: HLSSegmentFormat = .cmaf
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
    /// (``containers``).
    public init(outputPath: FilePath, configuration: AudioConfiguration = .default, bitrate: Int = 128_000,
                coder: AACEncoder.Coder = .fast, device: String = "default", alsaConfiguration: ALSAConfiguration? = nil, frameLimit: Int? = nil,
                crashSafe: Bool = false, periodFrames: Int? = nil, queueCapacity: Int = 250,
                container explicit: MediaFileFormat? = nil) throws(PipelineError) {
        if let explicit, !RecordingOptions.containers.contains(explicit) {
            throw .unsupported("\(outputPath): a recording cannot write \(explicit); it writes "
                               + RecordingOptions.containers.map(\.description).joined(separator: ", "))
        }
        guard let container = explicit ?? RecordingOptions.container(of: outputPath) else {
            throw .unsupported("\(outputPath): unknown output type; use \(MediaFileFormat.extensionList(holding: [.pcm, .audioPackets]))")
        }
        self.outputPath = outputPath
        self.container = container
        // A native container's codec is its own (MP3, Opus, FLAC).
        if RecordingOptions.nativeContainers.contains(container), let own = container.defaultAudioCodec { codec = own }
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


extension RecordingOptions {
    /// The device and format captured.
    public var capture: LiveEncoding.Capture {
        LiveEncoding.Capture(audio: configuration, device: device, alsaConfiguration: alsaConfiguration, periodFrames: periodFrames,
                             queueCapacity: queueCapacity, frameLimit: frameLimit)
    }

    /// The profile of the file's and the rendition's encoder: ``profile`` resolved for the
    /// capture's channels and ``bitrate`` (AAC-LC's default when it is one).
    public var resolvedProfile: AudioObjectType {
        profile.resolved(channelCount: configuration.channelCount, bitrate: lowersBitrateToFit ? nil : bitrate,
                         sampleRate: configuration.sampleRate)
    }

    /// A figure-keeper for each live destination, in the order of ``destinations``.
    func destinationStatistics() -> [DestinationStatistics] {
        destinations.map { DestinationStatistics(destination: $0.maskedURL, scheme: $0.scheme.name) }
    }

    /// Refuses options no recording can honour: destinations without AAC, nothing to write, an
    /// HLS rendition beside a PCM file.
    func check() throws(PipelineError) {
        let native = RecordingOptions.nativeContainers.contains(container)
        if native {
            guard let own = container.defaultAudioCodec, codec == own else {
                throw .unsupported("\(outputPath): \(container) holds \(container.defaultAudioCodec?.name ?? "its own codec"), not \(codec)")
            }
            guard !crashSafe else {
                throw .unsupported("\(outputPath): \(container) is written whole and committed when the recording ends; crash-safe "
                                   + "recording writes .m4a (fragmented), .aac, .wav or .pcm")
            }
            guard hlsDirectory == nil else { throw .unsupported("an HLS rendition beside the file needs an .aac or .m4a file (\(outputPath) is \(container))") }
        }
        if codec != .aac {
            guard container == .mp4 || container == .hlsPlaylist || native else {
                throw .unsupported("\(outputPath): a recording writes \(codec) into .m4a or HLS (\(container) holds AAC or PCM)")
            }
            guard destinations.isEmpty else {
                throw .unsupported("live destinations take AAC from a recording; \(codec) goes to the file and HLS only")
            }
            guard profile == .aacLC || profile.isAutomatic else { throw .unsupported("the profile \(profile) is AAC's; \(codec) has none") }
            if !native { _ = try Packaging.checkCarried(codec, codecs: codecs) }
            if let rates = codecs.sampleRates(for: codec), !rates.contains(configuration.sampleRate) {
                throw .unsupported("\(codec) records at \(rates.map(String.init).joined(separator: " or ")) Hz, not at the capture rate of "
                                   + "\(configuration.sampleRate) Hz")
            }
        }
        guard destinations.isEmpty || container.contents.contains(.audioPackets) else {
            throw .unsupported("live destinations need AAC: record to .aac, .m4a or --hls (\(outputPath) is \(container))")
        }
        guard writesFile || !destinations.isEmpty || container == .hlsPlaylist else {
            throw .unsupported("a recording that writes no file needs live destinations")
        }
        guard hlsDirectory == nil || container == .adts || container == .mp4 else {
            throw .unsupported("an HLS rendition beside the file needs an .aac or .m4a file (\(outputPath) is \(container))")
        }
        if !hlsLadder.isEmpty {
            guard container == .hlsPlaylist, hlsDirectory == nil else { throw .unsupported("a live ladder records HLS alone, without a file beside") }
            guard codec == .aac, hlsLadder.allSatisfy({ ($0.codec ?? .aac) == .aac && $0.bitrate != nil }) else {
                throw .unsupported("a live ladder is AAC's: each rendition a bitrate, with an optional profile (32k:auto, 64k:he-aac)")
            }
            let names = hlsLadder.map { $0.directoryName(ladderCodec: .aac) }
            guard Set(names).count == names.count else { throw .unsupported("a live ladder names each bitrate once (\(names.joined(separator: ",")))") }
        }
    }

    /// The AAC profile a ladder rendition takes: its own, else the recording's, resolved for its
    /// bitrate (`auto`: HE-AAC v2, v1 or AAC-LC by the bitrate, as ``/AudioCodec/AACProfiles`` chooses).
    func profile(of rendition: Packaging.LadderRendition) -> AudioObjectType {
        (rendition.profile ?? profile).resolved(channelCount: configuration.channelCount, bitrate: rendition.bitrate,
                                                sampleRate: configuration.sampleRate)
    }

    /// The options a ladder records with: the segment duration a whole number of every
    /// rendition's packets (HE-AAC's 2048 frames beside AAC-LC's 1024), and each rendition's
    /// leading silence (``ladderLeadingSilence``), found from throwaway encoders (which also
    /// says a bitrate or rate one refuses before anything is opened). As a VOD ladder is cut
    /// (``/MediaStreaming/Packaging``).
    func alignedForLadder() throws(PipelineError) -> RecordingOptions {
        guard !hlsLadder.isEmpty else { return self }
        var options = self
        let profiles = hlsLadder.map(profile(of:))
        let lengths = Set(profiles.map { AACProfiles.framesPerPacket(of: $0) })
        let common = lengths.reduce(1) { lcm, length in lcm / Int(greatestCommonDivisor(UInt64(lcm), UInt64(length))) * length }
        options.hlsSegmentDuration = .seconds(Packaging.ladderSegmentDuration(hlsSegmentDuration.inSeconds, frames: common,
                                                                              sampleRate: configuration.sampleRate))
        var primings: [Int] = []
        for (rendition, profile) in zip(hlsLadder, profiles) {
            primings.append(try options.aacEncoder(bitrate: rendition.bitrate ?? bitrate, profile: profile, lowersBitrateToFit: false).priming)
        }
        let largest = primings.max() ?? 0
        options.ladderLeadingSilence = primings.map { largest - $0 }
        return options
    }

    /// An encoder for each ladder rendition after the first, opened, so that one the codec
    /// refuses is an error before the device or a file is touched.
    func ladderEncoders() throws(PipelineError) -> [any AudioEncoder] {
        try hlsLadder.indices.dropFirst().map { index throws(PipelineError) in
            try aacEncoder(bitrate: hlsLadder[index].bitrate ?? bitrate, profile: profile(of: hlsLadder[index]), lowersBitrateToFit: false,
                           leadingSilence: ladderLeadingSilence.indices.contains(index) ? ladderLeadingSilence[index] : 0)
        }
    }

    /// The bitrates destinations ask for other than ``bitrate``: each gets an encoder of its own.
    var otherBitrates: [Int] {
        Set(destinations.compactMap(\.bitrate)).subtracting([bitrate]).sorted()
    }

    /// The profile a destination's own `bitrate` takes: `auto` chooses by it; HE-AAC takes or
    /// refuses it.
    func profile(forDestinationBitrate bitrate: Int) -> AudioObjectType {
        profile.resolved(channelCount: configuration.channelCount, bitrate: bitrate, sampleRate: configuration.sampleRate)
    }

    /// The settings the live destinations share.
    var destinationSettings: LiveDestinationSettings {
        LiveDestinationSettings(codecs: codecs, queueDuration: publishQueueDuration, policy: reconnectPolicy, trustRoots: trustRoots,
                                title: publishTitle, timedMetadata: timedMetadata)
    }

    /// An encoder for each destination bitrate of its own (``otherBitrates``), opened, so that
    /// one the codec refuses is an error before the device or a file is touched.
    func destinationEncoders() throws(PipelineError) -> [any AudioEncoder] {
        var encoders: [any AudioEncoder] = []
        for bitrate in otherBitrates {
            let profile = profile(forDestinationBitrate: bitrate)
            encoders.append(try destinationSettings.encoder(bitrate: bitrate, format: configuration.pcmFormat, coder: coder, profile: profile,
                                                            lowersBitrateToFit: !profile.usesSpectralBandReplication))
        }
        return encoders
    }

    /// The file's and the rendition's encoder, opened (an unsupported format or bitrate is an
    /// error before the device or a file is touched); `nil` for PCM. With HE-AAC and a live
    /// rendition, the packets that start its segments (and parts) carry an SBR header, so that
    /// a player joining there gets the full band at once.
    func encoder() throws(PipelineError) -> (any AudioEncoder)? {
        guard container.contents.contains(.audioPackets) else { return nil }
        if codec != .aac {
            do {
                return try codecs.encoder(for: codec, settings: .init(bitrate: lowersBitrateToFit ? Transcode.defaultBitrate : bitrate,
                                                                      lowersBitrateToFit: lowersBitrateToFit, format: configuration.pcmFormat))
            } catch {
                throw .codec(error)
            }
        }
        if let first = hlsLadder.first {
            return try aacEncoder(bitrate: first.bitrate ?? bitrate, profile: profile(of: first), lowersBitrateToFit: false,
                                  leadingSilence: ladderLeadingSilence.first ?? 0)
        }
        return try aacEncoder(bitrate: bitrate, profile: resolvedProfile, lowersBitrateToFit: lowersBitrateToFit)
    }

    /// An AAC encoder of `profile` at `bitrate`, opened; with HE-AAC and a live rendition, its
    /// segments' (and parts') first packets carry an SBR header; `leadingSilence` frames of
    /// silence go before the first sample.
    func aacEncoder(bitrate: Int, profile: AudioObjectType, lowersBitrateToFit: Bool, leadingSilence: Int = 0) throws(PipelineError) -> any AudioEncoder {
        let rates = AACProfiles.sampleRates(of: profile)
        if profile.usesSpectralBandReplication, !rates.contains(configuration.sampleRate) {
            throw .unsupported("HE-AAC records at \(rates.map(String.init).joined(separator: ", ")) Hz; "
                               + "the capture rate is \(configuration.sampleRate) Hz: choose one of those (--sample-rate) or AAC-LC")
        }
        let encoder: any AudioEncoder
        do {
            encoder = try codecs.encoder(for: .aac, profile: profile, settings: .init(
                bitrate: profile.usesSpectralBandReplication && lowersBitrateToFit ? AACProfiles.defaultBitrate(of: profile) : bitrate,
                lowersBitrateToFit: lowersBitrateToFit, format: configuration.pcmFormat, aac: .init(coder: coder)))
        } catch {
            throw .codec(error)
        }
        guard profile.usesSpectralBandReplication, container == .hlsPlaylist || hlsDirectory != nil else {
            return Packaging.aligned(encoder, interval: nil, leadingSilence: leadingSilence)
        }
        let interval = HLSSegmentOutput.randomAccessInterval(
            segmentDuration: hlsSegmentDuration.inSeconds, live: true, partDuration: hlsPartDuration.map(\.inSeconds),
            packetFrames: AACProfiles.framesPerPacket(of: profile), sampleRate: configuration.sampleRate)
        return Packaging.aligned(encoder, interval: interval, leadingSilence: leadingSilence)
    }

    /// What makes the outputs once the device is open: the file and the rendition (required),
    /// the destinations at the file's `bitrate` (expendable) behind the encoder, and an encoder
    /// per other bitrate beside it. Each output removes what it made when a later one cannot
    /// be made.
    func sinks(encoderBitrate: Int?, statistics: [DestinationStatistics],
               destinationEncoders: consuming [any AudioEncoder], ladderEncoders: consuming [any AudioEncoder] = []) -> LiveEncoding.SinkFactory {
        let options = self
        let encoders = destinationEncoders.map { Transfer($0) }
        let ladder = ladderEncoders.map { Transfer($0) }
        return { (progress: LiveEncoding.Progress) throws(PipelineError) -> LiveEncoding.Sinks in
            let checkpointFrames = options.crashSafe ? Int64(options.configuration.sampleRate) : nil
            guard options.container.contents.contains(.audioPackets) else {
                let output = try options.formats.pcmOutput(options.outputPath, as: PCMFileOutput.self, options: MediaFormatRegistry.OutputOptions(
                    inPlace: true, emptyMessage: "\(options.outputPath): nothing was recorded", format: options.container))
                return LiveEncoding.Sinks(pcm: [Tee.Branch(RecordingSink(output, checkpointFrames: checkpointFrames), name: "file")])
            }
            // Program date-times from the capture clock: the first frame's wall-clock time.
            let makeRendition = { (directory: FilePath, prefix: String) throws(PipelineError) -> HLSSegmentOutput in
                var live = HLSSegmentOutput.Live(window: options.hlsWindow, startDate: options.hlsStartDate.map(\.inSeconds),
                                                 partDuration: options.hlsPartDuration.map(\.inSeconds),
                                                 publication: options.hlsPublication, clock: { progress.captureStart })
                live.replicas = options.hlsReplicas
                live.replicaPrefix = prefix
                return try HLSSegmentOutput(
                    directory: directory, segmentDuration: options.hlsSegmentDuration.inSeconds,
                    live: live,
                    audioCodecs: options.codecs.descriptions, timedMetadata: options.timedMetadata,
                    segmentFormat: options.hlsSegmentFormat)
            }
            let makeHLS = { (directory: FilePath) throws(PipelineError) -> RecordingSink<HLSSegmentOutput> in
                RecordingSink(try makeRendition(directory, ""), checkpointFrames: nil)
            }
            // The rendition first: a directory that holds a package is refused before the file,
            // which an in-place output would truncate, is opened.
            var made = LiveEncoding.Sinks()
            do throws(PipelineError) {
                if !options.hlsLadder.isEmpty {
                    // The ladder: the recording's encoder feeds the first rendition, an encoder
                    // of its own each other one; master.m3u8 names them.
                    let directory = options.outputPath
                    if !FileSystemCalls.exists(directory) {
                        do throws(Errno) { try FileSystemCalls.makeDirectories(directory) } catch {
                            throw PipelineError.stream(.system(operation: "make the directory", path: directory, errno: error))
                        }
                    }
                    guard !FileSystemCalls.exists(directory.appending("master.m3u8")) else {
                        throw PipelineError.unsupported("\(directory) already holds a package (master.m3u8); choose another directory or remove it")
                    }
                    let names = options.hlsLadder.map { $0.directoryName(ladderCodec: .aac) }
                    let rungs = zip(options.hlsLadder, names).map { rendition, name in
                        LiveLadderMaster.Rung(directory: name, bitrate: rendition.bitrate ?? options.bitrate,
                                              codecs: "mp4a.40.\(options.profile(of: rendition).rawValue)",
                                              channelCount: options.configuration.channelCount, timescale: options.configuration.sampleRate)
                    }
                    let master = LiveLadderMaster(directory: directory, rungs: rungs, replicas: options.hlsReplicas)
                    let first = LiveLadderRendition(try makeRendition(directory.appending(names[0]), names[0] + "/"), index: 0, master: master)
                    made.packets.append(Tee.Branch(RecordingSink(first, checkpointFrames: nil), name: names[0]))
                    for (index, encoder) in ladder.enumerated() {
                        let name = names[index + 1]
                        let rendition = LiveLadderRendition(try makeRendition(directory.appending(name), name + "/"), index: index + 1, master: master)
                        made.pcm.append(LiveDestinationSettings.threadedBranch(
                            encoder: encoder.take(), into: Tee([Tee.Branch(RecordingSink(rendition, checkpointFrames: nil), name: name)]),
                            name: name, policy: .required))
                    }
                } else if options.container == .hlsPlaylist {
                    made.packets.append(Tee.Branch(try makeHLS(options.outputPath), name: "hls"))
                } else if let directory = options.hlsDirectory {
                    made.packets.append(Tee.Branch(try makeHLS(directory), name: "hls"))
                }
                if options.writesFile, RecordingOptions.nativeContainers.contains(options.container) {
                    let file = try options.formats.packetOutput(options.outputPath, options: .init(
                        encoderName: Transcode.encoderName(of: options.codec),
                        format: options.container))
                    made.packets.insert(Tee.Branch(RecordingSink(NativeRecordingFile(file), checkpointFrames: nil), name: "file"), at: 0)
                } else if options.writesFile, options.container != .hlsPlaylist {
                    let file = try options.formats.packetOutput(options.outputPath, as: AudioPacketOutput.self, options: .init(
                        fragmentDuration: options.crashSafe && options.container == .mp4 ? MediaTime(value: 1, timescale: 1) : nil,
                        inPlace: true, encoderName: Transcode.encoderName(of: options.codec),
                        format: options.container))
                    made.packets.insert(Tee.Branch(RecordingSink(file, checkpointFrames: checkpointFrames), name: "file"), at: 0)
                }
                let settings = options.destinationSettings
                let asked = options.bitrate
                let destinations = Array(zip(options.destinations, statistics))
                made.packets += settings.packetBranches(destinations.filter { ($0.0.bitrate ?? asked) == asked }, bitrate: encoderBitrate)
                // One encoder per other bitrate, opened with the options, each on a thread of its own.
                for (bitrate, encoder) in zip(options.otherBitrates, encoders) {
                    made.pcm.append(settings.encodingBranch(encoder: encoder.take(), destinations: destinations.filter { $0.0.bitrate == bitrate }))
                }
            } catch {
                made.cancel()
                throw error
            }
            return made
        }
    }
}

extension LiveEncoding {
    /// A recording (``RecordingOptions``): its encoder is opened now, so an unsupported format
    /// or bitrate is an error before the device or a file is touched; its outputs are created
    /// by ``start()`` once the device is open. ``destinations`` keeps each live destination's
    /// figures, in the order of ``RecordingOptions/destinations``.
    ///
    /// ```swift
    /// let options = try RecordingOptions(outputPath: "take.m4a", frameLimit: 30 * 44_100, crashSafe: true)
    /// let live = try LiveEncoding(recording: options)
    /// let summary = RecordingSummary(options, of: live, summary: try await live.run())
    /// ```
    ///
    /// - Throws: `PipelineError.unsupported` for options no recording can honour;
    ///   `PipelineError.codec` when the encoder refuses the format or bitrate.
    public convenience init(recording asked: RecordingOptions) throws(PipelineError) {
        try asked.check()
        let options = try asked.alignedForLadder()
        let statistics = options.destinationStatistics()
        let encoder = try options.encoder()
        let destinationEncoders = try options.destinationEncoders()
        let ladderEncoders = try options.ladderEncoders()
        let bitrate = encoder?.bitrate
        try self.init(capture: options.capture, encoder: encoder,
                      makeSinks: options.sinks(encoderBitrate: bitrate, statistics: statistics, destinationEncoders: destinationEncoders,
                                               ladderEncoders: ladderEncoders),
                      destinations: statistics)
    }
}

/// What was recorded.
public struct RecordingSummary: JobSummary, Sendable {
    /// The file written.
    public var outputPath: FilePath
    /// Its container (one of ``RecordingOptions/containers``).
    public var container: MediaFileFormat
    /// The live HLS rendition written beside the file, if one was (``RecordingOptions/hlsDirectory``).
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
    public var stopReason: LiveCaptureJob.StopReason
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
    /// Whether ``outputPath`` was written (``RecordingOptions/writesFile``).
    public var writesFile = true
    /// The AAC profile of the file and rendition (``RecordingOptions/profile``, resolved when it is
    /// `.automatic`); `nil` for PCM.
    public var profile: AudioObjectType?
    /// The bitrate of the file's and the rendition's encoder; `nil` for PCM (0 for a lossless codec).
    public var bitrate: Int?
    /// The codec of the file and rendition (``RecordingOptions/codec``); `nil` for PCM.
    public var codec: AudioCodecID?

    /// Seconds of audio in the file.
    public var seconds: Double { Double(frames) / Double(max(format.sampleRate, 1)) }
    /// Whether any audio was lost: device xruns or dropped periods.
    public var hasOverruns: Bool { capture.deviceXruns > 0 || capture.lostFrames > 0 || capture.consumerOverruns > 0 }
}


extension RecordingSummary {
    /// What `live`, a recording of `options`, did: `summary` is what its ``LiveEncoding/finish()``
    /// or ``LiveEncoding/run()`` returned.
    public init(_ options: RecordingOptions, of live: LiveEncoding, summary: LiveEncoding.Summary) {
        let encodes = options.container.contents.contains(.audioPackets)
        self.init(outputPath: options.outputPath, container: options.container, hlsDirectory: options.hlsDirectory, device: options.device,
                  format: options.configuration.pcmFormat, periodFrames: live.parameters?.periodFrames ?? 0, frames: summary.frames,
                  stopReason: summary.captureFailure != nil ? .device : live.job.stopReason ?? .requested, capture: summary.capture,
                  deviceFailure: summary.captureFailure, levels: summary.levels, priming: summary.priming, padding: summary.padding,
                  report: summary.report, destinations: live.destinations.map(\.snapshot), writesFile: options.writesFile,
                  profile: encodes && options.codec == .aac ? options.hlsLadder.first.map(options.profile(of:)) ?? options.resolvedProfile : nil,
                  bitrate: live.bitrate,
                  codec: encodes ? options.codec : nil)
    }
}

/// A recording's output: checkpoints every second of audio when crash-safe, and keeps what was
/// written when the pump fails (``MediaSink/cancel()`` salvages instead of removing).
///
/// Cancelled before anything was written (the capture did not start), it removes the output.
struct RecordingSink<Output: RecordingOutput>: MediaSink {
    private var output: Output
    private let checkpointFrames: Int64?
    private var framesSinceCheckpoint: Int64 = 0
    private var wrote = false

    init(_ output: Output, checkpointFrames: Int64?) {
        self.output = output
        self.checkpointFrames = checkpointFrames
    }

    mutating func write(_ element: Output.Element) throws(PipelineError) {
        try output.write(element)
        wrote = true
        guard let checkpointFrames else { return }
        framesSinceCheckpoint += Output.frames(in: element)
        if framesSinceCheckpoint >= checkpointFrames {
            framesSinceCheckpoint = 0
            try output.checkpoint()
        }
    }

    mutating func receive(_ event: StreamEvent) throws(PipelineError) { try output.receive(event) }

    /// Finishes the output; one that cannot be finished keeps what was written.
    mutating func finish() throws(PipelineError) {
        do { try output.finish() } catch {
            output.salvage()
            throw error
        }
    }

    mutating func cancel() {
        if wrote { output.salvage() } else { output.discard() }
    }
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

/// A native file a recording writes (``RecordingOptions/nativeContainers``): under a temporary
/// name, committed when the recording ends; a failure commits what was written, which plays
/// (its frames or pages are whole); a recording that never started removes it.
struct NativeRecordingFile: RecordingOutput {
    private var file: any PacketFileSink

    init(_ file: any PacketFileSink) { self.file = file }

    static func frames(in element: MediaSample) -> Int64 { AudioPacketOutput.frames(in: element) }
    mutating func write(_ element: MediaSample) throws(PipelineError) { try file.write(element) }
    mutating func receive(_ event: StreamEvent) throws(PipelineError) { try file.receive(event) }
    mutating func finish() throws(PipelineError) { try file.finish() }
    mutating func cancel() { file.cancel() }
    /// Written whole at the end: nothing to push before.
    mutating func checkpoint() throws(PipelineError) {}
    mutating func salvage() {
        if (try? file.finish()) == nil { file.cancel() }
    }
    mutating func discard() { file.cancel() }
}

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
