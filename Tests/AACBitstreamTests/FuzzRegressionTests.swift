import FuzzTargets
import Foundation
import Testing

/// Replays every saved fuzz input (crashes found once, and seeds) through its target, and runs each
/// target over built-in inputs and their truncations, so that the targets' checks are exercised
/// in every `make test` even without libFuzzer.
@Suite struct FuzzRegressionTests {
    static let builtIn: [FuzzTarget: [[UInt8]]] = [
        .adts: [ADTSHeaderTests.ffmpegHeader + [UInt8](repeating: 0x21, count: 364), [0xFF, 0xF1, 0x50, 0x80, 0x01, 0x1F, 0xFC, 0x00]],
        .asc: [[0x12, 0x10], [0x12, 0x10, 0x56, 0xE5, 0x00], [0x2B, 0x92, 0x08, 0x00], [0xEB, 0x8A, 0x08, 0x00], [0xF9, 0x46, 0x20, 0xAB]],
        .esds: [ESDescriptorTests.ffmpegStyle, ESDescriptorTests.compact],
    ]

    @Test(arguments: FuzzTarget.allCases)
    func builtInInputsAndEveryTruncation(target: FuzzTarget) {
        for input in Self.builtIn[target] ?? [] {
            for length in 0...input.count { target.run(Array(input.prefix(length))) }
            for index in input.indices {
                var flipped = input
                flipped[index] ^= 0x5A
                target.run(flipped)
            }
        }
    }

    @Test func savedInputsReplay() throws {
        guard let root = Bundle.module.url(forResource: "Regressions", withExtension: nil) else {
            Issue.record("the Regressions resource folder is missing from the test bundle"); return
        }
        var replayed = 0
        for target in FuzzTarget.allCases {
            let folder = root.appendingPathComponent(target.rawValue)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            for name in names.sorted() where !name.hasPrefix(".") {
                target.run(Array(try Data(contentsOf: folder.appendingPathComponent(name))))
                replayed += 1
            }
        }
        // A finding traps inside `run`; reaching here means every saved input passes.
        #expect(replayed > 0, "no saved fuzz inputs found under \(root.path)")
    }
}
