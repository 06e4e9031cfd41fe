internal import Synchronization

extension Packaging {
    /// Packages `input` as HLS in `directory`: one rendition (`index.m3u8`, `init.mp4` and CMAF
    /// segments), or with ``/MediaStreaming/Packaging/Options/ladder`` a ladder (a rendition
    /// each in `64k/`, `96k-opus/`, `flac/`, …, and `master.m3u8`), and with
    /// ``/MediaStreaming/Packaging/Options/dash`` a `manifest.mpd` over the same segments.
    /// Every file is written atomically, the playlists and manifests last; nothing is left on an
    /// error.
    ///
    /// AAC input with no bitrate asked is copied, as is an MP4 of Opus, FLAC or ALAC
    /// (``/MediaStreaming/Packaging/hls(copying:to:options:control:progress:)``); anything else
    /// is decoded (``AudioFileInput``), resampled to a rate the codec takes and encoded (AAC, or
    /// ``/MediaStreaming/Packaging/Options/codec``). A ladder
    /// reads and decodes its input once, into a ``/MediaCore/Tee`` with a branch per bitrate,
    /// each its own encoder and rendition on a thread of its own; the encoders come from `codecs`.
    public static func hls(_ input: FilePath, to directory: FilePath, options: Options = Options(), codecs: AudioCodecRegistry = .standard,
                           control: JobControl? = nil, progress: ((MediaProgress) -> Void)? = nil) throws(PipelineError) -> Summary {
        // One wall-clock origin for every rendition's program date-times.
        let options = options.dated
        var adjusted: Double?
        var summary = try assemble(directory, options: options) { target throws(PipelineError) in
            options.ladder.isEmpty
                ? [try rendition(input, to: target, options: options, codecs: codecs, control: control, progress: progress)]
                : try ladder(input, to: target, options: options, codecs: codecs, adjustedSegmentDuration: &adjusted, control: control,
                             progress: progress)
        }
        summary.adjustedSegmentDuration = adjusted
        return summary
    }

    /// The encoder of `profile` in `codecs` at `bitrate` (its default when `nil`, fitted to the
    /// input), opened for `format` when it is known.
    static func encoder(profile: AudioObjectType, bitrate: Int?, format: PCMFormat?,
                        codecs: AudioCodecRegistry) throws(PipelineError) -> any AudioEncoder {
        do {
            return try codecs.encoder(for: .aac, profile: profile, settings: .init(
                bitrate: bitrate ?? AACProfiles.defaultBitrate(of: profile),
                lowersBitrateToFit: bitrate == nil, format: format))
        } catch {
            throw .codec(error)
        }
    }

    /// The packets from one place a decoder may start to the next in `output` for encoders of
    /// `profile` at `sampleRate`: HE-AAC's segment (or part) starts; `nil` for AAC-LC, every
    /// frame of which is a start. (HE-AAC v2's PS header rides in the frames that carry the SBR
    /// header, so the same marks serve it.)
    static func randomAccessInterval(of output: HLSSegmentOutput, profile: AudioObjectType, sampleRate: Int?) -> Int64? {
        guard profile.usesSpectralBandReplication else { return nil }
        return output.randomAccessInterval(packetFrames: AACProfiles.framesPerPacket(of: profile), sampleRate: sampleRate ?? 48000)
    }

    /// `encoder` with its packets at every `interval`-th marked as places a decoder may start
    /// (HE-AAC's segment starts) and `leadingSilence` frames before the input (a ladder's
    /// priming); `encoder` itself when there is neither.
    static func aligned<Encoder: AudioEncoder>(_ encoder: Encoder, interval: Int64?, leadingSilence: Int = 0) -> any AudioEncoder {
        guard interval != nil || leadingSilence > 0 else { return encoder }
        return AlignedEncoder(encoder, leadingSilence: leadingSilence, randomAccessInterval: interval)
    }

    /// One rendition: copied when it can be, else encoded (resampled to the rate and channels
    /// asked, or to a rate the codec or profile takes).
    static func rendition(_ input: FilePath, to directory: FilePath, options: Options, codecs: AudioCodecRegistry, control: JobControl?,
                          progress: ((MediaProgress) -> Void)?) throws(PipelineError) -> Summary {
        // An Ogg Opus file's packets are copied too, into Opus segments, unless another codec or
        // an encode is asked.
        if options.copiesProfile, (options.codec ?? .opus) == .opus, (options.formats ?? .standard).detect(input) == .oggOpus {
            // (Asked for a bitrate, rate or channels, it is encoded again as Opus, below.)
            let copying = options.measuresLoudness ? telling(try TrackLoudness.measure(decoding: input, control: control), in: options) : options
            return try copyOggOpusRendition(input, to: directory, options: copying, control: control, progress: progress)
        }
        let layout = trackLayout(of: input, options: options)
        if let layout, copies(layout, options: options) {
            // The init segment's ludt, from the copied packets decoded (packed audio has none).
            let copying = options.measuresLoudness && options.segmentFormat == .cmaf
                ? telling(try TrackLoudness.measure(layout, formats: options.formats ?? .containers, control: control), in: options) : options
            return try copyRendition(input, layout: layout, to: directory, options: copying, control: control, progress: progress)
        }
        let source = try AudioFileInput(path: input, registry: options.formats ?? .standard)
        // The codec asked, else an MP4 input's own (Opus, FLAC or ALAC, encoded again at the
        // bitrate, rate or channels asked) or an Ogg Opus file's, else AAC.
        let isOggOpus = (options.formats ?? .standard).detect(input) == .oggOpus
        let codec = options.codec ?? layout.flatMap { Self.describedCodec(of: $0, codecs: codecs) } ?? (isOggOpus ? .opus : .aac)
        let profile = codec == .aac
            ? try AACProfiles.resolve(options.profile, channelCount: options.channelCount ?? source.channelCount, bitrate: options.bitrate,
                                      sampleRate: options.sampleRate ?? source.pcmFormat?.sampleRate, input: input.string)
            : try Self.noProfile(options.profile, codec: codec)
        let lossless = try Self.checkCarried(codec, codecs: codecs)
        if lossless, options.bitrate != nil { throw .unsupported("--bitrate: \(codec) is lossless and takes none") }
        // A lossless codec keeps the input's integers (a 16-bit input stays 16-bit); the rest take floats.
        let resampler = try Self.resampler(to: options.sampleRate, channelCount: options.channelCount,
                                           sampleFormat: lossless ? source.pcmFormat?.sampleFormat ?? .float32 : .float32,
                                           rates: Self.sampleRates(of: codec, profile: profile, codecs: codecs))
        let format = source.pcmFormat.map(resampler.outputFormat(for:))
        let encoder = try encoder(of: codec, profile: profile, bitrate: options.bitrate, format: format, codecs: codecs)
        let sink = try HLSSegmentOutput(directory: directory, segmentDuration: options.segmentDuration, writesDASHHeader: options.dash,
                                        audioCodecs: codecs.descriptions, timedMetadata: options.carriesTimedMetadata, dateOrigin: options.dateOrigin,
                                        segmentFormat: options.segmentFormat)
        let interval = randomAccessInterval(of: sink, profile: profile, sampleRate: format?.sampleRate)
        return try encodeRendition(AnnouncingSource(source, announcing: options.events).transformed(by: resampler).transformed(by: LoudnessTap(measuring: options.measuresLoudness)), encoder: aligned(encoder, interval: interval),
                                   into: sink, control: control, progress: progress)
    }

    /// `options` with `loudness`, when measured, told before everything else: a copy's `ludt`.
    static func telling(_ loudness: StreamLoudness?, in options: Options) -> Options {
        guard let loudness else { return options }
        var told = options
        told.events.insert(.loudness(loudness), at: 0)
        return told
    }

    /// The codec of an input's track `layout` when it is one other than AAC that the segments
    /// carry and `codecs` encodes (Opus, FLAC, ALAC); else `nil`.
    static func describedCodec(of layout: AudioTrackLayout, codecs: AudioCodecRegistry) -> AudioCodecID? {
        let codec = layout.audioFormat.codec
        guard codec != .aac, (try? checkCarried(codec, codecs: codecs)) != nil else { return nil }
        return codec
    }

    /// The encoder of `codec` (and for AAC `profile`) in `codecs` at `bitrate` (its default
    /// when `nil`, fitted to the input; none for a lossless codec), opened for `format` when it
    /// is known.
    static func encoder(of codec: AudioCodecID, profile: AudioObjectType, bitrate: Int?, format: PCMFormat?,
                        codecs: AudioCodecRegistry) throws(PipelineError) -> any AudioEncoder {
        guard codec != .aac else { return try encoder(profile: profile, bitrate: bitrate, format: format, codecs: codecs) }
        do {
            return try codecs.encoder(for: codec, settings: .init(bitrate: bitrate ?? Transcode.defaultBitrate, lowersBitrateToFit: bitrate == nil,
                                                                  format: format))
        } catch {
            throw .codec(error)
        }
    }

    /// Refuses an AAC profile other than AAC-LC (or `.automatic`) for `codec`, which is not
    /// AAC; AAC-LC, the profile that means none.
    static func noProfile(_ profile: AACProfileChoice, codec: AudioCodecID) throws(PipelineError) -> AudioObjectType {
        guard profile == .aacLC || profile.isAutomatic else {
            throw .unsupported("the profile \(profile) is AAC's; \(codec) has none")
        }
        return .aacLC
    }

    /// Whether `codec` is lossless, once checked that fMP4 segments carry it (a codec registry
    /// description: AAC, Opus, FLAC, ALAC) and that `codecs` encodes it.
    ///
    /// - Throws: ``/MediaCore/PipelineError/Code/unsupported`` naming the codecs HLS carries.
    static func checkCarried(_ codec: AudioCodecID, codecs: AudioCodecRegistry) throws(PipelineError) -> Bool {
        guard codecs.descriptions.matching(codec) != nil, codecs.encoders.contains(where: { $0.codec == codec }) else {
            let carried = codecs.descriptions.map(\.codec).filter { described in codecs.encoders.contains { $0.codec == described } }
            throw .unsupported("HLS and DASH segments (fMP4) carry \(carried.map(\.name).joined(separator: ", ")), not \(codec)")
        }
        return isLossless(codec)
    }

    /// Whether `codec` is lossless (FLAC, ALAC): it takes no bitrate, and its packets last what
    /// they hold.
    public static func isLossless(_ codec: AudioCodecID) -> Bool { codec == .flac || codec == .alac }

    /// The sample rates an encoder of `codec` (AAC: of `profile`) takes; `nil` for any.
    static func sampleRates(of codec: AudioCodecID, profile: AudioObjectType, codecs: AudioCodecRegistry) -> [Int]? {
        codec == .aac ? AACProfiles.sampleRates(of: profile) : codecs.sampleRates(for: codec)
    }

    /// Samples per packet of an encoder of `codec` (AAC: of `profile`): 1024 (AAC-LC), 2048
    /// (HE-AAC), 960 (Opus's 20 ms), 4096 (FLAC and ALAC, as libavcodec's encoders are
    /// configured here: ``/AudioCodec/LibavcodecAudioEncoder/Configuration``).
    static func framesPerPacket(of codec: AudioCodecID, profile: AudioObjectType) -> Int {
        switch codec {
        case .aac: AACProfiles.framesPerPacket(of: profile)
        case .opus: 960
        case .alac: LibavcodecAudioEncoder.Configuration.alac.frameLength ?? 4096
        default: LibavcodecAudioEncoder.Configuration.flac.frameLength ?? 4096
        }
    }

    /// A resampler to `sampleRate` (else the input's, or the nearest of `rates`) and
    /// `channelCount`, giving `sampleFormat`.
    ///
    /// - Throws: ``/MediaCore/PipelineError/Code/codec`` for a rate asked that is not one of
    ///   `rates`; unsupported for channels outside 1–8.
    static func resampler(to sampleRate: Int?, channelCount: Int?, sampleFormat: PCMSampleFormat,
                          rates: [Int]?) throws(PipelineError) -> PCMResampler {
        if let sampleRate, let rates, !rates.contains(sampleRate) { throw .codec(.unsupportedSampleRate(sampleRate, supported: rates)) }
        if let channelCount, !(1...8).contains(channelCount) { throw .unsupported("\(channelCount) channels: give 1 to 8") }
        return PCMResampler(sampleRate: sampleRate, channelCount: channelCount, sampleFormat: sampleFormat, allowedSampleRates: rates)
    }

    /// The segment duration of a ladder at `sampleRate` whose renditions' frames are `frames`
    /// samples at most: `asked` rounded up to a whole number of such frames (down when that
    /// passes 60 s), so that every rendition's segments end at the same samples.
    static func ladderSegmentDuration(_ asked: Double, frames: Int, sampleRate: Int) -> Double {
        let exact = asked * Double(sampleRate) / Double(frames)
        var count = max(1, Int((exact - 1e-9).rounded(.up)))
        if Double(count * frames) / Double(sampleRate) > 60 { count = max(1, Int(exact.rounded(.down))) }
        return Double(count * frames) / Double(sampleRate)
    }

    /// `source` → `encoder` → `sink`, pumped (the encoder's type opened from the registry's).
    private static func encodeRendition<Source: PCMSource, Encoder: AudioEncoder>(
        _ source: Source, encoder: Encoder, into sink: HLSSegmentOutput, control: JobControl?, progress: ((MediaProgress) -> Void)?
    ) throws(PipelineError) -> Summary {
        var sink = sink
        var chain = source.transformed(by: encoder)
        let report = try Pump.run(from: &chain, into: &sink, control: control, progress: progress)
        var summary = summary(of: sink, copied: false)
        summary.report = report
        return summary
    }

    /// A ladder: the input read and decoded once, into a ``/MediaCore/Tee`` with a branch per
    /// rendition, each its own encoder and rendition on a thread of its own (`64k/`,
    /// `96k-opus/`, `flac/`, …).
    ///
    /// Each rendition is of its own codec (``Options/LadderRendition``) or the ladder's, and an
    /// AAC rendition of its own profile or the ladder's; an `.automatic` one is chosen by the
    /// rendition's bitrate and the input's channels
    /// (``/MediaFormats/AACProfileChoice/automaticObjectType(channelCount:bitrate:sampleRate:)``: 32k, 64k
    /// and 128k stereo give HE-AAC v2, v1 and AAC-LC). Every rendition has the same rate, one
    /// each codec takes (HE-AAC 16–48 kHz, Opus 48 kHz). Where their packets differ in length
    /// (HE-AAC's 2048 samples, AAC-LC's 1024, Opus's 960, FLAC's and ALAC's 4096), segments last
    /// a whole number of each (`adjustedSegmentDuration` says so when that is not the duration
    /// asked), and every rendition's priming is raised to the largest (AAC-LC's 1024, HE-AAC's
    /// 3010, Opus's 312, the lossless codecs' 0, to HE-AAC v2's 3588, by silence the edit list
    /// skips), so that all start and end their segments at the same samples.
    static func ladder(_ input: FilePath, to directory: FilePath, options: Options, codecs: AudioCodecRegistry,
                       adjustedSegmentDuration: inout Double?,
                       control: JobControl?, progress: ((MediaProgress) -> Void)?) throws(PipelineError) -> [Summary] {
        let source = try AudioFileInput(path: input, registry: options.formats ?? .standard)
        let names = options.ladderDirectories
        var renditions: [(codec: AudioCodecID, profile: AudioObjectType, bitrate: Int?)] = []
        var rates: [Int]?
        for rendition in options.ladder {
            let codec = options.codec(of: rendition)
            let lossless = try checkCarried(codec, codecs: codecs)
            if lossless != (rendition.bitrate == nil) {
                throw .unsupported("--bitrates: \(codec) " + (lossless ? "is lossless and takes no bitrate (lossless:\(codec))"
                                                                        : "needs a bitrate (96k:\(codec))"))
            }
            let profile = codec == .aac
                ? try AACProfiles.resolve(options.profile(of: rendition), channelCount: options.channelCount ?? source.channelCount,
                                          bitrate: rendition.bitrate, sampleRate: options.sampleRate ?? source.pcmFormat?.sampleRate,
                                          input: input.string)
                : try noProfile(rendition.profile ?? .aacLC, codec: codec)
            renditions.append((codec, profile, rendition.bitrate))
            // The rates every rendition takes.
            if let taken = sampleRates(of: codec, profile: profile, codecs: codecs) { rates = rates.map { $0.filter(taken.contains) } ?? taken }
        }
        if let rates, rates.isEmpty {
            throw .unsupported("--bitrates: no sample rate suits every rendition ("
                               + renditions.map { "\($0.codec)\($0.codec == .aac ? " \($0.profile)" : "")" }.joined(separator: ", ") + ")")
        }
        let resampler = try resampler(to: options.sampleRate, channelCount: options.channelCount, sampleFormat: .float32, rates: rates)
        let format = source.pcmFormat.map(resampler.outputFormat(for:))
        // The renditions share floats; a lossless one is encoded at the input's own depth (a
        // 16-bit input stays 16-bit: its floats are k/32768, which convert back exactly).
        func encoderFormat(of codec: AudioCodecID) -> PCMFormat? {
            guard isLossless(codec), var format, let depth = source.pcmFormat?.sampleFormat, depth != .float32, depth != .float64 else { return format }
            format.sampleFormat = depth
            return format
        }
        var segmentDuration = options.segmentDuration
        let packetLengths = Set(renditions.map { framesPerPacket(of: $0.codec, profile: $0.profile) })
        if packetLengths.count > 1 || renditions.contains(where: { $0.profile.usesSpectralBandReplication }) {
            guard let format else {
                throw .unsupported("\(input): the input's PCM layout is not known before decoding; a ladder of HE-AAC or of packets "
                                   + "of different lengths needs it")
            }
            let common = packetLengths.reduce(1) { lcm, length in lcm / Int(greatestCommonDivisor(UInt64(lcm), UInt64(length))) * length }
            segmentDuration = ladderSegmentDuration(options.segmentDuration, frames: common, sampleRate: format.sampleRate)
            if abs(segmentDuration - options.segmentDuration) > 1e-9 { adjustedSegmentDuration = segmentDuration }
        }
        // Every encoder tried first: a bitrate or rate one cannot take is an error before any
        // file, and the ladder's priming is the largest of theirs (each rendition's own is
        // known once its encoder is open; a throwaway one says it before the branches are made).
        var primings: [Int] = []
        for rendition in renditions {
            primings.append(try encoder(of: rendition.codec, profile: rendition.profile, bitrate: rendition.bitrate,
                                        format: encoderFormat(of: rendition.codec), codecs: codecs).priming)
        }
        let ladderPriming = primings.max() ?? 0
        let results = RenditionResults(count: renditions.count)
        // A branch per rendition, its encoder and output handed to its thread as they are made
        // (nothing keeps them here); one that cannot be made (a directory that holds a package)
        // cancels the branches made before it, whose outputs remove what they made.
        var branches: [Tee<PCMBuffer>.Branch] = []
        for (index, rendition) in renditions.enumerated() {
            do throws(PipelineError) {
                let output = try HLSSegmentOutput(directory: directory.appending(names[index]), segmentDuration: segmentDuration,
                                                  writesDASHHeader: options.dash, audioCodecs: codecs.descriptions,
                                                  timedMetadata: options.carriesTimedMetadata, dateOrigin: options.dateOrigin,
                                                  segmentFormat: options.segmentFormat)
                let interval = randomAccessInterval(of: output, profile: rendition.profile, sampleRate: format?.sampleRate)
                let encoder = aligned(try encoder(of: rendition.codec, profile: rendition.profile, bitrate: rendition.bitrate,
                                                  format: encoderFormat(of: rendition.codec), codecs: codecs),
                                      interval: interval, leadingSilence: ladderPriming - primings[index])
                branches.append(branch(output, encoder: encoder, name: names[index]) { results.set(index, $0) })
            } catch {
                var made = Tee(branches)
                made.cancel()
                throw error
            }
        }
        var tee = Tee(branches)
        var chain = AnnouncingSource(source, announcing: options.events).transformed(by: resampler).transformed(by: LoudnessTap(measuring: options.measuresLoudness))
        do throws(PipelineError) {
            let report = try Pump.run(from: &chain, into: &tee, control: control, progress: progress)
            // One pump made every rendition: its report (the tee's branches, a rendition each)
            // goes with the first, so that the ladder's sum of reports is it.
            var summaries = try results.all()
            if !summaries.isEmpty { summaries[0].report = report }
            return summaries
        } catch {
            // A branch that failed while the others finished: the finished renditions go too
            // (every one was made by this ladder), so that nothing half a ladder is left.
            for name in names { remove(directory.appending(name), directoryToo: true) }
            throw error
        }
    }

    /// A ladder's branch on a thread of its own: `encoder` → `output`, its summary given to
    /// `finished` on that thread.
    private static func branch<Encoder: AudioEncoder>(_ output: sending HLSSegmentOutput, encoder: sending Encoder, name: String,
                                                        finished: @escaping @Sendable (Summary) -> Void) -> Tee<PCMBuffer>.Branch {
        Tee.Branch(threaded: output.transforming(by: encoder), name: name) { sink in finished(summary(of: sink.downstream, copied: false)) }
    }

    /// The renditions' summaries, set by their branch threads.
    private final class RenditionResults: Sendable {
        private let summaries: Mutex<[Summary?]>
        init(count: Int) { summaries = Mutex(Array(repeating: nil, count: count)) }
        func set(_ index: Int, _ summary: Summary) { summaries.withLock { $0[index] = summary } }
        func all() throws(PipelineError) -> [Summary] {
            let all = summaries.withLock { $0 }
            guard all.allSatisfy({ $0 != nil }) else { throw .unsupported("a rendition did not finish") }
            return all.compactMap { $0 }
        }
    }
}
