import Foundation
import Testing
import TestSupport

/// `keyframe publish --codec mp3|opus` to icecast2: the mount serves MP3 as `audio/mpeg` and Opus
/// in Ogg as `audio/ogg`; FFmpeg, listening on the mount while the source plays, decodes the codec
/// with the title set (for MP3 the admin update, which icecast2's status shows; for Ogg the
/// comment header of the stream, which FFmpeg reads). A destination that cannot carry a codec is
/// refused, naming both.
@Suite(.blocking, .serialized) struct IcecastCodecsTests {
    @Test(arguments: [("mp3", "mp3", "audio/mpeg"), ("opus", "opus", "audio/ogg")])
    func publishesToIcecastAndAListenerDecodesIt(codec: String, ffprobeName: String, contentType: String) throws {
        let mount = "/live.\(codec == "mp3" ? "mp3" : "opus")"
        let server = try IcecastServer(dumpedMounts: [mount])
        defer { server.stop() }
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try CodecInteropTests.makeWAV(rate: 44100, channels: 2, seconds: 20, to: wav)
        let url = "icecast://source:\(server.password)@127.0.0.1:\(server.port)\(mount)"
        let publisher = try RunningProcess(try ExternalTool.keyframe, ["publish", wav, url, "--codec", codec, "--bitrate", "96k",
                                                                       "--title", "Harbour Radio live", "--json"])
        defer { publisher.stop() }
        try RunningProcess.waitUntil("the source on \(mount)", timeout: .seconds(60)) {
            server.status().contains("\"listenurl\":\"http://127.0.0.1:\(server.port)\(mount)\"")
        }
        // A listener: FFmpeg reads four seconds of the mount as it plays.
        let heard = directory.appendingPathComponent("heard.wav").path
        let listener = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", "http://127.0.0.1:\(server.port)\(mount)",
                                                       "-t", "4", heard])
        #expect(listener.status == 0, "\(listener.standardError)")
        let decoded = try CodecInteropTests.wavPayload(heard)
        #expect(decoded.count >= 4 * (codec == "opus" ? 48000 : 44100) * 4 * 9 / 10, "the listener decoded \(decoded.count) bytes")
        let status = server.status()
        #expect(status.contains("\"server_type\":\"\(contentType)\""), "\(status)")
        if codec == "mp3" {
            #expect(status.contains("\"title\":\"Harbour Radio live\""), "\(status)")
        }
        let probe = try ExternalTool.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name:stream_tags=title:format_tags=title",
                                                     "-of", "compact", "http://127.0.0.1:\(server.port)\(mount)"])
        #expect(probe.standardOutput.contains("codec_name=\(ffprobeName)"), "\(probe.standardOutput)\(probe.standardError)")
        if codec == "opus" {
            #expect(probe.standardOutput.lowercased().contains("title=harbour radio live"), "\(probe.standardOutput)")
        }
        #expect(publisher.send(SIGINT))
        let finished = try publisher.wait(timeout: .seconds(60))
        #expect(finished.result.status == 0, "\(finished.result.standardError)")
        let report = try CaptureCheck.json(finished.result, "publish --json")
        let destination = try #require((report["destinations"] as? [[String: Any]])?.first)
        #expect((destination["framesSent"] as? Int ?? 0) > 100, "\(destination)")
        // What the mount took reads as the codec from its first byte.
        try server.waitUntilSourceLeaves(mount)
        let dump = directory.appendingPathComponent("dump.\(codec)").path
        try server.dump(of: mount).write(to: URL(fileURLWithPath: dump))
        let dumped = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", dump])
        #expect(dumped.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == ffprobeName)
    }

    @Test func aDestinationThatCannotCarryTheCodecIsRefused() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try CodecInteropTests.makeWAV(rate: 44100, channels: 2, seconds: 0.5, to: wav)
        let run = try ExternalTool.run(try ExternalTool.keyframe, ["publish", wav, "rtmp://127.0.0.1:9/live/key", "--codec", "mp3"])
        #expect(run.status != 0)
        #expect(run.standardError.contains("rtmp carries aac, not mp3"), "\(run.standardError)")
    }
}
