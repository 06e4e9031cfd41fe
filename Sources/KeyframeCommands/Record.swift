import ArgumentParser
import Dispatch
import KeyFrameKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `keyframe record OUTPUT`: capture from ALSA to PCM, WAV, ADTS or M4A.
struct Record: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record from an ALSA capture device to .pcm, .wav, .aac, .m4a, .mp3, .opus or .flac.",
        discussion: """
            The output's extension picks the container: .pcm is the captured 16-bit PCM as it came \
            (interleaved, little-endian), .wav the same in a WAV file, .aac AAC-LC in ADTS, .m4a AAC-LC \
            in MP4 with a sample-exact edit list (decoding gives back exactly the frames recorded); \
            --profile he-aac or he-aac-v2 (stereo) records HE-AAC instead, and --profile auto chooses \
            by --channels and --bitrate (stereo: he-aac-v2 up to 40k, he-aac up to 64k; mono: he-aac \
            up to 32k; lc above, for more channels, and without --bitrate). HE-AAC (v1 and v2) records \
            at 16000, 22050, 24000, 32000, 44100 or 48000 Hz (--sample-rate), v2 with --channels 2; \
            each --publish URL#bitrate=… is chosen for by its own bitrate; with --hls every HE-AAC \
            segment and part starts with an SBR header. --codec opus, flac or alac records that codec \
            into .m4a and --hls instead of AAC (Opus at --sample-rate 48000; FLAC and ALAC lossless: \
            the captured samples exactly); .aac and --publish take AAC. .mp3 (LAME, with its gapless \
            tag), .opus (Ogg Opus, at 48000 Hz) and .flac record their own codec, written whole under \
            a temporary name and renamed when the recording ends (no --crash-safe, no --hls beside).

            Recording runs until --duration is reached, or until Ctrl-C (SIGINT) or SIGTERM, which \
            finish the file cleanly (so does SIGHUP, a closed terminal); a Ctrl-C while the file is being \
            finished abandons it. With --crash-safe, .m4a is written fragmented in place (a fragment a \
            second) and the other containers are flushed every second, so a kill (SIGKILL, a crash) costs \
            at most the last second. Without it, .pcm, .wav and .aac are still written in place, but an \
            .m4a is written under a hidden temporary name (.NAME.partial-…) and renamed when finished; a \
            killed recording leaves that temporary file behind.

            On a terminal a live line shows the time recorded and, per channel, the RMS level (bar) and \
            peak in dBFS, then each publishing destination's and each store's state (● going, ↻ \
            retrying, ✕ stopped), with a store's queue and its failed segments. The capture thread never waits on the encoder or the disk; if they fall behind \
            by more than the queue (5 s), periods are dropped, and every overrun is reported at the end.

            Without a sound card, record from PulseAudio (--device pulse, with a null sink's monitor as \
            the source) or from a PCM defined in a file given to --alsa-config (e.g. ALSA's `file` plugin).

            --hls DIR records a live HLS rendition instead of a file: DIR gets init.mp4 at once, then a \
            CMAF segment (segment-NNNNN.m4s, whole AAC frames, --segment-duration seconds) as soon as \
            one is recorded, each written under a temporary name and renamed, and index.m3u8 rewritten \
            atomically after each: an event playlist, or the last --hls-window segments, with \
            EXT-X-PROGRAM-DATE-TIME from the capture's start. Ctrl-C ends it with EXT-X-ENDLIST; after a \
            SIGKILL the playlist lists only complete segments. --part-duration adds low-latency parts: \
            each (whole frames, at most that long) is written as segment-NNNNN.P.m4s and listed with \
            EXT-X-PART as soon as it is recorded, with EXT-X-PART-INF, EXT-X-SERVER-CONTROL \
            (PART-HOLD-BACK three part targets) and EXT-X-PRELOAD-HINT; a segment is its parts.

            --hls URL (repeatable, beside one DIR or without any) copies the rendition as it is written \
            into an object store: S3 (s3://bucket/prefix, keys and --s3-endpoint as for package), an \
            HTTP ingest point (https://user:password@host/path: PUT and DELETE) or a WebDAV share \
            (davs://…, MKCOL first); env:NAME reads the URL from the environment. Each store is asked \
            first whether it holds a package (a wrong key stops here, in one request), then takes the \
            objects on a thread of its own, never slowing the local copy: in order, every object a \
            playlist names before that playlist; segments that leave the --hls-window deleted a window \
            later; a refused connection, a 5xx, 408 or 429 retried without end while the queue waits \
            in memory and then on disk up to --spool-size; a segment failing alone for a segment \
            duration marked EXT-X-GAP; any other refusal stops that store alone. When the recording \
            ends, the stores catch up (the ENDLIST playlist last) and --json lists each one's \
            state, objects, failures, gaps and losses; a store that stopped or lost an object makes \
            the exit status 1.

            OUTPUT.aac or OUTPUT.m4a with --hls DIR writes both from one capture and one encoder: the \
            same AAC packets go to the file and to the rendition (a tee), so the two hold the same \
            frames. A failure of either ends the recording, and both keep what they have.

            --publish URL (repeatable) sends the same capture live to RTMP (rtmp://host/app/key, \
            rtmps://), Icecast (icecast://source:password@host:port/mount, icecasts://) and SRT \
            (srt://host:port?streamid=…&latency=ms&passphrase=…) servers, with or without OUTPUT and \
            --hls. Destinations at --bitrate share the file's encoder; URL#bitrate=64k gives one its \
            own (one encoder per distinct bitrate). env:NAME or file:PATH reads a URL from the \
            environment or a file, keeping secrets off the command line. A destination never holds \
            the capture or the file up: each queues --publish-queue seconds and drops its oldest \
            frames past it, reconnects by itself after a passing failure, and stops alone when refused \
            for good; the file stays frame-exact whatever the network does. Ctrl-C ends every \
            destination cleanly (RTMP deleteStream, the end of Icecast's request, SRT's flush).

            --metadata-from PATH|- reads timed metadata as JSON lines, one event a line: a title \
            change {"at": SECONDS or "wallclock": ISO-8601, "title", "artist", "album", "url"} and an \
            ad break {"start": SECONDS, "duration": SECONDS, "id", "uri"}, seconds counting from the \
            first sample (without a time, when the line is read). The file's lines are read before \
            capture starts and lines added later as they come (- follows standard input). In --hls, a \
            title change is an ID3 tag (TIT2, TPE1, TALB, WXXX) in an emsg box (version 1, scheme \
            https://aomedia.org/emsg/ID3) in the segment or part its time falls in, with the aid3 \
            brand; an ad break is an EXT-X-DATERANGE with SCTE35-OUT and SCTE35-IN (splice_insert \
            sections, CRC-32), the EXT-X-CUE-OUT/-OUT-CONT/-IN tags, an interstitial \
            (com.apple.hls.interstitial) when it has a uri, and its SCTE-35 sections as emsg boxes \
            (urn:scte:scte35:2013:bin). A line that does not read is a warning naming it, and skipped.
            """
    )

    @Argument(help: ArgumentHelp("The file to write: .pcm, .wav, .aac or .m4a (or --hls DIR alone; .aac or .m4a with --hls DIR writes both); "
                                 + ".mp3, .opus or .flac, written whole when the recording ends."))
    var output: String?

    @Option(help: ArgumentHelp("Record a live HLS rendition into this directory, or copy it as it is written into this object store "
                               + "(s3://bucket/prefix; https://host/path, or http:// to this machine; WebDAV davs:// or dav://; env:NAME holding one); "
                               + "repeatable: one directory, any stores.",
                               valueName: "DIR|URL"))
    var hls: [String] = []

    @Option(help: ArgumentHelp("HLS: a live ladder, an AAC rendition per bitrate from the one capture (e.g. 32k:auto,64k:auto,128k; "
                               + ":auto, :lc, :he-aac or :he-aac-v2 choose the profile), each in a directory of its own with master.m3u8 naming them.",
                               valueName: "list"))
    var bitrates: String?

    @OptionGroup(title: "Object stores (with --hls URL)") var objectStore: ObjectStoreOptions

    @Option(help: ArgumentHelp("HLS: the most each object store's queue holds while it is slow or down, in memory and on disk "
                               + "(e.g. 500M, 2G); a segment past it is not kept, and marked as a gap.", valueName: "bytes"))
    var spoolSize = "1G"

    @Option(help: ArgumentHelp("HLS: how long the object stores may take, once the recording has ended, to catch up with what is queued; "
                               + "what is left then is reported lost.", valueName: "seconds"))
    var storeTimeout: Double = 300

    @Option(help: ArgumentHelp("Publish live to this RTMP, Icecast or SRT URL (repeatable; env:NAME or file:PATH read one).",
                               valueName: "URL"))
    var publish: [String] = []

    @Option(help: "The title live destinations announce (Icecast's stream name and song; RTMP's onMetaData title).")
    var title: String?

    @Option(help: ArgumentHelp(
        "Timed metadata as JSON lines (a title change, an ad break; see `keyframe help record`), from a file followed as it grows, or - for standard input.",
        valueName: "PATH|-"))
    var metadataFrom: String?

    @OptionGroup(title: "Publishing (with --publish)")
    var publishing: PublishingOptions

    @Option(help: "HLS: segments the playlist lists; 0 keeps them all (an event playlist).")
    var hlsWindow = 0

    @Option(help: ArgumentHelp("HLS: what the segments are: CMAF (fMP4) or packed-audio (AAC in ADTS with ID3 timestamps, .aac; no parts).",
                               valueName: "cmaf|packed-audio"))
    var segments: HLSSegmentFormat = .cmaf

    @Option(help: "HLS: seconds per segment (whole AAC frames).")
    var segmentDuration: Double = 6

    @Option(help: "HLS: low-latency parts of at most this many seconds (EXT-X-PART), written as they are recorded.")
    var partDuration: Double?

    @Option(help: ArgumentHelp("HLS: serve the rendition over HTTP, low-latency (blocking playlist reload), on this address.",
                               valueName: "HOST:PORT"))
    var serve: String?

    @OptionGroup(title: "Serving (with --serve)")
    var serving: ServingOptions

    @Option(help: ArgumentHelp("Stop after this many seconds (exactly that many frames).", valueName: "seconds"))
    var duration: Double?

    @OptionGroup var audioDevice: AudioDeviceOptions

    @Option(name: .customLong("sample-rate"), help: ArgumentHelp("Frames per second to capture (8000–96000); default 44100, or 48000 for Opus.",
                                                               valueName: "sample-rate"))
    var askedSampleRate: Int?

    /// The capture rate: the one asked, else 48 kHz for Opus (the only rate it takes), else 44.1 kHz.
    var sampleRate: Int {
        if let askedSampleRate { return askedSampleRate }
        let opus = codecArgument?.codec == .opus || output.flatMap { RecordingOptions.container(of: FilePath($0)) } == .oggOpus
        return opus ? 48000 : 44100
    }

    @Option(help: "Channels to capture (1–8).")
    var channels = 2

    @OptionGroup(title: "Encoding") var encoder: EncoderOptions

    @Option(name: .customLong("codec"), help: ArgumentHelp(
        "The codec of .m4a and --hls: aac, opus (at 48000 Hz), flac or alac. Default: AAC; .mp3, .opus and .flac record their "
            + "own codec. .aac and --publish take AAC. --profile is AAC's.",
        valueName: "codec"))
    var codecArgument: SegmentCodecArgument?

    @Option(help: ArgumentHelp(
        "AAC scale-factor search (ffmpeg's -aac_coder): fast (half the CPU, a little lower quality) or twoloop (ffmpeg's default).",
        valueName: "coder"))
    var coder: CoderArgument = .fast

    @Option(name: .customLong("period-ms"), help: ArgumentHelp(
        "The capture period: how often the device hands over audio. Shorter wakes the CPU more often.",
        valueName: "ms"))
    var periodMilliseconds = 20

    @Flag(help: "Write so that a kill loses at most the last second (.m4a: fragmented, in place).")
    var crashSafe = false

    @Flag(help: "Print the summary as JSON on stdout.")
    var json = false

    func validate() throws {
        if output == "-" { throw ValidationError(standardOutputRefusal) }
        if let duration, !(duration > 0 && duration < 1e7) || (duration * Double(sampleRate)).rounded() < 1 {
            throw ValidationError("--duration must be a positive number of seconds (at least one frame)")
        }
        guard AudioConfiguration.supportedSampleRates.contains(sampleRate) else {
            throw ValidationError("--sample-rate \(sampleRate) is not one of \(AudioConfiguration.supportedSampleRates.map(String.init).joined(separator: ", "))")
        }
        guard AudioConfiguration.supportedChannelCounts.contains(channels) else {
            throw ValidationError("--channels must be 1–8")
        }
        // HE-AAC's rates and channels, checked before anything opens (`auto` as the recording
        // will choose: by the channels and the bitrate; a v2 input that is not stereo is refused
        // by the encoder, in its words, before the device or any file is touched).
        let chosen = encoder.profile.choice.resolved(channelCount: channels, bitrate: encoder.bitsPerSecond, sampleRate: sampleRate)
        if chosen.usesSpectralBandReplication,
           output.map({ RecordingOptions.container(of: FilePath($0))?.contents.contains(.audioPackets) ?? true }) ?? true {
            guard SBRTuning.supportedOutputSampleRates.contains(sampleRate) else {
                throw ValidationError("--profile \(encoder.profile.rawValue): HE-AAC records at "
                                      + SBRTuning.supportedOutputSampleRates.map(String.init).joined(separator: ", ")
                                      + " Hz, and the capture rate is \(sampleRate) Hz; give one of those with --sample-rate")
            }
            guard chosen == .ps || channels <= 2 else {
                throw ValidationError("--profile \(encoder.profile.rawValue): HE-AAC v1 is mono or stereo; give --channels 1 or 2")
            }
        }
        guard (1...1000).contains(periodMilliseconds) else {
            throw ValidationError("--period-ms must be 1–1000")
        }
        guard output != nil || !hls.isEmpty || !publish.isEmpty else {
            throw ValidationError("give an OUTPUT file, --hls DIR, --publish URL, or several of them")
        }
        try publishing.check()
        let container = output.flatMap { RecordingOptions.container(of: FilePath($0)) }
        if sampleRate != 48000, codecArgument?.codec == .opus || container == .oggOpus {
            throw ValidationError("--sample-rate \(sampleRate): Opus records at 48000 Hz (the default with Opus)")
        }
        if let container, RecordingOptions.nativeContainers.contains(container), let own = container.defaultAudioCodec {
            // .mp3, .opus, .flac: the container's own codec, written whole.
            if let asked = codecArgument?.codec, asked != own {
                throw ValidationError("--codec \(asked): \(output ?? "") holds \(CodecArgument.displayName(own)); give .m4a for \(asked)")
            }
            if crashSafe {
                throw ValidationError("--crash-safe: \(output ?? "") is written whole and committed when the recording ends; "
                                      + "crash-safe recording writes .m4a, .aac, .wav or .pcm")
            }
            guard encoder.profile == .lc || encoder.profile == .auto else {
                throw ValidationError("--profile \(encoder.profile.rawValue): profiles are AAC's; \(own) has none")
            }
        } else if let asked = codecArgument?.codec, asked != .aac {
            let carried = Keyframe.codecs.descriptions.map(\.codec)
            guard carried.contains(asked) else {
                throw ValidationError("--codec \(asked): a recording writes \(carried.map(\.name).joined(separator: ", ")) into .m4a and --hls "
                                      + "(MP3 into .mp3)")
            }
            guard output.map({ RecordingOptions.container(of: FilePath($0)) == .mp4 }) ?? true else {
                throw ValidationError("--codec \(asked): a recording writes it into .m4a (or --hls); \(output ?? "") holds AAC or PCM")
            }
            guard publish.isEmpty else { throw ValidationError("--codec \(asked): --publish takes AAC from a recording") }
            guard encoder.profile == .lc || encoder.profile == .auto else {
                throw ValidationError("--profile \(encoder.profile.rawValue): profiles are AAC's; \(asked) has none")
            }
        }
        if let output {
            guard let container = RecordingOptions.container(of: FilePath(output)) else {
                throw ValidationError("\(output): unknown output type; use .pcm, .wav, .aac, .m4a, .mp3, .opus or .flac")
            }
            guard hls.isEmpty || container == .adts || container == .mp4 else {
                throw ValidationError("\(output): a file beside --hls is .aac or .m4a (the same AAC goes to both)")
            }
            guard publish.isEmpty || container == .adts || container == .mp4 else {
                throw ValidationError("\(output): a file beside --publish is .aac or .m4a (the same AAC goes to both)")
            }
        }
        guard hlsWindow == 0 || hlsWindow >= 3, (0.5...60).contains(segmentDuration) else {
            throw ValidationError("--hls-window must be 0 (all) or at least 3 segments, and --segment-duration 0.5–60 s")
        }
        if let partDuration {
            guard !hls.isEmpty, (0.1...segmentDuration).contains(partDuration) else {
                throw ValidationError("--part-duration goes with --hls: 0.1 s up to the segment duration")
            }
        }
        if metadataFrom != nil, hls.isEmpty, publish.isEmpty {
            throw ValidationError("--metadata-from: a file holds no timed metadata; give --hls or --publish to carry it")
        }
        if segments == .packedAudio {
            guard !hls.isEmpty else { throw ValidationError("--segments goes with --hls") }
            guard partDuration == nil, serve == nil else {
                throw ValidationError("--segments packed-audio: low-latency parts (--part-duration, --serve) are CMAF chunks; packed audio has none")
            }
            if let asked = codecArgument?.codec, asked != .aac {
                throw ValidationError("--segments packed-audio carries AAC (ADTS); --codec \(asked) needs CMAF segments")
            }
        }
        var directories = 0
        for target in hls {
            do {
                if try objectStore.store(named: target) == nil { directories += 1 }
            } catch where error.reason == .invalidDestination {
                throw ValidationError("--hls: \(error)")
            } catch {}
        }
        if let bitrates {
            guard !hls.isEmpty, output == nil, publish.isEmpty else {
                throw ValidationError("--bitrates \(bitrates): a live ladder records --hls alone (no OUTPUT file, no --publish)")
            }
            guard codecArgument == nil || codecArgument?.codec == .aac, segments == .cmaf else {
                throw ValidationError("--bitrates: a live ladder is AAC in CMAF segments")
            }
            let ladder: [Packaging.LadderRendition]
            do { ladder = try Package.ladder(bitrates, codec: .aac) } catch { throw ValidationError("\(error)") }
            guard ladder.count >= 2 else { throw ValidationError("--bitrates \(bitrates): a ladder has two renditions or more") }
        }
        guard directories <= 1 else { throw ValidationError("--hls: one directory at most (the local copy); the others are object stores' URLs") }
        guard storeTimeout >= 0, storeTimeout.isFinite else { throw ValidationError("--store-timeout: seconds, 0 or more") }
        guard let spool = Self.byteCount(spoolSize), spool >= 1_000_000 else {
            throw ValidationError("--spool-size \(spoolSize): a size of at least 1M, e.g. 500M or 2G")
        }
        if let serve {
            guard !hls.isEmpty, Self.address(serve) != nil else { throw ValidationError("--serve HOST:PORT goes with --hls (e.g. 127.0.0.1:8080)") }
        }
        if serve != nil, bitrates != nil {
            throw ValidationError("--serve serves one rendition; a live ladder (--bitrates) goes to its directory and stores, served by keyframe serve DIR")
        }
    }

    /// `HOST:PORT` (a port of 1–65535).
    static func address(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else { return nil }
        let host = String(text[..<colon])
        return (host.isEmpty ? "127.0.0.1" : host, port)
    }

    /// `1G`, `500M`, `64k` or a plain number of bytes (decimal multiples).
    static func byteCount(_ text: String) -> Int64? {
        let multipliers: [Character: Int64] = ["k": 1000, "K": 1000, "m": 1_000_000, "M": 1_000_000, "g": 1_000_000_000, "G": 1_000_000_000]
        let multiplier = text.last.flatMap { multipliers[$0] }
        guard let value = Double(multiplier == nil ? text : String(text.dropLast())), value >= 0,
              value * Double(multiplier ?? 1) < 1e18 else { return nil }
        return Int64(value * Double(multiplier ?? 1))
    }


    func run() throws {
        // Serving lives in keyframe-serve: run there, before anything is opened.
        if serve != nil { try Serving.handOverUnlessInstalled() }
        // Destinations are checked (URL, secrets, the host resolving) before anything starts.
        let destinations = try PublishingOptions.destinations(publish)
        let configuration = try AudioConfiguration(channelCount: channels, sampleRate: sampleRate)
        let frameLimit = duration.map { Int(($0 * Double(sampleRate)).rounded()) }
        // The stores are asked before capture: a wrong key, a missing bucket or a package there
        // already stops here, one request each.
        let replicas = try StoreReplicas(hls, objectStore: objectStore, spoolLimit: Self.byteCount(spoolSize) ?? 1_000_000_000,
                                         gapAfter: .seconds(segmentDuration))
        defer { replicas.discard() }
        let hlsDirectory = replicas.directory
        // The file or the HLS directory written (or the first store, its secrets masked; publishing only, "live").
        let destination = output ?? replicas.shownName ?? "live"
        var options = try RecordingOptions(
            outputPath: FilePath(output ?? hlsDirectory ?? "live"), configuration: configuration, bitrate: encoder.bitsPerSecond ?? Transcode.defaultBitrate, coder: coder.coder, device: audioDevice.device,
            alsaConfiguration: try audioDevice.configuration(), frameLimit: frameLimit, crashSafe: crashSafe,
            periodFrames: max(1, sampleRate * periodMilliseconds / 1000),
            queueCapacity: max(4, 5000 / periodMilliseconds),
            container: output == nil ? (hlsDirectory != nil ? .hlsPlaylist : .adts) : nil)
        if output != nil, let hlsDirectory { options.hlsDirectory = FilePath(hlsDirectory) }
        options.writesFile = output != nil || hlsDirectory != nil
        options.hlsReplicas = replicas.replicas
        if let bitrates { options.hlsLadder = try Package.ladder(bitrates, codec: .aac) }
        options.destinations = destinations
        options.publishQueueDuration = publishing.queueDuration
        options.reconnectPolicy = publishing.policy
        options.trustRoots = publishing.caFile
        options.publishTitle = title
        options.formats = Keyframe.formats
        options.lowersBitrateToFit = encoder.bitrate == nil
        options.profile = encoder.profile.choice
        if let asked = codecArgument?.codec { options.codec = asked }
        options.hlsWindow = hlsWindow
        options.hlsSegmentDuration = .seconds(segmentDuration)
        // Serving is low-latency: parts of 1 s unless asked otherwise.
        options.hlsPartDuration = (partDuration ?? (serve != nil ? min(1, segmentDuration) : nil)).map { .seconds($0) }
        var server: (any Serving.Running)?
        if let serve, let hls = hlsDirectory, let (host, port) = Self.address(serve) {
            // Bound before capture starts: a port in use stops here, before anything is written.
            let publication = LiveHLSPublication()
            options.hlsPublication = publication
            server = try Serving.start(publication: publication, directory: FilePath(hls), host: host, port: port, options: serving.options)
            Terminal.error("serving \(serving.scheme)://\(host):\(port)/index.m3u8 (a player page at /)\n")
        }
        defer { server?.stop() }
        if hlsDirectory != nil {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            options.hlsStartDate = .seconds(Int64(now.tv_sec)) + .nanoseconds(Int64(now.tv_nsec))
        }
        options.timedMetadata = metadataFrom != nil
        if (1..<6).contains(hlsWindow) {
            Terminal.warning("--hls-window \(hlsWindow): Apple's HLS authoring rule 8.11 asks a live playlist for at least 6 segments")
        }
        options.hlsSegmentFormat = segments
        let recording: LiveEncoding
        do { recording = try LiveEncoding(recording: options) } catch { throw CommandFailure("\(error)") }
        // The file's lines so far are told before the first sample; later ones as they come.
        let follower = try metadataFrom.map { source in
            try StreamEventFollower(source: source, announce: { recording.announce($0) }, streamTime: { recording.streamTime },
                                    wallClock: { recording.streamTime(ofWallClock: $0) })
        }
        defer { follower?.stop() }
        // Before start: opening a device can take a second (PulseAudio), and a Ctrl-C then must
        // not leave an empty file behind. A stop asked for by then ends the recording at once.
        let signals = StopSignals { recording.requestStop() }
        do { try recording.start() } catch {
            // Device errors name the device, file errors the file.
            throw CommandFailure("\(error)")
        }
        follower?.start()
        let meter = LevelMeterLine(channelCount: channels)
        let overruns = {
            let statistics = recording.statistics
            return statistics.deviceXruns + statistics.consumerOverruns
        }
        while !recording.job.wait(timeout: .milliseconds(200)) {
            let levels = recording.progress.takeLevels()
            meter.draw(seconds: Double(recording.progress.frames) / Double(sampleRate), levels: levels, overruns: overruns(),
                       destinations: recording.destinations.map(\.snapshot), stores: replicas.replicas)
        }
        meter.draw(seconds: Double(recording.progress.frames) / Double(sampleRate), levels: recording.progress.takeLevels(), overruns: overruns())
        meter.finish()
        signals.finishing()
        let summary: RecordingSummary
        do { summary = RecordingSummary(options, of: recording, summary: try recording.finish()) } catch {
            throw CommandFailure("\(destination): \(error)")
        }
        // The stores catch up after the local copy is complete.
        // A Ctrl-C while the stores catch up gives them up (what is left is reported lost);
        // a second one ends the process.
        let catchingUp = StopSignals(secondEndsProcess: true) { replicas.giveUp() }
        let stores = replicas.finish(within: .seconds(storeTimeout))
        catchingUp.finishing()
        report(summary, stores: stores, destination: destination, staged: replicas.staging != nil)
        DestinationReport.warnings(summary.destinations)
        try StoreReplicas.check(stores)
        if let failure = summary.deviceFailure {
            throw CommandFailure("recording stopped early: \(failure); \(destination) holds the \(Terminal.fixed(summary.seconds, digits: 3)) s recorded before")
        }
    }

    private func report(_ summary: RecordingSummary, stores: [StoreReplicaReport], destination: String, staged: Bool) {
        let statistics = summary.capture
        if json {
            var report = RecordReport(summary)
            report.stores = stores
            report.ladder = try? bitrates.map { try Package.ladder($0, codec: .aac).map { $0.directoryName(ladderCodec: .aac) } }
            if staged { report.hls = nil }
            try? JSONOutput.print(report)
        } else {
            let levels = zip(summary.levels.peakDBFS, summary.levels.rmsDBFS).map { peak, rms in
                "\(Self.decibels(peak))/\(Self.decibels(rms))"
            }.joined(separator: ", ")
            let used = summary.bitrate ?? encoder.bitsPerSecond ?? 0
            let codec = switch summary.codec {
            case nil: ""
            case .aac?: ", \(ProfileArgument.name(of: summary.profile ?? .aacLC)) \(used) b/s"
            case let other?: ", \(CodecArgument.displayName(other))" + (used > 0 ? " \(used) b/s" : "")
            }
            let ladder = bitrates.map { ", a ladder of \($0) (the first: \(codec.dropFirst(2)))" }
            print("\(destination): \(Terminal.fixed(summary.seconds, digits: 3)) s, \(summary.format.sampleRate) Hz, "
                  + "\(summary.format.channelCount) ch\(ladder ?? codec), from '\(summary.device)', stopped by \(RecordReport.stoppedBy(summary.stopReason)); "
                  + "peak/RMS dBFS \(levels); overruns: \(summary.hasOverruns ? "see below" : "none")")
            for snapshot in summary.destinations { print("  " + DestinationReport.line(snapshot)) }
            for store in stores { print("  " + store.line) }
        }
        if statistics.deviceXruns > 0 || statistics.lostFrames > 0 {
            let lost = Double(statistics.lostFrames) / Double(summary.format.sampleRate)
            Terminal.warning("\(statistics.deviceXruns) device overrun\(statistics.deviceXruns == 1 ? "" : "s"): about "
                             + "\(Terminal.fixed(lost, digits: 3)) s of audio lost (the capture thread was not scheduled in time)")
        }
        if statistics.consumerOverruns > 0 {
            Terminal.warning("\(statistics.consumerOverruns) period\(statistics.consumerOverruns == 1 ? "" : "s") of "
                             + "\(summary.periodFrames) frames dropped: encoding or the disk fell more than the queue behind")
        }
    }

    private static func decibels(_ value: Double) -> String {
        value.isFinite ? Terminal.fixed(value, digits: 1) : "-inf"
    }
}

/// `record --json`: what a script needs to check a recording.
struct RecordReport: Encodable {
    /// The file written; `null` when only publishing (or only HLS).
    var output: String?
    var container: String
    /// The HLS rendition written beside the file, if any.
    var hls: String?
    var device: String
    var sampleRate: Int
    var channels: Int
    var frames: Int64
    var seconds: Double
    var stoppedBy: String
    var periodFrames: Int
    var deviceXruns: Int
    var lostFrames: Int
    var queueOverruns: Int
    /// Per channel; `null` for digital silence (−∞ dBFS).
    var peakDBFS: [Double?]
    var rmsDBFS: [Double?]
    var deviceFailure: String?
    /// Each live destination (`--publish`), in the order given.
    var destinations: [DestinationReport]
    /// A live ladder's renditions' directories (`--bitrates`), the first encoded as ``profile`` and
    /// ``bitrate`` say; `null` for one rendition.
    var ladder: [String]?
    /// Each object store the rendition was copied into (`--hls URL`), in the order given.
    var stores: [StoreReplicaReport] = []
    /// The AAC profile of the file and rendition, as probe names it (`LC`, `HE-AAC`,
    /// `HE-AACv2`; `null` for another codec), and their bitrate; `null` for PCM.
    var profile: String?
    var bitrate: Int?
    /// The codec of the file and rendition (`aac`, `opus`, `flac`, `alac`); `null` for PCM.
    var codec: String?

    init(_ summary: RecordingSummary) {
        output = summary.writesFile ? summary.outputPath.string : nil
        container = Self.name(of: summary.container)
        hls = summary.hlsDirectory?.string
        device = summary.device
        sampleRate = summary.format.sampleRate
        channels = summary.format.channelCount
        frames = summary.frames
        seconds = summary.seconds
        stoppedBy = Self.stoppedBy(summary.stopReason)
        periodFrames = summary.periodFrames
        deviceXruns = summary.capture.deviceXruns
        lostFrames = summary.capture.lostFrames
        queueOverruns = summary.capture.consumerOverruns
        peakDBFS = summary.levels.peakDBFS.map { $0.isFinite ? ($0 * 100).rounded() / 100 : nil }
        rmsDBFS = summary.levels.rmsDBFS.map { $0.isFinite ? ($0 * 100).rounded() / 100 : nil }
        deviceFailure = summary.deviceFailure?.description
        destinations = summary.destinations.map(DestinationReport.init)
        profile = summary.profile?.description
        bitrate = summary.bitrate
        codec = summary.codec?.name
    }

    /// The container's name in the JSON: `pcm`, `wav`, `aac`, `m4a`, `hls`, `mp3`, `opus` or `flac`.
    static func name(of container: MediaFileFormat) -> String {
        switch container {
        case .rawPCM: "pcm"
        case .wav: "wav"
        case .adts: "aac"
        case .mp4: "m4a"
        case .hlsPlaylist: "hls"
        default: container.fileExtensions.first ?? container.name
        }
    }

    static func stoppedBy(_ reason: LiveCaptureJob.StopReason) -> String {
        switch reason {
        case .duration: "duration"
        case .requested: "signal"
        case .device: "device"
        case .error: "error"
        }
    }
}
