import AACBitstream
import Foundation
import MediaCore
import Testing
import TestSupport

/// Our ADTS and AAC configuration parsing judged by FFmpeg: for files ffmpeg writes at every AAC
/// rate in mono, stereo and 5.1, `keyframe probe --json` agrees with ffprobe, and every ADTS
/// header, AudioSpecificConfig and esds writes back to the same bytes.
@Suite(.blocking) struct ADTSInteropTests {
    static let rates = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000]
    static let layouts = [1, 2, 6]

    static func encode(rate: Int, channels: Int, to output: String, extra: [String] = []) throws {
        try ExternalTool.succeed("ffmpeg", ["-v", "error", "-y", "-f", "lavfi",
                                            "-i", "sine=frequency=440:sample_rate=\(rate):duration=0.7",
                                            "-ac", "\(channels)", "-c:a", "aac"] + extra + [output])
    }

    @Test(arguments: rates, layouts)
    func probeAgreesWithFFprobe(rate: Int, channels: Int) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("tone.aac").path
        try Self.encode(rate: rate, channels: channels, to: file, extra: ["-f", "adts"])

        let peer = try ExternalTool.ffprobeAudio(file)
        let ours = try ExternalTool.probeJSON(file)
        #expect(ours["format"] as? String == "adts")
        let track = try #require((ours["tracks"] as? [[String: Any]])?.first)
        #expect(track["type"] as? String == "audio")
        #expect(track["codec"] as? String == "aac")
        #expect(track["sampleRate"] as? Int == peer.sampleRate)
        #expect(track["channels"] as? Int == peer.channels)
        #expect(track["sampleCount"] as? Int == peer.packets)
        #expect(track["profile"] as? String == peer.profile)
        let packets = try #require(track["sampleCount"] as? Int)
        let duration = try #require(track["duration"] as? Double)
        #expect(abs(duration - Double(packets * 1024) / Double(rate)) < 1e-9, "duration is computed from the frames")
        #expect(ours["damageCount"] as? Int == 0)
        #expect(ours["bytesSkipped"] as? Int == 0)

        // Every header writes back to its own bytes, and the frames cover the file.
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
        var reader = ADTSReader(source: ArrayByteSource(bytes), chunkSize: 4096)
        var covered = 0
        while let frame = try reader.nextFrame() {
            #expect(try frame.header.serialized()[...] == frame.bytes[0..<frame.header.headerLength])
            covered += frame.bytes.count
        }
        #expect(covered == bytes.count)
    }

    @Test(arguments: rates, layouts)
    func esdsAndAudioSpecificConfigOfFFmpegM4AWriteBackIdentically(rate: Int, channels: Int) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("tone.m4a").path
        try Self.encode(rate: rate, channels: channels, to: file)
        let peer = try ExternalTool.ffprobeAudio(file)

        let boxes = ESDSLocator.payloads(in: Array(try Data(contentsOf: URL(fileURLWithPath: file))))
        #expect(boxes.count == 1)
        for box in boxes {
            let descriptor = try ESDescriptor(esdsBoxPayload: box.payload, baseOffset: Int64(box.offset))
            #expect(try descriptor.esdsBoxPayload() == box.payload)
            let info = try #require(descriptor.decoderConfig.decoderSpecificInfo)
            // libavcodec's native encoder: the 2-byte ASC plus the 0x2B7 extension, 5 bytes.
            #expect(info.count == 5)
            let config = try AudioSpecificConfig(bytes: info)
            #expect(try config.serialized() == info)
            #expect(config.outputSampleRate == peer.sampleRate)
            #expect(config.channelCount == peer.channels)
            #expect(config.syncExtension?.sbrPresent == false)
            #expect(config.profileName == peer.profile)
        }
    }
}
