import Foundation
import KeyFrameKit
import SystemPackage
import Testing

/// RFC 9639 9.1.6: only a FLAC stream's last block may be shorter than STREAMINFO's least block
/// size (16 at the least). Most decoders take a short block in the middle, some refuse it, so
/// `validate` says where one is.
@Suite struct FLACBlockSizeTests {
    /// FLAC frames of `frames` samples of a mono tone, from an encoder of their own (so the
    /// last is as short as `frames` asks), numbered by sample from `first`.
    static func frames(_ frames: Int, from first: Int64, format: PCMFormat) throws -> (frames: [MediaSample], stream: EncodedAudioFormat) {
        var encoder = try AudioCodecRegistry.standard.encoder(for: .flac, settings: .init(bitrate: 0, format: format))
        let tone = CodecRegistryTests.tone(frames: frames, rate: format.sampleRate)
        let packets = try encoder.transform(PCMBuffer(format: format, bytes: tone)) + encoder.finish()
        var number = first
        var renumbered: [MediaSample] = []
        var stream: EncodedAudioFormat?
        for var packet in packets {
            var header = try #require(FLACFrameHeader(packet.data, at: 0))
            header.isVariableBlockSize = true
            header.codedNumber = UInt64(number)
            packet.data = try #require(FLACFrame.renumbered(packet.data, as: header))
            number += Int64(header.blockSize)
            if case .audio(let described) = packet.format { stream = described }
            renumbered.append(packet)
        }
        return (renumbered, try #require(stream))
    }

    /// Writes `pieces` of frames back to back as one native FLAC stream and validates it.
    static func validate(_ pieces: [Int], in directory: URL) throws -> [ValidationFinding] {
        let format = PCMFormat(sampleRate: 44100, channelCount: 1, sampleFormat: .int16)
        let path = FilePath(directory.appendingPathComponent("blocks-\(pieces.map(String.init).joined(separator: "-")).flac").path)
        var output = try FLACFileOutput(path: path)
        var written: Int64 = 0
        var sizes: [Int] = []
        var stream: EncodedAudioFormat?
        for piece in pieces {
            let made = try frames(piece, from: written, format: format)
            stream = stream ?? made.stream
            for frame in made.frames {
                try output.write(frame)
                sizes.append(Int(frame.duration.value))
                written += frame.duration.value
            }
        }
        var info = try FLACStreamInfo(bytes: try #require(stream).decoderConfiguration)
        let middle = sizes.dropLast()
        info.minimumBlockSize = max(16, middle.min() ?? 16)
        info.maximumBlockSize = max(info.minimumBlockSize, sizes.max() ?? 16)
        info.totalSamples = written
        info.md5 = Array(repeating: 0, count: 16)
        var final = try #require(stream)
        final.decoderConfiguration = info.bytes
        try output.receive(.codecConfiguration(final))
        try output.finish()
        return try FLACFileDecoder.findings(for: path)
    }

    @Test func aShortBlockInTheMiddleIsAnErrorAndAShortLastBlockIsNot() throws {
        let directory = try CodecRegistryTests.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // 4,104 samples: a block of 4,096, then one of 8, then 4,096 more.
        let short = try Self.validate([4104, 4096], in: directory).filter { $0.rule == "block size" }
        #expect(short.count == 1, "\(short)")
        #expect(short.first?.severity == .error && short.first?.location == "frame at sample 4096" && short.first?.found == "8", "\(short)")
        // The same 8 samples last: the stream's last block may be short.
        let last = try Self.validate([4096, 4104], in: directory)
        #expect(last.allSatisfy { $0.rule != "block size" }, "\(last)")
    }
}
