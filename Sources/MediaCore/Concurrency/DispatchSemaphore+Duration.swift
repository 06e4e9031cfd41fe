public import Dispatch

extension DispatchSemaphore {
    /// Waits for a signal at most `duration` (not at all for zero or less), on the calling
    /// thread: a thread of its own, never the cooperative pool.
    ///
    /// - Returns: `.success` when signalled, `.timedOut` when the time ran out first.
    @discardableResult
    public func wait(for duration: Duration) -> DispatchTimeoutResult {
        wait(timeout: .after(duration))
    }
}

extension DispatchTime {
    /// `duration` from now (now for zero or less): the one place a `DispatchTime` is computed
    /// from a `Duration`.
    static func after(_ duration: Duration) -> DispatchTime {
        .now() + .nanoseconds(Int(clamping: max(0, duration.inNanoseconds)))
    }
}
