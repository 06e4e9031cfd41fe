import Foundation
import MediaCore
import Publishing
import Testing
import TestSupport

/// Publishing to a real nginx-rtmp through the whole chain (`LiveDestination`'s thread, SwiftNIO's
/// `TCPConnection`, `RTMPSession`), AAC frames written in real time: what nginx records decodes
/// without a warning to the last sample; a server killed mid-stream and started again gets the
/// rest, announced afresh and on the same sample clock; a name in use is a permanent refusal in
/// nginx's words; a title update goes through while live.
@Suite("RTMP publishing", .blocking, .serialized)
struct RTMPPublishingTests {
    /// One AAC frame at 48 kHz, in seconds.
    static let frameSeconds = 1024.0 / 48_000

    /// A stream key that is not a word of any message: it must never show.
    static func secretKey() -> String { "key-\(UUID().uuidString.prefix(8).lowercased())-secret" }

    /// What `ffmpeg -v warning` decodes from `path` as s16le, and what it said.
    static func decode(_ path: String) throws -> (bytes: Int, warnings: String) {
        let decode = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", path, "-f", "s16le", "-"])
        return (decode.outputData.count, (decode.status == 0 ? "" : "ffmpeg exited \(decode.status)\n") + decode.standardError)
    }

    /// The presentation times, in seconds, of the packets ffprobe reads from `path`.
    static func packetTimes(_ path: String) throws -> [Double] {
        let probe = try Subprocess.succeed("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "packet=pts_time",
                                                       "-of", "csv=p=0", path])
        return probe.standardOutput.split(whereSeparator: \.isNewline).compactMap { Double($0.split(separator: ",").first ?? "") }
    }

    @Test("The whole chain against nginx-rtmp: the recording is clean AAC, every frame of it, and the key never shows")
    func recordsEveryFrame() throws {
        let server = try NginxRTMPServer()
        let directory = try PublishingFixture.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let frames = try PublishingFixture.frames(seconds: 4, in: directory)
        let key = Self.secretKey()
        let destination = try PublishingDestination.parse(server.url(key: key))
        #expect(destination.maskedURL == "rtmp://127.0.0.1:\(server.port)/live/****")
        var sink = LiveDestination(destination)
        sink.announce(bitrate: 128_000)
        try PublishingFixture.play(frames, into: &sink)
        try sink.finish()
        let statistics = sink.statistics.snapshot
        #expect(statistics.framesSent == Int64(frames.count))
        #expect(statistics.framesDropped == 0)
        #expect(statistics.reconnects == 0)
        #expect(statistics.state == .finished)
        #expect(statistics.bytesSent > Int64(frames.count) * 100)
        #expect(statistics.lastError == nil, "\(statistics.lastError ?? "")")
        #expect(!statistics.destination.contains(key) && statistics.destination.contains("****"), "\(statistics.destination)")

        let (log, quitCleanly) = server.stop()
        #expect(quitCleanly, "nginx did not quit on SIGQUIT:\n\(log)")
        #expect(server.errors.isEmpty, "nginx: \(server.errors)")
        let recordings = server.recordings(of: key)
        try #require(recordings.count == 1, "recordings: \(recordings)")
        let recording = recordings[0].path
        let probe = try Subprocess.run("ffprobe", ["-v", "warning", "-show_entries", "stream=codec_name,sample_rate,channels",
                                                   "-of", "csv=p=0", recording])
        #expect(probe.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "aac,48000,2")
        #expect(probe.standardError.isEmpty, "ffprobe: \(probe.standardError)")
        let decoded = try Self.decode(recording)
        #expect(decoded.warnings.isEmpty, "ffmpeg: \(decoded.warnings)")
        // Every frame, to the last: 1024 samples × 2 channels × 2 bytes each (within one frame).
        #expect(abs(decoded.bytes - frames.count * 4096) <= 4096, "decoded \(decoded.bytes) bytes of \(frames.count) frames")
        #expect(try Self.packetTimes(recording).first == 0)
    }

    @Test("nginx killed mid-stream and started again: a reconnect, and the second recording decodes from its first packet on the same sample clock")
    func reconnectsAfterKill() throws {
        let server = try NginxRTMPServer()
        let directory = try PublishingFixture.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let frames = try PublishingFixture.frames(seconds: 7, in: directory)
        let key = Self.secretKey()
        var sink = LiveDestination(try PublishingDestination.parse(server.url(key: key)),
                                   policy: ReconnectPolicy(initialDelay: .milliseconds(200), maximumDelay: .seconds(1)))
        let killedAt = 90, restartedAt = 160
        var reconnectedAt: Int?
        let figures = sink.statistics
        try PublishingFixture.play(frames, into: &sink) { index in
            if index == killedAt { server.kill() }
            if index == restartedAt { try server.start() }
            if reconnectedAt == nil, figures.snapshot.reconnects > 0 { reconnectedAt = index }
        }
        try sink.finish()
        let statistics = sink.statistics.snapshot
        #expect(statistics.reconnects >= 1)
        #expect(statistics.state == .finished)
        #expect(statistics.framesSent + statistics.framesDropped == Int64(frames.count))
        // The outage (about 1.5 s) is shorter than the queue (5 s): what was written meanwhile is
        // sent after the reconnect; only what was in flight when the server died is lost.
        #expect(statistics.framesDropped < 10, "\(statistics)")
        #expect(statistics.lastError.map { !$0.contains(key) } ?? true, "\(statistics.lastError ?? "")")
        let reconnected = try #require(reconnectedAt, "no reconnect seen while publishing")
        #expect(reconnected > restartedAt)

        let (log, quitCleanly) = server.stop()
        #expect(quitCleanly, "nginx did not quit on SIGQUIT:\n\(log)")
        #expect(server.errors.isEmpty, "nginx: \(server.errors)")
        let recordings = server.recordings(of: key)
        try #require(recordings.count == 2, "recordings: \(recordings)")
        // The killed server's recording holds what it got before it died, from 0.
        let first = try Self.decode(recordings[0].path)
        let firstFrames = first.bytes / 4096
        #expect(try Self.packetTimes(recordings[0].path).first == 0)
        #expect(firstFrames > killedAt - 10 && firstFrames <= killedAt, "the killed server recorded \(firstFrames) frames")
        // The second decodes without a warning from its first packet: the sequence header was
        // sent again on the new connection (nginx records it before the first frame).
        let second = try Self.decode(recordings[1].path)
        #expect(second.warnings.isEmpty, "ffmpeg: \(second.warnings)")
        let secondFrames = second.bytes / 4096
        #expect(firstFrames + secondFrames + 10 >= frames.count, "\(firstFrames) + \(secondFrames) frames of \(frames.count)")
        // Its timestamps go on from the sample clock (nginx keeps the publisher's): the first is
        // where the first recording stopped (the frames in flight at the kill are lost), not 0,
        // and not the moment of the reconnect (the queued frames came first); the last is the
        // last frame's.
        let times = try Self.packetTimes(recordings[1].path)
        let firstTime = try #require(times.first)
        let stopped = Double(firstFrames) * Self.frameSeconds
        #expect(firstTime >= stopped - 0.002 && firstTime <= stopped + 10 * Self.frameSeconds,
                "the second recording starts at \(firstTime) s; the first stopped at \(stopped) s")
        #expect(firstTime < Double(reconnected) * Self.frameSeconds)
        let lastTime = try #require(times.last)
        #expect(abs(lastTime - Double(frames.count - 1) * Self.frameSeconds) < 0.002, "last packet at \(lastTime) s")
        #expect(times.count == secondFrames)
    }

    @Test("A second publisher of the same key is refused for good in nginx's words, already publishing; the first goes on")
    func alreadyPublishing() throws {
        let server = try NginxRTMPServer()
        defer { server.stop() }
        let directory = try PublishingFixture.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let frames = try PublishingFixture.frames(seconds: 3, in: directory)
        let key = Self.secretKey()
        var first = LiveDestination(try PublishingDestination.parse(server.url(key: key)))
        var second = LiveDestination(try PublishingDestination.parse(server.url(key: key)),
                                     policy: ReconnectPolicy(initialDelay: .milliseconds(100), maximumDelay: .milliseconds(200)))
        var secondError: PipelineError?
        try PublishingFixture.play(frames, into: &first) { index in
            guard index >= 20, index < 80, secondError == nil else { return }
            if index == 20 { try server.waitUntilPublished(key) }
            do { try second.write(frames[index]) } catch let error as PipelineError { secondError = error }
            if index == 79 {
                try RunningProcess.waitUntil("the second publisher's refusal", timeout: .seconds(10)) {
                    second.statistics.snapshot.state == .stopped
                }
            }
        }
        if secondError == nil {
            do { try second.write(frames[0]) } catch { secondError = error }
        }
        try first.finish()
        second.cancel()
        let refused = second.statistics.snapshot
        #expect(refused.state == .stopped)
        #expect(refused.reconnects == 0)
        #expect(refused.framesSent == 0)
        let message = try #require(refused.lastError)
        #expect(message.contains("already publishing"), "\(message)")
        #expect(!message.contains(key) && message.contains("****"), "\(message)")
        #expect(secondError?.code == .network)
        #expect(!(secondError.map { "\($0)" } ?? "").contains(key))
        let published = first.statistics.snapshot
        #expect(published.framesSent == Int64(frames.count))
        #expect(published.state == .finished)
        #expect(published.lastError == nil)
        #expect(server.publishCount(of: key) == 2)
    }

    @Test("A title update while live is taken: no error, nginx goes on, and a player that joins later reads the new title")
    func titleUpdate() throws {
        let server = try NginxRTMPServer()
        let directory = try PublishingFixture.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let frames = try PublishingFixture.frames(seconds: 4, in: directory)
        let key = Self.secretKey()
        var sink = LiveDestination(try PublishingDestination.parse(server.url(key: key)))
        try sink.receive(.metadata(StreamMetadata(tags: [(key: "title", value: "Morning Show")])))
        var player: RunningProcess?
        try PublishingFixture.play(Array(frames[..<50]), into: &sink)
        try sink.receive(.metadata(StreamMetadata(tags: [(key: "title", value: "Evening Show — ünïcode")])))
        try PublishingFixture.play(Array(frames[50...]), into: &sink) { index in
            if index == 20 {
                // ffprobe as a player: nginx hands a player that joins the stream's latest
                // onMetaData (`meta copy`). A shorter analysis than its 5 s default, so that it
                // is done long before the stream ends.
                player = try RunningProcess("ffprobe", ["-v", "warning", "-analyzeduration", "1000000", "-show_entries",
                                                        "format_tags=title:stream=codec_name,sample_rate,channels",
                                                        "-of", "default=nw=1", server.url(key: key)])
            }
        }
        let heard = try #require(player).wait(timeout: .seconds(10))
        try sink.finish()
        let statistics = sink.statistics.snapshot
        #expect(statistics.lastError == nil, "\(statistics.lastError ?? "")")
        #expect(statistics.framesSent == Int64(frames.count))
        #expect(statistics.reconnects == 0)
        #expect(statistics.state == .finished)
        #expect(heard.result.status == 0 && heard.result.standardError.isEmpty, "ffprobe: \(heard.result.standardError)")
        let lines = Set(heard.result.standardOutput.split(whereSeparator: \.isNewline).map(String.init))
        #expect(lines.isSuperset(of: ["codec_name=aac", "sample_rate=48000", "channels=2", "TAG:title=Evening Show — ünïcode"]), "\(lines)")

        let (log, quitCleanly) = server.stop()
        #expect(quitCleanly, "nginx did not quit on SIGQUIT:\n\(log)")
        #expect(server.errors.isEmpty, "nginx: \(server.errors)")
        let recording = try #require(server.recordings(of: key).first).path
        let decoded = try Self.decode(recording)
        #expect(decoded.warnings.isEmpty, "ffmpeg: \(decoded.warnings)")
        #expect(abs(decoded.bytes - frames.count * 4096) <= 4096, "decoded \(decoded.bytes) bytes of \(frames.count) frames")
    }
}
