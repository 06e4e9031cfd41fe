import Foundation
import Testing
import TestSupport

/// `--dash` adds an MPD beside the HLS package and changes none of its files, and FFmpeg reads
/// every rendition of an `auto` ladder (HE-AAC v2, HE-AAC, LC) at lag 0 with every sample,
/// through HLS and through DASH: the first segment's iTunSMPB says what the header's says, in
/// the same units (for HE-AAC the core's samples, which FFmpeg doubles).
@Suite("--dash beside HLS: the same HLS files, every rendition at lag 0", .blocking)
struct DASHBesideHLSTests {
    /// Every regular file under `directory`, by path relative to it.
    static func files(_ directory: String) throws -> [String: Data] {
        var result: [String: Data] = [:]
        let root = URL(fileURLWithPath: directory)
        for case let url as URL in FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])! {
            guard (try url.resourceValues(forKeys: [.isRegularFileKey])).isRegularFile == true else { continue }
            result[String(url.path.dropFirst(root.path.count + 1))] = try Data(contentsOf: url)
        }
        return result
    }

    /// Audio stream `index` of `input` as FFmpeg decodes it, 48 kHz 16-bit, left channel only.
    static func decode(_ input: String, stream index: Int, in directory: URL) throws -> GaplessTests.PCM {
        let wav = directory.appendingPathComponent("decoded-\(UUID().uuidString).wav").path
        defer { try? FileManager.default.removeItem(atPath: wav) }
        try MP4Check.ffmpeg(["-i", input, "-map", "0:a:\(index)", "-ac", "1", "-c:a", "pcm_s16le", wav])
        return try GaplessTests.pcm(wav, channels: 1)
    }

    @Test func dashChangesNoHLSFileAndEveryRenditionStartsAtLagZero() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // 10 s of pink noise, the same in both channels (HE-AAC v2's image is then the source's).
        let source = directory.appendingPathComponent("in.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=color=pink:sample_rate=48000:duration=10:amplitude=0.3:seed=7",
                             "-ac", "2", "-c:a", "pcm_s16le", source])
        let ladder = ["--profile", "auto", "--bitrates", "32k,64k,128k"]
        let hls = directory.appendingPathComponent("hls").path, both = directory.appendingPathComponent("both").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", source, "--hls", hls] + ladder)
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", source, "--hls", both, "--dash"] + ladder)

        let alone = try Self.files(hls), beside = try Self.files(both)
        #expect(Set(beside.keys).subtracting(alone.keys) == ["manifest.mpd", "32k/init-dash.mp4", "64k/init-dash.mp4", "128k/init-dash.mp4"],
                "\(beside.keys.sorted())")
        for (name, bytes) in alone.sorted(by: { $0.key < $1.key }) {
            #expect(beside[name] == bytes, "\(name) differs with --dash")
        }

        let reference = try GaplessTests.pcm(source, channels: 2)
        let left = GaplessTests.PCM(samples: stride(from: 0, to: reference.samples.count, by: 2).map { reference.samples[$0] }, channels: 1)
        let renditions = [("32k", 0), ("64k", 1), ("128k", 2)]   // the master's and the MPD's order
        for (name, index) in renditions {
            for (way, input, stream) in [("HLS", both + "/\(name)/index.m3u8", 0), ("HLS master", both + "/master.m3u8", index),
                                         ("DASH", both + "/manifest.mpd", index)] {
                let decoded = try Self.decode(input, stream: stream, in: directory)
                #expect(decoded.frames >= left.frames, "\(name) through \(way): \(decoded.frames) samples for \(left.frames)")
                // 1 s in, 8192 samples: where they line up, within ±4000 (the HE-AAC priming is 3588).
                let lag = GaplessTests.peakLag(GaplessTests.tail(left, from: 48000), GaplessTests.tail(decoded, from: 48000),
                                               channel: 0, window: 8192, maxLag: 4000)
                #expect(lag == 0, "\(name) through \(way): FFmpeg starts \(lag) samples off")
            }
        }
    }
}
