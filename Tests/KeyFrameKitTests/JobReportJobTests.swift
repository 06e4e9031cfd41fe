import Foundation
import KeyFrameKit
import Testing

/// Issue 22: a real job's summary carries its pump's report, stage by stage.
@Suite struct JobReportJobTests {
    /// A WAV of a 440 Hz mono s16 tone at 44.1 kHz, `frames` long.
    static func wav(frames: Int) -> Data {
        func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
        func le16(_ value: Int) -> [UInt8] { (0..<2).map { UInt8((value >> (8 * $0)) & 0xFF) } }
        let samples = (0..<frames).flatMap { index -> [UInt8] in
            le16(Int(UInt16(bitPattern: Int16((0.5 * 32767 * sin(2 * Double.pi * 440 * Double(index) / 44100)).rounded()))))
        }
        let header = Array("RIFF".utf8) + le32(36 + samples.count) + Array("WAVE".utf8)
            + Array("fmt ".utf8) + le32(16) + le16(1) + le16(1) + le32(44100) + le32(88200) + le16(2) + le16(16)
            + Array("data".utf8) + le32(samples.count)
        return Data(header + samples)
    }

    static func scratchDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("JobReportJobTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func aDecodeThroughTheRegistryReportsThePacketReaderAndTheDecoder() throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.wav").path
        try Self.wav(frames: 30_000).write(to: URL(fileURLWithPath: input))
        let m4a = FilePath(directory.appendingPathComponent("in.m4a").path)
        _ = try Transcode.encode(try PCMFileReader(wavPath: FilePath(input)), to: m4a)
        let summary = try Transcode.decode(m4a, to: FilePath(directory.appendingPathComponent("out.wav").path))
        let stages = summary.report.stages
        #expect(stages.map(\.name) == ["AudioPacketInput", "AACDecoder", "PCMFileOutput"], "\(stages)")
        #expect(stages[0].elements == Int64(summary.packets) && stages[2].elements == summary.report.elements && summary.frames == 30_000)
    }

    @Test func anEncodeReportsItsReaderEncoderAndOutput() throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.wav").path
        try Self.wav(frames: 30_000).write(to: URL(fileURLWithPath: input))
        let summary = try Transcode.encode(try PCMFileReader(wavPath: FilePath(input)),
                                           to: FilePath(directory.appendingPathComponent("out.m4a").path))
        let stages = summary.report.stages
        #expect(stages.map(\.name) == ["PCMFileReader", "AACEncoder", "AudioPacketOutput"])
        #expect(stages.map(\.role) == [.source, .transform, .sink])
        #expect(stages[0].elements > 0)
        #expect(stages[1].elements == summary.packets && stages[2].elements == summary.packets)
        #expect(summary.report.elements == summary.packets)
        #expect(summary.report.elapsed > .zero && stages.allSatisfy { $0.busy <= summary.report.elapsed })
        #expect(summary.damage == summary.report.damage && !summary.stoppedEarly)
    }

    @Test func aConvertWithALoudnessPassReportsBothPumps() throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.wav").path
        try Self.wav(frames: 30_000).write(to: URL(fileURLWithPath: input))
        let summary = try Transcode.convert(FilePath(input), to: FilePath(directory.appendingPathComponent("out.m4a").path),
                                            options: .init(normalizeTo: -23))
        let names = summary.report.stages.map(\.name)
        #expect(names == ["PCMFileReader", "PCMResampler", "LoudnessMeter",
                          "PCMFileReader", "PCMResampler", "LoudnessNormalizer", "AACEncoder", "AudioPacketOutput"], "\(names)")
        #expect(summary.report.stages.last?.elements == summary.packets)
        #expect(summary.report.stages[6].elements == summary.packets)
    }

    @Test func aLadderReportsABranchPerRendition() throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.wav").path
        try Self.wav(frames: 100_000).write(to: URL(fileURLWithPath: input))
        let summary = try Packaging.hls(FilePath(input), to: FilePath(directory.appendingPathComponent("hls").path),
                                        options: .init(segmentDuration: 1, bitrates: [64_000, 96_000]))
        let stages = summary.report.stages
        // The loudness tap measures what every rendition is encoded from (their init segments' ludt).
        #expect(stages.map(\.name) == ["PCMFileReader", "PCMResampler", "LoudnessTap", "Tee<PCMBuffer>",
                                       "AACEncoder", "HLSSegmentOutput", "AACEncoder", "HLSSegmentOutput"], "\(stages.map(\.name))")
        #expect(stages.map(\.branch) == [nil, nil, nil, nil, "64k", "64k", "96k", "96k"])
        // Every rendition gets every buffer; each encoder's packets are its output's.
        #expect(stages[2].elements == stages[1].elements && stages[3].elements == stages[2].elements)
        #expect(stages[4].elements > 0 && stages[4].elements == stages[5].elements && stages[6].elements == stages[7].elements)
    }
}
