/// Several sources read as one, end to end: a CMAF init segment followed by its media segments.
///
/// A part read several times in a row (a playlist that names one segment again and again) is
/// kept once, with its number of repeats.
public struct ConcatenatedByteSource<Part: RandomAccessByteSource>: RandomAccessByteSource {
    /// One part, read `repeats` times in a row from `start`.
    private struct Run {
        let part: Part
        /// The part's length, taken once (a file's length is a system call).
        let partCount: Int64
        let repeats: Int64
        let start: Int64
        /// `partCount × repeats`, or `Int64.max` past it.
        let byteCount: Int64
    }

    private let runs: [Run]
    /// The total length.
    public let byteCount: Int64

    /// The parts, in order.
    public init(_ parts: [Part]) {
        self.init(runs: parts.lazy.map { ($0, 1) })
    }

    /// Each part read `repeats` times in a row (a part with no repeat is left out), in order.
    public init<Runs: Sequence<(part: Part, repeats: Int)>>(runs: Runs) {
        var built: [Run] = []
        built.reserveCapacity(runs.underestimatedCount)
        var total: Int64 = 0
        // Lengths come from the file system (a device's from seeking to its end) and repeats
        // from a playlist: multiplied and added without trapping, a total past Int64.max held
        // there, which no read reaches.
        for (part, repeats) in runs where repeats > 0 {
            let partCount = max(0, part.byteCount)
            let (product, overflow) = partCount.multipliedReportingOverflow(by: Int64(repeats))
            let count = overflow ? Int64.max : product
            built.append(Run(part: part, partCount: partCount, repeats: Int64(repeats), start: total, byteCount: count))
            let (sum, past) = total.addingReportingOverflow(count)
            total = past ? .max : sum
        }
        self.runs = built
        self.byteCount = total
    }

    /// Reads up to `count` bytes at `offset`, across part boundaries.
    public func read(at offset: Int64, count: Int) throws(ByteStreamError) -> [UInt8] {
        guard offset >= 0, count >= 0 else {
            throw .system(operation: "read at \(offset)", path: "concatenated source", errno: .invalidArgument)
        }
        guard offset < byteCount else { return [] }
        // The last run starting at or before the offset, by binary search (a sequence of
        // thousands of segments is read box by box).
        var low = 0, high = runs.count
        while low < high {
            let middle = (low + high) / 2
            if runs[middle].start <= offset { low = middle + 1 } else { high = middle }
        }
        var index = max(0, low - 1)
        // No further than the total, so no position passes Int64.max.
        var left = min(Int64(count), byteCount - offset)
        // Within one repeat of one part (the common case): that part's bytes, not a copy of them.
        if index < runs.count, runs[index].partCount > 0, offset - runs[index].start < runs[index].byteCount {
            let within = (offset - runs[index].start) % runs[index].partCount
            if left <= runs[index].partCount - within { return try runs[index].part.read(at: within, count: Int(left)) }
        }
        var result: [UInt8] = []
        var position = offset
        while left > 0, index < runs.count {
            let run = runs[index]
            let local = position - run.start
            guard run.partCount > 0, local < run.byteCount else {
                index += 1
                continue
            }
            let available = run.partCount - local % run.partCount
            let chunk = try run.part.read(at: local % run.partCount, count: Int(min(left, available)))
            result += chunk
            position += Int64(chunk.count)
            left -= Int64(chunk.count)
            // A part shorter than it was: the stream ends there.
            if Int64(chunk.count) < min(left + Int64(chunk.count), available) { break }
        }
        return result
    }
}
