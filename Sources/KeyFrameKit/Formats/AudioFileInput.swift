public import SystemPackage

/// The PCM of any audio file, as a ``/MediaCore/PCMSource``, read by what its bytes are: WAV and
/// raw PCM by ``/MediaFormats/PCMFileReader``; ADTS and MP4 AAC by ``/MediaFormats/AudioPacketInput`` through
/// ``/AudioCodec/AACDecoder`` (edit list applied); anything else — FLAC, MP3, Ogg Vorbis, Opus,
/// ALAC, AIFF, the audio of a video — by ``/AudioCodec/AudioFileDecoder`` (libavformat and
/// libavcodec), except true 32-bit FLAC, which FFmpeg 5.1 cannot decode, by
/// ``/AudioCodec/FLACFileDecoder`` (libFLAC). PCM from the decoders is 32-bit float (32-bit
/// integers from libFLAC); from a PCM file, its own type.
public struct AudioFileInput: PCMSource {
    private enum Reader {
        case pcm(PCMFileReader)
        case aac(TransformedSource<AudioPacketInput, AACDecoder>)
        case decoded(AudioFileDecoder)
        case flac(FLACFileDecoder)
    }

    private var reader: Reader
    /// The file read.
    public let path: FilePath
    /// What reads it: `WAV`, `raw PCM`, `ADTS (AAC)`, `MP4 (AAC)`, or libavformat's container
    /// and libavcodec's codec (`flac/flac`, `ogg/opus`), or `flac/libFLAC`.
    public private(set) var description: String
    /// The PCM layout, when known before the first buffer (PCM files and libavcodec's inputs).
    public private(set) var pcmFormat: PCMFormat?

    /// Opens `path`; `rawFormat` is the layout of a raw PCM file (it has no header).
    ///
    /// KeyFrameKit's own readers come first. A file one of them refuses — a WAV of a codec
    /// other than PCM or float (IMA or MS ADPCM, A-law), an MP4 whose audio is not AAC, a file
    /// whose bytes look like ADTS but are not — goes to libavformat; when libavformat cannot read
    /// it either, the error is our reader's, which names the chunk or box and the offset. What
    /// our reader said is kept in ``refusal``. A WAV whose data chunk runs past the end of the
    /// file stays an error (a cut recording), unless `allowsTruncatedWAV`.
    ///
    /// - Throws: ``/MediaCore/PipelineError`` naming what is wrong with the file.
    public init(path: FilePath, rawFormat: PCMFormat? = nil, allowsTruncatedWAV: Bool = false) throws(PipelineError) {
        self.path = path
        let detected = MediaFileFormat.detect(path)
        var refused: PipelineError?
        switch detected {
        case .wav?, .rawPCM?:
            do {
                let file = detected == .wav ? try PCMFileReader(wavPath: path, allowTruncated: allowsTruncatedWAV)
                    : try PCMFileReader(path: path, rawFormat: rawFormat)
                reader = .pcm(file)
                description = detected == .wav ? "WAV" : "raw PCM"
                pcmFormat = file.format
                refusal = nil
                return
            } catch {
                // Raw PCM has no header for libavformat to read, and a cut recording is refused
                // on purpose.
                guard detected == .wav, !error.isTruncatedWAV else { throw error }
                refused = error
            }
        case .adts?, .mp4?, .hlsPlaylist?:
            do {
                let packets = try AudioPacketInput(path: path, purpose: .decoding)
                let decoder = try packets.makeDecoder(sampleFormat: .float32)
                reader = .aac(packets.transformed(by: decoder))
                description = detected == .adts ? "ADTS (AAC)" : detected == .hlsPlaylist ? "HLS (AAC)" : "MP4 (AAC)"
                pcmFormat = nil
                refusal = nil
                return
            } catch {
                // A playlist our reader refuses (a window, a URL, a missing segment, a master
                // playlist) is refused: libavformat's HLS reader would decode it with holes or
                // without the gapless trim.
                if detected == .hlsPlaylist { throw error }
                // An MP4 whose audio is not AAC (ALAC, MP3, Opus in MP4), or bytes that only
                // looked like ADTS: libavcodec may decode it.
                refused = error
            }
        default:
            break
        }
        if FLACFileDecoder.isFLAC32(path: path) {
            // True 32-bit FLAC, of which FFmpeg 5.1 decodes no frame: libFLAC reads the audio;
            // the tags and cover still come from libavformat (``metadata``).
            let decoder: FLACFileDecoder
            do { decoder = try FLACFileDecoder(path: path) } catch { throw .codec(error) }
            reader = .flac(decoder)
            description = "flac/libFLAC"
            pcmFormat = decoder.outputFormat
            refusal = refused.map { "\($0)" }
            return
        }
        let decoder: AudioFileDecoder
        do {
            // An MP3 with stray bytes after its ID3v2 tag is read from its first frame, so that its
            // Xing/LAME header's delay and padding are honoured.
            decoder = try AudioFileDecoder(path: path, skippingInitialBytes: MediaFileFormat.mpegAudioStartAfterStrayBytes(path) ?? 0)
        } catch {
            throw refused ?? .codec(error)
        }
        reader = .decoded(decoder)
        description = "\(decoder.containerName)/\(decoder.codecName)"
        pcmFormat = decoder.outputFormat
        refusal = refused.map { "\($0)" }
    }

    /// Why KeyFrameKit's own reader refused the file before libavformat read it (for example
    /// "unsupported format tag 0x11"), or `nil` when the first reader read it.
    public let refusal: String?

    /// The file's tags as iTunes items: from Vorbis comments, ID3v2 frames, RIFF INFO and
    /// iTunes atoms as libavformat names them, with the cover picture; from an MP4's `ilst` (and
    /// its `covr`) when KeyFrameKit reads it; a WAV's LIST/INFO through libavformat. Empty for raw
    /// PCM and ADTS.
    public var metadata: ITunesMetadata {
        switch reader {
        case .pcm:
            // A WAV's LIST/INFO chunk (INAM, IART, IPRD, ICRD, IGNR, ICMT, ITRK), as libavformat
            // names it; raw PCM has none.
            guard description == "WAV", let tags = try? AudioFileDecoder(path: path) else { return ITunesMetadata() }
            var metadata = ITunesMetadata(genericTags: tags.tags)
            metadata.artwork = tags.attachedPicture.flatMap { ITunesMetadata.Artwork(data: $0) }
            return metadata
        case .aac(let aac):
            guard let file = aac.upstream.file, let userData = file.userData,
                  let tags = try? MetadataTags.parse(udta: userData, path: BoxPath(components: ["moov", "udta"])) else {
                return ITunesMetadata()
            }
            let generic: [String: String] = ["©nam": "title", "©ART": "artist", "©alb": "album", "aART": "album_artist", "trkn": "track",
                                             "disk": "disc", "©day": "date", "©gen": "genre", "©cmt": "comment", "©wrt": "composer"]
            var named: [String: String] = [:]
            for tag in tags.all { if let key = generic[tag.key], named[key] == nil { named[key] = tag.value } }
            var metadata = ITunesMetadata(genericTags: named)
            metadata.artwork = tags.all.first { $0.key == "covr" && $0.picture != nil }?.picture
            return metadata
        case .decoded(let decoder):
            var metadata = ITunesMetadata(genericTags: decoder.tags)
            metadata.artwork = decoder.attachedPicture.flatMap { ITunesMetadata.Artwork(data: $0) }
            return metadata
        case .flac:
            // libavformat reads a 32-bit FLAC's metadata blocks fine; only its decoder fails.
            guard let tags = try? AudioFileDecoder(path: path) else { return ITunesMetadata() }
            var metadata = ITunesMetadata(genericTags: tags.tags)
            metadata.artwork = tags.attachedPicture.flatMap { ITunesMetadata.Artwork(data: $0) }
            return metadata
        }
    }

    /// The next buffer of PCM, `nil` at the end.
    public mutating func next() throws(PipelineError) -> PCMBuffer? {
        switch reader {
        case .pcm(var file):
            defer { reader = .pcm(file) }
            return try file.next()
        case .aac(var aac):
            defer { reader = .aac(aac) }
            return try aac.next()
        case .decoded(let decoder):
            do { return try decoder.next() } catch {
                // FLAC that libavcodec decodes none of (FFmpeg 5.1 with some of its own encoder's
                // large blocks: 16384 or 32768 samples of many channels) goes to libFLAC before
                // anything was delivered.
                guard decoder.decodedFrameCount == 0, decoder.codec == .flac, FLACStreamInfo(path: path) != nil,
                      let flac = try? FLACFileDecoder(path: path) else { throw .codec(error) }
                reader = .flac(flac)
                description = "flac/libFLAC"
                pcmFormat = flac.outputFormat
                do { return try flac.next() } catch { throw .codec(error) }
            }
        case .flac(let decoder):
            do { return try decoder.next() } catch { throw .codec(error) }
        }
    }

    /// How far the reader has got.
    public var progress: MediaProgress {
        switch reader {
        case .pcm(let file): file.progress
        case .aac(let aac): aac.progress
        case .decoded(let decoder): decoder.progress
        case .flac(let decoder): decoder.progress
        }
    }

    /// What the reader stepped over since the last call; first, when KeyFrameKit's own reader
    /// refused the file and libavformat read it, why (``refusal``).
    public mutating func takeDamage() -> [DamageEvent] {
        var events: [DamageEvent] = []
        if let refusal, !refusalReported {
            refusalReported = true
            events.append(DamageEvent(.ignored, message: "read by libavformat, as KeyFrameKit's reader refused it: \(refusal)"))
        }
        return events + readerDamage()
    }

    private var refusalReported = false

    private mutating func readerDamage() -> [DamageEvent] {
        switch reader {
        case .pcm(var file):
            defer { reader = .pcm(file) }
            return file.takeDamage()
        case .aac(var aac):
            defer { reader = .aac(aac) }
            return aac.takeDamage()
        case .decoded(let decoder):
            return decoder.takeDamage()
        case .flac(let decoder):
            return decoder.takeDamage()
        }
    }
}

extension PipelineError {
    /// Whether this is a WAV whose data chunk runs past the end of the file.
    var isTruncatedWAV: Bool {
        if case .dataBeyondFile? = underlying(as: WAVError.self) { return true }
        return false
    }
}
