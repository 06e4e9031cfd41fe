public import MediaCore

/// Where one sample is and when: what the sample tables (ISO/IEC 14496-12, 8.6–8.7) or a
/// fragment's track run (`trun`, 8.8.8) say about it.
public struct SampleLocation: Sendable, Hashable {
    /// 0-based index in the track.
    public var index: Int
    /// Absolute file offset of the sample's bytes.
    public var offset: Int64
    /// Bytes.
    public var size: Int
    /// Decode time in media timescale units.
    public var decodeTime: Int64
    /// Composition (presentation) offset from the decode time.
    public var compositionOffset: Int32
    /// Duration in media timescale units.
    public var duration: UInt32
    /// Whether decoding can start here.
    public var isSync: Bool
    /// 1-based index of the sample entry in `stsd`.
    public var descriptionIndex: Int
}

/// A track's sample tables from `stbl` (ISO/IEC 14496-12, 8.5–8.7), kept as compact as the file
/// stores them: memory is a few bytes per sample, and no table is larger than its box.
public struct SampleTable: Sendable, Hashable {
    /// `stts` runs.
    public var timeToSample: [TimeToSampleEntry] = []
    /// `ctts` runs (empty when presentation order is decode order).
    public var compositionOffsets: [CompositionOffsetEntry] = []
    /// `stsc` entries.
    public var sampleToChunk: [SampleToChunkEntry] = []
    /// `stsz` / `stz2`.
    public var sampleSizes: SampleSizes = .constant(size: 0, count: 0)
    /// `stco` / `co64`.
    public var chunkOffsets: [UInt64] = []
    /// `stss` sample numbers (1-based); `nil` when every sample is a sync sample.
    public var syncSamples: [UInt32]?
    /// What was wrong with the tables and read past, a sentence each (an `stsc` entry that
    /// repeats its successor's first chunk).
    public var repairs: [String] = []

    /// An empty table.
    public init() {}

    /// Samples the tables describe: the sizes' count, cut to what `stts` times (a mismatch is
    /// reported by ``consistencyProblem``).
    public var sampleCount: Int {
        min(sampleSizes.count, timedSampleCount)
    }

    var timedSampleCount: Int {
        timeToSample.reduce(0) { $0 &+ Int($1.count) }
    }

    /// A sentence about tables that disagree, or `nil`.
    public var consistencyProblem: String? {
        if sampleSizes.count != timedSampleCount {
            return "stsz describes \(sampleSizes.count) samples but stts times \(timedSampleCount); using \(sampleCount)"
        }
        return nil
    }

    /// The sum of sample durations, in media timescale units.
    public var totalDuration: Int64 {
        var left = sampleCount
        var total: Int64 = 0
        for entry in timeToSample where left > 0 {
            let count = min(Int(entry.count), left)
            total = total.saturatingAdding(Int64(count).saturatingMultiplied(by: Int64(entry.delta)))
            left -= count
        }
        return total
    }
}

/// Walks a ``SampleTable`` sample by sample, in O(1) per sample, without expanding the tables.
struct SampleTableCursor: Sendable {
    private(set) var nextIndex = 0
    private var sttsIndex = 0
    private var sttsLeft: UInt32 = 0
    private var cttsIndex = 0
    private var cttsLeft: UInt32 = 0
    private var stscIndex = 0
    private var chunk = -1
    private var samplesLeftInChunk: UInt32 = 0
    private var offsetInChunk: UInt64 = 0
    private var syncIndex = 0
    private var decodeTime: Int64 = 0

    /// The next sample, `nil` after the last; an error when the tables cannot place it.
    mutating func next(in table: SampleTable, path: BoxPath) throws(MP4Error) -> SampleLocation? {
        try next(in: table, sampleCount: table.sampleCount, path: path)
    }

    /// The next sample, with the table's ``SampleTable/sampleCount`` computed once by the caller.
    @inline(__always)
    mutating func next(in table: SampleTable, sampleCount: Int, path: BoxPath) throws(MP4Error) -> SampleLocation? {
        guard nextIndex < sampleCount else { return nil }
        // Chunk: advance past chunks that are full (or hold no samples).
        while samplesLeftInChunk == 0 {
            chunk += 1
            guard chunk < table.chunkOffsets.count else {
                throw .inconsistentTables(path: path, reason: "sample \(nextIndex + 1) has no chunk: stsc and stco describe only \(table.chunkOffsets.count) chunks")
            }
            guard !table.sampleToChunk.isEmpty else {
                throw .inconsistentTables(path: path, reason: "stsc is empty but the track has \(table.sampleCount) samples")
            }
            while stscIndex + 1 < table.sampleToChunk.count && UInt32(chunk + 1) >= table.sampleToChunk[stscIndex + 1].firstChunk {
                stscIndex += 1
            }
            samplesLeftInChunk = table.sampleToChunk[stscIndex].samplesPerChunk
            offsetInChunk = 0
        }
        // Time.
        while sttsLeft == 0 && sttsIndex < table.timeToSample.count {
            sttsLeft = table.timeToSample[sttsIndex].count
            sttsIndex += 1
        }
        let delta = sttsIndex > 0 ? table.timeToSample[sttsIndex - 1].delta : 0
        sttsLeft &-= 1
        var compositionOffset: Int32 = 0
        if !table.compositionOffsets.isEmpty {
            while cttsLeft == 0 && cttsIndex < table.compositionOffsets.count {
                cttsLeft = table.compositionOffsets[cttsIndex].count
                cttsIndex += 1
            }
            if cttsLeft > 0 {
                compositionOffset = table.compositionOffsets[cttsIndex - 1].offset
                cttsLeft -= 1
            }
        }
        var isSync = true
        if let sync = table.syncSamples {
            let number = UInt32(nextIndex + 1)
            while syncIndex < sync.count && sync[syncIndex] < number { syncIndex += 1 }
            isSync = syncIndex < sync.count && sync[syncIndex] == number
        }
        let size = table.sampleSizes.size(at: nextIndex)
        let (offset, overflow) = table.chunkOffsets[chunk].addingReportingOverflow(offsetInChunk)
        guard !overflow, offset <= UInt64(Int64.max) else {
            throw .inconsistentTables(path: path, reason: "sample \(nextIndex + 1) lies past 2^63")
        }
        let location = SampleLocation(index: nextIndex, offset: Int64(offset), size: Int(size), decodeTime: decodeTime,
                                      compositionOffset: compositionOffset, duration: delta, isSync: isSync,
                                      descriptionIndex: Int(table.sampleToChunk[stscIndex].sampleDescriptionIndex))
        offsetInChunk += UInt64(size)
        samplesLeftInChunk -= 1
        decodeTime = decodeTime.saturatingAdding(Int64(delta))
        nextIndex += 1
        return location
    }
}

extension MP4Track {
    /// How much of the track a file of `fileSize` bytes holds: the samples of its sample table,
    /// from the first, whose bytes lie inside the file (a file cut short keeps its `moov`, which
    /// still describes every sample), and the first that does not, or `nil` when all do or when
    /// a table cannot place the next sample (the count then ends there, below ``sampleCount``).
    /// Fragment runs are not counted.
    public func samplesInside(fileSize: Int64) -> (count: Int, firstOutside: SampleLocation?) {
        var cursor = SampleTableCursor()
        let total = sampleTable.sampleCount
        while true {
            let location: SampleLocation?
            do { location = try cursor.next(in: sampleTable, sampleCount: total, path: path) } catch { return (cursor.nextIndex, nil) }
            guard let location else { return (total, nil) }
            guard location.offset >= 0, location.size >= 0, location.offset <= fileSize - Int64(location.size) else {
                return (location.index, location)
            }
        }
    }
}

extension MP4Track {
    /// The places of the samples at `indices` of the sample table (fragment runs are not
    /// searched), from a walk of the tables that reads no media; `nil` when the tables cannot
    /// place one of them.
    public func sampleLocations(_ indices: Range<Int>) -> [SampleLocation]? {
        guard indices.lowerBound >= 0, indices.upperBound <= sampleTable.sampleCount else { return nil }
        var cursor = SampleTableCursor()
        var found: [SampleLocation] = []
        found.reserveCapacity(indices.count)
        let total = sampleTable.sampleCount
        while found.count < indices.count {
            guard let location = try? cursor.next(in: sampleTable, sampleCount: total, path: path) else { return nil }
            if location.index >= indices.lowerBound { found.append(location) }
        }
        return found
    }
}

extension MP4Track {
    /// The samples of an audio track that the sample table gives no bytes (`stsz` entries of 0,
    /// ISO/IEC 14496-12 8.7.3): an audio frame always has some, so each is a lost one; `nil`
    /// when there are none, and for other tracks (a text or video track may time an empty
    /// sample on purpose). Fragment runs are not searched.
    public var emptyAudioSamples: DamageEvent? {
        guard mediaType == .audio else { return nil }
        let sizes = sampleTable.sampleSizes
        var count = 0
        var first: Int?
        switch sizes {
        case .constant(let size, let total):
            if size == 0, total > 0 { (count, first) = (Int(total), 0) }
        case .table(let table):
            for (index, size) in table.enumerated() where size == 0 {
                count += 1
                if first == nil { first = index }
            }
        }
        guard count > 0, let first else { return nil }
        return DamageEvent(.emptyPackets(count: Int64(count)),
                           message: "track \(id): \(count) of its \(sizes.count) samples have no bytes in the stsz of \(path) (the first is sample \(first + 1)): "
                               + "nothing of them can be decoded")
    }
}
