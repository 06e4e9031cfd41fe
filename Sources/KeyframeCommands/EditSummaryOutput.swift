import KeyFrameKit

/// What `cut`, `split` and `join` print for each file written, and their `--json` shape.
struct EditSummaryOutput: Encodable {
    /// One chapter of the output.
    struct Chapter: Encodable {
        var start: Double
        var title: String
    }

    var output: String
    var packets: Int
    var samples: Int64
    var sampleRate: Int
    var seconds: Double
    var chapters: [Chapter]

    init(_ summary: AudioEditing.Summary) {
        output = summary.output.string
        packets = summary.packets
        samples = summary.samples
        sampleRate = summary.sampleRate
        seconds = summary.seconds
        chapters = summary.chapters.map { Chapter(start: $0.seconds, title: $0.title) }
    }

    /// `OUT: 1234567 samples (25.720 s) at 48000 Hz, 1207 AAC packets, 3 chapters`.
    var line: String {
        let time = (seconds * 1000).rounded() / 1000
        return "\(output): \(samples) samples (\(time) s) at \(sampleRate) Hz, \(packets) AAC packets"
            + (chapters.isEmpty ? "" : ", \(chapters.count) chapter\(chapters.count == 1 ? "" : "s")")
    }
}

