import Foundation
import KeyFrameKit
import Testing
import TestSupport

/// Issue 25, item 4: HE-AAC everywhere AAC goes, judged by FFmpeg, an icecast2 server and
/// `keyframe validate`.
///
/// - `package --bitrates 48k:he-aac,128k`: `CODECS` (and the MPD's `codecs`) say `mp4a.40.5` for
///   the HE-AAC rendition and `mp4a.40.2` for AAC-LC; `EXTINF` is the same in both (6 s is
///   rounded to 6.016 s, 141 HE-AAC frames, and the output says so); `keyframe validate` is
///   silent; ffprobe reads every HE-AAC segment as HE-AAC at 48 kHz and FFmpeg plays the
///   playlist without a warning; every HE-AAC segment's first packet carries an SBR header, and
///   each segment decoded alone by FFmpeg has the band above 10 kHz at once (a control: the
///   same HE-AAC packaged by stream copy, with no marks, starts segments without one and
///   decodes them alone without that band).
/// - `record --profile he-aac` (the ALSA file plugin) writes an HE-AAC M4A and a live rendition
///   whose every segment starts with an SBR header.
/// - `publish --profile he-aac` to icecast2: the server's dump is HE-AAC (implicit, in ADTS).
/// - `cut`, `split`, `join` refuse HE-AAC (M4A and ADTS) before writing anything.
@Suite(.blocking, .serialized) struct HEAACEverywhereTests {
    /// 12.5 s of pink noise and a 440 Hz tone at 48 kHz stereo: full band, so SBR has work.
    static func input(in directory: URL) throws -> String {
        let wav = directory.appendingPathComponent("in.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=d=12.5:c=pink:r=48000:a=0.3", "-f", "lavfi", "-i", "sine=f=440:d=12.5:r=48000",
                                        "-filter_complex", "[0][1]amix=inputs=2,aformat=channel_layouts=stereo", "-ar", "48000", wav])
        return wav
    }

    /// Whether the first packet of `segment` (after the init segment `initSegment`) carries an
    /// SBR header: its raw data block's `EXT_SBR_DATA` fill element has `bs_header_flag` set
    /// (ISO/IEC 14496-3 4.4.2.8, the first bit after the 4-bit extension type).
    static func firstPacketCarriesSBRHeader(initSegment: String, segment: String) throws -> Bool {
        var input = try AudioPacketInput(path: FilePath(initSegment), segments: [FilePath(segment)], purpose: .remuxing)
        let config = try #require(input.audioSpecificConfig, "\(segment): no AudioSpecificConfig")
        let packet = try #require(try input.next(), "\(segment): no packet")
        let block = try RawDataBlock(parsing: packet.data, configuration: RawDataBlock.Configuration(
            samplingFrequencyIndex: config.samplingFrequencyIndex, channelConfiguration: config.channelConfiguration))
        for case .fill(let fill) in block.elements where fill.extensionType == FillElement.ExtensionType.sbrData {
            return fill.payload[0] & 0x08 != 0
        }
        return false
    }

    /// The RMS level (dBFS) above 10 kHz of 0.07–0.25 s into `segment` decoded alone by FFmpeg
    /// (after its init segment): a decoder that starts without an SBR header gives the AAC-LC
    /// core alone, which stops below it, until a header comes.
    static func highBandLevel(initSegment: String, segment: String, in directory: URL) throws -> Double {
        let joined = directory.appendingPathComponent("alone.mp4")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: initSegment))
        bytes.append(try Data(contentsOf: URL(fileURLWithPath: segment)))
        try bytes.write(to: joined)
        let run = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "info", "-y", "-i", joined.path, "-af",
                                                  "atrim=start=0.07:end=0.25,highpass=f=10000,highpass=f=10000,highpass=f=10000,"
                                                      + "astats=measure_overall=RMS_level:measure_perchannel=none", "-f", "null", "-"])
        let line = run.standardError.split(separator: "\n").last { $0.contains("RMS level dB:") } ?? ""
        return Double(line.split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "") ?? -200
    }

    /// `EXTINF` durations of a media playlist, as written.
    static func extinf(_ playlist: String) throws -> [String] {
        try String(contentsOfFile: playlist, encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("#EXTINF:") }.map(String.init)
    }

    /// The media segments a media playlist names, as paths beside it.
    static func segments(_ playlist: String) throws -> [String] {
        let base = (playlist as NSString).deletingLastPathComponent
        return try String(contentsOfFile: playlist, encoding: .utf8).split(separator: "\n")
            .filter { !$0.hasPrefix("#") && !$0.isEmpty }.map { base + "/" + $0 }
    }

    @Test func ladderWithHEAACAndLCRenditions() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = try Self.input(in: directory)
        let out = directory.appendingPathComponent("out").path
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["package", wav, "--hls", out, "--bitrates", "48k:he-aac,128k", "--dash"])
        #expect(run.standardOutput.contains("segment duration 6.016000 s instead of 6.000 s"), "says the duration changed: \(run.standardOutput)")

        let master = try String(contentsOfFile: out + "/master.m3u8", encoding: .utf8)
        let lines = master.split(separator: "\n").map(String.init)
        func codecs(of uri: String) -> String? {
            guard let index = lines.firstIndex(of: uri), index > 0 else { return nil }
            return lines[index - 1].split(separator: ",").first { $0.hasPrefix("CODECS=") }.map(String.init)
        }
        #expect(codecs(of: "48k/index.m3u8") == "CODECS=\"mp4a.40.5\"" && codecs(of: "128k/index.m3u8") == "CODECS=\"mp4a.40.2\"",
                "master: \(master)")
        let mpd = try String(contentsOfFile: out + "/manifest.mpd", encoding: .utf8)
        #expect(mpd.contains("codecs=\"mp4a.40.5\"") && mpd.contains("codecs=\"mp4a.40.2\""), "MPD: \(mpd)")

        let he = out + "/48k/index.m3u8", lc = out + "/128k/index.m3u8"
        let durations = try Self.extinf(he), lcDurations = try Self.extinf(lc)
        #expect(durations.count == 2 && durations == lcDurations, "EXTINF: \(durations) against \(lcDurations)")
        #expect(durations.first == "#EXTINF:6.016000,", "\(durations)")
        try ValidationCheck.expectSilent([out], "package --bitrates 48k:he-aac,128k --dash")

        let play = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", he, "-f", "null", "-"])
        #expect(play.status == 0 && play.standardError.isEmpty, "ffmpeg plays the HE-AAC rendition: \(play.standardError)")
        let initSegment = out + "/48k/init.mp4"
        var levels: [Double] = []
        for segment in try Self.segments(he) {
            let alone = directory.appendingPathComponent("probe.mp4")
            var bytes = try Data(contentsOf: URL(fileURLWithPath: initSegment))
            bytes.append(try Data(contentsOf: URL(fileURLWithPath: segment)))
            try bytes.write(to: alone)
            let peer = try ExternalTool.ffprobeAudio(alone.path)
            #expect(peer.profile == "HE-AAC" && peer.sampleRate == 48000 && peer.channels == 2, "\(segment): ffprobe \(peer)")
            #expect(try Self.firstPacketCarriesSBRHeader(initSegment: initSegment, segment: segment), "\(segment): no SBR header first")
            levels.append(try Self.highBandLevel(initSegment: initSegment, segment: segment, in: directory))
        }
        // The first segment starts the stream (a header in any case): the others match it.
        #expect(levels.count == 2 && levels.allSatisfy { $0 > -65 && abs($0 - levels[0]) < 6 }, "above 10 kHz, each segment alone: \(levels) dB")

        // The control: the same profile packaged by stream copy (no marks) starts its later
        // segments without a header, and FFmpeg decodes them alone without the band until the
        // encoder's own next header (every 8th frame). 5.8667 s is 137.5 frames: the second
        // segment starts at frame 137 or 138, six or seven frames before frame 144's header,
        // so the measured window (frames 1.6 to 5.9) has none.
        let m4a = directory.appendingPathComponent("he.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", wav, "-o", m4a, "--profile", "he-aac", "--bitrate", "48k"])
        let copied = directory.appendingPathComponent("copied").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", m4a, "--hls", copied, "--segment-duration", "5.8667"])
        let later = try #require(try Self.segments(copied + "/index.m3u8").dropFirst().first)
        #expect(try !Self.firstPacketCarriesSBRHeader(initSegment: copied + "/init.mp4", segment: later))
        let unmarked = try Self.highBandLevel(initSegment: copied + "/init.mp4", segment: later, in: directory)
        #expect(unmarked < levels[0] - 6, "control: an unmarked segment alone has \(unmarked) dB above 10 kHz, a marked one \(levels[0])")
    }

    @Test func recordHEAACWithALiveRendition() throws {
        let layout = CaptureLayout(rate: 44100, channels: 2, seconds: 1.5, explicit: true)
        let scratch = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let hls = scratch.appendingPathComponent("live").path
        let recording = try RecordCommandTests.record(.m4a, layout, extra: ["--profile", "he-aac", "--hls", hls, "--segment-duration", "0.5"])
        defer { try? FileManager.default.removeItem(at: recording.directory) }
        let peer = try ExternalTool.ffprobeAudio(recording.output)
        #expect(peer.profile == "HE-AAC" && peer.sampleRate == 44100 && peer.channels == 2, "ffprobe: \(peer)")
        let playlist = hls + "/index.m3u8"
        try ValidationCheck.expectSilent([recording.output, playlist], "record out.m4a --profile he-aac --hls")
        let segments = try Self.segments(playlist)
        #expect(segments.count >= 2, "\(segments)")
        for segment in segments {
            #expect(try Self.firstPacketCarriesSBRHeader(initSegment: hls + "/init.mp4", segment: segment), "\(segment): no SBR header first")
        }
        let pcm = recording.directory.appendingPathComponent("decoded.pcm").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", recording.output, "-o", pcm])
        let decoded = CaptureCheck.samples(try Data(contentsOf: URL(fileURLWithPath: pcm)))
        #expect(decoded.count == layout.frames * layout.channels, "decodes to \(decoded.count / 2) frames, want \(layout.frames)")

        // A capture rate HE-AAC does not take is refused, naming the rates it does.
        let refused = try ExternalTool.run(try ExternalTool.keyframe, ["record", scratch.appendingPathComponent("x.m4a").path, "--profile", "he-aac",
                                                                       "--sample-rate", "8000", "--duration", "1"])
        #expect(refused.status != 0 && refused.standardError.contains("HE-AAC records at 16000, 22050, 24000, 32000, 44100, 48000 Hz"),
                "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: scratch.appendingPathComponent("x.m4a").path))
    }

    @Test func publishHEAACToIcecast() throws {
        let server = try IcecastServer(dumpedMounts: ["/he.aac"])
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("noise.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=color=pink:sample_rate=44100:duration=3", "-ac", "2", input])
        let result = try PublishCommandTests.keyframe(["publish", input, "icecast://source:\(server.password)@127.0.0.1:\(server.port)/he.aac",
                                                       "--profile", "he-aac", "--json"])
        try #require(result.status == 0, "publish: \(result.standardError)")
        let report = try CaptureCheck.json(result, "publish --json")
        #expect(report["copied"] as? Bool == false && report["bitrates"] as? [Int] == [64_000], "\(report)")
        try server.waitUntilSourceLeaves("/he.aac")
        // icecast2 keeps its last buffer back: the dump ends inside a frame, which goes.
        let dump = directory.appendingPathComponent("dump.aac")
        let bytes = [UInt8](server.dump(of: "/he.aac"))
        var whole = 0
        while whole + 7 <= bytes.count, bytes[whole] == 0xFF, bytes[whole + 1] & 0xF0 == 0xF0 {
            let length = Int(bytes[whole + 3] & 0x03) << 11 | Int(bytes[whole + 4]) << 3 | Int(bytes[whole + 5]) >> 5
            guard length >= 7, whole + length <= bytes.count else { break }
            whole += length
        }
        #expect(whole > bytes.count - 4096, "whole ADTS frames: \(whole) of \(bytes.count) bytes")
        try Data(bytes[..<whole]).write(to: dump)
        let peer = try ExternalTool.ffprobeAudio(dump.path)
        #expect(peer.profile == "HE-AAC" && peer.sampleRate == 44100 && peer.channels == 2, "ffprobe: \(peer)")
        let decoded = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", dump.path, "-f", "null", "-"])
        #expect(decoded.status == 0 && PeerQuirk.filter(decoded.standardError, quirks: [.adtsDurationEstimate]).isEmpty,
                "ffmpeg: \(decoded.standardError)")
    }

    /// HE-AAC (v1 and v2; in M4A, and ADTS) is cut, split and joined without re-encoding: each
    /// edit keeps frames back to one a decoder may start at (an SBR header, values coded in
    /// frequency only: every 8th frame ours writes), and the edit list trims to the sample,
    /// rounded to the core's (two output samples). Our decode and FFmpeg's of the cut of a tone
    /// line up with the source's decode at lag 0, within 30 dB over the 2,048 samples after the
    /// cut; the lengths are exact; the split parts join back into the source's frames, so the
    /// decode of the join is the source's, bit for bit. (A tone, because SBR's noise generator
    /// runs on from the decoder's first frame: a decode that starts elsewhere fills noise-like
    /// high bands with other noise of the same level, which no waveform comparison forgives.)
    @Test(arguments: [("m4a", "he-aac"), ("aac", "he-aac"), ("m4a", "he-aac-v2")])
    func cutSplitAndJoinHEAAC(container: String, profile: String) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=f=440:r=44100:d=10", "-f", "lavfi",
                                            "-i", "sine=f=3100:r=44100:d=10", "-filter_complex", "[0][1]amerge", "-c:a", "pcm_s16le", wav])
        let source = directory.appendingPathComponent("he.\(container)").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", source, "--profile", profile, "--bitrate", "48k"])
        let whole = try NativeEditTests.decode(NativeEditTests.keyframeDecoded(source, in: directory), with: "ffmpeg", in: directory)
        // 1.2345 s is sample 54,441 of the M4A's presentation: the cut starts at 54,440, the
        // core's sample before it. ADTS says no priming, and its times count core samples: the
        // cut starts at core sample 27,221 (1.2345 × 22,050, rounded) of the whole decode.
        let (start, length) = container == "aac" ? (54_442, 276_308) : (54_440, 276_310)
        let cut = directory.appendingPathComponent("cut.m4a").path
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["cut", source, "-o", cut, "--start", "1.2345", "--end", "7.5"])
        #expect(run.standardOutput.contains(container == "aac" ? "138154 samples" : "276310 samples"), "\(run.standardOutput)")
        let ours = try NativeEditTests.decode(NativeEditTests.keyframeDecoded(cut, in: directory), with: "ffmpeg", in: directory)
        #expect(ours.count == length * 2)
        let reference = Array(whole.dropFirst(start * 2))
        #expect(NativeEditTests.snr(reference, ours, frames: 0..<2048) >= 30 && NativeEditTests.snr(reference, ours, frames: 0..<length) >= 30)
        // FFmpeg honours the edit's start (not its end): its decode starts where ours does.
        let theirs = try NativeEditTests.decode(cut, with: "ffmpeg", in: directory)
        #expect(NativeEditTests.snr(reference, theirs, frames: 0..<2048) >= 30, "FFmpeg's decode of the cut at lag 0")
        let validate = try ExternalTool.run(try ExternalTool.keyframe, ["validate", cut])
        #expect(validate.status == 0, "\(validate.standardOutput)\(validate.standardError)")

        let parts = directory.appendingPathComponent("parts").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["split", source, "--at", "3.3", "--at", "6.1", "-o", parts])
        let joined = directory.appendingPathComponent("joined.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["join", "\(parts)/he-01.m4a", "\(parts)/he-02.m4a", "\(parts)/he-03.m4a", "-o", joined])
        let again = try NativeEditTests.decode(NativeEditTests.keyframeDecoded(joined, in: directory), with: "ffmpeg", in: directory)
        #expect(again == whole, "the joined parts decode to the source's samples")
    }
}
