import Foundation
import KeyFrameKit
import Testing

/// Issue 22: one registry of codecs (encoders and decoders by codec and profile), and the jobs
/// that get their codecs from it; a recording's wall-clock settings are `Duration`s.
@Suite struct CodecRegistryTests {
    /// A 440 Hz mono s16 tone at −6 dBFS peak, `frames` long.
    static func tone(frames: Int, rate: Int = 44100) -> [UInt8] {
        (0..<frames).flatMap { index -> [UInt8] in
            let word = UInt16(bitPattern: Int16((0.5 * 32767 * sin(2 * Double.pi * 440 * Double(index) / Double(rate))).rounded()))
            return [UInt8(word & 0xFF), UInt8(word >> 8)]
        }
    }

    static func scratchDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("CodecRegistryTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func anAACLCDecoderComesFromTheRegistry() throws {
        // 00010 0100 0010 000: AAC-LC, 44.1 kHz, stereo.
        let config = try AudioSpecificConfig(bytes: [0x12, 0x10])
        #expect(AudioCodecRegistry.profile(of: config) == .aacLC)
        let trim = GaplessTrim(priming: 1024, validFrameCount: 4096)
        let decoder = try AudioCodecRegistry.standard.decoder(for: .aac, profile: .aacLC,
                                                     settings: .init(audioSpecificConfig: config, outputSampleFormat: .float32, trim: trim))
        #expect(decoder.outputSampleFormat == .float32 && decoder.trim == trim)
        // No profile: the codec's decoder, for ADTS (whose headers configure it).
        let adts = try AudioCodecRegistry.standard.decoder(for: .aac, profile: nil, settings: .init(audioSpecificConfig: nil))
        #expect(adts.outputSampleFormat == .int16 && adts.trim == .none)
        // The decoder's own refusals still come through.
        #expect(throws: CodecError.self) {
            _ = try AudioCodecRegistry.standard.decoder(for: .aac, profile: .aacLC, settings: .init(audioSpecificConfig: config, outputSampleFormat: .uint8))
        }
    }

    @Test func aCodecWithNoDecoderIsCodecNotFoundNamingWhatThereIs() {
        #expect {
            _ = try AudioCodecRegistry.standard.decoder(for: .ac3, profile: nil, settings: .init(audioSpecificConfig: nil))
        } throws: { error in
            guard case .codecNotFound(let what)? = error as? CodecError else { return false }
            return what.contains("a decoder of ac3") && what.contains("decodes aac") && what.contains("LC")
        }
        #expect {
            _ = try AudioCodecRegistry.standard.decoder(for: .aac, profile: .twinVQ, settings: .init(audioSpecificConfig: nil))
        } throws: { error in
            guard case .codecNotFound(let what)? = error as? CodecError else { return false }
            return what.contains("a decoder of aac TwinVQ") || what.contains("a decoder of aac")
        }
    }

    @Test func anAACProfileNoDecoderTakesIsRefusedByName() throws {
        // 11111 001010 (42), 44100 Hz, stereo: xHE-AAC, which libavcodec decodes from 61.19.
        let config = try AudioSpecificConfig(bytes: [0xF9, 0x48, 0x40])
        #expect(AudioCodecRegistry.profile(of: config) == .usac)
        guard !AudioCodecRegistry.standard.decodes(.aac, profile: .usac) else { return }
        #expect {
            _ = try AudioCodecRegistry.standard.decoder(for: .aac, profile: .usac, settings: .init(audioSpecificConfig: config))
        } throws: { error in
            guard case .undecodable(_, let profile, _)? = error as? CodecError else { return false }
            return profile == "xHE-AAC"
        }
    }

    @Test func theRegistrysEncoderTellsItsBitrateAndConfig() throws {
        let format = PCMFormat(sampleRate: 8000, channelCount: 1, sampleFormat: .int16)
        let encoder = try AudioCodecRegistry.standard.encoder(for: .aac, profile: .aacLC,
                                                     settings: .init(bitrate: 128_000, lowersBitrateToFit: true, format: format))
        #expect(encoder.bitrate == AACEncoder.fittingBitrate(128_000, channels: 1, sampleRate: 8000))
        let config = try #require(encoder.audioSpecificConfig)
        #expect(config.samplingFrequency == 8000 && config.channelConfiguration == 1 && AudioCodecRegistry.profile(of: config) == .aacLC)
        let parallel = try AudioCodecRegistry.standard.encoder(for: .aac, profile: .aacLC, settings: .init(bitrate: 64_000, threads: 2))
        #expect(parallel.audioSpecificConfig == nil && parallel.bitrate == 64_000, "not open before its first buffer")
    }

    /// `Transcode.encode` through the registry's encoder, then `makeDecoder` through the
    /// registry's decoder: exactly the frames encoded come back.
    @Test func encodeAndDecodeGoThroughTheRegistry() throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let frames = 20_000
        let input = directory.appendingPathComponent("in.pcm").path
        try Data(Self.tone(frames: frames)).write(to: URL(fileURLWithPath: input))
        let format = PCMFormat(sampleRate: 44100, channelCount: 1, sampleFormat: .int16)
        let output = directory.appendingPathComponent("out.m4a").path
        let summary = try Transcode.encode(try PCMFileReader(rawPath: FilePath(input), format: format), to: FilePath(output))
        #expect(summary.inputFrames == Int64(frames) && summary.priming == 1024)
        #expect(summary.bitrate == AACEncoder.fittingBitrate(Transcode.defaultBitrate, channels: 1, sampleRate: 44100))
        #expect(summary.packets == Int64((frames + 1024 + 1023) / 1024) && summary.padding == Int(summary.packets) * 1024 - frames - 1024)

        let packets = try AudioPacketInput(path: FilePath(output))
        let decoder = try packets.makeDecoder(sampleFormat: .float32)
        #expect(decoder.outputSampleFormat == .float32 && decoder.trim.priming == 1024)
        var chain = packets.transformed(by: decoder)
        var decoded = 0
        while let buffer = try chain.next() { decoded += buffer.frameCount }
        #expect(decoded == frames)
    }

    @Test func recordingOptionsTakeDurationsAndMediaFileFormats() throws {
        var options = try RecordingOptions(outputPath: "live", container: .hlsPlaylist)
        #expect(options.container == .hlsPlaylist)
        #expect(options.hlsSegmentDuration == .seconds(6) && options.hlsPartDuration == nil && options.hlsStartDate == nil)
        options.hlsSegmentDuration = .seconds(2)
        options.hlsPartDuration = .milliseconds(500)
        options.hlsStartDate = .seconds(1_700_000_000) + .milliseconds(250)
        #expect(options.hlsPartDuration! * 4 == options.hlsSegmentDuration)
        #expect(options.frameLimit == nil)

        #expect(try RecordingOptions(outputPath: "a.pcm").container == .rawPCM)
        #expect(try RecordingOptions(outputPath: "a.wav").container == .wav)
        #expect(try RecordingOptions(outputPath: "a.aac").container == .adts)
        #expect(try RecordingOptions(outputPath: "a.m4a").container == .mp4)
        #expect(RecordingOptions.container(of: "a.m3u8") == nil, "HLS is asked for, never named")
        #expect(RecordingOptions.containers == [.rawPCM, .wav, .adts, .mp4, .hlsPlaylist, .mp3, .oggOpus, .flac])
        // A native container records its own codec.
        #expect(try RecordingOptions(outputPath: "a.mp3").codec == .mp3 && RecordingOptions(outputPath: "a.opus").codec == .opus
                && RecordingOptions(outputPath: "a.flac").codec == .flac && RecordingOptions(outputPath: "a.m4a").codec == .aac)
        #expect(throws: PipelineError.self) { try RecordingOptions(outputPath: "a.h264") }
        #expect(throws: PipelineError.self) { try RecordingOptions(outputPath: "a.m4a", container: .h264) }
    }

    /// The `Duration`s reach the HLS output: 1-s segments of 0.5-s parts, program date-times.
    @Test func aRecordingCutsHLSByItsDurations() throws {
        let (directory, _, configuration) = try RecorderTests.fixture(frames: 50_000)
        defer { try? FileManager.default.removeItem(at: directory) }
        let live = directory.appendingPathComponent("live")
        var options = try RecordingOptions(outputPath: FilePath(live.path), device: "kf_in", alsaConfiguration: configuration,
                                            frameLimit: 44_100 * 2, container: .hlsPlaylist)
        options.hlsSegmentDuration = .seconds(1)
        options.hlsPartDuration = .milliseconds(500)
        options.hlsStartDate = .seconds(1_700_000_000)
        let recording = try LiveEncoding(recording: options)
        try recording.start()
        var waited = 0
        while !recording.job.wait(timeout: .milliseconds(100)) && waited < 200 { waited += 1 }
        let summary = RecordingSummary(options, of: recording, summary: try recording.finish())
        #expect(summary.container == .hlsPlaylist && summary.frames == 88_200 && summary.priming == 1024)
        let names = try FileManager.default.contentsOfDirectory(atPath: live.path)
        let segments = names.filter { $0.hasPrefix("segment-") && $0.hasSuffix(".m4s") && $0.split(separator: ".").count == 2 }
        let parts = names.filter { $0.hasPrefix("segment-") && $0.split(separator: ".").count == 3 }
        #expect(segments.count >= 2, "\(names.sorted())")
        #expect(parts.count >= 4, "\(names.sorted())")
        let playlist = try String(contentsOf: live.appendingPathComponent("index.m3u8"), encoding: .utf8)
        #expect(playlist.contains("#EXT-X-PROGRAM-DATE-TIME:") && playlist.contains("#EXT-X-PART:") && playlist.contains("#EXT-X-ENDLIST"))
    }
}
