public import AACBitstream
internal import AudioBitstreams
public import MediaCore

/// An encoder of one rendition of several that must line up (an HLS ladder, a live rendition):
/// its packets at every `randomAccessInterval`-th packet marked as places a decoder may start
/// (``RandomAccessMarking``: an HLS segment's or part's first packet), and `leadingSilence`
/// frames of silence encoded before the input, so that its priming matches another
/// rendition's (AAC-LC's 1024 raised to HE-AAC's 3010: the same presented sample then falls at
/// the same decode time in both, and their segments end at the same samples).
///
/// The silence is told as priming (``priming`` is the encoder's plus it), so an edit list or
/// iTunSMPB skips it with the encoder's delay and the decode starts at the input's first sample.
/// The encoder's own gapless events are replaced by this one's; an upstream's are dropped.
public final class AlignedEncoder<Base: AudioEncoder>: AudioEncoder {
    /// The encoder wrapped.
    public private(set) var base: Base
    /// Frames of silence encoded before the input.
    public let leadingSilence: Int
    /// Packets from one place a decoder may start to the next (1 for every packet); `nil` marks
    /// none. Used only when ``base`` is ``RandomAccessMarking``.
    public let randomAccessInterval: Int64?

    private var started = false
    private var announcement = GaplessAnnouncement()
    /// The packets' format with the priming told (Opus), once made.
    private var primedFormat: FormatDescription?

    /// `base` with `leadingSilence` frames of silence before its input and, when it is
    /// ``RandomAccessMarking``, every `randomAccessInterval`-th packet (from packet 0) marked.
    public init(_ base: Base, leadingSilence: Int = 0, randomAccessInterval: Int64? = nil) {
        self.base = base
        self.leadingSilence = max(0, leadingSilence)
        self.randomAccessInterval = randomAccessInterval.map { max(1, $0) }
    }

    /// The encoder's priming plus ``leadingSilence``, once it is open.
    public var priming: Int { base.inputFormat == nil ? base.priming : base.priming + leadingSilence }
    /// Input frames taken so far (not counting the silence).
    public var inputFrameCount: Int64 { max(0, base.inputFrameCount - (started ? Int64(leadingSilence) : 0)) }
    /// Packets produced so far.
    public var packetCount: Int64 { base.packetCount }
    /// Samples after the input's end in the decoded output, once flushed.
    public var padding: Int? { base.padding }
    /// The PCM layout of the input, once known.
    public var inputFormat: PCMFormat? { base.inputFormat }
    /// The encoder's bitrate.
    public var bitrate: Int { base.bitrate }
    /// The encoder's AudioSpecificConfig, once open.
    public var audioSpecificConfig: AudioSpecificConfig? { base.audioSpecificConfig }

    /// Encodes `buffer` (after the silence, the first time), marking the packets it may make
    /// that start an interval.
    public func transform(_ buffer: PCMBuffer) throws(CodecError) -> [MediaSample] {
        var buffer = buffer
        if !started {
            started = true
            if leadingSilence > 0 {
                guard buffer.format.sampleFormat != .uint8 else {
                    throw .unsupportedInput("leading silence in unsigned 8-bit PCM: convert to a signed or float format first")
                }
                // Zero bytes are silence in every signed and float format.
                buffer.bytes = [UInt8](repeating: 0, count: leadingSilence * buffer.format.bytesPerFrame) + buffer.bytes
                buffer.presentationTime = try? buffer.presentationTime?.subtracting(
                    MediaTime(value: Int64(leadingSilence), timescale: Int32(buffer.format.sampleRate)))
            }
        }
        // An AAC packet holds at least 1024 frames (only AAC encoders are marked), and an encoder
        // keeps fewer than a few packets.
        mark(upTo: base.packetCount + Int64(buffer.frameCount / 1024) + 8)
        return withPriming(try base.transform(buffer))
    }

    /// Flushes the encoder (marking the packets the flush may make).
    public func finish() throws(CodecError) -> [MediaSample] {
        mark(upTo: base.packetCount + Int64(max(priming, 0) / 1024) + 8)
        return withPriming(try base.finish())
    }

    /// `packets` whose format tells the priming, silence included, where the codec's
    /// configuration holds it (Opus's pre-skip, RFC 7845 5.1); as they are otherwise.
    private func withPriming(_ packets: [MediaSample]) -> [MediaSample] {
        guard leadingSilence > 0, let first = packets.first, case .audio(let audio) = first.format, audio.codec == .opus else { return packets }
        if primedFormat == nil {
            primedFormat = .audio(audio.settingOpusPreSkip(priming: Int64(priming), timescale: audio.sampleRate))
        }
        guard let primedFormat else { return packets }
        return packets.map { packet in
            var packet = packet
            packet.format = primedFormat
            return packet
        }
    }

    /// Drops an upstream's gapless numbers (this encoder's replace them); passes the rest on.
    public func transform(event: StreamEvent) -> [StreamEvent] {
        if case .gapless = event { return [] }
        return [event]
    }

    /// The priming once open, the valid length and padding once flushed (the wrapped encoder's
    /// own gapless events are replaced; its others pass).
    public func takeEvents() -> [StreamEvent] {
        let own = base.takeEvents().filter { if case .gapless = $0 { false } else { true } }
        return own + gaplessEvents(&announcement)
    }

    /// Marks every interval start from the next packet up to (not including) `end`.
    private func mark(upTo end: Int64) {
        guard let interval = randomAccessInterval, let marking = base as? any RandomAccessMarking else { return }
        let next = base.packetCount
        var index = (next + interval - 1) / interval * interval
        while index < end {
            if index > 0 { marking.markIndependent(packet: index) }
            index += interval
        }
    }
}

/// One stream's state, on one thread at a time; hand it over, don't share it.
@available(*, unavailable)
extension AlignedEncoder: Sendable {}
