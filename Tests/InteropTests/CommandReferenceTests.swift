import Foundation
import Testing
import TestSupport

/// The DocC command reference (KeyFrameKit.docc/CommandReference.md) is what
/// `scripts/command-reference.py` writes from the built `keyframe`'s own help, the source of the
/// man pages too: a help text changed without `make reference` fails here.
@Suite(.blocking) struct CommandReferenceTests {
    static let article = "Sources/KeyFrameKit/KeyFrameKit.docc/CommandReference.md"

    @Test func committedReferenceMatchesTheHelp() throws {
        let root = MP4Check.repositoryRoot
        let script = root.appendingPathComponent("scripts/command-reference.py").path
        let generated = try ExternalTool.succeed("python3", [script, try ExternalTool.keyframe, "--docc", "-"]).standardOutput
        let committed = try String(contentsOf: root.appendingPathComponent(Self.article), encoding: .utf8)
        guard generated != committed else { return }
        let new = generated.split(separator: "\n", omittingEmptySubsequences: false)
        let old = committed.split(separator: "\n", omittingEmptySubsequences: false)
        let line = zip(new, old).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(new.count, old.count)
        Issue.record("""
            \(Self.article) is not what `keyframe`'s help gives: run `make reference` and commit it. \
            First difference at line \(line + 1):
              committed: \(line < old.count ? String(old[line]) : "(end of file)")
              generated: \(line < new.count ? String(new[line]) : "(end of file)")
            """)
    }

    /// Every command has its man page, and the pages name each other.
    @Test func manPagesCoverEveryCommand() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = MP4Check.repositoryRoot.appendingPathComponent("scripts/command-reference.py").path
        let names = try ExternalTool.succeed("python3", [script, try ExternalTool.keyframe, "--names"]).standardOutput
            .split(separator: "\n").map(String.init)
        try ExternalTool.succeed("python3", [script, try ExternalTool.keyframe, "--man", directory.path])
        let written = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(written == names.sorted())
        #expect(names.contains("keyframe.1") && names.contains("keyframe-convert.1") && names.contains("keyframe-serve.1"))
        #expect(!names.contains("keyframe-help.1"))
        let convert = try String(contentsOf: directory.appendingPathComponent("keyframe-convert.1"), encoding: .utf8)
        #expect(convert.contains(".SH NAME\nkeyframe\\-convert \\- "))
        #expect(convert.contains("\\fB\\-\\-bitrate\\fR"))
    }
}

/// `keyframe serve` copied somewhere without `keyframe-serve` beside it (a hand-made install)
/// fails with a message that says how to get both: `make install`.
@Suite(.blocking) struct MissingServerTests {
    @Test func serveWithoutKeyframeServeNamesMakeInstall() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let lone = directory.appendingPathComponent("keyframe").path
        // Copied by cp: a descriptor this process held open for writing could be inherited by a
        // child another test spawns meanwhile, and exec would then fail with ETXTBSY.
        try ExternalTool.succeed("cp", [try ExternalTool.keyframe, lone])
        let www = directory.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: www, withIntermediateDirectories: true)
        let result = try ExternalTool.run(lone, ["serve", www.path, "--address", "127.0.0.1:8080"])
        #expect(result.status != 0)
        #expect(result.standardError.contains("serving needs keyframe-serve beside keyframe"), "\(result.standardError)")
        #expect(result.standardError.contains("`make install` installs both"), "\(result.standardError)")
    }
}
