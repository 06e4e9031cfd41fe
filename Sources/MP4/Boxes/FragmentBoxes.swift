internal import MediaCore

/// `trex` (ISO/IEC 14496-12, 8.8.3 TrackExtendsBox): the defaults of a track's fragments.
public struct TrackExtendsBox: Sendable, Hashable {
    /// `track_ID`.
    public var trackID: UInt32
    /// `default_sample_description_index`.
    public var descriptionIndex: UInt32
    /// `default_sample_duration`.
    public var duration: UInt32
    /// `default_sample_size`.
    public var size: UInt32
    /// `default_sample_flags`.
    public var flags: UInt32

    /// Parses the payload.
    init(from reader: inout ByteReader, path: BoxPath) throws(MP4Error) {
        _ = try FullBoxHeader.parse(from: &reader, path: path)
        (trackID, descriptionIndex, duration, size, flags) = try MP4Error.reading(path) {
            () throws(BinaryReadError) -> (UInt32, UInt32, UInt32, UInt32, UInt32) in
            (try reader.readUInt32(), try reader.readUInt32(), try reader.readUInt32(), try reader.readUInt32(), try reader.readUInt32())
        }
    }
}

/// `mvex` (ISO/IEC 14496-12, 8.8.1 MovieExtendsBox): its presence says the movie is
/// fragmented; it holds the defaults of each track's fragments and, optionally, the duration of
/// the whole fragmented movie (`mehd`, 8.8.2).
public struct MovieExtendsBox: Sendable, Hashable {
    /// `mehd` `fragment_duration`, in movie timescale units: the length of the whole movie,
    /// fragments included; `nil` when there is no `mehd`.
    public var fragmentDuration: UInt64?
    /// The `trex` boxes, in file order.
    public var trackDefaults: [TrackExtendsBox] = []

    /// An `mvex` with nothing in it.
    public init(fragmentDuration: UInt64? = nil, trackDefaults: [TrackExtendsBox] = []) {
        self.fragmentDuration = fragmentDuration
        self.trackDefaults = trackDefaults
    }

    /// Reads the payload of `mehd` (8.8.2 MovieExtendsHeaderBox): `fragment_duration`, 64 bits
    /// in version 1, 32 in version 0.
    static func fragmentDuration(from reader: inout ByteReader, path: BoxPath) throws(MP4Error) -> UInt64 {
        let start = reader.offset
        let header = try FullBoxHeader.parse(from: &reader, path: path)
        switch header.version {
        case 0: return UInt64(try MP4Error.reading(path) { () throws(BinaryReadError) in try reader.readUInt32() })
        case 1: return try MP4Error.reading(path) { () throws(BinaryReadError) in try reader.readUInt64() }
        default: throw .invalidField(path: path, field: "version", value: Int64(header.version), offset: start, allowed: "0 or 1")
        }
    }
}

/// One `trun` of one `traf` (8.8.8 TrackRunBox), with its data offset resolved to the file and
/// its defaults from `tfhd` and `trex`: samples stored as compactly as the file stores them.
public struct FragmentRun: Sendable, Hashable {
    /// The track.
    public var trackID: UInt32
    /// Absolute offset of the run's first sample.
    public var dataOffset: Int64
    /// Decode time of the run's first sample, in media timescale units.
    public var firstDecodeTime: Int64
    /// Samples in the run.
    public var sampleCount: Int
    /// 1-based sample entry index.
    public var descriptionIndex: Int
    /// Defaults for samples without their own field.
    public var defaultDuration: UInt32
    /// Default size.
    public var defaultSize: UInt32
    /// Default flags.
    public var defaultFlags: UInt32
    /// `first_sample_flags`, when present.
    public var firstSampleFlags: UInt32?
    /// Per-sample durations, when present.
    public var durations: [UInt32]?
    /// Per-sample sizes, when present.
    public var sizes: [UInt32]?
    /// Per-sample flags, when present.
    public var flags: [UInt32]?
    /// Per-sample composition offsets, when present.
    public var compositionOffsets: [Int32]?

    /// Bytes of all the run's samples.
    var byteCount: Int64 {
        sizes.map { $0.reduce(Int64(0)) { $0.saturatingAdding(Int64($1)) } } ?? Int64(sampleCount).saturatingMultiplied(by: Int64(defaultSize))
    }

    /// Duration of all the run's samples.
    var duration: Int64 {
        durations.map { $0.reduce(Int64(0)) { $0.saturatingAdding(Int64($1)) } } ?? Int64(sampleCount).saturatingMultiplied(by: Int64(defaultDuration))
    }

    /// `sample_is_non_sync_sample` is bit 16 of the sample flags (8.8.3.1).
    static func isSync(_ flags: UInt32) -> Bool { flags & 0x0001_0000 == 0 }
}

/// Reads one `moof` (8.8.4) into runs.
struct MovieFragmentParser {
    /// Per-track defaults from `mvex/trex`.
    var trackDefaults: [UInt32: TrackExtendsBox]
    /// The decode time where each track's samples end so far (for a `traf` without `tfdt`).
    var decodeEnd: [UInt32: Int64]
    /// The file's size: a run's samples must lie inside it.
    let fileSize: Int64

    init(trackDefaults: [UInt32: TrackExtendsBox], decodeEnd: [UInt32: Int64], fileSize: Int64) {
        self.trackDefaults = trackDefaults
        self.decodeEnd = decodeEnd
        self.fileSize = fileSize
    }

    mutating func parse(moof payload: ByteReader, moofOffset: Int64, path: BoxPath) throws(MP4Error) -> [FragmentRun] {
        var runs: [FragmentRun] = []
        var children = try BoxIterator(payload, path: path)
        var previousTrafEnd: Int64?
        while let child = try children.next() {
            guard child.header.type == "traf" else { continue }
            let trafRuns = try parseTrackFragment(child.payload, path: child.path, moofOffset: moofOffset, previousTrafEnd: previousTrafEnd)
            if let last = trafRuns.last { previousTrafEnd = last.dataOffset.saturatingAdding(last.byteCount) }
            runs += trafRuns
        }
        return runs
    }

    private mutating func parseTrackFragment(_ payload: ByteReader, path: BoxPath, moofOffset: Int64,
                                             previousTrafEnd: Int64?) throws(MP4Error) -> [FragmentRun] {
        var children = try BoxIterator(payload, path: path)
        var header: (flags: UInt32, trackID: UInt32, base: Int64?, description: UInt32?, duration: UInt32?, size: UInt32?, sampleFlags: UInt32?)?
        var baseDecodeTime: Int64?
        var runs: [FragmentRun] = []
        var nextDataOffset: Int64?
        while let child = try children.next() {
            var reader = child.payload
            switch child.header.type {
            case "tfhd":
                let full = try FullBoxHeader.parse(from: &reader, path: child.path)
                let f = full.flags
                header = try MP4Error.reading(child.path) {
                    () throws(BinaryReadError) -> (UInt32, UInt32, Int64?, UInt32?, UInt32?, UInt32?, UInt32?) in
                    let id = try reader.readUInt32()
                    let base: Int64? = f & 0x01 != 0 ? Int64(bitPattern: try reader.readUInt64()) : nil
                    let description: UInt32? = f & 0x02 != 0 ? try reader.readUInt32() : nil
                    let duration: UInt32? = f & 0x08 != 0 ? try reader.readUInt32() : nil
                    let size: UInt32? = f & 0x10 != 0 ? try reader.readUInt32() : nil
                    let flags: UInt32? = f & 0x20 != 0 ? try reader.readUInt32() : nil
                    return (f, id, base, description, duration, size, flags)
                }
            case "tfdt":
                let full = try FullBoxHeader.parse(from: &reader, path: child.path)
                let time = try MP4Error.reading(child.path) { () throws(BinaryReadError) -> UInt64 in
                    full.version == 1 ? try reader.readUInt64() : UInt64(try reader.readUInt32())
                }
                baseDecodeTime = Int64(bitPattern: min(time, UInt64(Int64.max)))
            case "trun":
                guard let tfhd = header else { throw .missingBox(path: path, type: "tfhd") }
                let defaults = trackDefaults[tfhd.trackID]
                let base: Int64 = tfhd.base ?? ((tfhd.flags & 0x02_0000 != 0 || previousTrafEnd == nil) ? moofOffset : previousTrafEnd!)
                var run = try parseRun(&reader, path: child.path, base: base, continuing: nextDataOffset, trackID: tfhd.trackID)
                run.descriptionIndex = Int(tfhd.description ?? defaults?.descriptionIndex ?? 1)
                run.defaultDuration = tfhd.duration ?? defaults?.duration ?? 0
                run.defaultSize = tfhd.size ?? defaults?.size ?? 0
                run.defaultFlags = tfhd.sampleFlags ?? defaults?.flags ?? 0
                let start = baseDecodeTime ?? decodeEnd[tfhd.trackID] ?? 0
                run.firstDecodeTime = start
                try checkInsideFile(run, path: child.path)
                baseDecodeTime = start.saturatingAdding(run.duration)
                decodeEnd[tfhd.trackID] = baseDecodeTime
                nextDataOffset = run.dataOffset.saturatingAdding(run.byteCount)
                runs.append(run)
            default:
                continue
            }
        }
        return runs
    }

    private func parseRun(_ reader: inout ByteReader, path: BoxPath, base: Int64, continuing: Int64?, trackID: UInt32) throws(MP4Error) -> FragmentRun {
        let start = reader.offset
        let full = try FullBoxHeader.parse(from: &reader, path: path)
        let f = full.flags
        let (count, dataOffset, firstFlags) = try MP4Error.reading(path) { () throws(BinaryReadError) -> (UInt32, Int32?, UInt32?) in
            let count = try reader.readUInt32()
            let offset: Int32? = f & 0x001 != 0 ? Int32(bitPattern: try reader.readUInt32()) : nil
            let first: UInt32? = f & 0x004 != 0 ? try reader.readUInt32() : nil
            return (count, offset, first)
        }
        let fields = [0x100, 0x200, 0x400, 0x800].filter { f & UInt32($0) != 0 }.count
        if fields > 0 {
            try reader.checkTable(count: count, entrySize: 4 * fields, path: path, field: "sample_count")
        } else if count > 1 << 24 {
            throw .invalidField(path: path, field: "sample_count", value: Int64(count), offset: start + 4, allowed: "at most 16777216 without per-sample fields")
        }
        var run = FragmentRun(trackID: trackID, dataOffset: dataOffset.map { base.saturatingAdding(Int64($0)) } ?? continuing ?? base,
                              firstDecodeTime: 0, sampleCount: Int(count), descriptionIndex: 1, defaultDuration: 0,
                              defaultSize: 0, defaultFlags: 0, firstSampleFlags: firstFlags)
        guard fields > 0 else { return run }
        var durations: [UInt32] = [], sizes: [UInt32] = [], flags: [UInt32] = [], offsets: [Int32] = []
        try MP4Error.reading(path) { () throws(BinaryReadError) in
            for _ in 0..<count {
                if f & 0x100 != 0 { durations.append(try reader.readUInt32()) }
                if f & 0x200 != 0 { sizes.append(try reader.readUInt32()) }
                if f & 0x400 != 0 { flags.append(try reader.readUInt32()) }
                if f & 0x800 != 0 { offsets.append(Int32(bitPattern: try reader.readUInt32())) }
            }
        }
        if f & 0x100 != 0 { run.durations = durations }
        if f & 0x200 != 0 { run.sizes = sizes }
        if f & 0x400 != 0 { run.flags = flags }
        if f & 0x800 != 0 { run.compositionOffsets = offsets }
        return run
    }

    private func checkInsideFile(_ run: FragmentRun, path: BoxPath) throws(MP4Error) {
        // Samples of zero bytes with no per-sample sizes: millions of them would cost time for
        // nothing (a real run has sizes, or a default size).
        if run.sizes == nil && run.defaultSize == 0 && run.sampleCount > 0 {
            throw .invalidField(path: path, field: "sample_count with default_sample_size 0", value: Int64(run.sampleCount),
                                offset: run.dataOffset, allowed: "0 (samples of no bytes)")
        }
        let end = run.dataOffset.saturatingAdding(run.byteCount)
        guard run.dataOffset >= 0, end <= fileSize || run.sampleCount == 0 else {
            throw .sampleOutsideFile(trackID: run.trackID, sampleIndex: 0, offset: run.dataOffset, size: run.byteCount, fileSize: fileSize)
        }
    }
}

/// What a track's movie fragments hold in all: counted as the fragments are read, so that a
/// file of any number of fragments costs the same few words (its runs are read again, one
/// `moof` at a time, when its samples are: `FragmentWalk`).
public struct FragmentTotals: Sendable, Hashable {
    /// Track runs (`trun`, ISO/IEC 14496-12, 8.8.8).
    public var runCount = 0
    /// Samples in the runs (saturating).
    public var sampleCount = 0
    /// The sum of the samples' durations, in media timescale units (saturating).
    public var duration: Int64 = 0
    /// The sum of the samples' sizes in bytes (saturating: a hostile `trun` declares any).
    public var byteCount: Int64 = 0

    /// No fragments.
    public init() {}

    /// Counts `run` in.
    mutating func add(_ run: FragmentRun) {
        runCount += 1
        sampleCount = Int(Int64(sampleCount).saturatingAdding(Int64(run.sampleCount)))
        duration = duration.saturatingAdding(run.duration)
        byteCount = byteCount.saturatingAdding(run.byteCount)
    }
}

/// Reads a fragmented file's runs again in file order, one `moof` at a time: the top-level boxes
/// from the first `moof` on, each `moof` through the same `MovieFragmentParser` state that
/// ``MP4File`` read it with, so the runs are the ones it counted. A `moof` it skipped as
/// damaged is skipped again; the walk ends where its scan ended.
struct FragmentWalk: Sendable {
    private var offset: Int64
    private var parser: MovieFragmentParser
    private let declared: Set<UInt32>
    private var ended = false

    init(from offset: Int64, parser: MovieFragmentParser, declaredTracks: Set<UInt32>) {
        self.offset = offset
        self.parser = parser
        self.declared = declaredTracks
    }

    /// The runs of the next `moof` that reads (those of tracks the movie declares), or `nil`
    /// at the end. A failed read leaves the walk where it was, to be tried again.
    mutating func nextFragment(from source: some RandomAccessByteSource) throws(MP4Error) -> [FragmentRun]? {
        let fileSize = parser.fileSize
        while !ended, offset + 8 <= fileSize {
            guard let header = try MP4File.topLevelHeader(source, at: offset, fileSize: fileSize) else {
                ended = true
                break
            }
            var runs: [FragmentRun]?
            if header.type == "moof" {
                let payload = try MP4File.payload(source, header, path: BoxPath.root.appending("moof"))
                var next = parser
                if let parsed = try? next.parse(moof: payload, moofOffset: header.offset, path: BoxPath.root.appending("moof")) {
                    parser = next
                    runs = parsed.filter { declared.contains($0.trackID) }
                }
            }
            if header.end > fileSize { ended = true } else { offset = header.end }
            if let runs { return runs }
        }
        return nil
    }
}

/// Walks a track's fragment runs sample by sample, reading its `moof`s as it goes, and no
/// further than its last run.
struct FragmentCursor: Sendable {
    private var walk: FragmentWalk?
    private let trackID: UInt32
    /// The runs not yet read.
    private var runsLeft: Int
    private var runs: [FragmentRun] = []
    private var runIndex = 0
    private var sampleInRun = 0
    private var offset: Int64 = 0
    private var decodeTime: Int64 = 0

    /// A cursor over the `runCount` runs of `trackID` that `walk` reads; one with no walk has no
    /// samples.
    init(walk: FragmentWalk?, trackID: UInt32, runCount: Int) {
        self.walk = walk
        self.trackID = trackID
        self.runsLeft = runCount
    }

    mutating func next(from source: some RandomAccessByteSource, index: Int) throws(MP4Error) -> SampleLocation? {
        while runIndex >= runs.count || sampleInRun >= runs[runIndex].sampleCount {
            if runIndex < runs.count {
                runIndex += 1
                sampleInRun = 0
                continue
            }
            guard walk != nil, runsLeft > 0, let fragment = try walk!.nextFragment(from: source) else {
                walk = nil
                return nil
            }
            let id = trackID
            runs = Array(fragment.lazy.filter { $0.trackID == id }.prefix(runsLeft))
            runsLeft -= runs.count
            runIndex = 0
            sampleInRun = 0
        }
        let run = runs[runIndex]
        if sampleInRun == 0 {
            offset = run.dataOffset
            decodeTime = run.firstDecodeTime
        }
        let i = sampleInRun
        let duration = run.durations?[i] ?? run.defaultDuration
        let size = run.sizes?[i] ?? run.defaultSize
        let flags = (i == 0 ? run.firstSampleFlags : nil) ?? run.flags?[i] ?? run.defaultFlags
        let location = SampleLocation(index: index, offset: offset, size: Int(size), decodeTime: decodeTime,
                                      compositionOffset: run.compositionOffsets?[i] ?? 0, duration: duration,
                                      isSync: FragmentRun.isSync(flags), descriptionIndex: run.descriptionIndex)
        offset = offset.saturatingAdding(Int64(size))
        decodeTime = decodeTime.saturatingAdding(Int64(duration))
        sampleInRun += 1
        return location
    }
}
