public import AACBitstream
public import MediaCore

/// An encoder as the jobs and a gapless MP4 see it: the priming at the start of its output and
/// how many input frames it took (ISO/IEC 14496-12 8.6.6: the edit's `media_time` and duration),
/// and what it produced; a codec registry's entry makes one. ``AACEncoder``,
/// ``ParallelAACEncoder`` and ``HEAACEncoder`` are encoders. The gapless numbers travel in-band,
/// as ``/MediaCore/StreamEvent/gapless(_:)`` events, once the encoder is open and once it is
/// flushed.
public protocol AudioEncoder: AnyObject, SendableMetatype, MediaTransform where Input == PCMBuffer, Output == MediaSample, Failure == CodecError {
    /// Samples of encoder delay at the start of the decoded output.
    var priming: Int { get }
    /// Input frames taken so far.
    var inputFrameCount: Int64 { get }
    /// Packets produced so far.
    var packetCount: Int64 { get }
    /// Samples after the input's end in the decoded output, once flushed.
    var padding: Int? { get }
    /// The PCM layout of the input, once known.
    var inputFormat: PCMFormat? { get }
    /// The target bitrate in bits per second (lowered to fit the input once it is known, when
    /// the encoder was asked to).
    var bitrate: Int { get }
    /// The stream's AudioSpecificConfig (ISO/IEC 14496-3, 1.6.2.1), once the encoder is open;
    /// by default `nil` (an encoder of another codec says its configuration in its packets'
    /// ``/MediaCore/EncodedAudioFormat/decoderConfiguration``).
    var audioSpecificConfig: AudioSpecificConfig? { get }
}

/// The name ``AudioEncoder`` had before encoders of other codecs were registered.
@available(*, deprecated, renamed: "AudioEncoder")
public typealias GaplessEncoder = AudioEncoder

/// How far an encoder has told its gapless numbers downstream (``AudioEncoder``'s events).
public struct GaplessAnnouncement: Sendable, Hashable {
    var primingSent = false
    var finalSent = false
    /// Nothing told yet.
    public init() {}
}

extension AudioEncoder {
    /// No AudioSpecificConfig: the encoder is not AAC's.
    public var audioSpecificConfig: AudioSpecificConfig? { nil }

    /// The encoder's ``/MediaCore/StreamEvent/gapless(_:)`` events not yet told: the priming once
    /// the encoder is open, the valid length and padding once it is flushed. An encoder returns
    /// them from its `takeEvents()`, keeping `announcement` as its state.
    public func gaplessEvents(_ announcement: inout GaplessAnnouncement) -> [StreamEvent] {
        if !announcement.finalSent, let padding {
            announcement.finalSent = true
            announcement.primingSent = true
            return [.gapless(GaplessInfo(priming: Int64(priming), validLength: inputFrameCount, padding: Int64(padding)))]
        }
        if !announcement.primingSent, inputFormat != nil {
            announcement.primingSent = true
            return [.gapless(GaplessInfo(priming: Int64(priming)))]
        }
        return []
    }

    /// Drops an upstream's gapless numbers (this encoder's replace them); passes the rest on.
    public func transform(event: StreamEvent) -> [StreamEvent] {
        if case .gapless = event { return [] }
        return [event]
    }
}

extension AACEncoder: AudioEncoder {}
