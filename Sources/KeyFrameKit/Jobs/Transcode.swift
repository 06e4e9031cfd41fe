public import SystemPackage

/// The codec jobs of `keyframe encode` and `keyframe decode`: compositions of a source, a
/// codec and a sink around the ``/MediaCore/Pump``. Streamed: memory holds one buffer of PCM and a few
/// packets, however long the file.
public enum Transcode {
    /// The AAC bitrate when none is given: 128 kb/s, lowered to the most AAC carries at the
    /// input's rate and channel count (``/AudioCodec/AACEncoder/fittingBitrate(_:channels:sampleRate:)``).
    public static let defaultBitrate = 128_000

    /// The encoder a file names (`©too`, the Info frame's, the vendor string) for `codec`
    /// encoded through libavcodec: `KeyFrameKit (libavcodec opus)`.
    static func encoderName(of codec: AudioCodecID) -> String { "KeyFrameKit (libavcodec \(codec.name))" }

    /// How an encode is done.
    public struct EncodeOptions: Sendable {
        /// The AAC bitrate in bits per second; `nil` for ``Transcode/defaultBitrate`` fitted to
        /// the input.
        public var bitrate: Int?
        /// The encoder's scale-factor search.
        public var coder: AACEncoder.Coder
        /// The AAC profile: AAC-LC (`.aacLC`, the default), HE-AAC v1 (`.sbr`,
        /// ``/AudioCodec/HEAACEncoder``, for 16–48 kHz mono or stereo), HE-AAC v2 (`.ps`, stereo
        /// only), or `.automatic`: chosen by the input's channels and ``bitrate``
        /// (``/MediaFormats/AACProfileChoice/automaticObjectType(channelCount:bitrate:sampleRate:)``).
        public var profile: AACProfileChoice
        /// Write an MP4 fragmented (crash-safe), a fragment this long; `nil` for a normal file.
        public var fragmentDuration: MediaTime?
        /// The bitrate when ``bitrate`` is `nil`, lowered to what the input carries.
        public var preferredBitrate: Int
        /// The codecs the job's encoder comes from (``/AudioCodec/AudioCodecRegistry/standard``
        /// unless a program registers its own in a copy).
        public var codecs: AudioCodecRegistry = .standard
        /// The files the job opens and creates (``/MediaFormats/MediaFormatRegistry`` `standard`
        /// unless a program registers its own in a copy): inputs by what their bytes are,
        /// outputs by their names.
        public var formats: MediaFormatRegistry = .standard
        /// The codec encoded: AAC, or a codec registered in ``codecs`` (whose entry needs no
        /// profile); the AAC settings (``coder``, ``profile``) apply to AAC alone.
        public var codec: AudioCodecID = .aac

        /// Options; by default `preferredBitrate` (less where the input's rate and channels carry
        /// less) with libavcodec's default (two-loop) search.
        public init(bitrate: Int? = nil, coder: AACEncoder.Coder = .twoLoop, fragmentDuration: MediaTime? = nil,
                    preferredBitrate: Int = Transcode.defaultBitrate, profile: AACProfileChoice = .aacLC) {
            self.bitrate = bitrate
            self.profile = profile
            self.preferredBitrate = preferredBitrate
            self.coder = coder
            self.fragmentDuration = fragmentDuration
        }
    }

    /// What an encode produced.
    public struct EncodeSummary: JobSummary, Sendable {
        /// Input frames encoded.
        public var inputFrames: Int64
        /// AAC packets written.
        public var packets: Int64
        /// The encoder's priming (samples).
        public var priming: Int
        /// The padding after the input's end (samples).
        public var padding: Int
        /// The bitrate encoded at (bits per second).
        public var bitrate: Int
        /// The sample rate encoded (the input's, or 48/44.1 kHz for HE-AAC of a faster input).
        public var sampleRate: Int
        /// The profile encoded (``EncodeOptions/profile``, resolved when it is `.automatic`).
        public var profile: AudioObjectType = .aacLC
        /// What the pump did, stage by stage: the input, the encoder, the output.
        public var report: JobReport
    }

    /// Encodes the PCM of `input` to AAC (or ``EncodeOptions/codec``) in `output`: ADTS (`.aac`)
    /// or a gapless MP4 (`.m4a`, `.mp4`), or a container registered in ``EncodeOptions/formats``,
    /// by the output's name. Written under a temporary name and renamed when complete
    /// (a fragmented MP4 is written in place); nothing is left under `output` on an error.
    ///
    /// Composition: `input` → the codec registry's encoder of the codec and profile
    /// (``/AudioCodec/AudioCodecRegistry/encoder(for:profile:settings:)``: libavcodec's
    /// ``/AudioCodec/AACEncoder`` for AAC-LC) → the format registry's sink for the output's name
    /// (``/MediaFormats/AudioPacketOutput`` for ADTS and MP4). For a codec other than AAC the
    /// summary's ``EncodeSummary/profile`` is AAC-LC, which means nothing.
    public static func encode(_ input: some PCMSource, to output: FilePath, options: EncodeOptions = EncodeOptions(),
                              control: JobControl? = nil,
                              progress: ((MediaProgress) -> Void)? = nil) throws(PipelineError) -> EncodeSummary {
        guard let inputFormat = input.pcmFormat else { throw .unsupported("\(output): the input's PCM layout is not known") }
        if let container = options.formats.format(nameOf: output) {
            try container.check(holds: options.codec, path: output, described: options.codecs.descriptions)
        }
        // The AAC profile; another codec's entry answers any.
        let profile = options.codec != .aac ? .aacLC
            : options.profile.resolved(channelCount: inputFormat.channelCount, bitrate: options.bitrate, sampleRate: inputFormat.sampleRate)
        // HE-AAC above 48 kHz: resampled to 48 (or 44.1) kHz, the highest output rate SBR is
        // defined for here. Below 16 kHz the encoder refuses, in words.
        // Another codec that takes some rates only (Opus: 48 kHz and less) is given the nearest.
        let codecRates = options.codecs.sampleRates(for: options.codec, profile: profile)
        let resampler: PCMResampler? = if profile.usesSpectralBandReplication && inputFormat.sampleRate > 48000 {
            PCMResampler(sampleFormat: .float32, allowedSampleRates: AACProfiles.sampleRates(of: profile))
        } else if let codecRates, !codecRates.contains(inputFormat.sampleRate) {
            PCMResampler(sampleFormat: .float32, allowedSampleRates: codecRates)
        } else {
            nil
        }
        let format = resampler?.outputFormat(for: inputFormat) ?? inputFormat
        let encoder: any AudioEncoder
        do {
            encoder = try options.codecs.encoder(for: options.codec, profile: profile, settings: .init(
                bitrate: options.bitrate ?? AACProfiles.defaultBitrate(of: profile, lc: options.preferredBitrate),
                lowersBitrateToFit: options.bitrate == nil, format: format, aac: .init(coder: options.coder)))
        } catch {
            throw .codec(error)
        }
        var outputOptions = MediaFormatRegistry.OutputOptions(fragmentDuration: options.fragmentDuration,
                                                              encoderName: Transcode.encoderName(of: options.codec))
        // The container describes the codec as the registry that made the encoder does.
        outputOptions.audioCodecs = options.codecs.descriptions
        let sink = try options.formats.packetOutput(output, options: outputOptions)
        func pump<Encoder: AudioEncoder, Sink: PacketFileSink>(through encoder: Encoder, into sink: Sink) throws(PipelineError) -> JobReport {
            var sink = sink
            if let resampler {
                var source = input.transformed(by: resampler).transformed(by: encoder)
                return try Pump.run(from: &source, into: &sink, control: control, progress: progress)
            }
            var source = input.transformed(by: encoder)
            return try Pump.run(from: &source, into: &sink, control: control, progress: progress)
        }
        let report = try pump(through: encoder, into: sink)
        return EncodeSummary(inputFrames: encoder.inputFrameCount, packets: encoder.packetCount, priming: encoder.priming,
                             padding: encoder.padding ?? 0, bitrate: encoder.bitrate, sampleRate: format.sampleRate, profile: profile,
                             report: report)
    }

    /// What a decode produced.
    public struct DecodeSummary: JobSummary, Sendable {
        /// The PCM layout written.
        public var format: PCMFormat
        /// Frames written.
        public var frames: Int64
        /// AAC packets decoded.
        public var packets: Int
        /// What the pump did, stage by stage: the input, the resampler, the output.
        public var report: JobReport
    }

    /// Decodes the AAC of `input` to `output`: a `.wav` or raw `.pcm`, by the output's name.
    /// Any other audio file (FLAC, MP3, Ogg, an ADPCM WAV, …) is decoded by libavformat and
    /// libavcodec, as ``convert(_:to:options:control:progress:)`` reads it.
    ///
    /// The input's format comes from its bytes (``/MediaFormats/MediaFileFormat/detect(_:)``). For an MP4 the
    /// edit list is applied (the encoder's priming is dropped and decoding stops where the edit
    /// ends), else iTunSMPB; so a gapless file gives exactly its valid samples. ADTS cannot say
    /// how much of the start is priming, so, like `ffmpeg -i IN.aac OUT.wav`, every decoded
    /// sample is kept.
    ///
    /// Composition: ``AudioFileInput`` (through the format registry: ``/MediaFormats/AudioPacketInput`` →
    /// ``/AudioCodec/AACDecoder`` for AAC, libavformat for the rest) → ``/AudioCodec/PCMResampler``
    /// (the sample type) → ``/MediaFormats/PCMFileOutput``.
    ///
    /// - Parameters:
    ///   - input: an ADTS stream, an MP4/M4A/MOV file or an HLS playlist (recognised by its
    ///     bytes), or any audio file libavformat reads.
    ///   - segments: for a CMAF init segment, its media segments, read after it.
    ///   - output: the `.wav` or raw `.pcm` file to write, or `-`
    ///     (``/MediaCore/FileByteSink/standardOutputPath``) for standard output.
    ///   - outputFormat: `.wav` or `.rawPCM`, for an output whose name does not say it (`-`).
    ///   - sampleFormat: the PCM sample format written; 16-bit by default.
    ///   - trackID: the MP4 audio track; by default the first.
    ///   - formats: the files the input is opened and the output created through (`standard`
    ///     unless a program registers its own in a copy).
    ///   - control: stops or cancels the job from another thread.
    ///   - progress: called with the media time decoded so far.
    public static func decode(_ input: FilePath, segments: [FilePath] = [], to output: FilePath, outputFormat: MediaFileFormat? = nil,
                              sampleFormat: PCMSampleFormat = .int16, trackID: UInt32? = nil, formats: MediaFormatRegistry = .standard,
                              control: JobControl? = nil,
                              progress: ((MediaProgress) -> Void)? = nil) throws(PipelineError) -> DecodeSummary {
        var source = try AudioFileInput(path: input, options: MediaFormatRegistry.InputOptions(
            segments: segments, trackID: trackID, decodedSampleFormat: sampleFormat), registry: formats)
        let isAAC = source.packetsDecoded != nil
        let empty = isAAC ? "\(input): no AAC frames could be decoded" : "\(input): the input decodes to no audio"
        let output = try formats.pcmOutput(output, options: MediaFormatRegistry.OutputOptions(emptyMessage: empty, format: outputFormat))
        func pump<Sink: PCMFileSink>(into sink: Sink) throws(PipelineError) -> (report: JobReport, sink: Sink) {
            var sink = sink
            if isAAC {
                // The AAC decoder gives the sample type itself.
                return (try Pump.run(from: &source, into: &sink, control: control, progress: progress), sink)
            }
            // libavformat's decoders give float or 32-bit: the sample type is made here.
            var chain = source.transformed(by: PCMResampler(sampleFormat: sampleFormat))
            defer { source = chain.upstream }
            return (try Pump.run(from: &chain, into: &sink, control: control, progress: progress), sink)
        }
        let (report, sink) = try pump(into: output)
        guard let format = sink.format else { throw .unsupported(empty, path: input) }
        return DecodeSummary(format: format, frames: sink.frames, packets: source.packetsDecoded ?? 0, report: report)
    }
}
