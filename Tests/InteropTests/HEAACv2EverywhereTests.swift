import Foundation
import KeyFrameKit
import Testing
import TestSupport

/// Issue 26, items 3 and the ladder target: HE-AAC v2 (`--profile he-aac-v2`) and `--profile
/// auto` everywhere AAC goes, judged by FFmpeg, an icecast2 server and `keyframe validate`.
///
/// - `package --bitrates 32k:auto,64k:auto,128k:auto` (and `--profile auto --bitrates
///   32k,64k,128k`, and the profiles named, `32k:he-aac-v2,64k:he-aac,128k:lc`) of a stereo input: `CODECS` and the MPD's `codecs` say `mp4a.40.29`,
///   `mp4a.40.5` and `mp4a.40.2`; `EXTINF` is the same in all three (6 s rounded to 6.016 s,
///   141 frames of 2048 samples); `keyframe validate` is silent; FFmpeg plays each rendition
///   without a warning; every v2 segment alone (after its init segment) is HE-AACv2 48 kHz
///   stereo in ffprobe and its first packet carries an SBR header (as every v1 segment's).
/// - `encode` and `convert --profile auto` pick v2, v1 or LC by the bitrate and the output's
///   channels (after `--channels`), as ffprobe reads the result.
/// - A mono input with `he-aac-v2` is refused in the encoder's words by `convert` (one thread
///   and several), `package` (one rendition and a ladder), `publish` and `record`, leaving
///   nothing behind.
/// - `record --profile he-aac-v2` (the ALSA file plugin) writes an HE-AACv2 M4A and a live
///   rendition whose every segment starts with an SBR header.
/// - `publish --profile he-aac-v2` to icecast2: the server's dump is HE-AACv2 (implicit, in
///   ADTS); `publish --profile auto` gives each destination the profile of its bitrate.
@Suite(.blocking, .serialized) struct HEAACv2EverywhereTests {
    /// The `CODECS` attribute of the master playlist's entry for `uri`.
    static func codecs(in master: String, of uri: String) -> String? {
        let lines = master.split(separator: "\n").map(String.init)
        guard let index = lines.firstIndex(of: uri), index > 0 else { return nil }
        return lines[index - 1].split(separator: ",").first { $0.hasPrefix("CODECS=") }.map(String.init)
    }

    /// The `codecs` of each DASH `Representation` of `mpd`, by the directory of its
    /// `initialization` (`32k`, …).
    static func dashCodecs(_ mpd: String) -> [String: String] {
        var found: [String: String] = [:]
        for representation in mpd.components(separatedBy: "<Representation ").dropFirst() {
            let body = representation.components(separatedBy: "</Representation>")[0]
            func attribute(_ name: String) -> String? {
                guard let range = body.range(of: " \(name)=\"") else { return nil }
                return String(body[range.upperBound...].prefix { $0 != "\"" })
            }
            guard let codecs = attribute("codecs"), let initialization = attribute("initialization") else { continue }
            found[String(initialization.prefix { $0 != "/" })] = codecs
        }
        return found
    }

    /// `init` + `segment` as one file, to be read alone.
    static func alone(initSegment: String, segment: String, in directory: URL) throws -> String {
        let joined = directory.appendingPathComponent("alone-\(UUID().uuidString).mp4")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: initSegment))
        bytes.append(try Data(contentsOf: URL(fileURLWithPath: segment)))
        try bytes.write(to: joined)
        return joined.path
    }

    @Test(arguments: [["--bitrates", "32k:auto,64k:auto,128k:auto"], ["--profile", "auto", "--bitrates", "32k,64k,128k"],
                      ["--bitrates", "32k:he-aac-v2,64k:he-aac,128k:lc"]])
    func autoLadderGivesV2V1AndLC(ladder: [String]) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = try HEAACEverywhereTests.input(in: directory)
        let out = directory.appendingPathComponent("out").path
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["package", wav, "--hls", out, "--dash"] + ladder)
        #expect(run.standardOutput.contains("segment duration 6.016000 s instead of 6.000 s"), "says the duration changed: \(run.standardOutput)")

        let master = try String(contentsOfFile: out + "/master.m3u8", encoding: .utf8)
        let expected = ["32k": "mp4a.40.29", "64k": "mp4a.40.5", "128k": "mp4a.40.2"]
        for (rendition, codecs) in expected {
            #expect(Self.codecs(in: master, of: "\(rendition)/index.m3u8") == "CODECS=\"\(codecs)\"", "\(rendition) in the master: \(master)")
        }
        let mpd = try String(contentsOfFile: out + "/manifest.mpd", encoding: .utf8)
        #expect(Self.dashCodecs(mpd) == expected, "MPD: \(mpd)")

        let playlists = ["32k", "64k", "128k"].map { out + "/\($0)/index.m3u8" }
        let durations = try playlists.map(HEAACEverywhereTests.extinf)
        #expect(durations[0].count == 2 && durations.allSatisfy { $0 == durations[0] }, "EXTINF: \(durations)")
        #expect(durations[0].first == "#EXTINF:6.016000,", "\(durations[0])")
        try ValidationCheck.expectSilent([out], "package \(ladder.joined(separator: " ")) --dash")

        for playlist in playlists {
            let play = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", playlist, "-f", "null", "-"])
            #expect(play.status == 0 && play.standardError.isEmpty, "ffmpeg plays \(playlist): \(play.standardError)")
        }
        // Each HE-AAC segment alone: its profile, 48 kHz stereo, and an SBR header first (for
        // v2 the PS header rides in the same frames).
        for (rendition, profile) in [("32k", "HE-AACv2"), ("64k", "HE-AAC")] {
            let initSegment = out + "/\(rendition)/init.mp4"
            for segment in try HEAACEverywhereTests.segments(out + "/\(rendition)/index.m3u8") {
                let peer = try ExternalTool.ffprobeAudio(try Self.alone(initSegment: initSegment, segment: segment, in: directory))
                #expect(peer.profile == profile && peer.sampleRate == 48000 && peer.channels == 2, "\(segment): ffprobe \(peer)")
                #expect(try HEAACEverywhereTests.firstPacketCarriesSBRHeader(initSegment: initSegment, segment: segment),
                        "\(segment): no SBR header first")
            }
        }
        let lc = try ExternalTool.ffprobeAudio(out + "/128k/index.m3u8")
        #expect(lc.profile == "LC" && lc.channels == 2, "128k: \(lc)")
    }

    /// A stereo WAV (48 kHz, 2 s of pink noise) and a 5.1 one, for the profile picks.
    static func inputs(in directory: URL) throws -> (stereo: String, surround: String) {
        let stereo = directory.appendingPathComponent("stereo.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=color=pink:sample_rate=48000:duration=2:amplitude=0.3", "-ac", "2", stereo])
        let surround = directory.appendingPathComponent("surround.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=color=pink:sample_rate=48000:duration=2:amplitude=0.3",
                             "-af", "aformat=channel_layouts=5.1", surround])
        return (stereo, surround)
    }

    /// `encode` and `convert --profile auto` choose by the bitrate and the output's channels:
    /// stereo v2 at 40k and below, v1 to 64k, LC above and without a bitrate; mono (a
    /// `--channels 1` downmix) v1 to 32k, LC above; 5.1 LC where stereo would be v1.
    @Test func autoPicksByBitrateAndChannels() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (stereo, surround) = try Self.inputs(in: directory)
        let cases: [(command: String, input: String, extra: [String], profile: String, channels: Int, says: String)] = [
            ("encode", stereo, ["--bitrate", "32k"], "HE-AACv2", 2, "(HE-AAC v2)"),
            ("encode", stereo, ["--bitrate", "48k"], "HE-AAC", 2, "(HE-AAC)"),
            ("encode", stereo, ["--bitrate", "96k"], "LC", 2, ""),
            ("encode", stereo, [], "LC", 2, ""),
            ("convert", stereo, ["--bitrate", "40k"], "HE-AACv2", 2, "(HE-AAC v2)"),
            ("convert", stereo, ["--bitrate", "64k"], "HE-AAC", 2, "(HE-AAC)"),
            ("convert", stereo, ["--bitrate", "65k"], "LC", 2, ""),
            ("convert", stereo, ["--bitrate", "32k", "--channels", "1"], "HE-AAC", 1, "(HE-AAC)"),
            ("convert", stereo, ["--bitrate", "40k", "--channels", "1"], "LC", 1, ""),
            ("convert", surround, ["--bitrate", "64k"], "LC", 6, ""),
            ("convert", stereo, ["--bitrate", "32k", "--threads", "2"], "HE-AACv2", 2, "(HE-AAC v2)"),
        ]
        for (index, item) in cases.enumerated() {
            let output = directory.appendingPathComponent("out\(index).m4a").path
            let what = "\(item.command) \(item.extra.joined(separator: " ")) --profile auto of \((item.input as NSString).lastPathComponent)"
            let run = try ExternalTool.run(try ExternalTool.keyframe, [item.command, item.input, "-o", output, "--profile", "auto"] + item.extra)
            #expect(run.status == 0, "\(what): \(run.standardError)")
            guard run.status == 0 else { continue }
            #expect(item.says.isEmpty ? !run.standardOutput.contains("(HE-AAC") : run.standardOutput.contains("AAC packets \(item.says) at"),
                    "\(what) says \(run.standardOutput)")
            let peer = try ExternalTool.ffprobeAudio(output)
            #expect(peer.profile == item.profile && peer.channels == item.channels && peer.sampleRate == 48000, "\(what): ffprobe \(peer)")
        }
    }

    /// A mono input with `he-aac-v2`: every command refuses it in the encoder's words ("stereo"),
    /// before it writes anything.
    @Test func aMonoInputIsRefusedByEveryCommand() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let mono = directory.appendingPathComponent("mono.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=2:r=48000", "-c:a", "pcm_s16le", mono])
        let stereo = directory.appendingPathComponent("stereo.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=2:r=48000", "-ac", "2", "-c:a", "pcm_s16le", stereo])
        let made = directory.appendingPathComponent("made")
        let attempts: [(String, [String])] = [
            ("convert", ["convert", mono, "-o", made.path + ".m4a", "--profile", "he-aac-v2", "--threads", "1"]),
            ("convert --threads 2", ["convert", mono, "-o", made.path + ".m4a", "--profile", "he-aac-v2", "--threads", "2"]),
            ("convert --channels 1", ["convert", stereo, "-o", made.path + ".aac", "--profile", "he-aac-v2", "--channels", "1"]),
            ("package", ["package", mono, "--hls", made.path, "--profile", "he-aac-v2"]),
            ("package ladder", ["package", mono, "--hls", made.path, "--bitrates", "32k:he-aac-v2,128k"]),
            ("publish", ["publish", mono, "icecast://source:x@127.0.0.1:9/mono.aac", "--profile", "he-aac-v2"]),
            ("record", ["record", made.path + ".m4a", "--profile", "he-aac-v2", "--channels", "1", "--sample-rate", "48000", "--duration", "1"]),
        ]
        for (what, arguments) in attempts {
            let run = try ExternalTool.run(try ExternalTool.keyframe, arguments)
            #expect(run.status != 0, "\(what) of a mono input as HE-AAC v2 succeeded")
            #expect(run.standardError.contains("HE-AAC v2 (parametric stereo) codes a stereo input"), "\(what): \(run.standardError)")
            let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("made") || $0.hasPrefix(".made") }
            #expect(left.isEmpty, "\(what) left \(left)")
        }
    }

    @Test func recordHEAACv2WithALiveRendition() throws {
        let layout = CaptureLayout(rate: 48000, channels: 2, seconds: 1.5, explicit: true)
        let scratch = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let hls = scratch.appendingPathComponent("live").path
        let recording = try RecordCommandTests.record(.m4a, layout, extra: ["--profile", "he-aac-v2", "--hls", hls, "--segment-duration", "0.5"])
        defer { try? FileManager.default.removeItem(at: recording.directory) }
        #expect(recording.summary["profile"] as? String == "HE-AACv2" && recording.summary["bitrate"] as? Int == 32_000, "\(recording.summary)")
        let peer = try ExternalTool.ffprobeAudio(recording.output)
        #expect(peer.profile == "HE-AACv2" && peer.sampleRate == 48000 && peer.channels == 2, "ffprobe: \(peer)")
        let playlist = hls + "/index.m3u8"
        try ValidationCheck.expectSilent([recording.output, playlist], "record out.m4a --profile he-aac-v2 --hls")
        let segments = try HEAACEverywhereTests.segments(playlist)
        #expect(segments.count >= 2, "\(segments)")
        for segment in segments {
            #expect(try HEAACEverywhereTests.firstPacketCarriesSBRHeader(initSegment: hls + "/init.mp4", segment: segment),
                    "\(segment): no SBR header first")
            let peer = try ExternalTool.ffprobeAudio(try Self.alone(initSegment: hls + "/init.mp4", segment: segment, in: scratch))
            #expect(peer.profile == "HE-AACv2" && peer.channels == 2, "\(segment): ffprobe \(peer)")
        }
        let pcm = recording.directory.appendingPathComponent("decoded.pcm").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", recording.output, "-o", pcm])
        let decoded = CaptureCheck.samples(try Data(contentsOf: URL(fileURLWithPath: pcm)))
        #expect(decoded.count == layout.frames * layout.channels, "decodes to \(decoded.count / 2) frames, want \(layout.frames)")

        // A capture rate HE-AAC does not take is refused, naming the rates it does.
        let refused = try ExternalTool.run(try ExternalTool.keyframe, ["record", scratch.appendingPathComponent("x.m4a").path, "--profile", "he-aac-v2",
                                                                       "--sample-rate", "8000", "--duration", "1"])
        #expect(refused.status != 0 && refused.standardError.contains("HE-AAC records at 16000, 22050, 24000, 32000, 44100, 48000 Hz"),
                "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: scratch.appendingPathComponent("x.m4a").path))
    }

    /// `record --profile auto --bitrate 32k` of stereo records HE-AAC v2, of mono HE-AAC v1.
    @Test(arguments: [(2, "HE-AACv2"), (1, "HE-AAC")])
    func recordAutoChoosesByTheChannels(channels: Int, profile: String) throws {
        let layout = CaptureLayout(rate: 44100, channels: channels, seconds: 1, explicit: true)
        let recording = try RecordCommandTests.record(.m4a, layout, extra: ["--profile", "auto", "--bitrate", "32k"])
        defer { try? FileManager.default.removeItem(at: recording.directory) }
        #expect(recording.summary["profile"] as? String == profile, "\(recording.summary)")
        let peer = try ExternalTool.ffprobeAudio(recording.output)
        // FFmpeg outputs two channels for any SBR stream that may carry PS; the profile says which.
        #expect(peer.profile == profile && peer.sampleRate == 44100, "ffprobe: \(peer)")
        try ValidationCheck.expectSilent([recording.output], "record out.m4a --profile auto --bitrate 32k, \(channels) ch")
    }

    /// The whole ADTS frames of an icecast2 dump (the server keeps its last buffer back: the dump
    /// ends inside a frame, which goes), written to `file`.
    static func wholeFrames(_ bytes: [UInt8], to file: URL) throws {
        var whole = 0
        while whole + 7 <= bytes.count, bytes[whole] == 0xFF, bytes[whole + 1] & 0xF0 == 0xF0 {
            let length = Int(bytes[whole + 3] & 0x03) << 11 | Int(bytes[whole + 4]) << 3 | Int(bytes[whole + 5]) >> 5
            guard length >= 7, whole + length <= bytes.count else { break }
            whole += length
        }
        #expect(whole > bytes.count - 4096, "whole ADTS frames: \(whole) of \(bytes.count) bytes")
        try Data(bytes[..<whole]).write(to: file)
    }

    @Test func publishHEAACv2ToIcecast() throws {
        let server = try IcecastServer(dumpedMounts: ["/v2.aac"])
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("noise.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=color=pink:sample_rate=44100:duration=3", "-ac", "2", input])
        let result = try PublishCommandTests.keyframe(["publish", input, "icecast://source:\(server.password)@127.0.0.1:\(server.port)/v2.aac",
                                                       "--profile", "he-aac-v2", "--json"])
        try #require(result.status == 0, "publish: \(result.standardError)")
        let report = try CaptureCheck.json(result, "publish --json")
        #expect(report["copied"] as? Bool == false && report["bitrates"] as? [Int] == [32_000] && report["profiles"] as? [String] == ["HE-AACv2"],
                "\(report)")
        try server.waitUntilSourceLeaves("/v2.aac")
        let dump = directory.appendingPathComponent("dump.aac")
        try Self.wholeFrames([UInt8](server.dump(of: "/v2.aac")), to: dump)
        let peer = try ExternalTool.ffprobeAudio(dump.path)
        #expect(peer.profile == "HE-AACv2" && peer.sampleRate == 44100 && peer.channels == 2, "ffprobe: \(peer)")
        let decoded = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", dump.path, "-f", "null", "-"])
        #expect(decoded.status == 0 && PeerQuirk.filter(decoded.standardError, quirks: [.adtsDurationEstimate]).isEmpty,
                "ffmpeg: \(decoded.standardError)")
    }

    /// `publish --profile auto --bitrate 32k` with a second destination at `#bitrate=48k`: two
    /// encoders, v2 at 32k and v1 at 48k, each mount getting its own.
    @Test func publishAutoChoosesPerDestination() throws {
        let server = try IcecastServer(dumpedMounts: ["/low.aac", "/mid.aac"])
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("noise.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=color=pink:sample_rate=48000:duration=2", "-ac", "2", input])
        let base = "icecast://source:\(server.password)@127.0.0.1:\(server.port)"
        let result = try PublishCommandTests.keyframe(["publish", input, base + "/low.aac", base + "/mid.aac#bitrate=48k",
                                                       "--profile", "auto", "--bitrate", "32k", "--json"])
        try #require(result.status == 0, "publish: \(result.standardError)")
        let report = try CaptureCheck.json(result, "publish --json")
        #expect(report["bitrates"] as? [Int] == [32_000, 48_000] && report["profiles"] as? [String] == ["HE-AACv2", "HE-AAC"], "\(report)")
        for (mount, profile) in [("/low.aac", "HE-AACv2"), ("/mid.aac", "HE-AAC")] {
            try server.waitUntilSourceLeaves(mount)
            let dump = directory.appendingPathComponent("dump\(mount.dropFirst(1).prefix(3)).aac")
            try Self.wholeFrames([UInt8](server.dump(of: mount)), to: dump)
            let peer = try ExternalTool.ffprobeAudio(dump.path)
            #expect(peer.profile == profile && peer.sampleRate == 48000, "\(mount): ffprobe \(peer)")
        }
    }

    /// `auto` on an AAC input: an M4A's AudioSpecificConfig gives its channels before decoding, so
    /// `package --profile auto --bitrate 32k` of a stereo AAC-LC M4A makes HE-AAC v2; an ADTS file
    /// says nothing until its frames are decoded, and `auto` asks for a profile in words.
    @Test func autoOnAnAACInput() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = try HEAACEverywhereTests.input(in: directory)
        let m4a = directory.appendingPathComponent("lc.m4a").path
        try MP4Check.ffmpeg(["-i", wav, "-c:a", "aac", "-b:a", "128k", m4a])
        let out = directory.appendingPathComponent("hls").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", m4a, "--hls", out, "--profile", "auto", "--bitrate", "32k"])
        var joined = try Data(contentsOf: URL(fileURLWithPath: out + "/init.mp4"))
        joined.append(try Data(contentsOf: URL(fileURLWithPath: out + "/segment-00001.m4s")))
        let first = directory.appendingPathComponent("first.mp4")
        try joined.write(to: first)
        let peer = try ExternalTool.ffprobeAudio(first.path)
        #expect(peer.profile == "HE-AACv2" && peer.channels == 2, "ffprobe: \(peer)")
        let adts = directory.appendingPathComponent("lc.aac").path
        try MP4Check.ffmpeg(["-i", wav, "-c:a", "aac", "-b:a", "128k", "-f", "adts", adts])
        let run = try ExternalTool.run(try ExternalTool.keyframe, ["package", adts, "--hls", directory.appendingPathComponent("hls2").path,
                                                                   "--profile", "auto", "--bitrate", "32k"])
        // An ADTS input's layout is known before decoding (its first frame decoded at open).
        #expect(run.status == 0, "\(run.standardError)")
        let adtsSegment = directory.appendingPathComponent("hls2")
        var segment = try Data(contentsOf: adtsSegment.appendingPathComponent("init.mp4"))
        segment.append(try Data(contentsOf: adtsSegment.appendingPathComponent("segment-00001.m4s")))
        let second = directory.appendingPathComponent("second.mp4")
        try segment.write(to: second)
        #expect(try ExternalTool.ffprobeAudio(second.path).profile == "HE-AACv2")
    }
}
