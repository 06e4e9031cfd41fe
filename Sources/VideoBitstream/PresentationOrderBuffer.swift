/// Gives access units, which arrive in decoding order, their place in presentation order, with a
/// bounded look-ahead.
///
/// Presentation order is the order of picture order counts within a run that starts at an IDR
/// or MMCO 5 picture (H.264) or an IRAP picture with `NoRaslOutputFlag` 1 (H.265): the output
/// process empties the decoded picture buffer before such a picture (H.264 C.4.4, H.265
/// C.5.2.2), so every picture of a run is presented after every picture of the runs before it.
/// A picture's *rank* is its place in that order over the whole stream; since each run holds a
/// contiguous range of decode indices, a run starting at decode index `D` has ranks `D`,
/// `D + 1`, ….
///
/// Ranks need look-ahead: the units are held until the next run starts, or until `capacity`
/// units of the current run wait for a rank. Then all but the `R` highest picture order counts
/// are ranked, `R` being the SPS's bound on reordering (H.264 `max_num_reorder_frames`, H.265
/// `sps_max_num_reorder_pics`; 16 when the SPS gives none): no later picture can come before
/// them in output order without breaking that bound. A stream that breaks its own bound gets
/// its late pictures the next free ranks (presented a little late, never an error).
///
/// The *delay* is the composition offset, in frames, that keeps every presentation time at or
/// after its decode time (1 for B-frames without pyramid, 2 with, 0 without reordering):
///
/// - the reorder depth the SPS declares (H.264 `max_num_reorder_frames` of the VUI, H.265
///   `sps_max_num_reorder_pics`), which is what x264 and x265 set from their GOP structure and
///   what FFmpeg delays by (its `has_b_frames`); no picture can need more (`decode index − rank`
///   never exceeds it), so it is right from the first sample whatever the first GOP looks like;
/// - when the SPS declares none, or the stream breaks what it declares, the largest
///   `decode index − rank` over the units ranked so far: learnt from the first window, and grown
///   for the units ranked later if a later GOP reorders deeper (leaving a gap in presentation
///   times, as FFmpeg's decoder grows its reorder buffer), so that presentation times stay in
///   rank order and never precede decode times.
struct PresentationOrderBuffer {
    /// One access unit waiting to be delivered.
    struct Entry {
        var unit: AccessUnit
        var decodeIndex: Int64
        /// Rank plus the delay when it was ranked: the presentation time in frame durations.
        var presentationIndex: Int64?
    }

    /// How many units of a run may wait for a rank.
    let capacity: Int
    private var entries: [Entry] = []
    private var head = 0
    /// Positions in `entries` of the units without a rank, in decoding order.
    private var unranked: [Int] = []
    private var nextDecodeIndex: Int64 = 0
    private var nextRank: Int64 = 0
    /// The composition delay in frame durations.
    private(set) var delay: Int64 = 0
    private var reorderBound = 16

    /// A buffer in which at most `capacity` units (at least 2) wait for a rank.
    init(capacity: Int) {
        self.capacity = max(2, capacity)
    }

    /// Takes the next access unit in decoding order.
    mutating func push(_ unit: AccessUnit) {
        if unit.startsSequence { rankAll() }
        if let bound = unit.reorderBound { reorderBound = bound }
        if let depth = unit.declaredReorderDepth { delay = max(delay, Int64(depth)) }
        entries.append(Entry(unit: unit, decodeIndex: nextDecodeIndex, presentationIndex: nil))
        nextDecodeIndex += 1
        unranked.append(entries.count - 1)
        if unranked.count >= capacity {
            rankLowest(unranked.count - min(max(reorderBound, 0), capacity - 1))
        }
        // Ranked units held back by an unranked one decoded before them: bound them too.
        if entries.count - head > 4 * capacity { rankAll() }
    }

    /// Ranks everything left (at the end of the stream).
    mutating func finish() {
        rankAll()
    }

    /// The next unit in decoding order with its decode index and presentation index, once it
    /// has a rank.
    mutating func pop() -> Entry? {
        guard head < entries.count, entries[head].presentationIndex != nil else { return nil }
        let entry = entries[head]
        head += 1
        if head >= 64, head * 2 >= entries.count {
            entries.removeFirst(head)
            unranked = unranked.map { $0 - head }
            head = 0
        }
        return entry
    }

    /// Whether no unit is waiting.
    var isEmpty: Bool { head >= entries.count }

    private mutating func rankAll() {
        rankLowest(unranked.count)
    }

    /// Ranks the `count` unranked units of lowest picture order count (ties in decoding order).
    private mutating func rankLowest(_ count: Int) {
        guard count > 0 else { return }
        let order = unranked.sorted {
            let (a, b) = (entries[$0].unit.pictureOrderCount, entries[$1].unit.pictureOrderCount)
            return a != b ? a < b : $0 < $1
        }
        let chosen = order.prefix(count)
        var ranks: [(position: Int, rank: Int64)] = []
        for position in chosen {
            ranks.append((position, nextRank))
            delay = max(delay, entries[position].decodeIndex - nextRank)
            nextRank += 1
        }
        for (position, rank) in ranks { entries[position].presentationIndex = rank + delay }
        let chosenSet = Set(chosen)
        unranked.removeAll { chosenSet.contains($0) }
    }
}
