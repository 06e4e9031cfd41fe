import Foundation
import KeyFrameKit
import SystemPackage
import Testing
import TestSupport

/// Where Firefox's MP4 parser (mp4parse-rust) reads a track or a value, `probe` and `demux` read
/// it too (issue 10, item 8). Each file is made by patching bytes of a file ffmpeg or
/// `keyframe encode` wrote; the tests assert on `probe --json`, on `demux` and on `decode`.
@Suite(.blocking) struct MP4BrowserParityTests {
    /// Two seconds of a 440 Hz tone, encoded by ffmpeg to AAC-LC in an M4A, or fragmented.
    static func ffmpegM4A(in directory: URL, name: String = "tone.m4a", movflags: String? = nil) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=2",
                                            "-ac", "2", "-c:a", "aac", "-b:a", "96k"]
                                            + (movflags.map { ["-movflags", $0] } ?? []) + [path])
        return path
    }

    static func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    static func write(_ bytes: [UInt8], _ directory: URL, _ name: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The offset of the first occurrence of `pattern` at or after `start`.
    static func find(_ pattern: [UInt8], in bytes: [UInt8], from start: Int = 0) throws -> Int {
        guard bytes.count >= pattern.count,
              let at = (start...(bytes.count - pattern.count)).first(where: { Array(bytes[$0..<($0 + pattern.count)]) == pattern }) else {
            throw ExternalTool.ToolFailure(description: "\(pattern) not found")
        }
        return at
    }

    /// The offset of the DecoderConfigDescriptor in the file's `esds` (FFmpeg writes 4-byte
    /// size fields: `04 80 80 80 size`).
    static func decoderConfigOffset(_ bytes: [UInt8]) throws -> Int {
        let esds = try find(Array("esds".utf8), in: bytes)
        return try find([0x04, 0x80, 0x80, 0x80], in: bytes, from: esds)
    }

    /// The file's `demux` output (ADTS), as bytes.
    static func demux(_ file: String, _ directory: URL, _ name: String) throws -> (bytes: [UInt8], standardError: String) {
        let output = directory.appendingPathComponent(name).path
        let result = try ExternalTool.succeed(try ExternalTool.keyframe, ["demux", file, "-o", output])
        return (try bytes(output), result.standardError)
    }

    // MARK: - A DecoderConfigDescriptor whose length overstates its contents

    @Test(arguments: [2, 5, 6])
    func anOverstatedDecoderConfigDescriptorIsReadAndReported(extra: Int) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let original = try Self.ffmpegM4A(in: directory)
        var bytes = try Self.bytes(original)
        let config = try Self.decoderConfigOffset(bytes)
        let declared = Int(bytes[config + 4])
        #expect(bytes[config + 18] == 0x05, "FFmpeg's DecoderSpecificInfo follows the 13 fixed bytes")
        bytes[config + 4] = UInt8(declared + extra)   // the length now takes `extra` bytes of the SLConfigDescriptor
        let patched = try Self.write(bytes, directory, "overstated.m4a")

        // probe reads the track as it reads the unpatched file, and reports the damage.
        let before = try ExternalTool.probeJSON(original)
        let report = try ExternalTool.probeJSON(patched)
        let track = try #require((report["tracks"] as? [[String: Any]])?.first)
        let originalTrack = try #require((before["tracks"] as? [[String: Any]])?.first)
        #expect(track["codec"] as? String == "aac" && track["profile"] as? String == "LC", "\(track)")
        #expect(track["sampleRate"] as? Int == 44100 && track["channels"] as? Int == 2)
        #expect(track["sampleCount"] as? Int == originalTrack["sampleCount"] as? Int)
        #expect(track["damage"] == nil)
        #expect(report["duration"] as? Double == before["duration"] as? Double)
        let damage = report["damage"] as? [String] ?? []
        let sentence = try #require(damage.first, "probe reports the overstated length")
        #expect(sentence.hasPrefix("moov/trak[1]/mdia/minf/stbl/stsd/mp4a/esds: DecoderConfigDescriptor at byte \(config)"), "\(sentence)")
        #expect(sentence.contains("declares \(declared + extra) bytes"), "\(sentence)")
        #expect(before["damageCount"] as? Int == 0)

        // The library carries it as a typed event.
        let file = try MP4File(source: try FileByteSource(path: FilePath(patched)))
        let event = try #require(file.damage.first)
        #expect(event.kind == .overstatedLength(declared: Int64(declared + extra), used: Int64(declared)))
        #expect(event.offset == Int64(config))
        #expect(event.message == sentence)

        // demux gives the unpatched file's packets, byte for byte, and warns about the damage.
        let reference = try Self.demux(original, directory, "original.aac")
        let demuxed = try Self.demux(patched, directory, "patched.aac")
        #expect(!demuxed.bytes.isEmpty && demuxed.bytes == reference.bytes)
        #expect(demuxed.standardError.contains("DecoderConfigDescriptor at byte \(config)"), "\(demuxed.standardError)")
    }

    // MARK: - An init segment: moov with mvex, no moof

    @Test func anFFmpegInitSegmentIsFragmented() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fragmented = try Self.ffmpegM4A(in: directory, name: "frag.mp4", movflags: "frag_keyframe+empty_moov")
        let bytes = try Self.bytes(fragmented)
        let moof = try Self.find(Array("moof".utf8), in: bytes) - 4
        let initSegment = try Self.write(Array(bytes[..<moof]), directory, "init.mp4")

        let report = try ExternalTool.probeJSON(initSegment)
        #expect(report["fragmented"] as? Bool == true, "\(report)")
        let track = try #require((report["tracks"] as? [[String: Any]])?.first)
        #expect(track["codec"] as? String == "aac" && track["profile"] as? String == "LC" && track["sampleCount"] as? Int == 0, "\(track)")
        #expect(report["damageCount"] as? Int == 0)
        let file = try MP4File(source: try FileByteSource(path: FilePath(initSegment)))
        #expect(file.isFragmented && file.movieExtends != nil && file.fragmentCount == 0)

        // demux reads it: no packets, no error.
        let demuxed = try Self.demux(initSegment, directory, "init.aac")
        #expect(demuxed.bytes.isEmpty)

        // mvex with every sample in moov (FFmpeg's frag_keyframe without empty_moov, one
        // fragment) is not fragmented, as Firefox reads it.
        let single = try Self.ffmpegM4A(in: directory, name: "single.mp4", movflags: "frag_keyframe")
        let singleFile = try MP4File(source: try FileByteSource(path: FilePath(single)))
        #expect(singleFile.movieExtends != nil && singleFile.fragmentCount == 0)
        #expect(try ExternalTool.probeJSON(single)["fragmented"] as? Bool == false)
    }

    @Test func theInitSegmentsDurationIsTheMehdFragmentDuration() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("tone.wav").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=2", "-ac", "2", wav])
        let encoded = directory.appendingPathComponent("fragmented.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", encoded, "--fragmented"])
        var bytes = try Self.bytes(encoded)
        bytes = Array(bytes[..<(try Self.find(Array("moof".utf8), in: bytes) - 4)])

        // mvhd's duration is zeroed, and mehd says 3.5 s: the duration can only come from mehd.
        let mvhd = try Self.find(Array("mvhd".utf8), in: bytes) + 4
        let version = bytes[mvhd]
        let timescaleAt = mvhd + (version == 1 ? 20 : 12)
        let timescale = bytes[timescaleAt..<(timescaleAt + 4)].reduce(0) { $0 << 8 | Int($1) }
        let durationWidth = version == 1 ? 8 : 4
        bytes.replaceSubrange((timescaleAt + 4)..<(timescaleAt + 4 + durationWidth), with: [UInt8](repeating: 0, count: durationWidth))
        let mehd = try Self.find(Array("mehd".utf8), in: bytes) + 4
        let mehdWidth = bytes[mehd] == 1 ? 8 : 4
        let fragmentDuration = timescale * 7 / 2
        bytes.replaceSubrange((mehd + 4)..<(mehd + 4 + mehdWidth),
                              with: (0..<mehdWidth).reversed().map { UInt8(truncatingIfNeeded: fragmentDuration >> (8 * $0)) })
        let initSegment = try Self.write(bytes, directory, "init.m4a")

        let report = try ExternalTool.probeJSON(initSegment)
        #expect(report["fragmented"] as? Bool == true)
        #expect(report["duration"] as? Double == 3.5, "\(report)")
        #expect(report["damageCount"] as? Int == 0)
        let file = try MP4File(source: try FileByteSource(path: FilePath(initSegment)))
        #expect(file.movieExtends?.fragmentDuration == UInt64(fragmentDuration))
        #expect(file.fragmentDurationSeconds == 3.5)
        let text = try ExternalTool.succeed(try ExternalTool.keyframe, ["probe", initSegment]).standardOutput
        #expect(text.contains("fragmented, 3.500000 s"), "\(text)")
        #expect(try Self.demux(initSegment, directory, "init.aac").bytes.isEmpty)
    }

    // MARK: - Codecs libavcodec cannot decode

    /// The M4A with its 5-byte AudioSpecificConfig replaced by `config` (zero-padded).
    static func patchedConfig(_ original: String, _ config: [UInt8], _ directory: URL, _ name: String) throws -> String {
        var bytes = try Self.bytes(original)
        let info = try Self.find([0x05, 0x80, 0x80, 0x80, 0x05], in: bytes, from: try Self.decoderConfigOffset(bytes))
        bytes.replaceSubrange((info + 5)..<(info + 10), with: config + [UInt8](repeating: 0, count: 5 - config.count))
        return try Self.write(bytes, directory, name)
    }

    @Test(arguments: [
        // 11111 001010 (42), 44100 Hz, stereo: xHE-AAC.
        ([0xF9, 0x48, 0x40] as [UInt8], "xHE-AAC", "xHE-AAC (USAC, audio object type 42) cannot be decoded: libavcodec"),
        // 11111 000100 (36), 44100 Hz, stereo: ALS.
        ([0xF8, 0x88, 0x40] as [UInt8], "ALS", "ALS (audio object type 36) cannot be decoded"),
    ])
    func decodeNamesTheCodecAndProfileItCannotDecode(config: [UInt8], profile: String, message: String) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try Self.patchedConfig(try Self.ffmpegM4A(in: directory), config, directory, "patched.m4a")

        let track = try #require((try ExternalTool.probeJSON(file)["tracks"] as? [[String: Any]])?.first)
        #expect(track["profile"] as? String == profile && track["sampleRate"] as? Int == 44100 && track["channels"] as? Int == 2, "\(track)")

        let wav = directory.appendingPathComponent("out.wav").path
        let result = try ExternalTool.run(try ExternalTool.keyframe, ["decode", file, "-o", wav])
        #expect(result.status != 0)
        #expect(result.standardError.contains(message), "\(result.standardError)")
        #expect(!result.standardError.contains("FFmpeg error"), "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: wav))
        // ffmpeg cannot decode it either.
        let ffmpeg = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", file, directory.appendingPathComponent("ff.wav").path])
        #expect(ffmpeg.status != 0)
    }

    @Test func decodeNamesAnMp4aObjectTypeIndicationThatIsNotAAC() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var bytes = try Self.bytes(try Self.ffmpegM4A(in: directory))
        bytes[try Self.decoderConfigOffset(bytes) + 5] = 0xE1   // objectTypeIndication 0x40 → 0xE1 (QCELP)
        let file = try Self.write(bytes, directory, "qcelp.m4a")
        let wav = directory.appendingPathComponent("out.wav").path
        // Our reader refuses it and says why; libavformat reads it (issue 20: an input our readers
        // refuse but libavformat reads goes to libavformat), so the refusal is a warning.
        let result = try ExternalTool.run(try ExternalTool.keyframe, ["decode", file, "-o", wav])
        let ffmpeg = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", file, directory.appendingPathComponent("ff.wav").path])
        #expect(result.status == ffmpeg.status, "keyframe: \(result.standardError); ffmpeg: \(ffmpeg.standardError)")
        #expect(result.standardError.contains("QCELP (mp4a, object type indication 0xE1) cannot be decoded"), "\(result.standardError)")
        #expect(FileManager.default.fileExists(atPath: wav) == (result.status == 0))
    }
}
