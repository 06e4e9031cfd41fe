#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif
internal import SystemPackage

/// How many processors are free for work now: the processors this process may run on, less
/// what the rest of the machine keeps busy, read from the kernel's CPU time counters
/// (`/proc/stat`, proc(5)) over a short interval.
///
/// A segment-parallel encode sized from it does not split work for a core that another job
/// holds: two encoders on one free core do the serial encode's work and their pre-roll too.
public enum IdleProcessors {
    /// The processors idle over `interval`, from 1 to `usable`.
    ///
    /// The idle time is rounded to whole processors: `n` are free when at least `n − ½` were
    /// idle, where `n` encoders finish sooner than one even with the parallel encode's pre-roll.
    /// Where the counters cannot be read, all `usable` count.
    ///
    /// - Parameters:
    ///   - usable: the processors this process may run on (Foundation's
    ///     `ProcessInfo.activeProcessorCount`).
    ///   - interval: how long to watch the counters.
    public static func count(usable: Int, over interval: Duration = .milliseconds(100)) -> Int {
        let usable = max(1, usable)
        guard usable > 1, let before = totals() else { return usable }
        var pause = timespec(tv_sec: Int(interval.components.seconds), tv_nsec: Int(interval.components.attoseconds / 1_000_000_000))
        var left = timespec()
        while nanosleep(&pause, &left) != 0 && errno == EINTR { pause = left }
        guard let after = totals() else { return usable }
        return free(from: before, to: after, usable: usable)
    }

    /// The machine's CPU time in clock ticks: all of it, the idle and waiting-for-I/O part, and
    /// the processors counted.
    typealias Totals = (total: UInt64, idle: UInt64, processors: Int)

    /// The processors free between two readings, the idle time rounded, from 1 to `usable`.
    static func free(from before: Totals, to after: Totals, usable: Int) -> Int {
        guard after.total > before.total, after.idle >= before.idle else { return usable }
        let idle = Double(after.idle - before.idle) / Double(after.total - before.total) * Double(after.processors)
        return min(usable, max(1, Int(idle.rounded())))
    }

    /// The counters of `/proc/stat` (its `cpu` line and the number of `cpuN` lines).
    static func totals() -> Totals? {
        guard let text = try? contents(of: "/proc/stat") else { return nil }
        return totals(parsing: text)
    }

    /// The counters in the text of `/proc/stat`.
    static func totals(parsing text: String) -> Totals? {
        let lines = text.split(separator: "\n")
        guard let line = lines.first, line.hasPrefix("cpu ") else { return nil }
        // user nice system idle iowait irq softirq steal (guest time is inside user and nice)
        let fields = line.split(separator: " ").dropFirst().prefix(8).compactMap { UInt64($0) }
        let processors = lines.dropFirst().prefix { $0.hasPrefix("cpu") }.count
        guard fields.count >= 5, processors > 0 else { return nil }
        return (fields.reduce(0, +), fields[3] + fields[4], processors)
    }

    /// A small text file of the kernel's, whole (read to its end: its size says 0).
    static func contents(of path: FilePath) throws -> String {
        let descriptor = try FileDescriptor.open(path, .readOnly, options: .closeOnExec)
        defer { try? descriptor.close() }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while bytes.count < 1 << 20 {
            let count = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
