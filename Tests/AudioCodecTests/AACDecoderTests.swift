import AACBitstream
import AudioCodec
import Foundation
import MediaCore
import Testing

@Suite struct AACDecoderTests {
    /// Goertzel power of `frequency` relative to the signal's total power.
    static func toneShare(_ samples: [Double], rate: Int, frequency: Double) -> Double {
        let k = 2 * cos(2 * Double.pi * frequency / Double(rate))
        var (s1, s2) = (0.0, 0.0)
        for x in samples { (s1, s2) = (x + k * s1 - s2, s1) }
        let power = s1 * s1 + s2 * s2 - k * s1 * s2
        let total = samples.reduce(0) { $0 + $1 * $1 }
        return 2 * power / (Double(samples.count) * total)
    }

    static func rms(_ samples: [Double]) -> Double {
        (samples.reduce(0) { $0 + $1 * $1 } / Double(samples.count)).squareRoot()
    }

    @Test(arguments: [4096, 10_000, 44_100])
    func trimmedDecodeHasExactlyTheInputLengthAndLinesUp(frames: Int) throws {
        let format = PCMFormat(sampleRate: 44100, channelCount: 2, sampleFormat: .int16)
        let input = Signal.sine(frames: frames, channels: 2, rate: 44100, frequency: 1000, amplitude: 0.5)
        let (encoder, packets) = try Signal.encode(Signal.int16Interleaved(input), format: format, chunks: [4410], bitrate: 128_000)
        let decoder = try AACDecoder(audioSpecificConfig: encoder.audioSpecificConfig,
                                     trim: .init(priming: encoder.priming, validFrameCount: Int64(frames)))
        var pcm: [UInt8] = []
        for packet in packets { pcm += try decoder.decode(packet: packet.data) }
        pcm += try decoder.flush()
        #expect(decoder.outputFormat == format)
        #expect(pcm.count == frames * 4, "exactly the input's length")
        #expect(decoder.deliveredFrameCount == Int64(frames))

        // Left channel: the 1 kHz tone at the input's level, lined up (lag 0 beats lags ±1…±20).
        let left = Signal.int16Samples(pcm).enumerated().filter { $0.offset % 2 == 0 }.map { Double($0.element) / 32768 }
        let reference = input[0].map(Double.init)
        let body = 2048..<(frames - 1024)
        #expect(Self.toneShare(Array(left[body]), rate: 44100, frequency: 1000) > 0.99)
        let level = 20 * log10(Self.rms(Array(left[body])) / Self.rms(Array(reference[body])))
        #expect(abs(level) < 0.5, "level differs by \(level) dB")
        func correlation(_ lag: Int) -> Double {
            body.reduce(0) { $0 + left[$1] * reference[$1 + lag] }
        }
        let atZero = correlation(0)
        for lag in [-20, -5, -2, -1, 1, 2, 5, 20] { #expect(atZero > correlation(lag)) }
    }

    /// A damaged packet stepped over, or an empty one, leaves a frame of silence: the decode
    /// keeps the input's length and what follows keeps its time (it played a frame early).
    @Test(arguments: [false, true])
    func aSkippedPacketLeavesAFrameOfSilence(empty: Bool) throws {
        let frames = 44_100
        let format = PCMFormat(sampleRate: 44100, channelCount: 2, sampleFormat: .int16)
        let input = Signal.sine(frames: frames, channels: 2, rate: 44100, frequency: 1000, amplitude: 0.5)
        let (encoder, packets) = try Signal.encode(Signal.int16Interleaved(input), format: format, chunks: [4410], bitrate: 128_000)
        func decode(damaging index: Int?) throws -> (pcm: [Int16], damage: [DamageEvent]) {
            let decoder = try AACDecoder(audioSpecificConfig: encoder.audioSpecificConfig,
                                         trim: .init(priming: encoder.priming, validFrameCount: Int64(frames)))
            decoder.skipsUndecodablePackets = true
            var pcm: [UInt8] = []
            for (number, packet) in packets.enumerated() {
                // A frame of another element type (an ID_END at once, then junk): libavcodec refuses it.
                let bytes: [UInt8] = number == index ? (empty ? [] : [0xFF, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 0xA5, count: 60))
                                                     : Array(packet.data)
                pcm += try decoder.decode(packet: bytes)
            }
            pcm += try decoder.flush()
            return (Signal.int16Samples(pcm), decoder.takeDamage())
        }
        let whole = try decode(damaging: nil).pcm
        let damaged = 20
        let (pcm, damage) = try decode(damaging: damaged)
        #expect(pcm.count == whole.count, "the decode keeps the input's length")
        #expect(empty ? damage.isEmpty : damage.count == 1, "\(damage.map(\.message))")
        // The damaged packet's frame (less the priming) is silent; two frames on, the decode is the whole one's again.
        let start = (damaged * 1024 - encoder.priming) * 2
        #expect(pcm[start..<(start + 2048)].allSatisfy { $0 == 0 })
        let later = (start + 3 * 2048)..<(start + 6 * 2048)
        let difference = zip(pcm[later], whole[later]).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(difference <= 2, "what follows keeps its time: off by up to \(difference)")
    }

    @Test func untrimmedDecodeKeepsPrimingAndPadding() throws {
        let format = PCMFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .int16)
        let (encoder, packets) = try Signal.encode(Signal.int16Interleaved(Signal.sine(frames: 5000, channels: 1, rate: 48000)),
                                                   format: format, chunks: [5000])
        let decoder = try AACDecoder(audioSpecificConfig: encoder.audioSpecificConfig, outputSampleFormat: .float32)
        var pcm: [UInt8] = []
        for packet in packets { pcm += try decoder.decode(packet: packet.data) }
        pcm += try decoder.flush()
        #expect(pcm.count == packets.count * 1024 * 4)
        #expect(decoder.outputFormat?.sampleFormat == .float32)
    }

    @Test func decodesADTSFramesWithoutAConfig() throws {
        let format = PCMFormat(sampleRate: 22050, channelCount: 2, sampleFormat: .int16)
        let (encoder, packets) = try Signal.encode(Signal.int16Interleaved(Signal.sine(frames: 8000, channels: 2, rate: 22050)),
                                                   format: format, chunks: [8000])
        var writer = try ADTSWriter(sink: ArrayByteSink(), audioSpecificConfig: try #require(encoder.audioSpecificConfig))
        for packet in packets { try writer.write(rawDataBlock: packet.data) }
        var reader = ADTSReader(source: ArrayByteSource(writer.sink.bytes))
        let decoder = try AACDecoder(audioSpecificConfig: nil)
        var frames = 0
        while let frame = try reader.nextFrame() { frames += try decoder.decode(packet: frame.bytes).count / 4 }
        frames += try decoder.flush().count / 4
        #expect(frames == packets.count * 1024)
        #expect(decoder.outputFormat?.sampleRate == 22050 && decoder.outputFormat?.channelCount == 2)
    }

    @Test func garbageIsATypedErrorNotACrash() throws {
        let decoder = try AACDecoder(audioSpecificConfig: try AudioSpecificConfig(bytes: [0x12, 0x10]))
        var failures = 0
        var generator = SystemRandomNumberGenerator()
        for length in [1, 7, 100, 2000] {
            let junk = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            do { _ = try decoder.decode(packet: junk) } catch { failures += 1 }
        }
        #expect(failures > 0)
        #expect(throws: CodecError.self) { try AACDecoder(audioSpecificConfig: nil, outputSampleFormat: .uint8) }
    }
}

@Suite struct UndecodableCodecTests {
    @Test func xHEAACIsRefusedByNameNotByAnFFmpegErrorNumber() throws {
        // 11111 001010 = object type 42 (USAC), 48000 Hz, mono, then its UsacConfig.
        let config = try AudioSpecificConfig(bytes: [0xF9, 0x46, 0x20, 0xAB, 0xCD])
        do {
            _ = try AACDecoder(audioSpecificConfig: config)
            Issue.record("libavcodec 5.1 has no USAC decoder, yet a decoder was made")
        } catch {
            guard case .undecodable(let codec, let profile, let reason) = error else { Issue.record("\(error)"); return }
            #expect(codec == "USAC, audio object type 42" && profile == "xHE-AAC")
            #expect(reason.contains("has no USAC decoder") && reason.contains("libavcodec"), "\(reason)")
            #expect(error.description.hasPrefix("xHE-AAC (USAC, audio object type 42) cannot be decoded: "), "\(error)")
            #expect(!error.description.contains("FFmpeg error"))
        }
    }

    @Test(arguments: [
        ([0xF8, 0x88, 0x40] as [UInt8], "ALS (audio object type 36) cannot be decoded"),       // 11111 000100, 44100 Hz, stereo
        ([0x9A, 0x10, 0x00] as [UInt8], "ER AAC LTP (audio object type 19) cannot be decoded"), // 10011, 44100 Hz, stereo, GA, epConfig 0
        ([0x42, 0x10] as [UInt8], "CELP (audio object type 8) cannot be decoded"),
    ])
    func otherObjectTypesLibavcodecCannotDecodeAreNamed(bytes: [UInt8], expected: String) throws {
        let config = try AudioSpecificConfig(bytes: bytes)
        #expect(AACDecoder.undecodable(config) != nil)
        #expect(throws: CodecError.self) { try AACDecoder(audioSpecificConfig: config) }
        do { _ = try AACDecoder(audioSpecificConfig: config) } catch {
            #expect(error.description.hasPrefix(expected), "\(error)")
        }
    }

    @Test func theObjectTypesLibavcodecDecodesAreNotRefused() throws {
        for type in [AudioObjectType.aacMain, .aacLC, .aacSSR, .aacLTP] {
            let config = try AudioSpecificConfig(objectType: type, sampleRate: 44100, channelCount: 2)
            #expect(AACDecoder.undecodable(config) == nil, "\(type)")
            _ = try AACDecoder(audioSpecificConfig: config)
        }
    }
}
