import Foundation
import MediaCore
import Publishing
import Testing
import TestSupport

/// Publishing to a real icecast2 (run as `nobody` on a loopback port): what a listener gets
/// decodes, refusals are permanent and said in words, a restarted server gets the rest.
@Suite("Icecast publishing", .blocking, .serialized)
struct IcecastPublishingTests {
    @Test("The server takes our ADTS byte for byte as ffmpeg writes it; a listener of the mount gets AAC ffprobe reads")
    func listenerDecodes() throws {
        let server = try IcecastServer(dumpedMounts: ["/live.aac"])
        let directory = try PublishingFixture.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let frames = try PublishingFixture.frames(seconds: 4, in: directory)
        let destination = try PublishingDestination.parse("icecast://source:\(server.password)@127.0.0.1:\(server.port)/live.aac")
        #expect(!destination.maskedURL.contains(server.password))
        var sink = LiveDestination(destination)
        sink.announce(bitrate: 128_000)
        let heard = directory.appendingPathComponent("heard.aac").path
        var listener: RunningProcess?
        try PublishingFixture.play(frames, into: &sink) { index in
            if index == 47 {
                listener = try RunningProcess("curl", ["-s", "--max-time", "30", "-o", heard, "http://127.0.0.1:\(server.port)/live.aac"])
            }
        }
        try sink.finish()
        let finished = try #require(listener).wait(timeout: .seconds(20))
        #expect(finished.result.status == 0 || finished.result.status == 18, "curl: \(finished.result.standardError)")
        let statistics = sink.statistics.snapshot
        #expect(statistics.framesSent == Int64(frames.count))
        #expect(statistics.framesDropped == 0)
        #expect(statistics.state == .finished)
        #expect(statistics.bytesSent > Int64(frames.count) * 7)
        // A listener joins at a buffer boundary of the server's, not a frame's: it reads AAC.
        let probe = try Subprocess.run("ffprobe", ["-v", "quiet", "-show_entries", "stream=codec_name,sample_rate,channels", "-of", "csv=p=0", heard])
        #expect(probe.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "aac,48000,2")
        // What the server took from us, from its first byte, is ffmpeg's own ADTS stream byte for
        // byte (our headers are the same as its), but for the last buffer icecast2 keeps back
        // when a source leaves (1364 bytes here with ffmpeg as the source too).
        try server.waitUntilSourceLeaves("/live.aac")
        let dump = server.dump(of: "/live.aac")
        let source = try Data(contentsOf: directory.appendingPathComponent("source-48000-2.aac"))
        #expect(dump.count > source.count - 4096)
        #expect(source.starts(with: dump))
    }

    @Test("A mount in use is a permanent refusal (403); the title shows in the server's status")
    func mountTakenAndTitle() throws {
        let server = try IcecastServer()
        let directory = try PublishingFixture.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let frames = try PublishingFixture.frames(seconds: 3, in: directory)
        let url = "icecast://source:\(server.password)@127.0.0.1:\(server.port)/radio.aac"
        var first = LiveDestination(try PublishingDestination.parse(url))
        try first.receive(.metadata(StreamMetadata(tags: [(key: "title", value: "Morning Show — ünïcode & more")])))
        var second = LiveDestination(try PublishingDestination.parse(url))
        var secondError: PipelineError?
        try PublishingFixture.play(frames, into: &first) { index in
            guard index >= 20, index < 60, secondError == nil else { return }
            do { try second.write(frames[index]) } catch let error as PipelineError { secondError = error }
            if index == 59 {
                try RunningProcess.waitUntil("the second source's refusal", timeout: .seconds(10)) {
                    second.statistics.snapshot.state == .stopped
                }
            }
        }
        let status = server.status()
        try first.finish()
        try? second.finish()
        #expect(status.contains("Morning Show"), "status: \(status)")
        let refused = second.statistics.snapshot
        #expect(refused.state == .stopped)
        #expect(refused.lastError?.contains("403") == true, "\(refused.lastError ?? "")")
        #expect(refused.lastError?.contains(server.password) == false)
        #expect(first.statistics.snapshot.framesSent == Int64(frames.count))
    }

    @Test("A server killed mid-stream and started again gets the rest after a reconnect")
    func reconnectsAfterRestart() throws {
        let server = try IcecastServer(dumpedMounts: ["/live.aac"])
        let directory = try PublishingFixture.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let frames = try PublishingFixture.frames(seconds: 8, in: directory)
        let destination = try PublishingDestination.parse("icecast://source:\(server.password)@127.0.0.1:\(server.port)/live.aac")
        var sink = LiveDestination(destination, policy: ReconnectPolicy(initialDelay: .milliseconds(200), maximumDelay: .seconds(1)))
        let heard = directory.appendingPathComponent("after.aac").path
        var listener: RunningProcess?
        try PublishingFixture.play(frames, into: &sink) { index in
            if index == 60 { server.kill() }
            if index == 110 { try server.start() }
            if index == 250 {
                listener = try RunningProcess("curl", ["-s", "--max-time", "30", "-o", heard, "http://127.0.0.1:\(server.port)/live.aac"])
            }
        }
        try sink.finish()
        _ = try #require(listener).wait(timeout: .seconds(20))
        let statistics = sink.statistics.snapshot
        #expect(statistics.reconnects >= 1)
        #expect(statistics.state == .finished)
        #expect(statistics.framesSent + statistics.framesDropped == Int64(frames.count))
        #expect(statistics.framesDropped < Int64(frames.count) / 2)
        let probe = try Subprocess.run("ffprobe", ["-v", "quiet", "-show_entries", "stream=codec_name,sample_rate,channels", "-of", "csv=p=0", heard])
        #expect(probe.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "aac,48000,2")
        // The restarted server's dump holds what came after the reconnect: a run of the source's
        // frames, starting on a frame (the new request announces the stream afresh).
        try server.waitUntilSourceLeaves("/live.aac")
        let dump = server.dump(of: "/live.aac")
        let source = try Data(contentsOf: directory.appendingPathComponent("source-48000-2.aac"))
        #expect(dump.count > 100 * 300)
        #expect(dump.first == 0xFF)
        #expect(source.range(of: dump) != nil)
    }

    @Test("icecasts:// over TLS: sent with the server's authority given; refused for good, in words, without it")
    func overTLS() throws {
        let server = try IcecastServer(dumpedMounts: ["/tls.aac"], tls: true)
        let directory = try PublishingFixture.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let frames = try PublishingFixture.frames(seconds: 2, in: directory)
        let destination = try PublishingDestination.parse("icecasts://source:\(server.password)@localhost:\(server.port)/tls.aac")
        var trusted = LiveDestination(destination, trustRoots: server.certificate.path)
        try PublishingFixture.play(frames, into: &trusted)
        try trusted.finish()
        #expect(trusted.statistics.snapshot.framesSent == Int64(frames.count))
        try server.waitUntilSourceLeaves("/tls.aac")
        let source = try Data(contentsOf: directory.appendingPathComponent("source-48000-2.aac"))
        let dump = server.dump(of: "/tls.aac")
        // Over TLS icecast2 keeps back more of the end (4324 bytes here, with FFmpeg as the
        // source too: its TLS reads are 4096 bytes).
        #expect(dump.count > source.count - 8192)
        #expect(source.starts(with: dump))

        var untrusted = LiveDestination(destination)
        try? PublishingFixture.play(Array(frames.prefix(40)), into: &untrusted)
        try? untrusted.finish()
        let refused = untrusted.statistics.snapshot
        #expect(refused.state == .stopped)
        #expect(refused.reconnects == 0)
        #expect(refused.lastError?.contains("certificate is not trusted") == true, "\(refused.lastError ?? "")")
    }

    @Test("A wrong password is a permanent refusal in words, with no password in it")
    func wrongPassword() throws {
        let server = try IcecastServer()
        let directory = try PublishingFixture.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let frames = try PublishingFixture.frames(seconds: 1, in: directory)
        let destination = try PublishingDestination.parse("icecast://source:not-the-password@127.0.0.1:\(server.port)/live.aac")
        var sink = LiveDestination(destination)
        var thrown: PipelineError?
        do {
            try PublishingFixture.play(frames, into: &sink)
        } catch let error as PipelineError {
            thrown = error
        }
        try? sink.finish()
        let statistics = sink.statistics.snapshot
        #expect(statistics.state == .stopped)
        #expect(statistics.reconnects == 0)
        let message = try #require(statistics.lastError)
        #expect(message.contains("401"))
        #expect(message.contains("password"))
        #expect(!message.contains("not-the-password"))
        #expect(thrown?.code == .network)
    }
}
