import KeyFrameKit

/// The progress line long work shows on a terminal: percent done and speed as a multiple of
/// real time, a few updates a second on stderr; nothing at all when stderr is not a terminal.
final class ProgressLine {
    private let label: String
    private let enabled: Bool
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    private var lastDraw: ContinuousClock.Instant?
    private var drewSomething = false

    init(label: String) {
        self.label = label
        self.enabled = Terminal.standardErrorIsTerminal
        self.start = clock.now
    }

    /// Reports `mediaSeconds` of media done out of `totalSeconds` (when known).
    func update(mediaSeconds: Double, totalSeconds: Double?) {
        guard enabled else { return }
        let now = clock.now
        if let lastDraw, now - lastDraw < .milliseconds(200) { return }
        lastDraw = now
        draw(mediaSeconds: mediaSeconds, totalSeconds: totalSeconds, now: now)
    }

    /// Reports a pump's progress.
    func update(_ progress: MediaProgress) {
        update(mediaSeconds: progress.mediaSeconds, totalSeconds: progress.totalSeconds)
    }

    /// Draws the final state and ends the line.
    func finish(mediaSeconds: Double, totalSeconds: Double?) {
        guard enabled, drewSomething || clock.now - start > .milliseconds(200) else { return }
        draw(mediaSeconds: mediaSeconds, totalSeconds: totalSeconds, now: clock.now)
        Terminal.error("\n")
    }

    private func draw(mediaSeconds: Double, totalSeconds: Double?, now: ContinuousClock.Instant) {
        let elapsed = max(Self.seconds(now - start), 1e-6)
        var text = "\r\(label)"
        if let total = totalSeconds, total > 0 {
            text += " " + Terminal.padded(Terminal.fixed(min(100, 100 * mediaSeconds / total), digits: 1), width: 5) + "%"
        }
        text += "  \(Self.clock(mediaSeconds)) of media  \(Terminal.fixed(mediaSeconds / elapsed, digits: 1))× realtime\u{1B}[K"
        Terminal.error(text)
        drewSomething = true
    }

    private static func seconds(_ duration: Duration) -> Double { duration.inSeconds }

    private static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds)
        let minutes = whole / 60 % 60, secs = whole % 60
        return "\(whole / 3600):\(minutes < 10 ? "0" : "")\(minutes):\(secs < 10 ? "0" : "")\(secs)"
    }
}
