/// Where an HLS rendition's segments and parts end: pure logic over the waiting packets'
/// durations (media units), with no file or segmenter in sight. ``HLSSegmentOutput`` adds each
/// packet's duration with ``add(_:)``, carries out the `Cut`s it gets, and at the end drops
/// what ``dropPacketsPastEnd(priming:validLength:)`` says, shortens the last packet to the last
/// presented sample (``shortenLast(to:)``) and carries out ``finalCuts()``.
///
/// - VOD (``Mode/onDemand``): segments last ``segmentDuration`` (rounded up to whole packets);
///   one is cut only once one and a half are waiting, so that the last takes up to half a
///   segment more rather than be short. (The playlist's target duration, RFC 8216 4.3.3.1, is
///   the longest segment's rounded, so the last may raise it: VOD lists every segment at once.)
/// - Live (``Mode/live``): a segment as soon as one is long enough, since a client waits for it.
/// - Low-latency (``Mode/lowLatency(partDuration:)``): parts of whole packets, as many as fit
///   in the part target (no part is longer than `PART-TARGET`: draft-pantos-hls-rfc8216bis
///   4.4.3.7, 4.4.4.9), and a segment of a whole number of parts, as many as fit in the segment
///   duration, so that no segment outlasts the target duration the playlist announced before
///   the first was done (RFC 8216 4.3.3.1).
struct HLSSegmentingPolicy: Sendable, Hashable {
    /// What kind of rendition is cut.
    enum Mode: Sendable, Hashable {
        /// A packaged rendition: every segment is known before the playlist is written.
        case onDemand
        /// A live rendition without parts.
        case live
        /// A low-latency live rendition: parts of at most `partDuration` seconds.
        case lowLatency(partDuration: Double)
    }

    /// One thing to write, of the waiting packets from the front.
    enum Cut: Sendable, Hashable {
        /// The first `packets` waiting packets as a segment.
        case segment(packets: Int)
        /// The first `packets` waiting packets as a part of the segment being recorded.
        case part(packets: Int)
        /// The parts recorded so far, as a segment.
        case closeSegment
    }

    /// The wanted segment length in seconds.
    let segmentDuration: Double
    /// What kind of rendition is cut.
    let mode: Mode
    /// The media timescale of the durations.
    let timescale: Int32

    /// The waiting packets' durations, in order.
    private(set) var waiting: [Int64] = []
    /// The waiting packets' durations added up.
    private(set) var waitingDuration: Int64 = 0
    /// Packets cut so far (into segments or parts).
    private(set) var packetsCut = 0
    /// Low-latency: parts cut since the last segment was closed.
    private(set) var openParts = 0

    /// The policy for `mode`, with segments of about `segmentDuration` seconds in `timescale`.
    ///
    /// - Throws: ``/MediaCore/PipelineError`` (unsupported) for a segment duration outside 0.5–60 s or
    ///   a part duration outside 0.1 s – the segment duration.
    init(segmentDuration: Double, mode: Mode, timescale: Int32) throws(PipelineError) {
        try Self.checkSegmentDuration(segmentDuration)
        if case .lowLatency(let partDuration) = mode { try Self.checkPartDuration(partDuration, segmentDuration: segmentDuration) }
        self.segmentDuration = segmentDuration
        self.mode = mode
        self.timescale = timescale
    }

    /// Refuses a segment duration outside 0.5–60 seconds.
    static func checkSegmentDuration(_ segmentDuration: Double) throws(PipelineError) {
        guard segmentDuration >= 0.5, segmentDuration <= 60 else {
            throw .unsupported("--segment-duration \(segmentDuration): give 0.5 to 60 seconds")
        }
    }

    /// Refuses a part duration outside 0.1 s – `segmentDuration`.
    static func checkPartDuration(_ partDuration: Double, segmentDuration: Double) throws(PipelineError) {
        guard partDuration >= 0.1, partDuration <= segmentDuration else {
            throw .unsupported("a part duration of \(partDuration) s: give 0.1 s up to the segment duration (\(segmentDuration) s)")
        }
    }

    /// VOD: packets held beyond one and a half segments before one is cut (more than an
    /// encoder's padding after the last presented sample).
    static let onDemandSlack: Int64 = 4

    /// The wanted segment length in media units.
    var segmentTarget: Int64 { Int64((segmentDuration * Double(timescale)).rounded()) }

    /// Low-latency: whole parts per segment, as many as fit in the segment duration.
    var partsPerSegment: Int? {
        guard case .lowLatency(let partDuration) = mode else { return nil }
        return max(1, Int((segmentDuration / partDuration + 1e-9).rounded(.down)))
    }

    /// Low-latency: whole packets of `duration` media units per part, as many as fit in the
    /// part target (at least one).
    func packetsPerPart(packetDuration duration: Int64) -> Int? {
        guard case .lowLatency(let partDuration) = mode else { return nil }
        return max(1, Int((partDuration * Double(timescale)).rounded(.down)) / Int(max(duration, 1)))
    }

    /// Packets of `duration` media units each from one segment start to the next, or
    /// (low-latency) from one part start to the next: every segment and part a player may start
    /// at begins at a multiple of it, counting from the first packet (the last segment only runs
    /// longer, never begins elsewhere).
    func packetsBetweenStarts(packetDuration duration: Int64) -> Int64 {
        if let perPart = packetsPerPart(packetDuration: duration) { return Int64(perPart) }
        let duration = max(duration, 1)
        return max(1, (segmentTarget + duration - 1) / duration)
    }

    /// Adds a packet of `duration` media units to those waiting; what to write now, in order.
    /// Live, a playlist follows whatever was cut.
    mutating func add(_ duration: Int64) -> [Cut] {
        waiting.append(duration)
        waitingDuration += duration
        switch mode {
        case .lowLatency:
            // A part as soon as it is recorded, a segment every so many parts.
            guard let count = packetsPerPart(packetDuration: duration), waiting.count >= count else { return [] }
            var cuts = [takePart(count)]
            if let partsPerSegment, openParts >= partsPerSegment { cuts.append(closeSegment()) }
            return cuts
        case .live:
            guard waitingDuration >= segmentTarget else { return [] }
            return [takeSegment(atLeast: segmentTarget)]
        case .onDemand:
            // Cut only once the packets past the end that ``dropPacketsPastEnd`` may still drop
            // (an encoder's padding: under `onDemandSlack` packets) cannot bring what is left
            // under one and a half segments: the segments are then a function of the presented
            // end alone, the same in renditions whose encoders pad differently (an HE-AAC and an
            // AAC-LC rendition of one ladder), and the last is never short.
            guard (waitingDuration - Self.onDemandSlack * duration) * 2 >= segmentTarget * 3 else { return [] }
            return [takeSegment(atLeast: segmentTarget)]
        }
    }

    /// Adds the last packet of `duration` media units to those waiting, without cutting: at the
    /// end, when ``finalCuts()`` follows (a live rendition holds its newest packet back until
    /// the next comes, so that the end can shorten it).
    mutating func addLast(_ duration: Int64) {
        waiting.append(duration)
        waitingDuration += duration
    }

    /// Shortens the last waiting packet to `duration` media units: the packet that holds the
    /// last presented sample lasts only up to it (its `trun` sample duration), as FFmpeg's
    /// muxer does, so that the segments, the playlist and the MPD add up to the priming and the
    /// valid length. Nothing when no packet waits.
    mutating func shortenLast(to duration: Int64) {
        guard let last = waiting.indices.last else { return }
        waitingDuration += duration - waiting[last]
        waiting[last] = duration
    }

    /// Drops the waiting packets wholly after the last presented sample (an encoder's padding
    /// past the packet that holds the source's end): that sample is `priming + validLength - 1`
    /// of the decoded output, and every packet is taken to last as long as the first waiting.
    /// How many were dropped, from the end.
    mutating func dropPacketsPastEnd(priming: Int64, validLength: Int64) -> Int {
        let frame = max(1, waiting.first ?? 1024)
        let lastNeeded = Int((priming + validLength - 1) / frame)
        let keep = max(0, min(waiting.count, lastNeeded - packetsCut + 1))
        let dropped = waiting.count - keep
        if dropped > 0 {
            waiting.removeLast(dropped)
            waitingDuration = waiting.reduce(0, +)
        }
        return dropped
    }

    /// What to write of the packets left at the end, in order: VOD, whole segments while more
    /// than one and a half are waiting, then the rest as the last segment; live, the rest
    /// as one segment; low-latency, the rest as a part, and the parts as the last segment.
    mutating func finalCuts() -> [Cut] {
        var cuts: [Cut] = []
        switch mode {
        case .lowLatency:
            if !waiting.isEmpty { cuts.append(takePart(waiting.count)) }
            if openParts > 0 { cuts.append(closeSegment()) }
        case .live, .onDemand:
            while mode == .onDemand, waitingDuration * 2 > segmentTarget * 3 { cuts.append(takeSegment(atLeast: segmentTarget)) }
            if !waiting.isEmpty { cuts.append(takeSegment(atLeast: .max)) }
        }
        return cuts
    }

    /// The waiting packets from the front, whole ones adding up to at least `target` (all of
    /// them if they add up to less), as a segment.
    private mutating func takeSegment(atLeast target: Int64) -> Cut {
        var taken: Int64 = 0
        var count = 0
        while count < waiting.count, taken < target {
            taken += waiting[count]
            count += 1
        }
        take(count, lasting: taken)
        return .segment(packets: count)
    }

    /// The first `count` waiting packets as a part.
    private mutating func takePart(_ count: Int) -> Cut {
        take(count, lasting: waiting[..<count].reduce(0, +))
        openParts += 1
        return .part(packets: count)
    }

    private mutating func closeSegment() -> Cut {
        openParts = 0
        return .closeSegment
    }

    private mutating func take(_ count: Int, lasting duration: Int64) {
        waiting.removeFirst(count)
        waitingDuration -= duration
        packetsCut += count
    }
}
