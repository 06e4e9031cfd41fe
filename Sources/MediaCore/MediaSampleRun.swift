/// Consecutive samples of one track whose bytes lie back to back in one buffer: what container
/// I/O moves at copy speed. A run is read with one system call and written with one, and its
/// samples cost a table entry each instead of an allocation each.
///
/// ``samples`` splits a run into ``MediaSample``s for code that wants them one at a time.
public struct MediaSampleRun: Sendable, Hashable {
    /// One sample of a run: its size and timing. Its bytes follow the previous entry's in
    /// ``MediaSampleRun/data``.
    public struct Entry: Sendable, Hashable {
        /// Bytes.
        public var size: Int
        /// Duration, in the run's timescale.
        public var duration: UInt32
        /// Presentation time minus decode time, in the run's timescale.
        public var compositionOffset: Int32
        /// Whether decoding can start here.
        public var isSync: Bool

        /// An entry.
        @inlinable
        public init(size: Int, duration: UInt32, compositionOffset: Int32 = 0, isSync: Bool = true) {
            self.size = size
            self.duration = duration
            self.compositionOffset = compositionOffset
            self.isSync = isSync
        }
    }

    /// The samples' bytes, back to back, in entry order.
    public private(set) var data: [UInt8]
    /// One entry per sample; their sizes add up to `data.count`.
    public private(set) var entries: [Entry]
    /// The first sample's decode time, in ``timescale`` units.
    public var firstDecodeTime: Int64
    /// Units per second of the times and durations.
    public var timescale: Int32
    /// What the bytes are.
    public var format: FormatDescription
    /// The track the samples belong to (1-based, as in ISO BMFF).
    public var trackID: UInt32

    /// A run; the entries' sizes must be at least 0 and add up to `data.count` (checked: the
    /// bytes and entries cannot change afterwards, so writers can trust them).
    public init(data: [UInt8], entries: [Entry], firstDecodeTime: Int64, timescale: Int32, format: FormatDescription, trackID: UInt32 = 1) {
        precondition(entries.allSatisfy { $0.size >= 0 } && entries.reduce(0) { $0 + $1.size } == data.count,
                     "a run's entry sizes are negative or do not add up to its bytes")
        self.data = data
        self.entries = entries
        self.firstDecodeTime = firstDecodeTime
        self.timescale = timescale
        self.format = format
        self.trackID = trackID
    }

    /// A run of one sample, its duration and composition offset in its decode time's timescale
    /// (rounded, and clamped to the entry's fields): a carrier for sources without runs of their
    /// own, exact for samples whose times share one timescale.
    public init(sample: MediaSample) {
        let timescale = sample.decodeTime.timescale
        // Times that do not fit the decode time's timescale saturate (a run of one is only a
        // carrier: the pump hands it to a sink that splits it back into the sample).
        let duration = (try? sample.duration.converted(to: timescale).value) ?? 0
        let presentation = (try? sample.presentationTime.converted(to: timescale).value) ?? sample.decodeTime.value
        let offset = presentation.subtractingReportingOverflow(sample.decodeTime.value).partialValue
        self.init(data: sample.data,
                  entries: [Entry(size: sample.data.count, duration: UInt32(clamping: duration),
                                  compositionOffset: Int32(clamping: offset), isSync: sample.isSync)],
                  firstDecodeTime: sample.decodeTime.value, timescale: timescale, format: sample.format, trackID: sample.trackID)
    }

    /// Samples in the run.
    @inlinable
    public var count: Int { entries.count }

    /// The run's duration: the entries' durations added up, in ``timescale`` units.
    public var duration: Int64 { entries.reduce(0) { $0 + Int64($1.duration) } }

    /// The samples at `range` (entry indices) as a run of their own: their bytes copied once,
    /// the first decode time moved to the first of them.
    public func slice(_ range: Range<Int>) -> MediaSampleRun {
        precondition(range.lowerBound >= 0 && range.upperBound <= entries.count, "a slice outside the run")
        let before = entries[..<range.lowerBound]
        let start = before.reduce(0) { $0 + $1.size }
        let size = entries[range].reduce(0) { $0 + $1.size }
        let time = before.reduce(firstDecodeTime) { $0 &+ Int64($1.duration) }
        return MediaSampleRun(data: Array(data[start..<(start + size)]), entries: Array(entries[range]), firstDecodeTime: time,
                              timescale: timescale, format: format, trackID: trackID)
    }

    /// The run's samples, one at a time (each with a copy of its bytes).
    public var samples: [MediaSample] {
        var result: [MediaSample] = []
        result.reserveCapacity(entries.count)
        var offset = 0
        var decode = firstDecodeTime
        for entry in entries {
            let size = entry.size
            result.append(MediaSample(
                data: Array(data[offset..<(offset + size)]),
                presentationTime: MediaTime(value: decode.addingReportingOverflow(Int64(entry.compositionOffset)).partialValue, timescale: timescale),
                decodeTime: MediaTime(value: decode, timescale: timescale),
                duration: MediaTime(value: Int64(entry.duration), timescale: timescale),
                isSync: entry.isSync, format: format, trackID: trackID))
            offset += size
            decode = decode.addingReportingOverflow(Int64(entry.duration)).partialValue
        }
        return result
    }
}
