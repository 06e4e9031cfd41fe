import Foundation
import Testing
import TestSupport

/// Issue 38: `publish --codec mp3|opus srt://…` carries MP3 (`stream_type` 0x03) and Opus
/// (0x06 with the `Opus` registration descriptor, an `opus_control_header` before each packet)
/// in our MPEG-TS to srt-live-transmit. What arrives, FFmpeg, ffprobe and GStreamer read without
/// a warning as the codec published, and it decodes to the published length (Opus's pre-skip
/// trimmed by the first packets' `start_trim`, which FFmpeg does not apply: at most the
/// pre-skip more).
@Suite(.blocking, .serialized) struct SRTCodecsTests {
    @Test(arguments: [("mp3", "mp3", 44100, "mpegaudioparse ! avdec_mp3"), ("opus", "opus", 48000, "opusparse ! opusdec")])
    func publishCarriesTheCodecInMPEGTS(codec: String, ffprobeName: String, rate: Int, gstreamerDecoder: String) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try CodecInteropTests.makeWAV(rate: 44100, channels: 2, seconds: 2, to: wav)
        let port = try LocalPort.freeUDP()
        let listener = try SRTListener.start(port: port)
        defer { listener.stop(grace: .zero) }
        let publish = try ExternalTool.run(try ExternalTool.keyframe, ["publish", wav, "srt://127.0.0.1:\(port)", "--codec", codec, "--json"])
        #expect(publish.status == 0, "publish --codec \(codec): \(publish.standardError)")
        _ = try listener.wait(timeout: .seconds(10))
        let received = directory.appendingPathComponent("received.ts")
        try listener.standardOutputSoFar.write(to: received)
        try #require(listener.standardOutputSoFar.count > 188 * 10, "srt-live-transmit received \(listener.standardOutputSoFar.count) bytes")

        let probe = try ExternalTool.run("ffprobe", ["-v", "warning", "-select_streams", "a:0", "-show_entries",
                                                     "stream=codec_name,sample_rate,channels", "-of", "csv=p=0", received.path])
        #expect(Set(probe.standardOutput.split(whereSeparator: \.isNewline).map(String.init)) == ["\(ffprobeName),\(rate),2"],
                "\(codec): \(probe.standardOutput)")
        #expect(probe.standardError.isEmpty, "ffprobe: \(probe.standardError)")
        let raw = directory.appendingPathComponent("decoded.raw").path
        let decode = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", received.path, "-f", "s16le", raw])
        #expect(decode.status == 0 && decode.standardError.isEmpty, "ffmpeg: \(decode.standardError)")
        let frames = ((try? Data(contentsOf: URL(fileURLWithPath: raw)))?.count ?? 0) / 4
        // 2 s at the codec's rate, from whole frames (MP3's 1152, with the encoder's priming and
        // padding; Opus's 960, with its pre-skip).
        #expect(frames >= 2 * rate && frames <= 2 * rate + 4 * 1152, "\(codec): \(frames) frames decoded for \(2 * rate)")
        let gstreamer = try ExternalTool.run("gst-launch-1.0", ["-q", "filesrc", "location=\(received.path)", "!", "tsdemux", "!"]
                                             + gstreamerDecoder.split(separator: " ").map(String.init) + ["!", "fakesink"])
        #expect(gstreamer.status == 0 && !gstreamer.standardError.contains("WARN"), "GStreamer: \(gstreamer.standardError)")
    }
}
