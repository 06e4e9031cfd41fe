import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyFrameKit

/// `keyframe validate PATH… [--json]`: checks what a file says about its gapless playback.
struct Validate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check an M4A/MP4/M4B's gapless signals against each other (issue 21, first part).",
        discussion: """
            For each AAC track: the edit list against iTunSMPB (the priming and the valid length \
            agree), a track whose priming is not signalled at all (an edit starting at 0, or none, \
            and no iTunSMPB: the priming will be heard), and a last sample shorter than a frame \
            against the valid length. Each finding names the file, the box path or tag, the rule, \
            what was expected and what was found, as an error or a warning. Exit status 0 without \
            errors, 1 with errors, 2 when a path cannot be read as MP4. CMAF segment sequences, \
            HLS playlists and DASH MPDs are not checked yet (exit 2, said so).
            """
    )

    @Argument(help: "The .m4a/.mp4/.m4b files to check.")
    var paths: [String]

    @Flag(help: "Print one JSON object per finding (severity, file, location, rule, expected, found), a line each.")
    var json = false

    func validate() throws {
        guard !paths.isEmpty else { throw ValidationError("give at least one file to check") }
    }

    func run() throws {
        var errors = 0
        var unreadable = 0
        for report in FileValidation.reports(for: paths.map { FilePath($0) }) {
            if let error = report.error {
                Terminal.warning("\(error)")
                unreadable += 1
                continue
            }
            for finding in report.findings {
                print(json ? JSONOutput.line(finding) : finding.description)
            }
            errors += report.findings.filter { $0.severity == .error }.count
            if !json && report.findings.isEmpty { print("\(report.path): ok") }
        }
        if unreadable > 0 { throw ExitCode(2) }
        if errors > 0 { throw ExitCode(1) }
    }
}
