public import MediaCore

/// A decoder as the jobs see it: compressed packets in, interleaved PCM out, trimmed by the
/// gapless numbers it was made with (ISO/IEC 14496-12 8.6.6: the edit's `media_time` and
/// duration). ``AACDecoder`` is one; a codec of another package is one more, registered in an
/// ``AudioCodecRegistry``.
///
/// A decoder drops an upstream's ``/MediaCore/StreamEvent/gapless(_:)`` events: its output is
/// already trimmed by them, and no PCM sink can signal a priming.
public protocol AudioDecoder: AnyObject, SendableMetatype, MediaTransform
where Input == MediaSample, Output == PCMBuffer, Failure == CodecError {
    /// The PCM sample type written.
    var outputSampleFormat: PCMSampleFormat { get }
    /// What is dropped of the decoded samples (the priming) and where they stop.
    var trim: GaplessTrim { get }
    /// The PCM layout of the output, once the first packet is decoded.
    var outputFormat: PCMFormat? { get }
    /// Whether a packet that cannot be decoded is stepped over and reported by ``takeDamage()``
    /// instead of ending the stream with an error (a damaged file salvaged).
    var skipsUndecodablePackets: Bool { get set }
    /// The packets stepped over since the last call.
    func takeDamage() -> [DamageEvent]
}

/// Any ``AudioDecoder`` as one transform type, for a chain whose decoder is chosen at run time
/// (the registry's). Each call is one dynamic dispatch per packet.
public struct AnyAudioDecoder: MediaTransform {
    /// The decoder.
    public private(set) var base: any AudioDecoder

    /// `base` as a transform.
    public init(_ base: any AudioDecoder) { self.base = base }

    /// Decodes one packet: its PCM (none while the decoder fills its delay or trims priming).
    public mutating func transform(_ packet: MediaSample) throws(CodecError) -> [PCMBuffer] { try base.transform(packet) }

    /// The decoder's handling of `event` (its gapless numbers dropped).
    public mutating func transform(event: StreamEvent) -> [StreamEvent] { base.transform(event: event) }

    /// Flushes the decoder: the PCM it still holds.
    public mutating func finish() throws(CodecError) -> [PCMBuffer] { try base.finish() }

    /// The decoder's own events.
    public mutating func takeEvents() -> [StreamEvent] { base.takeEvents() }
}

extension AnyAudioDecoder: NamedStage {
    /// The decoder's stage name (`AACDecoder`).
    package var stageName: String { JobReport.stageName(of: base) }
}

extension LibavcodecAudioDecoder: AudioDecoder {}

extension MediaSource where Element == MediaSample {
    /// This source's packets through `decoder`, a decoder chosen at run time (a registry's).
    public func transformed(by decoder: any AudioDecoder) -> TransformedSource<Self, AnyAudioDecoder> {
        transformed(by: AnyAudioDecoder(decoder))
    }
}
