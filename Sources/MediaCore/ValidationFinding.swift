/// One thing `keyframe validate` found: where (the file, and the box path or tag), what rule,
/// what was expected and what was found, and how bad it is.
public struct ValidationFinding: Sendable, Hashable, Codable, CustomStringConvertible {
    /// How bad a finding is.
    public enum Severity: String, Sendable, Hashable, Codable {
        /// The file breaks a rule a player relies on (two gapless signals that disagree).
        case error
        /// The file is valid but a listener will notice (the priming is heard).
        case warning
    }

    /// How bad it is.
    public var severity: Severity
    /// The file.
    public var file: String
    /// The box path (`moov/trak[1]/edts/elst`) or tag (`iTunSMPB`) it is about.
    public var location: String
    /// The rule, in a few words (`elst against iTunSMPB: priming`).
    public var rule: String
    /// What the rule expects.
    public var expected: String
    /// What the file holds.
    public var found: String

    /// A finding.
    public init(_ severity: Severity, file: String, location: String, rule: String, expected: String, found: String) {
        self.severity = severity
        self.file = file
        self.location = location
        self.rule = rule
        self.expected = expected
        self.found = found
    }

    /// `file: error: moov/trak[1]/edts/elst: elst against iTunSMPB: priming: expected 2112, found 1024`.
    public var description: String {
        "\(file): \(severity.rawValue): \(location): \(rule): expected \(expected), found \(found)"
    }

    /// One finding per file and rule, the first, its ``found`` saying how many more there were:
    /// a rule broken in every fragment or on every line is one finding, not a thousand.
    public static func collapsingRepeats(_ findings: [ValidationFinding]) -> [ValidationFinding] {
        var kept: [ValidationFinding] = []
        var position: [String: Int] = [:]
        var more: [Int: Int] = [:]
        for finding in findings {
            let key = finding.file + "\u{0}" + finding.rule
            if let index = position[key] {
                more[index, default: 0] += 1
            } else {
                position[key] = kept.count
                kept.append(finding)
            }
        }
        for (index, count) in more { kept[index].found += " (and \(count) more like it in this file)" }
        return kept
    }
}

/// Findings gathered as a check goes, one per file and rule as they come (the first kept, the
/// rest counted): a rule broken in each of 200,000 segments costs one finding's memory, not
/// 200,000. ``elements`` are what ``ValidationFinding/collapsingRepeats(_:)`` would make of
/// every finding appended.
public struct ValidationFindingList: Sendable {
    private var kept: [ValidationFinding] = []
    private var position: [String: Int] = [:]
    private var repeats: [Int] = []

    /// An empty list.
    public init() {}

    /// Adds `finding`, or counts it when one of its file and rule is already kept.
    public mutating func append(_ finding: ValidationFinding) {
        let key = finding.file + "\u{0}" + finding.rule
        if let index = position[key] {
            repeats[index] += 1
        } else {
            position[key] = kept.count
            kept.append(finding)
            repeats.append(0)
        }
    }

    /// Adds each of `findings`.
    public static func += (list: inout ValidationFindingList, findings: some Sequence<ValidationFinding>) {
        for finding in findings { list.append(finding) }
    }

    /// The findings kept, each saying how many more like it there were.
    public var elements: [ValidationFinding] {
        zip(kept, repeats).map { finding, count in
            var finding = finding
            if count > 0 { finding.found += " (and \(count) more like it in this file)" }
            return finding
        }
    }
}
