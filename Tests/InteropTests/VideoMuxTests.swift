import Foundation
import Testing
import TestSupport

/// `keyframe mux IN.aac --video IN.h264|IN.h265`: files ffprobe and ffmpeg read without a word,
/// with every packet, and B-frames presented in picture-order-count order (ctts), which FFmpeg's
/// own raw remux cannot do.
@Suite(.blocking) struct VideoMuxTests {
    static let cases: [(codec: String, bframes: Bool, fragmented: Bool)] = [
        ("h264", true, false), ("h264", false, false), ("h264", true, true), ("hevc", true, false), ("hevc", true, true),
    ]

    @Test(arguments: cases.indices)
    func muxedVideoPlaysCleanlyInPresentationOrder(index: Int) throws {
        let (codec, bframes, fragmented) = Self.cases[index]
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let video = directory.appendingPathComponent(codec == "hevc" ? "v.h265" : "v.h264").path
        let audio = directory.appendingPathComponent("a.aac").path
        let output = directory.appendingPathComponent("out.mp4").path
        let encoder = codec == "hevc"
            ? ["-c:v", "libx265", "-x265-params", "log-level=error:bframes=\(bframes ? 3 : 0)", "-f", "hevc"]
            : ["-c:v", "libx264", "-bf", bframes ? "2" : "0", "-g", "30", "-f", "h264"]
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=30",
                                            "-t", "2"] + encoder + [video])
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=2",
                                            "-c:a", "aac", "-f", "adts", audio])
        try ExternalTool.succeed(try ExternalTool.keyframe, ["mux", audio, "--video", video, "--frame-rate", "30", "-o", output]
                                 + (fragmented ? ["--fragmented"] : []))

        // A movie of video and ADTS audio: no finding but the priming an ADTS input cannot carry.
        try ValidationCheck.expectSilent([output], "mux \(codec)", allowing: [ValidationCheck.primingNotSignalled])
        let probe = try ExternalTool.run("ffprobe", ["-v", "warning", output])
        #expect(probe.status == 0 && probe.standardError.isEmpty, "ffprobe said: \(probe.standardError)")
        let decode = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", output, "-f", "null", "-"])
        #expect(decode.status == 0 && decode.standardError.isEmpty, "ffmpeg said: \(decode.standardError)")

        // Every access unit and every AAC packet is there.
        let counts = try ExternalTool.succeed("ffprobe", ["-v", "error", "-count_packets", "-show_entries", "stream=codec_name,nb_read_packets",
                                                          "-of", "csv=p=0", output]).standardOutput
        let raw = try ExternalTool.succeed("ffprobe", ["-v", "error", "-count_packets", "-show_entries", "stream=nb_read_packets",
                                                       "-of", "csv=p=0", video]).standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        let aacPackets = try ExternalTool.succeed("ffprobe", ["-v", "error", "-count_packets", "-show_entries", "stream=nb_read_packets",
                                                              "-of", "csv=p=0", audio]).standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(counts.contains("\(codec),\(raw)"), "\(counts) vs \(raw) access units")
        #expect(counts.contains("aac,\(aacPackets)"), "\(counts) vs \(aacPackets) AAC packets")

        // Decoded frames come out with distinct, increasing presentation times, one frame apart.
        let frames = try ExternalTool.succeed("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "frame=best_effort_timestamp_time",
                                                          "-of", "csv=p=0", output]).standardOutput
        let times = frames.split(separator: "\n").compactMap { Double($0.split(separator: ",").first.map(String.init) ?? "") }
        #expect(times.count == Int(raw))
        for (a, b) in zip(times, times.dropFirst()) { #expect(abs((b - a) - 1.0 / 30) < 0.002, "frames at \(a) then \(b)") }
        if bframes {
            let packets = try ExternalTool.succeed("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=pts,dts",
                                                               "-of", "csv=p=0", output]).standardOutput
            #expect(packets.split(separator: "\n").contains { line in
                let parts = line.split(separator: ","); return parts.count == 2 && parts[0] != parts[1]
            }, "B-frames need pts ≠ dts")
        }
    }
}
