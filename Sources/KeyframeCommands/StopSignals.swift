#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import KeyFrameKit

/// SIGINT, SIGTERM and SIGHUP while recording: each asks the recording to stop (the file is then
/// finished normally); a SIGINT while the file is being finished ends the process at once.
final class StopSignals {
    private let sources: [any DispatchSourceSignal]

    init(onStop: @escaping @Sendable () -> Void) {
        sources = [SIGINT, SIGTERM, SIGHUP].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { onStop() }
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
