import Foundation
import TestSupport
import Testing

/// Issue 26: HE-AAC v2 of our own (`--profile he-aac-v2`: a mono downmix in HE-AAC v1 plus
/// parametric stereo), judged by decoders nobody here wrote.
///
/// - ffprobe calls the M4A and the ADTS file `HE-AACv2`, 48 kHz stereo;
/// - the M4A signals object type 29 over SBR over AAC-LC (explicit hierarchical), with the
///   priming (3588: the v1 decoder's 3010 and the downmix's QMF pair, 578) in the edit list and
///   iTunSMPB; FFmpeg decodes it from lag 0 with nothing on stderr, and our decode gives exactly
///   the input's frames; FFmpeg's decode of the ADTS file lags by exactly the priming;
/// - a 440 Hz tone on the left and 1 kHz on the right stay more than 10 dB apart in FFmpeg's
///   and faad2's decodes;
/// - faad2, GStreamer (`faad`, `avdec_aac`) and VLC decode both files to 48 kHz stereo without a
///   warning; mediainfo names PS.
@Suite(.blocking, .serialized) struct HEAACv2InteropTests {
    static let rate = 48000
    static let frames = 3 * 48000 + 777
    static let priming = 3588

    /// A mostly coherent stereo input: the gapless suite's chirp on both channels (the right at
    /// half the level) and a little independent noise, 3 s and a bit.
    static func input(in directory: URL) throws -> (path: String, pcm: GaplessTests.PCM) {
        let wav = directory.appendingPathComponent("in.wav").path
        let chirp = "0.3*sin(2*PI*(150*t+1800*t*t))"
        let expression = "\(chirp)+0.05*(2*random(0)-1)|0.5*\(chirp)+0.05*(2*random(1)-1)"
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "aevalsrc='\(expression)':s=\(rate):d=\(Double(frames) / Double(rate) + 0.1)",
                             "-af", "atrim=end_sample=\(frames)", "-c:a", "pcm_s16le", wav])
        return (wav, try GaplessTests.pcm(wav, channels: 2))
    }

    @Test func m4aIsHEAACv2AndSampleExactInFFmpegAndOurs() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (wav, input) = try Self.input(in: directory)
        let m4a = directory.appendingPathComponent("x.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", m4a, "--profile", "he-aac-v2", "--bitrate", "32k"])
        let peer = try ExternalTool.ffprobeAudio(m4a)
        #expect(peer.profile == "HE-AACv2" && peer.sampleRate == Self.rate && peer.channels == 2, "ffprobe: \(peer)")
        #expect(try PeerQuirk.ffprobeWarnings(m4a, quirks: []).isEmpty)
        // Object type 29 (PS), the output rate's index (3: 48 kHz), then AAC-LC at 24 kHz, mono.
        let report = try ExternalTool.probeJSON(m4a)
        let track = (report["tracks"] as? [[String: Any]])?.first ?? [:]
        #expect(track["priming"] as? Int == Self.priming, "probe: \(track)")
        let (timescale, edits) = try MuxCheck.editList(of: m4a)
        #expect(timescale == Self.rate && edits.first?.mediaTime == Int64(Self.priming) && edits.first?.segmentDuration == Int64(Self.frames),
                "edit list \(edits) at \(timescale)")
        let smpb = (report["tags"] as? [String: String])?["----:com.apple.iTunes:iTunSMPB"]?.split(separator: " ")
            .compactMap { UInt64($0, radix: 16) } ?? []
        #expect(smpb.count >= 4 && smpb[1] == UInt64(Self.priming / 2), "iTunSMPB in core samples: \(smpb)")
        try ValidationCheck.expectSilent([m4a], "an HE-AAC v2 M4A")

        let theirs = try EditCommandTests.ffmpegDecode(m4a, in: directory)
        #expect(theirs.channels == 2 && theirs.frames >= Self.frames && theirs.frames < Self.frames + 2048, "ffmpeg gave \(theirs.frames) frames")
        let ours = try EditCommandTests.decode(m4a, in: directory)
        #expect(ours.channels == 2 && ours.frames == Self.frames, "keyframe decode gave \(ours.frames) frames")
        for channel in 0..<2 {
            #expect(GaplessTests.peakLag(input, theirs, channel: channel) == 0, "ffmpeg, channel \(channel)")
            #expect(GaplessTests.peakLag(input, ours, channel: channel) == 0, "keyframe, channel \(channel)")
        }
    }

    @Test func adtsIsHEAACv2AndLagsByThePriming() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (wav, input) = try Self.input(in: directory)
        let adts = directory.appendingPathComponent("x.aac").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", adts, "--profile", "he-aac-v2", "--bitrate", "32k"])
        let peer = try ExternalTool.ffprobeAudio(adts)
        #expect(peer.profile == "HE-AACv2" && peer.sampleRate == Self.rate && peer.channels == 2, "ffprobe: \(peer)")
        // The ADTS header says AAC-LC, mono, at the core rate: SBR and PS are found in the frames.
        let header = [UInt8](try Data(contentsOf: URL(fileURLWithPath: adts)).prefix(7))
        #expect((header[2] >> 6) == 1 && (header[2] >> 2) & 0xF == 6 && ((header[2] & 1) << 2 | header[3] >> 6) == 1,
                "ADTS profile/sampling index/channels \(header)")
        let wavOut = directory.appendingPathComponent("ffmpeg.wav").path
        let run = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", adts, "-c:a", "pcm_s16le", wavOut])
        #expect(run.status == 0 && PeerQuirk.filter(run.standardError, quirks: [.adtsDurationEstimate]).isEmpty,
                "ffmpeg: \(run.standardError)")
        let theirs = try GaplessTests.pcm(wavOut, channels: 2)
        for channel in 0..<2 {
            let lag = GaplessTests.peakLag(input, theirs, channel: channel, maxLag: 3800)
            #expect(lag == Self.priming, "FFmpeg's decode of the ADTS lags by \(lag), want the priming \(Self.priming)")
        }
    }

    /// The image check: 440 Hz only on the left and 1 kHz only on the right come back
    /// more than 10 dB apart (each tone's level in its own channel against the other's); so do
    /// 3 kHz left and 12 kHz right (a core band and an SBR band, above the hybrid region).
    @Test(arguments: [(440.0, 1000.0), (3000.0, 12000.0)])
    func theStereoImageSurvives(left: Double, right: Double) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("lr.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=f=\(left):d=3:r=48000", "-f", "lavfi", "-i", "sine=f=\(right):d=3:r=48000",
                             "-filter_complex", "[0][1]amerge=inputs=2", "-c:a", "pcm_s16le", wav])
        let m4a = directory.appendingPathComponent("lr.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", m4a, "--profile", "he-aac-v2", "--bitrate", "32k"])
        let ffmpegWAV = directory.appendingPathComponent("ffmpeg.wav").path
        try MP4Check.ffmpeg(["-i", m4a, "-c:a", "pcm_s16le", ffmpegWAV])
        let faadWAV = directory.appendingPathComponent("faad.wav").path
        try ExternalTool.succeed("faad", ["-o", faadWAV, m4a])
        for (decoder, file) in [("FFmpeg", ffmpegWAV), ("faad2", faadWAV)] {
            let leftL = try Self.toneLevel(file, channel: 0, frequency: left), leftR = try Self.toneLevel(file, channel: 1, frequency: left)
            let rightR = try Self.toneLevel(file, channel: 1, frequency: right), rightL = try Self.toneLevel(file, channel: 0, frequency: right)
            #expect(leftL - leftR >= 10, "\(decoder): \(left) Hz left \(leftL) dB, right \(leftR) dB")
            #expect(rightR - rightL >= 10, "\(decoder): \(right) Hz right \(rightR) dB, left \(rightL) dB")
        }
    }

    /// The stereo parameters are timed with the audio: noise on the left for 1.5 s, then on the
    /// right; in FFmpeg's decode the channels' levels (128-sample blocks) cross within 256
    /// samples of the switch (measured: within about 60). Parameters measured a frame early or
    /// late would put it about 1000 samples off.
    @Test func aPanStepLandsOnTime() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("step.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "aevalsrc='if(lt(t,1.5),0.3*(2*random(0)-1),0)|if(lt(t,1.5),0,0.3*(2*random(1)-1))':s=48000:d=3",
                             "-c:a", "pcm_s16le", wav])
        let m4a = directory.appendingPathComponent("step.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", m4a, "--profile", "he-aac-v2", "--bitrate", "32k"])
        let decoded = try EditCommandTests.ffmpegDecode(m4a, in: directory)
        func level(_ channel: Int, _ block: Int) -> Double {
            (0..<128).reduce(0.0) { sum, index in
                let sample = Double(decoded.samples[(block * 128 + index) * 2 + channel])
                return sum + sample * sample
            }
        }
        // The first block, around the switch, where the right channel is the louder.
        let switchBlock = 72000 / 128
        let crossing = ((switchBlock - 24)...(switchBlock + 24)).first { level(1, $0) > level(0, $0) } ?? Int.max / 256
        #expect(abs(crossing * 128 + 64 - 72000) <= 256, "the levels cross at sample \(crossing * 128 + 64), the switch is at 72000")
    }

    /// Out-of-phase channels (noise, the right the left's negative) do not cancel in the downmix:
    /// the decode keeps their level within 3 dB (measured: 2.4 dB low in FFmpeg and faad2, the
    /// decoder's decorrelator; a tone in the noise took it to 4 dB) and rebuilds them out of
    /// phase (coherence −1: the decorrelated downmix, opposite in the two channels). Before the
    /// downmix turned the right channel to the left's phase, the decode was silent.
    @Test func outOfPhaseChannelsSurvive() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("phase.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "aevalsrc='0.3*(2*random(0)-1)':s=48000:d=3",
                             "-af", "pan=stereo|c0=c0|c1=-1*c0", "-c:a", "pcm_s16le", wav])
        let m4a = directory.appendingPathComponent("phase.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", m4a, "--profile", "he-aac-v2", "--bitrate", "32k"])
        let input = try GaplessTests.pcm(wav, channels: 2)
        let decoded = try EditCommandTests.ffmpegDecode(m4a, in: directory)
        func stats(_ pcm: GaplessTests.PCM) -> (left: Double, right: Double, correlation: Double) {
            var l = 0.0, r = 0.0, c = 0.0
            for frame in 48000..<96000 {
                let a = Double(pcm.samples[frame * 2]), b = Double(pcm.samples[frame * 2 + 1])
                l += a * a; r += b * b; c += a * b
            }
            return (10 * log10(max(l, 1) / 48000), 10 * log10(max(r, 1) / 48000), c / max((l * r).squareRoot(), 1))
        }
        let source = stats(input), output = stats(decoded)
        #expect(abs(output.left - source.left) <= 3 && abs(output.right - source.right) <= 3,
                "levels \(output.left), \(output.right) dB against the input's \(source.left), \(source.right) dB")
        #expect(output.correlation < -0.5, "the channels' correlation \(output.correlation), the input's \(source.correlation)")
    }

    /// Every frame with an SBR header also carries a PS header and codes its stereo parameters
    /// without the frame before: an ADTS file cut at frame 16 decodes in stereo from its first
    /// frames (440 Hz left and 1 kHz right more than 10 dB apart over its first 6 frames); cut
    /// at frame 17 (no header), FFmpeg has no stereo parameters until frame 24 and gives the
    /// downmix on both channels (which shows the test can fail).
    @Test func aDecoderJoiningAtAHeaderFrameHasTheStereoImageAtOnce() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("lr.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=3:r=48000", "-f", "lavfi", "-i", "sine=f=1000:d=3:r=48000",
                             "-filter_complex", "[0][1]amerge=inputs=2", "-c:a", "pcm_s16le", wav])
        let adts = directory.appendingPathComponent("lr.aac").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", adts, "--profile", "he-aac-v2", "--bitrate", "32k"])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: adts)))
        var starts: [Int] = []
        var offset = 0
        while offset + 7 <= bytes.count {
            starts.append(offset)
            let length = (Int(bytes[offset + 3] & 0x3) << 11) | (Int(bytes[offset + 4]) << 3) | (Int(bytes[offset + 5]) >> 5)
            guard length >= 7 else { break }
            offset += length
        }
        for (frame, stereo) in [(16, true), (17, false)] {
            let cut = directory.appendingPathComponent("from-\(frame).aac")
            try Data(bytes[starts[frame]...]).write(to: cut)
            let out = directory.appendingPathComponent("from-\(frame).wav").path
            try MP4Check.ffmpeg(["-i", cut.path, "-af", "atrim=end_sample=\(6 * 2048)", "-c:a", "pcm_s16le", out])
            let left = try Self.toneLevel(out, channel: 0, frequency: 440, from: 2048, count: 4 * 2048)
            let right = try Self.toneLevel(out, channel: 1, frequency: 440, from: 2048, count: 4 * 2048)
            if stereo {
                #expect(left - right >= 10, "cut at frame \(frame): 440 Hz left \(left) dB, right \(right) dB")
            } else {
                #expect(abs(left - right) < 3, "cut at frame \(frame) (no header): 440 Hz left \(left) dB, right \(right) dB")
            }
        }
    }

    /// The level in dB of `frequency` in `channel` (a Goertzel over `count` samples from `from`;
    /// by default 0.5 s from 1 s on).
    static func toneLevel(_ path: String, channel: Int, frequency: Double, from: Int = 48000, count: Int = 24000) throws -> Double {
        let pcm = try GaplessTests.pcm(path, channels: 2)
        let coefficient = 2 * cos(2 * Double.pi * frequency / Double(rate))
        var s1 = 0.0, s2 = 0.0
        for index in 0..<min(count, pcm.frames - from) {
            let sample = Double(pcm.samples[(from + index) * 2 + channel]) / 32768
            let s0 = sample + coefficient * s1 - s2
            s2 = s1
            s1 = s0
        }
        let power = s1 * s1 + s2 * s2 - coefficient * s1 * s2
        return 10 * log10(max(power, 1e-20))
    }

    /// Decoders nobody here wrote, on the ADTS and the M4A: 48 kHz stereo out, no warning;
    /// mediainfo names parametric stereo.
    @Test func peerDecodersTakeBoth() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (wav, _) = try Self.input(in: directory)
        let adts = directory.appendingPathComponent("x.aac").path
        let m4a = directory.appendingPathComponent("x.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", adts, "--profile", "he-aac-v2", "--bitrate", "32k"])
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", m4a, "--profile", "he-aac-v2", "--bitrate", "32k"])
        try HEAACInteropTests.expectPeerDecoders(adts: adts, m4a: m4a, frames: Self.frames, in: directory)
        let info = try ExternalTool.succeed("mediainfo", ["--Output=JSON", m4a])
        #expect(info.standardOutput.contains("PS"), "mediainfo: \(info.standardOutput.prefix(2000))")
    }

    /// Segment-parallel HE-AAC v2 (`convert --threads 3`) has no seam: each splice is on a frame
    /// with an SBR and a PS header whose values are coded without the frame before (the right
    /// channel is the left's chirp at a lower level: a stereo image for the parameters).
    @Test func segmentParallelEncodingHasNoSeam() throws {
        try HEAACInteropTests.expectNoSeam(profile: "he-aac-v2", bitrate: "32k", ffprobeProfile: "HE-AACv2",
                                           right: "0.2*sin(2*PI*(150*t+40*t*t))+0.05*(2*random(1)-1)+0.4*(2*random(3)-1)*lt(mod(t+0.11,0.29),0.004)")
    }

    /// A mono input has no stereo to parametrise: refused in words, nothing written.
    @Test func aMonoInputIsRefused() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("mono.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=1:r=48000", "-c:a", "pcm_s16le", wav])
        let out = directory.appendingPathComponent("mono.m4a").path
        let run = try ExternalTool.run(try ExternalTool.keyframe, ["encode", wav, "-o", out, "--profile", "he-aac-v2", "--bitrate", "32k"])
        #expect(run.status != 0 && run.standardError.contains("stereo"), "\(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}
