#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization
import KeyFrameKit

/// SIGINT, SIGTERM and SIGHUP while recording: each asks the recording to stop (the file is then
/// finished normally); a SIGINT while the file is being finished ends the process at once.
final class StopSignals {
    private let sources: [any DispatchSourceSignal]

    /// Calls `onStop` on SIGINT, SIGTERM or SIGHUP. With `secondEndsProcess`, a second one
    /// while the job is still ending ends the process at once (for a job that ends in its own
    /// time, such as `publish` waiting for its servers).
    init(secondEndsProcess: Bool = false, onStop: @escaping @Sendable () -> Void) {
        let received = Mutex(0)
        // A queue of their own: the global queue's threads may all be busy encoding (one per
        // core), and a handler queued behind them would wait for a segment to end.
        let queue = DispatchQueue(label: "KeyFrameKit.StopSignals")
        sources = [SIGINT, SIGTERM, SIGHUP].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                let count = received.withLock { count -> Int in
                    count += 1
                    return count
                }
                if secondEndsProcess, count > 1 { _exit(128 + number) }
                onStop()
            }
            source.resume()
            return source
        }
    }

    /// From now on a SIGINT ends the process at once (the file is being finished).
    func finishing() {
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
    }
}

extension StopSignals {
    /// A control for a file job that SIGINT, SIGTERM and SIGHUP cancel: the pump stops at the
    /// next packet and removes the half-written output, so a Ctrl-C leaves nothing behind.
    static func cancellingControl() -> JobControl {
        let control = JobControl()
        installed = StopSignals { control.cancel() }
        return control
    }

    /// The handlers of the one job a process runs.
    nonisolated(unsafe) private static var installed: StopSignals?
}
