import AACBitstream
import AudioCodec
import Foundation
import MediaCore
import Testing

/// Test signals made here, so the codec tests need no files.
enum Signal {
    /// A sine of `frequency` Hz at `amplitude` (0…1) as Float samples, per channel with a phase step.
    static func sine(frames: Int, channels: Int, rate: Int, frequency: Double = 1000, amplitude: Double = 0.5) -> [[Float]] {
        (0..<channels).map { channel in
            (0..<frames).map { Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / Double(rate) + Double(channel))) }
        }
    }

    /// Interleaved s16 little-endian bytes of planar floats (exactly representable: x·32768 integral).
    static func int16Interleaved(_ planes: [[Float]]) -> [UInt8] {
        var bytes: [UInt8] = []
        for index in planes[0].indices {
            for plane in planes {
                let value = Int16(clamping: Int((plane[index] * 32767).rounded()))
                bytes += [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
            }
        }
        return bytes
    }

    static func int16Samples(_ bytes: [UInt8]) -> [Int16] {
        stride(from: 0, to: bytes.count - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
    }

    /// Encodes interleaved bytes in chunks of the given frame counts (cycled).
    static func encode(_ bytes: [UInt8], format: PCMFormat, chunks: [Int], bitrate: Int = 96_000,
                       start: MediaTime? = nil) throws -> (encoder: AACEncoder, packets: [MediaSample]) {
        let encoder = try AACEncoder(bitrate: bitrate)
        var packets: [MediaSample] = []
        var offset = 0
        var chunk = 0
        while offset < bytes.count {
            let length = min(chunks[chunk % chunks.count] * format.bytesPerFrame, bytes.count - offset)
            let sample = MediaSample(data: Array(bytes[offset..<(offset + length)]),
                                     presentationTime: start ?? .zero, duration: .zero, format: .pcm(format))
            packets += try encoder.encode(sample)
            offset += length
            chunk += 1
        }
        packets += try encoder.flush()
        return (encoder, packets)
    }
}

@Suite struct AACEncoderTests {
    static let stereo = PCMFormat(sampleRate: 44100, channelCount: 2, sampleFormat: .int16)

    @Test func packetsDoNotDependOnHowTheInputIsCut() throws {
        let pcm = Signal.int16Interleaved(Signal.sine(frames: 10_000, channels: 2, rate: 44100))
        let whole = try Signal.encode(pcm, format: Self.stereo, chunks: [10_000])
        let pieces = try Signal.encode(pcm, format: Self.stereo, chunks: [1, 17, 1023, 1024, 1025, 4096, 333])
        #expect(whole.packets.map(\.data) == pieces.packets.map(\.data))
        #expect(whole.packets.map(\.presentationTime) == pieces.packets.map(\.presentationTime))
    }

    @Test func everyPacketHasItsOwnTimeAndTheEncoderKnowsItsDelay() throws {
        let frames = 10_000   // not a multiple of 1024
        let pcm = Signal.int16Interleaved(Signal.sine(frames: frames, channels: 2, rate: 44100))
        let start = MediaTime(value: 88200, timescale: 44100)   // input starts at 2 s
        let (encoder, packets) = try Signal.encode(pcm, format: Self.stereo, chunks: [4410], start: start)
        #expect(encoder.priming == 1024)
        let padding = try #require(encoder.padding)
        #expect(packets.count * 1024 == encoder.priming + frames + padding)
        #expect((0..<1024).contains(padding))
        #expect(encoder.inputFrameCount == Int64(frames))
        for (index, packet) in packets.enumerated() {
            #expect(packet.presentationTime == MediaTime(value: 88200 + Int64(index * 1024 - 1024), timescale: 44100))
            #expect(packet.duration == MediaTime(value: 1024, timescale: 44100))
            #expect(packet.isSync)
        }
        // libavcodec's extradata: the 2-byte ASC and the explicit no-SBR extension.
        #expect(try encoder.audioSpecificConfig?.serialized() == [0x12, 0x10, 0x56, 0xE5, 0x00])
        guard case .audio(let format)? = encoder.formatDescription else { Issue.record("no format"); return }
        #expect(format.codec == .aac && format.sampleRate == 44100 && format.channelCount == 2 && format.framesPerPacket == 1024)
    }

    @Test func everyInputLayoutGivesTheSamePackets() throws {
        let planes = Signal.sine(frames: 5000, channels: 2, rate: 48000)
        let s16 = Signal.int16Interleaved(planes)
        let values = Signal.int16Samples(s16)
        let reference = try Signal.encode(s16, format: PCMFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .int16),
                                          chunks: [700]).packets.map(\.data)
        // The same values as s32 (x << 16), interleaved f32 (x / 32768) and planar f32.
        let s32 = values.flatMap { value -> [UInt8] in
            let wide = Int32(value) << 16
            return (0..<4).map { UInt8(truncatingIfNeeded: wide >> ($0 * 8)) }
        }
        let f32 = values.flatMap { value -> [UInt8] in
            let bits = (Float(value) / 32768).bitPattern
            return (0..<4).map { UInt8(truncatingIfNeeded: bits >> ($0 * 8)) }
        }
        var planar: [UInt8] = []
        for channel in 0..<2 {
            for index in stride(from: channel, to: values.count, by: 2) {
                let bits = (Float(values[index]) / 32768).bitPattern
                planar += (0..<4).map { UInt8(truncatingIfNeeded: bits >> ($0 * 8)) }
            }
        }
        #expect(try Signal.encode(s32, format: PCMFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .int32),
                                  chunks: [700]).packets.map(\.data) == reference)
        #expect(try Signal.encode(f32, format: PCMFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .float32),
                                  chunks: [700]).packets.map(\.data) == reference)
        // Planar input arrives in one buffer (the planes are whole).
        #expect(try Signal.encode(planar, format: PCMFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .float32, isInterleaved: false),
                                  chunks: [5000]).packets.map(\.data) == reference)
    }

    @Test func unsupportedInputIsAnErrorBeforeAnyWork() throws {
        #expect(throws: CodecError.unsupportedSampleRate(44000, supported: AACEncoder.supportedSampleRates)) {
            try AACEncoder(format: PCMFormat(sampleRate: 44000, channelCount: 2, sampleFormat: .int16))
        }
        #expect(throws: CodecError.unsupportedChannelCount(9, supported: AACEncoder.supportedChannelCounts)) {
            try AACEncoder(format: PCMFormat(sampleRate: 44100, channelCount: 9, sampleFormat: .int16))
        }
        #expect(throws: CodecError.self) { try AACEncoder(bitrate: 0) }
        // Below 8 kb/s: the range named is the one of the input's rate and channels.
        #expect(throws: CodecError.bitrateOutOfRange(1000, allowed: 8000...AACEncoder.maximumBitrate(channels: 2, sampleRate: 48000))) {
            try AACEncoder(format: PCMFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .int16), bitrate: 1000)
        }
        // A bitrate above any AAC (9999k) is refused at open with the range of the input, not
        // the range of 8 channels at 96 kHz.
        let lazy = try AACEncoder(bitrate: 9_999_000)
        #expect(throws: CodecError.bitrateOutOfRange(9_999_000, allowed: 8000...132_300)) {
            try lazy.encode(MediaSample(data: [0, 0], presentationTime: .zero, duration: .zero,
                                        format: .pcm(PCMFormat(sampleRate: 22050, channelCount: 1, sampleFormat: .int16))))
        }
        // 320 kb/s is more than AAC can carry for mono at 8 kHz (48 kb/s).
        #expect(throws: CodecError.bitrateOutOfRange(320_000, allowed: 8000...48000)) {
            try AACEncoder(format: PCMFormat(sampleRate: 8000, channelCount: 1, sampleFormat: .int16), bitrate: 320_000)
        }
        let encoder = try AACEncoder(format: Self.stereo)
        let mono = MediaSample(data: [0, 0], presentationTime: .zero, duration: .zero,
                               format: .pcm(PCMFormat(sampleRate: 44100, channelCount: 1, sampleFormat: .int16)))
        #expect(throws: CodecError.self) { try encoder.encode(mono) }
        let aac = MediaSample(data: [1], presentationTime: .zero, duration: .zero, format: encoder.formatDescription!)
        #expect(throws: CodecError.self) { try encoder.encode(aac) }
        let ragged = MediaSample(data: [0, 0, 0], presentationTime: .zero, duration: .zero, format: .pcm(Self.stereo))
        #expect(throws: CodecError.self) { try encoder.encode(ragged) }
        _ = try encoder.flush()
        let late = MediaSample(data: [0, 0, 0, 0], presentationTime: .zero, duration: .zero, format: .pcm(Self.stereo))
        #expect(throws: CodecError.self) { try encoder.encode(late) }
    }

    @Test(arguments: [(8000, 1), (22050, 2), (44100, 6), (96000, 2), (48000, 8)])
    func opensAtEveryRateAndLayout(rate: Int, channels: Int) throws {
        let pcm = Signal.int16Interleaved(Signal.sine(frames: 3000, channels: channels, rate: rate, frequency: Double(rate) / 20))
        let format = PCMFormat(sampleRate: rate, channelCount: channels, sampleFormat: .int16)
        let (encoder, packets) = try Signal.encode(pcm, format: format, chunks: [1000], bitrate: min(96_000, AACEncoder.maximumBitrate(channels: channels, sampleRate: rate)))
        #expect(packets.count == (1024 + 3000 + 1023) / 1024)
        #expect(encoder.audioSpecificConfig?.samplingFrequency == rate)
        #expect(encoder.audioSpecificConfig?.channelCount == channels)
    }
}
