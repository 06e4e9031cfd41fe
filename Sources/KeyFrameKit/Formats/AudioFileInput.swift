public import SystemPackage

/// The PCM of any audio file, as a ``/MediaCore/PCMSource``, opened through the format registry
/// (`MediaFormatRegistry.standard`) by what its bytes are: WAV and raw PCM by
/// ``/MediaFormats/PCMFileReader``; ADTS, MP4 and HLS AAC by ``DecodedAACFile`` (edit list
/// applied); anything else — FLAC, MP3, Ogg Vorbis, Opus, ALAC, AIFF, the audio of a video — by
/// ``LibavformatFileReader`` (libavformat and libavcodec, or libFLAC for true 32-bit FLAC). PCM
/// from the decoders is 32-bit float (32-bit integers from libFLAC); from a PCM file, its own
/// type.
public struct AudioFileInput: PCMSource {
    private var reader: any MediaFormatRegistry.PCMFileSource
    /// The file read.
    public let path: FilePath
    /// The format the file's bytes showed, if any (the registry's ``/MediaFormats/MediaFormatRegistry/detect(_:)``).
    public let format: MediaFileFormat?
    /// Why KeyFrameKit's own reader refused the file before libavformat read it (for example
    /// "unsupported format tag 0x11"), or `nil` when the first reader read it.
    public let refusal: String?

    /// Opens `path`; `rawFormat` is the layout of a raw PCM file (it has no header).
    ///
    /// KeyFrameKit's own readers come first. A file one of them refuses — a WAV of a codec
    /// other than PCM or float (IMA or MS ADPCM, A-law), an MP4 whose audio is not AAC, a file
    /// whose bytes look like ADTS but are not — goes to libavformat; when libavformat cannot read
    /// it either, the error is our reader's, which names the chunk or box and the offset. What
    /// our reader said is kept in ``refusal``. A WAV whose data chunk runs past the end of the
    /// file stays an error (a cut recording), unless `allowsTruncatedWAV`; a playlist our reader
    /// refuses stays refused (libavformat's HLS reader would decode it with holes or without
    /// the gapless trim).
    ///
    /// - Throws: ``/MediaCore/PipelineError`` naming what is wrong with the file.
    public init(path: FilePath, rawFormat: PCMFormat? = nil, allowsTruncatedWAV: Bool = false,
                registry: MediaFormatRegistry = .standard) throws(PipelineError) {
        try self.init(path: path, options: MediaFormatRegistry.InputOptions(rawFormat: rawFormat, allowsTruncatedWAV: allowsTruncatedWAV),
                      registry: registry)
    }

    /// Opens `path` with `options` (a CMAF init segment's segments, an MP4 track, the sample
    /// format decoders give) through `registry`; see ``init(path:rawFormat:allowsTruncatedWAV:registry:)``.
    /// A file with segments or a track named is read by KeyFrameKit's readers only.
    ///
    /// - Throws: ``/MediaCore/PipelineError`` naming what is wrong with the file.
    public init(path: FilePath, options: MediaFormatRegistry.InputOptions, registry: MediaFormatRegistry = .standard) throws(PipelineError) {
        let opened = try registry.pcmInput(path, options: options)
        self.path = path
        reader = opened.source
        format = opened.format
        refusal = opened.refusal.map { "\($0)" }
    }

    /// What reads it: `WAV`, `raw PCM`, `ADTS (AAC)`, `MP4 (AAC)`, `HLS (AAC)`, or libavformat's
    /// container and libavcodec's codec (`flac/flac`, `ogg/opus`), or `flac/libFLAC`.
    public var description: String { reader.readerName }
    /// The PCM layout, known before the first buffer: a PCM file's header, libavcodec's
    /// decoder, or for AAC the first buffer decoded at open (``DecodedAACFile``).
    public var pcmFormat: PCMFormat? { reader.pcmFormat }
    /// Whether the file is PCM read as stored (a WAV or raw PCM by KeyFrameKit's reader).
    public var isPCMFile: Bool { reader is PCMFileReader }
    /// The decoded output's channel count, when known before the first buffer: the PCM layout's,
    /// or for an AAC file its AudioSpecificConfig's (2 when parametric stereo is signalled).
    public var channelCount: Int? {
        pcmFormat?.channelCount ?? (reader as? DecodedAACFile)?.packets.audioSpecificConfig?.channelCount
    }
    /// AAC packets decoded so far, when KeyFrameKit's AAC reader reads the file; `nil` otherwise.
    public var packetsDecoded: Int? { (reader as? DecodedAACFile)?.packets.packetsRead }

    /// The file's tags, cover and chapters: from Vorbis comments, ID3v2 frames, RIFF INFO and
    /// iTunes atoms as libavformat names them, with the cover picture; from an MP4's `ilst`, its
    /// `covr` and its chapters when KeyFrameKit reads it (``/MediaFormats/AudioPacketInput/metadata``);
    /// a WAV's LIST/INFO through libavformat. Empty for raw PCM and ADTS.
    ///
    /// Told downstream as a ``/MediaCore/StreamEvent/metadata(_:)`` before the first buffer
    /// when there is any and ``announcesMetadata``.
    public var metadata: StreamMetadata {
        if reader is PCMFileReader {
            // A WAV's LIST/INFO chunk, as libavformat names it; raw PCM has none.
            return format == .wav ? LibavformatFileReader.metadata(of: path) : StreamMetadata()
        }
        return reader.metadata
    }

    /// Whether ``metadata`` is told downstream (by default); a job that sets the tags itself
    /// turns it off and tells its own (``/MediaCore/AnnouncingSource``).
    public var announcesMetadata = true
    private var metadataTold = false

    /// The file's ``metadata`` before the first buffer (when it has any and
    /// ``announcesMetadata``), then the reader's other events.
    public mutating func takeEvents() -> [StreamEvent] {
        var events: [StreamEvent] = []
        if !metadataTold {
            metadataTold = true
            let metadata = announcesMetadata ? self.metadata : StreamMetadata()
            if metadata != StreamMetadata() { events.append(.metadata(metadata)) }
        }
        // A reader's own tags are told once, above.
        return events + reader.takeEvents().filter { if case .metadata = $0 { false } else { true } }
    }

    /// The next buffer of PCM, `nil` at the end.
    public mutating func next() throws(PipelineError) -> PCMBuffer? { try reader.next() }

    /// How far the reader has got.
    public var progress: MediaProgress { reader.progress }

    /// What the reader stepped over since the last call; first, when KeyFrameKit's own reader
    /// refused the file and libavformat read it, why (``refusal``).
    public mutating func takeDamage() -> [DamageEvent] {
        var events: [DamageEvent] = []
        if let refusal, !refusalReported {
            refusalReported = true
            events.append(DamageEvent(.ignored, message: "read by libavformat, as KeyFrameKit's reader refused it: \(refusal)"))
        }
        return events + reader.takeDamage()
    }

    private var refusalReported = false
}

extension AudioFileInput: StageReporting {
    /// The reader's stages: for AAC, the packet reader and the decoder (``DecodedAACFile``);
    /// otherwise one stage named after what reads the file.
    package func appendStages(to stages: inout [JobReport.Stage], elements: Int64, busy: Duration) {
        JobReport.appendStages(of: reader, role: .source, elements: elements, busy: busy, to: &stages)
    }
}
