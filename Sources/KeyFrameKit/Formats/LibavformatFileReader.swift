public import SystemPackage

/// The PCM of an audio file KeyFrameKit's own readers do not read — FLAC, MP3, Ogg Vorbis, Opus,
/// ALAC, AIFF, an ADPCM WAV, the audio of a video — by ``/AudioCodec/AudioFileDecoder``
/// (libavformat and libavcodec); true 32-bit FLAC, which FFmpeg 5.1 cannot decode, by
/// ``/AudioCodec/FLACFileDecoder`` (libFLAC). The format registry's fallback
/// (``/MediaFormats/MediaFormatRegistry/fallback``, in `MediaFormatRegistry.standard`).
public struct LibavformatFileReader: MediaFormatRegistry.PCMFileSource {
    private enum Decoder {
        case libavcodec(AudioFileDecoder)
        case libFLAC(FLACFileDecoder)
    }

    private var decoder: Decoder
    /// The file read.
    public let path: FilePath
    /// libavformat's container and libavcodec's codec (`flac/flac`, `ogg/opus`), or `flac/libFLAC`.
    public private(set) var readerName: String
    /// The PCM layout: 32-bit float from libavcodec, 32-bit integers from libFLAC.
    public private(set) var pcmFormat: PCMFormat?

    /// Opens `path`. An MP3 with stray bytes after its ID3v2 tag is read from its first frame,
    /// so that its Xing/LAME header's delay and padding are honoured.
    ///
    /// - Throws: `PipelineError.codec` when libavformat and libavcodec cannot read it.
    public init(path: FilePath) throws(PipelineError) {
        self.path = path
        if FLACFileDecoder.isFLAC32(path: path) {
            // True 32-bit FLAC, of which FFmpeg 5.1 decodes no frame: libFLAC reads the audio;
            // the tags and cover still come from libavformat (``metadata``).
            let flac: FLACFileDecoder
            do { flac = try FLACFileDecoder(path: path) } catch { throw .codec(error) }
            decoder = .libFLAC(flac)
            readerName = "flac/libFLAC"
            pcmFormat = flac.outputFormat
            return
        }
        let decoded: AudioFileDecoder
        do {
            decoded = try AudioFileDecoder(path: path, skippingInitialBytes: MediaFileFormat.mpegAudioStartAfterStrayBytes(path) ?? 0)
        } catch {
            throw .codec(error)
        }
        decoder = .libavcodec(decoded)
        readerName = "\(decoded.containerName)/\(decoded.codecName)"
        pcmFormat = decoded.outputFormat
    }

    /// The tags of Vorbis comments, ID3v2 frames, RIFF INFO and iTunes atoms as libavformat
    /// names them, with the cover picture (libavformat reads a 32-bit FLAC's metadata blocks
    /// too; only its decoder fails).
    public var metadata: StreamMetadata {
        var metadata = switch decoder {
        case .libavcodec(let decoded): StreamMetadata(genericTags: decoded.tags, coverArt: decoded.attachedPicture)
        case .libFLAC: Self.metadata(of: path)
        }
        metadata.chapters = chapters
        return metadata
    }

    /// The file's chapters, as its own tag holds them (ID3 `CHAP`, Vorbis `CHAPTERxxx`): what
    /// the registry that opened it read with the format's ``/MediaFormats/MetadataEditor``.
    public var chapters: [StreamMetadata.Chapter] = []

    /// The tags libavformat reads from `path` (a WAV's LIST/INFO chunk: INAM, IART, IPRD, ICRD,
    /// IGNR, ICMT, ITRK); none when it cannot open the file.
    public static func metadata(of path: FilePath) -> StreamMetadata {
        guard let tags = try? AudioFileDecoder(path: path) else { return StreamMetadata() }
        return StreamMetadata(genericTags: tags.tags, coverArt: tags.attachedPicture)
    }

    /// The next buffer of PCM, `nil` at the end.
    public mutating func next() throws(PipelineError) -> PCMBuffer? {
        switch decoder {
        case .libavcodec(let decoded):
            do { return try decoded.next() } catch {
                // FLAC that libavcodec decodes none of (FFmpeg 5.1 with some of its own encoder's
                // large blocks: 16384 or 32768 samples of many channels) goes to libFLAC before
                // anything was delivered.
                guard decoded.decodedFrameCount == 0, decoded.codec == .flac, FLACStreamInfo(path: path) != nil,
                      let flac = try? FLACFileDecoder(path: path) else { throw .codec(error) }
                decoder = .libFLAC(flac)
                readerName = "flac/libFLAC"
                pcmFormat = flac.outputFormat
                do { return try flac.next() } catch { throw .codec(error) }
            }
        case .libFLAC(let flac):
            do { return try flac.next() } catch { throw .codec(error) }
        }
    }

    /// How far the decoder has got.
    public var progress: MediaProgress {
        switch decoder {
        case .libavcodec(let decoded): decoded.progress
        case .libFLAC(let flac): flac.progress
        }
    }

    /// What the decoder stepped over since the last call.
    public mutating func takeDamage() -> [DamageEvent] {
        switch decoder {
        case .libavcodec(let decoded): decoded.takeDamage()
        case .libFLAC(let flac): flac.takeDamage()
        }
    }
}

/// The packets of a file decoded to PCM by the decoder a codec registry has for their codec, the
/// container's gapless trim applied: how `MediaFormatRegistry.standard` opens ADTS, MP4 and HLS
/// (``DecodedAACFile``) and any registered container's packets as PCM.
///
/// The layout (``pcmFormat``) is known once the file is open: the first buffer is decoded then
/// and held for the first ``next()``. The decoder's own output says the rate and channels,
/// HE-AAC signalled only in the frames (ADTS, FFmpeg's remuxes) and parametric stereo
/// included, which no header gives exactly.
public struct DecodedPacketFile<Packets: PacketFileSource>: MediaFormatRegistry.PCMFileSource {
    private var chain: TransformedSource<Packets, AnyAudioDecoder>
    /// The first buffer, decoded at open, until ``next()`` hands it on.
    private var first: PCMBuffer?
    /// What reads it: `ADTS (AAC)`, `MP4 (AAC)`, `HLS (AAC)`, or a registered container and codec.
    public let readerName: String
    /// The decoded layout: the first buffer's; `nil` for a file with no audio.
    public let pcmFormat: PCMFormat?

    /// The packets of `packets` decoded by `decoder`, said as `readerName`.
    public init(_ packets: Packets, decoder: any AudioDecoder, readerName: String) throws(PipelineError) {
        // A packet that cannot be decoded (a damaged file) is stepped over and said.
        decoder.skipsUndecodablePackets = true
        self.readerName = readerName
        chain = packets.transformed(by: decoder)
        first = try chain.next()
        pcmFormat = first?.format
    }

    /// The packets read.
    public var packets: Packets { chain.upstream }
    /// The file's tags and chapters.
    public var metadata: StreamMetadata { chain.upstream.metadata }
    /// The next buffer of PCM, `nil` at the end.
    public mutating func next() throws(PipelineError) -> PCMBuffer? {
        if let buffer = first {
            first = nil
            return buffer
        }
        return try chain.next()
    }
    /// How far the reader has got.
    public var progress: MediaProgress { chain.progress }
    /// What the reader stepped over: the container's damage and the packets the decoder could
    /// not decode.
    public mutating func takeDamage() -> [DamageEvent] { chain.takeDamage() + chain.transform.base.takeDamage() }
    /// The packets' events (their tags), decoded.
    public mutating func takeEvents() -> [StreamEvent] { chain.takeEvents() }
}

/// AAC packets decoded to PCM (``/MediaFormats/AudioPacketInput`` → ``/AudioCodec/AACDecoder``).
public typealias DecodedAACFile = DecodedPacketFile<AudioPacketInput>

extension DecodedPacketFile where Packets == AudioPacketInput {
    /// The packets of `packets`, decoded to `sampleFormat` by the decoder `codecs` has for them;
    /// `container` is the format the file was opened as (an HLS playlist's packets are an MP4's),
    /// by default the packets' own.
    public init(_ packets: AudioPacketInput, sampleFormat: PCMSampleFormat = .float32, container: MediaFileFormat? = nil,
                codecs: AudioCodecRegistry = .standard) throws(PipelineError) {
        let decoder = try packets.makeDecoder(sampleFormat: sampleFormat, codecs: codecs)
        let container = container ?? packets.format
        let codec = packets.audioFormat.map { $0.codec == .aac ? "AAC" : $0.codec.name } ?? "AAC"
        try self.init(packets, decoder: decoder, readerName: container == .hlsPlaylist ? "HLS (\(codec))" : "\(container) (\(codec))")
    }
}

extension DecodedPacketFile where Packets == AnyPacketFileSource {
    /// The packets of a registered container, decoded to `sampleFormat` by the decoder `codecs`
    /// has for their codec (the container's ``/MediaFormats/PacketFileSource/audioFormat``).
    ///
    /// - Throws: `PipelineError.unsupported` for a container that does not say its codec;
    ///   `PipelineError.codec` when no decoder of it is registered.
    public init(_ packets: any PacketFileSource, sampleFormat: PCMSampleFormat = .float32,
                codecs: AudioCodecRegistry = .standard) throws(PipelineError) {
        guard let stream = packets.audioFormat else {
            throw .unsupported("\(packets.path): \(packets.format) does not say its codec", path: packets.path)
        }
        // AAC's decoder is configured by the AudioSpecificConfig, raw data blocks as an MP4's.
        var config: AudioSpecificConfig?
        if stream.codec == .aac {
            do { config = try AudioSpecificConfig(bytes: stream.decoderConfiguration) } catch { throw .bitstream(error) }
        }
        let decoder = try codecs.decoder(for: stream.codec, config: config, stream: stream, sampleFormat: sampleFormat, trim: packets.trim)
        try self.init(AnyPacketFileSource(packets), decoder: decoder, readerName: "\(packets.format) (\(stream.codec))")
    }
}

extension DecodedPacketFile: StageReporting {
    /// The packet reader's stage and the decoder's.
    package func appendStages(to stages: inout [JobReport.Stage], elements: Int64, busy: Duration) {
        JobReport.appendStages(of: chain, role: .source, elements: elements, busy: busy, to: &stages)
    }
}

extension MediaFormatRegistry {
    /// KeyFrameKit's registry: ``/MediaFormats/MediaFormatRegistry/containers`` with their
    /// packets decoded to PCM by the standard codec registry (``standard(codecs:)``), and
    /// libavformat (``LibavformatFileReader``) as the fallback for every other audio file.
    public static let standard: MediaFormatRegistry = standard(codecs: .standard)

    /// ``/MediaFormats/MediaFormatRegistry/containers`` with the packets of every entry that
    /// reads only packets (ADTS, MP4, an HLS playlist; a registered container) decoded to PCM by
    /// `codecs`' decoder for their codec (``DecodedPacketFile``), and libavformat
    /// (``LibavformatFileReader``) as the fallback for every other audio file.
    public static func standard(codecs: AudioCodecRegistry) -> MediaFormatRegistry {
        var registry = MediaFormatRegistry.containers
        registry.audioCodecs = codecs.descriptions
        registry.packetDecoder = { packets, container, options throws(PipelineError) -> any PCMFileSource in
            if let aac = packets as? AudioPacketInput {
                return try DecodedAACFile(aac, sampleFormat: options.decodedSampleFormat, container: container, codecs: codecs)
            }
            return try DecodedPacketFile<AnyPacketFileSource>(packets, sampleFormat: options.decodedSampleFormat, codecs: codecs)
        }
        registry.fallback = Fallback(name: "libavformat") { path, _ throws(PipelineError) in
            var reader = try LibavformatFileReader(path: path)
            // The chapters of a format KeyFrameKit reads the tags of itself (MP3, FLAC, Ogg Opus).
            let containers = MediaFormatRegistry.containers
            if let editor = containers.entry(for: containers.detect(path))?.metadataEditor {
                reader.chapters = (try? editor.read(path).chapters) ?? []
            }
            return reader
        }
        if var flac = registry.entry(for: .flac) {
            flac.validator = { path throws(PipelineError) in try FLACFileDecoder.findings(for: path) }
            registry.register(flac)
        }
        return registry
    }
}
