import AudioCodec
import Foundation
import KeyFrameKit
import Synchronization
import Testing
import TestSupport

/// ``ProbeReport/init(libavformatHeadersOf:named:)``: a file described from its container's
/// headers through libavformat's callbacks, from bytes in memory whose reads are counted — the
/// same length, codec, priming and tags as the report of its packets, for a fraction of its
/// bytes; a failed read thrown with its own words.
@Suite(.blocking) struct ProbeReportHeadersTests {
    /// Bytes in memory; counts what was read, and fails every read that reaches `failingFrom`.
    final class CountedSource: RandomAccessByteSource, Sendable {
        let bytes: [UInt8]
        let failingFrom: Int64
        let bytesRead = Atomic<Int>(0)

        init(_ bytes: [UInt8], failingFrom: Int64 = .max) {
            self.bytes = bytes
            self.failingFrom = failingFrom
        }

        var byteCount: Int64 { Int64(bytes.count) }

        func read(at offset: Int64, count: Int) throws(ByteStreamError) -> [UInt8] {
            if offset + Int64(count) > failingFrom {
                throw .refused(path: "memory", reason: "HTTP 503 (the store is resting)")
            }
            let start = Int(min(offset, byteCount)), end = min(bytes.count, start + count)
            bytesRead.add(end - start, ordering: .relaxed)
            return Array(bytes[start..<end])
        }
    }

    /// A scratch directory, and `name` made in it by ffmpeg with `arguments`.
    static func make(_ name: String, _ arguments: [String]) throws -> (directory: URL, path: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyframe-headers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent(name).path
        try Subprocess.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y"] + arguments + ["-metadata", "title=Two minutes", path])
        return (directory, path)
    }

    @Test func aFLACsLengthComesFromItsStreamInfoWithoutItsFrames() throws {
        let (directory, path) = try Self.make("tone.flac", ["-f", "lavfi", "-i", "sine=f=440:d=120:r=44100", "-ac", "2", "-compression_level", "0"])
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = CountedSource([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        let summary = try AudioFileDecoder.headerSummary(of: source, named: "tone.flac")
        #expect(summary.containerName == "flac" && summary.codecName == "flac" && summary.sampleRate == 44100 && summary.channelCount == 2)
        #expect(summary.duration == 120 && !summary.durationIsEstimated, "\(summary)")
        #expect(summary.tags["title"] == "Two minutes")
        let read = source.bytesRead.load(ordering: .relaxed)
        #expect(read < 128 << 10 && read * 10 < source.bytes.count, "read \(read) of \(source.bytes.count) bytes")

        let report = try ProbeReport(libavformatHeadersOf: source, named: "tone.flac")
        let packets = try ProbeReport(libavformatSummaryOf: FilePath(path))
        #expect(report.headersOnly == true && report.durationEstimated == nil && report.duration == packets.duration)
        #expect(report.tracks.first?.sampleCount == 0 && packets.tracks.first?.sampleCount ?? 0 > 0)
        let json = String(decoding: try JSONEncoder().encode(report), as: UTF8.self)
        #expect(json.contains("\"headersOnly\":true") && !json.contains("durationEstimated"), "\(json)")
        #expect(!String(decoding: try JSONEncoder().encode(packets), as: UTF8.self).contains("headersOnly"))
    }

    /// An MP3's Info tag and an Ogg Opus stream's pre-skip and last granule, read from the
    /// bytes as from the file.
    @Test(arguments: [("tone.mp3", ["-c:a", "libmp3lame", "-b:a", "96k"]), ("tone.opus", ["-c:a", "libopus", "-b:a", "64k"])])
    func theTrimsAreThoseOfTheFile(name: String, codec: [String]) throws {
        let (directory, path) = try Self.make(name, ["-f", "lavfi", "-i", "sine=f=440:d=120:r=48000"] + codec)
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = CountedSource([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        let report = try ProbeReport(libavformatHeadersOf: source, named: name)
        let packets = try ProbeReport(libavformatSummaryOf: FilePath(path))
        #expect(report.format == packets.format && report.duration == packets.duration && abs(report.duration - 120) < 0.05,
                "\(report.duration) against \(packets.duration)")
        let track = try #require(report.tracks.first), expected = try #require(packets.tracks.first)
        #expect(track.codec == expected.codec && track.sampleRate == expected.sampleRate && track.channels == expected.channels)
        #expect(track.priming == expected.priming && track.remainder == expected.remainder && track.priming != nil, "\(track)")
        #expect(report.tags?["title"] == "Two minutes")
        let read = source.bytesRead.load(ordering: .relaxed)
        #expect(read * 4 < source.bytes.count, "read \(read) of \(source.bytes.count) bytes")
    }

    @Test func aFailedReadIsThrownInItsOwnWords() throws {
        let (directory, path) = try Self.make("tone.flac", ["-f", "lavfi", "-i", "sine=f=440:d=5:r=44100"])
        defer { try? FileManager.default.removeItem(at: directory) }
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        for failingFrom: Int64 in [0, 2000] {
            #expect {
                _ = try AudioFileDecoder.headerSummary(of: CountedSource(bytes, failingFrom: failingFrom), named: "tone.flac")
            } throws: { error in
                "\(error)".contains("HTTP 503 (the store is resting)") && "\(error)".contains("reading tone.flac")
            }
        }
        #expect {
            _ = try AudioFileDecoder.headerSummary(of: CountedSource([UInt8](repeating: 0x5A, count: 10_000)), named: "noise.bin")
        } throws: { error in
            "\(error)".contains("noise.bin is not a media file")
        }
    }
}
