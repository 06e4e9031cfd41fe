public import SystemPackage

/// The container jobs of `keyframe demux` and `keyframe mux`: packets moved between containers
/// without decoding, compositions of a packet source and a packet sink around the ``/MediaCore/Pump``.
/// Each job detects and opens its files through the ``/MediaFormats/MediaFormatRegistry`` it is
/// given (`formats:`, ``MuxOptions/formats``; `standard` by default).
public enum Remux {
    /// What a demux wrote.
    public struct DemuxSummary: JobSummary, Sendable {
        /// The audio track written.
        public var audioTrackID: UInt32?
        /// Audio packets written.
        public var audioPackets: Int
        /// The video track written.
        public var videoTrackID: UInt32?
        /// Video samples written.
        public var videoSamples: Int
        /// Priming and remainder the ADTS output cannot carry (from the edit list), in samples.
        public var droppedGapless: (priming: Int, remainder: Int)?
        /// What the pumps did, stage by stage: the audio track's, then the video track's.
        public var report: JobReport
    }

    /// Writes the audio track of the MP4 at `input` as ADTS to `audioOutput`, and optionally its
    /// video track as an Annex-B stream to `videoOutput`. Outputs are written under temporary
    /// names and renamed when both are complete.
    ///
    /// Compositions: MP4 audio track → ``/AACBitstream/ADTSPacketWriter``; MP4 video track →
    /// ``/MediaFormats/AnnexBFileWriter``.
    public static func demux(_ input: FilePath, segments: [FilePath] = [], audioOutput: FilePath?, videoOutput: FilePath?,
                             audioTrackID: UInt32? = nil, formats: MediaFormatRegistry = .standard, control: JobControl? = nil,
                             progress: ((MediaProgress) -> Void)? = nil) throws(PipelineError) -> DemuxSummary {
        guard formats.detect(input) == .mp4 else {
            throw .unsupported("\(input): not an MP4; demux reads \(MediaFileFormat.mp4.fileExtensions.map { ".\($0)" }.joined(separator: ", "))")
        }
        var summary = DemuxSummary(audioPackets: 0, videoSamples: 0, report: JobReport())
        // Outputs are committed together at the end: an error in the second removes the first.
        var committed: [FileByteSink] = []
        defer { for sink in committed { sink.cancel() } }
        if let audioOutput {
            let packets = try formats.aacInput(input, segments: segments, trackID: audioTrackID)
            guard let config = packets.audioSpecificConfig, let track = packets.track, let file = packets.file else {
                throw .unsupported("\(input): no AAC track")
            }
            let byteSink: FileByteSink
            do { byteSink = try FileByteSink(path: audioOutput) } catch { throw .stream(error) }
            // Packets move in runs: one read and one write per run of back-to-back samples.
            var sink: DeferredCommitSink<SampleRunSink<ADTSPacketWriter<FileByteSink>>>
            do { sink = DeferredCommitSink(SampleRunSink(try ADTSPacketWriter(sink: byteSink, audioSpecificConfig: config))) } catch {
                byteSink.cancel()
                throw .bitstream(error)
            }
            committed.append(byteSink)
            var runs = SampleRunSource(packets)
            let report = try Pump.run(from: &runs, into: &sink, control: control, progress: progress)
            summary.audioPackets = sink.inner.base.frameCount
            summary.report.append(report)
            summary.audioTrackID = track.id
            if let edit = track.mediaEdit {
                let valid = track.editedMediaDuration(movieTimescale: file.movieTimescale)
                let remainder = valid.map { max(0, track.mediaDuration.saturatingSubtracting(edit.mediaTime).saturatingSubtracting($0)) } ?? 0
                summary.droppedGapless = (Int(edit.mediaTime), Int(remainder))
            }
        }
        if let videoOutput {
            let demuxer = MP4Demuxer(source: try MediaInput.open(input, segments: segments),
                                     configuration: DemuxerConfiguration(mediaTypes: .video))
            do { try demuxer.start() } catch { throw .container(error) }
            guard let track = demuxer.videoTrack else { throw .unsupported("\(input): no video track") }
            var samples = DemuxedTrackSource(demuxer: demuxer, track: track)
            let byteSink: FileByteSink
            do { byteSink = try FileByteSink(path: videoOutput) } catch { throw .stream(error) }
            committed.append(byteSink)
            var sink = DeferredCommitSink(try AnnexBFileWriter(track: track, sink: byteSink))
            var report = try Pump.run(from: &samples, into: &sink, control: control)
            summary.videoSamples = Int(report.elements)
            summary.videoTrackID = track.id
            // The audio's pump told the file's damage already; the video's adds its own end only.
            if audioOutput != nil { report.damage = report.damage.filter { $0.kind == .endedEarly } }
            summary.report.append(report)
        }
        for sink in committed {
            do { try sink.commit() } catch { throw .stream(error) }
        }
        committed.removeAll()
        return summary
    }

    /// What a mux wrote.
    public struct MuxSummary: JobSummary, Sendable {
        /// AAC packets written.
        public var audioPackets: Int
        /// Video access units written.
        public var videoSamples: Int
        /// What the pump did, stage by stage.
        public var report: JobReport
    }

    /// An Annex-B H.264 or HEVC elementary stream to mux, with the frame rate it has no
    /// timestamps for.
    public struct VideoInput: Sendable {
        /// The `.h264` / `.h265` file.
        public var path: FilePath
        /// The codec; by default what ``/MediaFormats/MediaFileFormat/detect(_:)`` finds.
        public var codec: VideoCodec
        /// The duration of one frame (1/30 s for 30 fps, 1001/30000 s for 29.97).
        public var frameDuration: MediaTime

        /// An input.
        public init(path: FilePath, codec: VideoCodec, frameDuration: MediaTime) {
            self.path = path
            self.codec = codec
            self.frameDuration = frameDuration
        }
    }

    /// How a mux writes.
    public struct MuxOptions: Sendable {
        /// `moov` before `mdat`.
        public var fastStart: Bool
        /// Fragmented (crash-safe), a fragment this long; `nil` for a normal file.
        public var fragmentDuration: MediaTime?
        /// With ``fragmentDuration``, rewrite the finished file as a normal faststart file.
        public var defragment: Bool
        /// The registry the inputs are detected and opened through
        /// (``/MediaFormats/MediaFormatRegistry`` `standard` unless a program registers its own
        /// in a copy).
        public var formats: MediaFormatRegistry = .standard

        /// Options; by default faststart, not fragmented, the inputs opened through `formats`.
        public init(fastStart: Bool = true, fragmentDuration: MediaTime? = nil, defragment: Bool = false,
                    formats: MediaFormatRegistry = .standard) {
            self.fastStart = fastStart
            self.fragmentDuration = fragmentDuration
            self.defragment = defragment
            self.formats = formats
        }
    }

    /// Muxes an ADTS stream (and optionally an Annex-B video stream) into an MP4/M4A.
    ///
    /// ADTS carries no priming, so no gapless edit list is written for it (as `ffmpeg -c copy`).
    ///
    /// Composition: ADTS packets and video access units, interleaved by decode time
    /// (``/MediaCore/InterleavedSource``) → ``/MP4/MP4Muxer``.
    public static func mux(audio: FilePath?, video: VideoInput? = nil, to output: FilePath, options: MuxOptions = MuxOptions(),
                           control: JobControl? = nil) throws(PipelineError) -> MuxSummary {
        var types: MediaType = []
        if audio != nil { types.insert(.audio) }
        if video != nil { types.insert(.video) }
        guard !types.isEmpty else { throw .unsupported("nothing to mux: give an ADTS file and/or a video stream") }
        let audioSource = try audio.map { path throws(PipelineError) in try openADTS(path, formats: options.formats) }
        let videoSource = try video.map(openAnnexB)
        let layout: MuxerConfiguration.Layout = if let duration = options.fragmentDuration {
            .fragmented(fragmentDuration: duration, defragmentOnFinish: options.defragment)
        } else {
            options.fastStart ? .fastStart : .progressive
        }
        var configuration = MuxerConfiguration(layout: layout, mediaTypes: types, encoderName: "KeyFrameKit")
        if video == nil, let audio {
            configuration.expectedSampleCount = estimatedFrameCount(ofADTS: audio)
        }
        if let audioSource, videoSource == nil {
            // Audio alone: nothing to interleave, so packets move in runs (one write per run).
            var runs = SampleRunSource(audioSource)
            var sink = SampleRunSink(try MuxerOutput(path: output, configuration: configuration))
            let report = try Pump.run(from: &runs, into: &sink, control: control)
            return MuxSummary(audioPackets: sink.base.muxer.sampleCount(trackID: 1), videoSamples: 0, report: report)
        }
        var source = InterleavedSource(first: audioSource, second: videoSource)
        var sink = try MuxerOutput(path: output, configuration: configuration)
        let report = try Pump.run(from: &source, into: &sink, control: control)
        return MuxSummary(audioPackets: source.firstCount, videoSamples: source.secondCount, report: report)
    }

    /// About how many frames the ADTS file at `path` holds, a tenth more to be safe: its size
    /// over the mean frame length of four 16 KiB windows spread through it. The muxer leaves
    /// room for a movie of that many samples, and moves the media when the room is short, so the
    /// estimate costs four small reads and is never wrong, only wasteful — bounded: no room at all
    /// when the sample sizes alone would pass 3% of the file (a movie holds 4 bytes per frame;
    /// AAC frames of 96 kb/s are about 280 bytes).
    static func estimatedFrameCount(ofADTS path: FilePath) -> Int? {
        guard let source = FileByteSource.regularFile(at: path), let size = source.size(), size > 0 else { return nil }
        let window: Int64 = 16 * 1024
        var frames = 0
        var bytes: Int64 = 0
        for quarter in 0..<4 {
            let start = size * Int64(quarter) / 4
            guard let data = try? source.read(at: start, count: Int(min(window, size - start))) else { return nil }
            var reader = ADTSReader(source: ArrayByteSource(data))
            while let frame = try? reader.nextFrame() {
                frames += 1
                bytes += Int64(frame.bytes.count)
            }
        }
        guard frames > 0, bytes > 0 else { return nil }
        let meanFrameBytes = Double(bytes) / Double(frames)
        let estimate = Int(Double(size) / meanFrameBytes * 1.1) + 16
        return Int64(estimate) * 4 <= size / 33 ? estimate : nil
    }

    private static func openADTS(_ path: FilePath, formats: MediaFormatRegistry) throws(PipelineError) -> AudioPacketInput {
        guard formats.detect(path) == .adts else { throw .unsupported("\(path): mux takes ADTS audio") }
        return try formats.aacInput(path)
    }

    private static func openAnnexB(_ input: VideoInput) throws(PipelineError) -> AnnexBReader<FileByteSource> {
        let source: FileByteSource
        do { source = try FileByteSource(path: input.path) } catch { throw .stream(error) }
        do { return try AnnexBReader(source: source, codec: input.codec, frameDuration: input.frameDuration) } catch {
            throw .unsupported("\(input.path): \(error)")
        }
    }
}
