import Foundation
import Testing
import TestSupport

/// Issue 38's streaming: HLS and DASH in fMP4 with Opus, FLAC and ALAC, each codec its own
/// variant, judged by FFmpeg and our validator. A 10-s stereo 44.1 kHz input is packaged with
/// `package --codec` (and copied from an M4A of the codec); `validate` finds no error; the
/// playlist's `CODECS` is the sample entry's (`Opus`, `fLaC`, `alac`); FFmpeg's decode through
/// `index.m3u8` is the input to the byte for FLAC and ALAC, and starts at the input's first
/// sample for Opus. A ladder of FLAC, AAC-LC, HE-AAC and Opus has segments that end at the same
/// samples in every rendition and an MPD with an adaptation set per codec. (PlayerPageTests
/// plays the FLAC ladder and an Opus rendition in Chromium.)
@Suite(.blocking) struct StreamingBeyondAACTests {
    /// `keyframe validate PATH`: its status, and its output.
    static func validate(_ path: String) throws -> (status: Int32, output: String) {
        let run = try ExternalTool.run(try ExternalTool.keyframe, ["validate", path])
        return (run.status, run.standardOutput + run.standardError)
    }

    /// The `--json` output of `keyframe package ARGUMENTS --json`.
    static func package(_ arguments: [String]) throws -> [String: Any] {
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["package"] + arguments + ["--json"])
        return try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any], "\(run.standardOutput)")
    }

    @Test(arguments: [("flac", "fLaC"), ("alac", "alac"), ("opus", "Opus")])
    func eachCodecPackagesToHLSAndDASHThatFFmpegDecodesExactly(codec: String, codecs: String) throws {
        let scratch = try CodecInteropTests.scratchWAV(rate: 44100, channels: 2, seconds: 10)
        defer { scratch.remove() }
        let (directory, wav, source) = (scratch.directory, scratch.wav, scratch.source)
        let m4a = directory.appendingPathComponent("in.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", wav, "-o", m4a, "--codec", codec])
        // Encoded from the WAV, and copied from the M4A of the codec (no --codec: the input's).
        for (name, input, extra) in [("encoded", wav, ["--codec", codec]), ("copied", m4a, [])] {
            let hls = directory.appendingPathComponent(name).path
            let output = try Self.package([input, "--hls", hls, "--segment-duration", "2", "--dash"] + extra)
            #expect(output["copied"] as? Bool == (name == "copied"), "\(output)")
            #expect((output["codecs"] as? [String: String])?["."] == codecs, "\(output)")
            let playlist = hls + "/index.m3u8"
            for manifest in [playlist, hls + "/manifest.mpd"] {
                let check = try Self.validate(manifest)
                #expect(check.status == 0 && !check.output.contains("error:"), "\(name) \(manifest): \(check.output)")
            }
            let mpd = try String(contentsOfFile: hls + "/manifest.mpd", encoding: .utf8)
            #expect(mpd.contains("codecs=\"\(codecs)\""), "\(mpd)")
            #expect(try PeerQuirk.ffmpegWarnings(playlist).isEmpty)
            let decoded = try CodecsBeyondAACTests.ffmpegPCM(playlist, in: directory, name: "\(name).raw")
            if codec == "opus" {
                // Each fragment maps its samples to the movie's roll group (Opus's 80 ms pre-roll).
                let segment = try [UInt8](Data(contentsOf: URL(fileURLWithPath: hls + "/segment-00001.m4s")))
                let (runCount, grouped) = try #require(Self.runAndRollGroup(segment), "\(name): a trun and an sbgp")
                #expect(grouped == runCount && runCount > 0, "\(name): sbgp maps \(grouped) of the trun's \(runCount) samples")
                // FFmpeg drops the pre-skip (dOps) but not the padding after the last sample.
                #expect(decoded.count >= 480_000 * 4 && decoded.count < (480_000 + 960) * 4, "\(name): \(decoded.count / 4) frames")
                try CodecsBeyondAACTests.expectAlignedAtLagZero(source: wav, decoded: decoded.prefix(480_000 * 4), in: directory)
            } else {
                #expect(decoded == source, "\(name): FFmpeg's decode of the \(codec) rendition is the input, byte for byte")
            }
        }
    }

    /// The first `trun`'s sample_count and the samples the `roll` `sbgp` after it maps to group 1
    /// (14496-12 8.8.8, 8.9.2), found by their four characters in a segment's `moof`.
    static func runAndRollGroup(_ bytes: [UInt8]) -> (run: Int, grouped: Int)? {
        func u32(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        func find(_ type: String, from: Int = 0) -> Int? {
            let tag = Array(type.utf8)
            return (from..<max(from, bytes.count - 4)).first { bytes[$0..<$0 + 4].elementsEqual(tag) }
        }
        // trun: type, then version/flags, sample_count; sbgp: type, version/flags, grouping_type,
        // entry_count 1, sample_count, group_description_index 1.
        guard let trun = find("trun"), let sbgp = find("sbgp", from: trun), bytes.count > sbgp + 24,
              bytes[(sbgp + 8)..<(sbgp + 12)].elementsEqual(Array("roll".utf8)), u32(sbgp + 12) == 1, u32(sbgp + 20) == 1 else { return nil }
        return (u32(trun + 8), u32(sbgp + 16))
    }

    /// An M4A of Opus packaged with a bitrate stays Opus (encoded again at it), not AAC.
    @Test func anOpusInputPackagedAtABitrateStaysOpus() throws {
        let scratch = try CodecInteropTests.scratchWAV(rate: 44100, channels: 2, seconds: 2)
        defer { scratch.remove() }
        let (directory, wav) = (scratch.directory, scratch.wav)
        let m4a = directory.appendingPathComponent("in.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", wav, "-o", m4a, "--codec", "opus"])
        let output = try Self.package([m4a, "--hls", directory.appendingPathComponent("hls").path, "--bitrate", "64k"])
        #expect(output["copied"] as? Bool == false && (output["codecs"] as? [String: String])?["."] == "Opus", "\(output)")
    }

    /// An Ogg Opus file (opusenc's) is packaged by stream copy, not encoded again: its packets
    /// into Opus segments, its pre-skip the edit, its tags the init segment's. FFmpeg decodes the
    /// package to the file's own decode, sample for sample (and then the last packet's padding,
    /// which it keeps in fragmented MP4).
    @Test func anOggOpusInputIsCopiedIntoOpusSegments() throws {
        let scratch = try CodecInteropTests.scratchWAV(rate: 48000, channels: 2, seconds: 5)
        defer { scratch.remove() }
        let (directory, wav) = (scratch.directory, scratch.wav)
        let ogg = directory.appendingPathComponent("in.opus").path
        try ExternalTool.succeed("opusenc", ["--quiet", "--title", "Opus Tune", wav, ogg])
        let hls = directory.appendingPathComponent("hls").path
        let output = try Self.package([ogg, "--hls", hls, "--dash"])
        #expect(output["copied"] as? Bool == true && (output["codecs"] as? [String: String])?["."] == "Opus", "\(output)")
        let check = try Self.validate(hls)
        #expect(check.status == 0 && !check.output.contains("error:"), "\(check.output)")
        let source = try CodecsBeyondAACTests.ffmpegPCM(ogg, in: directory, name: "ogg.raw")
        let packaged = try CodecsBeyondAACTests.ffmpegPCM(hls + "/index.m3u8", in: directory, name: "hls.raw")
        #expect(packaged.count >= source.count && packaged.prefix(source.count) == source, "\(packaged.count) bytes against \(source.count)")
        let title = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "format_tags=title", "-of", "csv=p=0", hls + "/init.mp4"])
        #expect(title.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "Opus Tune", "\(title.standardOutput)")
        // At a bitrate it is encoded again, as Opus.
        let again = try Self.package([ogg, "--hls", directory.appendingPathComponent("again").path, "--bitrate", "64k"])
        #expect(again["copied"] as? Bool == false && (again["codecs"] as? [String: String])?["."] == "Opus", "\(again)")
    }

    /// `--bitrates lossless:flac,128k,48k:he-aac,96k:opus`: four renditions in `flac/`, `128k/`,
    /// `48k/` and `96k-opus/`, whose segments last the same (whole packets of every codec: a
    /// multiple of 61,440 samples at 48 kHz, Opus's 960 and FLAC's 4096), a master playlist that
    /// names each codec, an MPD with an adaptation set per codec, and `validate` finds no error.
    /// FFmpeg ignores a fragmented FLAC track's edit list: its decode of the FLAC rendition is
    /// the input after the ladder's priming (raised to HE-AAC's, as silence), sample for sample.
    @Test func aLadderOfFourCodecsLinesUpAndValidates() throws {
        let scratch = try CodecInteropTests.scratchWAV(rate: 44100, channels: 2, seconds: 10)
        defer { scratch.remove() }
        let (directory, wav) = (scratch.directory, scratch.wav)
        let hls = directory.appendingPathComponent("ladder").path
        let output = try Self.package([wav, "--hls", hls, "--segment-duration", "2", "--dash",
                                       "--bitrates", "lossless:flac,128k,48k:he-aac,96k:opus"])
        let codecs = try #require(output["codecs"] as? [String: String], "\(output)")
        #expect(codecs == ["flac": "fLaC", "128k": "mp4a.40.2", "48k": "mp4a.40.5", "96k-opus": "Opus"], "\(codecs)")
        // Opus takes 48 kHz only: every rendition is at 48 kHz, segments of 2.56 s (2 × 61,440).
        #expect(output["adjustedSegmentDuration"] as? Double == 2.56, "\(output)")
        let master = try String(contentsOfFile: hls + "/master.m3u8", encoding: .utf8)
        for name in ["fLaC", "mp4a.40.2", "mp4a.40.5", "Opus"] { #expect(master.contains("CODECS=\"\(name)\""), "\(master)") }
        var extinfs: [[String]] = []
        for rendition in ["flac", "128k", "48k", "96k-opus"] {
            let playlist = try String(contentsOfFile: "\(hls)/\(rendition)/index.m3u8", encoding: .utf8)
            extinfs.append(playlist.split(separator: "\n").filter { $0.hasPrefix("#EXTINF") }.map(String.init))
        }
        #expect(Set(extinfs).count == 1, "every rendition's segments last the same: \(extinfs)")
        let mpd = try String(contentsOfFile: hls + "/manifest.mpd", encoding: .utf8)
        #expect(mpd.components(separatedBy: "<AdaptationSet").count - 1 == 3, "mp4a, fLaC and Opus each a set: \(mpd)")
        // Nothing to warn of either: renditions of different codecs are not held to one configuration.
        for manifest in [hls + "/master.m3u8", hls + "/manifest.mpd"] {
            let check = try Self.validate(manifest)
            #expect(check.status == 0 && !check.output.contains("error:") && !check.output.contains("warning:"), "\(manifest): \(check.output)")
        }
        // The FLAC rendition is the input resampled to 48 kHz once, behind the ladder's priming.
        let priming = 3010
        let decoded = try CodecsBeyondAACTests.ffmpegPCM(hls + "/flac/index.m3u8", in: directory, name: "flac.raw")
        #expect(decoded.count == (480_000 + priming) * 4, "\(decoded.count / 4) frames")
        #expect(decoded.prefix(priming * 4).allSatisfy { $0 == 0 }, "the priming is silence")
        try CodecsBeyondAACTests.expectAlignedAtLagZero(source: wav, decoded: decoded.dropFirst(priming * 4), in: directory)
    }

    /// A ladder's lossless rendition of a 16-bit input is 16-bit, and holds the input's samples
    /// exactly behind the ladder's priming (FFmpeg, which ignores a fragmented FLAC track's
    /// edit list, decodes the priming as silence).
    @Test func aLaddersLosslessRenditionKeepsTheInputsDepthAndSamples() throws {
        let scratch = try CodecInteropTests.scratchWAV(rate: 44100, channels: 2, seconds: 3)
        defer { scratch.remove() }
        let (directory, wav, source) = (scratch.directory, scratch.wav, scratch.source)
        let hls = directory.appendingPathComponent("ladder").path
        _ = try Self.package([wav, "--hls", hls, "--bitrates", "lossless:flac,128k"])
        let probe = try ExternalTool.succeed("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=sample_fmt,bits_per_raw_sample",
                                                         "-of", "default=nw=1", hls + "/flac/index.m3u8"]).standardOutput
        #expect(probe.contains("sample_fmt=s16") && probe.contains("bits_per_raw_sample=16"), "\(probe)")
        let decoded = try CodecsBeyondAACTests.ffmpegPCM(hls + "/flac/index.m3u8", in: directory, name: "flac.raw")
        let priming = decoded.count - source.count
        #expect(priming >= 0 && decoded.prefix(priming).allSatisfy { $0 == 0 }, "\(priming / 4) frames of priming")
        #expect(decoded.dropFirst(priming) == source, "the rendition holds the input's samples")
    }

    /// What `package` refuses, as usage errors (64) before any file: a codec fMP4 segments do
    /// not carry here (MP3), a profile with a codec other than AAC, and in a ladder a bitrate for
    /// a lossless codec, none for a lossy one, and a word that is neither a profile nor a codec.
    @Test func packageRefusesWhatTheSegmentsCannotCarry() throws {
        let scratch = try CodecInteropTests.scratchWAV(rate: 44100, channels: 2, seconds: 1)
        defer { scratch.remove() }
        let (directory, wav) = (scratch.directory, scratch.wav)
        let hls = directory.appendingPathComponent("out").path
        let cases: [([String], Int32, String)] = [
            (["--codec", "mp3"], 64, "carry aac, opus, flac, alac"),
            (["--codec", "opus", "--profile", "he-aac"], 64, "profiles are AAC's"),
            (["--bitrates", "64k:foo"], 64, "neither a profile"),
            (["--bitrates", "lossless:flac,128k:flac"], 64, "flac is lossless and takes no bitrate"),
            (["--bitrates", "lossless:opus"], 64, "opus needs a bitrate"),
            (["--bitrates", "96k:mp3"], 64, "nor a codec the segments carry"),
            (["--bitrates", "128k,64k,128k"], 64, "each rendition once (two would be 128k/)"),
            (["--bitrates", "lossless:he-aac"], 64, "aac needs a bitrate"),
            (["--codec", "flac", "--bitrate", "128k"], 64, "flac is lossless and takes none"),
        ]
        for (extra, status, words) in cases {
            let run = try ExternalTool.run(try ExternalTool.keyframe, ["package", wav, "--hls", hls] + extra)
            #expect(run.status == status && run.standardError.contains(words), "\(extra): \(run.status) \(run.standardError)")
            #expect(!FileManager.default.fileExists(atPath: hls), "\(extra): nothing is left")
        }
    }
}
