internal import MediaCore
internal import AACBitstream

/// One track being written: its format, its sample tables (`TrackSampleTables`) built as
/// samples arrive, and what the layout writers keep per track.
final class MuxerTrack {
    let id: UInt32
    let format: FormatDescription
    /// How the audio codec is described in the sample entry; `nil` for video.
    let audioCodec: AudioCodecDescription?
    let timescale: Int32

    /// The sample tables built so far.
    var tables = TrackSampleTables()
    /// The first sample's decode time: tables count ticks from it.
    var firstDecodeTime: MediaTime?

    /// Samples waiting to be interleaved.
    var queue: [MediaSample] = []
    /// Gapless information: encoder priming and valid length, in samples.
    var gapless: (priming: Int, validFrameCount: Int64)?
    /// Several edits: the media samples presented, range after range (a gapless join).
    var segments: [Range<Int64>]?

    // Fragmented mode: the current fragment's samples.
    var fragmentData: [UInt8] = []
    var fragmentEntries: [(size: UInt32, duration: UInt32, flags: UInt32, compositionOffset: Int32)] = []
    var fragmentStartDecodeTime: Int64 = 0
    var fragmentLastDecodeTime: Int64 = 0

    /// The rate iTunSMPB counts samples at: the core's (half the output rate) for HE-AAC that
    /// signals SBR in its config (explicitly or by the 0x2B7 extension), as iTunes writes it and FFmpeg reads it (its AAC decoder doubles
    /// the skip when SBR doubles the rate); else the sample rate.
    var gaplessTagRate: Int {
        guard case .audio(let audio) = format, audio.codec == .aac,
              let config = try? AudioSpecificConfig(bytes: audio.decoderConfiguration),
              config.sbrPresent, config.outputSampleRate == 2 * config.samplingFrequency,
              audio.sampleRate == config.outputSampleRate else { return Int(timescale) }
        return config.samplingFrequency
    }

    /// The iTunSMPB numbers of ``gapless`` for `mediaDuration` media units, counted at
    /// ``gaplessTagRate`` (for HE-AAC the core's samples, rounded up; the padding is what is left,
    /// so the three add up to the media); `nil` without gapless numbers.
    func gaplessTag(mediaDuration media: Int64) -> ITunesGaplessInfo? {
        guard let gapless else { return nil }
        let padding = max(0, Int(media) - gapless.priming - Int(gapless.validFrameCount))
        let tagRate = gaplessTagRate
        guard tagRate != Int(timescale) else {
            return ITunesGaplessInfo(priming: gapless.priming, padding: padding, originalSampleCount: gapless.validFrameCount)
        }
        func tagged(_ samples: Int64) -> Int64 { (samples * Int64(tagRate) + Int64(timescale) - 1) / Int64(timescale) }
        let totalTagged = media * Int64(tagRate) / Int64(max(timescale, 1))
        return ITunesGaplessInfo(priming: Int(tagged(Int64(gapless.priming))),
                                 padding: Int(max(0, totalTagged - tagged(Int64(gapless.priming)) - tagged(gapless.validFrameCount))),
                                 originalSampleCount: tagged(gapless.validFrameCount))
    }

    init(id: UInt32, format: FormatDescription, audioCodec: AudioCodecDescription? = nil) {
        self.id = id
        self.format = format
        if case .audio(let audio) = format {
            self.audioCodec = audioCodec ?? [AudioCodecDescription.aac].matching(audio.codec)
        } else {
            self.audioCodec = nil
        }
        switch format {
        case .audio(let audio): timescale = Int32(clamping: max(audio.sampleRate, 1))
        case .pcm(let pcm): timescale = Int32(clamping: max(pcm.sampleRate, 1))
        case .video: timescale = 90000
        }
    }

    var mediaType: MediaType { format.mediaType }
    var sampleCount: Int { tables.sampleCount }
    /// Sum of the sample durations (the last one included once it is closed).
    var mediaDuration: Int64 { tables.mediaDuration }
    var sampleSizes: [UInt32] { tables.sampleSizes }
    var timeToSample: [TimeToSampleEntry] { tables.timeToSample }
    var compositionOffsets: [CompositionOffsetEntry] { tables.compositionOffsets }
    var hasCompositionOffsets: Bool { tables.hasCompositionOffsets }
    var syncSamples: [UInt32] { tables.syncSamples }
    var allSync: Bool { tables.allSync }
    var sampleToChunk: [SampleToChunkEntry] { tables.sampleToChunk }
    var chunkOffsets: [UInt64] {
        get { tables.chunkOffsets }
        set { tables.chunkOffsets = newValue }
    }
    var totalBytes: Int64 { tables.totalBytes }
    var earliestPresentation: Int64? { tables.earliestPresentation }
    var maxSampleSize: UInt32 { tables.maxSampleSize }

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
        try tables.record(decodeTicks: dts, presentationTicks: pts, durationTicks: duration, size: sample.data.count,
                          isSync: sample.isSync, trackID: id)
        return dts
    }

    /// Records the timing and size of the samples of a run written back to back from `offset`,
    /// and places them in chunks as ``TrackSampleTables/placeSample(at:decodeTicks:continuesChunk:chunkDuration:)``
    /// does sample by sample; `continuesChunk` says whether the bytes before `offset` were this
    /// track's. The tables are updated through one access for the whole run.
    func record(_ run: MediaSampleRun, at offset: Int64, continuesChunk: Bool) throws(MP4Error) {
        let runStart = MediaTime(value: run.firstDecodeTime, timescale: run.timescale)
        if firstDecodeTime == nil { firstDecodeTime = runStart }
        guard let first = firstDecodeTime else { return }
        // In the track's own timescale, ticks are the run's times less the first decode time.
        let sameScale = run.timescale == timescale && first.timescale == timescale
        let chunkDuration = Int64(timescale)
        var decode = run.firstDecodeTime
        var offset = offset
        var continuesChunk = continuesChunk
        var tables = TrackSampleTables()
        swap(&tables, &self.tables)
        defer { swap(&tables, &self.tables) }
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
            try tables.record(decodeTicks: dts, presentationTicks: pts, durationTicks: duration, size: entry.size,
                              isSync: entry.isSync, trackID: id)
            tables.placeSample(at: UInt64(offset), decodeTicks: dts, continuesChunk: continuesChunk, chunkDuration: chunkDuration)
            continuesChunk = true
            offset += Int64(entry.size)
            decode &+= Int64(entry.duration)
        }
    }

    /// Places the sample just recorded (see ``TrackSampleTables/placeSample(at:decodeTicks:continuesChunk:chunkDuration:)``).
    func placeSample(at offset: Int64, decodeTicks dts: Int64, continuesChunk: Bool) {
        tables.placeSample(at: UInt64(offset), decodeTicks: dts, continuesChunk: continuesChunk, chunkDuration: Int64(timescale))
    }

    /// Records a chunk of `sampleCount` samples at `offset` (a fragment's run of this track).
    func placeChunk(at offset: UInt64, sampleCount: UInt32) { tables.placeChunk(at: offset, sampleCount: sampleCount) }

    /// Ends the current chunk.
    func closeChunk() { tables.closeChunk() }

    /// Closes the last sample's duration (at finish).
    func closeLastDuration() { tables.closeLastDuration() }

    /// The description of the format's codec among `audioCodecs`, for audio; `nil` for video.
    ///
    /// - Throws: ``MP4Error/unsupportedCodec(trackID:codec:reason:)`` for a codec none of
    ///   `audioCodecs` describes, a configuration its description refuses, video other than
    ///   H.264 and HEVC, or PCM.
    static func check(_ format: FormatDescription, audioCodecs: [AudioCodecDescription]) throws(MP4Error) -> AudioCodecDescription? {
        switch format {
        case .audio(let audio):
            guard let description = audioCodecs.matching(audio.codec) else {
                throw .unsupportedCodec(trackID: 0, codec: audio.codec.description,
                                        reason: "the muxer describes \(audioCodecs.describedCodecs) audio (register the codec's description)")
            }
            do { try description.check(audio) } catch {
                throw .unsupportedCodec(trackID: 0, codec: audio.codec.description, reason: error.reason)
            }
            return description
        case .video(let video):
            guard video.codec == .h264 || video.codec == .hevc else {
                throw .unsupportedCodec(trackID: 0, codec: video.codec.description, reason: "the muxer writes H.264 and HEVC video")
            }
            _ = try MovieBoxWriter.configurationRecord(video)
            return nil
        case .pcm:
            throw .unsupportedCodec(trackID: 0, codec: "pcm", reason: "encode PCM to AAC first")
        }
    }
}
