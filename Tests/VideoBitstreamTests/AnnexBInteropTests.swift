import Foundation
import MediaCore
import MP4
import SystemPackage
import Testing
import TestSupport
@testable import VideoBitstream

/// Streams made by ffmpeg (libx264, libx265), read by ``AnnexBReader`` and checked against what
/// ffprobe and ffmpeg's own MP4 remux say about the same bytes.
@Suite("Annex B reader against ffmpeg and ffprobe", .blocking)
struct AnnexBInteropTests {
    @Test(arguments: StreamFixture.all)
    func accessUnitsOrderSyncSizeAndConfigurationMatchFFmpeg(_ fixture: StreamFixture) throws {
        let directory = try Tool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try fixture.make(in: directory)
        let samples = try readAllSamples(path: path, codec: fixture.codec, frameDuration: fixture.frameDuration)
        let probe = try ProbeReport(path: path)
        let duration = fixture.frameDuration

        // One sample per packet of FFmpeg's parser and per decoded frame.
        #expect(samples.count > 30)
        #expect(samples.count == probe.packetPositions.count)
        #expect(samples.count == probe.outputOrder.count)

        // Decode times are d × T; presentation order is FFmpeg's decoder's output order.
        for (index, sample) in samples.enumerated() {
            #expect(sample.decodeTime == MediaTime(value: Int64(index) * duration.value, timescale: duration.timescale))
            #expect(sample.presentationTime >= sample.decodeTime, "sample \(index): pts < dts")
            #expect(sample.duration == duration)
            #expect(sample.trackID == 1)
        }
        let presentationOrder = samples.indices.sorted { samples[$0].presentationTime < samples[$1].presentationTime }
        #expect(presentationOrder == probe.outputOrder)
        // Presentation times are (rank + delay) × T with the delay the GOP structure implies.
        let expectedTimes = (0..<samples.count).map { MediaTime(value: (Int64($0) + fixture.expectedDelay) * duration.value, timescale: duration.timescale) }
        #expect(presentationOrder.map { samples[$0].presentationTime } == expectedTimes)
        if fixture.expectedDelay == 0 { #expect(samples.allSatisfy { $0.presentationTime == $0.decodeTime }) }

        // Sync samples are FFmpeg's key frames.
        #expect(samples.map(\.isSync) == probe.keyPackets)
        #expect(samples.first?.isSync == true)

        // Format: codec, cropped size, parameter sets not in the samples.
        guard case .video(let format) = samples.first?.format else {
            Issue.record("no video format")
            return
        }
        #expect(format.codec == fixture.codec)
        #expect(format.width == probe.width)
        #expect(format.height == probe.height)
        #expect(samples.allSatisfy { $0.format == samples[0].format })
        for sample in samples {
            for unit in sampleUnits(sample.data) {
                let type = fixture.codec == .h264 ? Int(unit[0] & 0x1F) : Int(unit[0] >> 1 & 0x3F)
                let excluded: Set<Int> = fixture.codec == .h264 ? [7, 8, 9] : [32, 33, 34, 35]
                #expect(!excluded.contains(type), "a parameter set or delimiter in a sample")
            }
        }

        // The configuration record equals the one ffmpeg writes when it remuxes the stream.
        let mp4 = directory.appendingPathComponent("remux.mp4").path
        try Tool.run("ffmpeg", ["-v", "error", "-y", "-r", fixture.rate, "-i", path, "-c", "copy", mp4])
        let file = try MP4File(source: FileByteSource(path: FilePath(mp4)))
        let track = try #require(file.tracks.first)
        var reader = try AnnexBReader(source: FileByteSource(path: FilePath(path)), codec: fixture.codec, frameDuration: duration)
        if fixture.codec == .h264 {
            let ours = try reader.avcConfiguration()
            let theirs = try #require(try track.avcConfiguration())
            #expect(ours.serialized() == theirs.serialized())
            #expect(format.configurationRecord == theirs.serialized())
            let sps = try H264SequenceParameterSet(nalUnit: NALUnit(bytes: ours.sequenceParameterSets[0], offset: 0))
            #expect(sps.picOrderCountType == fixture.expectedPOCType)
            #expect(sps.width == probe.width && sps.height == probe.height)
        } else {
            let ours = try reader.hevcConfiguration(arrayCompleteness: false)
            let theirs = try #require(try track.hevcConfiguration())
            #expect(ours.serialized() == theirs.serialized())
            #expect(ours.parameterSets == theirs.parameterSets)
            #expect(try reader.hevcConfiguration().arrays.allSatisfy(\.arrayCompleteness))
            #expect(format.configurationRecord == (try reader.hevcConfiguration().serialized()))
        }
        // The delay found is within the reorder bound the SPS declares (ffprobe's has_b_frames).
        #expect(fixture.expectedDelay <= Int64(probe.hasBFrames))

        // Without reordering, FFmpeg's remux stamps the same presentation times (with B-frames its
        // raw demuxer leaves them unset, hence the decoder's output order above).
        if fixture.expectedDelay == 0 {
            let packets = try Tool.probe(["-show_entries", "packet=pts_time", mp4])["packets"] as? [[String: Any]] ?? []
            let theirs = packets.compactMap { Double($0["pts_time"] as? String ?? "") }
            #expect(theirs.count == samples.count)
            for (sample, time) in zip(samples, theirs) { #expect(abs(sample.presentationTime.seconds - time) < 1e-4) }
        }
    }

    /// The samples go through the MP4 muxer as they are: ffprobe is silent about the file, and
    /// its packets carry our presentation order and key frames.
    @Test(arguments: [StreamFixture.all[2], StreamFixture.all[6]])
    func samplesMuxToAFileFFprobeAccepts(_ fixture: StreamFixture) throws {
        let directory = try Tool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try fixture.make(in: directory)
        let samples = try readAllSamples(path: path, codec: fixture.codec, frameDuration: fixture.frameDuration)
        let output = directory.appendingPathComponent("ours.mp4").path
        let muxer = try MP4Muxer(path: FilePath(output), configuration: MuxerConfiguration(mediaTypes: .video))
        let track = try muxer.addTrack(try #require(samples.first).format)
        try muxer.start()
        for sample in samples { try muxer.append(sample, toTrack: track) }
        try muxer.finish()
        let warnings = String(decoding: try Tool.run("ffprobe", ["-v", "warning", "-hide_banner", output]), as: UTF8.self)
        #expect(warnings.isEmpty)
        let packets = try Tool.probe(["-show_entries", "packet=pts,dts,flags", output])["packets"] as? [[String: Any]] ?? []
        #expect(packets.count == samples.count)
        let pts = packets.map { $0["pts"] as? Int ?? -1 }
        let theirOrder = pts.indices.sorted { pts[$0] < pts[$1] }
        let ourOrder = samples.indices.sorted { samples[$0].presentationTime < samples[$1].presentationTime }
        #expect(theirOrder == ourOrder)
        #expect(packets.map { ($0["flags"] as? String ?? "").contains("K") } == samples.map(\.isSync))
        let frames = try Tool.probe(["-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames,width,height", output])
        let stream = try #require((frames["streams"] as? [[String: Any]])?.first)
        #expect(Int(stream["nb_read_frames"] as? String ?? "") == samples.count)
    }

    @Test func resultsDoNotDependOnChunkSizeOrWindow() throws {
        let directory = try Tool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fixture = StreamFixture.all[3]
        let path = try fixture.make(in: directory)
        let reference = try readAllSamples(path: path, codec: fixture.codec, frameDuration: fixture.frameDuration)
        // Tiny chunks put start codes across every boundary.
        #expect(try readAllSamples(path: path, codec: fixture.codec, frameDuration: fixture.frameDuration, chunkSize: 17) == reference)
        // A window smaller than a GOP ranks by the SPS's reorder bound instead of at each IDR.
        #expect(try readAllSamples(path: path, codec: fixture.codec, frameDuration: fixture.frameDuration, reorderWindow: 5) == reference)
        let hevc = StreamFixture.all[6]
        let hevcPath = try hevc.make(in: directory)
        let hevcReference = try readAllSamples(path: hevcPath, codec: .hevc, frameDuration: hevc.frameDuration)
        #expect(try readAllSamples(path: hevcPath, codec: .hevc, frameDuration: hevc.frameDuration, chunkSize: 16, reorderWindow: 4) == hevcReference)
    }

    @Test func frameDurationComesFromTheVUIWhenNotGiven() throws {
        let directory = try Tool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for fixture in [StreamFixture.all[1], StreamFixture.all[6]] {
            let path = try fixture.make(in: directory)
            var reader = try AnnexBReader(source: FileByteSource(path: FilePath(path)), codec: fixture.codec)
            let first = try #require(try reader.nextSample())
            #expect(reader.frameDuration == fixture.frameDuration)
            #expect(reader.frameDuration?.timescale == 30000)
            #expect(first.duration == MediaTime(value: 1001, timescale: 30000))
        }
    }
}
