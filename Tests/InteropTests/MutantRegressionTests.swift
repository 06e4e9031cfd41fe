import Foundation
import Testing
import TestSupport

/// Each mutant `make mutants` found a failure on (kept in Tests/Fixtures/mutants/, named by what
/// it tripped), through the four commands of the sweep: none traps, runs past its limit, or
/// leaves its output behind.
@Suite(.blocking) struct MutantRegressionTests {
    static var folder: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/mutants")
    }

    static var mutants: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }

    @Test func theFolderHoldsTheMutants() {
        #expect(!Self.mutants.isEmpty, "no mutants under \(Self.folder.path)")
    }

    @Test(arguments: mutants)
    func aMutantNeitherTrapsNorHangs(name: String) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = Self.folder.appendingPathComponent(name).path
        for command in [["probe"], ["validate"], ["decode", "-o", directory.appendingPathComponent("out.wav").path],
                        ["demux", "-o", directory.appendingPathComponent("out.aac").path]] {
            let process = try RunningProcess(try ExternalTool.keyframe, [command[0], input] + command.dropFirst())
            let finished = try process.wait(timeout: .seconds(60))
            #expect(finished.signal == nil, "\(name): \(command[0]) ended by signal \(finished.signal ?? 0): \(finished.result.standardError.suffix(600))")
            #expect([0, 1, 2, 3].contains(finished.result.status), "\(name): \(command[0]) status \(finished.result.status)")
        }
    }
}
