extension Remux {
    /// What a mux wrote.
    public struct MuxSummary: Sendable {
        /// AAC packets written.
        public var audioPackets: Int
        /// Video access units written.
        public var videoSamples: Int
        /// Damage found in the inputs.
        public var damage: [String]
    }

    /// Muxes an ADTS stream (and optionally an Annex-B video stream) into an MP4/M4A.
    ///
    /// ADTS carries no priming, so no gapless edit list is written for it (as `ffmpeg -c copy`).
    ///
    /// - Parameter defragment: with `fragmentDuration`, rewrite the finished file as a normal
    ///   faststart file (the fragments protect the recording until then).
    public static func mux(audioPath: String?, video: VideoInput? = nil, outputPath: String, fastStart: Bool = true,
                           fragmentDuration: MediaTime? = nil, defragment: Bool = false) throws(PipelineError) -> MuxSummary {
        var types: MediaType = []
        if audioPath != nil { types.insert(.audio) }
        if video != nil { types.insert(.video) }
        guard !types.isEmpty else { throw .unsupported("nothing to mux: give an ADTS file and/or a video stream") }
        let muxer = MP4Muxer(configuration: MuxerConfiguration(outputPath: outputPath, mediaTypes: types, fastStart: fastStart,
                                                               fragmentDuration: fragmentDuration, rewriteFragmentedOnFinish: defragment,
                                                               encoderName: "KeyFrameKit"))
        do { try muxer.start() } catch { throw .container(error) }
        var summary = MuxSummary(audioPackets: 0, videoSamples: 0, damage: [])
        do throws(PipelineError) {
            var audio = try audioPath.map { path throws(PipelineError) in try ADTSPacketSource(path: path) }
            var videoSource = try video.map { input throws(PipelineError) in try VideoSampleSource(input) }
            // Feed both in decode-time order; the muxer interleaves within its bounded queues.
            var nextAudio = try audio?.next()
            var nextVideo = try videoSource?.next()
            while nextAudio != nil || nextVideo != nil {
                let takeAudio: Bool
                if let a = nextAudio, let v = nextVideo { takeAudio = a.decodeTime <= v.decodeTime } else { takeAudio = nextAudio != nil }
                if takeAudio, let sample = nextAudio {
                    do { try muxer.append(sample) } catch { throw .container(error) }
                    summary.audioPackets += 1
                    nextAudio = try audio?.next()
                } else if let sample = nextVideo {
                    do { try muxer.append(sample) } catch { throw .container(error) }
                    summary.videoSamples += 1
                    nextVideo = try videoSource?.next()
                }
            }
            summary.damage = (audio?.damage ?? []) + (videoSource?.damage ?? [])
            do { try muxer.finish() } catch { throw .container(error) }
        } catch {
            muxer.cancel()
            throw error
        }
        return summary
    }
}

/// AAC packets out of an ADTS file, timed by counting: packet k starts at k × 1024 samples.
struct ADTSPacketSource {
    private var reader: ADTSReader<FileByteSource>
    private var format: FormatDescription?
    private var config: AudioSpecificConfig?
    private var firstHeader: ADTSHeader?
    private var count: Int64 = 0
    private(set) var damage: [String] = []

    init(path: String) throws(PipelineError) {
        do { reader = ADTSReader(source: try FileByteSource(path: path)) } catch { throw .stream(error) }
    }

    mutating func next() throws(PipelineError) -> MediaSample? {
        let frame: ADTSFrame?
        do { frame = try reader.nextFrame() } catch { throw .bitstream(error) }
        damage += reader.takeEvents().filter(\.isDamage).map(\.description)
        guard let frame else { return nil }
        let header = frame.header
        guard header.rawDataBlockCount == 1 else {
            throw .unsupported("ADTS frame at byte \(frame.offset) holds \(header.rawDataBlockCount) raw data blocks; MP4 needs one per sample")
        }
        if let first = firstHeader {
            guard header.profile == first.profile, header.samplingFrequencyIndex == first.samplingFrequencyIndex,
                  header.channelConfiguration == first.channelConfiguration else {
                throw .unsupported("ADTS frame at byte \(frame.offset) changes the stream's configuration; an MP4 track has one")
            }
        } else {
            firstHeader = header
        }
        if format == nil {
            guard let rate = header.sampleRate, (1...7).contains(header.channelConfiguration) else {
                throw .unsupported("ADTS frame at byte \(frame.offset): channel configuration \(header.channelConfiguration) (a PCE) is not supported")
            }
            do {
                let asc = try AudioSpecificConfig(objectType: header.audioObjectType, sampleRate: rate,
                                                  channelCount: header.channelConfiguration == 7 ? 8 : Int(header.channelConfiguration))
                config = asc
                format = try asc.formatDescription()
            } catch { throw .bitstream(error) }
        }
        guard let format, let rate = config?.samplingFrequency else { return nil }
        let scale = Int32(rate)
        defer { count += 1 }
        return MediaSample(data: Array(frame.payload), presentationTime: MediaTime(value: count * 1024, timescale: scale),
                           duration: MediaTime(value: 1024, timescale: scale), format: format)
    }
}
