import Foundation
import MediaCore
import Publishing
import Testing
import TestSupport

/// Publishing MPEG-TS over SRT to srt-live-transmit: what arrives is a transport stream that
/// ffprobe, ffmpeg and GStreamer read without a warning, whole to its last frame; a listener
/// restarted mid-stream gets the rest, decodable from its first packet.
@Suite("SRT publishing", .blocking, .serialized)
struct SRTPublishingTests {
    @Test("Every frame arrives, the last ones too, in a transport stream peers read without a warning")
    func wholeStreamArrives() throws {
        let port = try LocalPort.freeUDP()
        let listener = try SRTListener.start(port: port)
        let directory = try PublishingFixture.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let frames = try PublishingFixture.frames(seconds: 3, in: directory)
        var sink = LiveDestination(try PublishingDestination.parse("srt://127.0.0.1:\(port)?latency=120"))
        try PublishingFixture.play(frames, into: &sink)
        try sink.finish()
        _ = try listener.wait(timeout: .seconds(10))
        let received = directory.appendingPathComponent("received.ts")
        try listener.standardOutputSoFar.write(to: received)
        let statistics = sink.statistics.snapshot
        #expect(statistics.framesSent == Int64(frames.count))
        #expect(statistics.state == .finished)
        #expect(statistics.bytesSent == Int64(listener.standardOutputSoFar.count))
        let probe = try Subprocess.run("ffprobe", ["-v", "warning", "-select_streams", "a:0", "-show_entries", "stream=codec_name,sample_rate,channels", "-of", "csv=p=0",
                                                   received.path])
        // ffprobe lists the stream under its program and on its own: the same each time.
        #expect(Set(probe.standardOutput.split(whereSeparator: \.isNewline).map(String.init)) == ["aac,48000,2"])
        #expect(probe.standardError.isEmpty, "ffprobe: \(probe.standardError)")
        let decode = try Subprocess.run("ffmpeg", ["-v", "warning", "-i", received.path, "-f", "s16le", "-"])
        #expect(decode.standardError.isEmpty, "ffmpeg: \(decode.standardError)")
        // Every frame decoded, to the last: the end was delivered (SRT's linger), not dropped.
        #expect(decode.outputData.count == frames.count * 1024 * 4)
        let gstreamer = try Subprocess.run("gst-launch-1.0", ["-q", "filesrc", "location=\(received.path)", "!", "tsdemux", "!", "aacparse", "!",
                                                              "avdec_aac", "!", "fakesink"])
        #expect(gstreamer.status == 0)
        #expect(!gstreamer.standardError.contains("WARN") && !gstreamer.standardOutput.contains("WARN"), "\(gstreamer.standardError)")
    }

    @Test("A listener killed and started again gets the rest, decodable from its first packet")
    func reconnectsToRestartedListener() throws {
        let port = try LocalPort.freeUDP()
        var listener = try SRTListener.start(port: port)
        let directory = try PublishingFixture.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let frames = try PublishingFixture.frames(seconds: 12, in: directory)
        var sink = LiveDestination(try PublishingDestination.parse("srt://127.0.0.1:\(port)"),
                                   policy: ReconnectPolicy(initialDelay: .milliseconds(200), maximumDelay: .seconds(1)))
        try PublishingFixture.play(frames, into: &sink) { index in
            if index == 60 { listener.stop(grace: .zero) }
            if index == 80 { listener = try SRTListener.start(port: port) }
        }
        try sink.finish()
        let statistics = sink.statistics.snapshot
        // srt-live-transmit does not always exit after a caller that reconnected closes: what it
        // received is on its stdout either way.
        listener.stop(grace: .seconds(5))
        #expect(statistics.reconnects >= 1, "\(statistics)")
        #expect(statistics.framesSent + statistics.framesDropped == Int64(frames.count))
        let received = directory.appendingPathComponent("after.ts")
        try listener.standardOutputSoFar.write(to: received)
        let decode = try Subprocess.run("ffmpeg", ["-v", "warning", "-i", received.path, "-f", "s16le", "-"])
        #expect(decode.standardError.isEmpty, "ffmpeg: \(decode.standardError)")
        // SRT notices a peer gone only when it has heard nothing for its idle timeout (5 s);
        // what was sent meanwhile is lost with the old listener. The rest, from about 7 s into
        // the 12, arrives.
        #expect(decode.outputData.count > 140 * 1024 * 4)
    }
}
