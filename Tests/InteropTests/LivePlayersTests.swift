import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Issue 24, "Players: FFmpeg, GStreamer and VLC read what the servers relay": `keyframe
/// publish` sends a looped tone (440 Hz left, 660 Hz right) to nginx-rtmp, icecast2 and an SRT
/// relay, and while it is live each player reads the stream back from the server and decodes
/// the tone, both channels, at 48 kHz.
///
/// - FFmpeg: `ffmpeg -i URL -t 2 -f s16le -`, nothing on stderr.
/// - GStreamer: `rtmpsrc ! flvdemux`, `souphttpsrc iradio-mode=true ! icydemux`,
///   `srtsrc ! tsdemux`, then `aacparse ! avdec_aac` into a file; exit 0, no ERROR or WARNING.
/// - VLC (`cvlc -q`, as `nobody`: it refuses to run as root) into its `afile` output, nothing
///   printed.
///
/// Each player has a time limit (it is killed past it and the test fails), and so has the
/// publisher, which is stopped with SIGINT once the players are done (`--duration` bounds it).
@Suite("Live players read what the servers relay", .blocking, .serialized)
struct LivePlayersTests {
    static let rate = 48_000
    static let frequencies = [440.0, 660.0]

    /// A 2 s WAV of the tone: whole periods of both, so the loop has no seam.
    static func input(in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("tone.wav").path
        try CaptureCheck.writeWAV(CaptureCheck.tone(frames: 2 * rate, rate: rate, frequencies: frequencies), rate: rate, channels: 2, to: path)
        return path
    }

    /// `keyframe publish INPUT URL --loop --duration 30 --json` in the background.
    static func publish(_ input: String, to url: String) throws -> RunningProcess {
        try RunningProcess(try ExternalTool.keyframe, ["publish", input, url, "--loop", "--duration", "30", "--json"])
    }

    /// Stops the publisher (SIGINT), and checks that it ended cleanly and that its destination
    /// sent everything, with no reconnect.
    static func stopPublishing(_ publisher: RunningProcess, _ what: String) throws {
        #expect(publisher.send(SIGINT), "\(what): the publisher ended before the players were done: \(publisher.standardErrorSoFar)")
        let finished = try publisher.wait(timeout: .seconds(20))
        try #require(finished.result.status == 0, "\(what): publish exited \(finished.result.status): \(finished.result.standardError)")
        let report = try CaptureCheck.json(finished.result, "publish --json")
        let destination = try #require((report["destinations"] as? [[String: Any]])?.first)
        #expect(destination["state"] as? String == "finished", "\(what): \(destination)")
        #expect(destination["framesDropped"] as? Int == 0, "\(what): \(destination)")
        #expect(destination["reconnects"] as? Int == 0, "\(what): \(destination)")
    }

    // MARK: - Players

    /// A player running, and where its audio goes.
    struct Player {
        enum Kind { case ffmpeg, gstreamer, vlc }
        var kind: Kind
        var name: String
        var process: RunningProcess
        /// The file it writes (GStreamer's raw s16le, VLC's WAV); FFmpeg writes to stdout.
        var output: String?
    }

    /// `ffmpeg -i URL -t 2 -f s16le -`.
    static func ffmpeg(_ url: String) throws -> Player {
        Player(kind: .ffmpeg, name: "FFmpeg \(url)", process: try RunningProcess("ffmpeg", ["-nostdin", "-v", "warning", "-i", url, "-t", "2", "-f", "s16le", "-"]))
    }

    /// `gst-launch-1.0 -q SOURCE… ! aacparse ! avdec_aac ! audioconvert ! S16LE 48 kHz stereo ! filesink`.
    static func gstreamer(_ source: [String], in directory: URL) throws -> Player {
        let raw = directory.appendingPathComponent("gst-\(UUID().uuidString).raw").path
        let pipeline = source + ["!", "aacparse", "!", "avdec_aac", "!", "audioconvert", "!", "audio/x-raw,format=S16LE,rate=\(rate),channels=2",
                                 "!", "filesink", "location=\(raw)"]
        return Player(kind: .gstreamer, name: "GStreamer \(source.joined(separator: " "))", process: try RunningProcess("gst-launch-1.0", ["-q"] + pipeline), output: raw)
    }

    /// `cvlc MRL` for 2 s into its `afile` output (a WAV), as `nobody` when the tests run as root,
    /// with its home in a directory of its own.
    ///
    /// Debian 12's VLC (vlc-plugin-base) has no RTMP or SRT access of its own: it reads `rtmp://`
    /// through libavformat (its `avio` access takes that scheme), and SRT as `avio://srt://…`.
    /// Its prefetch filter asks the access for 16 MiB at a time by default, and libavformat's
    /// `avio_read` waits until it has all of it (forever, from a live stream of 16 kB/s):
    /// `--prefetch-read-size` asks for 4 KiB instead.
    static func vlc(_ mrl: String, in directory: URL) throws -> Player {
        let home = directory.appendingPathComponent("vlc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
        let wav = home.appendingPathComponent("vlc.wav").path
        let vlc = ["cvlc", "-q", "--no-loop", "--play-and-exit", "--run-time", "2", "--prefetch-read-size=4096",
                   "--aout=afile", "--audiofile-file=\(wav)", mrl]
        let process = getuid() == 0
            ? try RunningProcess("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "env", "HOME=\(home.path)"] + vlc)
            : try RunningProcess("env", ["HOME=\(home.path)"] + vlc)
        return Player(kind: .vlc, name: "VLC \(mrl)", process: process, output: wav)
    }

    /// Waits for `player` (at most `timeout`) and checks what it decoded: exit 0, nothing said
    /// (FFmpeg) or no ERROR or WARNING (GStreamer), at least 1.5 s of the tone (2 s for FFmpeg,
    /// which was asked for exactly that), 440 Hz left and 660 Hz right. VLC, quiet, prints nothing.
    static func expectHeard(_ player: Player, timeout: Duration = .seconds(25)) throws {
        let finished = try player.process.wait(timeout: timeout)
        let result = finished.result
        try #require(result.status == 0 && finished.signal == nil,
                     "\(player.name) exited \(result.status) (signal \(finished.signal.map(String.init) ?? "none")): \(result.standardError)")
        var data: Data
        if let output = player.output {
            data = (try? Data(contentsOf: URL(fileURLWithPath: output))) ?? Data()
            if output.hasSuffix(".wav") {
                let chunk = try CaptureCheck.wavDataChunk(output)
                data = data.dropFirst(chunk.offset)
            }
        } else {
            data = result.outputData
        }
        switch player.kind {
        case .ffmpeg:
            #expect(result.standardError.isEmpty, "\(player.name): \(result.standardError)")
            #expect(abs(data.count - 2 * rate * 4) <= 4096, "\(player.name): \(data.count) bytes, not 2 s")
        case .gstreamer:
            let said = result.standardOutput + result.standardError
            #expect(!said.contains("ERROR") && !said.contains("WARNING"), "\(player.name): \(said)")
        case .vlc:
            // `-q` silences its messages (the D-Bus and hotkeys interfaces failing headless among
            // them); anything it still prints is worth reading.
            #expect(result.standardError.isEmpty && result.standardOutput.isEmpty, "\(player.name): \(result.standardOutput)\(result.standardError)")
        }
        let samples = CaptureCheck.samples(Data(data.prefix(data.count / 4 * 4)))
        let frames = samples.count / 2
        try #require(frames >= rate * 3 / 2, "\(player.name) decoded \(Double(frames) / Double(rate)) s")
        // A second from the middle: both channels carry their tone.
        let window = (frames - rate) / 2..<(frames + rate) / 2
        for (channel, expected) in frequencies.enumerated() {
            let signal = CaptureCheck.channel(samples, channel, of: 2)[window]
            let heard = CaptureCheck.frequency(signal, rate: rate)
            #expect(heard.map { abs($0 - expected) < 2 } == true, "\(player.name): channel \(channel) at \(heard.map { "\($0)" } ?? "no") Hz, not \(expected)")
            #expect(CaptureCheck.rmsDBFS(signal) > -20, "\(player.name): channel \(channel) at \(CaptureCheck.rmsDBFS(signal)) dBFS")
        }
    }

    // MARK: - Tests

    @Test("nginx-rtmp relays to FFmpeg, GStreamer's rtmpsrc and VLC", .hangGuard(minutes: 15))
    func rtmp() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try NginxRTMPServer()
        defer { server.stop() }
        let key = "players-\(UUID().uuidString.prefix(8))"
        let publisher = try Self.publish(try Self.input(in: directory), to: server.url(key: key))
        defer { publisher.stop() }
        try server.waitUntilPublished(key)
        let url = server.url(key: key)
        // rtmpsrc reads 4096 bytes at a time: 16 of them are 4 s of 128 kb/s.
        let players = [try Self.ffmpeg(url),
                       try Self.gstreamer(["rtmpsrc", "location=\(url)", "num-buffers=16", "!", "flvdemux"], in: directory),
                       try Self.vlc(url, in: directory)]
        for player in players { try Self.expectHeard(player) }
        try Self.stopPublishing(publisher, "rtmp")
        #expect(server.errors.isEmpty, "nginx: \(server.errors)")
    }

    @Test("icecast2 relays to FFmpeg, GStreamer's souphttpsrc ! icydemux and VLC", .hangGuard(minutes: 15))
    func icecast() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try IcecastServer()
        defer { server.stop() }
        let mount = "/players.aac"
        let publisher = try Self.publish(try Self.input(in: directory),
                                         to: "icecast://source:\(server.password)@127.0.0.1:\(server.port)\(mount)")
        defer { publisher.stop() }
        let url = "http://127.0.0.1:\(server.port)\(mount)"
        try RunningProcess.waitUntil("the source on \(mount)", timeout: .seconds(10)) {
            guard publisher.isRunning else { throw Subprocess.Failure(description: "publish exited: \(publisher.standardErrorSoFar)") }
            return server.status().contains("\"listenurl\":\"\(url)\"")
        }
        // souphttpsrc reads 4096 bytes at a time (after icecast2's 64 kB burst on connect).
        let players = [try Self.ffmpeg(url),
                       try Self.gstreamer(["souphttpsrc", "location=\(url)", "iradio-mode=true", "num-buffers=24", "!", "icydemux"], in: directory),
                       try Self.vlc(url, in: directory)]
        for player in players { try Self.expectHeard(player) }
        try Self.stopPublishing(publisher, "icecast")
    }

    @Test("An SRT relay (srt-live-transmit, listener to listener) serves FFmpeg, GStreamer's srtsrc and VLC", .hangGuard(minutes: 15))
    func srt() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let publishing = try LocalPort.freeUDP()
        var playing = try LocalPort.freeUDP()
        while playing == publishing { playing = try LocalPort.freeUDP() }
        // The publisher calls the first listener; players call the second, one at a time (its
        // listener takes one caller: "Listener's backlog exceeded" for a second), and it listens
        // again when a player leaves (-a:yes).
        let relay = try RunningProcess("srt-live-transmit", ["-a:yes", "srt://:\(publishing)?mode=listener", "srt://:\(playing)?mode=listener"])
        // srt-live-transmit, a child of Foundation's Process, holds the test runner's blocked
        // signals: SIGTERM would wait for the grace period. Nothing of its is read at the end.
        defer { relay.stop(grace: .zero) }
        let publisher = try Self.publish(try Self.input(in: directory), to: "srt://127.0.0.1:\(publishing)")
        defer { publisher.stop() }
        try RunningProcess.waitUntil("the publisher's SRT connection", timeout: .seconds(10)) {
            guard relay.isRunning else { throw Subprocess.Failure(description: "srt-live-transmit exited: \(relay.standardErrorSoFar)") }
            guard publisher.isRunning else { throw Subprocess.Failure(description: "publish exited: \(publisher.standardErrorSoFar)") }
            return relay.standardErrorSoFar.contains("Accepted SRT source connection")
        }
        let url = "srt://127.0.0.1:\(playing)"
        try Self.expectHeard(try Self.ffmpeg(url + "?mode=caller"))
        // srtsrc pushes one SRT payload (7 TS packets, about 80 ms of audio here) per buffer.
        try Self.expectHeard(try Self.gstreamer(["srtsrc", "uri=\(url)", "num-buffers=40", "!", "tsdemux"], in: directory))
        try Self.expectHeard(try Self.vlc("avio://" + url, in: directory))
        try Self.stopPublishing(publisher, "srt")
    }
}
