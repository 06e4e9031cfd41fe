public import SystemPackage

/// The AAC packets of an input file, whatever holds them, with what decoding them exactly
/// needs: the AudioSpecificConfig and the gapless trim. The format comes from
/// ``MediaFileFormat/detect(_:)``, so an M4A named `.aac` is read as the MP4 it is.
public struct AudioPacketInput: PacketFileSource {
    private enum Reader {
        case adts(ADTSPacketReader<FileByteSource>)
        case mp4(DemuxedTrackSource)
    }

    private var reader: Reader
    /// The file read.
    public private(set) var path: FilePath
    /// The container.
    public let format: MediaFileFormat
    /// The stream's configuration; `nil` for ADTS read as whole frames, whose headers carry it,
    /// and for a track of another codec (``audioFormat``).
    public let audioSpecificConfig: AudioSpecificConfig?
    /// An MP4 track of a codec other than AAC that the input's codec descriptions name (Opus,
    /// FLAC, ALAC), read to be decoded.
    private let describedFormat: EncodedAudioFormat?
    /// The stream as its AudioSpecificConfig (or, for another codec, its sample entry)
    /// describes it; `nil` for ADTS read as whole frames.
    public var audioFormat: EncodedAudioFormat? {
        if let describedFormat { return describedFormat }
        guard case .audio(let stream)? = try? audioSpecificConfig?.formatDescription() else { return nil }
        return stream
    }
    /// The samples to drop at the start and keep in all (from an MP4's edit list or iTunSMPB;
    /// none for ADTS, which cannot say).
    public let trim: GaplessTrim
    /// The MP4 track read; `nil` for ADTS.
    public let track: MP4Track?
    /// The MP4 file, for its movie timescale and tags; `nil` for ADTS.
    public let file: MP4File?
    /// The file's tags and chapters (an MP4's `ilst` and `chpl` or chapter track; none for
    /// ADTS), told downstream as a ``/MediaCore/StreamEvent/metadata(_:)`` before the first
    /// packet when there are any.
    public let metadata: StreamMetadata
    private var metadataTold = false
    /// Packets delivered so far (by ``next()`` and ``nextRun(maxBytes:)``; not those skipped).
    public private(set) var packetsRead = 0

    /// What the packets hold.
    public enum Purpose: Sendable {
        /// To decode: ADTS frames are handed over whole, as `ffmpeg -i x.aac` decodes them.
        case decoding
        /// To put in another container: raw data blocks only, one configuration.
        case remuxing
        /// To copy into a file of the same codec (an edit, a package) without re-encoding: as
        /// ``remuxing``, and an MP4 track of another codec the descriptions name (Opus, FLAC,
        /// ALAC) is read too, its packets as stored.
        case copying

        /// The name ``copying`` had when only edits copied another codec's packets.
        @available(*, deprecated, renamed: "copying")
        public static var editing: Purpose { .copying }
    }

    /// Opens the AAC of `path` (and, for CMAF, its media `segments` after it) through the
    /// format registry (``MediaFormatRegistry/containers``): an ADTS stream, the audio track of
    /// an MP4 (`trackID`, else the first audio track), or an HLS media playlist of CMAF
    /// segments (its init segment and segments, as one fragmented MP4).
    ///
    /// - Throws: `PipelineError.unsupported` for a file that holds no AAC (naming what it
    ///   holds); the container's errors.
    public init(path: FilePath, segments: [FilePath] = [], trackID: UInt32? = nil, purpose: Purpose = .decoding) throws(PipelineError) {
        self = try MediaFormatRegistry.containers.packetInput(
            path, as: AudioPacketInput.self, options: MediaFormatRegistry.InputOptions(segments: segments, trackID: trackID, purpose: purpose))
    }

    /// Opens an HLS media playlist of CMAF segments: its init segment, then its segments in
    /// order (then any `segments` given), read as one fragmented MP4 (``init(mp4Path:segments:trackID:purpose:audioCodecs:)``).
    ///
    /// - Throws: the playlist's refusal (``HLSMediaPlaylist/files(of:)``): a window, a URL, a
    ///   missing segment, a master playlist; the MP4's errors.
    public init(playlistPath path: FilePath, segments: [FilePath] = [], trackID: UInt32? = nil,
                purpose: Purpose = .decoding, audioCodecs: [AudioCodecDescription] = [.aac]) throws(PipelineError) {
        let files = try HLSMediaPlaylist.files(of: path)
        var all = files.segments
        all.append(contentsOf: segments)
        try self.init(container: .mp4, path: files.initSegment, segments: all, trackID: trackID, purpose: purpose, audioCodecs: audioCodecs)
        self.path = path
    }

    /// Opens an ADTS stream (``Purpose`` says whether whole frames or raw data blocks).
    public init(adtsPath path: FilePath, purpose: Purpose = .decoding) throws(PipelineError) {
        try self.init(container: .adts, path: path, segments: RunLengthArray(), trackID: nil, purpose: purpose)
    }

    /// Opens the audio track of an MP4 (`trackID`, else the first audio track), with its media
    /// `segments` after it for a CMAF init segment.
    ///
    /// To decode, a track of another codec that `audioCodecs` describes (Opus, FLAC, ALAC in
    /// KeyFrameKit's standard registry) is read too, trimmed by its edit list.
    ///
    /// - Throws: `PipelineError.unsupported` for a file without AAC audio (naming what it has);
    ///   the container's errors.
    public init(mp4Path path: FilePath, segments: [FilePath] = [], trackID: UInt32? = nil, purpose: Purpose = .decoding,
                audioCodecs: [AudioCodecDescription] = [.aac]) throws(PipelineError) {
        try self.init(container: .mp4, path: path, segments: RunLengthArray(segments), trackID: trackID, purpose: purpose,
                      audioCodecs: audioCodecs)
    }

    /// The two containers the reader reads packets from itself.
    private enum Container { case adts, mp4 }

    private init(container detected: Container, path: FilePath, segments: RunLengthArray<FilePath>, trackID: UInt32?,
                 purpose: Purpose, audioCodecs: [AudioCodecDescription] = [.aac]) throws(PipelineError) {
        self.path = path
        switch detected {
        case .adts:
            guard segments.isEmpty else { throw .unsupported("\(path): ADTS input takes no segments") }
            let source: FileByteSource
            do { source = try FileByteSource(path: path) } catch { throw .stream(error) }
            reader = .adts(ADTSPacketReader(source: source, framing: purpose == .decoding ? .frames : .rawDataBlocks,
                                            totalBytes: source.size()))
            format = .adts
            audioSpecificConfig = nil
            describedFormat = nil
            trim = .none
            track = nil
            file = nil
            metadata = StreamMetadata()
        case .mp4:
            let demuxer = MP4Demuxer(source: try MediaInput.open(path, segments: segments),
                                     configuration: DemuxerConfiguration(mediaTypes: .audio, audioTrackID: trackID))
            do { try demuxer.start() } catch { throw .container(error) }
            guard let file = demuxer.file, let track = demuxer.audioTrack else { throw .unsupported("\(path): no audio track") }
            let config: AudioSpecificConfig?
            do { config = try track.audioSpecificConfig() } catch { throw .container(error) }
            if config == nil, purpose != .remuxing, let entry = track.sampleEntry, entry.type != "mp4a",
               audioCodecs.matching(sampleEntryType: entry.type) != nil,
               case .audio(let described)? = try? track.formatDescription(audioCodecs: audioCodecs), described.codec != .aac {
                // Another codec the descriptions name: its packets as they are, to be decoded by its
                // decoder or edited.
                reader = .mp4(DemuxedTrackSource(demuxer: demuxer, track: track))
                format = .mp4
                audioSpecificConfig = nil
                describedFormat = described
                trim = Self.gaplessTrim(track: track, file: file, outputRate: described.sampleRate)
                self.track = track
                self.file = file
                if let first = FileByteSource.regularFile(at: path) { metadata = StreamMetadata(mp4: file, source: first) } else { metadata = StreamMetadata() }
                return
            }
            guard let config else {
                if purpose == .decoding, let descriptor = track.sampleEntry?.esDescriptor {
                    // An mp4a that is not AAC: name what it is.
                    let oti = descriptor.decoderConfig.objectTypeIndication
                    // (Said as a codec error, in AudioCodec's words for an undecodable stream.)
                    throw PipelineError(.codec, message: "\(descriptor.decoderConfig.objectTypeName) (mp4a, object type indication 0x"
                                        + "\(String(oti, radix: 16, uppercase: true))) cannot be decoded: KeyFrameKit decodes AAC only "
                                        + "(audio track \(track.id) of \(path))", path: path)
                }
                throw .unsupported("\(path): audio track \(track.id) is \(track.codecName); this job takes AAC")
            }
            reader = .mp4(DemuxedTrackSource(demuxer: demuxer, track: track))
            format = .mp4
            audioSpecificConfig = config
            describedFormat = nil
            // HE-AAC signalled implicitly (an AAC-LC config at a core rate, SBR in the frames, as
            // FFmpeg's remux of an HE-AAC ADTS stream writes it): the decoder doubles the rate,
            // and the file's times count output samples.
            var outputRate = config.outputSampleRate
            if purpose == .decoding, !config.sbrPresent, config.audioObjectType == .aacLC, config.samplingFrequency <= 24000,
               var peek = try? AudioPacketInput(container: .mp4, path: path, segments: segments, trackID: track.id, purpose: .remuxing),
               let first = try? peek.next(),
               let block = try? RawDataBlock(parsing: first.data, configuration: RawDataBlock.Configuration(
                   samplingFrequencyIndex: config.samplingFrequencyIndex, channelConfiguration: config.channelConfiguration)),
               block.carriesSBR {
                outputRate *= 2
            }
            trim = Self.gaplessTrim(track: track, file: file, outputRate: outputRate)
            self.track = track
            self.file = file
            if let first = FileByteSource.regularFile(at: path) { metadata = StreamMetadata(mp4: file, source: first) } else { metadata = StreamMetadata() }
        }
    }

    /// The next packet (AAC, or another codec's as ``Purpose/copying`` reads it), `nil` at the end.
    public mutating func next() throws(PipelineError) -> MediaSample? {
        do {
            switch reader {
            case .adts(var adts):
                defer { reader = .adts(adts) }
                let packet = try adts.next()
                if packet != nil { packetsRead += 1 }
                return packet
            case .mp4(var mp4):
                defer { reader = .mp4(mp4) }
                guard var packet = try mp4.next() else { return nil }
                packetsRead += 1
                // Another codec's packets carry its decoder configuration as its description
                // reads it from the sample entry's box (an OpusHead from `dOps`).
                if let describedFormat { packet.format = .audio(describedFormat) }
                return packet
            }
        } catch {
            throw PipelineError(error)
        }
    }

    /// The next packets that lie back to back in the input: an MP4 track's read with one call,
    /// ADTS raw data blocks (``Purpose/remuxing``) taken from the read buffer without a copy
    /// each; whole ADTS frames (``Purpose/decoding``) one at a time.
    public mutating func nextRun(maxBytes: Int) throws(PipelineError) -> MediaSampleRun? {
        do {
            switch reader {
            case .adts(var adts):
                defer { reader = .adts(adts) }
                let run = try adts.nextRun(maxBytes: maxBytes)
                packetsRead += run?.entries.count ?? 0
                return run
            case .mp4(var mp4):
                defer { reader = .mp4(mp4) }
                guard var run = try mp4.nextRun(maxBytes: maxBytes) else { return nil }
                packetsRead += run.entries.count
                if let describedFormat { run.format = .audio(describedFormat) }
                return run
            }
        } catch {
            throw PipelineError(error)
        }
    }

    /// Steps over the next `count` packets of an MP4 track without reading them; returns how
    /// many there were (fewer at the end of the track). ADTS frames are found only by reading
    /// them, so an ADTS input skips none (returns 0): its reader drops them as it reads.
    public mutating func skip(packets count: Int) -> Int {
        switch reader {
        case .mp4(var mp4):
            defer { reader = .mp4(mp4) }
            return mp4.skip(count)
        case .adts:
            return 0
        }
    }

    /// The file's ``metadata`` before the first packet, when it has any.
    public mutating func takeEvents() -> [StreamEvent] {
        guard !metadataTold else { return [] }
        metadataTold = true
        return metadata == StreamMetadata() ? [] : [.metadata(metadata)]
    }

    /// Seconds read, out of the whole.
    public var progress: MediaProgress {
        switch reader {
        case .adts(let adts): adts.progress
        case .mp4(let mp4): mp4.progress
        }
    }

    /// The damage met since the last call.
    public mutating func takeDamage() -> [DamageEvent] {
        switch reader {
        case .adts(var adts):
            defer { reader = .adts(adts) }
            return adts.takeDamage()
        case .mp4(var mp4):
            defer { reader = .mp4(mp4) }
            return mp4.takeDamage()
        }
    }

    /// The rate iTunSMPB counts samples at: the core's for HE-AAC signalled explicitly (half the
    /// output rate, as iTunes writes it), else the output rate.
    static func gaplessTagRate(track: MP4Track, outputRate: Int) -> Int {
        guard let config = try? track.audioSpecificConfig(), config.sbrPresent, config.outputSampleRate == outputRate else { return outputRate }
        return config.samplingFrequency
    }

    /// The trim an MP4 track asks for, in output samples: from its edit list, else from iTunSMPB.
    static func gaplessTrim(track: MP4Track, file: MP4File, outputRate: Int) -> GaplessTrim {
        let scale = Double(max(track.timescale, 1))
        let toOutput = Double(outputRate) / scale
        if let ranges = track.editedMediaRanges(movieTimescale: file.movieTimescale) {
            return GaplessTrim(keeping: ranges.map { range in
                Int64(saturating: Double(range.lowerBound) * toOutput)..<Int64(saturating: Double(range.upperBound) * toOutput)
            })
        }
        if let edit = track.mediaEdit {
            let priming = Int(Int64(saturating: Double(edit.mediaTime) * toOutput))
            var valid = track.editedMediaDuration(movieTimescale: file.movieTimescale).map { Int64(saturating: Double($0) * toOutput) }

            if valid == nil, edit.segmentDuration == 0 {
                // An open-ended edit (a CMAF header's): iTunSMPB, when it gives a length for the
                // same priming, says where the presented samples end.
                for userData in [track.userData, file.userData].compactMap({ $0 }) {
                    let tagToOutput = Double(outputRate) / Double(max(1, Self.gaplessTagRate(track: track, outputRate: outputRate)))
                    if let tags = try? MetadataTags.parse(udta: userData, path: track.path), let gapless = tags.gapless,
                       gapless.originalSampleCount > 0, Int64(saturating: Double(gapless.priming) * tagToOutput) == priming {
                        valid = Int64(saturating: Double(gapless.originalSampleCount) * tagToOutput)
                    }
                }
            }
            return GaplessTrim(priming: priming, validFrameCount: valid)
        }
        for userData in [track.userData, file.userData].compactMap({ $0 }) {
            // iTunSMPB counts the core's samples for HE-AAC (as iTunes writes them), else output samples.
            if let tags = try? MetadataTags.parse(udta: userData, path: track.path), let gapless = tags.gapless {
                let tagToOutput = Double(outputRate) / Double(max(1, Self.gaplessTagRate(track: track, outputRate: outputRate)))
                return GaplessTrim(priming: Int(Int64(saturating: Double(gapless.priming) * tagToOutput)),
                                   validFrameCount: Int64(saturating: Double(gapless.originalSampleCount) * tagToOutput))
            }
        }
        // No edit and no iTunSMPB: a last sample shorter than a frame (a fragmented file's last
        // `trun` entry, a short last `stts` delta) says where the stream ends, as Chromium and
        // ffprobe read it; the padding after it is not presented.
        if let config = try? track.audioSpecificConfig(), case .audio(let audio)? = try? config.formatDescription(),
           audio.sampleRate > 0 {
            let frame = Double(audio.framesPerPacket) * scale / Double(audio.sampleRate)
            let decoded = frame * Double(track.sampleCount)
            let timed = Double(track.mediaDuration)
            if frame > 0, timed < decoded, decoded - timed < frame {
                return GaplessTrim(priming: 0, validFrameCount: Int64(saturating: timed * toOutput))
            }
        }
        return .none
    }
}
