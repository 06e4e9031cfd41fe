import Foundation
import Testing
import TestSupport

/// Issue 11, item 8: one file encoded by several AAC encoders at once, on segments stitched into
/// one stream. Against the input, the parallel encode's decoded SNR is within 0.3 dB of the
/// serial encode's, no 1024-frame window's error exceeds 1.5× the serial encode's worst window,
/// the stream is as long as the serial one and gapless, and FFmpeg decodes it without a word.
/// Serial encoding (`--threads 1`) stays byte-identical to `ffmpeg -c:a aac`.
@Suite(.blocking) struct ParallelEncodeTests {
    /// Errors of a decode against the input: total SNR in dB and the worst window's error energy.
    static func errors(_ input: GaplessTests.PCM, _ output: GaplessTests.PCM) -> (snr: Double, worstWindow: Double) {
        var signal = 0.0, noise = 0.0, worst = 0.0, window = 0.0
        let samplesPerWindow = 1024 * input.channels
        for index in 0..<min(input.samples.count, output.samples.count) {
            let x = Double(input.samples[index]), e = x - Double(output.samples[index])
            signal += x * x
            noise += e * e
            window += e * e
            if (index + 1) % samplesPerWindow == 0 {
                worst = max(worst, window)
                window = 0
            }
        }
        return (10 * log10(signal / max(noise, 1e-9)), max(worst, window))
    }

    @Test func parallelSegmentsMatchTheSerialEncodeInQualityAndLength() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // 70 s of a chirp, noise and clicks (the clicks make the encoder switch to short
        // windows): three segments of about 30 s, two splices.
        let wav = directory.appendingPathComponent("music.wav").path
        let frames = 44100 * 70 + 777
        let left = "0.3*sin(2*PI*(150*t+40*t*t))+0.05*(2*random(0)-1)+0.5*(2*random(2)-1)*lt(mod(t,0.37),0.004)"
        let right = "0.25*sin(2*PI*(260*t+25*t*t))+0.05*(2*random(1)-1)+0.4*(2*random(3)-1)*lt(mod(t+0.11,0.29),0.004)"
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "aevalsrc='\(left)|\(right)':s=44100:d=71", "-af", "atrim=end_sample=\(frames)",
                             "-c:a", "pcm_s16le", wav])
        let input = try GaplessTests.pcm(wav, channels: 2)
        var decoded: [Int: GaplessTests.PCM] = [:]
        for threads in [1, 2, 3] {
            let m4a = directory.appendingPathComponent("t\(threads).m4a").path
            let out = directory.appendingPathComponent("t\(threads).wav").path
            let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", wav, "-o", m4a, "--threads", "\(threads)"])
            try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", m4a, "-o", out])
            decoded[threads] = try GaplessTests.pcm(out, channels: 2)
            let check = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", m4a, "-f", "null", "-"])
            #expect(check.status == 0 && check.standardError.isEmpty, "\(threads) threads: ffmpeg says \(check.standardError)")
            if threads > 1 {
                #expect(run.standardOutput.contains("splices"), "\(run.standardOutput)")
                #expect(!run.standardOutput.contains("mismatched"), "\(run.standardOutput)")
            }
        }
        let serial = try #require(decoded[1])
        #expect(serial.frames == frames)
        let reference = Self.errors(input, serial)
        for threads in [2, 3] {
            let parallel = try #require(decoded[threads])
            #expect(parallel.frames == frames, "\(threads) threads: \(parallel.frames) frames")
            #expect(GaplessTests.peakLag(input, parallel, channel: 0) == 0)
            let measured = Self.errors(input, parallel)
            #expect(measured.snr >= reference.snr - 0.3, "\(threads) threads: SNR \(measured.snr) dB, serial \(reference.snr) dB")
            #expect(measured.worstWindow <= 1.5 * reference.worstWindow,
                    "\(threads) threads: worst window \(measured.worstWindow), serial \(reference.worstWindow)")
        }
    }

    @Test func serialEncodingIsByteIdenticalToFFmpeg() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try GaplessTests.makeSignal(rate: 48000, channels: 2, frames: 48000 * 12, to: wav)
        let ours = directory.appendingPathComponent("ours.aac").path
        let theirs = directory.appendingPathComponent("theirs.aac").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", wav, "-o", ours, "--threads", "1"])
        try MP4Check.ffmpeg(["-i", wav, "-c:a", "aac", "-b:a", "128k", theirs])
        #expect(FileManager.default.contentsEqual(atPath: ours, andPath: theirs))
    }
}
