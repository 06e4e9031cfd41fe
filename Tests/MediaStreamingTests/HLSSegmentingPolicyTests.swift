@testable import MediaStreaming
import Testing

/// The segmenting policy alone, over durations: where VOD, live and low-latency renditions are
/// cut, and which packets past the last presented sample are dropped. No file is written.
@Suite struct HLSSegmentingPolicyTests {
    /// What a run of packets gave: each cut with the packet (1-based) whose adding made it, and
    /// the cuts at the end.
    struct Run {
        var cuts: [(after: Int, cut: HLSSegmentingPolicy.Cut)] = []
        var final: [HLSSegmentingPolicy.Cut] = []

        /// Packets per segment, in order: those of `.segment` cuts, or of the parts a
        /// `.closeSegment` closed.
        var segmentSizes: [Int] {
            var sizes: [Int] = []
            var parts = 0
            for cut in cuts.map({ $0.cut }) + final {
                switch cut {
                case .segment(let packets): sizes.append(packets)
                case .part(let packets): parts += packets
                case .closeSegment:
                    sizes.append(parts)
                    parts = 0
                }
            }
            return sizes
        }
    }

    /// `count` packets of `packetDuration` (AAC: 1024 samples) into a policy, then its end.
    static func run(_ count: Int, packetDuration: Int64 = 1024, segmentDuration: Double, mode: HLSSegmentingPolicy.Mode,
                    timescale: Int32 = 44_100, priming: Int64? = nil, validLength: Int64? = nil) throws -> (Run, dropped: Int) {
        var policy = try HLSSegmentingPolicy(segmentDuration: segmentDuration, mode: mode, timescale: timescale)
        var run = Run()
        for index in 1...count {
            for cut in policy.add(packetDuration) { run.cuts.append((index, cut)) }
        }
        var dropped = 0
        if let priming, let validLength { dropped = policy.dropPacketsPastEnd(priming: priming, validLength: validLength) }
        run.final = policy.finalCuts()
        #expect(policy.waiting.isEmpty, "every packet kept was cut")
        #expect(policy.packetsCut == count - dropped, "\(policy.packetsCut) packets cut of \(count) less \(dropped) dropped")
        return (run, dropped)
    }

    // MARK: VOD

    /// 2 s at 44.1 kHz is 88 200 units: a segment is 87 packets (the first whole packets that
    /// reach it), cut once 134 are waiting (1.5 segments, 132 300 units, past 4 packets an
    /// encoder's padding may take: the segments then depend on the presented end alone); what
    /// waits at the end is cut the same way.
    @Test func onDemandCutsOnceOneAndAHalfSegmentsWait() throws {
        let (run, _) = try Self.run(217, segmentDuration: 2, mode: .onDemand)
        #expect(run.cuts.map { $0.after } == [134], "cuts after packets \(run.cuts.map { $0.after })")
        #expect(run.cuts.map { $0.cut } == [.segment(packets: 87)], "\(run.cuts.map { $0.cut })")
        #expect(run.final == [.segment(packets: 87), .segment(packets: 43)], "the rest, \(run.final), is a segment and the last")
    }

    /// The segments are a function of the presented end, not of the padding packets dropped
    /// after it: 129 packets kept are one segment (under 1.5 segments) whether 129 or 132 came
    /// (an encoder's padding reaching 130 must not cut 87 + 42), and 130 kept are 87 + 43.
    @Test func onDemandSegmentsDoNotDependOnThePaddingDropped() throws {
        for (kept, sizes) in [(129, [129]), (130, [87, 43])] {
            for count in kept...(kept + 3) {
                let (run, dropped) = try Self.run(count, segmentDuration: 2, mode: .onDemand, priming: 1024,
                                                  validLength: Int64(kept) * 1024 - 1024 - 100)
                #expect(dropped == count - kept && run.segmentSizes == sizes, "\(count) packets: \(run.segmentSizes), \(dropped) dropped")
            }
        }
    }

    /// The last segment takes up to half a segment more rather than leave a short one: 216
    /// packets are 87 + 129 (2.995 s), where 217 are 87 + 87 + 43.
    @Test func theLastSegmentTakesUpToHalfASegmentMore() throws {
        let cases: [(packets: Int, sizes: [Int])] = [
            (1, [1]), (86, [86]), (87, [87]), (129, [129]), (130, [87, 43]), (200, [87, 113]),
            (216, [87, 129]), (217, [87, 87, 43]), (862, [87, 87, 87, 87, 87, 87, 87, 87, 87, 79]),
        ]
        for (packets, sizes) in cases {
            let (run, _) = try Self.run(packets, segmentDuration: 2, mode: .onDemand)
            #expect(run.segmentSizes == sizes, "\(packets) packets: segments of \(run.segmentSizes) packets, not \(sizes)")
            let last = Double(run.segmentSizes.last ?? 0) * 1024 / 44_100
            #expect(last < 3, "\(packets) packets: the last segment lasts \(last) s, under 1.5 segments")
        }
    }

    /// Other segment durations and timescales: 6 s at 44.1 kHz is 259 packets (1.5 segments:
    /// 388, cut at 392); 1 s at 48 kHz is 47 (1.5: 71, cut at 75); 0.5 s at 48 kHz is 24 (1.5: 36).
    @Test func onDemandCutPointsForOtherDurations() throws {
        let six = try Self.run(1000, segmentDuration: 6, mode: .onDemand)
        #expect(six.0.cuts.map { $0.after } == [392, 651, 910], "6 s: \(six.0.cuts.map { $0.after })")
        #expect(six.0.segmentSizes == [259, 259, 259, 223], "6 s: \(six.0.segmentSizes)")
        let one = try Self.run(200, segmentDuration: 1, mode: .onDemand, timescale: 48_000)
        #expect(one.0.cuts.map { $0.after } == [75, 122, 169], "1 s: \(one.0.cuts.map { $0.after })")
        #expect(one.0.segmentSizes == [47, 47, 47, 59], "1 s: \(one.0.segmentSizes)")
        let half = try Self.run(100, segmentDuration: 0.5, mode: .onDemand, timescale: 48_000)
        #expect(half.0.segmentSizes == [24, 24, 24, 28], "0.5 s: \(half.0.segmentSizes)")
    }

    // MARK: Live

    /// Live, a segment as soon as one is long enough (87 packets for 2 s at 44.1 kHz), and the
    /// rest as one segment at the end, however short.
    @Test func liveCutsAsSoonAsASegmentIsLongEnough() throws {
        let (run, _) = try Self.run(200, segmentDuration: 2, mode: .live)
        #expect(run.cuts.map { $0.after } == [87, 174], "cuts after packets \(run.cuts.map { $0.after })")
        #expect(run.segmentSizes == [87, 87, 26], "segments of \(run.segmentSizes) packets")
        let exact = try Self.run(141, segmentDuration: 1, mode: .live, timescale: 48_000)
        #expect(exact.0.segmentSizes == [47, 47, 47], "a whole number of segments leaves none at the end: \(exact.0.segmentSizes)")
        #expect(exact.0.final.isEmpty, "nothing left: \(exact.0.final)")
    }

    // MARK: Low-latency HLS

    /// Parts of whole packets within the part target (0.5 s at 44.1 kHz: 21 packets, 0.476 s)
    /// and whole parts per segment (2 s: 4 parts), so that no segment is longer than 2 s.
    @Test func lowLatencyPartsAndWholePartsPerSegment() throws {
        let mode = HLSSegmentingPolicy.Mode.lowLatency(partDuration: 0.5)
        let policy = try HLSSegmentingPolicy(segmentDuration: 2, mode: mode, timescale: 44_100)
        #expect(policy.packetsPerPart(packetDuration: 1024) == 21, "21 packets per part")
        #expect(policy.partsPerSegment == 4, "4 parts per segment")
        let (run, _) = try Self.run(100, segmentDuration: 2, mode: mode)
        #expect(run.cuts.map { $0.after } == [21, 42, 63, 84, 84], "\(run.cuts.map { $0.after })")
        #expect(run.cuts.map { $0.cut } == [.part(packets: 21), .part(packets: 21), .part(packets: 21), .part(packets: 21), .closeSegment],
                "\(run.cuts.map { $0.cut })")
        // The 16 left: a last part, and the segment it makes.
        #expect(run.final == [.part(packets: 16), .closeSegment], "\(run.final)")
        #expect(run.segmentSizes == [84, 16], "\(run.segmentSizes)")
    }

    /// Parts per segment round down, with a tolerance for 0.6 ÷ 0.2 = 2.9999999999999996; a
    /// part target shorter than a packet still makes parts of one packet.
    @Test func lowLatencyPartCounts() throws {
        let thirds = try HLSSegmentingPolicy(segmentDuration: 0.6, mode: .lowLatency(partDuration: 0.2), timescale: 48_000)
        #expect(thirds.partsPerSegment == 3, "0.6 s of 0.2 s parts: \(String(describing: thirds.partsPerSegment))")
        #expect(thirds.packetsPerPart(packetDuration: 1024) == 9, "9 packets within 0.2 s at 48 kHz")
        let uneven = try HLSSegmentingPolicy(segmentDuration: 1, mode: .lowLatency(partDuration: 0.3), timescale: 44_100)
        #expect(uneven.partsPerSegment == 3, "1 s holds 3 whole parts of 0.3 s")
        let (run, _) = try Self.run(40, segmentDuration: 1, mode: .lowLatency(partDuration: 0.3))
        // 12 packets (0.279 s) a part, 3 parts a segment.
        #expect(run.segmentSizes == [36, 4], "\(run.segmentSizes)")
        let tiny = try HLSSegmentingPolicy(segmentDuration: 1, mode: .lowLatency(partDuration: 0.1), timescale: 8_000)
        #expect(tiny.packetsPerPart(packetDuration: 1024) == 1, "one packet a part when the target is shorter than a packet")
        // Nothing left and no open part: no segment at the end.
        let whole = try Self.run(84, segmentDuration: 2, mode: .lowLatency(partDuration: 0.5))
        #expect(whole.0.final.isEmpty, "\(whole.0.final)")
    }

    // MARK: The end

    /// Packets wholly after the last presented sample (`priming + validLength - 1`) are
    /// dropped; the one that holds it is kept. Counted from the first packet, those already
    /// cut included.
    @Test func packetsPastTheLastPresentedSampleAreDropped() throws {
        // 200 packets: 87 cut after the 130th, 113 waiting; the last sample in packet 150
        // (from 0): 64 of those waiting kept, 49 dropped, the 64 the last segment.
        let lastInPacket150 = Int64(151 * 1024 - 1024)
        let (run, dropped) = try Self.run(200, segmentDuration: 2, mode: .onDemand, priming: 1024, validLength: lastInPacket150)
        #expect(dropped == 49, "\(dropped) dropped")
        #expect(run.segmentSizes == [87, 64], "\(run.segmentSizes)")
        // The last sample the first of packet 150: still kept.
        let firstOf150 = Int64(150 * 1024 - 1024 + 1)
        #expect(try Self.run(200, segmentDuration: 2, mode: .onDemand, priming: 1024, validLength: firstOf150).dropped == 49, "the packet holding it is kept")
        // One sample less: packet 150 goes too.
        #expect(try Self.run(200, segmentDuration: 2, mode: .onDemand, priming: 1024, validLength: firstOf150 - 1).dropped == 50, "packet 150 is dropped")
    }

    /// Nothing is dropped when every packet holds presented samples, nor more than is waiting
    /// when the valid length ends in a segment already cut.
    @Test func droppingKeepsWhatIsPresentedAndNeverCutPackets() throws {
        let all = try Self.run(100, segmentDuration: 2, mode: .onDemand, priming: 2112, validLength: 100 * 1024 - 2112)
        #expect(all.dropped == 0, "\(all.dropped) dropped")
        #expect(all.0.segmentSizes == [100], "\(all.0.segmentSizes)")
        let early = try Self.run(140, segmentDuration: 2, mode: .onDemand, priming: 0, validLength: 10 * 1024)
        #expect(early.dropped == 53, "every waiting packet is dropped: \(early.dropped)")
        #expect(early.0.segmentSizes == [87], "\(early.0.segmentSizes)")
        // Low-latency: those past the end leave the last part shorter.
        let parts = try Self.run(100, segmentDuration: 2, mode: .lowLatency(partDuration: 0.5), priming: 1024, validLength: 90 * 1024)
        #expect(parts.dropped == 9, "\(parts.dropped) dropped")
        #expect(parts.0.final == [.part(packets: 7), .closeSegment], "\(parts.0.final)")
    }

    /// Durations outside 0.5–60 s, and part targets outside 0.1 s – the segment duration, are
    /// refused.
    @Test func durationsOutOfRangeAreRefused() {
        #expect(throws: PipelineError.self, "0.4 s segments") { try HLSSegmentingPolicy(segmentDuration: 0.4, mode: .onDemand, timescale: 44_100) }
        #expect(throws: PipelineError.self, "61 s segments") { try HLSSegmentingPolicy(segmentDuration: 61, mode: .live, timescale: 44_100) }
        #expect(throws: PipelineError.self, "parts longer than segments") {
            try HLSSegmentingPolicy(segmentDuration: 1, mode: .lowLatency(partDuration: 1.5), timescale: 44_100)
        }
        #expect(throws: PipelineError.self, "0.05 s parts") {
            try HLSSegmentingPolicy(segmentDuration: 1, mode: .lowLatency(partDuration: 0.05), timescale: 44_100)
        }
    }
}
