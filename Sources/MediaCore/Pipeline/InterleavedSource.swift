/// Two packet sources read as one, in decode-time order (audio first on a tie): what a muxer
/// of audio and video wants, so its interleaving queues stay short. Either may be absent.
public struct InterleavedSource<First: PacketSource, Second: PacketSource>: PacketSource {
    private var first: First?
    private var second: Second?
    private var nextFirst: MediaSample?
    private var nextSecond: MediaSample?
    private var primed = false
    /// Packets taken from the first source.
    public private(set) var firstCount = 0
    /// Packets taken from the second source.
    public private(set) var secondCount = 0

    /// `first` and `second`, interleaved.
    public init(first: First?, second: Second?) {
        self.first = first
        self.second = second
    }

    /// The packet with the earlier decode time of the two sources' next ones.
    public mutating func next() throws(PipelineError) -> MediaSample? {
        do {
            if !primed {
                nextFirst = try first?.next()
                nextSecond = try second?.next()
                primed = true
            }
            let takeFirst: Bool
            switch (nextFirst, nextSecond) {
            case (nil, nil): return nil
            case (.some(let a), .some(let b)): takeFirst = a.decodeTime <= b.decodeTime
            case (.some, nil): takeFirst = true
            case (nil, .some): takeFirst = false
            }
            if takeFirst {
                defer { firstCount += 1 }
                let packet = nextFirst
                nextFirst = try first?.next()
                return packet
            }
            defer { secondCount += 1 }
            let packet = nextSecond
            nextSecond = try second?.next()
            return packet
        } catch {
            throw PipelineError(error)
        }
    }

    /// The first source's progress (the second's when there is no first).
    public var progress: MediaProgress { first?.progress ?? second?.progress ?? MediaProgress() }

    /// Both sources' events.
    public mutating func takeEvents() -> [StreamEvent] {
        (first?.takeEvents() ?? []) + (second?.takeEvents() ?? [])
    }

    /// Both sources' damage.
    public mutating func takeDamage() -> [DamageEvent] {
        (first?.takeDamage() ?? []) + (second?.takeDamage() ?? [])
    }
}
