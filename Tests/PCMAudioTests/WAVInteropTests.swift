import Foundation
import MediaCore
import PCMAudio
import SystemPackage
import Testing
import TestSupport

/// WAV judged by FFmpeg and MediaInfo: every file ffmpeg writes reads with the format, frame count
/// and sample bytes ffprobe and ffmpeg give; every file WAVWriter writes passes `ffprobe -v
/// warning` and `ffmpeg -v warning` in silence with the same stream parameters, and its header is
/// byte for byte ffmpeg's (`-rf64 auto -fflags +bitexact`).
@Suite(.blocking) struct WAVInteropTests {
    static let layouts = [1, 2, 6]

    /// A 0.25 s tone written by ffmpeg as `codec` WAV.
    static func ffmpegWAV(_ codec: String, channels: Int, rate: Int = 44100, duration: String = "0.25",
                          extra: [String] = [], to path: String) throws {
        try Tool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi",
                                    "-i", "sine=frequency=440:sample_rate=\(rate):duration=\(duration)",
                                    "-ac", "\(channels)", "-c:a", codec] + extra + [path])
    }

    /// The sample bytes of `path` as ffmpeg sees them: its stream copied to the raw muxer.
    static func ffmpegSampleBytes(_ path: String, _ format: PCMSampleFormat) throws -> [UInt8] {
        Array(try Tool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-c:a", "copy", "-f", format.ffmpegRawFormat, "-"]).outputData)
    }

    /// Reads `path` with WAVReader and checks it against ffprobe and ffmpeg.
    ///
    /// - Parameter padCounted: the file is one of FFmpeg's RF64 files with odd data, whose `ds64`
    ///   data size counts the pad byte: ffprobe and ffmpeg see one frame more than we do.
    static func checkAgainstFFmpeg(_ path: String, sampleFormat: PCMSampleFormat, channels: Int, rate: Int = 44100,
                                   expectStreamedSize: Bool = false, padCounted: Bool = false,
                                   sourceLocation: SourceLocation = #_sourceLocation) throws {
        let probed = try Tool.ffprobe(path)
        let (reader, bytes) = try PCMRead.wavFile(path, maxFrames: 1000)
        #expect(reader.format == PCMFormat(sampleRate: rate, channelCount: channels, sampleFormat: sampleFormat), sourceLocation: sourceLocation)
        #expect(probed.codecName == sampleFormat.ffmpegCodec, sourceLocation: sourceLocation)
        #expect(probed.sampleRate == reader.format.sampleRate, sourceLocation: sourceLocation)
        #expect(probed.channels == reader.format.channelCount, sourceLocation: sourceLocation)
        if expectStreamedSize {
            #expect(reader.frameCount == nil, sourceLocation: sourceLocation)
        } else {
            #expect(reader.frameCount.map { $0 + (padCounted ? 1 : 0) } == probed.durationTS, sourceLocation: sourceLocation)
        }
        #expect(reader.framesRead == Int64(bytes.count / reader.format.bytesPerFrame), sourceLocation: sourceLocation)
        let theirs = try ffmpegSampleBytes(path, sampleFormat)
        #expect(bytes == (padCounted ? Array(theirs.dropLast()) : theirs), "sample bytes differ from ffmpeg's", sourceLocation: sourceLocation)
        #expect(reader.warnings.isEmpty, "\(reader.warnings)", sourceLocation: sourceLocation)
    }

    // MARK: - Files ffmpeg writes

    @Test(arguments: PCMSampleFormat.allCases, layouts)
    func readsWhatFFmpegWrites(sampleFormat: PCMSampleFormat, channels: Int) throws {
        let directory = try Tool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("tone.wav").path
        try Self.ffmpegWAV(sampleFormat.ffmpegCodec, channels: channels, to: path)
        try Self.checkAgainstFFmpeg(path, sampleFormat: sampleFormat, channels: channels)
        let reader = try WAVReader(source: try FileByteSource(path: FilePath(path)))
        #expect(reader.frameCount == 11025)
        if channels > 2 || sampleFormat.bytesPerSample > 2 {
            #expect(reader.formatTag == 0xFFFE)
            #expect(reader.channelMask == WAVChannelMask.defaultMask(channelCount: channels))
        } else {
            #expect(reader.formatTag == 1)
            #expect(reader.channelMask == nil)
        }
    }

    static let variants: [(name: String, codec: PCMSampleFormat, channels: Int, rate: Int, extra: [String])] = [
        ("rf64 always", .int16, 2, 44100, ["-rf64", "always"]),
        ("rf64 always float", .float32, 6, 48000, ["-rf64", "always"]),
        ("rf64 auto", .int24, 1, 44100, ["-rf64", "auto"]),
        ("LIST metadata", .int16, 2, 44100, ["-metadata", "title=x", "-metadata", "artist=Somebody Odd"]),
        ("bext", .uint8, 1, 22050, ["-write_bext", "1", "-metadata", "description=odd length"]),
        ("96 kHz", .int16, 2, 96000, []),
        ("8 kHz odd u8", .uint8, 1, 8000, ["-t", "0.100125"]),
        ("bitexact", .float64, 2, 44100, ["-fflags", "+bitexact"]),
        ("rf64 always odd u8", .uint8, 1, 8000, ["-t", "0.100125", "-rf64", "always"]),
    ]

    @Test(arguments: variants.indices)
    func readsFFmpegVariants(index: Int) throws {
        let variant = Self.variants[index]
        let directory = try Tool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("tone.wav").path
        try Self.ffmpegWAV(variant.codec.ffmpegCodec, channels: variant.channels, rate: variant.rate, extra: variant.extra, to: path)
        let padCounted = variant.name == "rf64 always odd u8"
        try Self.checkAgainstFFmpeg(path, sampleFormat: variant.codec, channels: variant.channels, rate: variant.rate, padCounted: padCounted)
        let reader = try WAVReader(source: try FileByteSource(path: FilePath(path)))
        #expect(reader.isRF64 == variant.extra.contains("always"), "\(variant.name)")
        if padCounted {
            #expect(reader.frameCount == 801)
            #expect(reader.ds64SampleCount == 801)
        }
    }

    @Test func readsWhatFFmpegStreamsToAPipe() throws {
        let directory = try Tool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("piped.wav").path
        let piped = try Tool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=0.25",
                                                "-ac", "2", "-c:a", "pcm_f32le", "-f", "wav", "-"])
        try piped.outputData.write(to: URL(fileURLWithPath: path))
        // FFmpeg leaves 0xFFFFFFFF in the RIFF and data sizes when it cannot seek back.
        #expect(Array(piped.outputData.prefix(8)) == Array("RIFF".utf8) + [0xFF, 0xFF, 0xFF, 0xFF])
        try Self.checkAgainstFFmpeg(path, sampleFormat: .float32, channels: 2, rate: 48000, expectStreamedSize: true)
        let (reader, bytes) = try PCMRead.wavFile(path)
        #expect(bytes.count == 12000 * 8)
        #expect(reader.framesRead == 12000)
    }

    // MARK: - Files WAVWriter writes

    /// Writes `frames` frames of a tone-like ramp with WAVWriter to a committed file.
    static func writeOurs(_ format: PCMFormat, frames: Int, to path: String, rf64Threshold: Int64 = Int64(UInt32.max) - 1) throws -> [UInt8] {
        let data = WAVBytes.noise(frames * format.bytesPerFrame, seed: UInt64(format.bytesPerFrame))
            .enumerated().map { index, byte in
                // Keep floats finite and small: clear the exponent's top bits of each sample.
                switch format.sampleFormat {
                case .float32 where index % 4 == 3, .float64 where index % 8 == 7: byte & 0x3F
                default: byte
                }
            }
        let sink = try FileByteSink(path: FilePath(path))
        var writer = try WAVWriter(sink: sink, format: format, rf64Threshold: rf64Threshold)
        for start in stride(from: 0, to: data.count, by: 997 * format.bytesPerFrame) {
            try writer.write(Array(data[start..<min(data.count, start + 997 * format.bytesPerFrame)]))
        }
        try writer.finish()
        try sink.commit()
        return data
    }

    /// Whether WAVWriter (like FFmpeg) writes a channel mask for `format`: WAVEFORMATEXTENSIBLE
    /// for more than two channels, more than 16 bits or more than 48 kHz.
    static func hasMask(_ format: PCMFormat) -> Bool {
        format.channelCount > 2 || format.sampleFormat.bytesPerSample > 2 || format.sampleRate > 48000
    }

    /// ffprobe at `-v warning` prints nothing and agrees on the stream; ffmpeg decodes it at
    /// `-v warning` with no message but, for a mono or stereo file without a channel mask (as
    /// FFmpeg writes them too), the "Guessed Channel Layout" line that FFmpeg 5.1 prints for
    /// every such WAV (DESIGN.md).
    static func checkPeersAccept(_ path: String, format: PCMFormat, frames: Int, layout: String? = nil,
                                 sourceLocation: SourceLocation = #_sourceLocation) throws {
        let probed = try Tool.ffprobe(path)
        #expect(probed.warnings.isEmpty, "ffprobe -v warning: \(probed.warnings)", sourceLocation: sourceLocation)
        #expect(probed.codecName == format.sampleFormat.ffmpegCodec, sourceLocation: sourceLocation)
        #expect(probed.sampleFormat == format.sampleFormat.ffprobeSampleFormat, sourceLocation: sourceLocation)
        #expect(probed.sampleRate == format.sampleRate, sourceLocation: sourceLocation)
        #expect(probed.channels == format.channelCount, sourceLocation: sourceLocation)
        #expect(probed.durationTS == Int64(frames), sourceLocation: sourceLocation)
        let masked = hasMask(format)
        if let layout { #expect(probed.channelLayout == (masked ? layout : nil), sourceLocation: sourceLocation) }
        let decoded = try Tool.succeed("ffmpeg", ["-nostdin", "-v", "warning", "-i", path, "-f", "null", "-"])
        let guessed = "\(PeerQuirk.wavChannelLayoutGuess.rawValue) for Input Stream #0.0 : \(format.channelCount == 1 ? "mono" : "stereo")\n"
        #expect(decoded.standardError == (masked ? "" : guessed), "ffmpeg -v warning: \(decoded.standardError)", sourceLocation: sourceLocation)
    }

    @Test(arguments: PCMSampleFormat.allCases, layouts)
    func ffprobeAcceptsWhatWeWrite(sampleFormat: PCMSampleFormat, channels: Int) throws {
        let directory = try Tool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ours.wav").path
        let format = PCMFormat(sampleRate: 44100, channelCount: channels, sampleFormat: sampleFormat)
        let data = try Self.writeOurs(format, frames: 4411, to: path)
        try Self.checkPeersAccept(path, format: format, frames: 4411, layout: ["mono", "stereo", "5.1"][Self.layouts.firstIndex(of: channels) ?? 0])
        #expect(try Self.ffmpegSampleBytes(path, sampleFormat) == data)
    }

    @Test(arguments: [8000, 11025, 48000, 96000, 192_000, 384_000])
    func ffprobeAcceptsEveryRate(rate: Int) throws {
        let directory = try Tool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ours.wav").path
        let format = PCMFormat(sampleRate: rate, channelCount: 2, sampleFormat: .int16)
        _ = try Self.writeOurs(format, frames: 1001, to: path)
        try Self.checkPeersAccept(path, format: format, frames: 1001, layout: "stereo")
    }

    @Test(arguments: [3, 4, 5, 7, 8, 10, 64])
    func ffprobeAcceptsOtherChannelCounts(channels: Int) throws {
        let directory = try Tool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ours.wav").path
        let format = PCMFormat(sampleRate: 48000, channelCount: channels, sampleFormat: .int16)
        _ = try Self.writeOurs(format, frames: 480, to: path)
        try Self.checkPeersAccept(path, format: format, frames: 480)
    }

    @Test(arguments: PCMSampleFormat.allCases, layouts)
    func headerIsByteForByteFFmpegs(sampleFormat: PCMSampleFormat, channels: Int) throws {
        let directory = try Tool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ffmpeg.wav").path
        // 0.100125 s at 8 kHz is 801 frames: odd data (pad byte) for u8 mono and 24-bit mono.
        try Self.ffmpegWAV(sampleFormat.ffmpegCodec, channels: channels, rate: 8000, duration: "0.100125",
                           extra: ["-rf64", "auto", "-fflags", "+bitexact"], to: path)
        let theirs = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let read = try PCMRead.wav(theirs)
        var writer = try WAVWriter(sink: ArrayByteSink(), format: read.format)
        try writer.write(read.bytes)
        try writer.finish()
        #expect(read.frameCount == 801)
        #expect(writer.sink.bytes == theirs)
    }

    @Test(arguments: [(PCMSampleFormat.int16, 2), (.uint8, 1), (.float32, 6), (.int24, 1)])
    func forcedRF64PassesFFprobeAndMediaInfo(sampleFormat: PCMSampleFormat, channels: Int) throws {
        let directory = try Tool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ours-rf64.wav").path
        let format = PCMFormat(sampleRate: 48000, channelCount: channels, sampleFormat: sampleFormat)
        let data = try Self.writeOurs(format, frames: 4801, to: path, rf64Threshold: 1000)
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(4)) == Array("RF64".utf8))
        try Self.checkPeersAccept(path, format: format, frames: 4801)
        #expect(try Self.ffmpegSampleBytes(path, sampleFormat) == data)
        let (reader, bytes) = try PCMRead.wavFile(path)
        #expect(reader.isRF64)
        #expect(reader.frameCount == 4801)
        #expect(reader.ds64SampleCount == 4801)
        #expect(bytes == data)
        // MediaInfo 23.04 counts the pad byte after odd data as data (in FFmpeg's files too):
        // one sample more for 8-bit mono.
        let dataBytes = 4801 * format.bytesPerFrame
        let padded = (dataBytes + dataBytes % 2) / format.bytesPerFrame
        let info = try Self.mediaInfo(path)
        #expect(info == "PCM|\(padded)|48000|\(channels)|\(sampleFormat.bytesPerSample * 8)", "mediainfo: \(info)")
    }

    @Test func mediaInfoReadsWhatWeWrite() throws {
        let directory = try Tool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (sampleFormat, channels) in [(PCMSampleFormat.int16, 2), (.int24, 6), (.float64, 1)] {
            let path = directory.appendingPathComponent("ours-\(sampleFormat)-\(channels).wav").path
            let format = PCMFormat(sampleRate: 44100, channelCount: channels, sampleFormat: sampleFormat)
            _ = try Self.writeOurs(format, frames: 44100, to: path)
            let info = try Self.mediaInfo(path)
            #expect(info == "PCM|44100|44100|\(channels)|\(sampleFormat.bytesPerSample * 8)", "mediainfo: \(info)")
        }
    }

    /// MediaInfo's format, sample count, rate, channels and bit depth of the first audio track.
    static func mediaInfo(_ path: String) throws -> String {
        try Tool.succeed("mediainfo", ["--Inform=Audio;%Format%|%SamplingCount%|%SamplingRate%|%Channel(s)%|%BitDepth%", path])
            .standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
