/// What the bytes of a ``MediaSample`` are: PCM of a given layout, or a codec's packets with the
/// configuration its decoder needs (`CMFormatDescription` on Apple's platforms).
///
/// A value type; two samples of the same track carry equal format descriptions, and a muxer
/// treats a change of format mid-track as an error.
public enum FormatDescription: Sendable, Hashable {
    /// Uncompressed audio.
    case pcm(PCMFormat)
    /// Compressed audio with its decoder configuration (for AAC, the AudioSpecificConfig).
    case audio(EncodedAudioFormat)
    /// Compressed video with its parameter sets.
    case video(VideoFormat)

    /// Audio or video.
    public var mediaType: MediaType {
        switch self {
        case .pcm, .audio: .audio
        case .video: .video
        }
    }
}

/// The sample types PCM can have.
public enum PCMSampleFormat: String, Sendable, Hashable, CaseIterable {
    /// Unsigned 8-bit (WAV's 8-bit format).
    case uint8
    /// Signed 16-bit little-endian.
    case int16
    /// Signed 24-bit little-endian, packed in 3 bytes.
    case int24
    /// Signed 32-bit little-endian.
    case int32
    /// IEEE float, 32-bit little-endian.
    case float32
    /// IEEE float, 64-bit little-endian.
    case float64

    /// Bytes one sample of one channel occupies.
    public var bytesPerSample: Int {
        switch self {
        case .uint8: 1
        case .int16: 2
        case .int24: 3
        case .int32, .float32: 4
        case .float64: 8
        }
    }
}

/// The layout of linear PCM audio: rate, channels, sample type and interleaving (an
/// `AudioStreamBasicDescription` for linear PCM on Apple's platforms).
public struct PCMFormat: Sendable, Hashable {
    /// Frames per second.
    public var sampleRate: Int
    /// Channels per frame.
    public var channelCount: Int
    /// The type of one sample.
    public var sampleFormat: PCMSampleFormat
    /// Interleaved (`L R L R`) or planar (all of `L`, then all of `R`).
    public var isInterleaved: Bool
    /// The speaker of each channel, in order, as the bits of a WAVE_FORMAT_EXTENSIBLE
    /// `dwChannelMask` (Microsoft, "Multiple channel audio data and WAVE files": front left
    /// 0x1, front right 0x2, front centre 0x4, LFE 0x8, back left 0x10, back right 0x20, …, side
    /// left 0x200, side right 0x400; FFmpeg's `AV_CH_*` bits are the same); `nil` for the usual
    /// layout of ``channelCount`` channels. It lets a quad source stay quad (front and back
    /// pairs) instead of being taken for 4.0 (front, centre, back centre).
    public var channelMask: UInt64?

    /// A PCM layout.
    public init(sampleRate: Int, channelCount: Int, sampleFormat: PCMSampleFormat, isInterleaved: Bool = true,
                channelMask: UInt64? = nil) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.sampleFormat = sampleFormat
        self.isInterleaved = isInterleaved
        self.channelMask = channelMask
    }

    /// Bytes of one frame (one sample of every channel).
    public var bytesPerFrame: Int { sampleFormat.bytesPerSample * channelCount }
}

/// A compressed audio codec, as KeyFrameKit identifies it: what a container's sample entry maps
/// to (`mp4a` with an AAC object type is ``aac``), and what encoders and decoders register by.
///
/// An ``OpenIdentifier``: KeyFrameKit's codecs are its static members, and a codec of another
/// package is one more (`extension AudioCodecID { static let myCodec = AudioCodecID("my-codec") }`).
public struct AudioCodecID: OpenIdentifier {
    /// The codec's short name, as `probe --json` prints it (`aac`, `opus`).
    public var name: String { interned.string }
    /// The name, interned: every sample's format carries the codec, copied as a number.
    private let interned: InternedName

    /// The codec named `name` (lowercase by convention, as libavcodec names codecs).
    public init(_ name: String) { interned = InternedName(name) }

    /// MPEG-4 AAC (any profile); the configuration is an AudioSpecificConfig.
    public static let aac = AudioCodecID("aac")
    /// Opus.
    public static let opus = AudioCodecID("opus")
    /// Dolby AC-3.
    public static let ac3 = AudioCodecID("ac3")
    /// Dolby E-AC-3.
    public static let eac3 = AudioCodecID("eac3")
    /// Apple Lossless.
    public static let alac = AudioCodecID("alac")
    /// MPEG-1/2 Layer III.
    public static let mp3 = AudioCodecID("mp3")
    /// FLAC (in MP4: `fLaC`).
    public static let flac = AudioCodecID("flac")
}

/// Compressed audio: codec, output rate and channels, and the decoder configuration
/// (for AAC the AudioSpecificConfig bytes, ISO/IEC 14496-3, 1.6.2.1; an AudioQueue's "magic
/// cookie" on Apple platforms).
public struct EncodedAudioFormat: Sendable, Hashable {
    /// The codec.
    public var codec: AudioCodecID
    /// Output frames per second.
    public var sampleRate: Int
    /// Output channels.
    public var channelCount: Int
    /// PCM frames one packet decodes to (1024 for AAC-LC), 0 if it varies.
    public var framesPerPacket: Int
    /// The codec's configuration bytes; for AAC an ISO/IEC 14496-3 AudioSpecificConfig.
    public var decoderConfiguration: [UInt8]

    /// A compressed audio format.
    public init(codec: AudioCodecID, sampleRate: Int, channelCount: Int, framesPerPacket: Int, decoderConfiguration: [UInt8]) {
        self.codec = codec
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.framesPerPacket = framesPerPacket
        self.decoderConfiguration = decoderConfiguration
    }
}

/// A video codec, as KeyFrameKit identifies it: an ``OpenIdentifier`` whose static members are
/// ours.
public struct VideoCodec: OpenIdentifier {
    /// The codec's short name, as `probe --json` prints it (`h264`, `hevc`).
    public var name: String { interned.string }
    /// The name, interned: every sample's format carries the codec, copied as a number.
    private let interned: InternedName

    /// The codec named `name`.
    public init(_ name: String) { interned = InternedName(name) }

    /// ITU-T H.264 / MPEG-4 AVC.
    public static let h264 = VideoCodec("h264")
    /// ITU-T H.265 / HEVC.
    public static let hevc = VideoCodec("hevc")
}

/// Compressed video: codec, coded size and parameter sets (SPS/PPS, and VPS for HEVC).
public struct VideoFormat: Sendable, Hashable {
    /// The codec.
    public var codec: VideoCodec
    /// Width in pixels, before any transform.
    public var width: Int
    /// Height in pixels, before any transform.
    public var height: Int
    /// The parameter set NAL units, without start codes, in decoding order (VPS, SPS, PPS).
    public var parameterSets: [[UInt8]]
    /// The codec's configuration record as MP4 carries it (`avcC` or `hvcC` payload), when known.
    public var configurationRecord: [UInt8]

    /// A compressed video format.
    public init(codec: VideoCodec, width: Int, height: Int, parameterSets: [[UInt8]], configurationRecord: [UInt8] = []) {
        self.codec = codec
        self.width = width
        self.height = height
        self.parameterSets = parameterSets
        self.configurationRecord = configurationRecord
    }
}
