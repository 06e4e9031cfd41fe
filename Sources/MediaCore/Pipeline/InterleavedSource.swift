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
    /// The time in each source's `next()`, for the report (`StageReporting`).
    private var firstBusy = Duration.zero
    private var secondBusy = Duration.zero

    /// `first` and `second`, interleaved.
    public init(first: First?, second: Second?) {
        self.first = first
        self.second = second
    }

    /// The events each source told before its looked-ahead packet (after it ended: its end's).
    private var firstEvents: [StreamEvent] = []
    private var secondEvents: [StreamEvent] = []
    /// The events that precede the packet ``next()`` last returned.
    private var outgoing: [StreamEvent] = []

    /// The packet with the earlier decode time of the two sources' next ones. Each source is
    /// read one packet ahead; the events it told before a packet are kept with that packet, so
    /// they are told right before it (and a source's end events only once both have ended).
    public mutating func next() throws(PipelineError) -> MediaSample? {
        do {
            if !primed {
                nextFirst = try pullFirst()
                firstEvents = first?.takeEvents() ?? []
                nextSecond = try pullSecond()
                secondEvents = second?.takeEvents() ?? []
                primed = true
            }
            let takeFirst: Bool
            switch (nextFirst, nextSecond) {
            case (nil, nil):
                outgoing += firstEvents + secondEvents
                firstEvents = []
                secondEvents = []
                return nil
            case (.some(let a), .some(let b)): takeFirst = a.decodeTime <= b.decodeTime
            case (.some, nil): takeFirst = true
            case (nil, .some): takeFirst = false
            }
            if takeFirst {
                defer { firstCount += 1 }
                let packet = nextFirst
                outgoing += firstEvents
                nextFirst = try pullFirst()
                firstEvents = first?.takeEvents() ?? []
                return packet
            }
            defer { secondCount += 1 }
            let packet = nextSecond
            outgoing += secondEvents
            nextSecond = try pullSecond()
            secondEvents = second?.takeEvents() ?? []
            return packet
        } catch {
            throw PipelineError(error)
        }
    }

    private mutating func pullFirst() throws(First.Failure) -> MediaSample? {
        let asked = ContinuousClock.now
        defer { firstBusy += ContinuousClock.now - asked }
        return try first?.next()
    }

    private mutating func pullSecond() throws(Second.Failure) -> MediaSample? {
        let asked = ContinuousClock.now
        defer { secondBusy += ContinuousClock.now - asked }
        return try second?.next()
    }

    /// The first source's progress (the second's when there is no first).
    public var progress: MediaProgress { first?.progress ?? second?.progress ?? MediaProgress() }

    /// The events that precede the packet last returned (after the end: both sources' end
    /// events), in each source's order.
    public mutating func takeEvents() -> [StreamEvent] {
        defer { outgoing = [] }
        return outgoing
    }

    /// Both sources' damage.
    public mutating func takeDamage() -> [DamageEvent] {
        (first?.takeDamage() ?? []) + (second?.takeDamage() ?? [])
    }
}

extension InterleavedSource: StageReporting {
    /// Each source present, with the packets taken from it and the time in its `next()`.
    package func appendStages(to stages: inout [JobReport.Stage], elements: Int64, busy: Duration) {
        if let first { JobReport.appendStages(of: first, role: .source, elements: Int64(firstCount), busy: firstBusy, to: &stages) }
        if let second { JobReport.appendStages(of: second, role: .source, elements: Int64(secondCount), busy: secondBusy, to: &stages) }
    }
}
