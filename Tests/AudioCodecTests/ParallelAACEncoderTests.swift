import AACBitstream
import AudioCodec
import Foundation
import MediaCore
import Testing

/// ``ParallelAACEncoder`` with small segments: many splices, lengths at and around segment
/// boundaries, more threads than segments. The stream it stitches has exactly the serial
/// encoder's packet count and timing, every splice joins compatible windows as far as the ICS
/// headers show, and it decodes to the input's length.
@Suite struct ParallelAACEncoderTests {
    static let rate = 48000

    /// Interleaved float stereo: a chirp with noise bursts (so the windows switch) on both
    /// channels.
    static func music(frames: Int) -> PCMBuffer {
        var generator = SystemRandomNumberGenerator()
        var samples: [Float] = []
        samples.reserveCapacity(frames * 2)
        for n in 0..<frames {
            let t = Double(n) / Double(rate)
            let burst = (t.truncatingRemainder(dividingBy: 0.23)) < 0.003 ? Double.random(in: -0.6...0.6, using: &generator) : 0
            samples.append(Float(0.3 * sin(2 * .pi * (200 * t + 300 * t * t)) + burst))
            samples.append(Float(0.25 * sin(2 * .pi * (330 * t + 150 * t * t)) + burst))
        }
        return PCMBuffer(format: PCMFormat(sampleRate: rate, channelCount: 2, sampleFormat: .float32),
                         bytes: samples.withUnsafeBytes { Array($0) })
    }

    static func encode(_ input: PCMBuffer, parallel: ParallelAACEncoder?, chunk: Int = 4096) throws -> [MediaSample] {
        var packets: [MediaSample] = []
        let bytesPerChunk = chunk * input.format.bytesPerFrame
        let serial = parallel == nil ? try AACEncoder(bitrate: 128_000) : nil
        for start in stride(from: 0, to: input.bytes.count, by: bytesPerChunk) {
            let piece = PCMBuffer(format: input.format, bytes: Array(input.bytes[start..<min(start + bytesPerChunk, input.bytes.count)]))
            packets += try parallel?.encode(piece) ?? serial!.transform(piece)
        }
        packets += try parallel?.flush() ?? serial!.flush()
        return packets
    }

    /// Lengths and thread counts: many segments; an exact multiple of the segment; a last
    /// segment as long as the post-roll; shorter than one segment; more threads than segments.
    static let cases: [StitchCase] = [
        StitchCase(frames: 48000 * 3 + 123, threads: 3),
        StitchCase(frames: 12 * 1024 * 6, threads: 2),
        StitchCase(frames: 12 * 1024 * 6 + 4 * 1024, threads: 2),
        StitchCase(frames: 5000, threads: 4),
        StitchCase(frames: 48000 * 2, threads: 8),
    ]

    @Test(arguments: cases)
    func stitchedStreamIsAsLongAndAsTimedAsTheSerialOne(_ item: StitchCase) throws {
        let (frames, threads) = (item.frames, item.threads)
        let input = Self.music(frames: frames)
        // Segments of 12 frames (0.256 s), pre-roll of 4 frames: many splices.
        let parallel = try ParallelAACEncoder(bitrate: 128_000, threads: threads, segmentSeconds: 12 * 1024 / 48000.0, preRollSeconds: 0)
        #expect(parallel.segmentFrameCount == 12 * 1024)
        let ours = try Self.encode(input, parallel: parallel)
        let serial = try Self.encode(input, parallel: nil)
        #expect(ours.count == serial.count, "\(ours.count) packets, serial \(serial.count)")
        #expect(ours.map(\.presentationTime) == serial.map(\.presentationTime))
        let padding = Int(Int64(ours.count) * 1024 - 1024 - Int64(frames))
        #expect(parallel.inputFrameCount == Int64(frames))
        #expect(parallel.padding == padding)
        let mismatched = parallel.splices.filter { !$0.compatible }
        #expect(mismatched.isEmpty, "\(mismatched)")
        let expectedSplices = max(0, (frames - 4 * 1024) / (12 * 1024))
        #expect(parallel.splices.count == expectedSplices || frames < 12 * 1024 + 4 * 1024, "\(parallel.splices.count) splices")
        for splice in parallel.splices {
            let index = Int(splice.packetIndex)
            let before = try #require(ICSInfo(firstChannelOf: ours[index - 1].data))
            let after = try #require(ICSInfo(firstChannelOf: ours[index].data))
            #expect(after.windowSequence.mayFollow(before.windowSequence), "splice at packet \(index)")
        }
        // Decoded with the edit list's trim: exactly the input's length.
        guard case .audio(let audio)? = ours.first?.format else {
            Issue.record("the packets carry no audio format")
            return
        }
        let config = try AudioSpecificConfig(bytes: audio.decoderConfiguration)
        let decoder = try AACDecoder(audioSpecificConfig: config, trim: .init(priming: 1024, validFrameCount: Int64(frames)))
        var bytes = 0
        for packet in ours { bytes += try decoder.decode(packet: packet.data).count }
        bytes += try decoder.flush().count
        #expect(bytes == frames * 2 * 2)
        // A stream of one segment is the serial stream.
        if frames <= 12 * 1024 + 4 * 1024 { #expect(ours.map(\.data) == serial.map(\.data)) }
    }

    /// A buffer that spans many segments, given at once, gives the packets of the same input in
    /// small buffers: a segment is complete before the next one waits for an encoder.
    @Test(.timeLimit(.minutes(15)), arguments: [1, 2, 8])
    func oneBufferOfManySegmentsIsEncodedAsSmallOnesAre(threads: Int) throws {
        let frames = 48000 * 4 + 777
        let input = Self.music(frames: frames)
        func encoder() throws -> ParallelAACEncoder {
            try ParallelAACEncoder(bitrate: 128_000, threads: threads, segmentSeconds: 12 * 1024 / 48000.0, preRollSeconds: 0)
        }
        let whole = try Self.encode(input, parallel: try encoder(), chunk: frames)
        let pieces = try Self.encode(input, parallel: try encoder())
        #expect(whole.count == pieces.count)
        #expect(whole.map(\.data) == pieces.map(\.data), "the same packets from one buffer as from 4096-frame ones")
        // Segments shorter than the pre-roll asked: it is cut to fit, and nothing waits for ever.
        let short = try ParallelAACEncoder(bitrate: 128_000, threads: threads, segmentSeconds: 10 * 1024 / 48000.0, preRollSeconds: 3)
        #expect(short.preRollPackets == 10 - 4 - 1, "a segment of 10 packets less 4 of post-roll and one")
        #expect(try Self.encode(input, parallel: short, chunk: frames).count == pieces.count)
    }

    @Test func windowSequencesFollowTheStandardsTransitions() {
        typealias W = ICSInfo.WindowSequence
        #expect(W.onlyLong.mayFollow(.onlyLong) && W.longStart.mayFollow(.onlyLong) && !W.eightShort.mayFollow(.onlyLong))
        #expect(W.eightShort.mayFollow(.longStart) && W.longStop.mayFollow(.eightShort) && !W.onlyLong.mayFollow(.eightShort))
        #expect(W.onlyLong.mayFollow(.longStop) && !W.longStop.mayFollow(.longStop))
    }
}

struct StitchCase: Sendable, CustomTestStringConvertible {
    var frames: Int
    var threads: Int
    var testDescription: String { "\(frames) frames, \(threads) threads" }
}

/// ``ICSInfo`` on ffmpeg's own frames: the fill element with the encoder ident is stepped over.
@Suite struct ICSInfoTests {
    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }

    @Test func readsTheFirstChannelsWindowAfterAFillElement() throws {
        // ffmpeg's first frame of a 440 Hz sine: FIL ("Lavc59.37.100"), then an SCE (short
        // windows: the sine starts abruptly); its fourth frame, one long window.
        let first = try #require(ICSInfo(firstChannelOf: Self.bytes("de02004c61766335392e33372e31303000025cad5baa5a12")))
        #expect(first.coversBothChannelsOfPair)
        let steady = try #require(ICSInfo(firstChannelOf: Self.bytes("00de36acd52d0d074542d1d074361d4bbe7fbfff4ff7ff6f")))
        #expect(steady.windowSequence == .onlyLong)
        // Its second frame: global_gain 177, then window_sequence 2 (EIGHT_SHORT).
        #expect(ICSInfo(firstChannelOf: Self.bytes("01629ad9993de2d54648c55caac5109b9599117ff8fc3ad3"))?.windowSequence == .eightShort)
        // A stereo frame: a CPE.
        #expect(ICSInfo(firstChannelOf: Self.bytes("21198ffffffffe0e567a91359ebfa7ffc5ffbff8ff4ee717")) != nil)
        // A block that starts with a program config element is not read.
        #expect(ICSInfo(firstChannelOf: [0xA0, 0x00, 0x00, 0x00]) == nil)
        #expect(ICSInfo(firstChannelOf: []) == nil)
    }
}
