import AudioBitstreams
import AudioCodec
import Foundation
import MediaCore
import SystemPackage
import TestSupport
import Testing

/// Issue 20: native FLAC through libFLAC (``FLACFileDecoder``), for the true 32-bit FLAC of
/// which FFmpeg 5.1 decodes no frame. Inputs are made by the `flac` tool from a WAV ffmpeg
/// writes; the referee is that WAV's own samples, as ffmpeg writes them left-justified to
/// signed 32-bit (`-f s32le`).
@Suite(.blocking) struct FLACFileDecoderTests {
    struct Source: Sendable, CustomTestStringConvertible {
        var bits: Int
        var rate: Int
        var channels: Int
        var frames: Int
        var testDescription: String { "\(bits)-bit, \(rate) Hz, \(channels) ch" }
        /// ffmpeg's PCM codec for a WAV of this depth.
        var codec: String { "pcm_s\(bits)le" }
    }

    static let sources = [
        Source(bits: 32, rate: 48000, channels: 2, frames: 144_000 + 777),
        Source(bits: 32, rate: 44100, channels: 1, frames: 54_441),
        Source(bits: 24, rate: 96000, channels: 2, frames: 50_000),
        Source(bits: 16, rate: 44100, channels: 2, frames: 30_001),
    ]

    /// A scratch directory for one test.
    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("keyframe-flac-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func ffmpeg(_ arguments: [String]) throws {
        try Subprocess.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y"] + arguments)
    }

    /// A WAV of `source` (a chirp plus noise near full scale, so that every bit of a 32-bit
    /// sample is used), the FLAC the `flac` tool makes of it, and the WAV's samples as signed
    /// 32-bit little-endian bytes.
    static func make(_ source: Source, in directory: URL) throws -> (flac: String, reference: [UInt8]) {
        let wav = directory.appendingPathComponent("source.wav").path
        let left = "0.6*sin(2*PI*(220*t+900*t*t))+0.39*(2*random(0)-1)"
        let right = "0.5*sin(2*PI*(330*t+700*t*t))+0.49*(2*random(1)-1)"
        let expression = source.channels == 1 ? left : left + "|" + right
        let seconds = Double(source.frames) / Double(source.rate) + 0.1
        try ffmpeg(["-f", "lavfi", "-i", "aevalsrc='\(expression)':s=\(source.rate):d=\(seconds)",
                    "-af", "atrim=end_sample=\(source.frames)", "-c:a", source.codec, wav])
        let flac = directory.appendingPathComponent("source.flac").path
        try Subprocess.succeed("flac", ["--silent", "--force", wav, "-o", flac])
        let raw = directory.appendingPathComponent("source.s32").path
        try ffmpeg(["-i", wav, "-f", "s32le", "-c:a", "pcm_s32le", raw])
        return (flac, [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw))))
    }

    /// Everything `decoder` delivers, and the damage it reported.
    static func decodeAll(_ decoder: FLACFileDecoder) throws -> (bytes: [UInt8], buffers: Int, damage: [DamageEvent]) {
        var bytes: [UInt8] = []
        var buffers = 0
        var damage: [DamageEvent] = []
        while let buffer = try decoder.next() {
            #expect(buffer.format == decoder.outputFormat)
            bytes += buffer.bytes
            buffers += 1
            damage += decoder.takeDamage()
        }
        damage += decoder.takeDamage()
        return (bytes, buffers, damage)
    }

    @Test(arguments: sources)
    func decodesTheFLACToolsOutputBitForBit(_ source: Source) throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (flac, reference) = try Self.make(source, in: directory)

        #expect(FLACFileDecoder.isFLAC32(path: FilePath(flac)) == (source.bits == 32))
        let decoder = try FLACFileDecoder(path: FilePath(flac))
        #expect(decoder.bitsPerSample == source.bits)
        #expect(decoder.streamInfo.totalSamples == Int64(source.frames))
        #expect(decoder.outputFormat == PCMFormat(sampleRate: source.rate, channelCount: source.channels, sampleFormat: .int32))
        #expect(decoder.pcmFormat == decoder.outputFormat)

        let (bytes, buffers, damage) = try Self.decodeAll(decoder)
        #expect(damage.isEmpty, "\(damage)")
        #expect(decoder.decodedFrameCount == Int64(source.frames))
        #expect(bytes.count == source.frames * source.channels * 4, "the source's frame count")
        // One FLAC frame per buffer (4096 samples per channel from the flac tool at these rates).
        #expect(buffers == (source.frames + 4095) / 4096)
        // Left-justified: a 16- or 24-bit sample is delivered as ffmpeg widens it (`s << 16`,
        // `s << 8`), a 32-bit sample as it is.
        let first = bytes.indices.first { bytes[$0] != reference[$0] }
        #expect(first == nil, "the samples differ from byte \(first ?? 0) on")
        #expect(decoder.progress.mediaSeconds == Double(source.frames) / Double(source.rate))
        #expect(decoder.progress.fraction == 1)
        #expect(try decoder.next() == nil, "the end stays the end")
    }

    @Test func truncatedFileIsAnErrorNamingTheSamples() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = Self.sources[0]
        let (flac, reference) = try Self.make(source, in: directory)
        let whole = try Data(contentsOf: URL(fileURLWithPath: flac))
        let cut = directory.appendingPathComponent("cut.flac")
        try whole.prefix(whole.count * 3 / 5).write(to: cut)

        let decoder = try FLACFileDecoder(path: FilePath(cut.path))
        var bytes: [UInt8] = []
        var caught: CodecError?
        do {
            while let buffer = try decoder.next() { bytes += buffer.bytes }
        } catch {
            caught = error
        }
        let delivered = decoder.decodedFrameCount
        #expect(delivered > 0 && delivered < Int64(source.frames))
        #expect(bytes.elementsEqual(reference.prefix(bytes.count)), "what came before the cut is the source's")
        let message = caught.map { "\($0)" } ?? "no error"
        #expect(message.contains("ends after \(delivered) of the \(source.frames) samples"), "\(message)")
        #expect(message.contains("truncated"), "\(message)")
    }

    @Test func damagedFramesAreDamageAndTheLengthStays() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = Self.sources[0]
        let (flac, reference) = try Self.make(source, in: directory)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: flac)))
        // Scribble over a few bytes in the middle: one frame fails its CRC (or its header is
        // lost); libFLAC drops it and puts silence of its length in its place.
        let middle = bytes.count / 2
        for index in middle..<(middle + 16) { bytes[index] ^= 0x5A }
        let damaged = directory.appendingPathComponent("damaged.flac")
        try Data(bytes).write(to: damaged)

        let decoder = try FLACFileDecoder(path: FilePath(damaged.path))
        let (decoded, _, damage) = try Self.decodeAll(decoder)
        #expect(!damage.isEmpty, "the damaged frame is reported")
        #expect(damage.contains { $0.message.contains("silence") }, "\(damage)")
        #expect(decoder.decodedFrameCount == Int64(source.frames), "lost frames are replaced, not dropped")
        #expect(decoded.count == reference.count)
        let differing = stride(from: 0, to: min(decoded.count, reference.count), by: 4).filter {
            decoded[$0..<$0 + 4] != reference[$0..<$0 + 4]
        }.count
        #expect(differing > 0 && differing <= 2 * 4096 * source.channels, "\(differing) samples differ: at most two frames' worth")
    }

    @Test func anMD5MismatchIsDamage() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = Self.sources[1]
        let (flac, reference) = try Self.make(source, in: directory)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: flac)))
        // STREAMINFO's MD5: its last 16 bytes ("fLaC", a 4-byte block header, then 34 bytes).
        bytes[26] ^= 0x01
        let altered = directory.appendingPathComponent("md5.flac")
        try Data(bytes).write(to: altered)

        let decoder = try FLACFileDecoder(path: FilePath(altered.path))
        let (decoded, _, damage) = try Self.decodeAll(decoder)
        #expect(decoded == reference, "the audio itself is intact")
        #expect(damage.map(\.kind) == [.checksumMismatch], "\(damage)")
        #expect(damage.first?.message.contains("MD5") == true)
    }

    @Test func aFileThatIsNotFLACIsAClearError() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("tone.wav").path
        try Self.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=0.2", "-c:a", "pcm_s32le", wav])
        let empty = directory.appendingPathComponent("empty.flac").path
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        let missing = directory.appendingPathComponent("missing.flac").path

        for path in [wav, empty] {
            #expect(!FLACFileDecoder.isFLAC32(path: FilePath(path)))
            #expect(FLACStreamInfo(path: FilePath(path)) == nil)
            #expect {
                _ = try FLACFileDecoder(path: FilePath(path))
            } throws: { error in
                "\(error)".contains("not a native FLAC file")
            }
        }
        #expect {
            _ = try FLACFileDecoder(path: FilePath(missing))
        } throws: { error in
            "\(error)".contains("cannot be opened")
        }
    }
}
