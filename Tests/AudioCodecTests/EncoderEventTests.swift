import AudioCodec
import MediaCore
import Testing

/// Issue 22: an encoder tells its gapless numbers down the stream: the priming before its first
/// packet, the valid length and padding after its last. A muxer learns them there, never from
/// the encoder object.
@Suite struct EncoderEventTests {
    /// One entry per element or event, in the order the sink got them.
    struct OrderSink: PacketSink {
        var log: [String] = []
        mutating func write(_ packet: MediaSample) throws(CodecError) { log.append("packet") }
        mutating func receive(_ event: StreamEvent) throws(CodecError) {
            if case .gapless(let info) = event { log.append("gapless \(info.priming) \(info.validLength.map(String.init) ?? "-") \(info.padding.map(String.init) ?? "-")") }
        }
        mutating func finish() throws(CodecError) { log.append("finish") }
        mutating func cancel() {}
    }

    /// 0.1 s of float stereo silence-free noise at 48 kHz, in buffers of 1000 frames.
    struct NoiseSource: PCMSource {
        var remaining: Int
        var pcmFormat: PCMFormat? { PCMFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .float32) }
        mutating func next() -> PCMBuffer? {
            guard remaining > 0 else { return nil }
            let frames = min(1000, remaining)
            remaining -= frames
            let samples = (0..<(frames * 2)).map { Float(($0 * 7919) % 2000) / 4000 - 0.25 }
            return PCMBuffer(format: pcmFormat!, bytes: samples.withUnsafeBytes { Array($0) })
        }
    }

    @Test(arguments: [false, true])
    func theEncoderTellsPrimingFirstAndTheLengthLast(parallel: Bool) throws {
        let frames = 4800
        var sink = OrderSink()
        if parallel {
            var source = NoiseSource(remaining: frames).transformed(by: try ParallelAACEncoder(bitrate: 128_000, threads: 2))
            try Pump.run(from: &source, into: &sink)
        } else {
            var source = NoiseSource(remaining: frames).transformed(by: try AACEncoder(bitrate: 128_000))
            try Pump.run(from: &source, into: &sink)
        }
        let packets = sink.log.filter { $0 == "packet" }.count
        let padding = packets * 1024 - 1024 - frames
        #expect(sink.log.first == "gapless 1024 - -", "the priming comes before the first packet: \(sink.log.prefix(3))")
        #expect(Array(sink.log.suffix(2)) == ["gapless 1024 \(frames) \(padding)", "finish"], "the length comes after the last packet")
        #expect(sink.log.filter { $0.hasPrefix("gapless") }.count == 2)
    }

    @Test func anUpstreamsGaplessNumbersStopAtTheEncoder() throws {
        var sink = OrderSink()
        var source = AnnouncingSource(NoiseSource(remaining: 2048), announcing: [.gapless(GaplessInfo(priming: 7, validLength: 9))])
            .transformed(by: try AACEncoder(bitrate: 96_000))
        try Pump.run(from: &source, into: &sink)
        #expect(!sink.log.contains { $0.hasPrefix("gapless 7") }, "\(sink.log)")
    }
}
