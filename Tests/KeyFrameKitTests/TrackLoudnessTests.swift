import AudioCodec
import Foundation
@testable import KeyFrameKit
import MediaFormats
import Testing

/// The loudness a stream-copied package writes in its `ludt`: the copied packets decoded and
/// measured in parts on several threads give the measurement of one pass over the presented
/// samples.
@Suite struct TrackLoudnessTests {
    /// A 130-s mono 22.05 kHz WAV whose level steps every 10 s (so that the gating and each
    /// part's blocks matter), with 3 s of silence at the end.
    static func steppedWAV() -> Data {
        let rate = 22050, seconds = 130
        var samples = [Int16](repeating: 0, count: rate * seconds)
        for index in 0..<(rate * (seconds - 3)) {
            let level = [0.05, 0.4, 0.1, 0.7, 0.2][(index / (rate * 10)) % 5]
            samples[index] = Int16((level * 32767 * sin(2 * Double.pi * 330 * Double(index) / Double(rate))).rounded())
        }
        func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
        func le16(_ value: Int) -> [UInt8] { (0..<2).map { UInt8((value >> (8 * $0)) & 0xFF) } }
        let bytes = samples.withUnsafeBytes { Array($0) }
        let header = Array("RIFF".utf8) + le32(36 + bytes.count) + Array("WAVE".utf8)
            + Array("fmt ".utf8) + le32(16) + le16(1) + le16(1) + le32(rate) + le32(rate * 2) + le16(2) + le16(16)
            + Array("data".utf8) + le32(bytes.count)
        return Data(header + bytes)
    }

    @Test func partsMeasureWhatOnePassMeasures() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("TrackLoudnessTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try Self.steppedWAV().write(to: URL(fileURLWithPath: wav))
        let m4a = FilePath(directory.appendingPathComponent("in.m4a").path)
        _ = try Transcode.encode(try PCMFileReader(wavPath: FilePath(wav)), to: m4a)
        let layout = try AudioTrackLayout(path: m4a)
        #expect(TrackLoudness.splits(layout))
        let whole = try #require(try TrackLoudness.measure(layout, formats: .containers, parts: 1, control: nil))
        let split = try #require(try TrackLoudness.measure(layout, formats: .containers, parts: 2, control: nil))
        // One pass of the decoder over the presented samples (the edit list applied).
        let reference = try #require(try Transcode.measureLoudness(m4a))
        #expect(abs(whole.integrated - reference.integrated) < 0.01, "one part \(whole.integrated), a decode \(reference.integrated)")
        #expect(abs(split.integrated - whole.integrated) < 0.02, "two parts \(split.integrated), one \(whole.integrated)")
        #expect(split.samplePeak == whole.samplePeak && whole.samplePeak != nil)
        // The two-part path itself (measure falls back to one part when a part fails): each half
        // measured from its pre-roll, the halves' blocks judged together.
        let half = layout.packetCount / 2
        let parts = [try TrackLoudness.measurePart(layout, packets: 0..<half, formats: .containers, control: nil),
                     try TrackLoudness.measurePart(layout, packets: half..<layout.packetCount, formats: .containers, control: nil)]
        #expect(parts.allSatisfy { $0.frameCount > 0 })
        #expect(parts[0].frameCount + parts[1].frameCount == 130 * 22050, "every presented sample, once")
        let combined = try #require(try LoudnessMeter.measurement(combining: parts))
        #expect(abs(combined.integrated - whole.integrated) < 0.02, "combined \(combined.integrated), one part \(whole.integrated)")
        // A cancelled job measures nothing.
        let control = JobControl()
        control.cancel()
        #expect(throws: PipelineError.self) { try TrackLoudness.measure(layout, formats: .containers, parts: 2, control: control) }
    }

    @Test func theKeptSamplesOfAPacketAreThePresentedOnes() {
        let format = PCMFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .float32)
        let pcm = [UInt8](repeating: 1, count: 1024 * 4)
        // Priming of 2112 at the same rate: the third packet keeps its last 960 frames.
        #expect(TrackLoudness.keptBytes(of: pcm, format: format, startingAt: 2048, timescale: 48000, presented: 2112..<100_000).count == 960 * 4)
        // SBR: 2048 output frames over 1024 media units of the core's timescale.
        let sbr = [UInt8](repeating: 1, count: 2048 * 4)
        #expect(TrackLoudness.keptBytes(of: sbr, format: format, startingAt: 0, timescale: 24000, presented: 512..<3000).count == 1024 * 4)
        #expect(TrackLoudness.keptBytes(of: sbr, format: format, startingAt: 1024, timescale: 24000, presented: 0..<1536).count == 1024 * 4)
        // Past the end: nothing.
        #expect(TrackLoudness.keptBytes(of: pcm, format: format, startingAt: 5000, timescale: 48000, presented: 0..<4000).isEmpty)
    }
}
