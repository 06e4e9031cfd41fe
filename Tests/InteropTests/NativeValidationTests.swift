import Foundation
import Testing
import TestSupport

/// `keyframe validate` on MP3, FLAC and Ogg Opus: our files and those of LAME (through FFmpeg),
/// `flac` and `opusenc` pass; a LAME tag whose frame count is off, a FLAC file whose STREAMINFO
/// MD5 is not its samples', and an Ogg page whose granule position is not its packets' are each
/// an error naming where; an MP3 without a LAME tag is a warning.
@Suite(.blocking) struct NativeValidationTests {
    /// `bytes` with the Ogg page CRC of the page at `start` (of `length` bytes) computed again.
    static func recomputingOggCRC(_ bytes: inout [UInt8], page start: Int, length: Int) {
        for index in 22..<26 { bytes[start + index] = 0 }
        var crc: UInt32 = 0
        for byte in bytes[start..<start + length] {
            crc ^= UInt32(byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        }
        for index in 0..<4 { bytes[start + 22 + index] = UInt8((crc >> (8 * UInt32(index))) & 0xFF) }
    }

    /// Opus in MP4: the edit's media_time is dOps' pre-skip; FFmpeg's own `.mp4` passes, and an
    /// edit that starts at 0 (the pre-skip heard) is an error naming both.
    @Test func opusInMP4EditIsCheckedAgainstThePreSkip() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        try CodecInteropTests.makeWAV(rate: 48000, channels: 2, seconds: 2, to: path("in.wav"))
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", path("in.wav"), "-o", path("ours.m4a"), "--codec", "opus"])
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", path("in.wav"), "-c:a", "libopus", path("ffmpeg.mp4")])
        let clean = try ExternalTool.run(try ExternalTool.keyframe, ["validate", path("ours.m4a"), path("ffmpeg.mp4")])
        #expect(clean.status == 0, "\(clean.standardOutput)\(clean.standardError)")
        var movie = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path("ours.m4a"))))
        let elst = try #require(movie.firstRange(of: Array("elst".utf8))).lowerBound
        let wide = movie[elst + 4] == 1
        let mediaTime = elst + 4 + 4 + 4 + (wide ? 8 : 4)
        for index in mediaTime..<(mediaTime + (wide ? 8 : 4)) { movie[index] = 0 }
        try Data(movie).write(to: URL(fileURLWithPath: path("heard.m4a")))
        let heard = try ExternalTool.run(try ExternalTool.keyframe, ["validate", path("heard.m4a")])
        #expect(heard.status == 1)
        #expect(heard.standardOutput.contains("elst against dOps: pre-skip: expected media_time 312 (dOps' pre-skip 312), found media_time 0"),
                "\(heard.standardOutput)")
    }

    @Test func ourFilesAndTheReferenceToolsPassAndDamageIsNamed() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        try CodecInteropTests.makeWAV(rate: 44100, channels: 2, seconds: 3, to: path("in.wav"))
        for name in ["ours.mp3", "ours.flac", "ours.opus"] {
            try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", path("in.wav"), "-o", path(name)])
        }
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", path("in.wav"), "-c:a", "libmp3lame", path("lame.mp3")])
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", path("in.wav"), "-c:a", "libmp3lame", "-write_xing", "0",
                                            path("untagged.mp3")])
        try ExternalTool.succeed("flac", ["--silent", "--force", "-o", path("reference.flac"), path("in.wav")])
        // LAME's own tags: mono at 22.05 kHz and 64 kb/s (its tag CRC covers the bytes before it,
        // not 190; at 32 kb/s the frame is too small and LAME leaves the tag out),
        // and frames with CRCs (`-p`: the Info header still right after the side information).
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", path("in.wav"), "-ac", "1", "-ar", "22050", path("mono.wav")])
        try ExternalTool.succeed("lame", ["--quiet", "-m", "m", "-b", "64", path("mono.wav"), path("lame-mono.mp3")])
        try ExternalTool.succeed("lame", ["--quiet", "-p", path("in.wav"), path("lame-crc.mp3")])
        let lame = try ExternalTool.run(try ExternalTool.keyframe, ["validate", path("lame-mono.mp3"), path("lame-crc.mp3")])
        #expect(lame.status == 0 && lame.standardOutput == "\(path("lame-mono.mp3")): ok\n\(path("lame-crc.mp3")): ok\n",
                "\(lame.standardOutput)\(lame.standardError)")
        let crcProbe = try ExternalTool.succeed(try ExternalTool.keyframe, ["probe", path("lame-crc.mp3")]).standardOutput
        #expect(crcProbe.contains("priming 1105"), "the LAME tag of a file with CRCs is read: \(crcProbe)")
        try ExternalTool.succeed("opusenc", ["--quiet", path("in.wav"), path("opusenc.opus")])
        let clean = try ExternalTool.run(try ExternalTool.keyframe, ["validate"] + ["ours.mp3", "ours.flac", "ours.opus", "lame.mp3",
                                                                                    "reference.flac", "opusenc.opus"].map(path))
        #expect(clean.status == 0, "\(clean.standardOutput)\(clean.standardError)")
        #expect(clean.standardOutput.split(separator: "\n").count == 6 && clean.standardOutput.split(separator: "\n").allSatisfy { $0.hasSuffix(": ok") },
                "\(clean.standardOutput)")

        // The LAME tag's frame count one short.
        var mp3 = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path("ours.mp3"))))
        let info = try #require(mp3.firstRange(of: Array("Info".utf8))).lowerBound
        mp3[info + 11] &-= 1
        try Data(mp3).write(to: URL(fileURLWithPath: path("bad.mp3")))
        // STREAMINFO's MD5 (its last 16 bytes, after `fLaC` and the block header) changed.
        var flac = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path("ours.flac"))))
        flac[8 + 18] ^= 0xFF
        try Data(flac).write(to: URL(fileURLWithPath: path("bad.flac")))
        // The fourth page's granule position 960 on, its CRC made right again.
        var ogg = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path("ours.opus"))))
        var start = 0
        for _ in 0..<3 { start += 27 + Int(ogg[start + 26]) + ogg[(start + 27)..<(start + 27 + Int(ogg[start + 26]))].reduce(0) { $0 + Int($1) } }
        let length = 27 + Int(ogg[start + 26]) + ogg[(start + 27)..<(start + 27 + Int(ogg[start + 26]))].reduce(0) { $0 + Int($1) }
        let granule = ogg[(start + 6)..<(start + 14)].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) } + 960
        for index in 0..<8 { ogg[start + 6 + index] = UInt8((granule >> (8 * UInt64(index))) & 0xFF) }
        Self.recomputingOggCRC(&ogg, page: start, length: length)
        try Data(ogg).write(to: URL(fileURLWithPath: path("bad.opus")))

        let damaged = try ExternalTool.run(try ExternalTool.keyframe, ["validate"] + ["bad.mp3", "bad.flac", "bad.opus", "untagged.mp3"].map(path))
        #expect(damaged.status == 1)
        let out = damaged.standardOutput
        #expect(out.contains("bad.mp3: error: frame 0 (Info): Xing frame count against the frames"), "\(out)")
        #expect(out.contains("bad.flac: error: STREAMINFO: MD5 of the samples against the decode"), "\(out)")
        #expect(out.contains("bad.opus: error: page 3 at byte \(start): granule position against the packets"), "\(out)")
        #expect(out.contains("untagged.mp3: warning: frame 0: Info frame (LAME tag)"), "\(out)")

        // Cut to two thirds: probe names the damage where our reader meets it, and for MP3 and
        // FLAC (whose length is declared up front) the readable length beside the declared one.
        for name in ["ours.mp3", "ours.flac", "ours.opus"] {
            let intact = try CaptureCheck.json(try ExternalTool.succeed(try ExternalTool.keyframe, ["probe", "--json", path(name)]), "probe")
            #expect((intact["damage"] as? [String]) == [] && intact["readableDuration"] == nil, "\(name): \(intact)")
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path(name)))
            try bytes.prefix(bytes.count * 2 / 3).write(to: URL(fileURLWithPath: path("short-" + name)))
            let short = try CaptureCheck.json(try ExternalTool.succeed(try ExternalTool.keyframe, ["probe", "--json", path("short-" + name)]), "probe")
            let damage = short["damage"] as? [String] ?? []
            #expect(damage.count == 1 && damage[0].contains("short-\(name)") && damage[0].contains("byte"), "\(name): \(damage)")
            guard name != "ours.opus" else { continue }
            let declared = try #require(short["duration"] as? Double), readable = try #require(short["readableDuration"] as? Double)
            #expect(abs(declared - 3) < 0.001 && readable > 1.5 && readable < 2.2, "\(name): \(declared) s declared, \(readable) s readable")
        }
    }
    /// 40 bytes garbled in the middle of an Ogg Opus and a FLAC file: our readers step over the
    /// page or frame to the next that checks, so a cut keeps every sample it can and exits 3
    /// naming the damage, probe names it, and a decode of the FLAC is a salvage (3), not a
    /// truncation (1).
    @Test(arguments: ["opus", "flac"])
    func damageInTheMiddleIsSteppedOverAndNamed(ext: String) throws {
        let scratch = try CodecInteropTests.scratchWAV(rate: 48000, channels: 2, seconds: 20)
        defer { scratch.remove() }
        func path(_ name: String) -> String { scratch.directory.appendingPathComponent(name).path }
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", scratch.wav, "-o", path("in.\(ext)")])
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path("in.\(ext)"))))
        for index in (bytes.count / 2)..<(bytes.count / 2 + 40) { bytes[index] ^= 0x5A }
        try Data(bytes).write(to: URL(fileURLWithPath: path("damaged.\(ext)")))
        let cut = try ExternalTool.run(try ExternalTool.keyframe, ["cut", path("damaged.\(ext)"), "-o", path("cut.\(ext)"),
                                                                   "--start", "1", "--end", "19", "--json"])
        #expect(cut.status == 3, "\(cut.standardError)")
        let report = try CaptureCheck.json(cut, "cut --json")
        #expect((report["damage"] as? [String])?.first?.contains("skipped to the next") == true, "\(report)")
        let ffprobe = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path("cut.\(ext)")])
        let seconds = try #require(Double(ffprobe.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)))
        // A page of Opus (about 1 s) or a frame of FLAC (85 ms) is lost; the rest is kept.
        #expect(seconds > 16.9 && seconds <= 18.001, "\(seconds) s of the 18 asked")
        let probe = try CaptureCheck.json(try ExternalTool.succeed(try ExternalTool.keyframe, ["probe", "--json", path("damaged.\(ext)")]), "probe")
        #expect((probe["damage"] as? [String])?.count == 1, "\(probe)")
        guard ext == "flac" else { return }
        let decode = try ExternalTool.run(try ExternalTool.keyframe, ["decode", path("damaged.flac"), "-o", path("damaged.wav")])
        #expect(decode.status == 3 && decode.standardError.contains("damaged"), "\(decode.standardError)")
    }
    /// What ordinary files hold is not damage: FFmpeg's LAME tag in an Info frame shorter than the
    /// 190 bytes its CRC covers (mono at 32 kb/s), and an APEv2 tag then an ID3v1 tag after the
    /// frames (MP3Gain's, foobar2000's). And a FLAC in MP4 at 96 kHz, whose sample entry cannot
    /// say the rate, probes at 96 kHz as ffprobe says.
    @Test func shortInfoFramesAPETagsAndHighRatesReadRight() throws {
        let scratch = try CodecInteropTests.scratchWAV(rate: 44100, channels: 2, seconds: 2)
        defer { scratch.remove() }
        func path(_ name: String) -> String { scratch.directory.appendingPathComponent(name).path }
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", scratch.wav, "-ac", "1", "-c:a", "libmp3lame", "-b:a", "32k", path("mono.mp3")])
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path("mono.mp3"))))
        // An APEv2 tag of one item ("Title" = "hello") with a header and a footer, then ID3v1.
        func le(_ value: Int) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
        let item = le(5) + le(0) + Array("Title".utf8) + [0] + Array("hello".utf8)
        func apeBlock(flags: Int) -> [UInt8] { Array("APETAGEX".utf8) + le(2000) + le(item.count + 32) + le(1) + le(flags) + [UInt8](repeating: 0, count: 8) }
        bytes += apeBlock(flags: 0xA000_0000) + item + apeBlock(flags: 0x8000_0000) + Array("TAG".utf8) + [UInt8](repeating: 0, count: 125)
        try Data(bytes).write(to: URL(fileURLWithPath: path("tagged.mp3")))
        let validate = try ExternalTool.run(try ExternalTool.keyframe, ["validate", path("mono.mp3"), path("tagged.mp3")])
        #expect(validate.status == 0 && validate.standardOutput == "\(path("mono.mp3")): ok\n\(path("tagged.mp3")): ok\n",
                "\(validate.standardOutput)\(validate.standardError)")
        let cut = try ExternalTool.run(try ExternalTool.keyframe, ["cut", path("tagged.mp3"), "-o", path("cut.mp3"), "--start", "0.5"])
        #expect(cut.status == 0, "\(cut.standardError)")

        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=duration=1:sample_rate=96000", path("high.wav")])
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", path("high.wav"), "-o", path("high.m4a"), "--codec", "flac"])
        let probe = try CaptureCheck.json(try ExternalTool.succeed(try ExternalTool.keyframe, ["probe", "--json", path("high.m4a")]), "probe")
        let track = try #require((probe["tracks"] as? [[String: Any]])?.first)
        #expect(track["sampleRate"] as? Int == 96000, "\(track)")
        // The folder, with no playlist: each MP3 and M4A on its own (the WAVs are not checked).
        let folder = try ExternalTool.run(try ExternalTool.keyframe, ["validate", scratch.directory.path])
        #expect(folder.status == 0 && folder.standardOutput == ["cut.mp3", "high.m4a", "mono.mp3", "tagged.mp3"].map { "\(path($0)): ok\n" }.joined(),
                "\(folder.standardOutput)\(folder.standardError)")
    }
    /// A FLAC file whose every frame fails its CRC-16: each frame is stepped over on its own (a
    /// frame is looked for no further than the longest its block can be, so no CRC that happens
    /// to match far away glues frames together), and probe names one damage event per frame.
    @Test func everyFrameDamagedIsSteppedOverFrameByFrame() throws {
        let scratch = try CodecInteropTests.scratchWAV(rate: 44100, channels: 2, seconds: 3)
        defer { scratch.remove() }
        let flac = scratch.directory.appendingPathComponent("in.flac").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", scratch.wav, "-o", flac])
        let packets = try ExternalTool.succeed("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "packet=pos,size",
                                                           "-of", "csv=p=0", flac]).standardOutput.split(separator: "\n")
            .map { $0.split(separator: ",").compactMap { Int($0) } }.filter { $0.count == 2 }
        #expect(packets.count == 33, "\(packets.count) frames")
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: flac)))
        // The last byte of each frame is the low byte of its CRC-16.
        for packet in packets { bytes[packet[0] + packet[1] - 1] ^= 0x01 }
        let damaged = scratch.directory.appendingPathComponent("damaged.flac").path
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        let probe = try CaptureCheck.json(try ExternalTool.succeed(try ExternalTool.keyframe, ["probe", "--json", damaged]), "probe")
        #expect(probe["damageCount"] as? Int == packets.count, "\(probe["damageCount"] ?? "-") events for \(packets.count) frames")
        #expect(probe["readableDuration"] as? Double == 0, "\(probe)")
        let validate = try ExternalTool.run(try ExternalTool.keyframe, ["validate", damaged])
        #expect(validate.status == 1, "\(validate.standardOutput)")
        // A last frame of 20 samples, then an ID3v1 tag: the frame's end is still found past
        // the tag, within the bound, and nothing is damage.
        let short = scratch.directory.appendingPathComponent("short.wav").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", scratch.wav, "-af", "atrim=end_sample=4116", short])
        let tagged = scratch.directory.appendingPathComponent("tagged.flac").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", short, "-o", tagged])
        #expect(try CodecInteropTests.packetDurations(tagged) == [4096, 20])
        try (Data(contentsOf: URL(fileURLWithPath: tagged)) + Data("TAG".utf8) + Data(count: 125)).write(to: URL(fileURLWithPath: tagged))
        let clean = try CaptureCheck.json(try ExternalTool.succeed(try ExternalTool.keyframe, ["probe", "--json", tagged]), "probe")
        #expect(clean["damageCount"] as? Int == 0, "\(clean)")
    }
}
