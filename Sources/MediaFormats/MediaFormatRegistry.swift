public import SystemPackage

/// The one registry of file formats: for each ``MediaFileFormat`` (its identity: name,
/// extensions, content sniffing, MIME type), how a job opens a file of it as a source
/// and creates one as a sink. Jobs open files only through a registry, so that a format is
/// one more entry, not one more branch in every job.
///
/// An entry opens a file as `any` ``PCMFileSource`` or ``PacketFileSource`` and creates one as
/// `any` ``PCMFileSink`` or ``PacketFileSink``: a container of another package is a reader and a
/// writer conforming to those protocols, and one ``register(_:)``.
///
/// ``containers`` holds KeyFrameKit's own readers and writers: WAV and raw PCM
/// (``PCMFileReader``, ``PCMFileOutput``), ADTS and MP4 AAC (``AudioPacketInput``,
/// ``AudioPacketOutput``) and an HLS media playlist as an input. A layer with codecs adds what
/// it can: KeyFrameKit's `MediaFormatRegistry.standard` decodes the AAC entries to PCM and
/// registers libavformat as the ``fallback`` for every other audio file.
///
/// Which entry reads a file is what its bytes say (``detect(_:)``, asking each registered
/// format's ``MediaFileFormat/recognizes``); which entry writes one is what its name says
/// (``format(nameOf:)``). A format of another package is one ``register(_:)`` of an entry
/// whose ``MediaFileFormat`` it defines.
public struct MediaFormatRegistry: Sendable {
    /// How an input is opened.
    public struct InputOptions: Sendable {
        /// The layout of a raw PCM file (it has no header).
        public var rawFormat: PCMFormat?
        /// For a CMAF init segment, its media segments, read after it.
        public var segments: [FilePath]
        /// The MP4 audio track; by default the first.
        public var trackID: UInt32?
        /// What AAC packets are read for (whole ADTS frames to decode, raw data blocks to remux).
        public var purpose: AudioPacketInput.Purpose
        /// Read a WAV whose data chunk runs past the end of the file (a cut recording) instead
        /// of refusing it.
        public var allowsTruncatedWAV: Bool
        /// The sample format a decoder gives, when an entry decodes (32-bit float by default).
        public var decodedSampleFormat: PCMSampleFormat
        /// The codecs a container's reader recognises beyond AAC (an MP4's Opus, FLAC or ALAC
        /// track, to decode); `nil`: the registry's ``MediaFormatRegistry/audioCodecs``.
        public var audioCodecs: [AudioCodecDescription]?

        /// Options; by default a file alone, decoded to float, a truncated WAV refused.
        public init(rawFormat: PCMFormat? = nil, segments: [FilePath] = [], trackID: UInt32? = nil,
                    purpose: AudioPacketInput.Purpose = .decoding, allowsTruncatedWAV: Bool = false,
                    decodedSampleFormat: PCMSampleFormat = .float32) {
            self.decodedSampleFormat = decodedSampleFormat
            self.rawFormat = rawFormat
            self.segments = segments
            self.trackID = trackID
            self.purpose = purpose
            self.allowsTruncatedWAV = allowsTruncatedWAV
        }
    }

    /// How an output is created.
    public struct OutputOptions: Sendable {
        /// Write an MP4 fragmented (crash-safe), a fragment this long.
        public var fragmentDuration: MediaTime?
        /// Write under the file's own name from the start (a recording that must survive a
        /// kill) instead of a temporary name renamed when complete.
        public var inPlace: Bool
        /// The MP4's `©too` tag.
        public var encoderName: String
        /// What a PCM output says when no PCM came.
        public var emptyMessage: String?
        /// The format to write, when the path has no name to say it (standard output, `-`).
        public var format: MediaFileFormat?
        /// The codecs a container's entry can describe (an MP4 sample entry); `nil`: the
        /// registry's (``MediaFormatRegistry/audioCodecs``).
        public var audioCodecs: [AudioCodecDescription]?

        /// Options; by default a whole file committed when complete.
        public init(fragmentDuration: MediaTime? = nil, inPlace: Bool = false, encoderName: String = "KeyFrameKit",
                    emptyMessage: String? = nil, format: MediaFileFormat? = nil) {
            self.fragmentDuration = fragmentDuration
            self.inPlace = inPlace
            self.encoderName = encoderName
            self.emptyMessage = emptyMessage
            self.format = format
        }
    }

    /// A PCM source read from a file, as a registry opens it: besides its PCM, what reads it
    /// and the file's tags.
    public protocol PCMFileSource: PCMSource where Failure == PipelineError {
        /// What reads the file, for people (`flac/flac`, `ogg/opus`).
        var readerName: String { get }
        /// The file's tags, cover and chapters.
        var metadata: StreamMetadata { get }
    }

    /// One format: how it is opened and created.
    public struct Entry: Sendable {
        /// The format.
        public let format: MediaFileFormat
        /// Opens a file of the format as PCM (WAV, raw PCM). An entry that reads only packets is
        /// read as PCM through the registry's ``MediaFormatRegistry/packetDecoder`` instead.
        public var pcmSource: (@Sendable (FilePath, InputOptions) throws(PipelineError) -> any PCMFileSource)?
        /// Opens a file of the format as compressed packets.
        public var packetSource: (@Sendable (FilePath, InputOptions) throws(PipelineError) -> any PacketFileSource)?
        /// Whether a file this entry refuses goes to the ``fallback`` (a WAV of a codec other than
        /// PCM, an MP4 whose audio is not AAC); by default never.
        public var fallsBack: @Sendable (PipelineError) -> Bool
        /// Creates a PCM output of the format.
        public var pcmSink: (@Sendable (FilePath, OutputOptions) throws(PipelineError) -> any PCMFileSink)?
        /// Creates a compressed-audio output of the format.
        public var packetSink: (@Sendable (FilePath, OutputOptions) throws(PipelineError) -> any PacketFileSink)?
        /// Reads and rewrites the file's tags, cover and chapters without touching its audio
        /// (`keyframe tag` and `keyframe chapters` on a file that is not an MP4).
        public var metadataEditor: MetadataEditor?
        /// Checks a file of the format (its gapless signals against its stream) for
        /// `keyframe validate`; `nil` when the format has no checks of its own.
        public var validator: (@Sendable (FilePath) throws(PipelineError) -> [ValidationFinding])?

        /// An entry for `format` with the given openers.
        public init(format: MediaFileFormat,
                    pcmSource: (@Sendable (FilePath, InputOptions) throws(PipelineError) -> any PCMFileSource)? = nil,
                    packetSource: (@Sendable (FilePath, InputOptions) throws(PipelineError) -> any PacketFileSource)? = nil,
                    fallsBack: @escaping @Sendable (PipelineError) -> Bool = { _ in false },
                    pcmSink: (@Sendable (FilePath, OutputOptions) throws(PipelineError) -> any PCMFileSink)? = nil,
                    packetSink: (@Sendable (FilePath, OutputOptions) throws(PipelineError) -> any PacketFileSink)? = nil,
                    metadataEditor: MetadataEditor? = nil,
                    validator: (@Sendable (FilePath) throws(PipelineError) -> [ValidationFinding])? = nil) {
            self.format = format
            self.metadataEditor = metadataEditor
            self.validator = validator
            self.pcmSource = pcmSource
            self.packetSource = packetSource
            self.fallsBack = fallsBack
            self.pcmSink = pcmSink
            self.packetSink = packetSink
        }
    }

    /// What reads the audio of a file no entry reads, or one an entry refused and lets fall
    /// back (KeyFrameKit registers libavformat here).
    public struct Fallback: Sendable {
        /// What it is, for people (`libavformat`).
        public let name: String
        /// Opens a file as PCM.
        public let pcmSource: @Sendable (FilePath, InputOptions) throws(PipelineError) -> any PCMFileSource

        /// A fallback named `name`.
        public init(name: String, pcmSource: @escaping @Sendable (FilePath, InputOptions) throws(PipelineError) -> any PCMFileSource) {
            self.name = name
            self.pcmSource = pcmSource
        }
    }

    /// The entries, one per format.
    public private(set) var entries: [Entry]
    /// What reads other audio files; `nil` when nothing does.
    public var fallback: Fallback?
    /// How an entry that reads only packets is read as PCM: the packets it opened and the
    /// entry's format in, a PCM source out (KeyFrameKit's `MediaFormatRegistry.standard` decodes
    /// them with a codec registry's decoder for their codec); `nil` when packets are not decoded.
    public var packetDecoder: PacketDecoder?

    /// The codecs a container's entry describes in what it writes (an MP4's sample entry),
    /// unless the output options name others; by default AAC's. KeyFrameKit's
    /// `MediaFormatRegistry.standard(codecs:)` gives the codec registry's descriptions.
    /// (KeyFrameKit's own MP4 reader reads AAC; a track of another codec is read with
    /// `MP4Track.formatDescription(audioCodecs:)`.)
    public var audioCodecs: [AudioCodecDescription] = [.aac]

    /// Decodes the packets an entry opened (``packetDecoder``).
    public typealias PacketDecoder = @Sendable (any PacketFileSource, MediaFileFormat, InputOptions) throws(PipelineError) -> any PCMFileSource

    /// A registry of `entries` (a later entry for a format replaces an earlier one).
    public init(entries: [Entry], fallback: Fallback? = nil) {
        self.entries = []
        self.fallback = fallback
        for entry in entries { register(entry) }
    }

    /// Adds `entry`, replacing the entry of its format where it stands (the order formats are
    /// listed in messages stays), or after the others for a new format.
    public mutating func register(_ entry: Entry) {
        if let index = entries.firstIndex(where: { $0.format == entry.format }) {
            entries[index] = entry
        } else {
            entries.append(entry)
        }
    }

    /// The entry of `format`.
    public func entry(for format: MediaFileFormat?) -> Entry? {
        format.flatMap { format in entries.first { $0.format == format } }
    }

    /// The formats of the entries, in the order they were registered.
    public var formats: [MediaFileFormat] { entries.map(\.format) }

    /// The format of the file at `path`, among the registered ones: what its first bytes show
    /// (each format's ``MediaFileFormat/recognizes``), else what its extension names
    /// (``MediaFileFormat/detect(_:)`` over ``formats``).
    public func detect(_ path: FilePath) -> MediaFileFormat? { MediaFileFormat.detect(path, among: formats) }

    /// The registered format an extension names, if any (case-insensitive, without the dot).
    public func format(fileExtension: String) -> MediaFileFormat? { MediaFileFormat.named(byExtension: fileExtension, among: formats) }

    /// The registered format `path`'s extension names, if any: what an output will be.
    public func format(nameOf path: FilePath) -> MediaFileFormat? { path.extension.flatMap(format(fileExtension:)) }

    /// Extensions of the registered files that can hold `contents`, for messages.
    public func extensionList(holding contents: MediaFileFormat.Contents) -> String {
        MediaFileFormat.extensionList(holding: contents, among: formats)
    }

    /// The usual extensions of the registered formats that hold `codec`.
    public func extensionList(holdingCodec codec: AudioCodecID) -> String {
        MediaFileFormat.extensionList(holdingCodec: codec, among: formats)
    }

    /// KeyFrameKit's own readers and writers, with no codec: WAV and raw PCM in and out, ADTS
    /// and MP4 AAC in and out, an HLS media playlist in.
    public static let containers = MediaFormatRegistry(entries: [
        Entry(format: .wav, pcmSource: { path, options throws(PipelineError) in
            try PCMFileReader(wavPath: path, allowTruncated: options.allowsTruncatedWAV)
        }, fallsBack: { !$0.isTruncatedWAV }, pcmSink: { path, options throws(PipelineError) in
            try PCMFileOutput(wavPath: path, inPlace: options.inPlace, emptyMessage: options.emptyMessage)
        }),
        Entry(format: .rawPCM, pcmSource: { path, options throws(PipelineError) in
            guard let format = options.rawFormat else {
                throw .unsupported("\(path): raw PCM has no header; give its sample rate, channels and sample format", path: path)
            }
            return try PCMFileReader(rawPath: path, format: format)
        }, pcmSink: { path, options throws(PipelineError) in
            try PCMFileOutput(rawPath: path, inPlace: options.inPlace, emptyMessage: options.emptyMessage)
        }),
        Entry(format: .adts, packetSource: { path, options throws(PipelineError) in
            guard options.segments.isEmpty else { throw .unsupported("\(path): ADTS input takes no segments", path: path) }
            return try AudioPacketInput(adtsPath: path, purpose: options.purpose)
        }, fallsBack: { _ in true }, packetSink: { path, options throws(PipelineError) in
            try AudioPacketOutput(adtsPath: path, inPlace: options.inPlace)
        }),
        Entry(format: .mp4, packetSource: { path, options throws(PipelineError) in
            try AudioPacketInput(mp4Path: path, segments: options.segments, trackID: options.trackID, purpose: options.purpose,
                                 audioCodecs: options.audioCodecs ?? [.aac])
        }, fallsBack: { _ in true }, packetSink: { path, options throws(PipelineError) in
            try AudioPacketOutput(mp4Path: path, fragmentDuration: options.fragmentDuration, encoderName: options.encoderName,
                                  audioCodecs: options.audioCodecs ?? [.aac])
        }),
        Entry(format: .flac, packetSink: { path, options throws(PipelineError) in
            guard !options.inPlace else { throw .unsupported("\(path): a FLAC file is written whole, not in place", path: path) }
            return try FLACFileOutput(path: path, vendor: options.encoderName)
        }, metadataEditor: .flac),
        Entry(format: .mp3, packetSink: { path, options throws(PipelineError) in
            guard !options.inPlace else { throw .unsupported("\(path): an MP3 file is written whole, not in place", path: path) }
            return try MP3FileOutput(path: path)
        }, metadataEditor: .mp3, validator: { path throws(PipelineError) in try NativeFileValidation.mp3(path) }),
        Entry(format: .oggOpus, packetSink: { path, options throws(PipelineError) in
            guard !options.inPlace else { throw .unsupported("\(path): an Ogg Opus file is written whole, not in place", path: path) }
            return try OggOpusFileOutput(path: path, vendor: options.encoderName)
        }, metadataEditor: .oggOpus, validator: { path throws(PipelineError) in try NativeFileValidation.oggOpus(path) }),
        Entry(format: .h264),
        Entry(format: .hevc),
        // A playlist our reader refuses (a window, a URL, a missing segment, a master playlist)
        // stays refused: libavformat's HLS reader would decode it with holes or without the
        // gapless trim.
        Entry(format: .hlsPlaylist, packetSource: { path, options throws(PipelineError) in
            try AudioPacketInput(playlistPath: path, segments: options.segments, trackID: options.trackID, purpose: options.purpose,
                                 audioCodecs: options.audioCodecs ?? [.aac])
        }),
    ])

    /// The compressed packets of the file at `path`, by what its bytes are.
    ///
    /// - Throws: `PipelineError.unsupported` for a file no entry reads packets from (naming
    ///   what it is); the entry's errors.
    public func packetInput(_ path: FilePath, options: InputOptions = InputOptions()) throws(PipelineError) -> any PacketFileSource {
        let detected = detect(path)
        guard let open = entry(for: detected)?.packetSource else {
            let what = detected.map { "an \($0) file" } ?? "not a file KeyFrameKit reads"
            throw .unsupported("\(path): \(what); AAC input is \(extensionList(holdingCodec: .aac))", path: path)
        }
        var options = options
        if options.audioCodecs == nil { options.audioCodecs = audioCodecs }
        return try open(path, options)
    }

    /// The packets of the file at `path` as `Source`, the reader a job that needs more than
    /// packets takes (KeyFrameKit's AAC reader, ``AudioPacketInput``, for an MP4's track and
    /// raw data blocks): opened by its format's entry like any input.
    ///
    /// - Throws: `PipelineError.unsupported` when the entry reads the file with another reader
    ///   (a registered container's), naming the file's codec; ``packetInput(_:options:)``'s errors.
    public func packetInput<Source: PacketFileSource>(_ path: FilePath, as type: Source.Type,
                                                      options: InputOptions = InputOptions()) throws(PipelineError) -> Source {
        let opened = try packetInput(path, options: options)
        guard let source = opened as? Source else {
            let codec = opened.audioFormat.map { " of \($0.codec)" } ?? ""
            throw .unsupported("\(path): \(opened.format)\(codec); this job reads \(MediaFileFormat.extensionList(holdingCodec: .aac))",
                               path: path)
        }
        return source
    }

    /// The AAC packets of `path` as KeyFrameKit's AAC reader (``AudioPacketInput``) gives
    /// them, opened by the file's entry: ``packetInput(_:as:options:)`` for a job that copies or
    /// edits AAC (raw data blocks by default).
    public func aacInput(_ path: FilePath, segments: [FilePath] = [], trackID: UInt32? = nil,
                         purpose: AudioPacketInput.Purpose = .remuxing) throws(PipelineError) -> AudioPacketInput {
        try packetInput(path, as: AudioPacketInput.self, options: InputOptions(segments: segments, trackID: trackID, purpose: purpose))
    }

    /// A file opened as PCM, and why its own entry refused it when the ``fallback`` reads it.
    public struct OpenedPCM {
        /// The PCM source.
        public var source: any PCMFileSource
        /// The format its bytes showed, if any.
        public var format: MediaFileFormat?
        /// What the entry of ``format`` said before the fallback read the file; `nil` when the
        /// entry read it.
        public var refusal: PipelineError?
    }

    /// The PCM of the file at `path`: its format's entry reads it (by what its bytes are); a
    /// file no entry reads as PCM, or one its entry refuses and lets fall back, goes to the
    /// ``fallback`` — unless the options name segments or a track, which only our MP4 and
    /// playlist readers understand (any other file is refused then). When the fallback cannot read it either, the entry's error is thrown: it
    /// names the chunk or box and the offset.
    ///
    /// - Throws: `PipelineError.unsupported` for a file nothing reads as PCM; the readers' errors.
    public func pcmInput(_ path: FilePath, options: InputOptions = InputOptions()) throws(PipelineError) -> OpenedPCM {
        let detected = detect(path)
        // Segments and a track are an MP4's (or a playlist's) alone: never dropped silently.
        if !options.segments.isEmpty || options.trackID != nil, detected != .mp4, detected != .hlsPlaylist {
            throw .unsupported("\(path): media segments and a track are for MP4 input\(detected.map { "; this is \($0)" } ?? "")", path: path)
        }
        var refused: PipelineError?
        if let entry = entry(for: detected), entry.pcmSource != nil || (entry.packetSource != nil && packetDecoder != nil) {
            do { return OpenedPCM(source: try openPCM(entry, path, options), format: detected, refusal: nil) } catch {
                guard fallback != nil, options.segments.isEmpty, options.trackID == nil, entry.fallsBack(error) else { throw error }
                refused = error
            }
        }
        guard let fallback else {
            let what = detected.map { "\($0)" } ?? "unknown"
            throw .unsupported("\(path): \(what) input; PCM input is \(extensionList(holding: .pcm))", path: path)
        }
        do { return OpenedPCM(source: try fallback.pcmSource(path, options), format: detected, refusal: refused) } catch {
            throw refused ?? error
        }
    }

    /// The PCM of the file at `path` as `Source`, the reader a job that needs more than PCM
    /// takes (KeyFrameKit's ``PCMFileReader`` for a file read as stored): opened by its format's
    /// entry like any input.
    ///
    /// - Throws: `PipelineError.unsupported` when the file is read by another reader (a decoder,
    ///   the fallback); ``pcmInput(_:options:)``'s errors.
    public func pcmInput<Source: PCMFileSource>(_ path: FilePath, as type: Source.Type,
                                                options: InputOptions = InputOptions()) throws(PipelineError) -> Source {
        let opened = try pcmInput(path, options: options)
        guard let source = opened.source as? Source else {
            throw .unsupported("\(path): not a PCM file (\(extensionList(holding: .pcm)))", path: path)
        }
        return source
    }

    /// The entry's PCM: its own PCM reader, else its packets through ``packetDecoder``.
    private func openPCM(_ entry: Entry, _ path: FilePath, _ options: InputOptions) throws(PipelineError) -> any PCMFileSource {
        if let open = entry.pcmSource { return try open(path, options) }
        guard let packets = entry.packetSource, let packetDecoder else {
            throw .unsupported("\(path): \(entry.format) cannot be decoded here", path: path)
        }
        var decoding = options
        decoding.purpose = .decoding
        if decoding.audioCodecs == nil { decoding.audioCodecs = audioCodecs }
        return try packetDecoder(try packets(path, decoding), entry.format, options)
    }

    /// A PCM output at `path`, of the format its name says.
    ///
    /// - Throws: `PipelineError.unsupported` when the name is not a PCM format's.
    public func pcmOutput(_ path: FilePath, options: OutputOptions = OutputOptions()) throws(PipelineError) -> any PCMFileSink {
        guard let create = entry(for: options.format ?? format(nameOf: path))?.pcmSink else {
            throw .unsupported("\(path): unknown PCM output type; use \(extensionList(holding: .pcm))", path: path)
        }
        return try create(path, options)
    }

    /// A PCM output at `path` as `Sink`, the writer a job that needs more than a sink takes. The
    /// entry creates its writer first; one of another type is cancelled (an in-place writer keeps
    /// the file it created).
    ///
    /// - Throws: `PipelineError.unsupported` when the format's entry creates another writer;
    ///   ``pcmOutput(_:options:)``'s errors.
    public func pcmOutput<Sink: PCMFileSink>(_ path: FilePath, as type: Sink.Type,
                                             options: OutputOptions = OutputOptions()) throws(PipelineError) -> Sink {
        var created = try pcmOutput(path, options: options)
        guard let sink = created as? Sink else {
            created.cancel()
            throw .unsupported("\(path): this job writes \(MediaFileFormat.extensionList(holding: .pcm))", path: path)
        }
        return sink
    }

    /// A compressed-audio output at `path`, of the format its name says (or ``OutputOptions/format``).
    ///
    /// - Throws: `PipelineError.unsupported` when the name is not a registered container's.
    public func packetOutput(_ path: FilePath, options: OutputOptions = OutputOptions()) throws(PipelineError) -> any PacketFileSink {
        guard let create = entry(for: options.format ?? format(nameOf: path))?.packetSink else {
            throw .unsupported("\(path): unknown output type; compressed output is \(extensionList(holding: .audioPackets))", path: path)
        }
        return try create(path, described(options))
    }

    /// `options` with the registry's codecs where they name none.
    private func described(_ options: OutputOptions) -> OutputOptions {
        var options = options
        if options.audioCodecs == nil { options.audioCodecs = audioCodecs }
        return options
    }

    /// A compressed-audio output at `path` as `Sink`, the writer a job that needs more than a
    /// sink takes (KeyFrameKit's ``AudioPacketOutput`` for a recording salvaged after a kill).
    /// The entry creates its writer first; one of another type is cancelled (an in-place writer
    /// keeps the file it created).
    ///
    /// - Throws: `PipelineError.unsupported` when the format's entry creates another writer;
    ///   ``packetOutput(_:options:)``'s errors.
    public func packetOutput<Sink: PacketFileSink>(_ path: FilePath, as type: Sink.Type,
                                                   options: OutputOptions = OutputOptions()) throws(PipelineError) -> Sink {
        var created = try packetOutput(path, options: options)
        guard let sink = created as? Sink else {
            created.cancel()
            throw .unsupported("\(path): \(created.format) output; this job writes \(MediaFileFormat.extensionList(holdingCodec: .aac))",
                               path: path)
        }
        return sink
    }
}

extension PipelineError {
    /// Whether this is a WAV whose data chunk runs past the end of the file (a cut recording,
    /// refused on purpose rather than handed to another reader).
    public var isTruncatedWAV: Bool {
        if case .dataBeyondFile? = underlying(as: WAVError.self) { return true }
        return false
    }
}
