public import SystemPackage

/// The compressed audio of a file, as a format's entry in a ``MediaFormatRegistry`` opens it:
/// its packets, with what a decoder and a muxer need before the first of them. KeyFrameKit's
/// ADTS, MP4 and HLS reader (``AudioPacketInput``) is one; a container of another package is
/// one more, returned by its entry's ``MediaFormatRegistry/Entry/packetSource``.
public protocol PacketFileSource: PacketSource where Failure == PipelineError {
    /// The file read.
    var path: FilePath { get }
    /// The container.
    var format: MediaFileFormat { get }
    /// The stream: codec, rate, channels and the codec's configuration bytes, when the
    /// container says them before the first packet; `nil` when each packet carries its own (an
    /// ADTS frame's header).
    var audioFormat: EncodedAudioFormat? { get }
    /// The samples to drop at the start and keep in all (ISO/IEC 14496-12 8.6.6: an edit list),
    /// or ``/MediaCore/GaplessTrim/none`` when the container cannot say.
    var trim: GaplessTrim { get }
    /// The file's tags, cover and chapters.
    var metadata: StreamMetadata { get }
}

/// Any ``PacketFileSource`` as one source type, for a chain whose reader a registry chose at run
/// time (a registered container's). Each call is one dynamic dispatch per packet.
public struct AnyPacketFileSource: PacketFileSource {
    /// The source.
    public private(set) var base: any PacketFileSource

    /// `base` as one source type.
    public init(_ base: any PacketFileSource) { self.base = base }

    /// The file read.
    public var path: FilePath { base.path }
    /// The container.
    public var format: MediaFileFormat { base.format }
    /// The stream, when the container says it.
    public var audioFormat: EncodedAudioFormat? { base.audioFormat }
    /// The gapless trim.
    public var trim: GaplessTrim { base.trim }
    /// The file's tags, cover and chapters.
    public var metadata: StreamMetadata { base.metadata }
    /// How far the source has got.
    public var progress: MediaProgress { base.progress }

    /// The next packet.
    public mutating func next() throws(PipelineError) -> MediaSample? { try base.next() }
    /// The next run of back-to-back packets.
    public mutating func nextRun(maxBytes: Int) throws(PipelineError) -> MediaSampleRun? { try base.nextRun(maxBytes: maxBytes) }
    /// The source's damage.
    public mutating func takeDamage() -> [DamageEvent] { base.takeDamage() }
    /// The source's events.
    public mutating func takeEvents() -> [StreamEvent] { base.takeEvents() }
}
