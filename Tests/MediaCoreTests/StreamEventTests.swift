import MediaCore
import Synchronization
import Testing

/// What the tests' sinks saw, readable from any thread (threaded branches write it).
final class EventLog: Sendable {
    private let entries = Mutex<[String]>([])
    func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}

/// A marker event: metadata with one tag, `id`.
func marker(_ id: String) -> StreamEvent { .metadata(StreamMetadata(tags: [(key: "id", value: id)])) }

/// The entry a sink logs for an event.
func entry(_ event: StreamEvent) -> String {
    switch event {
    case .metadata(let metadata): "e:\(metadata["id"] ?? "?")"
    case .gapless(let info): "g:\(info.priming)/\(info.validLength.map(String.init) ?? "-")"
    case .timedMetadata(let timed): "t:\(timed.kind)@\(timed.time.value)"
    case .marker(let marker): "m:\(marker.kind)@\(marker.time.value)"
    case .codecConfiguration(let format): "c:\(format.codec)"
    case .loudness(let measured): "l:\(measured.integrated)"
    }
}

/// A source of numbered one-byte packets, telling `events[i]` before packet i and `events[count]`
/// at its end.
struct MarkedSource: PacketSource {
    let count: Int
    var events: [Int: [StreamEvent]] = [:]
    var failAt: Int?
    private var position = 0
    private var pending: [StreamEvent] = []
    static let format = FormatDescription.audio(EncodedAudioFormat(codec: .aac, sampleRate: 1000, channelCount: 1,
                                                                   framesPerPacket: 1, decoderConfiguration: []))

    init(count: Int, events: [Int: [StreamEvent]] = [:], failAt: Int? = nil) {
        self.count = count
        self.events = events
        self.failAt = failAt
    }

    mutating func next() throws(ByteStreamError) -> MediaSample? {
        pending += events[position] ?? []
        guard position < count else {
            position += 1
            return nil
        }
        if position == failAt { throw .system(operation: "read", path: "numbers", errno: .ioError) }
        defer { position += 1 }
        return MediaSample(data: [UInt8(truncatingIfNeeded: position)], presentationTime: MediaTime(value: Int64(position), timescale: 1000),
                           duration: MediaTime(value: 1, timescale: 1000), format: Self.format)
    }

    mutating func takeEvents() -> [StreamEvent] {
        defer { pending = [] }
        return pending
    }
}

/// A sink logging `p:N` for packets, the events, `finish` and `cancel`; fails at packet `failAt`.
struct LoggingSink: PacketSink {
    let log: EventLog
    var failAt: UInt8?
    var failsToFinish = false
    mutating func write(_ packet: MediaSample) throws(ByteStreamError) {
        if packet.data.first == failAt { throw .system(operation: "write", path: "log", errno: .noSpace) }
        log.append("p:\(packet.data.first ?? 0)")
    }
    mutating func receive(_ event: StreamEvent) throws(ByteStreamError) { log.append(entry(event)) }
    mutating func finish() throws(ByteStreamError) {
        if failsToFinish { throw .system(operation: "commit", path: "log", errno: .noSpace) }
        log.append("finish")
    }
    mutating func cancel() { log.append("cancel") }
}

/// Doubles each packet; tells `t:first` before the outputs of its first input, and, after
/// `finish()`'s packet 255, `t:end`.
struct MarkingDoubler: MediaTransform {
    private var inputs = 0
    private var events: [StreamEvent] = []
    mutating func transform(_ input: MediaSample) -> [MediaSample] {
        if inputs == 0 { events.append(marker("t:first")) }
        inputs += 1
        return [input, input]
    }
    mutating func finish() -> [MediaSample] {
        events.append(marker("t:end"))
        return [MediaSample(data: [255], presentationTime: .zero, duration: MediaTime(value: 1, timescale: 1000), format: MarkedSource.format)]
    }
    mutating func takeEvents() -> [StreamEvent] {
        defer { events = [] }
        return events
    }
}

/// Issue 22: stream events travel in order with the elements, through the pump, a transformed
/// source and a transforming sink.
@Suite struct StreamEventTests {
    static let marked: [Int: [StreamEvent]] = [0: [marker("A")], 2: [marker("B")], 3: [marker("C")]]

    @Test func eventsReachTheSinkInStreamOrder() throws {
        let log = EventLog()
        var source = MarkedSource(count: 3, events: Self.marked)
        var sink = LoggingSink(log: log)
        try Pump.run(from: &source, into: &sink)
        #expect(log.all == ["e:A", "p:0", "p:1", "e:B", "p:2", "e:C", "finish"])
    }

    @Test func aTransformedSourceKeepsEachEventBeforeTheOutputsOfItsElement() throws {
        let log = EventLog()
        var source = MarkedSource(count: 3, events: Self.marked).transformed(by: MarkingDoubler())
        var sink = LoggingSink(log: log)
        try Pump.run(from: &source, into: &sink)
        // Upstream events first, then the transform's before that call's outputs; at the end
        // the upstream's last event, finish()'s packet, then the transform's final event.
        #expect(log.all == ["e:A", "e:t:first", "p:0", "p:0", "p:1", "p:1", "e:B", "p:2", "p:2", "e:C", "p:255", "e:t:end", "finish"])
    }

    @Test func aTransformingSinkGivesTheSameOrder() throws {
        let log = EventLog()
        var source = MarkedSource(count: 3, events: Self.marked)
        var sink = LoggingSink(log: log).transforming(by: MarkingDoubler())
        try Pump.run(from: &source, into: &sink)
        #expect(log.all == ["e:A", "e:t:first", "p:0", "p:0", "p:1", "p:1", "e:B", "p:2", "p:2", "e:C", "p:255", "e:t:end", "finish"])
    }

    @Test func aStoppedJobStillDeliversTheTransformsFinalEvents() throws {
        let log = EventLog()
        let control = JobControl()
        var source = ObservedSource(MarkedSource(count: 100, events: Self.marked)) { packet in
            if packet.data == [1] { control.requestStop() }
        }.transformed(by: MarkingDoubler())
        var sink = LoggingSink(log: log)
        let report = try Pump.run(from: &source, into: &sink, control: control)
        #expect(report.stoppedEarly)
        #expect(Array(log.all.suffix(3)) == ["p:255", "e:t:end", "finish"], "\(log.all)")
    }

    /// A stop through wrappers (an observer, an announcer) still flushes the transform inside
    /// and delivers its final events.
    @Test func aStopThroughWrappersStillFlushesTheTransform() throws {
        let log = EventLog()
        let control = JobControl()
        var source = AnnouncingSource(ObservedSource(MarkedSource(count: 100, events: Self.marked).transformed(by: MarkingDoubler())) { packet in
            if packet.data == [1] { control.requestStop() }
        }, announcing: [])
        var sink = LoggingSink(log: log)
        let report = try Pump.run(from: &source, into: &sink, control: control)
        #expect(report.stoppedEarly)
        #expect(Array(log.all.suffix(3)) == ["p:255", "e:t:end", "finish"], "\(log.all)")
    }

    @Test func anAnnouncingSourceTellsItsEventsBeforeTheFirstElement() throws {
        let log = EventLog()
        var source = AnnouncingSource(MarkedSource(count: 2, events: [0: [marker("A")]]),
                                      announcing: [.gapless(GaplessInfo(priming: 1024, validLength: 5))])
        var sink = LoggingSink(log: log)
        try Pump.run(from: &source, into: &sink)
        #expect(log.all == ["g:1024/5", "e:A", "p:0", "p:1", "finish"])
    }

    @Test func aTalliedSinkCountsAndKeepsTheLastGaplessNumbers() throws {
        let tally = StreamTally()
        var source = AnnouncingSource(MarkedSource(count: 4, events: [4: [.gapless(GaplessInfo(priming: 2048, validLength: 3000, padding: 48))]]),
                                      announcing: [.gapless(GaplessInfo(priming: 2048))])
        var sink = TalliedSink(LoggingSink(log: EventLog()), tally: tally)
        try Pump.run(from: &source, into: &sink)
        #expect(tally.snapshot.elements == 4)
        #expect(tally.snapshot.gapless == GaplessInfo(priming: 2048, validLength: 3000, padding: 48))
    }

    @Test func timedMetadataAndMarkersTravelInOrderThroughATransformAndATee() throws {
        let adBreak = StreamMarker(kind: .adBreakStart, time: MediaTime(value: 1, timescale: 1000),
                                   duration: MediaTime(value: 30, timescale: 1), id: "break-1")
        let returning = StreamMarker(kind: .adBreakEnd, time: MediaTime(value: 2, timescale: 1000), id: "break-1")
        // A kind KeyFrameKit does not name travels the same way.
        let custom = TimedMetadata(kind: TimedMetadata.Kind("x-score"), time: MediaTime(value: 2, timescale: 1000), payload: [3, 1])
        let nowPlaying = TimedMetadata(kind: .nowPlaying, time: .zero, payload: Array("Song".utf8))
        let events: [Int: [StreamEvent]] = [0: [.timedMetadata(nowPlaying)], 1: [.marker(adBreak)], 2: [.marker(returning), .timedMetadata(custom)]]
        let first = EventLog(), second = EventLog()
        let tally = StreamTally()
        var source = MarkedSource(count: 3, events: events).transformed(by: MarkingDoubler())
        var tee = Tee<MediaSample>([.init(LoggingSink(log: first)), .init(TalliedSink(LoggingSink(log: second), tally: tally))])
        try Pump.run(from: &source, into: &tee)
        let expected = ["t:nowPlaying@0", "e:t:first", "p:0", "p:0", "m:adBreakStart@1", "p:1", "p:1", "m:adBreakEnd@2", "t:x-score@2",
                        "p:2", "p:2", "p:255", "e:t:end", "finish"]
        #expect(first.all == expected)
        #expect(second.all == expected)
        #expect(tally.snapshot.markers == [adBreak, returning])
        #expect(tally.snapshot.timedMetadata == [nowPlaying, custom])
    }

    @Test func aPipelineErrorKeepsItsCodeAndTheDomainError() {
        let error = PipelineError(ByteStreamError.system(operation: "read", path: "/x/in.m4a", errno: .ioError))
        #expect(error.code == .stream)
        #expect(error.path == "/x/in.m4a")
        #expect(error.underlying(as: ByteStreamError.self) == .system(operation: "read", path: "/x/in.m4a", errno: .ioError))
        #expect(PipelineError(error).code == .stream, "a PipelineError passes through")
        #expect(PipelineError.unsupported("no").code == .unsupported && PipelineError.cancelled.code == .cancelled)
    }
}
