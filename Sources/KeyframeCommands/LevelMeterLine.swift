import KeyFrameKit

/// The live line `keyframe record` draws on a terminal, a few times a second, like sox's `rec`:
/// elapsed time, then per channel an RMS bar with a peak mark and the figures in dBFS, and any
/// overruns. Nothing at all when stderr is not a terminal.
final class LevelMeterLine {
    /// dBFS at the left end of a bar.
    static let floor = -60.0
    private let enabled: Bool
    private let barWidth: Int
    private var drew = false

    init(channelCount: Int) {
        enabled = Terminal.standardErrorIsTerminal
        barWidth = channelCount <= 2 ? 24 : 0
    }

    /// Draws `levels` (measured since the last draw) after `seconds` of audio, then the live
    /// destinations' states, when there are any (`rtmp ●` connected, `icecast ↻` reconnecting,
    /// `srt ✕` stopped), and the stores' (`s3 ● 2 queued`, `dav ↻ 14 queued 3.1 MB, 5 failed`).
    func draw(seconds: Double, levels: AudioLevels, overruns: Int, destinations: [DestinationStatistics.Snapshot] = [],
              stores: [ObjectStoreReplica] = []) {
        guard enabled else { return }
        var text = "\r\u{1B}[1;31m●\u{1B}[0m rec \(Self.clock(seconds))"
        let names = levels.channelCount == 2 ? ["L", "R"] : (1...max(levels.channelCount, 1)).map(String.init)
        for (channel, (rms, peak)) in zip(levels.rmsDBFS, levels.peakDBFS).enumerated() {
            text += "  \(names[channel]) "
            if barWidth > 0 { text += bar(rms: rms, peak: peak) + " " }
            text += Self.decibels(rms) + (barWidth > 0 ? " pk " + Self.decibels(peak) : "")
        }
        if overruns > 0 { text += "  \u{1B}[33moverruns \(overruns)\u{1B}[0m" }
        for destination in destinations {
            let mark = switch destination.state {
            case .connected: "\u{1B}[32m●\u{1B}[0m"
            case .starting, .reconnecting: "\u{1B}[33m↻\u{1B}[0m"
            case .stopped: "\u{1B}[31m✕\u{1B}[0m"
            case .finished, .abandoned: "·"
            }
            text += "  \(destination.scheme) \(mark)" + (destination.framesDropped > 0 ? " \(destination.framesDropped) dropped" : "")
        }
        for store in stores {
            let status = store.status
            let mark = switch status.state {
            case .current, .uploading: "\u{1B}[32m●\u{1B}[0m"
            case .retrying: "\u{1B}[33m↻\u{1B}[0m"
            case .failed: "\u{1B}[31m✕\u{1B}[0m"
            }
            let scheme = store.description.firstRange(of: "://").map { String(store.description[..<$0.lowerBound]) } ?? "store"
            text += "  \(scheme) \(mark)"
            if status.backlogObjects > 0 {
                text += " \(status.backlogObjects) queued"
                if status.backlogBytes >= 1_000_000 { text += " \(Terminal.fixed(Double(status.backlogBytes) / 1e6, digits: 1)) MB" }
            }
            let failures = status.gaps.count + status.lost.count
            if failures > 0 { text += ", \(failures) failed" }
        }
        Terminal.error(text + "\u{1B}[K")
        drew = true
    }

    /// Ends the line.
    func finish() {
        guard enabled, drew else { return }
        Terminal.error("\n")
    }

    private func bar(rms: Double, peak: Double) -> String {
        let filled = Self.position(rms, width: barWidth)
        let mark = Self.position(peak, width: barWidth)
        var cells = Array(repeating: "·", count: barWidth)
        for index in 0..<filled { cells[index] = "█" }
        if mark > 0 { cells[mark - 1] = peak > -1 ? "\u{1B}[31m▌\u{1B}[0m" : "▌" }
        return "▕" + cells.joined() + "▏"
    }

    private static func position(_ decibels: Double, width: Int) -> Int {
        guard decibels.isFinite else { return 0 }
        let fraction = (min(0, max(floor, decibels)) - floor) / -floor
        return Int((fraction * Double(width)).rounded())
    }

    private static func decibels(_ value: Double) -> String {
        Terminal.padded(value.isFinite ? Terminal.fixed(value, digits: 1) : "-inf", width: 5) + " dB"
    }

    private static func clock(_ seconds: Double) -> String {
        let tenths = Int((seconds * 10).rounded(.down))
        let whole = tenths / 10
        let minutes = whole / 60 % 60, secs = whole % 60
        return "\(whole / 3600):\(minutes < 10 ? "0" : "")\(minutes):\(secs < 10 ? "0" : "")\(secs).\(tenths % 10)"
    }
}
