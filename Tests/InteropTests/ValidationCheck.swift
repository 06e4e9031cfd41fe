import Foundation
import Testing
import TestSupport

/// Issue 21: "Our tests run it on every package, recording, ladder, cut and join they make. It
/// must say nothing on what we write today." `keyframe validate` run on the outputs of the
/// interop tests, in one place.
enum ValidationCheck {
    /// The rule `keyframe validate` names when an AAC track signals no encoder priming (no edit
    /// that skips it, no iTunSMPB). Truthful on what we make by stream copy from ADTS (`package
    /// in.aac`, `mux in.aac`): ADTS carries no priming signal, so there is none to copy.
    static let primingNotSignalled = "encoder priming not signalled"

    /// Runs `keyframe validate PATH…` once on all of `paths` (files, an init segment followed by
    /// its media segments, playlists, MPDs, package directories) and expects exit status 0 and
    /// every line of its output to be `PATH: ok`.
    ///
    /// - Parameters:
    ///   - what: the command that made the files, for the failure message.
    ///   - rules: findings whose RULE is one of these are let through. An allowed rule is a
    ///     known, named, truthful finding on the file (say why where it is passed), never a way
    ///     to quiet a finding nobody has explained.
    ///   - errorsOnly: let every warning through and forbid only errors (and exit 1 or 2): for
    ///     files made from foreign inputs, which may lack the signals a warning asks for (an
    ///     input without priming signalled gives an output without it).
    static func expectSilent(_ paths: [String], _ what: String, allowing rules: [String] = [], errorsOnly: Bool = false,
                             sourceLocation: SourceLocation = #_sourceLocation) throws {
        let run = try ExternalTool.run(try ExternalTool.keyframe, ["validate"] + paths)
        let lines = run.standardOutput.split(separator: "\n").map(String.init)
        let unexpected = lines.filter { line in
            if line.hasSuffix(": ok") { return false }
            // `FILE: error|warning: LOCATION: RULE: expected X, found Y`
            if rules.contains(where: { line.contains(": \($0): expected ") }) { return false }
            if errorsOnly && severity(of: line) == "warning" { return false }
            return true
        }
        #expect(run.status == 0 && !lines.isEmpty && unexpected.isEmpty,
                "\(what): keyframe validate \(paths.joined(separator: " ")) exited \(run.status):\n\(run.standardOutput)\(run.standardError)",
                sourceLocation: sourceLocation)
    }

    /// `error` or `warning`: the first of the two a finding line names after its file.
    static func severity(of line: String) -> String? {
        let error = line.range(of: ": error: ")?.lowerBound, warning = line.range(of: ": warning: ")?.lowerBound
        switch (error, warning) {
        case let (error?, warning?): return error < warning ? "error" : "warning"
        case (_?, nil): return "error"
        case (nil, _?): return "warning"
        case (nil, nil): return nil
        }
    }
}
