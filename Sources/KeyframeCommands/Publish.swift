import ArgumentParser
import Dispatch
import Synchronization
import KeyFrameKit

/// `keyframe publish IN URL…`: a file sent live to RTMP, Icecast and SRT servers.
struct Publish: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Send an audio file live, in real time, to RTMP, Icecast and SRT servers.",
        discussion: """
            The file is sent at the pace it plays (each frame when its time on the sample clock has \
            come, like ffmpeg -re), to every URL at once:

              rtmp://host[:port]/app/key, rtmps://…            FLV audio: the AAC sequence header (the \
            AudioSpecificConfig), then raw frames; onMetaData first
              icecast://[source[:password]@]host[:port]/mount  ADTS over HTTP PUT (SOURCE for old servers); \
            icecasts:// over TLS
              srt://host:port?streamid=…&latency=ms&passphrase=…  MPEG-TS (PAT/PMT, PES with ADTS, PCR; \
            --codec mp3: stream_type 3, or 4 below 32 kHz; --codec opus: stream_type 6 with the Opus \
            registration descriptor and a control header per packet)

            A URL may end with #bitrate=64k: that destination's bitrate (one encoder per distinct \
            bitrate). Give env:NAME or file:PATH instead of a URL to read it from an environment \
            variable or a file, keeping keys and passwords off the command line; they are shown as **** \
            everywhere.

            An AAC input (.aac, .m4a) is sent as it is unless a bitrate is asked; anything else \
            FFmpeg decodes is encoded to AAC-LC (128k by default), or with --profile he-aac to \
            HE-AAC v1 (64k stereo by default; resampled to 16–48 kHz; an AAC input is then encoded \
            too), with --profile he-aac-v2 to HE-AAC v2 (stereo input only; 32k by default), and \
            with --profile auto by the input's channels and each bitrate (stereo: he-aac-v2 up to \
            40k, he-aac up to 64k; mono: he-aac up to 32k; lc above, for more channels, and with no \
            bitrate, when an AAC input is sent as it is). A bitrate asked of HE-AAC is used as it \
            is (or refused, in HE-AAC's words). A destination that reconnects resumes at the next frame: HE-AAC repeats its SBR \
            header every 8 frames (about 0.34 s), so a player there starts with the full band \
            after at most that. --loop plays the file again from \
            its start each time it ends, until Ctrl-C: the input is decoded and looped sample to \
            sample (priming and padding removed), then encoded as one continuous signal, so no frame \
            straddles a seam and nothing is inserted at the join; timestamps keep rising.

            A destination that fails for a passing reason (refused, reset, the server restarting, a \
            name not resolving) reconnects by itself with capped exponential backoff and announces the \
            stream again; one refused for good (a wrong password or key, a name in use) stops alone \
            with the reason. Each destination queues --publish-queue seconds; past it the oldest \
            frames are dropped and counted. Ctrl-C ends every destination cleanly.
            """
    )

    @Argument(help: "The audio file to send.")
    var input: String

    @Argument(help: "Where to send it: rtmp://, rtmps://, icecast://, icecasts:// or srt:// URLs (or env:NAME, file:PATH).")
    var destinations: [String]

    @OptionGroup(title: "Encoding") var encoder: EncoderOptions

    @OptionGroup(title: "Encoding") var layout: OutputLayoutOptions

    @Option(help: ArgumentHelp("The codec encoded: aac, or mp3 or opus for Icecast (audio/mpeg; Opus in Ogg, audio/ogg) and SRT (MPEG-TS). "
                               + "Default: aac. --profile is AAC's.", valueName: "codec"))
    var codec: LiveCodecArgument?

    @Option(help: "The stream's title (Icecast's stream name and song; RTMP's onMetaData title); by default the file's title tag.")
    var title: String?

    @Flag(help: "Play the file again from its start each time it ends, until Ctrl-C.")
    var loop = false

    @Option(help: ArgumentHelp("Stop after this many seconds of audio.", valueName: "seconds"))
    var duration: Double?

    @Option(help: ArgumentHelp(
        "Title changes as JSON lines ({\"at\": SECONDS or \"wallclock\": ISO-8601, \"title\", \"artist\", \"album\", \"url\"}), from a file followed as it grows, or - for standard input.",
        valueName: "PATH|-"))
    var metadataFrom: String?

    @OptionGroup(title: "Publishing")
    var publishing: PublishingOptions

    @Flag(help: "Print each destination's figures as JSON on stdout.")
    var json = false

    func validate() throws {
        try layout.checkForAAC()
        try publishing.check()
        if let duration, !(duration > 0 && duration < 1e7) { throw ValidationError("--duration must be a positive number of seconds") }
        guard !destinations.isEmpty else { throw ValidationError("give at least one destination URL") }
    }

    func run() throws {
        try RemoteObjects.requireLocal([input], command: "publish")
        let parsed = try PublishingOptions.destinations(destinations)
        var options = LivePublication.Options(input: FilePath(input), destinations: parsed, bitrate: encoder.bitsPerSecond, title: title,
                                              loops: loop)
        options.duration = duration.map { .milliseconds(Int64($0 * 1000)) }
        options.queueDuration = publishing.queueDuration
        options.reconnectPolicy = publishing.policy
        options.trustRoots = publishing.caFile
        options.profile = encoder.profile.choice
        if let codec = codec?.codec, codec != .aac {
            guard encoder.profile == .lc else {
                throw CommandFailure("--profile \(encoder.profile.rawValue): profiles are AAC's; \(codec) has none", status: .usage)
            }
            options.codec = codec
        }
        options.sampleRate = layout.sampleRate
        options.channelCount = layout.channels
        // Title changes: the file's lines so far are told before the first packet, later ones as
        // they come, at the media time played (a line without a time: when it is read).
        let played = Mutex(0.0)
        let started = WallClock.now()
        var follower: StreamEventFollower?
        if let metadataFrom {
            let inlet = StreamEventInlet()
            options.inlet = inlet
            options.timedMetadata = true
            follower = try StreamEventFollower(
                source: metadataFrom, acceptsAdBreaks: false, announce: { inlet.post($0) },
                streamTime: { MediaTime(value: Int64((played.withLock { $0 } * 1000).rounded()), timescale: 1000) },
                wallClock: { MediaTime(value: Int64((($0 - started) * 1000).rounded()), timescale: 1000) })
        }
        defer { follower?.stop() }
        follower?.start()
        let publication: LivePublication
        do { publication = try LivePublication(options: options) } catch { throw CommandFailure(error, naming: input) }
        let control = JobControl()
        // A stop ends the pump at the next packet, then the destinations are closed in their own
        // time; a job inside one read of its input from the signal to 0.3 s after it (a FIFO whose
        // writer stalled) never will, and the process ends. (Waiting for real time is not a read.)
        let signals = StopSignals(secondEndsProcess: true, deadline: .milliseconds(300), readInProgress: { control.inputReadInProgress }) {
            control.requestStop()
        }
        let status = DestinationStatusLine(statistics: publication.statistics)
        let summary: LivePublication.Summary
        do {
            summary = try publication.run(control: control) { progress in
                played.withLock { $0 = progress.mediaSeconds }
                status.update(progress)
            }
        } catch {
            status.finish()
            DestinationReport.warnings(publication.statistics.map(\.snapshot))
            throw CommandFailure(error, naming: input)
        }
        signals.finishing()
        status.finish()
        if json {
            try JSONOutput.print(PublishReport(input: input, summary: summary))
        } else {
            let delivered = summary.destinations.contains { $0.framesSent > 0 }
            print("\(input): \(Terminal.fixed(summary.seconds, digits: 3)) s " + (delivered ? "published" : "played, nothing delivered")
                  + (summary.copied ? " (AAC as it is)" : " (\(Self.encodings(summary)))")
                  + (summary.passes > 1 ? ", \(summary.passes) passes" : ""))
            for snapshot in summary.destinations { print("  " + DestinationReport.line(snapshot)) }
        }
        DestinationReport.warnings(summary.destinations)
        try DestinationReport.finish(summary.destinations)
    }

    /// What was encoded, a bitrate each: `AAC-LC 128k`, `HE-AAC v2 32k, HE-AAC 64k`.
    static func encodings(_ summary: LivePublication.Summary) -> String {
        summary.bitrates.enumerated().map { index, bitrate in
            guard summary.codec == .aac else { return "\(CodecArgument.displayName(summary.codec)) \(bitrate / 1000)k" }
            let profile = index < summary.profiles.count ? summary.profiles[index] : .aacLC
            return "\(ProfileArgument.name(of: profile)) \(bitrate / 1000)k"
        }.joined(separator: ", ")
    }
}

/// `publish --json`.
struct PublishReport: Encodable {
    var input: String
    var seconds: Double
    var copied: Bool
    var bitrates: [Int]
    /// The profile of each of `bitrates`, as probe names it: `LC`, `HE-AAC`, `HE-AACv2`.
    var profiles: [String]
    var passes: Int
    var destinations: [DestinationReport]

    init(input: String, summary: LivePublication.Summary) {
        self.input = input
        seconds = (summary.seconds * 1000).rounded() / 1000
        copied = summary.copied
        bitrates = summary.bitrates
        profiles = summary.profiles.map(\.description)
        passes = summary.passes
        destinations = summary.destinations.map(DestinationReport.init)
    }
}

/// The live line while publishing: media time sent and each destination's state, on stderr
/// when it is a terminal, redrawn every half second by a timer of its own (a PCM input's
/// progress comes only every few seconds). A destination that has not taken a frame and is
/// trying again is told at once, on a line of its own, terminal or not: a publish to a server
/// that is not there does not wait for the input's end to say so.
final class DestinationStatusLine {
    /// What the timer's thread and the pump's share.
    private final class Board: Sendable {
        struct State {
            var progress: MediaProgress?
            var drew = false
            /// The destinations whose failure to connect has been told.
            var told: Set<Int> = []
            var ended = false
        }

        let statistics: [DestinationStatistics]
        let enabled = Terminal.standardErrorIsTerminal
        let state = Mutex(State())

        init(statistics: [DestinationStatistics]) { self.statistics = statistics }

        func draw() {
            let snapshots = statistics.map(\.snapshot)
            state.withLock { state in
                guard !state.ended else { return }
                for (index, snapshot) in snapshots.enumerated() where !state.told.contains(index) {
                    guard snapshot.framesSent == 0, snapshot.state == .reconnecting, let error = snapshot.lastError else { continue }
                    state.told.insert(index)
                    Terminal.error((state.drew ? "\r\u{1B}[K" : "") + "warning: \(error); trying again while the input plays\n")
                }
                guard enabled, let progress = state.progress else { return }
                let states = snapshots.map { snapshot in
                    "\(snapshot.scheme) \(snapshot.state.rawValue)" + (snapshot.framesDropped > 0 ? " (\(snapshot.framesDropped) dropped)" : "")
                }
                Terminal.error("\rpublishing \(Terminal.fixed(progress.mediaSeconds, digits: 1)) s  " + states.joined(separator: " · ") + "\u{1B}[K")
                state.drew = true
            }
        }
    }

    private let board: Board
    private let timer: any DispatchSourceTimer

    init(statistics: [DestinationStatistics]) {
        let board = Board(statistics: statistics)
        self.board = board
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "KeyFrameKit.DestinationStatusLine"))
        timer.setEventHandler { board.draw() }
        timer.schedule(deadline: .now() + .milliseconds(250), repeating: .milliseconds(500))
        timer.resume()
    }

    /// Keeps the media time sent (called on the pump's thread).
    func update(_ progress: MediaProgress) {
        board.state.withLock { $0.progress = progress }
    }

    /// Stops the timer and ends the line.
    func finish() {
        timer.cancel()
        let drew = board.state.withLock { state -> Bool in
            state.ended = true
            return state.drew
        }
        if drew { Terminal.error("\n") }
    }
}
