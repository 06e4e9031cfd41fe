public import SystemPackage

/// Packaging audio for HTTP streaming: `keyframe package`.
///
/// Composition: AAC input (M4A/MP4 or ADTS), or an MP4 of Opus, FLAC or ALAC, stream-copied →
/// ``HLSSegmentOutput``, around the
/// ``/MediaCore/Pump`` (``hls(copying:to:options:control:progress:)``, here, with no codec). Any
/// other input is decoded, resampled and encoded by KeyFrameKit's `Packaging.hls(_:to:…)`, an
/// extension of this type: a ladder reads its input once into a ``/MediaCore/Tee`` with an
/// encoder and a rendition per ladder rendition.
public enum Packaging {
    /// How a rendition is made.
    public struct Options: Sendable {
        /// The wanted segment length, in seconds.
        public var segmentDuration: Double
        /// Encode at this bitrate (bits per second); `nil` stream-copies an input of the codec
        /// asked (AAC by default) and encodes anything else at 128 kb/s (a lossless codec takes none).
        public var bitrate: Int?
        /// The codec of one rendition, and of a ladder's renditions that name none: any the codec
        /// registry encodes and ISO BMFF carries (AAC, Opus, FLAC, ALAC). `nil`: the input's own when
        /// it is an MP4 of such a codec, which is then copied; else AAC.
        public var codec: AudioCodecID?
        /// A ladder: its renditions, each in a directory of its own
        /// (``LadderRendition/directoryName(ladderCodec:)``: `64k/`, `96k-opus/`, `flac/`), named by
        /// `master.m3u8`; their segment boundaries are identical. Empty for one rendition.
        public var ladder: [LadderRendition]
        /// The ladder's bitrates, in order (a lossless rendition has none).
        public var bitrates: [Int] { ladder.compactMap(\.bitrate) }
        /// Also write `manifest.mpd` (MPEG-DASH) over the same segments.
        public var dash: Bool
        /// The AAC profile encoded: AAC-LC (`.aacLC`, the default), HE-AAC v1 (`.sbr`), HE-AAC
        /// v2 (`.ps`, stereo only) or `.automatic` (by the output's channels and bitrate,
        /// ``/MediaFormats/AACProfileChoice/automaticObjectType(channelCount:bitrate:sampleRate:)``); for a
        /// ladder, that of every AAC rendition that names none, each `.automatic` rendition
        /// choosing by its own bitrate. HE-AAC encodes an AAC input too (it is copied only with no
        /// bitrate, as AAC-LC's default, which `.automatic` is then).
        public var profile: AACProfileChoice
        /// The rate encoded, in Hz (the input resampled to it); `nil`: the input's, or the
        /// nearest rate the profile takes. Given, an AAC input is encoded, not copied.
        public var sampleRate: Int?
        /// The channels encoded (1 or 2: a downmix with ITU-R BS.775 coefficients); `nil`: the
        /// input's. Given, an AAC input is encoded, not copied.
        public var channelCount: Int?

        /// The files the input is opened through, when a program registers its own in a copy;
        /// `nil`: the layer's own (``/MediaFormats/MediaFormatRegistry/containers`` here,
        /// `MediaFormatRegistry.standard` in KeyFrameKit, which decodes).
        public var formats: MediaFormatRegistry?

        /// Stream events told before the first packet, beside the input's own: ad breaks
        /// (``/MediaCore/StreamMarker/adBreak(start:duration:id:uri:)``) and timed metadata
        /// from a sidecar, which each rendition writes as it writes a live stream's.
        public var events: [StreamEvent] = []

        /// What the segments are made of: CMAF by default, or packed audio (AAC in ADTS, RFC
        /// 8216 3.4; no DASH).
        public var segmentFormat: HLSSegmentFormat = .cmaf

        /// Whether each rendition's loudness is measured, for its init segment's `ludt`
        /// (ISO/IEC 14496-12 12.2.7; Apple's HLS authoring rule 2.19): an encoded rendition as it
        /// is encoded; one made by stream copy by KeyFrameKit's `Packaging.hls(_:to:…)`, which
        /// decodes the copied packets to measure them. ``hls(copying:to:options:control:progress:)``
        /// decodes nothing and measures nothing.
        public var measuresLoudness: Bool = true

        /// The wall-clock time of the first presented sample, seconds since 1970, for the
        /// program date-times a playlist with date ranges has; `nil`: when the job starts. Every
        /// rendition of a ladder dates from it, so a date range is the same in each.
        public var dateOrigin: Double?

        /// These options with a ``dateOrigin``: now, when none was given.
        package var dated: Options {
            var dated = self
            if dated.dateOrigin == nil { dated.dateOrigin = WallClock.now() }
            return dated
        }

        /// Whether ``events`` hold timed metadata (the init segments list `aid3`).
        public var carriesTimedMetadata: Bool {
            events.contains { if case .timedMetadata = $0 { true } else { false } }
        }

        /// Options: 6-second segments, the input's codec copied (else AAC), one rendition, no
        /// DASH, AAC-LC, the input's rate and channels. `bitrates` makes an AAC ladder, each
        /// rendition of the profile `ladderProfiles` gives it, else `profile`; `ladder` (which
        /// replaces `bitrates`) names each rendition's codec too.
        public init(segmentDuration: Double = 6, bitrate: Int? = nil, bitrates: [Int] = [], dash: Bool = false,
                    profile: AACProfileChoice = .aacLC, ladderProfiles: [Int: AACProfileChoice] = [:],
                    sampleRate: Int? = nil, channelCount: Int? = nil, codec: AudioCodecID? = nil, ladder: [LadderRendition]? = nil) {
            self.segmentDuration = segmentDuration
            self.bitrate = bitrate
            self.ladder = ladder ?? bitrates.map { LadderRendition(bitrate: $0, profile: ladderProfiles[$0]) }
            self.dash = dash
            self.profile = profile
            self.sampleRate = sampleRate
            self.channelCount = channelCount
            self.codec = codec
        }

        /// The profile of the ladder's rendition at `bitrate`: its own, else ``profile``.
        public func profile(ofRendition bitrate: Int) -> AACProfileChoice {
            ladder.first { $0.bitrate == bitrate && codec(of: $0) == .aac }?.profile ?? profile
        }

        /// The profile of `rendition`: its own, else ``profile``.
        public func profile(of rendition: LadderRendition) -> AACProfileChoice { rendition.profile ?? profile }

        /// The ladder's directories, in order (``LadderRendition/directoryName(ladderCodec:)``).
        public var ladderDirectories: [String] { ladder.map { $0.directoryName(ladderCodec: codec) } }

        /// The codec of `rendition`: its own, else ``codec``, else AAC.
        public func codec(of rendition: LadderRendition) -> AudioCodecID { rendition.codec ?? codec ?? .aac }

        /// Whether the options leave the codec to the input when nothing is encoded: no bitrate,
        /// rate or channels asked, and AAC-LC or `.automatic` (which is AAC-LC without a bitrate).
        package var copiesProfile: Bool {
            bitrate == nil && sampleRate == nil && channelCount == nil && (profile == .aacLC || profile.isAutomatic)
        }
    }

    /// One rendition of a ladder: its codec, its bitrate (none for a lossless codec) and, for
    /// AAC, its profile (`--bitrates 48k:he-aac,128k,96k:opus,lossless:flac`).
    public struct LadderRendition: Sendable, Hashable {
        /// The bitrate encoded, in bits per second; `nil` for a lossless codec.
        public var bitrate: Int?
        /// The codec; `nil`: the ladder's (``Options/codec``, else AAC).
        public var codec: AudioCodecID?
        /// AAC's profile; `nil`: the ladder's (``Options/profile``).
        public var profile: AACProfileChoice?

        /// A rendition at `bitrate` (`nil` for a lossless codec) of `codec` and `profile`.
        public init(bitrate: Int?, codec: AudioCodecID? = nil, profile: AACProfileChoice? = nil) {
            self.bitrate = bitrate
            self.codec = codec
            self.profile = profile
        }

        /// Its directory in the ladder: the bitrate in kb/s (`64k`), followed by the codec's name
        /// when that is not AAC (`96k-opus`); a lossless rendition's is its codec's name (`flac`).
        public func directoryName(ladderCodec: AudioCodecID?) -> String {
            let codec = self.codec ?? ladderCodec ?? .aac
            guard let bitrate else { return codec.name }
            return "\(bitrate / 1000)k" + (codec == .aac ? "" : "-\(codec.name)")
        }
    }

    /// What a packaging wrote.
    public struct Summary: JobSummary, Sendable {
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
        /// Whether the input's packets were copied (else encoded).
        public var copied: Bool
        /// What the pump did, stage by stage: the input, the encoder when there is one, the
        /// segmenter (for a ladder, a tee with a branch per rendition).
        public var report = JobReport()
        /// The segment duration used, in seconds, when it is not the one asked: a ladder that
        /// mixes HE-AAC (2048-sample frames) with AAC-LC (1024) has segments of a whole number
        /// of 2048-sample frames at its rate, so that every rendition's segments end at the
        /// same samples. `nil` when the asked duration was used (rounded to whole frames).
        public var adjustedSegmentDuration: Double?
    }

    /// Packages the packets of `input` (AAC in an M4A/MP4 or ADTS file; Opus, FLAC or ALAC in an
    /// MP4 whose codec the formats describe) as one HLS rendition in `directory`
    /// by stream copy (`index.m3u8`, `init.mp4` and CMAF segments; with ``Options/dash`` a
    /// `manifest.mpd` too), without any codec: the packets are not decoded. Encoding a
    /// ``Options/bitrate`` or a ladder (``Options/ladder``) is KeyFrameKit's
    /// `Packaging.hls(_:to:options:codecs:control:progress:)`. Every file is written atomically, the
    /// playlist and manifest last; nothing is left on an error.
    ///
    /// - Throws: ``/MediaCore/PipelineError/Code/unsupported`` for an input that is not AAC, or
    ///   options that ask for encoding; the errors of the input and the outputs.
    public static func hls(copying input: FilePath, to directory: FilePath, options: Options = Options(), control: JobControl? = nil,
                           progress: ((MediaProgress) -> Void)? = nil) throws(PipelineError) -> Summary {
        let options = options.dated
        guard options.copiesProfile, options.ladder.isEmpty else {
            throw .unsupported("packaging by stream copy takes no bitrate or profile: encoding is KeyFrameKit's Packaging.hls")
        }
        guard let layout = copyableLayout(of: input, options: options) else {
            throw .unsupported("\(input): not \(options.codec.map { "\($0)" } ?? "AAC") that can be copied (AAC input is "
                               + "\(MediaFileFormat.extensionList(holdingCodec: .aac)); Opus, FLAC or ALAC input an MP4)")
        }
        return try assemble(directory, options: options) { single throws(PipelineError) in
            [try copyRendition(input, layout: layout, to: single, options: options, control: control, progress: progress)]
        }
    }

    /// The orchestration every packaging shares: checks, the directory, `renditions` (called
    /// with `directory` for one rendition, which it writes there, or for a ladder, with the
    /// directory in which it writes one subdirectory per rendition, `64k/`, …), then the master
    /// playlist and the MPD; on an error (or Ctrl-C) everything written goes.
    package static func assemble(_ directory: FilePath, options: Options,
                                 renditions: (FilePath) throws(PipelineError) -> [Summary]) throws(PipelineError) -> Summary {

        let names = options.ladderDirectories
        if let twice = names.first(where: { name in names.filter { $0 == name }.count > 1 }) {
            throw .unsupported("--bitrates: each rendition once (two would be \(twice)/)")
        }
        if !options.ladder.isEmpty, FileSystemCalls.exists(directory.appending("master.m3u8")) {
            throw .unsupported("\(directory) already holds a package (master.m3u8); choose another directory or remove it")
        }
        // On an error (or Ctrl-C) everything written goes: the renditions finished, the
        // manifests, and the directory when this made it.
        let createdDirectory = !FileSystemCalls.exists(directory)
        var made: [FilePath] = []
        var manifests: [FilePath] = []
        do throws(PipelineError) {
            var summary: Summary
            if options.ladder.isEmpty {
                // Listed once made: a rendition that fails removes what it wrote itself, and one
                // refused over another package must leave that package alone.
                guard let single = try renditions(directory).first else { throw PipelineError.unsupported("no rendition was made") }
                made.append(directory)
                summary = single
            } else {
                do { try FileSystemCalls.makeDirectories(directory) } catch {
                    throw PipelineError.stream(.system(operation: "make the directory", path: directory, errno: error))
                }
                // A rendition that fails removes what it wrote itself; once all are made, they
                // go if what follows fails.
                let parts = try renditions(directory)
                made += names.map { directory.appending($0) }
                guard parts.count == names.count else { throw PipelineError.unsupported("a rendition was not made") }
                var renditions: [StreamManifests.Rendition] = []
                for (name, part) in zip(names, parts) {
                    var named = part.renditions[0]
                    named.path = name
                    renditions.append(named)
                }
                // The same boundaries in every rendition: a player switches at any segment.
                guard Set(renditions.map { $0.segments.map(\.duration) }).count == 1 else {
                    throw PipelineError.unsupported("the renditions' segments do not line up")
                }
                try FileByteSink.write(Array(StreamManifests.masterPlaylist(renditions).utf8), to: directory.appending("master.m3u8"))
                manifests.append(directory.appending("master.m3u8"))
                summary = Summary(playlist: directory.appending("master.m3u8"), renditions: renditions, segmentDurations: renditions[0].segments.map {
                    Double($0.duration) / Double(max(renditions[0].timescale, 1))
                }, targetDuration: 0, copied: false, report: parts.reduce(JobReport()) { $0.appending($1.report) })
                summary.targetDuration = HLSMediaPlaylist(mapURI: nil, segments: summary.segmentDurations.map { .init(uri: "", duration: $0) }).targetDuration
            }
            if options.dash {
                let path = directory.appending("manifest.mpd")
                try FileByteSink.write(Array(StreamManifests.mpd(summary.renditions).utf8), to: path)
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

    /// Removes a rendition directory's files (`index.m3u8`, `init.mp4`, segments), and with
    /// `directoryToo` the directory when it is then empty.
    package static func remove(_ directory: FilePath, directoryToo: Bool) {
        guard let playlist = try? HLSMediaPlaylist.files(of: directory.appending("index.m3u8")) else { return }
        for path in [directory.appending("index.m3u8"), playlist.initSegment, directory.appending(HLSSegmentOutput.dashHeaderName)] + playlist.segments {
            try? FileSystemCalls.unlink(path)
        }
        if directoryToo { try? FileSystemCalls.removeDirectory(directory) }
    }

    /// The layout of `input` when its packets are to be copied: nothing asked that encodes, and
    /// AAC (an MP4 or ADTS file) or an MP4 of another codec the formats describe (Opus, FLAC,
    /// ALAC), of the codec asked when one is; else `nil`.
    package static func copyableLayout(of input: FilePath, options: Options) -> AudioTrackLayout? {
        guard options.copiesProfile, let layout = trackLayout(of: input, options: options), copies(layout, options: options) else { return nil }
        return layout
    }

    /// The track layout of an MP4 or ADTS `input`; `nil` for another file or one that does not
    /// read.
    package static func trackLayout(of input: FilePath, options: Options) -> AudioTrackLayout? {
        let formats = options.formats ?? .containers
        let kind = formats.detect(input)
        guard kind == .adts || kind == .mp4 else { return nil }
        return try? AudioTrackLayout(path: input, formats: formats)
    }

    /// Whether `layout`'s packets are copied: nothing asked that encodes, and AAC or a codec the
    /// formats describe (Opus, FLAC, ALAC), the codec asked when one is.
    package static func copies(_ layout: AudioTrackLayout, options: Options) -> Bool {
        let codec = layout.audioFormat.codec
        return options.copiesProfile && codec == (options.codec ?? codec)
            && (codec == .aac || (options.formats ?? .containers).audioCodecs.matching(codec) != nil)
    }

    /// One rendition by stream copy: `input`'s AAC packets into ``HLSSegmentOutput``, its gapless
    /// numbers (from its edit list or iTunSMPB) told down the stream first.
    package static func copyRendition(_ input: FilePath, layout: AudioTrackLayout, to directory: FilePath, options: Options,
                                      control: JobControl?, progress: ((MediaProgress) -> Void)?) throws(PipelineError) -> Summary {
        // The input first, so that an input that cannot be read leaves no directory.
        let packets = try (options.formats ?? .containers).aacInput(input, purpose: .copying)
        var sink = try HLSSegmentOutput(directory: directory, segmentDuration: options.segmentDuration,
                                        writesDASHHeader: options.dash, audioCodecs: (options.formats ?? .containers).audioCodecs,
                                        timedMetadata: options.carriesTimedMetadata, dateOrigin: options.dateOrigin, segmentFormat: options.segmentFormat)
        // The file's gapless numbers, from its edit list or iTunSMPB, go down the stream.
        let gapless = StreamEvent.gapless(GaplessInfo(priming: layout.priming, validLength: layout.validLength))
        let report: JobReport
        if layout.hasRegularTimeTable || layout.packetCount == 0 {
            var source = AnnouncingSource(packets, announcing: [gapless] + options.events)
            report = try Pump.run(from: &source, into: &sink, control: control, progress: progress)
        } else {
            // A table that jitters or skips (a muxer writing timestamps): a decoder gives every
            // frame its full length, so every sample of the segments gets it, and the track
            // runs, EXTINF and iTunSMPB tell one timeline (as a cut does, AudioEditing).
            var source = AnnouncingSource(PacketSpliceSource(pieces: [PacketSpliceSource.Piece(
                input: packets, packets: 0...(layout.packetCount - 1), packetDuration: UInt32(clamping: layout.packetDuration))]),
                                          announcing: [gapless] + options.events)
            var runs = SampleRunSink(sink)
            report = try Pump.run(from: &source, into: &runs, control: control, progress: progress)
            sink = runs.base
        }
        var summary = summary(of: sink, copied: true)
        summary.report = report
        return summary
    }

    /// One rendition by stream copy of an Ogg Opus file's packets (RFC 7845) into Opus
    /// segments: its pre-skip is the priming, its last granule position the valid length, its
    /// tags the init segment's.
    package static func copyOggOpusRendition(_ input: FilePath, to directory: FilePath, options: Options,
                                             control: JobControl?, progress: ((MediaProgress) -> Void)?) throws(PipelineError) -> Summary {
        // The input first, so that an input that cannot be read leaves no directory.
        let packets = try OggOpusPacketInput(path: input)
        var sink = try HLSSegmentOutput(directory: directory, segmentDuration: options.segmentDuration,
                                        writesDASHHeader: options.dash, audioCodecs: (options.formats ?? .containers).audioCodecs,
                                        timedMetadata: options.carriesTimedMetadata, dateOrigin: options.dateOrigin, segmentFormat: options.segmentFormat)
        let gapless = StreamEvent.gapless(GaplessInfo(priming: Int64(packets.trim.priming), validLength: packets.trim.validFrameCount))
        var source = AnnouncingSource(packets, announcing: [.metadata(packets.metadata), gapless] + options.events)
        let report = try Pump.run(from: &source, into: &sink, control: control, progress: progress)
        var summary = summary(of: sink, copied: true)
        summary.report = report
        return summary
    }

    /// What a rendition wrote, from its sink (its report empty: the caller's pump has it).
    package static func summary(of sink: HLSSegmentOutput, copied: Bool) -> Summary {
        let rendition = StreamManifests.Rendition(path: "", playlist: sink.playlistName, segments: sink.segments.map { ($0.byteCount, $0.duration) },
                                                  timescale: Int(sink.segments.first?.timescale ?? 1), channelCount: sink.format?.channelCount ?? 2,
                                                  codecs: sink.codecsParameter, priming: sink.priming)
        var presented = rendition
        presented.validLength = sink.validLength
        if sink.writesDASHHeader { presented.dashInitialization = HLSSegmentOutput.dashHeaderName }
        presented.messages = sink.writtenMessages
        return Summary(playlist: sink.directory.appending(sink.playlistName), renditions: [presented], segmentDurations: sink.segments.map(\.seconds),
                       targetDuration: sink.playlist?.targetDuration ?? 0, copied: copied)
    }
}
