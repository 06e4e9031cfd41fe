import Foundation
import Testing
import TestSupport

/// The `keyframe probe` command line: text and JSON output, and clear errors with a non-zero exit.
@Suite(.blocking) struct ProbeCommandTests {
    @Test func printsAReadableSummary() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("tone.aac").path
        try ADTSInteropTests.encode(rate: 48000, channels: 2, to: file, extra: ["-f", "adts"])
        let result = try ExternalTool.succeed(try ExternalTool.keyframe, ["probe", file])
        #expect(result.standardOutput.contains("ADTS"))
        #expect(result.standardOutput.contains("48000 Hz"))
        #expect(result.standardOutput.contains("2 ch"))
        #expect(result.standardOutput.contains("damage: none"))
        #expect(result.standardError.isEmpty)
    }

    @Test func garbageIsAClearErrorWithANonZeroExit() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("noise.aac")
        var generator = SystemRandomNumberGenerator()
        try Data((0..<10_000).map { _ in UInt8.random(in: 0...0xFE, using: &generator) }).write(to: file)
        let result = try ExternalTool.run(try ExternalTool.keyframe, ["probe", "--json", file.path])
        #expect(result.status != 0)
        #expect(result.standardError.contains("no ADTS frames found"), "\(result.standardError)")
        #expect(result.standardOutput.isEmpty)
    }

    @Test func aMissingFileNamesItself() throws {
        let result = try ExternalTool.run(try ExternalTool.keyframe, ["probe", "/nonexistent/x.aac"])
        #expect(result.status != 0)
        #expect(result.standardError.contains("/nonexistent/x.aac"))
    }

    @Test func mp4ProbesWithItsTracksAndTheBoxTree() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("tone.m4a").path
        try ADTSInteropTests.encode(rate: 44100, channels: 1, to: file)
        let text = try ExternalTool.succeed(try ExternalTool.keyframe, ["probe", file])
        #expect(text.standardOutput.contains("MP4"))
        #expect(text.standardOutput.contains("aac  LC  44100 Hz  1 ch"))
        #expect(text.standardOutput.contains("priming 1024"))
        let boxes = try ExternalTool.succeed(try ExternalTool.keyframe, ["probe", "--boxes", file])
        #expect(boxes.standardOutput.contains("[esds]"))
        #expect(boxes.standardOutput.contains("decoder_specific_info=1208"))
    }
}
