public import SystemPackage
internal import RealModule

extension Transcode {
    /// How a conversion is done.
    public struct ConvertOptions: Sendable {
        /// The AAC bitrate in bits per second (AAC outputs); `nil` for ``Transcode/defaultBitrate``,
        /// lowered to the most AAC carries at the output's rate and channel count.
        public var bitrate: Int?
        /// The encoder's scale-factor search (AAC outputs).
        public var coder: AACEncoder.Coder
        /// The AAC profile of an AAC output: AAC-LC (`.aacLC`, the default), HE-AAC v1 (`.sbr`,
        /// ``/AudioCodec/HEAACEncoder``, for 16–48 kHz mono or stereo), HE-AAC v2 (`.ps`, stereo
        /// only), or `.automatic`: chosen per input by the output's channels (after
        /// ``channelCount``'s downmix) and ``bitrate``
        /// (``/MediaFormats/AACProfileChoice/automaticObjectType(channelCount:bitrate:sampleRate:)``).
        public var profile: AACProfileChoice
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
        /// Normalise to this integrated loudness in LUFS (EBU R 128), measured in a first pass:
        /// the gain is the target minus the measured loudness, and with ``limitsTruePeak`` a
        /// ``/AudioCodec/TruePeakLimiter`` holds the true peak at ``truePeakCeiling``.
        public var normalizeTo: Double?
        /// The true-peak ceiling of ``normalizeTo``, in dBTP (ITU-R BS.1770-4); EBU R 128's −1 by
        /// default. For AAC outputs the limiter first aims ``Transcode/lossyTruePeakMargin``
        /// lower, and the output is measured decoded and encoded again while it is over
        /// (``Transcode/lossyEncodeLimit``).
        public var truePeakCeiling: Double
        /// With ``normalizeTo``: limit the peaks that the gain pushes past ``truePeakCeiling``
        /// (the default). Without the limiter the gain is a plain gain, and a target that would
        /// need more than 0.5 dB beyond what the measured true peak allows is refused
        /// (``/MediaCore/PipelineError/unsupported(_:path:offset:)``) before anything is written.
        public var limitsTruePeak: Bool
        /// Write ReplayGain 2.0 track gain and peak (reference −18 LUFS) as iTunes freeform tags
        /// (`----:com.apple.iTunes:replaygain_track_gain`, `…_peak`), measured in a first pass.
        public var replayGain: Bool
        /// Carry the input's tags and cover art into an MP4 output's `ilst`.
        public var carriesTags: Bool
        /// Encode AAC with this many encoders at once, on segments of the input
        /// (``/AudioCodec/ParallelAACEncoder``); 1 is one encoder, byte-identical to
        /// `ffmpeg -c:a aac`.
        public var threads: Int

        /// The codecs the job's encoder comes from (``/AudioCodec/AudioCodecRegistry/standard``
        /// unless a program registers its own in a copy).
        public var codecs: AudioCodecRegistry = .standard
        /// The files the job opens and creates (``/MediaFormats/MediaFormatRegistry`` `standard`
        /// unless a program registers its own in a copy): inputs by what their bytes are,
        /// outputs by their names.
        public var formats: MediaFormatRegistry = .standard
        /// The codec of a compressed output: AAC, or another the codec registry encodes and the
        /// output's container holds (Opus, FLAC, ALAC in MP4; FLAC in `.flac`); `nil` for the
        /// container's own (``/MediaFormats/MediaFileFormat/defaultAudioCodec``). ``profile``
        /// and ``coder`` are AAC's.
        public var codec: AudioCodecID?

        /// Options; by default 128 kb/s (less where the rate and channels carry less) with
        /// libavcodec's default (two-loop) search, the input's rate and channels.
        public init(bitrate: Int? = nil, coder: AACEncoder.Coder = .twoLoop, sampleRate: Int? = nil, channelCount: Int? = nil,
                    pcmSampleFormat: PCMSampleFormat? = nil, rawInputFormat: PCMFormat? = nil, normalizeTo: Double? = nil,
                    replayGain: Bool = false, carriesTags: Bool = true, threads: Int = 1, profile: AACProfileChoice = .aacLC,
                    truePeakCeiling: Double = -1, limitsTruePeak: Bool = true) {
            self.bitrate = bitrate
            self.coder = coder
            self.profile = profile
            self.sampleRate = sampleRate
            self.channelCount = channelCount
            self.pcmSampleFormat = pcmSampleFormat
            self.rawInputFormat = rawInputFormat
            self.normalizeTo = normalizeTo
            self.truePeakCeiling = truePeakCeiling
            self.limitsTruePeak = limitsTruePeak
            self.replayGain = replayGain
            self.carriesTags = carriesTags
            self.threads = max(1, threads)
        }
    }

    /// How far under ``ConvertOptions/truePeakCeiling`` the limiter first aims for an AAC
    /// output, in dB: the encoder's quantisation adds peaks of its own. Measured with FFmpeg's
    /// `ebur128=peak=true` on the decoded output of speech limited by 2–8 dB, over the limiter's
    /// aim: AAC-LC at 64 kb/s a channel (the default 128 kb/s stereo) +0.1 dB, so one encode
    /// holds. At lower rates, and with SBR, the codec's peaks are larger (AAC-LC at 32 kb/s a
    /// channel +1.1 to +1.7 dB, HE-AAC at 48 kb/s stereo +1.9 to +3.4 dB): there the decoded
    /// output is over the ceiling and is encoded again lower (``lossyEncodeLimit``).
    public static let lossyTruePeakMargin = 0.5

    /// What a conversion produced.
    public struct ConvertSummary: JobSummary, Sendable {
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
        /// The encoder's priming (AAC outputs).
        public var priming: Int
        /// The padding after the input's end (AAC outputs).
        public var padding: Int
        /// The AAC bitrate encoded at (AAC outputs).
        public var bitrate: Int?
        /// The AAC profile encoded (AAC outputs; ``ConvertOptions/profile``, resolved when it is
        /// `.automatic`).
        public var profile: AudioObjectType?
        /// What the pumps did, stage by stage: with a loudness pass (``ConvertOptions/normalizeTo``,
        /// ``ConvertOptions/replayGain``) its stages first, its time added, its damage (the same
        /// input's) left out.
        public var report: JobReport
        /// With ``ConvertOptions/normalizeTo``: the loudness measured before, and the gain applied.
        public var normalization: (measured: Loudness, gain: Double)?
        /// With ``ConvertOptions/normalizeTo``: the loudness of what was written, measured after
        /// the gain and the limiter; for an AAC output, of the output decoded.
        public var normalizedLoudness: Loudness?
        /// With ``ConvertOptions/normalizeTo`` and ``ConvertOptions/limitsTruePeak``: what the
        /// limiter did (its largest gain reduction, how long it acted).
        public var limiter: TruePeakLimiter.Statistics?
        /// With ``ConvertOptions/normalizeTo``: how many times the output was encoded (an AAC
        /// encode whose decoded true peak was over the ceiling is done again lower, up to
        /// ``Transcode/lossyEncodeLimit``).
        public var encodes = 1
        /// With ``ConvertOptions/threads`` above 1: where the segments were joined.
        public var splices: [ParallelAACEncoder.Splice] = []
    }

    /// Converts any audio to AAC (`.m4a`/`.mp4`: gapless, faststart; `.aac`: ADTS) or to PCM
    /// (`.wav`, `.pcm`), by the output's name.
    ///
    /// The input is read by ``AudioFileInput``, by what its bytes are: KeyFrameKit's own readers
    /// for WAV, raw PCM, ADTS and MP4 AAC, ``/AudioCodec/AudioFileDecoder`` (libavformat and
    /// libavcodec, which honour the encoder delay and padding the file declares) for the rest. The output holds exactly the frames the input
    /// decodes to (resampled, when it is).
    ///
    /// Composition: source → ``/AudioCodec/PCMResampler`` → (``/AudioCodec/TruePeakLimiter`` or
    /// ``/AudioCodec/PCMGain``) → ``/AudioCodec/AACEncoder`` → ``/MediaFormats/AudioPacketOutput``,
    /// or source → ``/AudioCodec/PCMResampler`` → (limiter or gain) → ``/MediaFormats/PCMFileOutput``.
    /// With ``ConvertOptions/normalizeTo`` the input is read twice: a first pass measures its
    /// loudness
    /// (``measureLoudness(_:rawFormat:sampleRate:channelCount:allowedSampleRates:control:progress:)``),
    /// without holding it in memory; the second applies the gain to the target, with the limiter
    /// holding the true peak at the ceiling, and measures the result.
    /// Written under a temporary name and renamed when complete: nothing is left under
    /// `output` on an error.
    public static func convert(_ input: FilePath, to output: FilePath, options: ConvertOptions = ConvertOptions(),
                               control: JobControl? = nil,
                               progress: ((MediaProgress) -> Void)? = nil) throws(PipelineError) -> ConvertSummary {
        let outputKind = options.formats.format(nameOf: output)
        let entry = outputKind.flatMap(options.formats.entry(for:))
        guard let outputKind, entry?.packetSink != nil || [.wav, .rawPCM].contains(outputKind) else {
            throw .unsupported("\(output): unknown output type; use \(MediaFileFormat.extensionList(holding: .audioPackets)) or "
                               + MediaFileFormat.extensionList(holding: .pcm))
        }
        let writesPackets = entry?.packetSink != nil
        if !writesPackets, let codec = options.codec {
            throw .unsupported("\(output): \(outputKind) holds PCM, not \(codec); write \(codec) to "
                               + MediaFileFormat.builtIn.filter { $0.audioCodecs.contains(codec) && $0 != .hlsPlaylist }.map { ".\($0.fileExtensions[0])" }.joined(separator: " or "))
        }
        // The codec asked, else the container's own (AAC for .m4a and .aac, FLAC for .flac).
        var options = options
        options.codec = options.codec ?? outputKind.defaultAudioCodec
        let codec = options.codec ?? .aac
        if writesPackets { try outputKind.check(holds: codec, path: output, described: options.codecs.descriptions) }
        let isAAC = writesPackets && codec == .aac
        // A lossy codec adds peaks of its own: its decode is measured, with a margin under the ceiling.
        let isLossy = writesPackets && [AudioCodecID.aac, .opus, .mp3].contains(codec)
        // The rates the encoder takes: what a loudness is measured at before it encodes.
        let encoderRates = isAAC ? nil : options.codecs.sampleRates(for: codec)
        var aacRates = AACProfiles.sampleRates(of: options.profile.objectType ?? .aacLC)
        if let rate = options.sampleRate, isAAC, !aacRates.contains(rate) {
            throw .codec(.unsupportedSampleRate(rate, supported: aacRates))
        }
        if options.profile != .aacLC, !isAAC {
            throw .unsupported("\(output): a profile is chosen for AAC outputs only" + (writesPackets ? " (\(codec) has none)" : ""))
        }
        if options.replayGain, outputKind != .mp4 {
            throw .unsupported("\(output): ReplayGain is written as MP4 tags; use an .m4a or .mp4 output")
        }
        if let channels = options.channelCount, channels < 1 || channels > 8 {
            throw .unsupported("\(channels) channels: give 1 to 8")
        }
        if let target = options.normalizeTo {
            guard (-70.0...0.0).contains(target) else { throw .unsupported("--normalize \(target): give a loudness from -70 to 0 LUFS") }
            guard (-20.0...0.0).contains(options.truePeakCeiling) else {
                throw .unsupported("--true-peak \(options.truePeakCeiling): give a ceiling from -20 to 0 dBTP")
            }
        }
        var source = try AudioFileInput(path: input, rawFormat: options.rawInputFormat, registry: options.formats)
        // The profile of this input's output: `auto` chooses by its channels (after the
        // downmix) and the bitrate.
        let profile = isAAC ? try AACProfiles.resolve(options.profile, channelCount: options.channelCount ?? source.channelCount,
                                                      bitrate: options.bitrate,
                                                      sampleRate: options.sampleRate ?? source.pcmFormat?.sampleRate,
                                                      input: input.string) : .aacLC
        if isAAC, options.profile.isAutomatic {
            aacRates = AACProfiles.sampleRates(of: profile)
            if let rate = options.sampleRate, !aacRates.contains(rate) {
                throw .codec(.unsupportedSampleRate(rate, supported: aacRates))
            }
        }
        var gain: LoudnessNormalizer?
        var measured: Loudness?
        var measuring: JobReport?
        if options.normalizeTo != nil || options.replayGain {
            // First pass: the loudness of what will be encoded (after any resampling or downmix).
            let (loudness, report) = try measureLoudnessReporting(
                input, rawFormat: options.rawInputFormat, sampleRate: options.sampleRate, channelCount: options.channelCount,
                allowedSampleRates: isAAC ? aacRates : encoderRates,
                control: control, progress: progress.map { report in
                    { report(MediaProgress(mediaSeconds: $0.mediaSeconds / 2, totalSeconds: $0.totalSeconds)) }
                })
            measured = loudness
            measuring = report
            if let target = options.normalizeTo {
                gain = try normalizer(reaching: target, from: loudness, options: options, margin: isLossy ? lossyTruePeakMargin : 0, input: input,
                                    allowedSampleRates: isAAC ? aacRates : encoderRates, control: control)
            }
        }
        // The tags travel in the stream: the input's (unless dropped), with ReplayGain added.
        var metadata = options.carriesTags ? source.metadata : StreamMetadata()
        source.announcesMetadata = false
        // The input's encoder tag names what made the input: an encoded output names its own
        // encoder (MP4's muxer writes it as ©too; ID3's TSSE, a Vorbis comment's ENCODER).
        if writesPackets {
            metadata.tags.removeAll { $0.key.lowercased() == "encoder" }
            if outputKind != .mp4 && outputKind != .adts { metadata.tags.append((key: "encoder", value: Transcode.encoderName(of: codec))) }
        }
        // An input's ReplayGain describes the input, not what is written (a new encode, perhaps
        // normalized): never carried; --replaygain measures the output's.
        metadata.tags.removeAll { $0.key.lowercased().hasPrefix("replaygain_") }
        if options.replayGain, let measured, measured.integrated.isFinite, measured.integrated > -70 {
            // Of the output: as a limiter's trial pass measured it, else the input's moved by the
            // gain; a normalised lossy output's are measured again decoded (LoudnessGatedOutput).
            let applied = gain?.decibels ?? 0
            let output = gain?.expected ?? Loudness(integrated: measured.integrated + applied, range: measured.range,
                                                    truePeak: measured.truePeak + applied)
            metadata.tags += Self.replayGainTags(of: output)
        }
        // With a measuring pass first, the progress of the second is its second half.
        let secondPass: ((MediaProgress) -> Void)? = measured == nil ? progress : progress.map { report in
            { report(MediaProgress(mediaSeconds: ($0.totalSeconds ?? 0) / 2 + $0.mediaSeconds / 2, totalSeconds: $0.totalSeconds)) }
        }
        let announced: [StreamEvent] = metadata == StreamMetadata() ? [] : [.metadata(metadata)]
        var tagged = AnnouncingSource(source, announcing: announced)
        // A normalised lossy output (AAC, MP3, Opus) is measured decoded, as a listener hears it. The codec adds
        // peaks of its own and moves the loudness: an encode whose decoded true peak is over the
        // ceiling, or whose loudness is more than 0.5 LU from the target, is cancelled before it
        // replaces anything, and the input is encoded again fitted to what the decode measured
        // (``refitted(_:decoded:encodes:reaching:from:options:input:allowedSampleRates:control:)``);
        // the last encode is kept as it measures.
        var summary: ConvertSummary
        var decoded: Loudness?
        var encodes = 0
        while true {
            encodes += 1
            let promise = gain?.ceiling.map { DecodedLoudnessPromise(ceiling: $0, target: options.normalizeTo) }
            // A lossy codec's decode is measured (its peaks are its own), in any container.
            let gate = isLossy && gain?.ceiling != nil
                ? LoudnessGate(promise: encodes < lossyEncodeLimit ? promise : nil, replayGain: options.replayGain) : nil
            do {
                summary = try convert(tagged, named: source.description, to: output, as: outputKind, options: options, profile: profile,
                                      gain: gain, gate: gate, control: control, progress: secondPass)
                decoded = gate?.verdict.loudness
                break
            } catch {
                guard let gate, gate.verdict.isRefused, let target = options.normalizeTo, let measured, let normalizer = gain,
                      let result = gate.verdict.loudness else { throw error }
                gain = try refitted(normalizer, decoded: result, encodes: encodes, reaching: target, from: measured, options: options,
                                    input: input, allowedSampleRates: isAAC ? aacRates : encoderRates, control: control)
                source = try AudioFileInput(path: input, rawFormat: options.rawInputFormat, registry: options.formats)
                source.announcesMetadata = false
                tagged = AnnouncingSource(source, announcing: announced)
            }
        }
        if let measured, let gain {
            summary.normalization = (measured, gain.decibels)
            if let decoded {
                summary.normalizedLoudness = decoded
            } else {
                do { summary.normalizedLoudness = try gain.meter.measurement() } catch { throw .codec(error) }
            }
            summary.limiter = gain.limiter?.statistics
            summary.encodes = encodes
        }
        if var measuring {
            // The same input read twice: its damage is told once, by the second pass.
            measuring.damage = []
            summary.report = measuring.appending(summary.report)
        }
        return summary
    }

    /// Measures the EBU R 128 loudness of `input` (integrated, range, true peak) in one streamed
    /// pass, after the resampling and downmix a conversion with these settings would apply;
    /// `nil` for an input without audio.
    ///
    /// Composition: ``AudioFileInput`` → ``/AudioCodec/PCMResampler`` → ``/AudioCodec/LoudnessMeter``.
    public static func measureLoudness(_ input: FilePath, rawFormat: PCMFormat? = nil, sampleRate: Int? = nil, channelCount: Int? = nil,
                                       allowedSampleRates: [Int]? = nil, control: JobControl? = nil,
                                       progress: ((MediaProgress) -> Void)? = nil) throws(PipelineError) -> Loudness? {
        try measureLoudnessReporting(input, rawFormat: rawFormat, sampleRate: sampleRate, channelCount: channelCount,
                                     allowedSampleRates: allowedSampleRates, control: control, progress: progress).loudness
    }

    /// ``measureLoudness(_:rawFormat:sampleRate:channelCount:allowedSampleRates:control:progress:)``
    /// with what its pump did.
    private static func measureLoudnessReporting(_ input: FilePath, rawFormat: PCMFormat?, sampleRate: Int?, channelCount: Int?,
                                                 allowedSampleRates: [Int]?, control: JobControl?,
                                                 progress: ((MediaProgress) -> Void)?) throws(PipelineError) -> (loudness: Loudness?, report: JobReport) {
        let source = try AudioFileInput(path: input, rawFormat: rawFormat)
        let resampler = PCMResampler(sampleRate: sampleRate, channelCount: channelCount, sampleFormat: .float32,
                                     allowedSampleRates: allowedSampleRates)
        var chain = source.transformed(by: resampler)
        var meter = LoudnessMeter()
        let report = try Pump.run(from: &chain, into: &meter, control: control, progress: progress)
        do { return (try meter.measurement(), report) } catch { throw .codec(error) }
    }

    /// The level stage of `--normalize` for `loudness`: the gain to `target` through the limiter,
    /// or (without it) a plain gain, refused when the true peak leaves it more than 0.5 dB short.
    private static func normalizer(reaching target: Double, from loudness: Loudness?, options: ConvertOptions, margin: Double,
                                 input: FilePath, allowedSampleRates: [Int]?, control: JobControl?) throws(PipelineError) -> LoudnessNormalizer {
        // Silence, or a programme too short to measure: nothing to reach.
        guard let loudness, loudness.integrated.isFinite, loudness.integrated > -70 else { return LoudnessNormalizer(.gain(PCMGain(decibels: 0))) }
        let wanted = target - loudness.integrated
        let ceiling = options.truePeakCeiling
        if options.limitsTruePeak {
            let aim = ceiling - margin
            return try fittedLimiter(reaching: target, from: loudness, aim: aim, ceiling: ceiling, input: input, options: options,
                                     allowedSampleRates: allowedSampleRates, control: control)
        }
        let allowed = loudness.gain(toReach: target, peakCeiling: ceiling)
        if wanted - allowed > 0.5 {
            throw .unsupported("\(input): reaching \(fixed(target, digits: 1)) LUFS needs a gain of \(fixed(wanted, digits: 1)) dB, "
                               + "but the input measures \(fixed(loudness.integrated, digits: 1)) LUFS with its true peak at "
                               + "\(fixed(loudness.truePeak, digits: 1)) dBTP, so the \(fixed(ceiling, digits: 1)) dBTP ceiling allows "
                               + "only \(fixed(allowed, digits: 1)) dB; remove --no-limiter to limit the peaks, or raise --true-peak")
        }
        return LoudnessNormalizer(.gain(PCMGain(decibels: allowed)), ceiling: ceiling)
    }

    /// ReplayGain 2.0 track tags for a programme of `loudness`: the gain to −18 LUFS and the
    /// true peak, linear (`replaygain_track_gain`, `replaygain_track_peak`).
    static func replayGainTags(of loudness: Loudness) -> [(key: String, value: String)] {
        let peak = loudness.truePeak.isFinite ? Double.exp10(loudness.truePeak / 20) : 0
        return [(key: "replaygain_track_gain", value: fixed(-18 - loudness.integrated, digits: 2) + " dB"),
                (key: "replaygain_track_peak", value: fixed(peak, digits: 6))]
    }

    /// How many times a normalised lossy output is encoded at most: the encodes before the last
    /// are cancelled when, decoded, their true peak is over the ceiling or their loudness more
    /// than 0.5 LU from the target.
    public static let lossyEncodeLimit = 3

    /// `normalizer` fitted again after an encode that measured `decoded`: the codec moved the
    /// loudness by what it measures over what went in, and added peaks. The limiter's aim is
    /// lowered by any excess over the ceiling, with a margin of 0.15 dB for each encode so far,
    /// and its gain fitted again to `target` less the codec's offset; a plain gain moves to the
    /// target, or as far as the ceiling allows, and is refused when that leaves it more than
    /// 0.5 LU short (nothing has been written: the encode was cancelled).
    private static func refitted(_ normalizer: LoudnessNormalizer, decoded: Loudness, encodes: Int, reaching target: Double,
                                 from loudness: Loudness, options: ConvertOptions, input: FilePath, allowedSampleRates: [Int]?,
                                 control: JobControl?) throws(PipelineError) -> LoudnessNormalizer {
        let ceiling = normalizer.ceiling ?? options.truePeakCeiling
        let margin = 0.15 * Double(encodes)
        let excess = decoded.truePeak > ceiling ? decoded.truePeak - ceiling + margin : 0
        switch normalizer.stage {
        case .limiter(let limiter):
            let encoded: Loudness?
            do { encoded = try normalizer.meter.measurement() } catch { throw .codec(error) }
            let offset = encoded.map { decoded.integrated - $0.integrated } ?? 0
            return try fittedLimiter(reaching: target - offset, from: loudness, aim: limiter.ceiling - excess, ceiling: ceiling, input: input,
                                     options: options, allowedSampleRates: allowedSampleRates, control: control)
        case .gain(let gain):
            let step = min(target - decoded.integrated, ceiling - margin - decoded.truePeak)
            let allowed = gain.decibels + step
            let wanted = target - loudness.integrated
            if target - (decoded.integrated + step) > 0.5 {
                throw .unsupported("\(input): reaching \(fixed(target, digits: 1)) LUFS needs a gain of \(fixed(wanted, digits: 1)) dB, "
                                   + "but decoded its true peak stays under the \(fixed(ceiling, digits: 1)) dBTP ceiling only with "
                                   + "\(fixed(allowed, digits: 1)) dB (the codec adds peaks of its own); remove --no-limiter to limit "
                                   + "the peaks, or raise --true-peak or the bitrate")
            }
            return LoudnessNormalizer(.gain(PCMGain(decibels: allowed)), ceiling: ceiling)
        }
    }

    /// The limiter that brings `input` to `target` with its true peak at `aim` dBTP. Where the
    /// limiter acts, it takes loudness away (the more, the denser the peaks), and a 4×
    /// oversampled detector can miss a peak of content near the Nyquist frequency: so trial
    /// passes (decode, limiter and meter, no encoding) measure the result, and the gain is
    /// raised by what is missing (secant steps, at most 6 dB over the plain gain, and none where
    /// a dB brings less than 0.25 LU) and the aim
    /// lowered by any overshoot libebur128 measures, until the result is within 0.1 LU and the
    /// peak under the aim, for at most 5 trials.
    private static func fittedLimiter(reaching target: Double, from loudness: Loudness, aim: Double, ceiling: Double,
                                      input: FilePath, options: ConvertOptions, allowedSampleRates: [Int]?,
                                      control: JobControl?) throws(PipelineError) -> LoudnessNormalizer {
        let wanted = target - loudness.integrated
        var gain = wanted, aim = aim
        func limiter() -> TruePeakLimiter { TruePeakLimiter(ceiling: aim, gain: gain, lookAhead: 0.002, release: 0.05) }
        // Peaks well under the aim after the gain: the limiter will not act, the gain is exact.
        guard loudness.truePeak.isFinite, loudness.truePeak + wanted > aim - 0.5 else { return LoudnessNormalizer(.limiter(limiter()), ceiling: ceiling) }
        var previous: (gain: Double, reached: Double)?
        // The last pass measured: its gain and aim are what is returned, with what it reached.
        var measured: (gain: Double, aim: Double, reached: Loudness)?
        for _ in 0..<5 {
            let source = try AudioFileInput(path: input, rawFormat: options.rawInputFormat, registry: options.formats)
            let resampler = PCMResampler(sampleRate: options.sampleRate, channelCount: options.channelCount, sampleFormat: .float32,
                                         allowedSampleRates: allowedSampleRates)
            var chain = source.transformed(by: resampler).transformed(by: limiter())
            var meter = LoudnessMeter()
            _ = try Pump.run(from: &chain, into: &meter, control: control, progress: nil)
            let result: Loudness?
            do { result = try meter.measurement() } catch { throw .codec(error) }
            guard let result, result.integrated.isFinite else { break }
            // A stop during a trial is the job's: its partial measurement is not an answer.
            if control?.isStopRequested == true || control?.isCancelled == true { throw .cancelled }
            measured = (gain, aim, result)
            let missing = target - result.integrated
            let over = result.truePeak - aim
            if abs(missing) <= 0.1, over <= 0.05 { break }
            if over > 0.05 { aim -= over }
            // A secant step on loudness against gain (the limiter gives less than 1 LU a dB).
            // Where a dB of gain brings less than a quarter of a LU, the programme is too dense
            // to go louder at this ceiling: more gain would only limit it harder.
            var step = missing
            if let previous, gain != previous.gain {
                let slope = (result.integrated - previous.reached) / (gain - previous.gain)
                guard slope >= 0.25 else { break }
                step = missing / slope
            }
            previous = (gain, result.integrated)
            gain = min(max(gain + step, wanted - 1), wanted + 6)
        }
        if let measured { (gain, aim) = (measured.gain, measured.aim) }
        return LoudnessNormalizer(.limiter(limiter()), ceiling: ceiling, expected: measured?.reached)
    }

    /// source → resampler → (gain) → `encoder` → the output's container.
    private static func encode<Source: PCMSource, Encoder: AudioEncoder>(
        _ source: Source, resampler: PCMResampler, gain: LoudnessNormalizer?, encoder: Encoder, codec: AudioCodecID = .aac,
        profile: AudioObjectType, named name: String,
        to output: FilePath, formats: MediaFormatRegistry, gate: LoudnessGate?, control: JobControl?, progress: ((MediaProgress) -> Void)?
    ) throws(PipelineError) -> ConvertSummary {
        let outputOptions = MediaFormatRegistry.OutputOptions(encoderName: Transcode.encoderName(of: codec))
        let report: JobReport
        if let gain, let gate {
            // The decode of any lossy container the registry writes packets to (MP4, ADTS, MP3, Ogg Opus).
            func gated<Sink: PacketFileSink>(_ sink: Sink) throws(PipelineError) -> JobReport {
                // ReplayGain tags made again at the end only where they are written then (MP4).
                var gated = LoudnessGatedOutput(sink, promise: gate.promise, replayGain: gate.replayGain && sink is AudioPacketOutput,
                                                verdict: gate.verdict)
                var chain = source.transformed(by: resampler).transformed(by: gain).transformed(by: encoder)
                return try Pump.run(from: &chain, into: &gated, control: control, progress: progress)
            }
            report = try gated(try formats.packetOutput(output, options: outputOptions))
        } else {
            // Any container the registry writes packets to (MP4, ADTS, FLAC).
            func pump<Sink: PacketFileSink>(into sink: Sink) throws(PipelineError) -> JobReport {
                var sink = sink
                if let gain {
                    var chain = source.transformed(by: resampler).transformed(by: gain).transformed(by: encoder)
                    return try Pump.run(from: &chain, into: &sink, control: control, progress: progress)
                }
                var chain = source.transformed(by: resampler).transformed(by: encoder)
                return try Pump.run(from: &chain, into: &sink, control: control, progress: progress)
            }
            report = try pump(into: try formats.packetOutput(output, options: outputOptions))
        }
        var summary = ConvertSummary(input: name, inputFrames: resampler.inputFrameCount, outputFormat: encoder.inputFormat,
                                     outputFrames: encoder.inputFrameCount, packets: encoder.packetCount, priming: encoder.priming,
                                     padding: encoder.padding ?? 0, report: report)
        summary.profile = profile
        summary.splices = (encoder as? ParallelAACEncoder)?.splices ?? []
        summary.bitrate = encoder.bitrate
        return summary
    }

    /// The one composition every input goes through.
    private static func convert<Source: PCMSource>(_ source: Source, named name: String, to output: FilePath,
                                                   as outputKind: MediaFileFormat, options: ConvertOptions, profile: AudioObjectType,
                                                   gain: LoudnessNormalizer?, gate: LoudnessGate? = nil,
                                                   control: JobControl?,
                                                   progress: ((MediaProgress) -> Void)?) throws(PipelineError) -> ConvertSummary {
        if let codec = options.codec, codec != .aac, outputKind != .wav, outputKind != .rawPCM {
            // Another codec: at the rates its encoder takes (Opus: 48 kHz and less), its own
            // bitrate default; the input's own sample type unless a gain makes floats, so that a
            // lossless codec keeps a 16-bit input 16-bit.
            let resampler = PCMResampler(sampleRate: options.sampleRate, channelCount: options.channelCount,
                                         sampleFormat: gain == nil ? source.pcmFormat?.sampleFormat ?? .float32 : .float32,
                                         allowedSampleRates: options.codecs.sampleRates(for: codec))
            let encoder: any AudioEncoder
            do {
                encoder = try options.codecs.encoder(for: codec, settings: .init(
                    bitrate: options.bitrate ?? Transcode.defaultBitrate, lowersBitrateToFit: options.bitrate == nil, control: control))
            } catch {
                throw .codec(error)
            }
            return try encode(source, resampler: resampler, gain: gain, encoder: encoder, codec: codec, profile: profile,
                              named: name, to: output, formats: options.formats, gate: gate, control: control, progress: progress)
        }
        switch outputKind {
        case .adts, .mp4:
            let resampler = PCMResampler(sampleRate: options.sampleRate, channelCount: options.channelCount, sampleFormat: .float32,
                                         allowedSampleRates: AACProfiles.sampleRates(of: profile))
            // The registry's encoder of the profile: libavcodec's AAC-LC, or several at once with
            // --threads; HE-AAC over it. HE-AAC is opened for the output's layout now, when it is
            // known, so that what it refuses (a mono input for v2, a rate, a bitrate) is refused
            // in its words before the output is made; with --threads, by a probe of one.
            let settings = AudioCodecRegistry.EncoderSettings(
                bitrate: options.bitrate ?? AACProfiles.defaultBitrate(of: profile), lowersBitrateToFit: options.bitrate == nil,
                threads: options.threads, control: control, aac: .init(coder: options.coder))
            let format = profile.usesSpectralBandReplication ? source.pcmFormat.map(resampler.outputFormat(for:)) : nil
            let encoder: any AudioEncoder
            do {
                if let format, settings.threads > 1 {
                    var probe = settings
                    probe.threads = 1
                    probe.format = format
                    _ = try options.codecs.encoder(for: .aac, profile: profile, settings: probe)
                }
                var opened = settings
                opened.format = format
                encoder = try options.codecs.encoder(for: .aac, profile: profile, settings: opened)
            } catch {
                throw .codec(error)
            }
            return try encode(source, resampler: resampler, gain: gain, encoder: encoder, profile: profile, named: name, to: output,
                              formats: options.formats,
                              gate: gate, control: control, progress: progress)
        default:
            let sampleFormat = options.pcmSampleFormat ?? source.pcmFormat?.sampleFormat ?? .float32
            var sink = try options.formats.pcmOutput(output, as: PCMFileOutput.self, options: MediaFormatRegistry.OutputOptions(
                emptyMessage: "\(output): the input decodes to no audio"))
            let resampler: PCMResampler
            let report: JobReport
            if let gain {
                // The gain applies to float samples; the sample type is made after it.
                resampler = PCMResampler(sampleRate: options.sampleRate, channelCount: options.channelCount, sampleFormat: .float32)
                var chain = source.transformed(by: resampler).transformed(by: gain).transformed(by: PCMResampler(sampleFormat: sampleFormat))
                report = try Pump.run(from: &chain, into: &sink, control: control, progress: progress)
            } else {
                resampler = PCMResampler(sampleRate: options.sampleRate, channelCount: options.channelCount, sampleFormat: sampleFormat)
                var chain = source.transformed(by: resampler)
                report = try Pump.run(from: &chain, into: &sink, control: control, progress: progress)
            }
            return ConvertSummary(input: name, inputFrames: resampler.inputFrameCount, outputFormat: sink.format, outputFrames: sink.frames, packets: 0,
                                  priming: 0, padding: 0, report: report)
        }
    }
}

/// What the output of a normalised lossy encode (AAC, MP3, Opus) is held to (`nil`: measured only), and what it
/// measured.
struct LoudnessGate {
    let promise: DecodedLoudnessPromise?
    /// Whether the ReplayGain tags are made from the decoded output.
    let replayGain: Bool
    let verdict = DecodedLoudnessVerdict()
}

/// The level stage of `convert --normalize`: a fixed gain or the true-peak limiter, and a meter
/// of what comes out of it (the loudness reached).
final class LoudnessNormalizer: MediaTransform {
    enum Stage {
        case gain(PCMGain)
        case limiter(TruePeakLimiter)
    }

    let stage: Stage
    /// The ceiling promised, in dBTP; `nil` for no promise (silence, left as it is).
    let ceiling: Double?
    /// The loudness of what comes out, as a trial pass measured it (before encoding); `nil`
    /// where the gain alone says it (the measured loudness plus ``decibels``).
    let expected: Loudness?
    let meter = LoudnessMeter()

    init(_ stage: Stage, ceiling: Double? = nil, expected: Loudness? = nil) {
        self.stage = stage
        self.ceiling = ceiling
        self.expected = expected
    }

    /// The gain applied, in dB.
    var decibels: Double {
        switch stage {
        case .gain(let gain): gain.decibels
        case .limiter(let limiter): limiter.gain
        }
    }

    var limiter: TruePeakLimiter? {
        if case .limiter(let limiter) = stage { limiter } else { nil }
    }

    func transform(_ buffer: PCMBuffer) throws(CodecError) -> [PCMBuffer] {
        let output: [PCMBuffer]
        switch stage {
        case .gain(let gain): output = try gain.transform(buffer)
        case .limiter(let limiter): output = try limiter.transform(buffer)
        }
        for buffer in output { try meter.add(buffer) }
        return output
    }

    func finish() throws(CodecError) -> [PCMBuffer] {
        guard case .limiter(let limiter) = stage else { return [] }
        let output = try limiter.finish()
        for buffer in output { try meter.add(buffer) }
        return output
    }
}
