import Foundation
import KeyFrameKit
import Testing

/// The README's and the DocC article's publishing example, compiled here so that it stays true;
/// and the parts of it that run without a device.
@Suite("The publishing example")
struct PublishingExampleTests {
    /// The example, as printed (never called: it needs a sound card and a server).
    static func example() throws {
        // Record 30 s to a gapless M4A and, from the same encoder, to an Icecast mount.
        var options = try RecordingOptions(outputPath: "show.m4a", frameLimit: 30 * 44_100)
        options.destinations = [try PublishingDestination.parse(
            "env:RADIO_URL", environment: { ProcessInfo.processInfo.environment[$0] })]   // icecast://source:…@host:8000/live.aac
        options.publishTitle = "Morning show"
        let recording = try LiveEncoding(recording: options)
        try recording.start()
        while !recording.job.wait(timeout: .seconds(1)) {
            for figures in recording.destinations.map(\.snapshot) {
                print(figures.destination, figures.state, figures.framesSent, figures.framesDropped)
            }
        }
        let summary = RecordingSummary(options, of: recording, summary: try recording.finish())
        print(summary.seconds, summary.destinations.map(\.state))
    }

    /// The article's second example (never called: it needs a server).
    static func fileExample() throws {
        let publication = try LivePublication(options: .init(
            input: "show.m4a", destinations: [try PublishingDestination.parse("rtmp://127.0.0.1/live/show")]))
        let summary = try publication.run()
        print(summary.copied, summary.destinations.map(\.framesSent))
    }

    @Test("Destinations from the environment, a file's line and a fragment's bitrate; secrets masked")
    func destinationForms() throws {
        let environment = ["RADIO_URL": "icecast://source:hunter2hunter@radio.example:8000/live.aac"]
        let fromEnvironment = try PublishingDestination.parse("env:RADIO_URL", environment: { environment[$0] })
        #expect(fromEnvironment.scheme == .icecast)
        #expect(fromEnvironment.maskedURL == "icecast://****@radio.example:8000/live.aac")
        let fromFile = try PublishingDestination.parse("file:/secret", readFile: { _ in "rtmp://live.example/app/sk_live_123?x=1\n" })
        #expect(fromFile.scheme == .rtmp)
        #expect(fromFile.maskedURL == "rtmp://live.example/app/****")
        #expect(!fromFile.description.contains("sk_live"))
        let srt = try PublishingDestination.parse("srt://ingest.example:9000?streamid=show&passphrase=0123456789ab#bitrate=64k")
        #expect(srt.bitrate == 64_000)
        #expect(!srt.maskedURL.contains("0123456789ab"))
        #expect(srt.port == 9000)
        #expect(throws: PublishingError.self) { try PublishingDestination.parse("env:NOT_SET", environment: { _ in nil }) }
        #expect(throws: PublishingError.self) { try PublishingDestination.parse("rtmp://host/app/key#bitrate=fast") }
        #expect(throws: PublishingError.self) { try PublishingDestination.parse("http://host/x") }
    }

    @Test("A URL that does not parse is named without its key, password or stream id", arguments: [
        "rmtp://live.example.com/app/live_SECRET", "rtmp://127.0.0.1:19350x/app/live_SECRET", "rtmp:///app/live_SECRET",
        "icecast://source:pa?SECRET@127.0.0.1:99999/live", "icecast://source:pa/SECRET@127.0.0.1:0/live",
        "srt://127.0.0.1:99999?streamid=SECRET", "rtmp://h/app/live_SECRET#bitrate=zz", "rtmp://h/app/SECRET#bitrate=",
        "icecast://source@h/SECRET", "srt://h:1?passphrase=SECRET&mode=listener", "rtmp://h/SECRET",
    ])
    func parseErrorsAreMasked(url: String) {
        #expect {
            try PublishingDestination.parse(url)
        } throws: { error in
            let message = "\(error)"
            return !message.contains("SECRET") && !message.isEmpty
        }
    }

    @Test("`#` belongs to the URL unless `#bitrate=` ends it: SRT's stream id syntax, a password")
    func fragments() throws {
        let srt = try PublishingDestination.parse("srt://127.0.0.1:9000?streamid=#!::r=live/SECRET,m=publish")
        #expect(srt.bitrate == nil && !srt.maskedURL.contains("SECRET"))
        let icecast = try PublishingDestination.parse("icecast://source:pa#SECRET@127.0.0.1:8000/live#bitrate=96k")
        #expect(icecast.bitrate == 96_000 && icecast.host == "127.0.0.1" && !icecast.maskedURL.contains("SECRET"))
    }

    @Test("Reconnect delays double from 0.5 s and stop at the cap")
    func backoff() {
        let policy = ReconnectPolicy(maximumDelay: .seconds(30))
        #expect((1...8).map { policy.delay(beforeAttempt: $0) } == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8),
                                                                    .seconds(16), .seconds(30), .seconds(30)])
        #expect(policy.delay(beforeAttempt: 1000) == .seconds(30))
    }

    @Test("A recording with destinations needs AAC; one without a file needs destinations")
    func recordingOptions() throws {
        var options = try RecordingOptions(outputPath: "take.wav")
        options.destinations = [try PublishingDestination.parse("icecast://source:pw@127.0.0.1:8000/x.aac")]
        #expect(throws: PipelineError.self) { try LiveEncoding(recording: options) }
        var none = try RecordingOptions(outputPath: "live", container: .adts)
        none.writesFile = false
        #expect(throws: PipelineError.self) { try LiveEncoding(recording: none) }
    }
}
