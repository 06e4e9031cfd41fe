#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization
import KeyFrameKit
import MediaCore

/// SIGINT, SIGTERM and SIGHUP while recording: each asks the recording to stop (the file is then
/// finished normally); a SIGINT while the file is being finished ends the process at once.
final class StopSignals {
    private let sources: [any DispatchSourceSignal]

    /// Calls `onStop` on SIGINT, SIGTERM or SIGHUP. With `secondEndsProcess`, a second one
    /// while the job is still ending ends the process at once (for a job that ends in its own
    /// time, such as `publish` waiting for its servers).
    ///
    /// With `deadline`, a job that is still running that long after the signal is blocked where
    /// it cannot see the stop (a read of a FIFO with no writer, a network input that sends
    /// nothing): the temporary files of its uncommitted outputs are removed and the process ends
    /// as a cancelled job does, "cancelled" with status 1. With `readInProgress` too, only when
    /// the job is inside the same read of its input at the signal and at the deadline (a live job
    /// that is only waiting for the clock, or closing its destinations, is left to end).
    init(secondEndsProcess: Bool = false, deadline: DispatchTimeInterval? = nil,
         readInProgress: (@Sendable () -> UInt64?)? = nil, onStop: @escaping @Sendable () -> Void) {
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
                let readAtSignal = readInProgress?()
                onStop()
                if let deadline, count == 1 {
                    queue.asyncAfter(deadline: .now() + deadline) {
                        if let readInProgress {
                            guard let read = readAtSignal, readInProgress() == read else { return }
                        }
                        UncommittedFiles.removeAll()
                        let words = Array("Error: cancelled (the job was blocked on a read)\n".utf8)
                        _ = words.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
                        _exit(1)
                    }
                }
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
    /// next packet and removes the half-written output, so a Ctrl-C leaves nothing behind. A job
    /// blocked on a read ends 0.3 s after the signal all the same (``init(secondEndsProcess:deadline:onStop:)``).
    ///
    /// With `whileReadBlocks`, only a job inside the same read of its input at the signal and
    /// 0.3 s later is ended so: one that uploads (an object store's request in flight) ends by
    /// itself after that request, removing what it put.
    static func cancellingControl(whileReadBlocks: Bool = false) -> JobControl {
        let control = JobControl()
        let watched: @Sendable () -> UInt64? = { control.inputReadInProgress }
        let readInProgress = whileReadBlocks ? watched : nil
        installed = StopSignals(deadline: .milliseconds(300), readInProgress: readInProgress) { control.cancel() }
        return control
    }

    /// The handlers of the one job a process runs.
    nonisolated(unsafe) private static var installed: StopSignals?
}
