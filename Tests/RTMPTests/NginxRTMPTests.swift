import AACBitstream
import Foundation
import MediaCore
import RTMP
import TestSupport
import Testing

/// A publisher: the state machine over a loopback socket.
struct SocketPublisher {
    var session: RTMPPublishSession
    let socket: LoopbackSocket
    var events: [RTMPSessionEvent] = []

    init(port: UInt16, key: String, audioSpecificConfig: [UInt8], metadata: RTMPStreamMetadata) throws {
        session = RTMPPublishSession(url: try RTMPURL("rtmp://127.0.0.1:\(port)/live/\(key)"),
                                     audioSpecificConfig: audioSpecificConfig, metadata: metadata)
        socket = try LoopbackSocket(port: port)
    }

    /// Runs the session until it publishes or fails (or 10 s pass).
    mutating func open() throws {
        try socket.send(session.start())
        let deadline = ContinuousClock.now + .seconds(10)
        while session.state != .publishing, session.state != .failed, ContinuousClock.now < deadline {
            guard let bytes = try socket.receive(timeout: .milliseconds(200)) else {
                throw LoopbackSocket.Failure(description: "the server closed the connection in state \(session.state)")
            }
            try exchange(bytes)
        }
    }

    /// Feeds the server's bytes to the session and sends its answer.
    mutating func exchange(_ bytes: [UInt8]) throws {
        let answer = try session.receive(bytes)
        if !answer.isEmpty { try socket.send(answer) }
        events += session.takeEvents()
    }

    /// Sends a frame, after answering what the server sent meanwhile.
    mutating func send(frame: ArraySlice<UInt8>, sampleTime: Int64) throws {
        if let available = try socket.receive(timeout: .zero), !available.isEmpty { try exchange(available) }
        try socket.send(session.audio(frame: frame, sampleTime: sampleTime))
    }

    /// FCUnpublish, deleteStream, then the end of our side; waits for the server to close.
    mutating func finish() throws {
        try socket.send(session.finish())
        socket.shutdownWriting()
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline, try socket.receive(timeout: .milliseconds(100)) != nil {}
    }
}

@Suite("Against nginx-rtmp", .blocking, .serialized)
struct NginxRTMPTests {
    /// 4 s of a 440 Hz sine, stereo AAC-LC at 128 kb/s, made by ffmpeg, as ADTS frames.
    static func sineFrames() throws -> (config: AudioSpecificConfig, frames: [ADTSFrame]) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("keyframe-rtmp-\(UUID().uuidString).aac").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Subprocess.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=4",
                                          "-ac", "2", "-c:a", "aac", "-b:a", "128k", path])
        var reader = ADTSReader(source: ArrayByteSource(Array(try Data(contentsOf: URL(fileURLWithPath: path)))))
        var frames: [ADTSFrame] = []
        while let frame = try reader.nextFrame() { frames.append(frame) }
        let header = try #require(frames.first?.header)
        let config = try AudioSpecificConfig(objectType: header.audioObjectType, sampleRate: try #require(header.sampleRate),
                                             channelCount: Int(header.channelConfiguration))
        return (config, frames)
    }

    @Test("a published AAC stream records as a clean FLV: aac, 44100 Hz, stereo, 4 s")
    func publishAndRecord() throws {
        let (config, frames) = try Self.sineFrames()
        let server = try NginxRTMPServer()
        var publisher = try SocketPublisher(port: UInt16(server.port), key: "sine", audioSpecificConfig: try config.serialized(),
                                            metadata: RTMPStreamMetadata(sampleRate: 44100, channelCount: 2, bitrate: 128_000, title: "Sine"))
        try publisher.open()
        #expect(publisher.events == [.handshakeDone, .connected, .streamCreated(1), .publishing])
        for (index, frame) in frames.enumerated() {
            try publisher.send(frame: frame.payload, sampleTime: Int64(index) * 1024)
        }
        try publisher.finish()
        let (log, quitCleanly) = server.stop()
        #expect(quitCleanly, "nginx did not quit on SIGQUIT:\n\(log)")
        #expect(!log.contains("[error]") && !log.contains("[crit]") && !log.contains("[alert]"), "nginx logged errors:\n\(log)")

        let recordings = server.recordings(of: "sine")
        #expect(recordings.count == 1)
        let recording = try #require(recordings.first).path
        let probe = try Subprocess.succeed("ffprobe", ["-v", "error", "-show_streams", "-show_entries", "format=duration", "-of", "json", recording])
        #expect(probe.standardError.isEmpty, "ffprobe: \(probe.standardError)")
        let json = try #require(try JSONSerialization.jsonObject(with: probe.outputData) as? [String: Any])
        let streams = try #require(json["streams"] as? [[String: Any]])
        #expect(streams.count == 1)
        #expect(streams.first?["codec_name"] as? String == "aac")
        #expect(streams.first?["sample_rate"] as? String == "44100")
        #expect(streams.first?["channels"] as? Int == 2)
        let duration = Double(try #require((json["format"] as? [String: Any])?["duration"] as? String)) ?? 0
        let expected = Double(frames.count * 1024) / 44100
        #expect(abs(duration - expected) < 0.05, "recorded \(duration) s, published \(expected) s")

        let decode = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", recording, "-f", "null", "-"])
        #expect(decode.status == 0)
        #expect(decode.standardError.isEmpty, "ffmpeg: \(decode.standardError)")
        // Every frame was recorded: the decoded sample count is the frames'.
        let count = try Subprocess.succeed("ffprobe", ["-v", "error", "-count_packets", "-show_entries", "stream=nb_read_packets",
                                                       "-of", "csv=p=0", recording])
        #expect(Int(count.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) == frames.count)
    }

    @Test("publishing a name twice: the second is refused in nginx's words, already publishing")
    func alreadyPublishing() throws {
        let (config, frames) = try Self.sineFrames()
        let server = try NginxRTMPServer()
        defer { server.stop() }
        let metadata = RTMPStreamMetadata(sampleRate: 44100, channelCount: 2, bitrate: 128_000)
        var first = try SocketPublisher(port: UInt16(server.port), key: "taken", audioSpecificConfig: try config.serialized(), metadata: metadata)
        try first.open()
        #expect(first.session.state == .publishing)
        try first.send(frame: frames[0].payload, sampleTime: 0)

        var second = try SocketPublisher(port: UInt16(server.port), key: "taken", audioSpecificConfig: try config.serialized(), metadata: metadata)
        try second.open()
        #expect(second.session.state == .failed)
        guard case .error(let status)? = second.events.last else {
            Issue.record("no refusal: \(second.events)")
            return
        }
        #expect(status.code == "NetStream.Publish.BadName")
        #expect(status.isRefusal)
        #expect(status.explanation == "the server refused the stream name: already publishing")
        try first.finish()
    }
}
