/// A source whose elements pass through a transform: a PCM source through an encoder is a
/// packet source, a packet source through a decoder is a PCM source. Made by
/// ``MediaCore/MediaSource/transformed(by:)``.
///
/// What the transform holds back is handed over when the upstream ends
/// (``/MediaCore/MediaTransform/finish()``), so the last packets of an encoder are never lost.
public struct TransformedSource<Upstream: MediaSource, Transform: MediaTransform>: MediaSource
where Transform.Input == Upstream.Element {
    /// The source read.
    public private(set) var upstream: Upstream
    /// The transform applied.
    public private(set) var transform: Transform
    private var pending: [Transform.Output] = []
    private var pendingIndex = 0
    private var isFinished = false

    /// `upstream`'s elements through `transform`.
    public init(_ upstream: Upstream, transform: Transform) {
        self.upstream = upstream
        self.transform = transform
    }

    /// The next transformed element, `nil` once the upstream has ended and the transform is
    /// flushed.
    public mutating func next() throws(PipelineError) -> Transform.Output? {
        while pendingIndex == pending.count {
            guard !isFinished else { return nil }
            do {
                if let input = try upstream.next() {
                    pending = try transform.transform(input)
                } else {
                    pending = try transform.finish()
                    isFinished = true
                }
            } catch {
                throw PipelineError(error)
            }
            pendingIndex = 0
        }
        defer { pendingIndex += 1 }
        return pending[pendingIndex]
    }

    /// The upstream's progress.
    public var progress: MediaProgress { upstream.progress }

    /// The upstream's damage.
    public mutating func takeDamage() -> [DamageEvent] { upstream.takeDamage() }
}

extension TransformedSource: FlushableSource {
    /// What is pending, then what the transform still holds, without reading the upstream.
    mutating func flushNext() throws(PipelineError) -> Transform.Output? {
        if pendingIndex == pending.count, !isFinished {
            do { pending = try transform.finish() } catch { throw PipelineError(error) }
            pendingIndex = 0
            isFinished = true
        }
        guard pendingIndex < pending.count else { return nil }
        defer { pendingIndex += 1 }
        return pending[pendingIndex]
    }
}

extension TransformedSource: PacketSource where Transform.Output == MediaSample {}

extension TransformedSource: PCMSource where Transform.Output == PCMBuffer {
    /// Known only from the first buffer.
    public var pcmFormat: PCMFormat? { nil }
}

extension MediaSource {
    /// This source's elements through `transform` (an encoder, a decoder).
    public func transformed<T: MediaTransform>(by transform: T) -> TransformedSource<Self, T> where T.Input == Element {
        TransformedSource(self, transform: transform)
    }
}

/// A source that shows each element to `observe` as it passes (a level meter, a counter).
public struct ObservedSource<Upstream: MediaSource>: MediaSource {
    /// The source read.
    public private(set) var upstream: Upstream
    private let observe: (Upstream.Element) -> Void

    /// `upstream`, with `observe` called on each element.
    public init(_ upstream: Upstream, observe: @escaping (Upstream.Element) -> Void) {
        self.upstream = upstream
        self.observe = observe
    }

    /// The upstream's next element, after `observe` has seen it.
    public mutating func next() throws(Upstream.Failure) -> Upstream.Element? {
        guard let element = try upstream.next() else { return nil }
        observe(element)
        return element
    }

    /// The upstream's progress.
    public var progress: MediaProgress { upstream.progress }

    /// The upstream's damage.
    public mutating func takeDamage() -> [DamageEvent] { upstream.takeDamage() }
}

extension ObservedSource: PCMSource where Upstream: PCMSource {
    /// The upstream's layout.
    public var pcmFormat: PCMFormat? { upstream.pcmFormat }
}

extension ObservedSource: PacketSource where Upstream: PacketSource {}
