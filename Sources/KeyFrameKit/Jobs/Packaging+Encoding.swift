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
    /// each its own encoder and rendition on a thread of its own.
    public static func hls(_ input: FilePath, to directory: FilePath, options: Options = Options(), control: JobControl? = nil,
                           progress: ((MediaProgress) -> Void)? = nil) throws(PipelineError) -> Summary {
        try assemble(directory, options: options) { target throws(PipelineError) in
            options.bitrates.isEmpty
                ? [try rendition(input, to: target, options: options, control: control, progress: progress)]
                : try ladder(input, to: target, options: options, control: control, progress: progress)
        }
    }

    /// One rendition: copied when it can be, else encoded.
    static func rendition(_ input: FilePath, to directory: FilePath, options: Options, control: JobControl?,
                          progress: ((MediaProgress) -> Void)?) throws(PipelineError) -> Summary {
        if let layout = copyableLayout(of: input, options: options) {
            return try copyRendition(input, layout: layout, to: directory, options: options, control: control, progress: progress)
        }
        let source = try AudioFileInput(path: input)
        let resampler = PCMResampler(sampleFormat: .float32, allowedSampleRates: AACEncoder.supportedSampleRates)
        let encoder: any GaplessEncoder
        do {
            encoder = try AudioCodecRegistry.encoder(for: .aac, profile: .aacLC, settings: .init(
                bitrate: options.bitrate ?? Transcode.defaultBitrate, lowersBitrateToFit: options.bitrate == nil))
        } catch {
            throw .codec(error)
        }
        let sink = try HLSSegmentOutput(directory: directory, segmentDuration: options.segmentDuration, writesDASHHeader: options.dash)
        return try encodeRendition(source.transformed(by: resampler), encoder: encoder, into: sink, control: control, progress: progress)
    }

    /// `source` → `encoder` → `sink`, pumped (the encoder's type opened from the registry's).
    private static func encodeRendition<Source: PCMSource, Encoder: GaplessEncoder>(
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
    static func ladder(_ input: FilePath, to directory: FilePath, options: Options, control: JobControl?,
                       progress: ((MediaProgress) -> Void)?) throws(PipelineError) -> [Summary] {
        let source = try AudioFileInput(path: input)
        let resampler = PCMResampler(sampleFormat: .float32, allowedSampleRates: AACEncoder.supportedSampleRates)
        let results = RenditionResults(count: options.bitrates.count)
        // A branch per bitrate, its encoder and output handed to its thread as they are made
        // (nothing keeps them here); one that cannot be made (a directory that holds a package)
        // cancels the branches made before it, whose outputs remove what they made.
        var branches: [Tee<PCMBuffer>.Branch] = []
        for (index, bitrate) in options.bitrates.enumerated() {
            do throws(PipelineError) {
                let encoder: any GaplessEncoder
                do { encoder = try AudioCodecRegistry.encoder(for: .aac, profile: .aacLC, settings: .init(bitrate: bitrate)) } catch {
                    throw .codec(error)
                }
                let output = try HLSSegmentOutput(directory: directory.appending("\(bitrate / 1000)k"), segmentDuration: options.segmentDuration,
                                                  writesDASHHeader: options.dash)
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
    private static func branch<Encoder: GaplessEncoder>(_ output: sending HLSSegmentOutput, encoder: sending Encoder, name: String,
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
