import Foundation
import Testing
import TestSupport

/// `keyframe encode` and `keyframe decode` judged by FFmpeg, at every AAC rate in mono, stereo
/// and 5.1: ffmpeg decodes our ADTS without a message; since we drive the same encoder with the
/// same float conversion, our ADTS is byte-identical to `ffmpeg -c:a aac`'s; and our decode of
/// ffmpeg's (and the corpus's) ADTS is sample-identical to `ffmpeg -i IN OUT.wav`.
@Suite(.blocking) struct CodecInteropTests {
    /// FFmpeg 5.1 prints this at -v warning for every ADTS file; it says nothing about ours.
    static let adtsDurationNote = PeerQuirk.adtsDurationEstimate.rawValue

    static func makeWAV(rate: Int, channels: Int, seconds: Double = 1.3, to path: String, frequency: Int = 440) throws {
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y",
            "-f", "lavfi", "-i", "sine=frequency=\(frequency):sample_rate=\(rate):duration=\(seconds)",
            "-f", "lavfi", "-i", "anoisesrc=d=\(seconds):a=0.05:r=\(rate):seed=7",
            "-filter_complex", "[0][1]amix=inputs=2:normalize=0", "-ac", "\(channels)", "-c:a", "pcm_s16le", path])
    }

    /// A scratch directory holding `in.wav` (``makeWAV(rate:channels:seconds:to:frequency:)``)
    /// and its samples; ``remove()`` removes it.
    struct ScratchWAV {
        let directory: URL
        let wav: String
        let source: Data
        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    static func scratchWAV(rate: Int, channels: Int, seconds: Double) throws -> ScratchWAV {
        let directory = try ExternalTool.scratchDirectory()
        let wav = directory.appendingPathComponent("in.wav").path
        do {
            try makeWAV(rate: rate, channels: channels, seconds: seconds, to: wav)
            return ScratchWAV(directory: directory, wav: wav, source: try wavPayload(wav))
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// The durations of the first audio track's packets, as ffprobe lists them.
    static func packetDurations(_ path: String) throws -> [Int] {
        try ExternalTool.succeed("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "packet=duration", "-of", "csv=p=0", path])
            .standardOutput.split(separator: "\n").compactMap { Int($0) }
    }

    /// The PCM payload of a WAV (the bytes of its data chunk).
    static func wavPayload(_ path: String) throws -> Data {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        var position = 12
        while position + 8 <= data.count {
            let id = String(decoding: data[position..<position + 4], as: UTF8.self)
            let size = Int(data[position + 4]) | Int(data[position + 5]) << 8 | Int(data[position + 6]) << 16 | Int(data[position + 7]) << 24
            if id == "data" { return data[(position + 8)..<min(data.count, position + 8 + size)] }
            position += 8 + size + (size & 1)
        }
        throw ExternalTool.ToolFailure(description: "\(path) has no data chunk")
    }

    @Test(arguments: ADTSInteropTests.rates, ADTSInteropTests.layouts)
    func ourADTSDecodesCleanlyInFFmpegAndMatchesItsEncoder(rate: Int, channels: Int) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        let ours = directory.appendingPathComponent("ours.aac").path
        let theirs = directory.appendingPathComponent("theirs.aac").path
        try Self.makeWAV(rate: rate, channels: channels, to: wav, frequency: rate / 20)
        let bitrate = min(96_000, 6144 * channels * rate / 1024)
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", ours, "--bitrate", "\(bitrate)"])

        let check = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", ours, "-f", "null", "-"])
        #expect(check.status == 0)
        let messages = check.standardError.split(separator: "\n").filter { !$0.contains(Self.adtsDurationNote) }
        #expect(messages.isEmpty, "ffmpeg said: \(messages)")

        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", wav, "-c:a", "aac", "-b:a", "\(bitrate)", "-f", "adts", theirs])
        #expect(try Data(contentsOf: URL(fileURLWithPath: ours)) == Data(contentsOf: URL(fileURLWithPath: theirs)),
                "our ADTS differs from ffmpeg's at \(rate) Hz, \(channels) ch")
    }

    @Test(arguments: [(44100, 2), (48000, 1), (8000, 6), (96000, 2)])
    func ourDecodeIsSampleIdenticalToFFmpegs(rate: Int, channels: Int) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        let aac = directory.appendingPathComponent("in.aac").path
        try Self.makeWAV(rate: rate, channels: channels, to: wav)
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", wav, "-c:a", "aac", "-f", "adts", aac])
        try Self.expectSameDecode(aac, in: directory)
    }

    @Test(arguments: CorpusTests.adtsFiles)
    func corpusADTSDecodesLikeFFmpeg(name: String) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.expectSameDecode(try CorpusTests.corpusFile(name), in: directory, truncatedLastFrame: name.contains("truncated"))
    }

    static func expectSameDecode(_ aac: String, in directory: URL, truncatedLastFrame: Bool = false) throws {
        let ours = directory.appendingPathComponent("ours.wav").path
        let theirs = directory.appendingPathComponent("theirs.wav").path
        let result = try ExternalTool.run(try ExternalTool.keyframe, ["decode", aac, "-o", ours])
        // A frame cut short is damage: done, said, status 3.
        #expect(result.status == (truncatedLastFrame ? 3 : 0), "\(aac): \(result.standardError)")
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", aac, theirs])
        let a = try wavPayload(ours)
        let b = try wavPayload(theirs)
        if truncatedLastFrame {
            // ffmpeg decodes what it can of a cut-off last frame; we report it and stop before it.
            #expect(result.standardError.contains("truncated"))
            #expect(b.count >= a.count && b.prefix(a.count) == a)
        } else {
            #expect(a.count == b.count, "\(aac): \(a.count) bytes of PCM, ffmpeg \(b.count)")
            #expect(a == b, "\(aac): our PCM differs from ffmpeg's")
        }
        let probe = try ExternalTool.run("ffprobe", ["-v", "warning", ours])
        #expect(probe.standardError.isEmpty, "ffprobe said: \(probe.standardError)")
    }

    @Test func aDecodedToneComesBackWithItsFrequencyAndLevel() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("tone.wav").path
        let aac = directory.appendingPathComponent("tone.aac").path
        let out = directory.appendingPathComponent("out.wav").path
        // 1 kHz at −6 dBFS (amplitude 0.5), mono 48 kHz.
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi",
                                            "-i", "sine=frequency=1000:sample_rate=48000:duration=2", "-af", "volume=4.0",
                                            "-c:a", "pcm_s16le", wav])
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", aac, "--bitrate", "128k"])
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", aac, "-o", out])
        let pcm = try Self.wavPayload(out)
        let samples = stride(from: 0, to: pcm.count - 1, by: 2).map { index -> Double in
            let low = UInt16(pcm[pcm.startIndex + index]), high = UInt16(pcm[pcm.startIndex + index + 1])
            return Double(Int16(bitPattern: low | high << 8)) / 32768
        }
        let body = Array(samples[4096..<(samples.count - 4096)])
        let input = Array(try Self.wavPayload(wav))
        let inputPeak = stride(from: 0, to: input.count - 1, by: 2).map { abs(Double(Int16(bitPattern: UInt16(input[$0]) | UInt16(input[$0 + 1]) << 8))) }.max()! / 32768
        // Frequency from zero crossings; level as RMS against the input's.
        let crossings = zip(body, body.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
        let frequency = Double(crossings) / (Double(body.count) / 48000)
        #expect(abs(frequency - 1000) < 2, "decoded tone at \(frequency) Hz")
        let rms = (body.reduce(0) { $0 + $1 * $1 } / Double(body.count)).squareRoot()
        let expected = inputPeak / 2.squareRoot()
        #expect(abs(20 * log10(rms / expected)) < 0.5, "level \(20 * log10(rms)) dBFS, input \(20 * log10(expected)) dBFS")
    }
}
