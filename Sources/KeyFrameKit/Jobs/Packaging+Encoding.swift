internal import Synchronization

extension Packaging {
    /// Packages `input` as HLS in `directory`: one rendition (`index.m3u8`, `init.mp4` and CMAF
    /// segments), or with ``/MediaStreaming/Packaging/Options/bitrates`` a ladder (a rendition
    /// per bitrate in `64k/`, …, and `master.m3u8`), and with
    /// ``/MediaStreaming/Packaging/Options/dash`` a `manifest.mpd` over the same segments.
    /// Every file is written atomically, the playlists and manifests last; nothing is left on an
    /// error.
    ///
    /// AAC input with no bitrate asked is copied
    /// (``/MediaStreaming/Packaging/hls(copying:to:options:control:progress:)``); anything else
    /// is decoded (``AudioFileInput``), resampled to a rate AAC carries and encoded. A ladder
    /// reads and decodes its input once, into a ``/MediaCore/Tee`` with a branch per bitrate,
    /// each its own encoder and rendition on a thread of its own; the encoders come from `codecs`.
    public static func hls(_ input: FilePath, to directory: FilePath, options: Options = Options(), codecs: AudioCodecRegistry = .standard,
                           control: JobControl? = nil, progress: ((MediaProgress) -> Void)? = nil) throws(PipelineError) -> Summary {
        var adjusted: Double?
        var summary = try assemble(directory, options: options) { target throws(PipelineError) in
            options.bitrates.isEmpty
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
    /// asked, or to a rate the profile takes).
    static func rendition(_ input: FilePath, to directory: FilePath, options: Options, codecs: AudioCodecRegistry, control: JobControl?,
                          progress: ((MediaProgress) -> Void)?) throws(PipelineError) -> Summary {
        if let layout = copyableLayout(of: input, options: options) {
            return try copyRendition(input, layout: layout, to: directory, options: options, control: control, progress: progress)
        }
        let source = try AudioFileInput(path: input, registry: options.formats ?? .standard)
        let profile = try AACProfiles.resolve(options.profile, channelCount: options.channelCount ?? source.channelCount, bitrate: options.bitrate,
                                              sampleRate: options.sampleRate ?? source.pcmFormat?.sampleRate, input: input.string)
        let resampler = try AACProfiles.resampler(to: options.sampleRate, channelCount: options.channelCount, for: profile)
        let format = source.pcmFormat.map(resampler.outputFormat(for:))
        let encoder = try encoder(profile: profile, bitrate: options.bitrate, format: format, codecs: codecs)
        let sink = try HLSSegmentOutput(directory: directory, segmentDuration: options.segmentDuration, writesDASHHeader: options.dash,
                                        audioCodecs: codecs.descriptions)
        let interval = randomAccessInterval(of: sink, profile: profile, sampleRate: format?.sampleRate)
        return try encodeRendition(source.transformed(by: resampler), encoder: aligned(encoder, interval: interval),
                                   into: sink, control: control, progress: progress)
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
    /// bitrate, each its own encoder and rendition on a thread of its own (`64k/`, …).
    ///
    /// Each rendition's profile is its own (``Options/ladderProfiles``) or the ladder's; an
    /// `.automatic` one is chosen by the rendition's bitrate and the input's channels
    /// (``/MediaFormats/AACProfileChoice/automaticObjectType(channelCount:bitrate:sampleRate:)``: 32k, 64k
    /// and 128k stereo give HE-AAC v2, v1 and AAC-LC). A ladder with HE-AAC renditions (v1 or
    /// v2) is resampled to a rate HE-AAC takes (16–48 kHz); its segments last a whole number of
    /// HE-AAC's 2048-sample frames (`adjustedSegmentDuration` says so when that is not the
    /// duration asked), and every rendition's priming is raised to the largest (AAC-LC's 1024
    /// and HE-AAC's 3010 to HE-AAC v2's 3588, by silence the edit list skips), so that all start
    /// and end their segments at the same samples.
    static func ladder(_ input: FilePath, to directory: FilePath, options: Options, codecs: AudioCodecRegistry,
                       adjustedSegmentDuration: inout Double?,
                       control: JobControl?, progress: ((MediaProgress) -> Void)?) throws(PipelineError) -> [Summary] {
        let source = try AudioFileInput(path: input, registry: options.formats ?? .standard)
        var profiles: [AudioObjectType] = []
        for bitrate in options.bitrates {
            profiles.append(try AACProfiles.resolve(options.profile(ofRendition: bitrate), channelCount: options.channelCount ?? source.channelCount,
                                                    bitrate: bitrate, sampleRate: options.sampleRate ?? source.pcmFormat?.sampleRate,
                                                    input: input.string))
        }
        let hasHEAAC = profiles.contains { $0.usesSpectralBandReplication }
        let resampler = try AACProfiles.resampler(to: options.sampleRate, channelCount: options.channelCount, for: hasHEAAC ? .sbr : .aacLC)
        let format = source.pcmFormat.map(resampler.outputFormat(for:))
        var segmentDuration = options.segmentDuration
        if hasHEAAC {
            guard let format else { throw .unsupported("\(input): the input's PCM layout is not known before decoding; an HE-AAC ladder needs it") }
            segmentDuration = ladderSegmentDuration(options.segmentDuration, frames: HEAACEncoder.framesPerPacket, sampleRate: format.sampleRate)
            if abs(segmentDuration - options.segmentDuration) > 1e-9 { adjustedSegmentDuration = segmentDuration }
        }
        // Every encoder tried first: a bitrate or rate one cannot take is an error before any
        // file, and the ladder's priming is the largest of theirs (each rendition's own is
        // known once its encoder is open; a throwaway one says it before the branches are made).
        var primings: [Int] = []
        for (bitrate, profile) in zip(options.bitrates, profiles) {
            primings.append(try encoder(profile: profile, bitrate: bitrate, format: format, codecs: codecs).priming)
        }
        let ladderPriming = primings.max() ?? 0
        let results = RenditionResults(count: options.bitrates.count)
        // A branch per bitrate, its encoder and output handed to its thread as they are made
        // (nothing keeps them here); one that cannot be made (a directory that holds a package)
        // cancels the branches made before it, whose outputs remove what they made.
        var branches: [Tee<PCMBuffer>.Branch] = []
        for (index, bitrate) in options.bitrates.enumerated() {
            do throws(PipelineError) {
                let output = try HLSSegmentOutput(directory: directory.appending("\(bitrate / 1000)k"), segmentDuration: segmentDuration,
                                                  writesDASHHeader: options.dash, audioCodecs: codecs.descriptions)
                let interval = randomAccessInterval(of: output, profile: profiles[index], sampleRate: format?.sampleRate)
                let encoder = aligned(try encoder(profile: profiles[index], bitrate: bitrate, format: format, codecs: codecs), interval: interval,
                                      leadingSilence: ladderPriming - primings[index])
                branches.append(branch(output, encoder: encoder, name: "\(bitrate / 1000)k") { results.set(index, $0) })
            } catch {
                var made = Tee(branches)
                made.cancel()
                throw error
            }
        }
        var tee = Tee(branches)
        var chain = source.transformed(by: resampler)
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
            for bitrate in options.bitrates { remove(directory.appending("\(bitrate / 1000)k"), directoryToo: true) }
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
