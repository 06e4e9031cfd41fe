internal import MediaCore
internal import AACBitstream

/// One track being written: its format and its sample tables, built as samples arrive, as
/// compact as the boxes that will hold them (a size per sample, run-length times).
final class MuxerTrack {
    let id: UInt32
    let format: FormatDescription
    let timescale: Int32

    // Tables.
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

    // Timing, in `timescale` units, relative to the first sample's decode time.
    var firstDecodeTime: MediaTime?
    var lastDecodeTime: Int64?
    var pendingDuration: Int64 = 0
    var totalBytes: Int64 = 0
    /// The earliest presentation time, in ticks from the first decode time (the composition
    /// delay of a stream with B-frames).
    var earliestPresentation: Int64?
    var maxSampleSize: UInt32 = 0

    /// Samples waiting to be interleaved.
    var queue: [MediaSample] = []
    /// Gapless information: encoder priming and valid length, in samples.
    var gapless: (priming: Int, validFrameCount: Int64)?

    // Fragmented mode: the current fragment's samples.
    var fragmentData: [UInt8] = []
    var fragmentEntries: [(size: UInt32, duration: UInt32, flags: UInt32, compositionOffset: Int32)] = []
    var fragmentStartDecodeTime: Int64 = 0
    var fragmentLastDecodeTime: Int64 = 0

    init(id: UInt32, format: FormatDescription) {
        self.id = id
        self.format = format
        switch format {
        case .audio(let audio): timescale = Int32(clamping: max(audio.sampleRate, 1))
        case .pcm(let pcm): timescale = Int32(clamping: max(pcm.sampleRate, 1))
        case .video: timescale = 90000
        }
    }

    var mediaType: MediaType { format.mediaType }
    var sampleCount: Int { sampleSizes.count }

    /// Sum of the sample durations (the last one included once it is closed).
    var mediaDuration: Int64 {
        timeToSample.reduce(Int64(0)) { $0.saturatingAdding(Int64($1.count).saturatingMultiplied(by: Int64($1.delta))) }
    }

    /// Converts a time to this track's timescale, relative to the first decode time.
    func ticks(_ time: MediaTime) throws(MP4Error) -> Int64 {
        guard let first = firstDecodeTime else { return 0 }
        do {
            return try time.subtracting(first).converted(to: timescale, rounding: .nearest).value
        } catch {
            throw .invalidField(path: BoxPath(components: ["track \(id)"]), field: "sample time", value: time.value, offset: 0,
                                allowed: "a time expressible in timescale \(timescale) (\(error))")
        }
    }

    /// Records a sample's timing and size; returns its decode time in ticks.
    func record(_ sample: MediaSample) throws(MP4Error) -> Int64 {
        if firstDecodeTime == nil { firstDecodeTime = sample.decodeTime }
        let dts = try ticks(sample.decodeTime)
        let pts = try ticks(sample.presentationTime)
        let duration = (try? sample.duration.converted(to: timescale, rounding: .nearest).value) ?? 0
        try record(decodeTicks: dts, presentationTicks: pts, durationTicks: duration, size: sample.data.count, isSync: sample.isSync)
        return dts
    }

    /// Records the timing and size of samples of a run, in order; returns each one's decode
    /// time in ticks through `placed`.
    func record(_ run: MediaSampleRun, placed: (Int64) -> Void) throws(MP4Error) {
        let runStart = MediaTime(value: run.firstDecodeTime, timescale: run.timescale)
        if firstDecodeTime == nil { firstDecodeTime = runStart }
        guard let first = firstDecodeTime else { return }
        // In the track's own timescale, ticks are the run's times less the first decode time.
        let sameScale = run.timescale == timescale && first.timescale == timescale
        var decode = run.firstDecodeTime
        for entry in run.entries {
            let dts: Int64
            let pts: Int64
            let duration: Int64
            if sameScale {
                dts = decode &- first.value
                pts = dts &+ Int64(entry.compositionOffset)
                duration = Int64(entry.duration)
            } else {
                dts = try ticks(MediaTime(value: decode, timescale: run.timescale))
                pts = try ticks(MediaTime(value: decode &+ Int64(entry.compositionOffset), timescale: run.timescale))
                duration = (try? MediaTime(value: Int64(entry.duration), timescale: run.timescale).converted(to: timescale).value) ?? 0
            }
            try record(decodeTicks: dts, presentationTicks: pts, durationTicks: duration, size: entry.size, isSync: entry.isSync)
            placed(dts)
            decode &+= Int64(entry.duration)
        }
    }

    private func record(decodeTicks dts: Int64, presentationTicks pts: Int64, durationTicks duration: Int64, size sampleSize: Int,
                        isSync: Bool) throws(MP4Error) {
        if let last = lastDecodeTime {
            guard dts > last else {
                throw .invalidField(path: BoxPath(components: ["track \(id)"]), field: "decode time of sample \(sampleCount + 1)",
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
    func closeLastDuration() {
        guard lastDecodeTime != nil, timeToSample.reduce(0, { $0 + Int($1.count) }) < sampleCount else { return }
        appendDuration(pendingDuration)
    }

    private func appendDuration(_ duration: Int64) {
        let delta = UInt32(clamping: duration)
        if let last = timeToSample.last, last.delta == delta {
            timeToSample[timeToSample.count - 1].count += 1
        } else {
            timeToSample.append(TimeToSampleEntry(count: 1, delta: delta))
        }
    }

    /// Records that a sample went into the current chunk, starting a new chunk at `offset` if
    /// `newChunk`.
    func placeSample(at offset: UInt64, newChunk: Bool) {
        if newChunk {
            closeChunk()
            chunkOffsets.append(offset)
        }
        samplesInCurrentChunk += 1
    }

    /// Records a chunk of `sampleCount` samples at `offset` (a fragment's run of this track).
    func placeChunk(at offset: UInt64, sampleCount: UInt32) {
        closeChunk()
        chunkOffsets.append(offset)
        samplesInCurrentChunk = sampleCount
        closeChunk()
    }

    func closeChunk() {
        guard samplesInCurrentChunk > 0 else { return }
        let chunkNumber = UInt32(chunkOffsets.count)
        if sampleToChunk.last?.samplesPerChunk != samplesInCurrentChunk {
            sampleToChunk.append(SampleToChunkEntry(firstChunk: chunkNumber, samplesPerChunk: samplesInCurrentChunk, sampleDescriptionIndex: 1))
        }
        samplesInCurrentChunk = 0
    }

    /// The AudioSpecificConfig of an AAC track.
    var audioSpecificConfig: AudioSpecificConfig? {
        guard case .audio(let audio) = format, audio.codec == .aac else { return nil }
        return try? AudioSpecificConfig(bytes: audio.decoderConfiguration)
    }

    /// Whether the format is one the muxer can describe.
    static func check(_ format: FormatDescription) throws(MP4Error) {
        switch format {
        case .audio(let audio):
            guard audio.codec == .aac else {
                throw .unsupportedCodec(trackID: 0, codec: audio.codec.description, reason: "the muxer writes AAC audio")
            }
            do { _ = try AudioSpecificConfig(bytes: audio.decoderConfiguration) } catch {
                throw .bitstream(path: BoxPath(components: ["esds"]), error)
            }
        case .video(let video):
            guard video.codec == .h264 || video.codec == .hevc else {
                throw .unsupportedCodec(trackID: 0, codec: video.codec.description, reason: "the muxer writes H.264 and HEVC video")
            }
            _ = try MovieBoxWriter.configurationRecord(video)
        case .pcm:
            throw .unsupportedCodec(trackID: 0, codec: "pcm", reason: "encode PCM to AAC first")
        }
    }
}
