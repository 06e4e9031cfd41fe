import Foundation
import Testing
import TestSupport

/// Issue 24: `keyframe publish` and `record --publish` against real servers on loopback.
@Suite("publish and record --publish", .blocking, .serialized)
struct PublishCommandTests {
    /// `keyframe ARGS` with `environment` added, within `timeout`.
    static func keyframe(_ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(90)) throws -> Subprocess.Result {
        try Subprocess.run(try ExternalTool.keyframe, arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                           timeout: timeout)
    }

    @Test("publish sends an AAC file as it is, paced, and says what each destination did in --json")
    func publishCopiesAAC() throws {
        let server = try IcecastServer(dumpedMounts: ["/copy.aac"])
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.aac").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=330:sample_rate=44100:duration=2", "-ac", "2", "-c:a", "aac", "-b:a", "96k", input])
        let started = ContinuousClock.now
        let result = try Self.keyframe(["publish", input, "icecast://source:\(server.password)@127.0.0.1:\(server.port)/copy.aac", "--json"])
        let elapsed = CaptureCheck.seconds(ContinuousClock.now - started)
        try #require(result.status == 0, "publish: \(result.standardError)")
        #expect(elapsed >= 1.8, "a 2 s file took \(elapsed) s: not paced by its sample clock")
        let report = try CaptureCheck.json(result, "publish --json")
        #expect(report["copied"] as? Bool == true)
        let destination = try #require((report["destinations"] as? [[String: Any]])?.first)
        #expect(destination["state"] as? String == "finished")
        #expect(destination["framesDropped"] as? Int == 0)
        #expect(destination["reconnects"] as? Int == 0)
        #expect((destination["destination"] as? String)?.contains(server.password) == false)
        // What the server took is the input's ADTS, byte for byte (icecast2 keeps its last buffer back).
        try server.waitUntilSourceLeaves("/copy.aac")
        let dump = server.dump(of: "/copy.aac")
        let source = try Data(contentsOf: URL(fileURLWithPath: input))
        #expect(dump.count > source.count - 4096)
        #expect(source.starts(with: dump))
        #expect(destination["framesSent"] as? Int == (try Self.adtsFrameCount(source)))
    }

    @Test("One encoder per distinct bitrate: URL#bitrate= gives a destination its own")
    func bitratePerDestination() throws {
        let server = try IcecastServer(dumpedMounts: ["/low.aac", "/high.aac"])
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("noise.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=color=pink:sample_rate=48000:duration=3", "-ac", "2", input])
        let base = "icecast://source:\(server.password)@127.0.0.1:\(server.port)"
        let result = try Self.keyframe(["publish", input, "\(base)/low.aac#bitrate=48k", "\(base)/high.aac", "--bitrate", "160k", "--json"])
        try #require(result.status == 0, "publish: \(result.standardError)\n\(server.diagnosis)")
        let report = try CaptureCheck.json(result, "publish --json")
        #expect(report["bitrates"] as? [Int] == [48_000, 160_000])
        let destinations = try #require(report["destinations"] as? [[String: Any]])
        #expect(destinations.map { $0["bitrate"] as? Int } == [48_000, 160_000])
        try server.waitUntilSourceLeaves("/low.aac")
        try server.waitUntilSourceLeaves("/high.aac")
        let low = server.dump(of: "/low.aac"), high = server.dump(of: "/high.aac")
        // Each mount got its own encoding: 3 s at 48k and at 160k, ADTS headers included.
        #expect(abs(Double(low.count) * 8 / 3 - 48_000) < 12_000, "\(low.count) bytes")
        #expect(abs(Double(high.count) * 8 / 3 - 160_000) < 30_000, "\(high.count) bytes")
        #expect(try Self.adtsFrameCount(low) > 130 && (try Self.adtsFrameCount(high)) > 130)
    }

    @Test("record --publish: a dead destination beside a live one leaves the local file frame-exact")
    func recordWithDeadAndLiveDestinations() throws {
        let server = try IcecastServer(dumpedMounts: ["/rec.aac"])
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let rate = 48_000
        let input = CaptureCheck.tone(frames: 3 * rate, rate: rate, frequencies: [440, 660])
        let raw = directory.appendingPathComponent("in.raw").path
        try CaptureCheck.bytes(input).write(to: URL(fileURLWithPath: raw))
        let configuration = try CaptureCheck.alsaConfiguration(in: directory, input: raw)
        let output = directory.appendingPathComponent("out.m4a").path
        let deadPort = try LocalPort.freeTCP()
        let result = try Self.keyframe(["record", output, "--duration", "2", "--device", "kf_in", "--alsa-config", configuration,
                                        "--sample-rate", "\(rate)", "--json", "--publish-queue", "30",
                                        "--publish", "env:KF_TEST_ICECAST", "--publish", "rtmp://127.0.0.1:\(deadPort)/live/secret-key"],
                                       environment: ["KF_TEST_ICECAST": "icecast://source:\(server.password)@127.0.0.1:\(server.port)/rec.aac"])
        try #require(result.status == 0, "record: \(result.standardError)")
        #expect(!result.standardOutput.contains(server.password) && !result.standardError.contains(server.password))
        #expect(!result.standardOutput.contains("secret-key") && !result.standardError.contains("secret-key"))
        // The file: exactly the frames asked for, decodable without a warning.
        let stream = try CaptureCheck.ffprobeStream(output)
        #expect(stream.durationTS == 2 * rate)
        #expect(try CaptureCheck.ffmpegErrors(output).isEmpty)
        let report = try CaptureCheck.json(result, "record --json")
        let destinations = try #require(report["destinations"] as? [[String: Any]])
        try #require(destinations.count == 2)
        #expect(destinations[0]["state"] as? String == "finished")
        #expect(destinations[0]["framesDropped"] as? Int == 0)
        #expect(destinations[1]["state"] as? String == "abandoned")
        #expect(destinations[1]["framesSent"] as? Int == 0)
        #expect((destinations[1]["lastError"] as? String)?.contains("cannot connect") == true, "\(destinations[1])")
        // The live destination got every frame the file has (ADTS, one encoder for both).
        try server.waitUntilSourceLeaves("/rec.aac")
        let dump = server.dump(of: "/rec.aac")
        #expect(try Self.adtsFrameCount(dump) >= (destinations[0]["framesSent"] as? Int ?? 0) - 8)
    }

    @Test("publish --loop joins the passes sample to sample: no click at the seams, timestamps rising")
    func loopWithoutClick() throws {
        let server = try IcecastServer(dumpedMounts: ["/loop.aac"])
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // 1 s of a 480 Hz sine at 48 kHz: 480 whole periods, so pass after pass is one sine. A
        // loop that left a gap (priming, padding, a frame of silence) or restarted a frame
        // would put a step in it: a click.
        let rate = 48_000
        let input = directory.appendingPathComponent("tone.wav").path
        try CaptureCheck.writeWAV(CaptureCheck.tone(frames: rate, rate: rate, frequencies: [480, 480], peakDBFS: -6), rate: rate, channels: 2,
                                  to: input)
        let result = try Self.keyframe(["publish", input, "icecast://source:\(server.password)@127.0.0.1:\(server.port)/loop.aac",
                                        "--loop", "--duration", "3.5", "--json"])
        try #require(result.status == 0, "publish --loop: \(result.standardError)")
        let report = try CaptureCheck.json(result, "publish --json")
        #expect(report["passes"] as? Int == 4)
        #expect(report["copied"] as? Bool == false)
        try server.waitUntilSourceLeaves("/loop.aac")
        let dump = directory.appendingPathComponent("loop.aac")
        try server.dump(of: "/loop.aac").write(to: dump)
        let samples = try CaptureCheck.ffmpegSamples(dump.path, in: directory)
        let left = CaptureCheck.channel(samples, 0, of: 2)
        #expect(left.count > 3 * rate)
        // The largest second difference: a sine of amplitude a at f has a·(2πf/rate)² ≈ 0.002
        // here; a step at a seam would be of the order of a (0.5).
        var largest = 0.0
        for index in 2048..<(left.count - 2048) {
            largest = max(largest, abs(left[index + 1] - 2 * left[index] + left[index - 1]))
        }
        #expect(largest < 0.02, "a step of \(largest) in the looped sine")
    }

    @Test("A bad destination is an error before capture starts, and the output is not created")
    func badDestinationsStopEarly() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("never.m4a").path
        let cases: [(String, String)] = [
            ("rtmpx://host/app/key", "unknown scheme"),
            ("icecast://source@127.0.0.1:8000/mount", "no source password"),
            ("rtmp://127.0.0.1/app", "stream key"),
            ("icecast://source:hunter22@no-such-host.invalid/mount", "does not resolve"),
            ("env:KF_NOT_SET_ANYWHERE", "not set"),
        ]
        for (url, words) in cases {
            let result = try Self.keyframe(["record", output, "--duration", "1", "--device", "kf_in", "--publish", url])
            #expect(result.status != 0, "\(url)")
            #expect(result.standardError.contains(words), "\(url): \(result.standardError)")
            #expect(!result.standardError.contains("hunter22"))
            #expect(!FileManager.default.fileExists(atPath: output))
        }
    }

    /// The ADTS frames in `data` (a whole stream, or a prefix of one).
    static func adtsFrameCount(_ data: Data) throws -> Int {
        let bytes = [UInt8](data)
        var position = 0
        var count = 0
        while position + 7 <= bytes.count, bytes[position] == 0xFF, bytes[position + 1] & 0xF0 == 0xF0 {
            let length = Int(bytes[position + 3] & 0x03) << 11 | Int(bytes[position + 4]) << 3 | Int(bytes[position + 5]) >> 5
            guard length >= 7, position + length <= bytes.count else { break }
            position += length
            count += 1
        }
        return count
    }
}
