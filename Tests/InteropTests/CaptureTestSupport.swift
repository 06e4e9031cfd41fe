import Foundation
import MediaCore
import Testing
import TestSupport

/// Signals, ALSA file-plugin devices and peer checks shared by the issue 6 suites
/// (RecordCommandTests, PlayCommandTests, DevicesCommandTests).
enum CaptureCheck {
    // MARK: - Signals

    /// Interleaved s16 samples of one sine per channel, `peakDBFS` below full scale (32768).
    static func tone(frames: Int, rate: Int, frequencies: [Double], peakDBFS: Double = -12) -> [Int16] {
        let amplitude = 32768 * pow(10, peakDBFS / 20)
        var samples = [Int16](repeating: 0, count: frames * frequencies.count)
        for frame in 0..<frames {
            for (channel, frequency) in frequencies.enumerated() {
                let value = amplitude * sin(2 * Double.pi * frequency * Double(frame) / Double(rate))
                samples[frame * frequencies.count + channel] = Int16(value.rounded())
            }
        }
        return samples
    }

    /// Little-endian bytes of s16 samples.
    static func bytes(_ samples: [Int16]) -> Data {
        var data = Data(count: samples.count * 2)
        data.withUnsafeMutableBytes { raw in
            for (index, sample) in samples.enumerated() { raw.storeBytes(of: sample.littleEndian, toByteOffset: index * 2, as: Int16.self) }
        }
        return data
    }

    /// s16 samples of little-endian bytes (an odd trailing byte is dropped).
    static func samples(_ data: Data) -> [Int16] {
        let count = data.count / 2
        var samples = [Int16](repeating: 0, count: count)
        samples.withUnsafeMutableBytes { raw in _ = data.prefix(count * 2).copyBytes(to: raw) }
        return samples.map { Int16(littleEndian: $0) }
    }

    /// A canonical 16-bit PCM WAV of `samples`.
    static func writeWAV(_ samples: [Int16], rate: Int, channels: Int, to path: String) throws {
        func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> ($0 * 8)) } }
        func le16(_ v: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)] }
        let payload = bytes(samples)
        var header = Array("RIFF".utf8) + le32(36 + payload.count) + Array("WAVEfmt ".utf8) + le32(16)
        header += le16(1) + le16(channels) + le32(rate) + le32(rate * channels * 2) + le16(channels * 2) + le16(16)
        header += Array("data".utf8) + le32(payload.count)
        try (Data(header) + payload).write(to: URL(fileURLWithPath: path))
    }

    /// One channel of interleaved samples, as floats in [-1, 1).
    static func channel(_ samples: [Int16], _ channel: Int, of channels: Int) -> [Double] {
        stride(from: channel, to: samples.count, by: channels).map { Double(samples[$0]) / 32768 }
    }

    /// The frequency from the rising zero crossings (interpolated between samples) of `x`.
    static func frequency(_ x: ArraySlice<Double>, rate: Int) -> Double? {
        var first: Double?, last = 0.0, count = 0
        var index = x.startIndex + 1
        while index < x.endIndex {
            let (a, b) = (x[index - 1], x[index])
            if a < 0 && b >= 0 {
                let time = Double(index - 1) + a / (a - b)
                if first == nil { first = time }
                last = time
                count += 1
            }
            index += 1
        }
        guard let first, count >= 3, last > first else { return nil }
        return Double(count - 1) / (last - first) * Double(rate)
    }

    /// RMS in dBFS, 0 dBFS being a full-scale square wave (ffmpeg's astats and sox: a sine with
    /// peaks at −12 dBFS is at −15.05 dBFS).
    static func rmsDBFS(_ x: ArraySlice<Double>) -> Double {
        guard !x.isEmpty else { return -.infinity }
        return 10 * log10(x.reduce(0) { $0 + $1 * $1 } / Double(x.count))
    }

    static func peakDBFS(_ x: ArraySlice<Double>) -> Double {
        20 * log10(x.reduce(0) { max($0, abs($1)) })
    }

    /// Signal-to-error ratio in dB of `decoded` against `reference`, channel by channel, over
    /// frames `range`: how well a lossy decode lines up with its input. A 1–1.5 kHz tone through
    /// AAC at 128 kb/s gives about 31 dB at lag 0 and below 24 dB one sample off.
    static func snrDB(reference: [Int16], decoded: [Int16], channels: Int, frames range: Range<Int>) -> [Double] {
        (0..<channels).map { channel in
            var signal = 0.0, error = 0.0
            for frame in range {
                let r = Double(reference[frame * channels + channel])
                let d = Double(decoded[frame * channels + channel])
                signal += r * r
                error += (r - d) * (r - d)
            }
            return error == 0 ? .infinity : 10 * log10(signal / error)
        }
    }

    /// Each channel of `samples` over frames `range` holds a sine of `frequencies[c]` (within
    /// `hertz`) at an RMS level within `decibels` of `rms[c]`.
    static func expectTone(_ samples: [Int16], channels: Int, rate: Int, frames range: Range<Int>, frequencies: [Double],
                           rms: [Double], hertz: Double = 2, decibels: Double = 0.5, _ what: String,
                           sourceLocation: SourceLocation = #_sourceLocation) {
        for channel in 0..<channels {
            let x = self.channel(samples, channel, of: channels)
            let window = x[max(0, range.lowerBound)..<min(x.count, range.upperBound)]
            #expect(window.count >= rate / 2, "\(what): only \(window.count) frames to analyse in \(range) of \(x.count)",
                    sourceLocation: sourceLocation)
            // The median over 0.1-s pieces: a dropout of a loaded machine (a few ms of silence
            // in a real-time stream) spoils one piece, not the measure; a wrong pitch spoils all.
            let frequency = self.medianFrequency(window, rate: rate)
            #expect(frequency.map { abs($0 - frequencies[channel]) <= hertz } == true,
                    "\(what), channel \(channel): frequency \(frequency.map { "\($0)" } ?? "none") Hz, want \(frequencies[channel]) ± \(hertz)",
                    sourceLocation: sourceLocation)
            let level = rmsDBFS(window)
            #expect(abs(level - rms[channel]) <= decibels,
                    "\(what), channel \(channel): RMS \(level) dBFS, want \(rms[channel]) ± \(decibels)", sourceLocation: sourceLocation)
        }
    }

    /// The median of ``frequency(_:rate:)`` over the 0.1-s pieces of `x` (the whole when shorter).
    static func medianFrequency(_ x: ArraySlice<Double>, rate: Int) -> Double? {
        let piece = rate / 10
        guard x.count >= 2 * piece else { return frequency(x, rate: rate) }
        let estimates = stride(from: x.startIndex, to: x.endIndex - piece + 1, by: piece).compactMap { start in
            frequency(x[start..<(start + piece)], rate: rate)
        }.sorted()
        return estimates.isEmpty ? nil : estimates[estimates.count / 2]
    }

    /// The first frame in which some channel exceeds `threshold` of full scale: where the tone
    /// starts after PulseAudio's start-up silence.
    static func firstLoudFrame(_ samples: [Int16], channels: Int, threshold: Double = 0.05) -> Int? {
        let limit = Int16(threshold * 32768)
        return samples.firstIndex { abs(Int($0)) > Int(limit) }.map { $0 / channels }
    }

    // MARK: - ALSA file-plugin devices

    /// An asound.conf defining capture PCM `kf_in` (reads `input`; silence past its end) and
    /// playback PCM `kf_out` (writes `output`): raw data in whatever format the device is opened with.
    static func alsaConfiguration(in directory: URL, input: String? = nil, output: String? = nil) throws -> String {
        var text = ""
        if let input {
            text += "pcm.kf_in { type file slave.pcm { type null } file \"/dev/null\" infile \"\(input)\" format \"raw\" }\n"
        }
        if let output {
            text += "pcm.kf_out { type file slave.pcm { type null } file \"\(output)\" format \"raw\" }\n"
        }
        let path = directory.appendingPathComponent("asound.conf").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    // MARK: - Peers

    /// The interleaved s16 samples ffmpeg decodes from `file` (its own rate and channel count).
    static func ffmpegSamples(_ file: String, in directory: URL) throws -> [Int16] {
        let raw = directory.appendingPathComponent("ffmpeg-\(UUID().uuidString).s16").path
        defer { try? FileManager.default.removeItem(atPath: raw) }
        try MP4Check.ffmpeg(["-i", file, "-f", "s16le", "-c:a", "pcm_s16le", raw])
        return samples(try Data(contentsOf: URL(fileURLWithPath: raw)))
    }

    /// ffprobe's first audio stream: rate, channels, and `duration_ts` (frames, for WAV and MP4;
    /// from the edit list when there is one).
    static func ffprobeStream(_ file: String) throws -> (sampleRate: Int, channels: Int, durationTS: Int?, duration: Double?) {
        let result = try ExternalTool.succeed("ffprobe", ["-v", "error", "-select_streams", "a:0",
                                                          "-show_entries", "stream=sample_rate,channels,duration_ts,duration", "-of", "json", file])
        let object = try JSONSerialization.jsonObject(with: result.outputData) as? [String: Any]
        let stream = (object?["streams"] as? [[String: Any]])?.first ?? [:]
        let durationTS = stream["duration_ts"] as? Int
        return (Int(stream["sample_rate"] as? String ?? "") ?? -1, stream["channels"] as? Int ?? -1, durationTS,
                Double(stream["duration"] as? String ?? ""))
    }

    /// What `ffprobe -v warning FILE` says, less the lines FFmpeg 5.1 prints for every file of a
    /// kind (``PeerQuirk``: "Estimating duration from bitrate" for ADTS, "Guessed Channel Layout"
    /// for a WAV without a channel mask).
    static func ffprobeWarnings(_ file: String) throws -> String {
        try PeerQuirk.ffprobeWarnings(file, quirks: [.adtsDurationEstimate, .wavChannelLayoutGuess])
    }

    /// What `ffmpeg -v error -i FILE -f null -` says (empty when it decodes cleanly).
    static func ffmpegErrors(_ file: String) throws -> String {
        let decode = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", file, "-f", "null", "-"])
        return (decode.status == 0 ? "" : "ffmpeg exited \(decode.status)\n") + decode.standardError.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The data chunk of a WAV: the size its header declares, and its offset.
    static func wavDataChunk(_ path: String) throws -> (offset: Int, declaredSize: Int) {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        var position = 12
        while position + 8 <= data.count {
            let id = String(decoding: data[position..<position + 4], as: UTF8.self)
            let size = Int(data[position + 4]) | Int(data[position + 5]) << 8 | Int(data[position + 6]) << 16 | Int(data[position + 7]) << 24
            if id == "data" { return (position + 8, size) }
            position += 8 + size + (size & 1)
        }
        throw ExternalTool.ToolFailure(description: "\(path) has no data chunk")
    }

    // MARK: - keyframe

    /// A duration in seconds.
    static func seconds(_ duration: Duration) -> Double {
        duration.inSeconds
    }

    /// The JSON object a `--json` command printed on stdout.
    static func json(_ result: Subprocess.Result, _ what: String) throws -> [String: Any] {
        guard let object = try? JSONSerialization.jsonObject(with: result.outputData) as? [String: Any] else {
            throw ExternalTool.ToolFailure(description: "\(what): stdout is not one JSON object: \(result.standardOutput)")
        }
        return object
    }

    /// The JSON array of numbers `key`.
    static func numbers(_ object: [String: Any], _ key: String) -> [Double] {
        (object[key] as? [Any])?.compactMap { ($0 as? NSNumber)?.doubleValue } ?? []
    }
}
