internal import CFFmpeg
public import AACBitstream
public import MediaCore

/// An AAC decoder (ISO/IEC 14496-3) on libavcodec. Packets in — raw data blocks with an
/// AudioSpecificConfig (1.6.2.1), or whole ADTS frames (1.A.3.2) — and interleaved PCM out (s16,
/// s32 or f32, converted as `ffmpeg` converts).
///
/// Given ``Trim``, it drops the encoder's priming at the start and stops after the valid length,
/// so decoding a file with a sample-exact edit list gives exactly the samples that were encoded.
/// The decoding itself is ``LibavcodecAudioDecoder``'s; this class adds what AAC's
/// configuration says: which profiles libavcodec decodes, and why not the others.
public final class AACDecoder: LibavcodecAudioDecoder {
    /// What to drop and keep of the decoded samples: ``/MediaCore/GaplessTrim``.
    public typealias Trim = GaplessTrim

    /// A decoder for raw AAC packets described by `config`, or — with `nil` — for whole ADTS
    /// frames, whose headers configure it.
    ///
    /// - Parameters:
    ///   - config: the track's AudioSpecificConfig (ISO/IEC 14496-3, 1.6.2.1), or `nil` to decode
    ///     ADTS frames.
    ///   - outputSampleFormat: `.int16` (default), `.int32` or `.float32`.
    ///   - trim: the frames to drop at the start (the encoder's priming) and where to stop.
    public init(audioSpecificConfig config: AudioSpecificConfig?, outputSampleFormat: PCMSampleFormat = .int16,
                trim: GaplessTrim = .none) throws(CodecError) {
        if let config, let problem = Self.undecodable(config) { throw problem }
        var extradata: [UInt8] = []
        if let config {
            do { extradata = try config.serialized() } catch { throw .bitstream(error) }
        }
        do {
            try super.init(codecID: AV_CODEC_ID_AAC, name: "AAC", extradata: extradata, outputSampleFormat: outputSampleFormat, trim: trim)
        } catch {
            // A configuration libavcodec does not implement: name it, not the error number.
            if case .ffmpeg(_, let code, let message) = error, code == -ENOSYS, let config {
                throw Self.undecodableError(config, reason: "\(Self.libavcodecVersion) does not implement it (\(message))")
            }
            throw error
        }
    }

    /// The audio object types libavcodec's AAC decoder decodes (its
    /// `decode_audio_specific_config`): AAC Main, LC, SSR and LTP, ER AAC LC, LD and ELD, each
    /// with SBR and PS; USAC (xHE-AAC) from libavcodec 61.19 (FFmpeg 7.1) on.
    static var decodableObjectTypes: Set<AudioObjectType> {
        var types: Set<AudioObjectType> = [.aacMain, .aacLC, .aacSSR, .aacLTP, .erAACLC, .erAACLD, .erAACELD]
        if (LIBAVCODEC_VERSION_MAJOR, LIBAVCODEC_VERSION_MINOR) >= (61, 19) { types.insert(.usac) }
        return types
    }

    /// The libavcodec KeyFrameKit is built against, with the FFmpeg release it comes from.
    static var libavcodecVersion: String {
        let major = Int(LIBAVCODEC_VERSION_MAJOR), minor = Int(LIBAVCODEC_VERSION_MINOR)
        let releases: [(major: Int, minor: Int, release: String)] = [
            (58, 134, "4.4"), (59, 18, "5.0"), (59, 37, "5.1"), (60, 3, "6.0"), (60, 31, "6.1"), (61, 3, "7.0"), (61, 19, "7.1"),
        ]
        let release = releases.last { $0.major == major && $0.minor <= minor }?.release
        return "libavcodec \(major).\(minor)" + (release.map { " (FFmpeg \($0))" } ?? "")
    }

    /// Why libavcodec cannot decode a stream of `config`, or `nil` when it can.
    public static func undecodable(_ config: AudioSpecificConfig) -> CodecError? {
        let type = config.audioObjectType
        guard !decodableObjectTypes.contains(type) else { return nil }
        let reason = type == .usac ? "\(libavcodecVersion) has no USAC decoder"
                                   : "the AAC decoder of \(libavcodecVersion) does not decode \(type.name)"
        return undecodableError(config, reason: reason)
    }

    private static func undecodableError(_ config: AudioSpecificConfig, reason: String) -> CodecError {
        let type = config.audioObjectType
        let profile = config.profileName
        let codec = profile == type.name ? "audio object type \(type.rawValue)" : "\(type.name), audio object type \(type.rawValue)"
        return .undecodable(codec: codec, profile: profile, reason: reason)
    }

}
