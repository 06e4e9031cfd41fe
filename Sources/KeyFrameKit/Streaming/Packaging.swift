public import SystemPackage
internal import Synchronization

/// Packaging audio for HTTP streaming: `keyframe package`.
///
/// Composition: AAC input (M4A/MP4 or ADTS, stream-copied) → ``HLSSegmentOutput``; or any other
/// input (``AudioFileInput``) → ``/AudioCodec/PCMResampler`` → ``/AudioCodec/AACEncoder`` →
/// ``HLSSegmentOutput``; around the ``Pump``.
public enum Packaging {
    /// How a rendition is made.
    public struct Options: Sendable {
        /// The wanted segment length, in seconds.
        public var segmentDuration: Double
        /// Encode at this bitrate (bits per second); `nil` stream-copies an AAC input and encodes
        /// anything else at 128 kb/s.
        public var bitrate: Int?
        /// A ladder: one rendition per bitrate, each in a directory of its own (`64k/`, …),
        /// named by `master.m3u8`; their segment boundaries are identical. Empty for one rendition.
        public var bitrates: [Int]
        /// Also write `manifest.mpd` (MPEG-DASH) over the same segments.
        public var dash: Bool

        /// Options: 6-second segments, AAC copied, one rendition, no DASH.
        public init(segmentDuration: Double = 6, bitrate: Int? = nil, bitrates: [Int] = [], dash: Bool = false) {
            self.segmentDuration = segmentDuration
            self.bitrate = bitrate
            self.bitrates = bitrates
            self.dash = dash
        }
    }

    /// What a packaging wrote.
    public struct Summary: Sendable {
        /// The playlist written: the media playlist, or for a ladder the master playlist.
        public var playlist: FilePath
        /// The renditions, as the manifests name them.
        public var renditions: [StreamManifests.Rendition]
        /// The DASH manifest, when one was written.
        public var mpd: FilePath?
        /// The segments: their durations in seconds.
        public var segmentDurations: [Double]
        /// `EXT-X-TARGETDURATION`.
        public var targetDuration: Int
        /// Whether the AAC was copied (else encoded).
        public var copied: Bool
    }

    /// Packages `input` as HLS in `directory`: one rendition (`index.m3u8`, `init.mp4` and CMAF
    /// segments), or with ``Options/bitrates`` a ladder (a rendition per bitrate in `64k/`, …,
    /// and `master.m3u8`), and with ``Options/dash`` a `manifest.mpd` over the same segments.
    /// Every file is written atomically, the playlists and manifests last; nothing is left on an
    /// error.
    public static func hls(_ input: FilePath, to directory: FilePath, options: Options = Options(), control: JobControl? = nil,
                           progress: ((MediaProgress) -> Void)? = nil) throws(PipelineError) -> Summary {
        guard Set(options.bitrates).count == options.bitrates.count else { throw .unsupported("--bitrates: each bitrate once") }
        if !options.bitrates.isEmpty, FileSystemCalls.exists(directory.appending("master.m3u8")) {
            throw .unsupported("\(directory) already holds a package (master.m3u8); choose another directory or remove it")
        }
        // On an error (or Ctrl-C) everything written goes: the renditions finished, the
        // manifests, and the directory when this made it.
        let createdDirectory = !FileSystemCalls.exists(directory)
        var made: [FilePath] = []
        var manifests: [FilePath] = []
        do throws(PipelineError) {
            var summary: Summary
            if options.bitrates.isEmpty {
                summary = try rendition(input, to: directory, options: options, control: control, progress: progress)
                made.append(directory)
            } else {
                do { try FileSystemCalls.makeDirectory(directory) } catch {
                    throw PipelineError.stream(.system(operation: "make the directory", path: directory, errno: error))
                }
                made += options.bitrates.map { directory.appending("\($0 / 1000)k") }
                let parts = try ladder(input, to: directory, options: options, control: control, progress: progress)
                var renditions: [StreamManifests.Rendition] = []
                for (bitrate, part) in zip(options.bitrates, parts) {
                    var named = part.renditions[0]
                    named.path = "\(bitrate / 1000)k"
                    renditions.append(named)
                }
                // The same boundaries in every rendition: a player switches at any segment.
                guard Set(renditions.map { $0.segments.map(\.duration) }).count == 1 else {
                    throw PipelineError.unsupported("the renditions' segments do not line up")
                }
                try write(StreamManifests.masterPlaylist(renditions), to: directory.appending("master.m3u8"))
                manifests.append(directory.appending("master.m3u8"))
                summary = Summary(playlist: directory.appending("master.m3u8"), renditions: renditions, segmentDurations: renditions[0].segments.map {
                    Double($0.duration) / Double(max(renditions[0].timescale, 1))
                }, targetDuration: 0, copied: false)
                summary.targetDuration = HLSMediaPlaylist(mapURI: nil, segments: summary.segmentDurations.map { .init(uri: "", duration: $0) }).targetDuration
            }
            if options.dash {
                let path = directory.appending("manifest.mpd")
                try write(StreamManifests.mpd(summary.renditions), to: path)
                summary.mpd = path
            }
            return summary
        } catch {
            for path in manifests { try? FileSystemCalls.unlink(path) }
            for rendition in made { remove(rendition, directoryToo: rendition != directory || createdDirectory) }
            if createdDirectory { try? FileSystemCalls.removeDirectory(directory) }
            throw error
        }
    }

    /// Writes `text` to `path` atomically.
    static func write(_ text: String, to path: FilePath) throws(PipelineError) {
        let sink: FileByteSink
        do { sink = try FileByteSink(path: path) } catch { throw .stream(error) }
        do throws(ByteStreamError) {
            try sink.write(Array(text.utf8))
            try sink.commit()
        } catch {
            sink.cancel()
            throw .stream(error)
        }
    }

    /// Removes a rendition directory's files (`index.m3u8`, `init.mp4`, segments), and with
    /// `directoryToo` the directory when it is then empty.
    static func remove(_ directory: FilePath, directoryToo: Bool) {
        guard let playlist = try? HLSMediaPlaylist.files(of: directory.appending("index.m3u8")) else { return }
        for path in [directory.appending("index.m3u8"), playlist.initSegment, directory.appending(HLSSegmentOutput.dashHeaderName)] + playlist.segments {
            try? FileSystemCalls.unlink(path)
        }
        if directoryToo { try? FileSystemCalls.removeDirectory(directory) }
    }

    /// One rendition.
    static func rendition(_ input: FilePath, to directory: FilePath, options: Options = Options(), control: JobControl? = nil,
                           progress: ((MediaProgress) -> Void)? = nil) throws(PipelineError) -> Summary {
        let kind = MediaFileFormat.detect(input)
        let aac: AACTrackLayout? = if options.bitrate == nil, kind == .adts || kind == .mp4 { try? AACTrackLayout(path: input) } else { nil }
        if let layout = aac {
            // The input first, so that an input that cannot be read leaves no directory.
            let packets = try AudioPacketInput(path: input, purpose: .remuxing)
            var sink = try HLSSegmentOutput(directory: directory, segmentDuration: options.segmentDuration,
                                            writesDASHHeader: options.dash)
            // The file's gapless numbers, from its edit list or iTunSMPB, go down the stream.
            let gapless = StreamEvent.gapless(GaplessInfo(priming: layout.priming, validLength: layout.validLength))
            if layout.hasRegularTimeTable || layout.packetCount == 0 {
                var source = AnnouncingSource(packets, announcing: [gapless])
                _ = try Pump.run(from: &source, into: &sink, control: control, progress: progress)
            } else {
                // A table that jitters or skips (a muxer writing timestamps): a decoder gives every
                // frame its full length, so every sample of the segments gets it, and the track
                // runs, EXTINF and iTunSMPB tell one timeline (as a cut does, AudioEditing).
                var source = AnnouncingSource(PacketSpliceSource(pieces: [PacketSpliceSource.Piece(
                    input: packets, packets: 0...(layout.packetCount - 1), packetDuration: UInt32(clamping: layout.packetDuration))]),
                                              announcing: [gapless])
                var runs = SampleRunSink(sink)
                _ = try Pump.run(from: &source, into: &runs, control: control, progress: progress)
                sink = runs.base
            }
            return summary(of: sink, copied: true)
        }
        let source = try AudioFileInput(path: input)
        let resampler = PCMResampler(sampleFormat: .float32, allowedSampleRates: AACEncoder.supportedSampleRates)
        let encoder: AACEncoder
        do { encoder = try AACEncoder(bitrate: options.bitrate ?? Transcode.defaultBitrate, lowersBitrateToFit: options.bitrate == nil) } catch { throw .codec(error) }
        var sink = try HLSSegmentOutput(directory: directory, segmentDuration: options.segmentDuration,
                                        writesDASHHeader: options.dash)
        var chain = source.transformed(by: resampler).transformed(by: encoder)
        _ = try Pump.run(from: &chain, into: &sink, control: control, progress: progress)
        return summary(of: sink, copied: false)
    }

    /// A ladder: the input read and decoded once, into a ``/MediaCore/Tee`` with a branch per
    /// bitrate, each its own encoder and rendition on a thread of its own (`64k/`, …).
    static func ladder(_ input: FilePath, to directory: FilePath, options: Options, control: JobControl?,
                       progress: ((MediaProgress) -> Void)?) throws(PipelineError) -> [Summary] {
        let source = try AudioFileInput(path: input)
        let resampler = PCMResampler(sampleFormat: .float32, allowedSampleRates: AACEncoder.supportedSampleRates)
        let results = RenditionResults(count: options.bitrates.count)
        var branches: [Tee<PCMBuffer>.Branch] = []
        for (index, bitrate) in options.bitrates.enumerated() {
            let encoder: AACEncoder
            do { encoder = try AACEncoder(bitrate: bitrate) } catch { throw .codec(error) }
            let output = try HLSSegmentOutput(directory: directory.appending("\(bitrate / 1000)k"), segmentDuration: options.segmentDuration,
                                              writesDASHHeader: options.dash)
            branches.append(Tee.Branch(threaded: output.transforming(by: encoder), name: "\(bitrate / 1000)k") { finished in
                results.set(index, summary(of: finished.downstream, copied: false))
            })
        }
        var tee = Tee(branches)
        var chain = source.transformed(by: resampler)
        _ = try Pump.run(from: &chain, into: &tee, control: control, progress: progress)
        return try results.all()
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

    private static func summary(of sink: HLSSegmentOutput, copied: Bool) -> Summary {
        let rendition = StreamManifests.Rendition(path: "", playlist: sink.playlistName, segments: sink.segments.map { ($0.byteCount, $0.duration) },
                                                  timescale: Int(sink.segments.first?.timescale ?? 1), channelCount: sink.format?.channelCount ?? 2,
                                                  priming: sink.priming)
        var presented = rendition
        presented.validLength = sink.validLength
        if sink.writesDASHHeader { presented.dashInitialization = HLSSegmentOutput.dashHeaderName }
        return Summary(playlist: sink.directory.appending(sink.playlistName), renditions: [presented], segmentDurations: sink.segments.map(\.seconds),
                       targetDuration: sink.playlist?.targetDuration ?? 0, copied: copied)
    }
}
