#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif
internal import SystemPackage

/// How many processors are free for work now: the processors this process may run on, less
/// what the rest of the machine keeps busy on them, read from the kernel's CPU time counters
/// (`/proc/stat`, proc(5)) of those processors over a short interval. A cgroup's CPU quota
/// (`cpu.max`) is not read.
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
        let (seconds, nanoseconds) = interval.secondsAndNanoseconds
        var pause = timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))
        var left = timespec()
        while nanosleep(&pause, &left) != 0 && errno == EINTR { pause = left }
        guard let after = totals() else { return usable }
        return free(from: before, to: after, usable: usable)
    }

    /// The processors this process may run on (its affinity, `Cpus_allowed_list` of
    /// `/proc/self/status`); those online (`sysconf(_SC_NPROCESSORS_ONLN)`) where that is not
    /// known.
    public static var usable: Int {
        if let allowed = allowedProcessors(), !allowed.isEmpty { return allowed.count }
        return max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
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

    /// The counters of `/proc/stat` for the processors this process may run on.
    static func totals() -> Totals? {
        guard let text = try? contents(of: "/proc/stat") else { return nil }
        return totals(parsing: text, of: allowedProcessors())
    }

    /// The counters in the text of `/proc/stat`: with `processors`, the sum of their `cpuN`
    /// lines (a process confined to some of the machine's processors, by `taskset` or a
    /// container's cpuset, is not told of the others' idle time); else its `cpu` line and the
    /// number of `cpuN` lines.
    static func totals(parsing text: String, of processors: Set<Int>? = nil) -> Totals? {
        let lines = text.split(separator: "\n")
        // user nice system idle iowait irq softirq steal (guest time is inside user and nice)
        func counters(_ line: Substring) -> [UInt64]? {
            let fields = line.split(separator: " ").dropFirst().prefix(8).compactMap { UInt64($0) }
            return fields.count >= 5 ? fields : nil
        }
        let perProcessor = lines.dropFirst().prefix { $0.hasPrefix("cpu") }
        if let processors {
            var sum: (total: UInt64, idle: UInt64, processors: Int) = (0, 0, 0)
            for line in perProcessor {
                guard let number = Int(line.split(separator: " ").first?.dropFirst(3) ?? ""), processors.contains(number),
                      let fields = counters(line) else { continue }
                sum = (sum.total + fields.reduce(0, +), sum.idle + fields[3] + fields[4], sum.processors + 1)
            }
            if sum.processors > 0 { return sum }
        }
        guard let line = lines.first, line.hasPrefix("cpu "), let fields = counters(line), !perProcessor.isEmpty else { return nil }
        return (fields.reduce(0, +), fields[3] + fields[4], perProcessor.count)
    }

    /// The processors this process may run on: `Cpus_allowed_list` of `/proc/self/status`
    /// (its affinity, proc(5)); `nil` where it is not known.
    static func allowedProcessors() -> Set<Int>? {
        guard let text = try? contents(of: "/proc/self/status") else { return nil }
        let line = text.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") }
        return line.flatMap { processors(inList: $0.dropFirst("Cpus_allowed_list:".count)) }
    }

    /// The processors of a kernel CPU list (`0-3,6,8-9`); `nil` for a malformed one.
    static func processors(inList list: Substring) -> Set<Int>? {
        var processors: Set<Int> = []
        for item in list.split(whereSeparator: { $0 == "," || $0.isWhitespace }) {
            let bounds = item.split(separator: "-", maxSplits: 1).map { Int($0) }
            guard let first = bounds.first ?? nil, first >= 0, first < 1 << 16 else { return nil }
            let last = bounds.count == 2 ? bounds[1] : first
            guard let last, last >= first, last < 1 << 16 else { return nil }
            processors.formUnion(first...last)
        }
        return processors.isEmpty ? nil : processors
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
