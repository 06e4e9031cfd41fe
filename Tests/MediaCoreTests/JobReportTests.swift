import MediaCore
import Testing

/// A source of `count` one-byte packets, held in memory.
private struct ByteSource: PacketSource {
    let count: Int
    var position = 0
    static let format = FormatDescription.audio(EncodedAudioFormat(codec: .aac, sampleRate: 1000, channelCount: 1,
                                                                   framesPerPacket: 1, decoderConfiguration: []))

    mutating func next() -> MediaSample? {
        guard position < count else { return nil }
        defer { position += 1 }
        return MediaSample(data: [UInt8(truncatingIfNeeded: position)], presentationTime: MediaTime(value: Int64(position), timescale: 1000),
                           duration: MediaTime(value: 1, timescale: 1000), format: Self.format)
    }
}

/// Gives two packets for every odd one, none for an even one, and one more at the end.
private struct OddDoubler: MediaTransform {
    mutating func transform(_ input: MediaSample) -> [MediaSample] { input.data[0] % 2 == 1 ? [input, input] : [] }
    mutating func finish() -> [MediaSample] {
        [MediaSample(data: [255], presentationTime: .zero, duration: MediaTime(value: 1, timescale: 1000), format: ByteSource.format)]
    }
}

/// Counts what it is given; `stopAfter` asks `control` to stop.
private struct CountingSink: PacketSink {
    var written = 0
    var control: JobControl?
    var stopAfter: Int?

    mutating func write(_ packet: MediaSample) {
        written += 1
        if written == stopAfter { control?.requestStop() }
    }
    mutating func finish() {}
    mutating func cancel() {}
}

/// Issue 22: one report type with per-stage figures.
@Suite struct JobReportTests {
    @Test func aPumpReportsItsSourceTransformAndSink() throws {
        var source = ByteSource(count: 10).transformed(by: OddDoubler())
        var sink = CountingSink()
        let report = try Pump.run(from: &source, into: &sink)
        #expect(report.stages.map(\.name) == ["ByteSource", "OddDoubler", "CountingSink"])
        #expect(report.stages.map(\.role) == [.source, .transform, .sink])
        // 10 pulled; 5 odd ones doubled and one at the end; all of them written.
        #expect(report.stages.map(\.elements) == [10, 11, 11])
        #expect(report.elements == 11 && sink.written == 11)
        #expect(report.stages.allSatisfy { $0.branch == nil && $0.busy >= .zero && $0.busy <= report.elapsed })
        #expect(report.elapsed > .zero && !report.stoppedEarly && report.damage.isEmpty)
        #expect(report.stage(.transform)?.name == "OddDoubler")
    }

    @Test func aSourceWithoutStagesIsOne() throws {
        var source = ByteSource(count: 3)
        var sink = CountingSink()
        let report = try Pump.run(from: &source, into: &sink)
        #expect(report.stages.map(\.name) == ["ByteSource", "CountingSink"] && report.stages.map(\.elements) == [3, 3])
    }

    @Test func wrappersTellTheStagesInside() throws {
        var source = AnnouncingSource(ObservedSource(ByteSource(count: 4)) { _ in }, announcing: []).transformed(by: OddDoubler())
        var sink = TalliedSink(CountingSink(), tally: StreamTally())
        let report = try Pump.run(from: &source, into: &sink)
        #expect(report.stages.map(\.name) == ["ByteSource", "OddDoubler", "CountingSink"])
        #expect(report.stages.map(\.elements) == [4, 5, 5])
    }

    @Test func aStoppedJobSaysSoAndCountsWhatItsTransformsFlushed() throws {
        let control = JobControl()
        var source = ByteSource(count: 100).transformed(by: OddDoubler())
        var sink = CountingSink(control: control, stopAfter: 4)
        let report = try Pump.run(from: &source, into: &sink, control: control)
        #expect(report.stoppedEarly)
        // Packets 0…3 pulled (1 and 3 doubled), then the transform's last one.
        #expect(report.stages.map(\.elements) == [4, 5, 5])
        #expect(report.elements == 5 && sink.written == 5)
    }

    @Test(arguments: [false, true])
    func aTeeReportsEachBranch(threaded: Bool) throws {
        var source = ByteSource(count: 6)
        let branches: [Tee<MediaSample>.Branch] = threaded
            ? [Tee.Branch(threaded: CountingSink().transforming(by: OddDoubler()), name: "doubled"), Tee.Branch(threaded: CountingSink())]
            : [Tee.Branch(CountingSink().transforming(by: OddDoubler()), name: "doubled"), Tee.Branch(CountingSink())]
        var tee = Tee(branches)
        let report = try Pump.run(from: &source, into: &tee)
        #expect(report.stages.map(\.name) == ["ByteSource", "Tee<MediaSample>", "OddDoubler", "CountingSink", "CountingSink"])
        #expect(report.stages.map(\.role) == [.source, .sink, .transform, .sink, .sink])
        #expect(report.stages.map(\.branch) == [nil, nil, "doubled", "doubled", "1"])
        // Three odd packets doubled and one at the end, into the first branch; all six into the second.
        #expect(report.stages.map(\.elements) == [6, 6, 7, 7, 6])
    }

    @Test func reportsOfSeveralPumpsAddUp() {
        let stage = JobReport.Stage(name: "A", role: .source, elements: 2, busy: .milliseconds(1))
        var report = JobReport(stages: [stage], elapsed: .milliseconds(3), elements: 2)
        let damage = DamageEvent(.skippedBytes(count: 3), at: 7, message: "3 bytes skipped at byte 7")
        report.append(JobReport(stages: [stage, stage], elapsed: .milliseconds(4), damage: [damage], stoppedEarly: true, elements: 5))
        #expect(report.stages.count == 3 && report.elapsed == .milliseconds(7) && report.elements == 7)
        #expect(report.damage == [damage] && report.stoppedEarly)
        #expect(JobReport().appending(report) == report)
    }
}
