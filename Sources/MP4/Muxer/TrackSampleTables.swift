internal import MediaCore

/// The sample tables of one track being written (ISO/IEC 14496-12, 8.6.1.2 `stts`, 8.6.1.3
/// `ctts`, 8.6.2 `stss`, 8.7.3 `stsz`, 8.7.4 `stsc`, 8.7.5 `stco`), built sample by sample as
/// compactly as the boxes will hold them: a size per sample, run-length times and chunks.
///
/// A value, so that the muxer updates it through one access per run of samples rather than one
/// per field per sample (each access of a class's stored property is checked at run time).
struct TrackSampleTables {
    var sampleSizes: [UInt32] = []
    var timeToSample: [TimeToSampleEntry] = []
    var compositionOffsets: [CompositionOffsetEntry] = []
    var hasCompositionOffsets = false
    var syncSamples: [UInt32] = []
    var allSync = true
    var chunkOffsets: [UInt64] = []
    var sampleToChunk: [SampleToChunkEntry] = []
    var samplesInCurrentChunk: UInt32 = 0
    var chunkStartDecodeTime: Int64 = 0

    // Timing, in the track's timescale, relative to the first sample's decode time.
    var lastDecodeTime: Int64?
    var pendingDuration: Int64 = 0
    var totalBytes: Int64 = 0
    /// The earliest presentation time, in ticks from the first decode time (the composition
    /// delay of a stream with B-frames).
    var earliestPresentation: Int64?
    var maxSampleSize: UInt32 = 0

    var sampleCount: Int { sampleSizes.count }

    /// Sum of the sample durations (the last one included once it is closed).
    var mediaDuration: Int64 {
        timeToSample.reduce(Int64(0)) { $0.saturatingAdding(Int64($1.count).saturatingMultiplied(by: Int64($1.delta))) }
    }

    /// Records a sample's timing and size; decode times must increase.
    mutating func record(decodeTicks dts: Int64, presentationTicks pts: Int64, durationTicks duration: Int64, size sampleSize: Int,
                         isSync: Bool, trackID: UInt32) throws(MP4Error) {
        if let last = lastDecodeTime {
            guard dts > last else {
                throw .invalidField(path: BoxPath(components: ["track \(trackID)"]), field: "decode time of sample \(sampleCount + 1)",
                                    value: dts, offset: 0, allowed: "after the previous sample's (\(last))")
            }
            // The previous sample lasts until this one starts.
            appendDuration(dts - last)
        }
        lastDecodeTime = dts
        pendingDuration = max(duration, 0)
        let size = UInt32(clamping: sampleSize)
        sampleSizes.append(size)
        totalBytes += Int64(size)
        maxSampleSize = max(maxSampleSize, size)
        // stss is needed only once a sample is not sync: until then the numbers are 1...n.
        if !isSync {
            if allSync { syncSamples = (1..<UInt32(sampleSizes.count)).map { $0 } }
            allSync = false
        } else if !allSync {
            syncSamples.append(UInt32(sampleSizes.count))
        }
        let offset = pts - dts
        earliestPresentation = min(earliestPresentation ?? pts, pts)
        if offset != 0 { hasCompositionOffsets = true }
        let clamped = Int32(clamping: offset)
        if let last = compositionOffsets.last, last.offset == clamped {
            compositionOffsets[compositionOffsets.count - 1].count += 1
        } else {
            compositionOffsets.append(CompositionOffsetEntry(count: 1, offset: clamped))
        }
    }

    /// Closes the last sample's duration (at finish).
    mutating func closeLastDuration() {
        guard lastDecodeTime != nil, timeToSample.reduce(0, { $0 + Int($1.count) }) < sampleCount else { return }
        appendDuration(pendingDuration)
    }

    private mutating func appendDuration(_ duration: Int64) {
        let delta = UInt32(clamping: duration)
        if let last = timeToSample.last, last.delta == delta {
            timeToSample[timeToSample.count - 1].count += 1
        } else {
            timeToSample.append(TimeToSampleEntry(count: 1, delta: delta))
        }
    }

    /// Places the sample just recorded at `offset`: in the current chunk if `continuesChunk`
    /// (the previous sample in the file was this track's) and the chunk is younger than
    /// `chunkDuration` ticks, else in a new chunk starting there.
    mutating func placeSample(at offset: UInt64, decodeTicks dts: Int64, continuesChunk: Bool, chunkDuration: Int64) {
        if !continuesChunk || samplesInCurrentChunk == 0 || dts - chunkStartDecodeTime >= chunkDuration {
            closeChunk()
            chunkOffsets.append(offset)
            chunkStartDecodeTime = dts
        }
        samplesInCurrentChunk += 1
    }

    /// Records a chunk of `sampleCount` samples at `offset` (a fragment's run of this track).
    mutating func placeChunk(at offset: UInt64, sampleCount: UInt32) {
        closeChunk()
        chunkOffsets.append(offset)
        samplesInCurrentChunk = sampleCount
        closeChunk()
    }

    /// Ends the current chunk, adding an `stsc` entry when its sample count differs from the last.
    mutating func closeChunk() {
        guard samplesInCurrentChunk > 0 else { return }
        let chunkNumber = UInt32(chunkOffsets.count)
        if sampleToChunk.last?.samplesPerChunk != samplesInCurrentChunk {
            sampleToChunk.append(SampleToChunkEntry(firstChunk: chunkNumber, samplesPerChunk: samplesInCurrentChunk, sampleDescriptionIndex: 1))
        }
        samplesInCurrentChunk = 0
    }
}
