public import SystemPackage

extension Transcode {
    /// How a conversion is done.
    public struct ConvertOptions: Sendable {
        /// The AAC bitrate in bits per second (AAC outputs).
        public var bitrate: Int
        /// The encoder's scale-factor search (AAC outputs).
        public var coder: AACEncoder.Coder
        /// The output's sample rate; `nil` keeps the input's, or — for AAC, which carries only
        /// the rates of ISO/IEC 14496-3 Table 1.18 — the nearest it can carry
        /// (``/AudioCodec/PCMResampler/nearestRate(to:in:)``).
        public var sampleRate: Int?
        /// The output's channel count (a downmix with ITU-R BS.775 coefficients); `nil` keeps
        /// the input's.
        public var channelCount: Int?
        /// The sample type of a WAV or raw PCM output; `nil` keeps the decoded one (so nothing
        /// is lost: 24-bit FLAC decodes to 32-bit).
        public var pcmSampleFormat: PCMSampleFormat?
        /// The layout of a raw PCM input (it has no header).
        public var rawInputFormat: PCMFormat?

        /// Options; by default 128 kb/s with libavcodec's default (two-loop) search, the input's
        /// rate and channels.
        public init(bitrate: Int = 128_000, coder: AACEncoder.Coder = .twoLoop, sampleRate: Int? = nil, channelCount: Int? = nil,
                    pcmSampleFormat: PCMSampleFormat? = nil, rawInputFormat: PCMFormat? = nil) {
            self.bitrate = bitrate
            self.coder = coder
            self.sampleRate = sampleRate
            self.channelCount = channelCount
            self.pcmSampleFormat = pcmSampleFormat
            self.rawInputFormat = rawInputFormat
        }
    }

    /// What a conversion produced.
    public struct ConvertSummary: Sendable {
        /// What was read: `WAV`, `MP4 (AAC)`, or libavformat's container and libavcodec's codec
        /// (`flac/flac`, `ogg/opus`).
        public var input: String
        /// Frames decoded from the input.
        public var inputFrames: Int64
        /// The PCM layout encoded or written.
        public var outputFormat: PCMFormat?
        /// Frames encoded or written (after any resampling).
        public var outputFrames: Int64
        /// AAC packets written (AAC outputs).
        public var packets: Int64
        /// The encoder's priming and padding (AAC outputs).
        public var priming: Int
        /// The padding after the input's end (AAC outputs).
        public var padding: Int
        /// What was odd about the input but not fatal.
        public var damage: [DamageEvent]
        /// Whether ``JobControl/requestStop()`` ended the job early.
        public var stoppedEarly: Bool
    }

    /// Converts any audio to AAC (`.m4a`/`.mp4`: gapless, faststart; `.aac`: ADTS) or to PCM
    /// (`.wav`, `.pcm`), by the output's name.
    ///
    /// The input is read by what its bytes are: WAV and raw PCM by ``PCMFileReader``, ADTS and
    /// MP4 AAC by ``AudioPacketInput`` and ``/AudioCodec/AACDecoder`` (edit list applied),
    /// anything else — FLAC, MP3, Ogg Vorbis, Opus, ALAC, AIFF, the audio of a video — by
    /// ``/AudioCodec/AudioFileDecoder`` (libavformat and libavcodec, which honour the encoder
    /// delay and padding the file declares). The output holds exactly the frames the input
    /// decodes to (resampled, when it is).
    ///
    /// Composition: source → ``/AudioCodec/PCMResampler`` → ``/AudioCodec/AACEncoder`` →
    /// ``AudioPacketOutput``, or source → ``/AudioCodec/PCMResampler`` → ``PCMFileOutput``.
    /// Written under a temporary name and renamed when complete: nothing is left under
    /// `output` on an error.
    public static func convert(_ input: FilePath, to output: FilePath, options: ConvertOptions = ConvertOptions(),
                               control: JobControl? = nil,
                               progress: ((MediaProgress) -> Void)? = nil) throws(PipelineError) -> ConvertSummary {
        let outputKind = MediaFileFormat(nameOf: output)
        guard let outputKind, [.adts, .mp4, .wav, .rawPCM].contains(outputKind) else {
            throw .unsupported("\(output): unknown output type; use \(MediaFileFormat.extensionList(holding: .aac)) or "
                               + MediaFileFormat.extensionList(holding: .pcm))
        }
        if let rate = options.sampleRate, outputKind == .adts || outputKind == .mp4, !AACEncoder.supportedSampleRates.contains(rate) {
            throw .codec(.unsupportedSampleRate(rate, supported: AACEncoder.supportedSampleRates))
        }
        if let channels = options.channelCount, channels < 1 || channels > 8 {
            throw .unsupported("\(channels) channels: give 1 to 8")
        }
        switch MediaFileFormat.detect(input) {
        case .wav, .rawPCM:
            let reader = try PCMFileReader(path: input, rawFormat: options.rawInputFormat)
            return try convert(reader, named: MediaFileFormat.detect(input) == .wav ? "WAV" : "raw PCM", to: output, as: outputKind,
                               options: options, control: control, progress: progress)
        case let detected? where detected == .adts || detected == .mp4:
            let packets: AudioPacketInput
            do {
                packets = try AudioPacketInput(path: input, purpose: .decoding)
            } catch {
                // An MP4 whose audio is not AAC (ALAC, MP3, Opus in MP4): libavcodec decodes it.
                guard detected == .mp4, error.holdsOtherThanAAC else { throw error }
                return try convertDecoded(input, to: output, as: outputKind, options: options, control: control, progress: progress)
            }
            let decoder = try packets.makeDecoder(sampleFormat: .float32)
            return try convert(packets.transformed(by: decoder), named: detected == .adts ? "ADTS (AAC)" : "MP4 (AAC)", to: output,
                               as: outputKind, options: options, control: control, progress: progress)
        default:
            return try convertDecoded(input, to: output, as: outputKind, options: options, control: control, progress: progress)
        }
    }

    /// Converts a file only libavformat reads.
    private static func convertDecoded(_ input: FilePath, to output: FilePath, as outputKind: MediaFileFormat, options: ConvertOptions,
                                       control: JobControl?, progress: ((MediaProgress) -> Void)?) throws(PipelineError) -> ConvertSummary {
        let decoder: AudioFileDecoder
        do { decoder = try AudioFileDecoder(path: input) } catch { throw .codec(error) }
        return try convert(decoder, named: "\(decoder.containerName)/\(decoder.codecName)", to: output, as: outputKind, options: options, control: control, progress: progress)
    }

    /// The one composition every input goes through.
    private static func convert<Source: PCMSource>(_ source: Source, named name: String, to output: FilePath,
                                                   as outputKind: MediaFileFormat, options: ConvertOptions, control: JobControl?,
                                                   progress: ((MediaProgress) -> Void)?) throws(PipelineError) -> ConvertSummary {
        switch outputKind {
        case .adts, .mp4:
            let resampler = PCMResampler(sampleRate: options.sampleRate, channelCount: options.channelCount, sampleFormat: .float32,
                                         allowedSampleRates: AACEncoder.supportedSampleRates)
            let encoder: AACEncoder
            do { encoder = try AACEncoder(bitrate: options.bitrate, coder: options.coder) } catch { throw .codec(error) }
            var sink = try AudioPacketOutput(path: output, encoder: encoder, encoderName: "KeyFrameKit (libavcodec aac)")
            var chain = source.transformed(by: resampler).transformed(by: encoder)
            let report = try Pump.run(from: &chain, into: &sink, control: control, progress: progress)
            return ConvertSummary(input: name, inputFrames: resampler.inputFrameCount, outputFormat: encoder.inputFormat, outputFrames: encoder.inputFrameCount,
                                  packets: encoder.packetCount, priming: encoder.priming, padding: encoder.padding ?? 0,
                                  damage: report.damage, stoppedEarly: report.stoppedEarly)
        default:
            let resampler = PCMResampler(sampleRate: options.sampleRate, channelCount: options.channelCount,
                                         sampleFormat: options.pcmSampleFormat ?? source.pcmFormat?.sampleFormat ?? .float32)
            var sink = try PCMFileOutput(path: output, emptyMessage: "\(output): the input decodes to no audio")
            var chain = source.transformed(by: resampler)
            let report = try Pump.run(from: &chain, into: &sink, control: control, progress: progress)
            return ConvertSummary(input: name, inputFrames: resampler.inputFrameCount, outputFormat: sink.format, outputFrames: sink.frames, packets: 0,
                                  priming: 0, padding: 0, damage: report.damage, stoppedEarly: report.stoppedEarly)
        }
    }
}

extension PipelineError {
    /// Whether this is ``AudioPacketInput``'s refusal of an audio track that is not AAC.
    var holdsOtherThanAAC: Bool {
        switch self {
        case .codec(.undecodable): true
        case .unsupported(let message): message.contains("this job takes AAC")
        default: false
        }
    }
}
