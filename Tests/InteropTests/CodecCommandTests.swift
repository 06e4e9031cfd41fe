import Foundation
import Testing
import TestSupport

/// Bad input to `keyframe encode` and `keyframe decode`: a clear error on stderr, a non-zero exit,
/// no crash, and nothing left under the output name.
@Suite(.blocking) struct CodecCommandTests {
    /// A 16-bit stereo 44.1 kHz WAV header with the given fields, followed by `payload` bytes.
    static func wav(channels: UInt16 = 2, rate: UInt32 = 44100, bits: UInt16 = 16, dataSize: UInt32, payload: Int) -> Data {
        func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> ($0 * 8)) } }
        func le16(_ v: UInt16) -> [UInt8] { [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)] }
        let align = channels * bits / 8
        var bytes = Array("RIFF".utf8) + le32(36 + dataSize) + Array("WAVEfmt ".utf8) + le32(16)
        bytes += le16(1) + le16(channels) + le32(rate) + le32(rate &* UInt32(align)) + le16(align) + le16(bits)
        bytes += Array("data".utf8) + le32(dataSize) + [UInt8](repeating: 0x11, count: payload)
        return Data(bytes)
    }

    static let cases: [(name: String, data: Data, message: String)] = [
        ("data-beyond-file", wav(dataSize: 1_000_000, payload: 4000), "data chunk declares 1000000 bytes"),
        ("zero-channels", wav(channels: 0, dataSize: 4000, payload: 4000), "channels"),
        ("absurd-rate", wav(rate: 4_000_000_000, dataSize: 4000, payload: 4000), "4000000000"),
        ("truncated-header", wav(dataSize: 4000, payload: 0).prefix(30), "WAV"),
        ("not-audio", Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }), "RIFF"),
        ("unsupported-rate", wav(rate: 44000, dataSize: 4000, payload: 4000), "unsupported sample rate 44000"),
    ]

    @Test(arguments: cases.map(\.name))
    func badWAVIsAClearErrorAndLeavesNothing(name: String) throws {
        let entry = try #require(Self.cases.first { $0.name == name })
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("\(name).wav")
        let output = directory.appendingPathComponent("out.aac")
        try entry.data.write(to: input)
        let result = try ExternalTool.run(try ExternalTool.keyframe, ["encode", input.path, "-o", output.path])
        #expect(result.status != 0)
        #expect(result.standardError.contains(entry.message), "stderr: \(result.standardError)")
        #expect(!result.standardError.contains("Fatal error"))
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0 != "\(name).wav" }
        #expect(left.isEmpty, "left behind: \(left)")
    }

    @Test func aCutRecordingEncodesWhenAskedTo() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("cut.wav")
        try Self.wav(dataSize: 1_000_000, payload: 40_000).write(to: input)
        let output = directory.appendingPathComponent("out.aac").path
        let result = try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", input.path, "-o", output, "--allow-truncated"])
        #expect(result.standardError.contains("warning"))
        #expect(FileManager.default.fileExists(atPath: output))
    }

    @Test func notAACIsAClearDecodeErrorAndLeavesNothing() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("noise.aac")
        try Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) & 0x7F }).write(to: input)
        let output = directory.appendingPathComponent("out.wav")
        let result = try ExternalTool.run(try ExternalTool.keyframe, ["decode", input.path, "-o", output.path])
        #expect(result.status != 0)
        #expect(result.standardError.contains("no AAC frames"), "stderr: \(result.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["noise.aac"])
    }

    @Test func rawPCMNeedsItsLayoutAndEncodesWithIt() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.pcm")
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=1",
                                            "-ac", "2", "-f", "f32le", input.path])
        let output = directory.appendingPathComponent("out.aac").path
        let missing = try ExternalTool.run(try ExternalTool.keyframe, ["encode", input.path, "-o", output])
        #expect(missing.status == 64 && missing.standardError.contains("--input-sample-rate"), "\(missing.standardError)")
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", input.path, "-o", output, "--sample-rate", "48000",
                                                             "--channels", "2", "--format", "f32le"])
        let peer = try ExternalTool.ffprobeAudio(output)
        #expect(peer.sampleRate == 48000 && peer.channels == 2)
        #expect(peer.packets == (48000 + 1024 + 1023) / 1024)
    }

    @Test func theBitrateIsCheckedBeforeAnyWork() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.wav")
        try Self.wav(dataSize: 4000, payload: 4000).write(to: input)
        let result = try ExternalTool.run(try ExternalTool.keyframe, ["encode", input.path, "-o", directory.appendingPathComponent("o.aac").path,
                                                                      "--bitrate", "2M"])
        #expect(result.status != 0)
        #expect(result.standardError.contains("out of range"), "stderr: \(result.standardError)")
    }
}
