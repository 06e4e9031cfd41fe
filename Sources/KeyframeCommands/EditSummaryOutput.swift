import KeyFrameKit

/// What `cut`, `split` and `join` print for each file written, and their `--json` shape.
struct EditSummaryOutput: Encodable {
    /// One chapter of the output.
    struct Chapter: Encodable {
        var start: Double
        var title: String
    }

    var output: String
    var codec: String
    var packets: Int
    var samples: Int64
    var sampleRate: Int
    var seconds: Double
    var chapters: [Chapter]
    /// What of the input was lost (a file cut short), as sentences; empty for a whole input.
    var damage: [String]

    init(_ summary: AudioEditing.Summary) {
        output = summary.output.string
        codec = CodecArgument.displayName(summary.codec)
        packets = summary.packets
        samples = summary.samples
        sampleRate = summary.sampleRate
        seconds = summary.seconds
        chapters = summary.chapters.map { Chapter(start: $0.seconds, title: $0.title) }
        damage = summary.damage.map(\.description)
    }

    /// Prints what `summaries` wrote (a line each, or JSON: one object, or an array for
    /// `split`), warns once of each damage met, and ends with ``ExitStatus/damaged`` when media
    /// was lost.
    static func report(_ summaries: [AudioEditing.Summary], json: Bool, array: Bool) throws {
        let results = summaries.map(EditSummaryOutput.init)
        if json {
            if array { try JSONOutput.print(results) } else if let first = results.first { try JSONOutput.print(first) }
        } else {
            for result in results { print(result.line) }
        }
        var seen = Set<DamageEvent>()
        let damage = summaries.flatMap(\.damage).filter { seen.insert($0).inserted }
        try ExitStatus.finish(damage: damage)
    }

    /// `OUT: 1234567 samples (25.720 s) at 48000 Hz, 1207 AAC packets, 3 chapters`.
    var line: String {
        let time = (seconds * 1000).rounded() / 1000
        return "\(output): \(samples) samples (\(time) s) at \(sampleRate) Hz, \(packets) \(codec) packets"
            + (chapters.isEmpty ? "" : ", \(chapters.count) chapter\(chapters.count == 1 ? "" : "s")")
    }
}

