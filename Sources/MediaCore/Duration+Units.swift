extension Duration {
    /// The duration in seconds.
    @inlinable
    public var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// Whole nanoseconds, toward zero; `Int64.min` or `Int64.max` past them.
    @inlinable
    public var inNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, past) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflow || past ? (seconds < 0 ? .min : .max) : sum
    }

    /// Whole milliseconds: toward zero, or with `roundingUp` the next millisecond for a
    /// positive remainder (a wait never shorter than asked); `Int64.min` or `Int64.max` past
    /// them.
    @inlinable
    public func inMilliseconds(roundingUp: Bool = false) -> Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        let (sum, past) = whole.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        guard !overflow, !past else { return seconds < 0 ? .min : .max }
        return roundingUp && attoseconds % 1_000_000_000_000_000 > 0 && sum < .max ? sum + 1 : sum
    }

    /// Whole seconds and the nanoseconds after them (toward zero), as `timespec` holds a wait.
    @inlinable
    public var secondsAndNanoseconds: (seconds: Int64, nanoseconds: Int64) {
        let (seconds, attoseconds) = components
        return (seconds, attoseconds / 1_000_000_000)
    }
}
