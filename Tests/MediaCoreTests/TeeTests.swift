import MediaCore
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Issue 22: a tee feeds every branch every element and event, in order; threaded branches run
/// on their own threads with a bounded queue; a required branch's failure fails the job, an
/// expendable one's is reported while the others go on.
@Suite(.blocking) struct TeeTests {
    static let events: [Int: [StreamEvent]] = [0: [marker("A")], 50: [marker("B")], 100: [marker("C")]]
    static var expected: [String] {
        ["e:A"] + (0..<50).map { "p:\($0)" } + ["e:B"] + (50..<100).map { "p:\($0)" } + ["e:C", "finish"]
    }

    @Test(arguments: [false, true])
    func everyBranchGetsEverythingInOrder(threaded: Bool) throws {
        let logs = (0..<3).map { _ in EventLog() }
        let branches = logs.enumerated().map { index, log in
            threaded ? Tee<MediaSample>.Branch(threaded: LoggingSink(log: log), name: "\(index)", queueCapacity: 4)
                : Tee<MediaSample>.Branch(LoggingSink(log: log), name: "\(index)")
        }
        var source = MarkedSource(count: 100, events: Self.events)
        var tee = Tee(branches)
        try Pump.run(from: &source, into: &tee)
        for log in logs { #expect(log.all == Self.expected) }
        #expect(tee.failures.isEmpty)
    }

    @Test(arguments: [false, true])
    func aRequiredBranchFailingFailsTheJobAndCancelsTheOthers(threaded: Bool) {
        let good = EventLog(), bad = EventLog()
        let branches: [Tee<MediaSample>.Branch] = threaded
            ? [.init(threaded: LoggingSink(log: good), name: "good"), .init(threaded: LoggingSink(log: bad, failAt: 10), name: "bad")]
            : [.init(LoggingSink(log: good), name: "good"), .init(LoggingSink(log: bad, failAt: 10), name: "bad")]
        var source = MarkedSource(count: 100, events: Self.events)
        var tee = Tee(branches)
        #expect {
            try Pump.run(from: &source, into: &tee)
        } throws: { error in
            (error as? PipelineError)?.code == .stream && (error as? PipelineError)?.path == "log"
        }
        #expect(good.all.last == "cancel" && !good.all.contains("finish"), "\(good.all.suffix(3))")
        #expect(bad.all.last == "cancel" && !bad.all.contains("p:10"))
    }

    @Test(arguments: [false, true])
    func anExpendableBranchFailingIsReportedAndTheOthersGoOn(threaded: Bool) throws {
        let good = EventLog(), bad = EventLog()
        let branches: [Tee<MediaSample>.Branch] = threaded
            ? [.init(threaded: LoggingSink(log: good), name: "file"),
               .init(threaded: LoggingSink(log: bad, failAt: 10), name: "rtmp", policy: .expendable)]
            : [.init(LoggingSink(log: good), name: "file"), .init(LoggingSink(log: bad, failAt: 10), name: "rtmp", policy: .expendable)]
        var source = MarkedSource(count: 100, events: Self.events)
        var tee = Tee(branches)
        try Pump.run(from: &source, into: &tee)
        #expect(good.all == Self.expected)
        #expect(bad.all.last == "cancel" && !bad.all.contains("finish"))
        #expect(tee.failures.map(\.name) == ["rtmp"] && tee.failures.first?.error.code == .stream)
    }

    /// A required branch that fails to finish: the branches after it are cancelled, not
    /// committed, and the job fails.
    @Test func aRequiredBranchFailingToFinishCancelsTheOnesNotYetFinished() {
        let first = EventLog(), failing = EventLog(), last = EventLog()
        var source = MarkedSource(count: 10)
        var tee = Tee([Tee<MediaSample>.Branch(threaded: LoggingSink(log: first), name: "first"),
                       Tee<MediaSample>.Branch(threaded: LoggingSink(log: failing, failsToFinish: true), name: "failing"),
                       Tee<MediaSample>.Branch(threaded: LoggingSink(log: last), name: "last")])
        #expect(throws: PipelineError.self) { try Pump.run(from: &source, into: &tee) }
        #expect(first.all.last == "finish", "finished before the failure: the job removes what it made")
        #expect(failing.all.last == "cancel" && last.all.last == "cancel" && !last.all.contains("finish"), "\(last.all.suffix(2))")
    }

    /// Counts shared by the source and a slow branch.
    final class Lead: Sendable {
        let produced = Atomic<Int>(0)
        let most = Atomic<Int>(0)
    }

    /// A branch that takes 0.2 ms per packet and notes how far the source is ahead of it.
    struct SlowSink: PacketSink {
        let lead: Lead
        var consumed = 0
        mutating func write(_ packet: MediaSample) {
            consumed += 1
            let ahead = lead.produced.load(ordering: .sequentiallyConsistent) - consumed
            _ = lead.most.max(ahead, ordering: .sequentiallyConsistent)
            usleep(200)
        }
        mutating func finish() {}
        mutating func cancel() {}
    }

    /// Backpressure: the source runs ahead of a slow threaded branch by at most its queue.
    @Test func aSlowThreadedBranchHoldsTheSourceBackByItsQueue() throws {
        let lead = Lead()
        var source = ObservedSource(MarkedSource(count: 300)) { _ in lead.produced.add(1, ordering: .sequentiallyConsistent) }
        var tee = Tee([Tee<MediaSample>.Branch(threaded: SlowSink(lead: lead), queueCapacity: 4)])
        try Pump.run(from: &source, into: &tee)
        // The queue (4), the element being written, and the one the source has read and waits
        // to queue.
        #expect(lead.most.load(ordering: .sequentiallyConsistent) <= 6)
        #expect(lead.produced.load(ordering: .sequentiallyConsistent) == 300)
    }

    /// A sink that takes 50 ms per packet and counts them (in `lead.produced`).
    struct CountingSlowSink: PacketSink {
        let lead: Lead
        mutating func write(_ packet: MediaSample) {
            usleep(50_000)
            lead.produced.add(1, ordering: .sequentiallyConsistent)
        }
        mutating func finish() {}
        mutating func cancel() {}
    }

    /// Cancelling a threaded sink drops what its queue holds: it waits for the one element
    /// being written, not for the queue to drain (a Ctrl-C on a ladder ends at once).
    @Test func cancellingAThreadedSinkDropsItsQueue() throws {
        let written = Lead()
        var sink = ThreadedSink<MediaSample>(CountingSlowSink(lead: written), queueCapacity: 16)
        var source = MarkedSource(count: 16)
        while let packet = try source.next() { try sink.write(packet) }
        sink.cancel()
        #expect(written.produced.load(ordering: .sequentiallyConsistent) <= 2, "the queue was written, not dropped")
    }
}
