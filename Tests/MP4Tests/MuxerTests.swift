import Foundation
import MediaCore
@testable import MP4
import AACBitstream
import SystemPackage
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
        let muxer = try MP4Muxer(path: FilePath(output))
        #expect(throws: MP4Error.invalidMuxerState(operation: "append", status: "not started")) { try muxer.append(Self.packet(0)) }
        try muxer.start()
        #expect(throws: MP4Error.invalidMuxerState(operation: "start", status: "running")) { try muxer.start() }
        try muxer.append(Self.packet(0))
        try muxer.append(Self.packet(1))
        var other = Self.packet(2)
        other.format = .audio(EncodedAudioFormat(codec: .aac, sampleRate: 48000, channelCount: 2, framesPerPacket: 1024,
                                                 decoderConfiguration: [0x11, 0x90]))
        #expect(throws: MP4Error.self) { try muxer.append(other) }                   // format change
        if case .failed = muxer.status {} else { Issue.record("status is \(muxer.status)") }
        #expect(!FileManager.default.fileExists(atPath: output), "a failed muxer leaves no file")

        let second = try MP4Muxer(path: FilePath(output))
        try second.start()
        try second.append(Self.packet(5))
        #expect(throws: MP4Error.self) { try second.append(Self.packet(4)) }         // dts backwards
        #expect(!FileManager.default.fileExists(atPath: output))

        let third = try MP4Muxer(path: FilePath(output))
        try third.start()
        try third.append(Self.packet(0))
        third.cancel()
        #expect(third.status == .cancelled)
        #expect(throws: MP4Error.invalidMuxerState(operation: "append", status: "cancelled")) { try third.append(Self.packet(1)) }
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test func aFinishedFileReadsBackWithTheGaplessEdit() throws {
        let output = Self.path("b.m4a")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let muxer = try MP4Muxer(path: FilePath(output))
        try muxer.start()
        for index in 0..<50 { try muxer.append(Self.packet(index, size: 50 + index)) }
        muxer.setGapless(priming: 1024, validFrameCount: 50 * 1024 - 1024 - 300)
        try muxer.finish()
        #expect(muxer.status == .completed)
        #expect(throws: MP4Error.invalidMuxerState(operation: "append", status: "finished")) { try muxer.append(Self.packet(51)) }
        let file = try MP4File(source: try FileByteSource(path: FilePath(output)))
        let track = try #require(file.tracks.first)
        #expect(track.sampleCount == 50)
        #expect(file.movieTimescale == 44100)
        #expect(track.mediaEdit?.mediaTime == 1024)
        #expect(track.mediaEdit?.segmentDuration == UInt64(50 * 1024 - 1024 - 300))
        #expect(file.topLevelBoxes.map(\.type.description) == ["ftyp", "moov", "free", "free", "mdat"], "faststart: moov before mdat, then tag padding")
        let demuxer = MP4Demuxer(source: try FileByteSource(path: FilePath(output)))
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
        track.placeSample(at: 5_000_000_000, decodeTicks: 0, continuesChunk: false)
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
        small.placeSample(at: 1000, decodeTicks: 0, continuesChunk: false)
        #expect(!MovieBoxWriter(tracks: [small], movieTimescale: 44100, transform: .identity, encoderName: "t").needsLargeOffsets())
    }

    @Test func aFragmentedFileCanBeRewrittenAsFastStartOnFinish() throws {
        let output = Self.path("c.mp4")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let muxer = try MP4Muxer(path: FilePath(output), configuration: MuxerConfiguration(
            layout: .fragmented(fragmentDuration: MediaTime(value: 1, timescale: 10), defragmentOnFinish: true)))
        try muxer.start()
        for index in 0..<100 { try muxer.append(Self.packet(index)) }
        try muxer.finish()
        let file = try MP4File(source: try FileByteSource(path: FilePath(output)))
        #expect(!file.isFragmented)
        #expect(file.tracks.first?.sampleCount == 100)
        #expect(file.topLevelBoxes.first { $0.type == "moov" }!.offset < file.topLevelBoxes.first { $0.type == "mdat" }!.offset)
    }

    /// Reads every audio sample of an MP4 in memory.
    static func audioSamples(_ bytes: [UInt8]) throws -> [MediaSample] {
        let demuxer = MP4Demuxer(source: ArrayRandomAccessSource(bytes))
        try demuxer.start()
        var samples: [MediaSample] = []
        while let sample = try demuxer.nextAudioSample() { samples.append(sample) }
        return samples
    }

    @Test func addTrackReturnsTheIDsAndEachLayoutWritesToAnInMemorySink() throws {
        let layouts: [(MuxerConfiguration.Layout, [String])] = [
            (.progressive, ["ftyp", "free", "mdat", "moov"]),
            (.fastStart, ["ftyp", "moov", "free", "free", "mdat"]),
            (.fragmented(fragmentDuration: MediaTime(value: 1, timescale: 2)), ["ftyp", "moov"] + Array(repeating: ["moof", "mdat"], count: 3).flatMap { $0 }),
        ]
        for (layout, _) in layouts {
            let muxer = MP4Muxer(sink: ArrayByteSink(), configuration: MuxerConfiguration(layout: layout))
            let audio = try muxer.addTrack(Self.format)
            #expect(audio == 1)
            try muxer.start()
            for index in 0..<60 { try muxer.append(Self.packet(index, size: 10 + index), toTrack: audio) }
            #expect(throws: MP4Error.invalidMuxerState(operation: "append to track 7", status: "no track with that id was added")) {
                try muxer.append(Self.packet(60), toTrack: 7)
            }
        }
        for (layout, boxes) in layouts {
            let muxer = MP4Muxer(sink: ArrayByteSink(), configuration: MuxerConfiguration(layout: layout))
            let audio = try muxer.addTrack(Self.format)
            muxer.setGapless(trackID: audio, priming: 1024, validFrameCount: 60 * 1024 - 2048)
            try muxer.start()
            for index in 0..<60 { try muxer.append(Self.packet(index, size: 10 + index), toTrack: audio) }
            try muxer.finish()
            let bytes = try #require(muxer.sink as? ArrayByteSink).bytes
            let file = try MP4File(source: ArrayRandomAccessSource(bytes))
            #expect(try MovieEditor.topLevelBoxes(of: ArrayRandomAccessSource(bytes)).map(\.type.description) == boxes, "\(layout)")
            #expect(file.topLevelBoxCount == boxes.count, "\(layout)")
            let samples = try Self.audioSamples(bytes)
            #expect(samples.map(\.data) == (0..<60).map { Self.packet($0, size: 10 + $0).data }, "\(layout)")
            #expect(file.tracks.first?.mediaEdit?.mediaTime == 1024, "\(layout)")
        }
    }

    @Test func aRunIsMuxedAsItsSamplesOneByOneAndTheMovieFillsTheRoomLeftForIt() throws {
        let packets = (0..<300).map { Self.packet($0, size: 20 + $0 % 50) }
        func mux(_ configuration: MuxerConfiguration, runs: Bool) throws -> [UInt8] {
            let muxer = MP4Muxer(sink: ArrayByteSink(), configuration: configuration)
            try muxer.start()
            if runs {
                for start in stride(from: 0, to: packets.count, by: 70) {
                    let part = packets[start..<min(start + 70, packets.count)]
                    try muxer.append(run: MediaSampleRun(data: part.flatMap(\.data), entries: part.map { .init(size: $0.data.count, duration: 1024) },
                                                         firstDecodeTime: part.first!.decodeTime.value, timescale: 44100, format: Self.format))
                }
            } else {
                for packet in packets { try muxer.append(packet) }
            }
            try muxer.finish()
            return try #require(muxer.sink as? ArrayByteSink).bytes
        }
        for layout: MuxerConfiguration.Layout in [.progressive, .fastStart, .fragmented(fragmentDuration: MediaTime(value: 1, timescale: 1))] {
            let configuration = MuxerConfiguration(layout: layout)
            #expect(try mux(configuration, runs: true) == mux(configuration, runs: false), "\(layout)")
        }
        // Room for 300 samples: the movie goes into it, a `free` keeps the rest, nothing moves.
        let roomy = try mux(MuxerConfiguration(layout: .fastStart, expectedSampleCount: 330), runs: true)
        let file = try MP4File(source: ArrayRandomAccessSource(roomy))
        #expect(file.topLevelBoxes.map(\.type.description) == ["ftyp", "moov", "free", "free", "mdat"])
        #expect(try Self.audioSamples(roomy).map(\.data) == packets.map(\.data))
        // Room for 10: too small, so the media moves as without an estimate; every byte kept.
        let tight = try mux(MuxerConfiguration(layout: .fastStart, expectedSampleCount: 10), runs: false)
        let moved = try MP4File(source: ArrayRandomAccessSource(tight))
        #expect(moved.topLevelBoxes.map(\.type.description) == ["ftyp", "moov", "free", "free", "mdat"])
        #expect(try Self.audioSamples(tight).map(\.data) == packets.map(\.data))
    }

    @Test func aVideoTrackAddedUpFrontGetsTheNextID() throws {
        let video = FormatDescription.video(VideoFormat(codec: .h264, width: 16, height: 16,
                                                        parameterSets: [[0x67, 0x42, 0x00, 0x0A, 0xF8, 0x41, 0xA2], [0x68, 0xCE, 0x38, 0x80]]))
        let muxer = MP4Muxer(sink: ArrayByteSink(), configuration: MuxerConfiguration(mediaTypes: .audioVideo))
        #expect(try muxer.addTrack(Self.format) == 1)
        #expect(try muxer.addTrack(video) == 2)
        #expect(throws: MP4Error.self) { try muxer.addTrack(.pcm(PCMFormat(sampleRate: 44100, channelCount: 2, sampleFormat: .int16))) }
    }

    @Test func defragmentingNeedsAPathAndMisuseIsAStateError() throws {
        let muxer = MP4Muxer(sink: ArrayByteSink(), configuration: MuxerConfiguration(
            layout: .fragmented(fragmentDuration: MediaTime(value: 1, timescale: 1), defragmentOnFinish: true)))
        #expect(throws: MP4Error.self) { try muxer.start() }
        guard case .failed(.unsupportedLayout) = muxer.status else { Issue.record("\(muxer.status)"); return }
        let finished = MP4Muxer(sink: ArrayByteSink())
        #expect(throws: MP4Error.invalidMuxerState(operation: "finish", status: "not started")) { try finished.finish() }
    }

    @Test func aFastStartMoveAcrossManyBlocksKeepsEveryByte() throws {
        // More media than one move block, so the backwards block copy is exercised.
        let output = Self.path("d.m4a")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let muxer = try MP4Muxer(path: FilePath(output))
        try muxer.start()
        let count = 3 * FastStartLayoutWriter.moveBlockSize / 1500 + 7
        for index in 0..<count { try muxer.append(Self.packet(index, size: 1500 + index % 13)) }
        try muxer.finish()
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: output)))
        let samples = try Self.audioSamples(bytes)
        #expect(samples.count == count)
        #expect(samples.indices.allSatisfy { samples[$0].data == Self.packet($0, size: 1500 + $0 % 13).data })
    }
}
