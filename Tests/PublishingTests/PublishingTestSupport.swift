import AACBitstream
import Foundation
import MediaCore
import MediaFormats
import Publishing
import TestSupport

/// Real AAC made by ffmpeg (a tone with noise, so that every frame carries bits), read back as
/// our packets.
enum PublishingFixture {
    /// A temporary directory, removed by the caller.
    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("keyframe-publish-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// `seconds` of AAC-LC at `rate` in ADTS, by ffmpeg, and its packets.
    static func frames(seconds: Double, rate: Int = 48_000, channels: Int = 2, bitrate: String = "128k", in directory: URL) throws -> [MediaSample] {
        let path = directory.appendingPathComponent("source-\(rate)-\(channels).aac").path
        let result = try Subprocess.run("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i",
                                                   "sine=frequency=440:sample_rate=\(rate):duration=\(seconds)",
                                                   "-ac", "\(channels)", "-c:a", "aac", "-b:a", bitrate, path])
        guard result.status == 0 else { throw Subprocess.Failure(description: "ffmpeg: \(result.standardError)") }
        var input = try AudioPacketInput(adtsPath: FilePath(path), purpose: .remuxing)
        var samples: [MediaSample] = []
        while let sample = try input.next() { samples.append(sample) }
        return samples
    }

    /// ffmpeg's stderr without the note every raw ADTS input gets ("Estimating duration from
    /// bitrate"): what is left is a warning about the stream.
    static func warnings(_ standardError: String) -> [String] {
        standardError.split(separator: "\n").map(String.init).filter { !$0.contains("Estimating duration from bitrate") }
    }

    /// Writes `samples` into `sink` in real time (each frame when its time on the sample clock
    /// has come, from now), calling `at` with each frame's index first.
    static func play<Sink: PacketSink>(_ samples: [MediaSample], into sink: inout Sink, realTime: Bool = true,
                                       at: (Int) throws -> Void = { _ in }) throws {
        let start = ContinuousClock.now
        var elapsed = 0.0
        for (index, sample) in samples.enumerated() {
            try at(index)
            if realTime {
                let due = start + .milliseconds(Int(elapsed * 1000))
                let now = ContinuousClock.now
                if due > now { Thread.sleep(forTimeInterval: (due - now).inSeconds) }
            }
            try sink.write(sample)
            elapsed += sample.duration.seconds
        }
    }
}
