import Foundation
import KeyFrameKit
@testable import MediaStreaming
import SystemPackage
import Testing

/// Issue 23, item 1: the packet that holds the last presented sample lasts only up to it (its
/// `trun` sample duration is the priming plus the valid length less every earlier packet's, as
/// FFmpeg writes it), so that the segments, `EXTINF` and the parts' `DURATION` add up
/// to the priming plus the valid length. VOD, live (the newest packet held back until the next
/// comes, so that the end can still shorten it) and low-latency, without a codec: packets of
/// 1024 samples at 44.1 kHz into ``HLSSegmentOutput``.
@Suite struct HLSTailTests {
    static let format = FormatDescription.audio(EncodedAudioFormat(codec: .aac, sampleRate: 44100, channelCount: 2, framesPerPacket: 1024,
                                                                   decoderConfiguration: [0x12, 0x10]))

    static func packet(_ index: Int) -> MediaSample {
        MediaSample(data: [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 50 + index % 5),
                    presentationTime: MediaTime(value: Int64(index) * 1024, timescale: 44100),
                    duration: MediaTime(value: 1024, timescale: 44100), format: format)
    }

    /// `count` packets into a rendition, the priming (1024) told first and `valid` (when given)
    /// after the last packet, as an encoder tells them; the finished output, in `directory`.
    static func package(_ count: Int, valid: Int64?, live: HLSSegmentOutput.Live? = nil, segmentDuration: Double = 1,
                        in directory: URL) throws -> HLSSegmentOutput {
        var sink = try HLSSegmentOutput(directory: FilePath(directory.path), segmentDuration: segmentDuration,
                                        live: live)
        try sink.receive(.gapless(GaplessInfo(priming: 1024)))
        for index in 0..<count { try sink.write(packet(index)) }
        if let valid { try sink.receive(.gapless(GaplessInfo(priming: 1024, validLength: valid))) }
        try sink.finish()
        return sink
    }

    static func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("hls-tail-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The segments add up to the priming plus the valid length; every segment but the last is
    /// whole frames; the playlist's `EXTINF`s say the same durations (a live window lists the
    /// last ones).
    static func expectEnds(_ sink: HLSSegmentOutput, at end: Int64, lastSegmentFrames: Int64? = nil, _ what: String,
                           sourceLocation: SourceLocation = #_sourceLocation) {
        let durations = sink.segments.map(\.duration)
        #expect(durations.reduce(0, +) == end, "\(what): segments \(durations) add up to \(durations.reduce(0, +)), not \(end)",
                sourceLocation: sourceLocation)
        #expect(durations.dropLast().allSatisfy { $0 % 1024 == 0 }, "\(what): whole frames before the last segment: \(durations)",
                sourceLocation: sourceLocation)
        if let lastSegmentFrames {
            #expect(durations.last == lastSegmentFrames, "\(what): the last segment lasts \(durations.last ?? -1)", sourceLocation: sourceLocation)
        }
        let listed = sink.playlist?.segments.map(\.duration) ?? []
        #expect(!listed.isEmpty && zip(listed, durations.suffix(listed.count)).allSatisfy { abs($0 - Double($1) / 44100) < 1e-9 },
                "\(what): EXTINF \(listed)", sourceLocation: sourceLocation)
    }

    @Test func onDemandTheLastPacketEndsAtTheValidLength() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        // 100 packets: 102 400 samples, priming 1024, 300 of padding: the last packet lasts 724.
        let valid = Int64(100 * 1024 - 1024 - 300)
        let sink = try Self.package(100, valid: valid, in: directory.appendingPathComponent("a"))
        Self.expectEnds(sink, at: 1024 + valid, "VOD")
        let segments: [Int64] = [44 * 1024, 56 * 1024 - 300]
        #expect(sink.segments.map(\.duration) == segments, "\(sink.segments.map(\.duration))")
        #expect(sink.validLength == valid && sink.priming == 1024)
        // A valid length that fills the last packet: nothing shortened.
        let whole = try Self.package(100, valid: 99 * 1024, in: directory.appendingPathComponent("b"))
        Self.expectEnds(whole, at: 100 * 1024, "VOD, a whole last packet")
        // No valid length told: nothing shortened either.
        let untold = try Self.package(100, valid: nil, in: directory.appendingPathComponent("c"))
        Self.expectEnds(untold, at: 100 * 1024, "VOD, no valid length")
        // A packet wholly past the end is dropped and the one before it shortened: 1 sample.
        let extra = try Self.package(100, valid: 98 * 1024 + 1 - 1024, in: directory.appendingPathComponent("d"))
        Self.expectEnds(extra, at: 98 * 1024 + 1, "VOD, a packet past the end")
        let shortened: [Int64] = [44 * 1024, 54 * 1024 + 1]
        #expect(extra.segments.map(\.duration) == shortened, "\(extra.segments.map(\.duration))")
    }

    @Test func liveHoldsTheNewestPacketSoThatTheEndCanShortenIt() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        // 1-s live segments are cut at 44 packets: 130 packets are 44 + 44 + 42, the last one
        // holding the end (valid length 130·1024 − 1024 − 1000: 24 samples of the last packet).
        let valid = Int64(130 * 1024 - 1024 - 1000)
        let sink = try Self.package(130, valid: valid, live: HLSSegmentOutput.Live(), in: directory.appendingPathComponent("a"))
        Self.expectEnds(sink, at: 1024 + valid, lastSegmentFrames: 41 * 1024 + 24, "live")
        #expect(sink.segments.count == 3 && sink.playlist?.isEnded == true && sink.playlist?.playlistType == "EVENT", "\(sink.segments)")
        // 132 packets: the third segment is cut only when the end comes (the 132nd was held).
        let exact = try Self.package(132, valid: 132 * 1024 - 1024 - 10, live: HLSSegmentOutput.Live(), in: directory.appendingPathComponent("b"))
        Self.expectEnds(exact, at: 132 * 1024 - 10, lastSegmentFrames: 44 * 1024 - 10, "live, the end on a segment boundary")
        // A sliding window lists the last segments; the sum over all of them still ends there.
        let window = try Self.package(300, valid: 300 * 1024 - 1024 - 5, live: HLSSegmentOutput.Live(window: 3),
                                      in: directory.appendingPathComponent("c"))
        Self.expectEnds(window, at: 300 * 1024 - 5, "live window")
    }

    @Test func lowLatencyTheLastPartEndsAtTheValidLength() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        // 0.5-s parts of 21 packets, 2-s segments of 4 parts: 100 packets are 84 + 16.
        let valid = Int64(100 * 1024 - 1024 - 700)
        let sink = try Self.package(100, valid: valid, live: HLSSegmentOutput.Live(partDuration: 0.5), segmentDuration: 2,
                                    in: directory.appendingPathComponent("a"))
        Self.expectEnds(sink, at: 1024 + valid, lastSegmentFrames: 16 * 1024 - 700, "low-latency")
        let parts = sink.segments.last?.parts.map(\.duration) ?? []
        #expect(parts.count == 1 && abs((parts.last ?? 0) - Double(16 * 1024 - 700) / 44100) < 1e-9, "the last part: \(parts)")
        let all = sink.segments.flatMap(\.parts).map(\.duration).reduce(0, +)
        #expect(abs(all - Double(1024 + valid) / 44100) < 1e-9, "the parts add up to \(all) s")
        // The end in the last part's first packet, the part boundary just before it.
        let boundary = try Self.package(85, valid: 84 * 1024 + 1 - 1024, live: HLSSegmentOutput.Live(partDuration: 0.5), segmentDuration: 2,
                                        in: directory.appendingPathComponent("b"))
        Self.expectEnds(boundary, at: 84 * 1024 + 1, lastSegmentFrames: 1, "low-latency, one sample in the last part")
    }

    /// The policy alone: the last packet added without a cut, then shortened, ends the last cut.
    @Test func thePolicyShortensTheLastWaitingPacket() throws {
        var policy = try HLSSegmentingPolicy(segmentDuration: 1, mode: .live, timescale: 44_100)
        var cuts: [HLSSegmentingPolicy.Cut] = []
        for _ in 0..<50 { cuts += policy.add(1024) }
        policy.addLast(1024)
        #expect(cuts == [.segment(packets: 44)] && policy.waiting.count == 7, "\(cuts), \(policy.waiting.count) waiting")
        policy.shortenLast(to: 100)
        #expect(policy.waiting.last == 100 && policy.waitingDuration == 6 * 1024 + 100)
        #expect(policy.finalCuts() == [.segment(packets: 7)] && policy.waitingDuration == 0)
    }
}
