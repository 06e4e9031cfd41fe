import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The progress line long work shows on a terminal: percent done and speed as a multiple of
/// real time, a few updates a second on stderr; nothing at all when stderr is not a terminal.
final class ProgressLine {
    private let label: String
    private let enabled: Bool
    private let start = Date()
    private var lastDraw = Date.distantPast
    private var drewSomething = false

    init(label: String) {
        self.label = label
        self.enabled = isatty(STDERR_FILENO) == 1 && ProcessInfo.processInfo.environment["TERM"] != "dumb"
    }

    /// Reports `mediaSeconds` of media done out of `totalSeconds` (when known).
    func update(mediaSeconds: Double, totalSeconds: Double?) {
        guard enabled else { return }
        let now = Date()
        guard now.timeIntervalSince(lastDraw) >= 0.2 else { return }
        lastDraw = now
        draw(mediaSeconds: mediaSeconds, totalSeconds: totalSeconds, now: now)
    }

    /// Draws the final state and ends the line.
    func finish(mediaSeconds: Double, totalSeconds: Double?) {
        guard enabled, drewSomething || Date().timeIntervalSince(start) > 0.2 else { return }
        draw(mediaSeconds: mediaSeconds, totalSeconds: totalSeconds, now: Date())
        FileHandle.standardError.write(Data("\n".utf8))
    }

    private func draw(mediaSeconds: Double, totalSeconds: Double?, now: Date) {
        let elapsed = max(now.timeIntervalSince(start), 1e-6)
        var text = "\r\(label)"
        if let total = totalSeconds, total > 0 {
            text += String(format: " %5.1f%%", min(100, 100 * mediaSeconds / total))
        }
        text += String(format: "  %@ of media  %.1f× realtime\u{1B}[K", Self.clock(mediaSeconds), mediaSeconds / elapsed)
        FileHandle.standardError.write(Data(text.utf8))
        drewSomething = true
    }

    private static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds)
        return String(format: "%d:%02d:%02d", whole / 3600, whole / 60 % 60, whole % 60)
    }
}
