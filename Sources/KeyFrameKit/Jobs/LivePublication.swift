public import MediaCore
public import Publishing
public import SystemPackage
internal import AACBitstream
internal import AudioCodec
internal import MediaFormats

/// `keyframe publish`: a file sent to live servers (RTMP, Icecast, SRT) in real time, paced by
/// its sample clock, as `ffmpeg -re` does, to any number of destinations at once.
///
/// Compositions:
/// - AAC in (ADTS, MP4), no bitrate asked, no loop: the packets as they are.
///   `AudioPacketInput` → ``/MediaCore/RealTimeSource`` → `Tee` ─┬─▶ ``/Publishing/LiveDestination`` …
/// - anything else, or a bitrate asked: decoded (the format registry) and encoded once per
///   distinct bitrate.
///   `AudioFileInput` → (``/MediaCore/LoopingSource``) → ``/MediaCore/RealTimeSource`` → `Tee` ─┬─▶ [thread] AAC encoder 64k ─▶ `Tee` ─▶ destinations at 64k
///   `                                                                              `            └─▶ [thread] AAC encoder 128k ─▶ …
///
/// Destinations are expendable branches: one that fails for a passing reason reconnects by
/// itself, one refused for good stops alone; the job fails only when every destination has.
public struct LivePublication: Sendable {
    /// What to publish, where and how.
    public struct Options: Sendable {
        /// The file to send.
        public var input: FilePath
        /// Where to send it.
        public var destinations: [PublishingDestination]
        /// The bitrate to encode at, for destinations that do not say their own; `nil` sends AAC
        /// as it is (and encodes anything else at 128 kb/s).
        public var bitrate: Int?
        /// The stream's title (Icecast's name and song, RTMP's `onMetaData` title); by default
        /// the input's `title` tag.
        public var title: String?
        /// Plays the input again from its start each time it ends, until stopped.
        public var loops = false
        /// Stops after this much audio (the input's, or the loop's).
        public var duration: Duration?
        /// Paces the input by its sample clock (`true`), or sends as fast as it is read (tests).
        public var realTime = true
        /// How much audio each destination queues before dropping the oldest.
        public var queueDuration: Duration = .seconds(5)
        /// Reconnects and timeouts.
        public var reconnectPolicy = ReconnectPolicy()
        /// A PEM file of certificate authorities for `rtmps://` and `icecasts://`.
        public var trustRoots: String?
        /// The AAC profile encoded: AAC-LC (`.aacLC`, the default), HE-AAC v1 (`.sbr`,
        /// ``/AudioCodec/HEAACEncoder``: the input resampled to 16–48 kHz, 64 kb/s stereo by
        /// default), HE-AAC v2 (`.ps`: stereo only, 32 kb/s by default), or `.automatic`: chosen
        /// per bitrate (each destination's, else ``bitrate``) by the input's channels
        /// (``/MediaFormats/AACProfileChoice/automaticObjectType(channelCount:bitrate:sampleRate:)``; no
        /// bitrate is AAC-LC, and an AAC input is then sent as it is). HE-AAC encodes an AAC
        /// input too. A destination that reconnects resumes at the next packet: the encoder is
        /// not told, so a player there gets the AAC-LC core alone until the next SBR header
        /// (every 8 frames, about 0.34 s).
        public var profile: AACProfileChoice = .aacLC
        /// The codec encoded (AAC by default; MP3 or Opus for an Icecast mount): each
        /// destination's protocol must carry it. An input is sent as it is only as AAC.
        public var codec: AudioCodecID = .aac
        /// The rate encoded, in Hz (the input resampled to it); `nil`: the input's (HE-AAC: the
        /// nearest it takes). Given, an AAC input is encoded, not sent as it is.
        public var sampleRate: Int?
        /// The channels encoded (a downmix with ITU-R BS.775 coefficients); `nil`: the input's.
        /// Given, an AAC input is encoded, not sent as it is.
        public var channelCount: Int?

        /// Where a program hands the stream events while it plays (``/MediaCore/StreamEventInlet``):
        /// title changes (``/MediaCore/TimedMetadata/nowPlaying(_:at:)``, times from the
        /// stream's first sample, a looped input's passes counted on). Each destination takes
        /// one when its sample clock reaches it: Icecast and RTMP as a title update, SRT as a
        /// tag of its timed ID3 stream (with ``timedMetadata``).
        public var inlet: StreamEventInlet?
        /// The stream carries timed metadata: an SRT destination's PMT lists a timed ID3 stream.
        public var timedMetadata = false

        /// The codecs the job's encoder comes from (``/AudioCodec/AudioCodecRegistry/standard``
        /// unless a program registers its own in a copy).
        public var codecs: AudioCodecRegistry = .standard
        /// The files the job opens and creates (``/MediaFormats/MediaFormatRegistry`` `standard`
        /// unless a program registers its own in a copy): inputs by what their bytes are,
        /// outputs by their names.
        public var formats: MediaFormatRegistry = .standard

        /// Options to publish `input` to `destinations`.
        public init(input: FilePath, destinations: [PublishingDestination], bitrate: Int? = nil, title: String? = nil, loops: Bool = false) {
            self.input = input
            self.destinations = destinations
            self.bitrate = bitrate
            self.title = title
            self.loops = loops
        }
    }

    /// What was published.
    public struct Summary: JobSummary, Sendable {
        /// Each destination's figures, in the order given.
        public var destinations: [DestinationStatistics.Snapshot]
        /// Seconds of audio sent into the destinations' queues.
        public var seconds: Double
        /// Whether the input's AAC was sent as it is.
        public var copied: Bool
        /// The bitrates encoded (none when copied).
        public var bitrates: [Int]
        /// The profile of each of ``bitrates`` (``Options/profile``, resolved when it is
        /// `.automatic`).
        public var profiles: [AudioObjectType] = []
        /// The codec encoded (AAC when copied).
        public var codec: AudioCodecID = .aac
        /// Passes over the input (more than 1 with ``Options/loops``).
        public var passes: Int
        /// What the pump did.
        public var report: JobReport
    }

    /// The options.
    public let options: Options
    /// Each destination's figures, live, in the order given.
    public let statistics: [DestinationStatistics]

    /// A publication that has not started.
    ///
    /// - Throws: `PipelineError.unsupported` without destinations.
    public init(options: Options) throws(PipelineError) {
        guard !options.destinations.isEmpty else { throw .unsupported("publish: no destination") }
        self.options = options
        statistics = options.destinations.map { DestinationStatistics(destination: $0.maskedURL, scheme: $0.scheme.name) }
    }

    /// The bitrate of each destination: its own, the options', or `nil` (copy).
    private func bitrate(of destination: PublishingDestination) -> Int? { destination.bitrate ?? options.bitrate }

    /// Sends the input until its end (or the duration, or a stop), then ends every destination
    /// cleanly.
    ///
    /// - Throws: the input's errors; `PipelineError.network` when every destination has stopped.
    public func run(control: JobControl? = nil, progress: ((MediaProgress) -> Void)? = nil) throws(PipelineError) -> Summary {
        let format = options.formats.detect(options.input)
        // Packets are copied from ADTS, MP4 or a registered container that reads packets (not
        // from an HLS playlist, which is decoded).
        let readsPackets = format != .hlsPlaylist && options.formats.entry(for: format)?.packetSource != nil
        if let refusing = options.destinations.first(where: { !$0.codecs.isEmpty && !$0.codecs.contains(options.codec) }) {
            let carried = refusing.codecs.map(\.name).sorted().joined(separator: ", ")
            throw .unsupported("\(refusing.maskedURL): \(refusing.scheme.name) carries \(carried), not \(options.codec)")
        }
        if options.codec == .aac, readsPackets, destinationsCarry(codecOf: format), !options.loops, options.profile == .aacLC || options.profile.isAutomatic,
           options.sampleRate == nil, options.channelCount == nil, options.destinations.allSatisfy({ bitrate(of: $0) == nil }) {
            return try copy(control: control, progress: progress)
        }
        return try encode(control: control, progress: progress)
    }

    /// Whether every destination's protocol carries the codec of the input, a file of `format`
    /// read as packets (ADTS and MP4: AAC; a registered container: the codec it says); if not,
    /// the input is decoded and encoded as AAC.
    private func destinationsCarry(codecOf format: MediaFileFormat?) -> Bool {
        let codec: AudioCodecID? = format == .adts || format == .mp4 ? .aac
            : (try? options.formats.packetInput(options.input, options: MediaFormatRegistry.InputOptions(purpose: .remuxing)))?.audioFormat?.codec
        return options.destinations.allSatisfy { destination in
            destination.codecs.isEmpty || codec.map(destination.codecs.contains) == true
        }
    }

    /// The average bitrate of AAC sent as it is, as `probe` measures it: an MP4 track's sample
    /// bytes over its duration, an ADTS stream's frame bytes over its frames' duration; `nil`
    /// when the input has no duration.
    static func averageBitrate(of input: any PacketFileSource) -> Int? {
        guard let input = input as? AudioPacketInput, let source = FileByteSource.regularFile(at: input.path) else { return nil }
        let report: ProbeReport?
        switch input.format {
        case .mp4: report = try? MP4Probe.probe(source)
        default: report = try? ADTSProbe.probe(source)
        }
        let track = report?.tracks.first { $0.type == "audio" && $0.id == Int(input.track?.id ?? 1) } ?? report?.tracks.first { $0.type == "audio" }
        return track?.bitrate.flatMap { $0 > 0 ? $0 : nil }
    }

    private var settings: LiveDestinationSettings {
        LiveDestinationSettings(codecs: options.codecs, queueDuration: options.queueDuration, policy: options.reconnectPolicy, trustRoots: options.trustRoots,
                                title: options.title, timedMetadata: options.timedMetadata)
    }

    /// Packets sent as they are.
    private func copy(control: JobControl?, progress: ((MediaProgress) -> Void)?) throws(PipelineError) -> Summary {
        let input = AnyPacketFileSource(try options.formats.packetInput(options.input,
                                                                        options: MediaFormatRegistry.InputOptions(purpose: .remuxing)))
        // Announced as the input's own (Icecast's ice-bitrate, RTMP's audiodatarate), unless a
        // destination's URL says one.
        var tee = Tee(settings.packetBranches(Array(zip(options.destinations, statistics)), bitrate: Self.averageBitrate(of: input.base)))
        let limit = options.duration.map(\.inSeconds)
        let realTime = options.realTime
        let told = AnnouncingSource(input, announcing: [], inlet: options.inlet)
        var paced = RealTimeSource(PlayingTimeLimit(WatchedInput(told, control: control), limit: limit, duration: { $0.duration.seconds })) { sample in
            realTime ? .nanoseconds(Int64(sample.duration.seconds * 1e9)) : .zero
        }
        let report = try Pump.run(from: &paced, into: &tee, control: control, progress: progress)
        return Summary(destinations: statistics.map(\.snapshot), seconds: paced.base.played, copied: true, bitrates: [], passes: 1,
                       report: report)
    }

    /// Decoded, (looped,) paced, encoded once per bitrate.
    private func encode(control: JobControl?, progress: ((MediaProgress) -> Void)?) throws(PipelineError) -> Summary {
        let path = options.input
        let first = try AudioFileInput(path: path, registry: options.formats)
        guard let inputFormat = first.pcmFormat else { throw .unsupported("\(path): the input's PCM layout is not known") }
        // Each bitrate's profile: `auto` chooses by it and the input's channels (a destination
        // without a bitrate takes the profile's default, and `auto` AAC-LC's).
        let channels = options.channelCount ?? inputFormat.channelCount
        let defaultProfile = options.profile.resolved(channelCount: channels, bitrate: nil)
        let fallback = AACProfiles.defaultBitrate(of: defaultProfile, lc: 128_000)
        let bitrates = Array(Set(options.destinations.map { bitrate(of: $0) ?? fallback })).sorted()
        func profile(at bitrate: Int, asked: Bool) -> AudioObjectType {
            asked ? options.profile.resolved(channelCount: channels, bitrate: bitrate, sampleRate: options.sampleRate ?? inputFormat.sampleRate)
                : defaultProfile
        }
        // HE-AAC takes 16–48 kHz: other rates are resampled (AAC-LC takes the input as it is).
        let chosenProfiles = bitrates.map { bitrate in
            profile(at: bitrate, asked: options.destinations.contains { self.bitrate(of: $0) == bitrate })
        }
        let hasHEAAC = options.codec == .aac && chosenProfiles.contains { $0.usesSpectralBandReplication }
        // The rate and channels asked (checked against what the profiles take), else the input's.
        let resampler: PCMResampler
        if options.sampleRate != nil || options.channelCount != nil {
            resampler = try AACProfiles.resampler(to: options.sampleRate, channelCount: options.channelCount, for: hasHEAAC ? .sbr : .aacLC)
        } else if options.codec != .aac {
            // Another codec takes floats at the rates its encoder entry lists (Opus: 48 kHz).
            resampler = PCMResampler(sampleFormat: .float32, allowedSampleRates: options.codecs.sampleRates(for: options.codec))
        } else {
            resampler = PCMResampler(sampleFormat: hasHEAAC ? .float32 : inputFormat.sampleFormat,
                                     allowedSampleRates: hasHEAAC ? AACProfiles.sampleRates(of: .sbr) : nil)
        }
        let format = resampler.outputFormat(for: inputFormat)
        var branches: [Tee<PCMBuffer>.Branch] = []
        var used: [Int] = []
        for (bitrate, profile) in zip(bitrates, chosenProfiles) {
            let chosen = options.destinations.indices.filter { (self.bitrate(of: options.destinations[$0]) ?? fallback) == bitrate }
            // A bitrate asked is HE-AAC's to take or refuse; a default is fitted to the input.
            let asked = chosen.contains { self.bitrate(of: options.destinations[$0]) != nil }
            let encoder = try settings.encoder(bitrate: bitrate, format: format, profile: profile,
                                               lowersBitrateToFit: !asked || !profile.usesSpectralBandReplication, codec: options.codec)
            used.append(encoder.bitrate)
            branches.append(settings.encodingBranch(encoder: encoder, destinations: chosen.map { (options.destinations[$0], statistics[$0]) }))
        }
        var tee = Tee(branches)
        let limit = options.duration.map(\.inSeconds)
        let realTime = options.realTime
        let pace: (PCMBuffer) -> Duration = { realTime ? .nanoseconds(Int64($0.seconds * 1e9)) : .zero }
        let report: JobReport
        var passes = 1
        let seconds: Double
        if options.loops {
            let looping = LoopingSource(WatchedInput(first, control: control)) { () throws(PipelineError) in
                WatchedInput(try AudioFileInput(path: path, registry: options.formats), control: control)
            }
            var source = RealTimeSource(PlayingTimeLimit(AnnouncingSource(looping, announcing: [], inlet: options.inlet).transformed(by: resampler),
                                                         limit: limit, duration: \.seconds), duration: pace)
            report = try Pump.run(from: &source, into: &tee, control: control, progress: progress)
            passes = source.base.base.upstream.upstream.passCount
            seconds = source.base.played
        } else {
            var source = RealTimeSource(PlayingTimeLimit(AnnouncingSource(WatchedInput(first, control: control), announcing: [], inlet: options.inlet)
                                                            .transformed(by: resampler), limit: limit,
                                                         duration: \.seconds), duration: pace)
            report = try Pump.run(from: &source, into: &tee, control: control, progress: progress)
            seconds = source.base.played
        }
        var summary = Summary(destinations: statistics.map(\.snapshot), seconds: seconds, copied: false, bitrates: used,
                              profiles: options.codec == .aac ? chosenProfiles : [], passes: passes, report: report)
        summary.codec = options.codec
        return summary
    }
}

/// A source that ends once `limit` seconds of its elements have been delivered (the element
/// that reaches it is the last), counting the seconds delivered.
struct PlayingTimeLimit<Base: MediaSource>: MediaSource {
    private(set) var base: Base
    private let limit: Double?
    private let duration: (Base.Element) -> Double
    /// Seconds delivered.
    private(set) var played = 0.0

    init(_ base: Base, limit: Double?, duration: @escaping (Base.Element) -> Double) {
        self.base = base
        self.limit = limit
        self.duration = duration
    }

    mutating func next() throws(Base.Failure) -> Base.Element? {
        if let limit, played >= limit - 1e-9 { return nil }
        guard let element = try base.next() else { return nil }
        played += duration(element)
        return element
    }

    var progress: MediaProgress { base.progress }
    mutating func takeDamage() -> [DamageEvent] { base.takeDamage() }
    mutating func takeEvents() -> [StreamEvent] { base.takeEvents() }
}

extension PlayingTimeLimit: PCMSource where Base: PCMSource {
    var pcmFormat: PCMFormat? { base.pcmFormat }
}

extension PlayingTimeLimit: PacketSource where Base: PacketSource {}
