public import AACBitstream
public import MediaCore
internal import AudioBitstreams

/// Encoders and decoders, registered by codec (``/MediaCore/AudioCodecID``) and profile (the
/// MPEG-4 audio object type, ISO/IEC 14496-3 1.5.1.1): jobs ask for an encoder of a codec and
/// profile and get one, so that a new profile (HE-AAC: SBR, object type 5; HE-AAC v2: PS, 29)
/// or a new codec is one more entry, not one more branch in every job.
///
/// A registry is a value. ``standard`` holds KeyFrameKit's codecs (``registerAll()``); a
/// program that adds its own copies it, registers them, and hands the copy to the jobs that
/// should use them, leaving every other job as it was:
///
/// ```swift
/// var codecs = AudioCodecRegistry.standard
/// codecs.register(AudioCodecRegistry.EncoderEntry(codec: .init("my-codec"), profile: .aacLC, name: "mine") { settings in
///     try MyEncoder(settings)
/// })
/// ```
public struct AudioCodecRegistry: Sendable {
    /// What an encoder is made with.
    public struct EncoderSettings: Sendable, Hashable {
        /// The bitrate in bits per second.
        public var bitrate: Int
        /// Lower a default ``bitrate`` to what the input's rate and channels allow.
        public var lowersBitrateToFit: Bool
        /// What only AAC's encoders read.
        public var aac: AAC
        /// Encoders running at once on one stream (``ParallelAACEncoder`` above 1).
        public var threads: Int
        /// The PCM layout, when known before the first buffer (the encoder opens at once).
        public var format: PCMFormat?
        /// The job's control, which an encoder that works on other threads asks while it works,
        /// so that a cancelled job stops within a fraction of a second rather than when its
        /// segments are done (``ParallelAACEncoder``); `nil` for none.
        public var control: JobControl?

        /// Settings: `bitrate`, one thread; for AAC, the two-loop search.
        public init(bitrate: Int, lowersBitrateToFit: Bool = false, threads: Int = 1, format: PCMFormat? = nil,
                    control: JobControl? = nil, aac: AAC = AAC()) {
            self.bitrate = bitrate
            self.lowersBitrateToFit = lowersBitrateToFit
            self.aac = aac
            self.threads = threads
            self.format = format
            self.control = control
        }

        /// Settings with the AAC search given beside the others, as before ``aac`` held it.
        @available(*, deprecated, message: "give the search as aac: .init(coder:)")
        public init(bitrate: Int, lowersBitrateToFit: Bool = false, coder: AACEncoder.Coder, threads: Int = 1,
                    format: PCMFormat? = nil, control: JobControl? = nil) {
            self.init(bitrate: bitrate, lowersBitrateToFit: lowersBitrateToFit, threads: threads, format: format, control: control,
                      aac: AAC(coder: coder))
        }

        /// The AAC scale-factor search (``aac``'s).
        @available(*, deprecated, renamed: "aac.coder")
        public var coder: AACEncoder.Coder {
            get { aac.coder }
            set { aac.coder = newValue }
        }

        /// The settings only AAC's encoders read; an encoder of another codec ignores them.
        public struct AAC: Sendable, Hashable {
            /// The scale-factor search (libavcodec's `aac_coder`).
            public var coder: AACEncoder.Coder

            /// AAC settings; by default the two-loop search.
            public init(coder: AACEncoder.Coder = .twoLoop) { self.coder = coder }
        }
    }

    /// An encoder the registry can make.
    public struct EncoderEntry: Sendable {
        /// The codec it writes.
        public let codec: AudioCodecID
        /// The AAC profile (audio object type) it writes; `nil` for a codec without profiles,
        /// whose entry answers whatever profile is asked.
        public let profile: AudioObjectType?
        /// What it is, for people (`libavcodec aac`).
        public let name: String
        /// The sample rates it encodes, when it takes only some (Opus: 48, 24, 16, 12, 8 kHz):
        /// a job resamples an input at another rate to the nearest
        /// (``PCMResampler/nearestRate(to:in:)``). `nil` for any rate, or one the encoder
        /// checks itself.
        public let sampleRates: [Int]?
        /// Makes one.
        public let make: @Sendable (EncoderSettings) throws(CodecError) -> any AudioEncoder

        /// An entry for `codec` in `profile` (none for a codec without profiles), named `name`,
        /// taking `sampleRates` (`nil`: any), made by `make`.
        public init(codec: AudioCodecID, profile: AudioObjectType? = nil, name: String, sampleRates: [Int]? = nil,
                    make: @escaping @Sendable (EncoderSettings) throws(CodecError) -> any AudioEncoder) {
            self.codec = codec
            self.profile = profile
            self.name = name
            self.sampleRates = sampleRates
            self.make = make
        }
    }

    /// What a decoder is made with.
    public struct DecoderSettings: Sendable, Hashable {
        /// The stream's AudioSpecificConfig (ISO/IEC 14496-3, 1.6.2.1), or `nil` for ADTS frames,
        /// whose headers configure the decoder, and for other codecs.
        public var audioSpecificConfig: AudioSpecificConfig?
        /// The stream as its container describes it (codec, rate, channels, the codec's
        /// configuration bytes), when it does: what a decoder of another codec is configured by.
        public var stream: EncodedAudioFormat?
        /// The PCM sample type written: `.int16`, `.int32` or `.float32`.
        public var outputSampleFormat: PCMSampleFormat
        /// What to drop of the decoded samples (the priming) and where to stop.
        public var trim: GaplessTrim

        /// Settings: `audioSpecificConfig`, by default 16-bit output and no trim.
        public init(audioSpecificConfig: AudioSpecificConfig?, outputSampleFormat: PCMSampleFormat = .int16, trim: GaplessTrim = .none) {
            self.audioSpecificConfig = audioSpecificConfig
            self.stream = nil
            self.outputSampleFormat = outputSampleFormat
            self.trim = trim
        }
    }

    /// A decoder the registry can make, for every profile it lists.
    public struct DecoderEntry: Sendable {
        /// The codec it reads.
        public let codec: AudioCodecID
        /// The AAC profiles (audio object types) it decodes; empty for a codec without
        /// profiles, whose entry answers whatever profile is asked.
        public let profiles: Set<AudioObjectType>
        /// What it is, for people.
        public let name: String
        /// Makes one.
        public let make: @Sendable (DecoderSettings) throws(CodecError) -> any AudioDecoder

        /// An entry for `codec` in `profiles` (none for a codec without profiles), named `name`,
        /// made by `make`.
        public init(codec: AudioCodecID, profiles: Set<AudioObjectType> = [], name: String,
                    make: @escaping @Sendable (DecoderSettings) throws(CodecError) -> any AudioDecoder) {
            self.codec = codec
            self.profiles = profiles
            self.name = name
            self.make = make
        }
    }

    /// The encoders registered, the latest first.
    public private(set) var encoders: [EncoderEntry] = []

    /// The decoders registered, the latest first.
    public private(set) var decoders: [DecoderEntry] = []

    /// What containers and playlists need of each codec (its MP4 sample entry, RFC 6381 name,
    /// roll and packet duration), the latest registered first: what the MP4 muxer, the CMAF
    /// segmenter and the manifests of a job using this registry are given.
    public private(set) var descriptions: [AudioCodecDescription] = []

    /// An empty registry.
    public init() {}

    /// KeyFrameKit's registry: every codec it has (``registerAll()``). A job's encoders come from
    /// it unless the job is given another (its options' `codecs`); decoders that a file format's
    /// entry opens come from it.
    public static let standard: AudioCodecRegistry = {
        var registry = AudioCodecRegistry()
        registry.registerAll()
        return registry
    }()

    /// Registers KeyFrameKit's encoders, decoders and codec descriptions (``builtInEncoders``,
    /// ``builtInDecoders``, ``builtInDescriptions``): the one place that lists them. An entry
    /// already registered (the same codec, profile and name; a description of the same codec
    /// and sample entry) is not registered twice, so calling it on a copy of ``standard``
    /// changes nothing.
    public mutating func registerAll() {
        for description in Self.builtInDescriptions.reversed()
        where !descriptions.contains(where: { $0.codec == description.codec && $0.sampleEntryType == description.sampleEntryType }) {
            register(description)
        }
        for entry in Self.builtInEncoders.reversed()
        where !encoders.contains(where: { $0.codec == entry.codec && $0.profile == entry.profile && $0.name == entry.name }) {
            register(entry)
        }
        for entry in Self.builtInDecoders.reversed()
        where !decoders.contains(where: { $0.codec == entry.codec && $0.profiles == entry.profiles && $0.name == entry.name }) {
            register(entry)
        }
    }

    /// Registers `entry`: it is asked before the encoders registered earlier, so an encoder for
    /// a new profile (HE-AAC, object type 5) or a better one for a known profile is one call.
    public mutating func register(_ entry: EncoderEntry) { encoders.insert(entry, at: 0) }

    /// Registers `entry`: it is asked before the decoders registered earlier.
    public mutating func register(_ entry: DecoderEntry) { decoders.insert(entry, at: 0) }

    /// Registers what containers and playlists need of a codec: it is taken before a
    /// description of the same codec registered earlier.
    public mutating func register(_ description: AudioCodecDescription) { descriptions.insert(description, at: 0) }

    /// The built-in codec descriptions: AAC's (`AudioCodecDescription.aac`, AACBitstream);
    /// Opus's, FLAC's and ALAC's (`opus`, `flac`, `alac`, AudioBitstreams).
    public static let builtInDescriptions: [AudioCodecDescription] = [.aac, .opus, .flac, .alac]

    /// The built-in encoders: AAC-LC on libavcodec's native encoder (``AACEncoder``, or
    /// ``ParallelAACEncoder`` for more than one thread), HE-AAC v1 and v2 (``HEAACEncoder``);
    /// MP3, Opus, FLAC and ALAC through libavcodec (``LibavcodecAudioEncoder``).
    public static let builtInEncoders: [EncoderEntry] = [
        EncoderEntry(codec: .aac, profile: .aacLC, name: "libavcodec aac") { settings throws(CodecError) -> any AudioEncoder in
            try ParallelAACEncoder.makeEncoder(profile: .aacLC, settings: settings)
        },
        // HE-AAC v1: KeyFrameKit's SBR over the same core at half the rate (segment-parallel
        // with more than one thread, each splice on an independent SBR frame).
        EncoderEntry(codec: .aac, profile: .sbr, name: "KeyFrameKit SBR over libavcodec aac") { settings throws(CodecError) -> any AudioEncoder in
            try ParallelAACEncoder.makeEncoder(profile: .sbr, settings: settings)
        },
        // HE-AAC v2: a mono downmix coded as HE-AAC v1 plus KeyFrameKit's parametric stereo.
        EncoderEntry(codec: .aac, profile: .ps, name: "KeyFrameKit PS and SBR over libavcodec aac") { settings throws(CodecError) -> any AudioEncoder in
            try ParallelAACEncoder.makeEncoder(profile: .ps, settings: settings)
        },
    ] + [LibavcodecAudioEncoder.Configuration.mp3, .opus, .flac, .alac].map { configuration in
        // MP3 (LAME), Opus (libopus), FLAC and ALAC through libavcodec.
        EncoderEntry(codec: configuration.codec, name: "libavcodec \(configuration.encoderName)",
                     sampleRates: configuration.sampleRates) { settings throws(CodecError) -> any AudioEncoder in
            try LibavcodecAudioEncoder(configuration, bitrate: settings.bitrate, lowersBitrateToFit: settings.lowersBitrateToFit,
                                       format: settings.format)
        }
    }

    /// The built-in decoders: ``AACDecoder`` (libavcodec) for the AAC object types its
    /// libavcodec decodes (Main, LC, SSR, LTP, the error-resilient LC, LD and ELD; USAC from
    /// libavcodec 61.19), with SBR (HE-AAC) and PS (HE-AAC v2) on top; MP3, Opus, FLAC and ALAC
    /// (``LibavcodecAudioDecoder``).
    public static let builtInDecoders: [DecoderEntry] = [
        DecoderEntry(codec: .aac, profiles: AACDecoder.decodableObjectTypes.union([.sbr, .ps]), name: "libavcodec aac") {
            settings throws(CodecError) -> any AudioDecoder in
            try AACDecoder(audioSpecificConfig: settings.audioSpecificConfig, outputSampleFormat: settings.outputSampleFormat,
                           trim: settings.trim)
        },
    ] + [AudioCodecID.mp3, .opus, .flac, .alac].map { codec in
        // MP3, Opus, FLAC and ALAC: libavcodec's decoders, configured by the container's description.
        DecoderEntry(codec: codec, name: "libavcodec \(codec)") { settings throws(CodecError) -> any AudioDecoder in
            guard let stream = settings.stream else { throw .unsupportedInput("a \(codec) decoder needs the stream's format") }
            return try LibavcodecAudioDecoder(stream, outputSampleFormat: settings.outputSampleFormat, trim: settings.trim)
        }
    }

    /// An encoder of `codec` and `profile` with `settings`.
    ///
    /// - Throws: ``CodecError/codecNotFound(_:)`` when none is registered (naming what is); the
    ///   encoder's own errors (a bitrate or rate it cannot take).
    public func encoder(for codec: AudioCodecID, profile: AudioObjectType = .aacLC,
                        settings: EncoderSettings) throws(CodecError) -> any AudioEncoder {
        guard let entry = encoders.first(where: { $0.codec == codec && ($0.profile == nil || $0.profile == profile) }) else {
            let known = encoders.map { "\($0.codec)\($0.profile.map { " \($0)" } ?? "")" }.joined(separator: ", ")
            throw .codecNotFound("an encoder of \(codec)\(codec == .aac ? " \(profile)" : "") (KeyFrameKit encodes \(known))")
        }
        return try entry.make(settings)
    }

    /// A decoder of `codec` in `profile` with `settings`; a `nil` profile takes the codec's
    /// decoder for whatever profile the stream turns out to be (ADTS, whose headers say).
    ///
    /// - Throws: ``CodecError/undecodable(codec:profile:reason:)`` when the settings'
    ///   AudioSpecificConfig is AAC of a profile no decoder takes (xHE-AAC, ALS), naming it;
    ///   otherwise ``CodecError/codecNotFound(_:)`` when none is registered (naming what is); the
    ///   decoder's own errors (an output sample type it cannot write).
    public func decoder(for codec: AudioCodecID, profile: AudioObjectType?,
                        settings: DecoderSettings) throws(CodecError) -> any AudioDecoder {
        guard let entry = decoders.first(where: { $0.codec == codec && ($0.profiles.isEmpty || profile.map($0.profiles.contains) ?? true) }) else {
            // The AAC decoder says, in its words, why it cannot decode a profile it has no entry for.
            if codec == .aac, let config = settings.audioSpecificConfig, let refusal = AACDecoder.undecodable(config) { throw refusal }
            let known = decoders.map { entry in
                "\(entry.codec)" + (entry.profiles.isEmpty ? "" : " ")
                    + entry.profiles.sorted { $0.rawValue < $1.rawValue }.map(\.description).joined(separator: "/")
            }.joined(separator: ", ")
            throw .codecNotFound("a decoder of \(codec)\(profile.map { " \($0)" } ?? "") (KeyFrameKit decodes \(known))")
        }
        return try entry.make(settings)
    }

    /// The profile a stream of `config` is, as the registry files decoders: PS (HE-AAC v2) or
    /// SBR (HE-AAC) when signalled, else the config's audio object type.
    public static func profile(of config: AudioSpecificConfig) -> AudioObjectType {
        config.profile
    }

    /// The sample rates the encoder of `codec` and `profile` takes, when it takes only some
    /// (``EncoderEntry/sampleRates``); `nil` for any, or for no encoder.
    public func sampleRates(for codec: AudioCodecID, profile: AudioObjectType = .aacLC) -> [Int]? {
        encoders.first { $0.codec == codec && ($0.profile == nil || $0.profile == profile) }?.sampleRates
    }

    /// Whether a decoder is registered for `codec` in `profile`.
    public func decodes(_ codec: AudioCodecID, profile: AudioObjectType) -> Bool {
        decoders.contains { $0.codec == codec && ($0.profiles.isEmpty || $0.profiles.contains(profile)) }
    }
}

extension AudioCodecID {
    /// The codec libavcodec names `name` (`AVCodecDescriptor.name`): the one place its names
    /// become identifiers. `nil` for a codec KeyFrameKit has no identifier for (Vorbis, ADPCM, …).
    public init?(libavcodecName name: String) {
        switch name {
        case "aac": self = .aac
        case "mp3", "mp3float": self = .mp3
        case "flac": self = .flac
        case "opus": self = .opus
        case "alac": self = .alac
        case "ac3": self = .ac3
        case "eac3": self = .eac3
        default: return nil
        }
    }
}
