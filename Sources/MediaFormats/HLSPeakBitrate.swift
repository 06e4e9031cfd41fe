/// The peak segment bit rate of RFC 8216 4.1, which a variant's `BANDWIDTH` must not be below
/// (4.3.4.2): the largest bit rate of any contiguous run of segments lasting between 0.5 and
/// 1.5 target durations, so that a short segment, whose boxes weigh on few samples, counts with
/// its neighbour; every single segment when no run lasts that long. What the packager writes
/// and what the validator checks, alike.
public enum HLSPeakBitrate {
    /// The peak, in bits per second, of segments of `sizes` bytes lasting `durations` seconds,
    /// under a target duration of `targetDuration` seconds.
    public static func of(sizes: [Int64], durations: [Double], targetDuration: Double) -> Double {
        var peak = 0.0
        for start in durations.indices {
            var bytes: Int64 = 0
            var seconds = 0.0
            // At most 10 000 segments a run: a run of so many lasts 1.5 target durations only when
            // the durations are near 0, and the single segments below still count.
            for end in start..<min(durations.count, start + 10_000) {
                bytes += sizes[end]
                seconds += durations[end]
                if seconds > 1.5 * targetDuration { break }
                if seconds >= 0.5 * targetDuration, seconds > 0 { peak = max(peak, Double(bytes) * 8 / seconds) }
            }
        }
        if peak == 0 {
            for (size, duration) in zip(sizes, durations) where duration > 0 { peak = max(peak, Double(size) * 8 / duration) }
        }
        return peak
    }
}
