import Foundation
import MediaCore
import PCMAudio
import SystemPackage
import Testing
import TestSupport

/// RawPCMReader: whole frames of the given layout, a trailing partial frame dropped and reported.
@Suite(.blocking) struct RawPCMReaderTests {
    @Test(arguments: [PCMSampleFormat.int16, .float32], [1, 2, 6])
    func readsWholeFramesWhateverTheReadSize(sampleFormat: PCMSampleFormat, channels: Int) throws {
        let format = PCMFormat(sampleRate: 48000, channelCount: channels, sampleFormat: sampleFormat)
        let data = WAVBytes.noise(format.bytesPerFrame * 517)
        for maxFrames in [1, 100, 4096] {
            var reader = try RawPCMReader(source: ArrayByteSource(data), format: format)
            var collected: [UInt8] = []
            while let chunk = try reader.read(maxFrames: maxFrames) {
                #expect(chunk.count <= maxFrames * format.bytesPerFrame)
                collected += chunk
            }
            #expect(collected == data)
            #expect(reader.framesRead == 517)
            #expect(reader.warnings.isEmpty)
            #expect(reader.frameCount == nil)
        }
    }

    @Test func trailingPartialFrameIsDroppedWithAWarning() throws {
        let format = PCMFormat(sampleRate: 44100, channelCount: 2, sampleFormat: .int16)
        var reader = try RawPCMReader(source: ArrayByteSource(WAVBytes.noise(4 * 10 + 3)), format: format)
        var total = 0
        while let chunk = try reader.read(maxFrames: 3) { total += chunk.count }
        #expect(total == 40)
        #expect(reader.warnings.map(\.message) == ["PCM data at byte 40: 3 trailing bytes do not make a whole 4-byte frame; dropped"])
        #expect(reader.warnings.map(\.offset) == [40])
    }

    @Test func emptyStreamHasNoFrames() throws {
        var reader = try RawPCMReader(source: ArrayByteSource([]), format: PCMFormat(sampleRate: 8000, channelCount: 1, sampleFormat: .float32))
        #expect(try reader.read(maxFrames: 10) == nil)
        #expect(reader.warnings.isEmpty)
    }

    @Test func fileKnowsItsFrameCount() throws {
        let directory = try Tool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("tone.pcm").path
        try Data(WAVBytes.noise(4 * 1000 + 1)).write(to: URL(fileURLWithPath: path))
        var reader = try RawPCMReader(source: try FileByteSource(path: FilePath(path)),
                                      format: PCMFormat(sampleRate: 44100, channelCount: 1, sampleFormat: .float32))
        #expect(reader.frameCount == 1000)
        var total = 0
        while let chunk = try reader.read(maxFrames: 256) { total += chunk.count }
        #expect(total == 4000)
        #expect(reader.warnings.count == 1)
    }

    @Test func rejectsLayoutsItCannotRead() {
        let planar = PCMFormat(sampleRate: 44100, channelCount: 2, sampleFormat: .float32, isInterleaved: false)
        #expect(PCMRead.error { () throws(WAVError) in try RawPCMReader(source: ArrayByteSource([]), format: planar) }
                == .unsupportedFormat(field: "isInterleaved", value: 0, allowed: "interleaved (1)"))
        let silent = PCMFormat(sampleRate: 44100, channelCount: 0, sampleFormat: .int16)
        #expect(PCMRead.error { () throws(WAVError) in try RawPCMReader(source: ArrayByteSource([]), format: silent) }
                == .unsupportedFormat(field: "channelCount", value: 0, allowed: "1...64"))
    }
}
