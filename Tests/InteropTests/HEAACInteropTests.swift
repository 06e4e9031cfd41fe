import Foundation
import TestSupport
import Testing

/// Issue 25: HE-AAC v1 of our own (`--profile he-aac`), judged by decoders nobody here wrote.
///
/// - ffprobe calls the M4A and the ADTS file `HE-AAC` at the input's rate (48 kHz), with
///   2048-sample packets;
/// - FFmpeg decodes both with nothing on stderr; the M4A (edit list media_time 3010) starts at
///   lag 0 and holds the input's frames; the ADTS file (no trim) lags by exactly the priming,
///   3010 samples, which is how the priming was measured;
/// - our own decode gives exactly the input's frames, at lag 0;
/// - faad2 (the `faad` CLI), GStreamer (`aacparse ! faad`, `avdec_aac`, `qtdemux`) and VLC decode
///   them to 48 kHz stereo without a warning;
/// - the 8–16 kHz third-octave bands, which only SBR rebuilds, come back within 4 dB of the
///   source on average.
@Suite(.blocking, .serialized) struct HEAACInteropTests {
    static let rate = 48000
    static let frames = 3 * 48000 + 777

    /// The input: the gapless suite's chirp plus white noise (full band, so SBR has work at
    /// every frequency), 3 s and a bit.
    static func input(in directory: URL) throws -> (path: String, pcm: GaplessTests.PCM) {
        let wav = directory.appendingPathComponent("in.wav").path
        try GaplessTests.makeSignal(rate: rate, channels: 2, frames: frames, to: wav)
        return (wav, try GaplessTests.pcm(wav, channels: 2))
    }

    @Test func m4aIsHEAACAndSampleExactInFFmpegAndOurs() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (wav, input) = try Self.input(in: directory)
        let m4a = directory.appendingPathComponent("x.m4a").path
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", m4a, "--profile", "he-aac", "--bitrate", "48k"])
        let packets = MuxCheck.packetsPrinted(run.standardOutput) ?? -1
        let peer = try ExternalTool.ffprobeAudio(m4a)
        #expect(peer.profile == "HE-AAC" && peer.sampleRate == Self.rate && peer.channels == 2, "ffprobe: \(peer)")
        #expect(packets == (Self.frames + 3010 + 2047) / 2048 || packets == (Self.frames + 3010 + 2047) / 2048 + 1,
                "\(packets) packets for \(Self.frames) frames")
        #expect(try PeerQuirk.ffprobeWarnings(m4a, quirks: []).isEmpty)

        // The edit list counts output samples (the media timescale is the output rate); iTunSMPB
        // counts the core's, as iTunes writes it, which is what FFmpeg's decoder (doubling the
        // skip when SBR doubles the rate) takes: both say 3010 output samples.
        let (timescale, edits) = try MuxCheck.editList(of: m4a)
        #expect(timescale == Self.rate && edits.count == 1 && edits.first?.mediaTime == 3010
                && edits.first?.segmentDuration == Int64(Self.frames), "edit list \(edits) at \(timescale)")
        let report = try ExternalTool.probeJSON(m4a)
        let track = (report["tracks"] as? [[String: Any]])?.first ?? [:]
        #expect(track["priming"] as? Int == 3010 && track["profile"] as? String == "HE-AAC", "probe: \(track)")
        let smpb = (report["tags"] as? [String: String])?["----:com.apple.iTunes:iTunSMPB"]?.split(separator: " ")
            .compactMap { UInt64($0, radix: 16) } ?? []
        #expect(smpb.count >= 4 && smpb[1] == 1505 && smpb[3] == UInt64((Self.frames + 1) / 2), "iTunSMPB in core samples: \(smpb)")
        try ValidationCheck.expectSilent([m4a], "an HE-AAC M4A")

        let theirs = try EditCommandTests.ffmpegDecode(m4a, in: directory)
        #expect(theirs.frames >= Self.frames && theirs.frames < Self.frames + 2048, "ffmpeg gave \(theirs.frames) frames")
        let ours = try EditCommandTests.decode(m4a, in: directory)
        #expect(ours.frames == Self.frames, "keyframe decode gave \(ours.frames) frames")
        for channel in 0..<2 {
            #expect(GaplessTests.peakLag(input, theirs, channel: channel) == 0, "ffmpeg, channel \(channel)")
            #expect(GaplessTests.peakLag(input, ours, channel: channel) == 0, "keyframe, channel \(channel)")
        }
    }

    @Test func adtsIsImplicitHEAACAndLagsByThePriming() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (wav, input) = try Self.input(in: directory)
        let adts = directory.appendingPathComponent("x.aac").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", adts, "--profile", "he-aac", "--bitrate", "48k"])
        let peer = try ExternalTool.ffprobeAudio(adts)
        #expect(peer.profile == "HE-AAC" && peer.sampleRate == Self.rate && peer.channels == 2, "ffprobe: \(peer)")
        // The ADTS header says AAC-LC at the core rate: SBR is found in the first frame.
        let header = [UInt8](try Data(contentsOf: URL(fileURLWithPath: adts)).prefix(7))
        #expect((header[2] >> 6) == 1 && (header[2] >> 2) & 0xF == 6, "ADTS profile/sampling index \(header)")
        let wavOut = directory.appendingPathComponent("ffmpeg.wav").path
        let run = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", adts, "-c:a", "pcm_s16le", wavOut])
        #expect(run.status == 0 && PeerQuirk.filter(run.standardError, quirks: [.adtsDurationEstimate]).isEmpty,
                "ffmpeg: \(run.standardError)")
        let theirs = try GaplessTests.pcm(wavOut, channels: 2)
        for channel in 0..<2 {
            let lag = GaplessTests.peakLag(input, theirs, channel: channel, maxLag: 3200)
            #expect(lag == 3010, "FFmpeg's decode of the ADTS lags by \(lag), want the priming 3010")
        }
    }

    /// What HE-AAC cannot take is refused in words before anything is written; a 96 kHz input
    /// is resampled to 48 kHz.
    @Test func ratesAndLayoutsOutsideHEAACAreRefusedOrResampled() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func tone(_ name: String, rate: Int, channels: Int) throws -> String {
            let path = directory.appendingPathComponent(name).path
            try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
                                                "sine=frequency=440:sample_rate=\(rate):duration=1", "-ac", "\(channels)", path])
            return path
        }
        let high = try tone("96k.wav", rate: 96000, channels: 2)
        let out96 = directory.appendingPathComponent("96k.m4a").path
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", high, "-o", out96, "--profile", "he-aac"])
        #expect(run.standardOutput.contains("48000 Hz"), "\(run.standardOutput)")
        let peer = try ExternalTool.ffprobeAudio(out96)
        #expect(peer.profile == "HE-AAC" && peer.sampleRate == 48000, "ffprobe: \(peer)")

        let refusals: [(input: String, arguments: [String], message: String)] = [
            (try tone("8k.wav", rate: 8000, channels: 1), [], "HE-AAC cannot be made at 8000 Hz"),
            (try tone("51.wav", rate: 48000, channels: 6), [], "not 6 channels"),
        ]
        for (input, arguments, message) in refusals {
            let out = directory.appendingPathComponent("refused.m4a").path
            let result = try ExternalTool.run(try ExternalTool.keyframe, ["encode", input, "-o", out, "--profile", "he-aac"] + arguments)
            #expect(result.status != 0 && result.standardError.contains(message), "\(input): \(result.standardError)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
    }

    /// Segment-parallel HE-AAC: 70 s in three segments, two splices, each on an SBR frame that
    /// carries a header and needs nothing of the frame before (another encoder's). Gapless and as
    /// good as the serial encode: the decode's SNR against the input (the core's band; SBR's
    /// band is not a waveform match) within 0.3 dB of the serial one's, no window's error above
    /// 1.5× the serial encode's worst, and FFmpeg decodes it without a word.
    @Test func segmentParallelEncodingHasNoSeam() throws {
        try Self.expectNoSeam(profile: "he-aac", bitrate: "48k", ffprobeProfile: "HE-AAC",
                              right: "0.25*sin(2*PI*(260*t+25*t*t))+0.05*(2*random(1)-1)+0.4*(2*random(3)-1)*lt(mod(t+0.11,0.29),0.004)")
    }

    /// Encodes 70 s of a test signal (`right` its right channel) with `convert --threads 1` and
    /// `--threads 3` at `profile` and `bitrate`, and checks the splices: FFmpeg decodes both
    /// without a word and calls them `ffprobeProfile`; the parallel decode holds the input's
    /// frames, follows the serial one on both sides of each splice, and scores as it does
    /// (SNR within 0.3 dB, no window worse than 1.5× the serial's worst).
    static func expectNoSeam(profile: String, bitrate: String, ffprobeProfile: String, right: String) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("music.wav").path
        let frames = 48000 * 70 + 777
        let left = "0.3*sin(2*PI*(150*t+40*t*t))+0.05*(2*random(0)-1)+0.5*(2*random(2)-1)*lt(mod(t,0.37),0.004)"
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "aevalsrc='\(left)|\(right)':s=48000:d=71", "-af", "atrim=end_sample=\(frames)",
                             "-c:a", "pcm_s16le", wav])
        let input = try GaplessTests.pcm(wav, channels: 2)
        var decoded: [Int: GaplessTests.PCM] = [:]
        for threads in [1, 3] {
            let m4a = directory.appendingPathComponent("t\(threads).m4a").path
            let out = directory.appendingPathComponent("t\(threads).wav").path
            let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", wav, "-o", m4a, "--profile", profile,
                                                                          "--bitrate", bitrate, "--threads", "\(threads)"])
            try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", m4a, "-o", out])
            decoded[threads] = try GaplessTests.pcm(out, channels: 2)
            let check = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", m4a, "-f", "null", "-"])
            #expect(check.status == 0 && check.standardError.isEmpty, "\(threads) threads: ffmpeg says \(check.standardError)")
            #expect(try ExternalTool.ffprobeAudio(m4a).profile == ffprobeProfile)
            if threads > 1 {
                #expect(run.standardOutput.contains("splices") && !run.standardOutput.contains("mismatched"), "\(run.standardOutput)")
            }
        }
        let serial = try #require(decoded[1])
        let parallel = try #require(decoded[3])
        #expect(serial.frames == frames && parallel.frames == frames, "\(serial.frames), \(parallel.frames) of \(frames)")
        // SBR's band is not a waveform match, so the input lines up within a sample; the serial
        // decode lines up exactly, at the start and on both sides of each splice (about 30 s and
        // 60 s): no sample lost or repeated there.
        #expect(abs(GaplessTests.peakLag(input, parallel, channel: 0)) <= 1)
        let seams = [0, 30 * 48000 - 4096, 30 * 48000 + 4096, 60 * 48000 - 4096, 60 * 48000 + 4096]
        #expect(GaplessTests.continuity(serial, parallel, at: seams) == nil, "the parallel decode leaves the serial one")
        let reference = ParallelEncodeTests.errors(input, serial)
        let measured = ParallelEncodeTests.errors(input, parallel)
        #expect(measured.snr > reference.snr - 0.3, "SNR \(measured.snr) dB against the serial \(reference.snr) dB")
        #expect(measured.worstWindow <= 1.5 * reference.worstWindow,
                "worst window \(measured.worstWindow) against the serial \(reference.worstWindow)")
    }

    /// Mono: the M4A says SBR with parametric stereo absent (the 0x2B7/0x548 form), so FFmpeg
    /// and we decode one channel; the same file's ADTS cannot say it (ffprobe calls it HE-AACv2 and
    /// decodes two equal channels), which the DocC article EncodingHEAAC.md says.
    @Test func monoM4AStaysMono() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("mono.wav").path
        try GaplessTests.makeSignal(rate: Self.rate, channels: 1, frames: Self.frames, to: wav)
        let m4a = directory.appendingPathComponent("mono.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", m4a, "--profile", "he-aac", "--bitrate", "32k"])
        let peer = try ExternalTool.ffprobeAudio(m4a)
        #expect(peer.profile == "HE-AAC" && peer.sampleRate == Self.rate && peer.channels == 1, "ffprobe: \(peer)")
        let out = directory.appendingPathComponent("mono-out.wav").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", m4a, "-o", out])
        let info = try Self.wavInfo(out)
        #expect(info.channels == 1 && info.frames == Self.frames, "keyframe decode: \(info)")
        try ValidationCheck.expectSilent([m4a], "a mono HE-AAC M4A")
    }

    /// Every frame with an SBR header is one a decoder may start at: an ADTS file cut at one
    /// decodes in FFmpeg without a word, with the high band from its first frames.
    @Test func aDecoderJoiningAtAHeaderFrameHasTheHighBandAtOnce() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (wav, _) = try Self.input(in: directory)
        let adts = directory.appendingPathComponent("x.aac").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", adts, "--profile", "he-aac", "--bitrate", "48k"])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: adts)))
        var starts: [Int] = []
        var offset = 0
        while offset + 7 <= bytes.count {
            starts.append(offset)
            let length = (Int(bytes[offset + 3] & 0x3) << 11) | (Int(bytes[offset + 4]) << 3) | (Int(bytes[offset + 5]) >> 5)
            guard length >= 7 else { break }
            offset += length
        }
        // Frame 16 carries a header (every 8th frame does); frame 17 does not, so a decoder
        // starting there has no high band until frame 24's (which shows the test can fail).
        for (frame, expectsHighBand) in [(16, true), (17, false)] {
            let cut = directory.appendingPathComponent("from-\(frame).aac")
            try Data(bytes[starts[frame]...]).write(to: cut)
            let check = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", cut.path, "-f", "null", "-"])
            let warnings = PeerQuirk.filter(check.standardError, quirks: [.adtsDurationEstimate])
            #expect(check.status == 0 && warnings.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "ffmpeg from frame \(frame): \(warnings)")
            // The band from 9 to 15 kHz over the first 6 frames (0.26 s), against the whole file's decode at
            // the same samples: a decoder starting here has the high band at once.
            let band = "highpass=f=9000,highpass=f=9000,lowpass=f=15000,lowpass=f=15000,"
                + "astats=measure_overall=RMS_level:measure_perchannel=none"
            let run = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "info", "-i", cut.path, "-af",
                                                     "atrim=end_sample=12288," + band, "-f", "null", "-"])
            let whole = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "info", "-i", adts, "-af",
                                                       "atrim=start_sample=\(frame * 2048):end_sample=\(frame * 2048 + 12288)," + band,
                                                       "-f", "null", "-"])
            func level(_ text: String) -> Double {
                Double(text.split(separator: "\n").last(where: { $0.contains("RMS level dB") })?.split(separator: ":").last?
                    .trimmingCharacters(in: .whitespaces) ?? "") ?? -200
            }
            let decoded = level(run.standardError), reference = level(whole.standardError)
            if expectsHighBand {
                #expect(abs(decoded - reference) < 1.5, "9–15 kHz, the first 6 frames from frame \(frame): \(decoded) dB, the whole decode \(reference) dB")
            } else {
                #expect(decoded < reference - 12, "9–15 kHz from frame \(frame) (no header): \(decoded) dB, the whole decode \(reference) dB")
            }
        }
    }

    /// FFmpeg's remux of our ADTS into MP4 signals nothing (an AAC-LC config at 24 kHz, times at
    /// 48 kHz): our decode finds the SBR in the first frame and keeps the whole length, and a cut
    /// finds it too, keeping frames back to one a decoder may start at.
    @Test func ffmpegsRemuxOfTheADTSDecodesWholeAndIsCutAsHEAAC() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (wav, _) = try Self.input(in: directory)
        let adts = directory.appendingPathComponent("x.aac").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", adts, "--profile", "he-aac", "--bitrate", "48k"])
        let remuxed = directory.appendingPathComponent("remuxed.m4a").path
        try MP4Check.ffmpeg(["-i", adts, "-c", "copy", remuxed])
        let out = directory.appendingPathComponent("remuxed.wav").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", remuxed, "-o", out])
        let info = try Self.wavInfo(out)
        #expect(info.sampleRate == Self.rate && info.frames >= Self.frames + 3010, "keyframe decode of FFmpeg's remux: \(info)")
        let clip = directory.appendingPathComponent("c.m4a").path
        let cut = try ExternalTool.run(try ExternalTool.keyframe, ["cut", remuxed, "-o", clip, "--start", "1"])
        #expect(cut.status == 0, "\(cut.standardError)")
        let clipped = directory.appendingPathComponent("c.wav").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", clip, "-o", clipped])
        #expect(try Self.wavInfo(clipped).sampleRate == Self.rate, "the cut decodes at the output rate")
    }

    /// The SBR frames line up with the core: a burst above 10 kHz (which only SBR carries) starts
    /// and stops in FFmpeg's decode of the ADTS file, less the 3010-sample priming, where it does
    /// in the source, to within 256 samples (measured: 64 late at the start, exact at the end).
    /// A frame-offset error of one QMF slot (64 samples) a frame would show as a drift; an error
    /// in the 38-slot alignment constant as an offset of 64 samples per slot.
    @Test func theHighBandStartsAndStopsWithTheSource() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("burst.wav").path
        // A 1 kHz tone over [1, 1.5) s and high-passed noise over [2, 2.5) s.
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "aevalsrc='if(between(t,1.0,1.5),0.3*sin(2*PI*1000*t),0)':s=48000:d=3",
                             "-f", "lavfi", "-i", "aevalsrc='if(between(t,2.0,2.5),0.3*(2*random(0)-1),0)':s=48000:d=3",
                             "-filter_complex", "[1]highpass=f=10000,highpass=f=10000,highpass=f=10000[h];[0][h]amix=inputs=2:normalize=0,aformat=channel_layouts=stereo",
                             "-c:a", "pcm_s16le", wav])
        let adts = directory.appendingPathComponent("burst.aac").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", adts, "--profile", "he-aac", "--bitrate", "48k"])
        func band(_ file: String, _ filter: String, skipping: Int) throws -> [Float] {
            let out = directory.appendingPathComponent(UUID().uuidString + ".f32").path
            try MP4Check.ffmpeg(["-i", file, "-af", "atrim=start_sample=\(skipping)," + filter, "-ac", "1", "-f", "f32le", out])
            let data = try Data(contentsOf: URL(fileURLWithPath: out))
            return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        }
        /// The first and last 64-sample block (as a sample index) above a tenth of the loudest.
        func extent(_ signal: [Float]) -> (Int, Int) {
            let blocks = stride(from: 0, to: signal.count - 64, by: 64).map { start in signal[start..<(start + 64)].reduce(0) { $0 + $1 * $1 } }
            let peak = blocks.max() ?? 0
            let first = blocks.firstIndex { $0 > peak / 10 } ?? 0, last = blocks.lastIndex { $0 > peak / 10 } ?? 0
            return (first * 64, (last + 1) * 64)
        }
        let high = "highpass=f=10000,highpass=f=10000,lowpass=f=16000"
        let source = extent(try band(wav, high, skipping: 0)), decoded = extent(try band(adts, high, skipping: 3010))
        #expect(abs(decoded.0 - source.0) <= 256 && abs(decoded.1 - source.1) <= 256,
                "above 10 kHz: source \(source), decode less the priming \(decoded)")
        let low = "highpass=f=500,lowpass=f=2000"
        let sourceLow = extent(try band(wav, low, skipping: 0)), decodedLow = extent(try band(adts, low, skipping: 3010))
        #expect(abs(decodedLow.0 - sourceLow.0) <= 64 && abs(decodedLow.1 - sourceLow.1) <= 64,
                "the core's 1 kHz: source \(sourceLow), decode less the priming \(decodedLow)")
    }

    /// Missing harmonics (`bs_add_harmonic`): a high tone over noise low-passed at 5 kHz has
    /// nothing below the crossover the decoder could copy up into a tone, so the encoder flags it
    /// and the decoder makes a sine, in the middle subband of the tone's band. Two tones, one at a
    /// time: 13,031 Hz (a band 3 subbands wide, 12.375–13.5 kHz) and 15,937.5 Hz (5 wide,
    /// 15–16.875 kHz, where the coded energy's division by the decoder's gain boost matters:
    /// without it the sine came back 3.1 dB loud). In FFmpeg's and faad2's decodes the band has
    /// one peak, in the sine's subband, at the tone's level within 1 dB, and narrow: the 7 bins
    /// around it hold at least 80% of the ±190 Hz around it. Without the sine the copy-up spreads
    /// the tone's energy over the band as noise: the peak came back 12.5 dB low.
    @Test(arguments: [(13031.0, 12750.0...13125.0), (15937.5, 15750.0...16125.0)])
    func aHighToneTheCopyUpCannotMakeComesBackAsASine(tone: Double, subband: ClosedRange<Double>) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("tone.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=d=3:c=pink:r=48000:a=0.2:seed=3",
                             "-f", "lavfi", "-i", "sine=f=\(tone):d=3:r=48000",
                             "-filter_complex", "[0]lowpass=f=5000,lowpass=f=5000[n];[1]volume=0.05[t];[n][t]amix=inputs=2:normalize=0,aformat=channel_layouts=stereo",
                             "-c:a", "pcm_s16le", wav])
        let m4a = directory.appendingPathComponent("tone.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", m4a, "--profile", "he-aac", "--bitrate", "48k"])
        let ffmpegWAV = directory.appendingPathComponent("ffmpeg.wav").path
        try MP4Check.ffmpeg(["-i", m4a, "-c:a", "pcm_s16le", ffmpegWAV])
        let faadWAV = directory.appendingPathComponent("faad.wav").path
        try ExternalTool.succeed("faad", ["-o", faadWAV, m4a])
        let source = try Self.spectralPeak(wav, from: tone - 2500, to: min(tone + 2500, 19000))
        #expect(abs(source.frequency - tone) < 10, "the source's peak: \(source)")
        for (decoder, file) in [("FFmpeg", ffmpegWAV), ("faad2", faadWAV)] {
            let decoded = try Self.spectralPeak(file, from: tone - 2500, to: min(tone + 2500, 19000))
            #expect(subband.contains(decoded.frequency), "\(decoder): the peak at \(decoded.frequency) Hz, the sine's subband \(subband)")
            #expect(abs(decoded.level - source.level) <= 1, "\(decoder): the peak at \(decoded.level) dB, the source's at \(source.level) dB")
            #expect(decoded.narrowness >= 0.8, "\(decoder): the 7 bins around the peak hold \(decoded.narrowness) of the ±190 Hz around it")
        }
    }

    /// The loudest frequency between `from` and `to` Hz in 16,384 samples of the left channel
    /// from 1 s on (Hann window, a plain DFT every 2.93 Hz): its frequency, its level in dB (the
    /// power of the 7 bins around it, which hold a windowed sinusoid's) and the share of the
    /// power within 65 bins (±190 Hz) of it those 7 bins hold (near 1 for a sinusoid).
    static func spectralPeak(_ path: String, from: Double, to: Double) throws -> (frequency: Double, level: Double, narrowness: Double) {
        let pcm = try GaplessTests.pcm(path, channels: 2)
        let length = 16384, start = rate
        let window = (0..<length).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(length)) }
        let samples = (0..<length).map { Double(pcm.samples[(start + $0) * 2]) / 32768 * window[$0] }
        let spacing = Double(rate) / Double(length)
        let bins = Int((from / spacing).rounded())...Int((to / spacing).rounded())
        let powers = bins.map { bin -> Double in
            var real = 0.0, imaginary = 0.0
            let step = 2 * Double.pi * Double(bin) / Double(length)
            for (index, sample) in samples.enumerated() {
                real += sample * cos(step * Double(index))
                imaginary -= sample * sin(step * Double(index))
            }
            return real * real + imaginary * imaginary
        }
        let peak = powers.indices.max { powers[$0] < powers[$1] } ?? 0
        func power(within radius: Int) -> Double { powers[max(peak - radius, 0)...min(peak + radius, powers.count - 1)].reduce(0, +) }
        let around = power(within: 3)
        return (Double(bins.lowerBound + peak) * spacing, 10 * log10(max(around, 1e-30)), around / max(power(within: 65), 1e-30))
    }

    /// Third-octave levels (ffmpeg's `bandpass` and `astats`) of the source and of FFmpeg's
    /// decode, at 8, 10, 12.5 and 16 kHz.
    @Test func highBandComesBackWithin4dB() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (wav, _) = try Self.input(in: directory)
        let m4a = directory.appendingPathComponent("x.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", m4a, "--profile", "he-aac", "--bitrate", "48k"])
        var differences: [Double] = []
        for centre in [8000.0, 10000, 12500, 16000] {
            let source = try Self.bandLevel(wav, centre: centre)
            let decoded = try Self.bandLevel(m4a, centre: centre)
            differences.append(abs(decoded - source))
        }
        let mean = differences.reduce(0, +) / Double(differences.count)
        #expect(mean <= 4, "8–16 kHz third-octave differences \(differences) dB, mean \(mean)")
    }

    /// The RMS level in dB of the third-octave band around `centre` (both channels mixed).
    static func bandLevel(_ file: String, centre: Double) throws -> Double {
        let run = try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "info", "-i", file, "-ac", "1", "-af",
                                                     "bandpass=f=\(centre):width_type=q:w=4.32,bandpass=f=\(centre):width_type=q:w=4.32,astats=measure_overall=RMS_level:measure_perchannel=none",
                                                     "-f", "null", "-"])
        guard let line = run.standardError.split(separator: "\n").last(where: { $0.contains("RMS level dB") }),
              let value = Double(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") else {
            throw ExternalTool.ToolFailure(description: "astats gave no RMS level for \(file): \(run.standardError.suffix(400))")
        }
        return value
    }

    /// Decoders nobody here wrote, on the ADTS and the M4A: 48 kHz stereo out, no warning.
    @Test func peerDecodersTakeBoth() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (wav, _) = try Self.input(in: directory)
        let adts = directory.appendingPathComponent("x.aac").path
        let m4a = directory.appendingPathComponent("x.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", adts, "--profile", "he-aac", "--bitrate", "48k"])
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", m4a, "--profile", "he-aac", "--bitrate", "48k"])
        try Self.expectPeerDecoders(adts: adts, m4a: m4a, frames: Self.frames, in: directory)
    }

    /// faad2's CLI, GStreamer (`faad` and `avdec_aac`, from ADTS and through qtdemux) and VLC
    /// decode `adts` and `m4a` (`frames` input frames) to 48 kHz stereo without a warning.
    static func expectPeerDecoders(adts: String, m4a: String, frames: Int, in directory: URL) throws {
        // faad2's own CLI.
        for file in [adts, m4a] {
            let out = directory.appendingPathComponent(UUID().uuidString + ".wav").path
            let run = try ExternalTool.run("faad", ["-o", out, file])
            #expect(run.status == 0, "faad \(file): \(run.standardError)")
            #expect(!run.standardError.lowercased().contains("error") && !run.standardError.lowercased().contains("warning"),
                    "faad \(file): \(run.standardError)")
            let info = try Self.wavInfo(out)
            #expect(info.sampleRate == Self.rate && info.channels == 2 && info.frames > frames - 2048, "faad \(file): \(info)")
        }
        // GStreamer: faad2's element and libav's, from ADTS and from MP4.
        let pipelines: [(String, String)] = [
            ("aacparse ! faad", adts), ("aacparse ! avdec_aac", adts),
            ("qtdemux ! aacparse ! faad", m4a), ("qtdemux ! aacparse ! avdec_aac", m4a),
        ]
        for (decoder, file) in pipelines {
            let out = directory.appendingPathComponent(UUID().uuidString + ".wav").path
            let description = "filesrc location=\(file) ! \(decoder) ! audioconvert ! audio/x-raw,format=S16LE ! wavenc ! filesink location=\(out)"
            let run = try ExternalTool.run("gst-launch-1.0", ["-q"] + description.split(separator: " ").map(String.init))
            #expect(run.status == 0 && !run.standardError.contains("WARNING") && !run.standardError.contains("ERROR"),
                    "gst \(decoder): \(run.standardError)")
            let info = try Self.wavInfo(out)
            // Lengths, not exactness (that is FFmpeg's and ours): from the M4A, qtdemux's path ends
            // a frame early with avdec_aac (lag 0), and GStreamer's faad also drops the first
            // decoded frame (lag −2048); from ADTS, faad starts at lag 962 (it drops the first
            // frame of the priming), avdec_aac at the priming.
            #expect(info.sampleRate == Self.rate && info.channels == 2 && info.frames > frames - 3 * 2048, "gst \(decoder): \(info)")
        }
        // VLC (as nobody when the tests run as root: it refuses root), into its afile output.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        for file in [adts, m4a] {
            let out = directory.appendingPathComponent("vlc-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
            let wav = out.appendingPathComponent("vlc.wav").path
            let vlc = ["cvlc", "-q", "--no-loop", "--play-and-exit", "--aout=afile", "--audiofile-file=\(wav)", file]
            let run = getuid() == 0
                ? try ExternalTool.run("runuser", ["-u", "nobody", "--", "env", "HOME=\(out.path)"] + vlc)
                : try ExternalTool.run("cvlc", Array(vlc.dropFirst()))
            #expect(run.status == 0, "cvlc \(file): \(run.standardError)")
            let info = try Self.wavInfo(wav)
            #expect(info.sampleRate == Self.rate && info.channels == 2 && info.frames > frames - 4096, "vlc \(file): \(info)")
        }
    }

    /// A WAV's rate, channels and frames, as ffprobe reads them.
    static func wavInfo(_ path: String) throws -> (sampleRate: Int, channels: Int, frames: Int) {
        let run = try ExternalTool.succeed("ffprobe", ["-v", "error", "-count_packets", "-show_entries",
                                                      "stream=sample_rate,channels,duration_ts", "-of", "json", path])
        let object = try JSONSerialization.jsonObject(with: run.outputData) as? [String: Any]
        let stream = (object?["streams"] as? [[String: Any]])?.first ?? [:]
        return (Int(stream["sample_rate"] as? String ?? "") ?? -1, stream["channels"] as? Int ?? -1, stream["duration_ts"] as? Int ?? -1)
    }
}
