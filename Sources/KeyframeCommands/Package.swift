import ArgumentParser
import KeyFrameKit

/// `keyframe package IN --hls DIR [--segment-duration S] [--bitrate B] [--json]`.
struct Package: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "package",
        abstract: "Package audio as HLS (and DASH): a rendition or a ladder of playlists, CMAF init segments and fMP4 segments.",
        discussion: """
            An AAC input (.m4a/.mp4 or ADTS) is stream-copied, as is an M4A of Opus, FLAC or ALAC, or an Ogg Opus file; \
            anything else `convert` reads is encoded to AAC-LC (128 kb/s, or --bitrate, which also \
            re-encodes AAC, as do --sample-rate and --channels), or with --codec to Opus (48 kHz, \
            128k), FLAC or ALAC (lossless), each its own sample entry (CODECS Opus, fLaC, alac). \
            DIR gets \
            index.m3u8 (VOD, EXT-X-MAP, EXT-X-INDEPENDENT-SEGMENTS, EXT-X-ENDLIST), init.mp4 and \
            segment-NNNNN.m4s: whole AAC frames, about --segment-duration seconds each, the last up \
            to half a segment longer rather than short. The encoder's priming is one edit in \
            init.mp4 (segment_duration 0, media_time the priming) and its iTunSMPB gives the valid \
            length, as does the first segment's moof (FFmpeg reads that one); packets wholly after \
            the last sample are not written. Files are written under \
            temporary names and renamed when complete, the playlist last. --bitrates 64k,128k,… \
            encodes a ladder from the one source: DIR/64k/, DIR/128k/, … each a rendition as above, \
            with identical segment boundaries, named by DIR/master.m3u8 (BANDWIDTH is the peak \
            segment bit rate, AVERAGE-BANDWIDTH the mean, CODECS mp4a.40.2 for AAC-LC, mp4a.40.5 \
            for HE-AAC, mp4a.40.29 for HE-AAC v2). --profile he-aac encodes HE-AAC v1 and \
            he-aac-v2 HE-AAC v2 (stereo input only; both resampled to 16–48 kHz; an AAC input is \
            then encoded, not copied); --profile auto chooses by the input's channels and each \
            rendition's bitrate (stereo: he-aac-v2 up to 40k, he-aac up to 64k; mono: he-aac up to \
            32k; lc above and for more channels; with no bitrate, lc: an AAC input is copied). In a \
            ladder each bitrate may name its own profile, --bitrates 48k:he-aac,64k:he-aac,128k or \
            32k:auto,64k:auto,128k:auto (a bitrate without one takes --profile): --profile auto \
            --bitrates 32k,64k,128k gives mp4a.40.29, mp4a.40.5 and mp4a.40.2 for stereo. A \
            rendition may name its codec instead (96k:opus in DIR/96k-opus/; lossless:flac or \
            lossless:alac, no bitrate, in DIR/flac/): every rendition is then at a rate all take \
            (48 kHz with Opus), and segments last whole packets of every codec. Every \
            HE-AAC segment starts with an SBR header (and for v2 a PS header), so that a player \
            starting there gets the full band and the stereo image. A ladder with HE-AAC renditions \
            has segments of whole 2048-sample frames, one of several codecs whole packets of each \
            (--segment-duration is rounded up to them, and the output says so) and every rendition the same priming, so that EXTINF is the same in \
            all. --dash also writes \
            DIR/manifest.mpd over the same segments, with its own init segment, init-dash.mp4: \
            init.mp4 without iTunSMPB, which the first segment's moof carries (FFmpeg's DASH \
            reader parses the init segment again for every segment); the HLS files are the same \
            with or without --dash. The input's tags and cover go into every init.mp4 (a player \
            names the stream from them; init-dash.mp4 has the tags only). Ctrl-C or an error \
            leaves nothing. --ad-breaks FILE adds ad breaks, one JSON object a line \
            ({"start": SECONDS, "duration": SECONDS, "id", "uri"}; title changes {"at", "title", …} \
            too): each becomes an EXT-X-DATERANGE with SCTE35-OUT and SCTE35-IN (splice_insert \
            sections, CRC-32), EXT-X-CUE-OUT/-OUT-CONT/-IN tags and, with a uri, an interstitial \
            (CLASS com.apple.hls.interstitial); the input's chapters become EXT-X-DATERANGE tags of \
            CLASS com.keyframekit.chapter with X-TITLE. A playlist with a date range has \
            EXT-X-PROGRAM-DATE-TIME from the time of packaging (RFC 8216 4.3.2.7). DIR may be an object store's URL instead (file:///absolute/path; s3://bucket/prefix with \
            --s3-endpoint for a store other than Amazon S3; an HTTP ingest point, https://[user:password@]host/path, \
            each object PUT below the path; a WebDAV share, davs://… or dav://…, its collections made by MKCOL \
            first), or env:NAME, a variable that holds one (a password kept off the command line): the package is made in a private staging directory, \
            then put into the store, the media before the playlists and manifests that name it, each object with \
            the Content-Type and Cache-Control the origin serves it with. S3 keys come from AWS_ACCESS_KEY_ID and \
            AWS_SECRET_ACCESS_KEY (AWS_SESSION_TOKEN), else ~/.aws/credentials (--s3-profile, which wins over the environment's keys); \
            the region from AWS_REGION, AWS_DEFAULT_REGION or the profile, else us-east-1. A request that finds no connection is tried \
            four more times over about 4 s, and so is one answered 5xx, 408 or 429 or not in time (POSTs excepted); any other refusal \
            is an error at once, in S3's words. Asking whether an object exists needs s3:ListBucket. A password goes as HTTP \
            Basic, over https (or http to this machine), and every message masks it.
            """
    )

    @Argument(help: "The audio file to package, or an object's URL (s3://bucket/key, https://host/path/file, env:NAME), copied in first.")
    var input: String

    @Option(name: [.customLong("hls"), .customShort("o"), .customLong("output")],
            help: "The directory for the HLS rendition (made if missing), or an object store's URL (file:///path; s3://bucket/prefix; https://host/path, or http:// to this machine; WebDAV davs:// or dav://) or env:NAME holding one; -o and --output name it too.")
    var hls: String

    @OptionGroup(title: "Object stores") var objectStore: ObjectStoreOptions

    @Option(help: "Seconds per segment (whole packets of the codec: AAC's 1024 or 2048 samples, Opus's 960, FLAC's and ALAC's 4096).")
    var segmentDuration: Double = 6

    @OptionGroup(title: "Encoding") var encoder: EncoderOptions

    @OptionGroup(title: "Encoding") var layout: OutputLayoutOptions

    @Option(name: .customLong("codec"), help: ArgumentHelp(
        "The codec of the segments: aac, opus, flac or alac, each its own sample entry (CODECS mp4a.40.x, Opus, fLaC, alac). "
            + "Default: an MP4 input's own Opus, FLAC or ALAC, or an Ogg Opus file's Opus (copied unless a bitrate, rate or channels is asked), else AAC. "
            + "--profile is AAC's; FLAC and ALAC take no --bitrate.",
        valueName: "codec"))
    var codecArgument: SegmentCodecArgument?

    @Option(help: ArgumentHelp(
        "Encode a ladder, one rendition per bitrate, comma-separated, each with an optional :profile "
            + "(lc, he-aac, he-aac-v2 or auto; default --profile) or :codec (aac, opus, flac, alac; default --codec): "
            + "64k,128k, 48k:he-aac,64k:he-aac,128k, 32k:auto,64k:auto,128k:auto, or 48k:he-aac,96k:opus,128k,lossless:flac "
            + "(lossless: FLAC or ALAC, which take no bitrate).",
        valueName: "bitrate[:profile|:codec],..."))
    var bitrates: String?

    @Flag(help: "Also write an MPEG-DASH manifest (manifest.mpd) over the same segments.")
    var dash = false

    @Option(help: ArgumentHelp(
        "What the segments are: CMAF (fMP4, any codec; with DASH) or packed-audio (AAC in ADTS with ID3 timestamps, .aac; HLS only).",
        valueName: "cmaf|packed-audio"))
    var segments: HLSSegmentFormat = .cmaf

    @Option(help: ArgumentHelp(
        "Ad breaks (and title changes) as JSON lines, the schema of record --metadata-from, each with its time: {\"start\": S, \"duration\": S, \"id\", \"uri\"}.",
        valueName: "FILE"))
    var adBreaks: String?

    @Flag(inversion: .prefixedNo, help: ArgumentHelp(
        "Write each init segment's ludt box (Apple's rule 2.19) with the loudness measured (integrated, ITU-R BS.1770-4): "
            + "an encode measures what it encodes; a stream copy decodes its packets to measure them, in parts on the free cores. "
            + "--no-loudness writes no box, and a copy then decodes nothing."))
    var loudness = true

    @Flag(help: "Print what was written as JSON.")
    var json = false

    struct Output: Encodable {
        var playlist: String
        var mpd: String?
        var renditions: [String: Int]
        var codecs: [String: String]
        var segments: Int
        var adjustedSegmentDuration: Double?
        var targetDuration: Int
        var segmentDurations: [Double]
        var copied: Bool
    }

    func validate() throws {
        try layout.checkForAAC()
        // A store's URL that does not read is a usage error (64); missing keys are not.
        do { _ = try objectStore.store(named: hls) } catch where error.reason == .invalidDestination {
            throw ValidationError("--hls: \(error)")
        } catch {}
        if segments == .packedAudio {
            if dash { throw ValidationError("--segments packed-audio: DASH reads CMAF segments; give --dash without it") }
            if let other = bitrates?.split(separator: ",").first(where: { $0.contains(":") && !$0.lowercased().hasSuffix(":aac")
                                                                         && !$0.lowercased().contains(":he-aac") && !$0.lowercased().hasSuffix(":lc")
                                                                         && !$0.lowercased().hasSuffix(":auto") }) {
                throw ValidationError("--segments packed-audio carries AAC (ADTS); the rendition \(other) needs CMAF segments")
            }
            if let asked = codecArgument?.codec, asked != .aac {
                throw ValidationError("--segments packed-audio carries AAC (ADTS); --codec \(asked) needs CMAF segments")
            }
        }
        if let asked = codecArgument?.codec {
            let carried = Keyframe.codecs.descriptions.map(\.codec)
            guard carried.contains(asked) else {
                throw ValidationError("--codec \(asked): HLS and DASH segments (fMP4) carry \(carried.map(\.name).joined(separator: ", "))")
            }
            if asked != .aac, encoder.profile != .lc, encoder.profile != .auto, bitrates == nil {
                throw ValidationError("--profile \(encoder.profile.rawValue): profiles are AAC's; \(asked) has none")
            }
            if Packaging.isLossless(asked), encoder.bitrate != nil, bitrates == nil {
                throw ValidationError("--bitrate: \(asked) is lossless and takes none")
            }
        }
    }


    /// The stream events of a sidecar of JSON lines (``StreamEventLine``): each needs its time,
    /// in seconds from the first sample (a package has no wall clock and no "now").
    static func events(fromSidecar path: String) throws -> [StreamEvent] {
        let text: String
        do { text = try ManifestText.read(FilePath(path), what: "an ad-break file") } catch {
            throw CommandFailure(error, naming: path)
        }
        var events: [StreamEvent] = []
        var breaks: [(id: String, start: Double, end: Double)] = []
        for (index, line) in try StreamEventLine.lines(of: text, source: path).enumerated() {
            guard case .seconds(let seconds) = line.when else {
                throw CommandFailure("\(path): event \(index + 1) has no time in seconds (\"at\" or \"start\"); a package places each by its time",
                                     status: .usage)
            }
            if case .adBreak(_, let duration, let id, _) = line {
                let name = id ?? "ad-\(index + 1)"
                // RFC 8216 4.3.2.7: one ID is one range; and one break at a time.
                if let other = breaks.first(where: { $0.id == name || ($0.start < seconds + duration && seconds < $0.end) }) {
                    throw CommandFailure("\(path): event \(index + 1), the ad break \"\(name)\" at \(seconds) s, "
                                         + (other.id == name ? "has the ID of another" : "overlaps \"\(other.id)\" (\(other.start)–\(other.end) s)"),
                                         status: .usage)
                }
                breaks.append((name, seconds, seconds + duration))
            }
            events += try line.events(at: StreamEventLine.time(seconds), number: index + 1)
        }
        return events
    }

    func run() throws {
        // An input in a store: copied into a staging directory, then as a file.
        if try RemoteObjects.ranWithLocalInput(self, input: \.input, objectStore: objectStore) { return }
        // The sidecar first: its errors name it, not the input.
        let sidecarEvents = try adBreaks.map { try Self.events(fromSidecar: $0) } ?? []
        let ladder = try Self.ladder(bitrates ?? "", codec: codecArgument?.codec)
        // An object store's URL names where the package goes; anything else is a directory.
        let store: (any ObjectStore)?
        do { store = try objectStore.store(named: hls) } catch { throw CommandFailure("\(error)") }
        let line = ProgressLine(label: "packaging")
        let summary: Packaging.Summary
        do {
            var options = Packaging.Options(segmentDuration: segmentDuration, bitrate: encoder.bitsPerSecond, dash: dash,
                                            profile: encoder.profile.choice, sampleRate: layout.sampleRate, channelCount: layout.channels,
                                            codec: codecArgument?.codec, ladder: ladder)
            options.formats = Keyframe.formats
            options.events = sidecarEvents
            options.segmentFormat = segments
            options.measuresLoudness = loudness
            if let store {
                summary = try Packaging.hls(FilePath(input), to: store, options: options, control: StopSignals.cancellingControl(whileReadBlocks: true),
                                            progress: line.update)
            } else {
                summary = try Packaging.hls(FilePath(input), to: FilePath(hls), options: options, control: StopSignals.cancellingControl(),
                                            progress: line.update)
            }
        } catch {
            throw CommandFailure(error, naming: input)
        }
        line.finish(mediaSeconds: 0, totalSeconds: nil)
        // Events at or past the end have no segment to go in.
        if let duration = summary.renditions.first.flatMap({ rendition in rendition.validLength.map { Double($0) / Double(max(rendition.timescale, 1)) } }) {
            let late = sidecarEvents.compactMap { event -> Double? in
                switch event {
                case .timedMetadata(let timed): timed.time.seconds
                case .marker(let marker) where marker.kind == .adBreakStart: marker.time.seconds + (marker.duration?.seconds ?? 0)
                default: nil
                }
            }.filter { $0 > duration + 0.001 }
            if !late.isEmpty {
                Terminal.warning("\(adBreaks ?? ""): \(late.count) event\(late.count == 1 ? "" : "s") reaching past the end (\(Terminal.fixed(duration, digits: 3)) s): dropped or cut")
            }
        }
        // Apple's HLS authoring rule 9.21 (iOS, cellular): a variant at or below 192 kb/s.
        if summary.renditions.count > 1, !summary.renditions.contains(where: { $0.peakBitrate <= 192_000 }) {
            Terminal.warning("no variant at or below 192 kb/s: Apple's HLS authoring rule 9.21 asks for one on cellular networks; add a bitrate to --bitrates")
        }
        let renditions = Dictionary(summary.renditions.map { ($0.path.isEmpty ? "." : $0.path, $0.peakBitrate) }, uniquingKeysWith: { a, _ in a })
        let codecs = Dictionary(summary.renditions.map { ($0.path.isEmpty ? "." : $0.path, $0.codecs) }, uniquingKeysWith: { a, _ in a })
        // In a store, a path is the object's name: shown after the store, as the user named it.
        let shown = { (path: FilePath) in store.map { $0.description + "/" + path.string } ?? path.string }
        let output = Output(playlist: shown(summary.playlist), mpd: summary.mpd.map(shown), renditions: renditions, codecs: codecs,
                            segments: summary.segmentDurations.count, adjustedSegmentDuration: summary.adjustedSegmentDuration,
                            targetDuration: summary.targetDuration, segmentDurations: summary.segmentDurations, copied: summary.copied)
        if json {
            try JSONOutput.print(output)
        } else {
            if let adjusted = summary.adjustedSegmentDuration {
                print("segment duration \(Terminal.fixed(adjusted, digits: 6)) s instead of \(Terminal.fixed(segmentDuration, digits: 3)) s: "
                      + "whole packets of every rendition, the same boundaries in all")
            }
            let total = summary.segmentDurations.reduce(0, +)
            print("\(output.playlist): \(output.segments) segment\(output.segments == 1 ? "" : "s"), \(Terminal.fixed(total, digits: 3)) s, "
                  + "target duration \(output.targetDuration) s, \(Self.codecNames(summary)) \(summary.copied ? "copied" : "encoded")"
                  + (summary.renditions.count > 1 ? ", \(summary.renditions.count) renditions" : "")
                  + (output.mpd.map { ", \($0)" } ?? ""))
        }
        // A damaged input (an M4A cut short) is packaged as far as it reads, and said.
        try ExitStatus.finish(damage: summary.damage, in: input)
    }

    /// The codecs of the renditions, as people write them (`AAC`, or `AAC, Opus, FLAC`), each
    /// once: the codec whose sample entry each rendition's CODECS names.
    static func codecNames(_ summary: Packaging.Summary) -> String {
        var names: [String] = []
        for rendition in summary.renditions {
            let codec = Keyframe.codecs.descriptions.first { $0.sampleEntryType.description == rendition.sampleEntryCodec }?.codec
            let name = codec.map(CodecArgument.displayName) ?? rendition.codecs
            if !names.contains(name) { names.append(name) }
        }
        return names.isEmpty ? "AAC" : names.joined(separator: ", ")
    }

    /// `--bitrates 48k:he-aac,64k:he-aac,128k`, `32k:auto,64k:auto,128k:auto` or
    /// `48k:he-aac,96k:opus,lossless:flac`: the renditions in order, each with the profile or
    /// codec it names (a rendition that names none takes `codec`, the `--codec` given, else
    /// AAC; `lossless` alone takes `codec` when it is lossless, else FLAC).
    ///
    /// - Throws: a usage error for a word that is neither a bitrate nor `lossless`, a profile or
    ///   codec that is not one, a codec the segments do not carry, a bitrate for a lossless codec
    ///   or none for another, a profile for a codec other than AAC, two renditions in one directory.
    static func ladder(_ text: String, codec ladderCodec: AudioCodecID?) throws -> [Packaging.LadderRendition] {
        var renditions: [Packaging.LadderRendition] = []
        let carried = Keyframe.codecs.descriptions.map(\.codec)
        for item in text.split(separator: ",") {
            let parts = item.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            var rendition = Packaging.LadderRendition(bitrate: nil)
            if parts[0] != "lossless" {
                guard let value = Bitrate(argument: parts[0]) else {
                    throw CommandFailure("--bitrates \(item): give bitrates like 64k,128k, each with an optional :profile (48k:he-aac) "
                                         + "or :codec (96k:opus), or lossless:flac", status: .usage)
                }
                rendition.bitrate = value.bitsPerSecond
            }
            if parts.count == 2 {
                if let profile = ProfileArgument(rawValue: parts[1]) {
                    rendition.profile = profile.choice
                } else if let codec = CodecArgument(argument: parts[1]), carried.contains(codec.codec) {
                    rendition.codec = codec.codec
                } else {
                    throw CommandFailure("--bitrates \(item): \"\(parts[1])\" is neither a profile ("
                                         + ProfileArgument.allCases.map(\.rawValue).joined(separator: ", ") + ") nor a codec the segments carry ("
                                         + carried.map(\.name).joined(separator: ", ") + ")", status: .usage)
                }
            } else if rendition.bitrate == nil {
                // `lossless` alone: the lossless codec asked, else FLAC.
                rendition.codec = ladderCodec.map(Packaging.isLossless) == true ? ladderCodec : .flac
            }
            let codec = rendition.codec ?? ladderCodec ?? .aac
            if Packaging.isLossless(codec), rendition.bitrate != nil {
                throw CommandFailure("--bitrates \(item): \(codec) is lossless and takes no bitrate (lossless:\(codec), or name "
                                     + "another codec: \(parts[0]):aac)", status: .usage)
            }
            if !Packaging.isLossless(codec), rendition.bitrate == nil {
                throw CommandFailure("--bitrates \(item): \(codec) needs a bitrate (96k:\(codec)); lossless is lossless:flac or lossless:alac",
                                     status: .usage)
            }
            if codec != .aac, rendition.profile != nil {
                throw CommandFailure("--bitrates \(item): profiles are AAC's; \(codec) has none", status: .usage)
            }
            renditions.append(rendition)
        }
        let names = renditions.map { $0.directoryName(ladderCodec: ladderCodec) }
        if let twice = names.first(where: { name in names.filter { $0 == name }.count > 1 }) {
            throw CommandFailure("--bitrates: each rendition once (two would be \(twice)/)", status: .usage)
        }
        return renditions
    }
}
