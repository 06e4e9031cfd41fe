/// Something that yields media one element at a time: the first stage of every KeyFrameKit job.
///
/// A source is pulled: ``next()`` returns the next element, or `nil` at the end of the stream
/// (end of stream is never an error). Containers and elementary streams yield compressed
/// packets (``PacketSource``); WAV, raw PCM, capture devices and decoders yield PCM
/// (``PCMSource``). Sources are synchronous; a job runs them on a thread of its own.
public protocol MediaSource<Element> {
    /// What the source yields: a ``MediaSample`` (packets) or a ``PCMBuffer``.
    associatedtype Element
    /// What reading can fail with.
    associatedtype Failure: Error

    /// The next element, or `nil` at the end of the stream.
    mutating func next() throws(Failure) -> Element?

    /// How far the source has got; by default unknown.
    var progress: MediaProgress { get }

    /// The damage met since the last call: what the source stepped over instead of failing
    /// (skipped bytes, a truncated frame, a broken box). By default none.
    mutating func takeDamage() -> [DamageEvent]

    /// The stream events (``StreamEvent``) since the last call, in order: after `next()` returned
    /// an element, the events that precede it; after it returned `nil`, the events of the end
    /// (a final ``StreamEvent/gapless(_:)``). By default none.
    mutating func takeEvents() -> [StreamEvent]
}

extension MediaSource {
    /// Unknown progress.
    public var progress: MediaProgress { MediaProgress() }

    /// No damage.
    public mutating func takeDamage() -> [DamageEvent] { [] }

    /// No events.
    public mutating func takeEvents() -> [StreamEvent] { [] }
}

/// A source of compressed packets (AAC raw data blocks, video access units), each a
/// ``MediaSample`` with its timing and format: an ADTS stream, one track of an MP4, an Annex-B
/// stream, an encoder's output.
public protocol PacketSource: MediaSource where Element == MediaSample {
    /// The next samples whose bytes lie back to back in the input, at most `maxBytes` of them
    /// (at least one), or `nil` at the end; by default one sample. Container readers read a run
    /// with one call. Runs and single samples can be mixed: each sample is delivered once.
    mutating func nextRun(maxBytes: Int) throws(Failure) -> MediaSampleRun?
}

extension PacketSource {
    /// The next sample as a run of one.
    public mutating func nextRun(maxBytes: Int) throws(Failure) -> MediaSampleRun? {
        try next().map(MediaSampleRun.init(sample:))
    }
}

/// A packet source seen as a source of ``MediaSampleRun``s (``PacketSource/nextRun(maxBytes:)``),
/// for a pump that moves packets between containers without looking at them one by one.
public struct SampleRunSource<Base: PacketSource>: MediaSource {
    /// The packet source read.
    public private(set) var base: Base
    /// The most bytes a run holds (unless its first sample alone is longer).
    public let maxBytes: Int

    /// A source of runs of at most `maxBytes` from `base`.
    public init(_ base: Base, maxBytes: Int = 256 * 1024) {
        self.base = base
        self.maxBytes = maxBytes
    }

    /// The next run.
    public mutating func next() throws(Base.Failure) -> MediaSampleRun? { try base.nextRun(maxBytes: maxBytes) }

    /// The base source's progress.
    public var progress: MediaProgress { base.progress }

    /// The base source's damage.
    public mutating func takeDamage() -> [DamageEvent] { base.takeDamage() }

    /// The base source's events.
    public mutating func takeEvents() -> [StreamEvent] { base.takeEvents() }
}

/// A source of interleaved PCM: a WAV or raw PCM file, a capture device, a decoder's output.
public protocol PCMSource: MediaSource where Element == PCMBuffer {
    /// The PCM layout, when known before the first buffer (a WAV header, a device opened with a
    /// format); `nil` when only the first buffer will tell (a decoder).
    var pcmFormat: PCMFormat? { get }
}
