public import SystemPackage

/// The PCM of any audio file, as a ``/MediaCore/PCMSource``, read by what its bytes are: WAV and
/// raw PCM by ``PCMFileReader``; ADTS and MP4 AAC by ``AudioPacketInput`` through
/// ``/AudioCodec/AACDecoder`` (edit list applied); anything else — FLAC, MP3, Ogg Vorbis, Opus,
/// ALAC, AIFF, the audio of a video — by ``/AudioCodec/AudioFileDecoder`` (libavformat and
/// libavcodec). PCM from the decoders is 32-bit float; from a PCM file, its own type.
public struct AudioFileInput: PCMSource {
    private enum Reader {
        case pcm(PCMFileReader)
        case aac(TransformedSource<AudioPacketInput, AACDecoder>)
        case decoded(AudioFileDecoder)
    }

    private var reader: Reader
    /// The file read.
    public let path: FilePath
    /// What reads it: `WAV`, `raw PCM`, `ADTS (AAC)`, `MP4 (AAC)`, or libavformat's container
    /// and libavcodec's codec (`flac/flac`, `ogg/opus`).
    public let description: String
    /// The PCM layout, when known before the first buffer (PCM files and libavcodec's inputs).
    public let pcmFormat: PCMFormat?

    /// Opens `path`; `rawFormat` is the layout of a raw PCM file (it has no header).
    ///
    /// - Throws: ``PipelineError`` naming what is wrong with the file.
    public init(path: FilePath, rawFormat: PCMFormat? = nil) throws(PipelineError) {
        self.path = path
        let detected = MediaFileFormat.detect(path)
        switch detected {
        case .wav?, .rawPCM?:
            let file = try PCMFileReader(path: path, rawFormat: rawFormat)
            reader = .pcm(file)
            description = detected == .wav ? "WAV" : "raw PCM"
            pcmFormat = file.format
            return
        case .adts?, .mp4?:
            do {
                let packets = try AudioPacketInput(path: path, purpose: .decoding)
                let decoder = try packets.makeDecoder(sampleFormat: .float32)
                reader = .aac(packets.transformed(by: decoder))
                description = detected == .adts ? "ADTS (AAC)" : "MP4 (AAC)"
                pcmFormat = nil
                return
            } catch {
                // An MP4 whose audio is not AAC (ALAC, MP3, Opus in MP4): libavcodec decodes it.
                guard detected == .mp4, error.holdsOtherThanAAC else { throw error }
            }
        default:
            break
        }
        let decoder: AudioFileDecoder
        do { decoder = try AudioFileDecoder(path: path) } catch { throw .codec(error) }
        reader = .decoded(decoder)
        description = "\(decoder.containerName)/\(decoder.codecName)"
        pcmFormat = decoder.outputFormat
    }

    /// The file's tags as iTunes items: from Vorbis comments, ID3v2 frames, RIFF INFO and
    /// iTunes atoms as libavformat names them, with the cover picture; from an MP4's `ilst` (and
    /// its `covr`) when KeyFrameKit reads it. Empty for WAV, raw PCM and ADTS.
    public var metadata: ITunesMetadata {
        switch reader {
        case .pcm:
            return ITunesMetadata()
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
            do { return try decoder.next() } catch { throw .codec(error) }
        }
    }

    /// How far the reader has got.
    public var progress: MediaProgress {
        switch reader {
        case .pcm(let file): file.progress
        case .aac(let aac): aac.progress
        case .decoded(let decoder): decoder.progress
        }
    }

    /// What the reader stepped over since the last call.
    public mutating func takeDamage() -> [DamageEvent] {
        switch reader {
        case .pcm(var file):
            defer { reader = .pcm(file) }
            return file.takeDamage()
        case .aac(var aac):
            defer { reader = .aac(aac) }
            return aac.takeDamage()
        case .decoded(let decoder):
            return decoder.takeDamage()
        }
    }
}

extension PipelineError {
    /// Whether this is ``AudioPacketInput``'s refusal of an audio track that is not AAC.
    var holdsOtherThanAAC: Bool {
        switch self {
        case .codec(.undecodable): true
        case .unsupported(let message): message.contains("this job takes AAC")
        default: false
        }
    }
}
