import AACBitstream
import Foundation
import MediaCore
import MPEGTS
import TestSupport
import Testing

/// What we mux judged by the peers an SRT receiver runs: ffprobe and ffmpeg (libavformat's
/// mpegts demuxer), GStreamer's tsdemux. A real AAC stream made by ffmpeg is muxed by us; the
/// peers must read it without a word on stderr, decode every frame to the same PCM as the ADTS
/// input, and see frame-spaced, monotonic timestamps — also with the program tables repeated
/// mid-stream as a reconnect does.
@Suite(.blocking) struct TransportStreamInteropTests {
    struct Input {
        var directory: URL
        var adts: String
        var config: AudioSpecificConfig
        var frames: [[UInt8]]
    }

    /// A 5-second tone encoded by ffmpeg's AAC encoder to ADTS, and its frames as our ADTSReader
    /// reads them.
    static func makeInput(rate: Int, channels: Int) throws -> Input {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyframe-mpegts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let adts = directory.appendingPathComponent("tone.aac").path
        try Subprocess.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=\(rate):duration=5",
                                          "-ac", "\(channels)", "-c:a", "aac", "-b:a", "128k", "-f", "adts", adts])
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: adts)))
        var reader = ADTSReader(source: ArrayByteSource(bytes))
        var frames: [[UInt8]] = []
        var first: ADTSHeader?
        while let frame = try reader.nextFrame() {
            first = first ?? frame.header
            frames.append(Array(frame.payload))
        }
        let header = try #require(first)
        let config = try AudioSpecificConfig(sampleRate: try #require(header.sampleRate), channelCount: Int(header.channelConfiguration))
        return Input(directory: directory, adts: adts, config: config, frames: frames)
    }

    /// Our transport stream of the input's frames; `reconnects` are frame indices before which
    /// the tables are written again (as the SRT publisher does on a reconnect).
    static func mux(_ input: Input, reconnects: Set<Int> = [], name: String = "ours.ts") throws -> String {
        var muxer = try TransportStreamMuxer(audioSpecificConfig: input.config)
        var out = muxer.programTables()
        for (index, frame) in input.frames.enumerated() {
            if reconnects.contains(index) { out += muxer.programTables() }
            out += try muxer.write(frame: frame, sampleTime: Int64(index) * 1024)
        }
        out += muxer.flush()
        let path = input.directory.appendingPathComponent(name).path
        try Data(out).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The MD5 of every decoded frame (`ffmpeg -f framemd5`), and what ffmpeg said on stderr.
    static func decodedFrameHashes(_ file: String) throws -> (hashes: [String], stderr: String) {
        let run = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", file, "-map", "0:a", "-f", "framemd5", "-"])
        #expect(run.status == 0, "ffmpeg exited \(run.status): \(run.standardError)")
        let hashes = run.standardOutput.split(separator: "\n").filter { !$0.hasPrefix("#") }
            .compactMap { $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } }
        return (hashes, run.standardError)
    }

    static let cases: [(rate: Int, channels: Int)] = [(44100, 1), (48000, 2), (22050, 2), (8000, 1)]

    @Test(arguments: cases.indices, [false, true])
    func peersReadOurStreamCleanly(caseIndex: Int, withReconnects: Bool) throws {
        let (rate, channels) = Self.cases[caseIndex]
        let input = try Self.makeInput(rate: rate, channels: channels)
        defer { try? FileManager.default.removeItem(at: input.directory) }
        let reconnects: Set<Int> = withReconnects ? [37, 38, 101, input.frames.count - 1] : []
        let file = try Self.mux(input, reconnects: reconnects)

        // ffprobe: one AAC stream with the input's rate and channels, and nothing on stderr.
        let probe = try Subprocess.run("ffprobe", ["-v", "error", "-show_streams", "-of", "json", file])
        #expect(probe.status == 0)
        #expect(probe.standardError.isEmpty, "ffprobe: \(probe.standardError)")
        let streams = try #require((try JSONSerialization.jsonObject(with: probe.outputData) as? [String: Any])?["streams"] as? [[String: Any]])
        #expect(streams.count == 1)
        #expect(streams.first?["codec_name"] as? String == "aac")
        #expect(streams.first?["sample_rate"] as? String == "\(rate)")
        #expect(streams.first?["channels"] as? Int == channels)
        #expect(streams.first?["profile"] as? String == "LC")
        let warnings = try Subprocess.run("ffprobe", ["-v", "warning", "-hide_banner", file])
        #expect(warnings.status == 0 && warnings.standardError.isEmpty, "ffprobe -v warning: \(warnings.standardError)")

        // ffprobe -show_packets: one packet per frame, from 1.4 s, a frame apart (to the tick).
        let packets = try Subprocess.run("ffprobe", ["-v", "error", "-select_streams", "a", "-show_entries", "packet=pts",
                                                     "-of", "json", file])
        #expect(packets.standardError.isEmpty, "ffprobe -show_packets: \(packets.standardError)")
        let json = try JSONSerialization.jsonObject(with: packets.outputData) as? [String: Any]
        let times = try #require(json?["packets"] as? [[String: Any]]).compactMap { $0["pts"] as? Int }
        #expect(times.count == input.frames.count)
        #expect(times.first == 126_000)
        // libavformat times the frames after the first of a PES packet by adding their duration
        // in whole ticks (2089 at 44.1 kHz for 2089.8), so a frame may be off by a tick per frame
        // of the PES packet; each PES packet's PTS puts it right again.
        let frameTicks = Double(1024 * 90_000) / Double(rate)
        let slack = Double(TransportStreamMuxer.defaultFramesPerPES(sampleRate: rate))
        #expect(zip(times, times.dropFirst()).allSatisfy { abs(Double($1 - $0) - frameTicks) <= slack }, "packet times are not frame-spaced")
        #expect(times.enumerated().allSatisfy { abs(Double($0.element - 126_000) - Double($0.offset) * frameTicks) <= slack }, "packet times drift")

        // ffmpeg decodes every frame, silently, to the same PCM as the ADTS input.
        let ours = try Self.decodedFrameHashes(file)
        let reference = try Self.decodedFrameHashes(input.adts)
        #expect(ours.stderr.isEmpty, "ffmpeg: \(ours.stderr)")
        #expect(reference.hashes.count == input.frames.count)
        #expect(ours.hashes == reference.hashes)

        // GStreamer: tsdemux ! aacparse ! avdec_aac decodes every frame without a warning, the
        // timestamps a frame apart.
        let gst = try Subprocess.run("gst-launch-1.0", ["filesrc", "location=\(file)", "!", "tsdemux", "!", "aacparse", "!", "avdec_aac",
                                                        "!", "fakesink", "silent=false", "-v"])
        #expect(gst.status == 0, "gst-launch-1.0 exited \(gst.status): \(gst.standardError)")
        let said = (gst.standardOutput + gst.standardError).split(separator: "\n")
        #expect(!said.contains { $0.contains("WARNING") || $0.contains("ERROR") }, "GStreamer: \(gst.standardError)")
        let buffers = said.filter { $0.contains("last-message = chain") }.compactMap { line -> Double? in
            guard let range = line.range(of: "pts: ") else { return nil }
            let clock = line[range.upperBound...].prefix { $0 != "," }.split(separator: ":").compactMap { Double($0) }
            return clock.count == 3 ? clock[0] * 3600 + clock[1] * 60 + clock[2] : nil
        }
        #expect(buffers.count == input.frames.count)
        let frameSeconds = 1024 / Double(rate)
        #expect(zip(buffers, buffers.dropFirst()).allSatisfy { abs($1 - $0 - frameSeconds) < 0.0001 }, "GStreamer's buffers are not frame-spaced")
    }

    /// Our reader on FFmpeg's muxer (SDT, PAT, PMT, PES packets of several frames): the same frames
    /// as the ADTS input, PTS from 1.4 s, no discontinuity.
    @Test(arguments: cases.indices)
    func ourReaderReadsFFmpegsStream(caseIndex: Int) throws {
        let (rate, channels) = Self.cases[caseIndex]
        let input = try Self.makeInput(rate: rate, channels: channels)
        defer { try? FileManager.default.removeItem(at: input.directory) }
        let file = input.directory.appendingPathComponent("ffmpeg.ts").path
        try Subprocess.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", input.adts, "-c", "copy", "-f", "mpegts", file])
        var reader = TransportStreamReader(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: file))))
        let packets = try reader.readAll()
        #expect(reader.statistics.continuityErrorCount == 0 && reader.statistics.droppedPESCount == 0)
        #expect(reader.programMapTable?.adtsAudioStream?.pid == TransportStreamMuxer.audioPID)
        #expect(packets.first?.pes.presentationTime == 126_000)
        var frames: [[UInt8]] = []
        for packet in packets {
            var adts = ADTSReader(source: ArrayByteSource(packet.pes.payload))
            while let frame = try adts.nextFrame() { frames.append(Array(frame.payload)) }
        }
        #expect(frames == input.frames)
    }
}
