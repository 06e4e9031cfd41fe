import Foundation
import MediaCore
@testable import MP4
import AACBitstream
import Testing

/// The muxer's state machine and errors, its 64-bit offsets, and the fragmented → faststart rewrite,
/// checked with our own demuxer.
@Suite struct MuxerTests {
    static let asc: [UInt8] = [0x12, 0x10]   // AAC-LC 44.1 kHz stereo
    static var format: FormatDescription {
        .audio(EncodedAudioFormat(codec: .aac, sampleRate: 44100, channelCount: 2, framesPerPacket: 1024, decoderConfiguration: asc))
    }

    static func packet(_ index: Int, size: Int = 100) -> MediaSample {
        MediaSample(data: [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: size),
                    presentationTime: MediaTime(value: Int64(index) * 1024, timescale: 44100),
                    duration: MediaTime(value: 1024, timescale: 44100), format: format)
    }

    static func path(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("muxer-\(UUID().uuidString)-\(name)").path
    }

    @Test func wrongStateFormatChangeAndBackwardsTimeAreClearErrors() throws {
        let output = Self.path("a.m4a")
        let muxer = MP4Muxer(configuration: MuxerConfiguration(outputPath: output))
        #expect(throws: MP4Error.self) { try muxer.append(Self.packet(0)) }          // before start
        try muxer.start()
        #expect(throws: MP4Error.self) { try muxer.start() }                          // twice
        try muxer.append(Self.packet(0))
        try muxer.append(Self.packet(1))
        var other = Self.packet(2)
        other.format = .audio(EncodedAudioFormat(codec: .aac, sampleRate: 48000, channelCount: 2, framesPerPacket: 1024,
                                                 decoderConfiguration: [0x11, 0x90]))
        #expect(throws: MP4Error.self) { try muxer.append(other) }                   // format change
        if case .failed = muxer.status {} else { Issue.record("status is \(muxer.status)") }
        #expect(!FileManager.default.fileExists(atPath: output), "a failed muxer leaves no file")

        let second = MP4Muxer(configuration: MuxerConfiguration(outputPath: output))
        try second.start()
        try second.append(Self.packet(5))
        #expect(throws: MP4Error.self) { try second.append(Self.packet(4)) }         // dts backwards
        #expect(!FileManager.default.fileExists(atPath: output))

        let third = MP4Muxer(configuration: MuxerConfiguration(outputPath: output))
        try third.start()
        try third.append(Self.packet(0))
        third.cancel()
        #expect(third.status == .cancelled)
        #expect(throws: MP4Error.self) { try third.append(Self.packet(1)) }          // after cancel
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test func aFinishedFileReadsBackWithTheGaplessEdit() throws {
        let output = Self.path("b.m4a")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let muxer = MP4Muxer(configuration: MuxerConfiguration(outputPath: output))
        try muxer.start()
        for index in 0..<50 { try muxer.append(Self.packet(index, size: 50 + index)) }
        muxer.setGapless(priming: 1024, validFrameCount: 50 * 1024 - 1024 - 300)
        try muxer.finish()
        #expect(muxer.status == .completed)
        #expect(throws: MP4Error.self) { try muxer.append(Self.packet(51)) }          // after finish
        let file = try MP4File(source: try FileByteSource(path: output))
        let track = try #require(file.tracks.first)
        #expect(track.sampleCount == 50)
        #expect(file.movieTimescale == 44100)
        #expect(track.mediaEdit?.mediaTime == 1024)
        #expect(track.mediaEdit?.segmentDuration == UInt64(50 * 1024 - 1024 - 300))
        #expect(file.topLevelBoxes.map(\.type.description) == ["ftyp", "moov", "free", "mdat"], "faststart: moov before mdat")
        let demuxer = MP4Demuxer(source: try FileByteSource(path: output))
        try demuxer.start()
        var index = 0
        while let sample = try demuxer.nextAudioSample() {
            #expect(sample.data == Self.packet(index, size: 50 + index).data)
            index += 1
        }
        #expect(index == 50)
    }

    @Test func offsetsPast4GiBUse64BitChunkOffsets() throws {
        let track = MuxerTrack(id: 1, format: Self.format)
        track.firstDecodeTime = .zero
        _ = try track.record(Self.packet(0))
        track.placeSample(at: 5_000_000_000, newChunk: true)
        track.closeChunk()
        track.closeLastDuration()
        let writer = MovieBoxWriter(tracks: [track], movieTimescale: 44100, transform: .identity, encoderName: "test")
        #expect(writer.needsLargeOffsets())
        let moov = writer.movie()
        let co64 = Array("co64".utf8)
        let at = try #require((0..<(moov.count - 4)).first { Array(moov[$0..<($0 + 4)]) == co64 })
        // co64 payload: version+flags, entry_count 1, then the 64-bit offset.
        let offset = moov[(at + 12)..<(at + 20)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        #expect(offset == 5_000_000_000)
        let small = MuxerTrack(id: 1, format: Self.format)
        small.placeSample(at: 1000, newChunk: true)
        #expect(!MovieBoxWriter(tracks: [small], movieTimescale: 44100, transform: .identity, encoderName: "t").needsLargeOffsets())
    }

    @Test func aFragmentedFileCanBeRewrittenAsFastStartOnFinish() throws {
        let output = Self.path("c.mp4")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let muxer = MP4Muxer(configuration: MuxerConfiguration(outputPath: output, fragmentDuration: MediaTime(value: 1, timescale: 10),
                                                               rewriteFragmentedOnFinish: true))
        try muxer.start()
        for index in 0..<100 { try muxer.append(Self.packet(index)) }
        try muxer.finish()
        let file = try MP4File(source: try FileByteSource(path: output))
        #expect(!file.isFragmented)
        #expect(file.tracks.first?.sampleCount == 100)
        #expect(file.topLevelBoxes.first { $0.type == "moov" }!.offset < file.topLevelBoxes.first { $0.type == "mdat" }!.offset)
    }
}
