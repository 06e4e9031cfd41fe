#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif

/// The wall clock (`CLOCK_REALTIME`), for `EXT-X-PROGRAM-DATE-TIME`.
package enum WallClock {
    /// Seconds since 1970 (UTC).
    package static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
