import MediaCore
@testable import MP4
import Testing

/// Builds ISO BMFF boxes by hand, so the parsers are checked against bytes whose meaning is known.
enum BoxBuilder {
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        be32(UInt32(8 + payload.count)) + Array(type.utf8) + payload
    }
    static func full(_ type: String, version: UInt8 = 0, flags: UInt32 = 0, _ payload: [UInt8]) -> [UInt8] {
        box(type, [version, UInt8(flags >> 16 & 0xFF), UInt8(flags >> 8 & 0xFF), UInt8(flags & 0xFF)] + payload)
    }
    static func be32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - $0 * 8)) } }
    static func be16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
    static func table(_ rows: [[UInt32]]) -> [UInt8] { be32(UInt32(rows.count)) + rows.flatMap { $0.flatMap(be32) } }

    /// A one-track audio file: `sizes` samples of 1024 ticks at 8 kHz, placed by `stsc` into
    /// chunks at `chunkOffsets` (absolute), with the mdat made big enough. A `mp4a` entry with an
    /// esds for AAC-LC 8 kHz mono.
    static func audioFile(sizes: [UInt32], stsc: [[UInt32]], chunkOffsets: [UInt32], mdatSize: Int = 4096,
                          extraStbl: [UInt8] = [], edits: [UInt8]? = nil) -> [UInt8] {
        let esds = full("esds", [0x03, 0x19, 0x00, 0x01, 0x00, 0x04, 0x11, 0x40, 0x15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                 0x05, 0x02, 0x15, 0x88, 0x06, 0x01, 0x02])
        let mp4a = box("mp4a", [0, 0, 0, 0, 0, 0, 0, 1] + [UInt8](repeating: 0, count: 8) + be16(1) + be16(16) + [0, 0, 0, 0]
                       + be32(8000 << 16) + esds)
        let stbl = box("stbl", full("stsd", be32(1) + mp4a)
                       + full("stts", table([[UInt32(sizes.count), 1024]]))
                       + full("stsc", table(stsc))
                       + full("stsz", be32(0) + be32(UInt32(sizes.count)) + sizes.flatMap(be32))
                       + full("stco", table(chunkOffsets.map { [$0] })) + extraStbl)
        let mdia = box("mdia", full("mdhd", [UInt8](repeating: 0, count: 8) + be32(8000) + be32(UInt32(sizes.count * 1024)) + [0x55, 0xC4, 0, 0])
                       + full("hdlr", be32(0) + Array("soun".utf8) + [UInt8](repeating: 0, count: 12) + Array("sound\0".utf8))
                       + box("minf", stbl))
        let tkhd = full("tkhd", flags: 3, [UInt8](repeating: 0, count: 8) + be32(1) + be32(0) + be32(0) + [UInt8](repeating: 0, count: 16)
                        + [0, 1, 0, 0] + [UInt8](repeating: 0, count: 12) + [0, 1, 0, 0] + [UInt8](repeating: 0, count: 12)
                        + [0x40, 0, 0, 0] + be32(0) + be32(0))
        let trak = box("trak", tkhd + (edits.map { box("edts", $0) } ?? []) + mdia)
        let mvhd = full("mvhd", [UInt8](repeating: 0, count: 8) + be32(1000) + be32(0) + [0, 1, 0, 0, 1, 0]
                        + [UInt8](repeating: 0, count: 10) + [UInt8](repeating: 0, count: 36) + [UInt8](repeating: 0, count: 24) + be32(2))
        let ftyp = box("ftyp", Array("M4A ".utf8) + be32(0) + Array("isomM4A ".utf8))
        let moov = box("moov", mvhd + trak)
        let mdat = box("mdat", (0..<mdatSize).map { UInt8(truncatingIfNeeded: $0 * 7) })
        return ftyp + moov + mdat
    }

    /// Where the mdat payload starts in `audioFile`'s output.
    static func mdatPayloadOffset(_ file: [UInt8]) -> Int {
        var offset = 0
        while offset + 8 <= file.count {
            let size = Int(file[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            if String(decoding: file[offset + 4..<offset + 8], as: UTF8.self) == "mdat" { return offset + 8 }
            offset += size
        }
        return -1
    }
}

@Suite struct SampleTableTests {
    /// A file whose chunk offsets point into its own mdat: built twice, the second time with the
    /// offsets the first build revealed.
    static func file(sizes: [UInt32], stsc: [[UInt32]], chunkStarts: [Int], extraStbl: [UInt8] = [], edits: [UInt8]? = nil) -> [UInt8] {
        let probe = BoxBuilder.audioFile(sizes: sizes, stsc: stsc, chunkOffsets: chunkStarts.map { _ in 0 }, extraStbl: extraStbl, edits: edits)
        let base = BoxBuilder.mdatPayloadOffset(probe)
        return BoxBuilder.audioFile(sizes: sizes, stsc: stsc, chunkOffsets: chunkStarts.map { UInt32(base + $0) }, extraStbl: extraStbl, edits: edits)
    }

    static func samples(_ bytes: [UInt8]) throws -> [MediaSample] {
        let demuxer = MP4Demuxer(source: ArrayRandomAccessSource(bytes))
        try demuxer.start()
        var samples: [MediaSample] = []
        while let sample = try demuxer.nextAudioSample() { samples.append(sample) }
        #expect(demuxer.status == .completed)
        #expect(demuxer.audioEOF)
        return samples
    }

    @Test func stscRunsAndEmptyChunksPlaceEverySample() throws {
        // Chunks 1–2 hold 2 samples, chunk 3 holds none, chunks 4+ hold 1.
        let sizes: [UInt32] = [10, 20, 30, 40, 50, 60]
        let bytes = Self.file(sizes: sizes, stsc: [[1, 2, 1], [3, 0, 1], [4, 1, 1]], chunkStarts: [0, 100, 200, 300, 400, 500])
        let base = BoxBuilder.mdatPayloadOffset(bytes)
        let samples = try Self.samples(bytes)
        #expect(samples.map(\.data.count) == sizes.map(Int.init))
        let expectedStarts = [0, 10, 100, 130, 300, 400].map { base + $0 }
        #expect(samples.map { $0.data } == expectedStarts.enumerated().map { Array(bytes[$0.element..<($0.element + Int(sizes[$0.offset]))]) })
        #expect(samples.map(\.decodeTime.value) == (0..<6).map { Int64($0 * 1024) })
        #expect(samples.allSatisfy { $0.isSync && $0.duration == MediaTime(value: 1024, timescale: 8000) })
    }

    @Test func runsDeliverTheSamplesSinglePullsDoBackToBackAndWithinTheirLimit() throws {
        let sizes: [UInt32] = [10, 20, 30, 40, 50, 60, 70]
        let bytes = Self.file(sizes: sizes, stsc: [[1, 3, 1], [3, 0, 1], [4, 1, 1]], chunkStarts: [0, 100, 200, 300, 400, 500, 600])
        let expected = try Self.samples(bytes)
        for limit in [1, 25, 60, 1 << 20] {
            let demuxer = MP4Demuxer(source: ArrayRandomAccessSource(bytes))
            try demuxer.start()
            var runs: [MediaSampleRun] = []
            while let run = try demuxer.nextSampleRun(trackID: 1, maxBytes: limit) { runs.append(run) }
            #expect(runs.flatMap(\.samples) == expected, "limit \(limit)")
            #expect(runs.allSatisfy { $0.count == 1 || $0.data.count <= limit }, "limit \(limit)")
            #expect(demuxer.status == .completed)
        }
        // Without a limit, a run is a chunk: samples 0–2, 3–5, then one per chunk.
        let demuxer = MP4Demuxer(source: ArrayRandomAccessSource(bytes))
        try demuxer.start()
        var counts: [Int] = []
        while let run = try demuxer.nextSampleRun(trackID: 1) { counts.append(run.count) }
        #expect(counts == [3, 3, 1])
    }

    @Test func aRunStopsBeforeTablesThatCannotPlaceASampleThenThrows() throws {
        let bytes = Self.file(sizes: [10, 10, 10], stsc: [[1, 2, 1]], chunkStarts: [0])
        let demuxer = MP4Demuxer(source: ArrayRandomAccessSource(bytes))
        try demuxer.start()
        #expect(try demuxer.nextSampleRun(trackID: 1)?.count == 2)
        #expect(throws: MP4Error.self) { try demuxer.nextSampleRun(trackID: 1) }
        #expect(try demuxer.nextSampleRun(trackID: 1) == nil)
    }

    @Test func tablesThatCannotPlaceASampleEndTheTrackWithAnError() throws {
        // Three samples but only one chunk of two.
        let bytes = Self.file(sizes: [10, 10, 10], stsc: [[1, 2, 1]], chunkStarts: [0])
        let demuxer = MP4Demuxer(source: ArrayRandomAccessSource(bytes))
        try demuxer.start()
        #expect(try demuxer.nextAudioSample() != nil)
        #expect(try demuxer.nextAudioSample() != nil)
        #expect(throws: MP4Error.self) { try demuxer.nextAudioSample() }
        #expect(try demuxer.nextAudioSample() == nil)
    }

    @Test func aSampleOutsideTheFileIsAnErrorNotACrash() throws {
        let bytes = Self.file(sizes: [10, 100_000], stsc: [[1, 2, 1]], chunkStarts: [0])
        let demuxer = MP4Demuxer(source: ArrayRandomAccessSource(bytes))
        try demuxer.start()
        #expect(try demuxer.nextAudioSample()?.data.count == 10)
        do {
            _ = try demuxer.nextAudioSample()
            Issue.record("a sample past the end was delivered")
        } catch {
            guard case .sampleOutsideFile(1, 1, _, 100_000, _) = error else { Issue.record("\(error)"); return }
        }
    }

    @Test func countsLargerThanTheBoxAreRefusedBeforeAllocating() throws {
        // stsz claims 2^30 samples in a box of a few bytes.
        var bytes = Self.file(sizes: [10], stsc: [[1, 1, 1]], chunkStarts: [0])
        let stsz = Array("stsz".utf8)
        let at = (0..<(bytes.count - 4)).first { Array(bytes[$0..<($0 + 4)]) == stsz }!
        bytes.replaceSubrange((at + 12)..<(at + 16), with: BoxBuilder.be32(1 << 30))
        let file = try MP4File(source: ArrayRandomAccessSource(bytes))
        let track = try #require(file.tracks.first)
        #expect(track.damage?.message.contains("sample_count") == true, "\(track.damage?.message ?? "no damage")")
        #expect(track.damage?.kind == .unreadableTrack(id: 1))
        #expect(file.damage.contains { $0.message.contains("moov/trak[1]/mdia/minf/stbl/stsz") })
    }

    @Test func theEditListGivesPrimingAndTheValidLength() throws {
        // 10 packets; media_time 1024; 8000 valid samples at 8 kHz = 1000 ms in a 1000 Hz movie.
        let elst = BoxBuilder.full("elst", BoxBuilder.be32(1) + BoxBuilder.be32(1000) + BoxBuilder.be32(1024) + [0, 1, 0, 0])
        let bytes = Self.file(sizes: [UInt32](repeating: 10, count: 10), stsc: [[1, 10, 1]], chunkStarts: [0], edits: elst)
        let file = try MP4File(source: ArrayRandomAccessSource(bytes))
        let edit = try #require(file.tracks.first?.mediaEdit)
        #expect(edit.mediaTime == 1024 && edit.segmentDuration == 1000 && edit.emptyDuration == 0)
    }
}

/// A source that fails the reads it is told to, like a network drive that drops out.
final class FlakySource: RandomAccessByteSource, @unchecked Sendable {
    let bytes: [UInt8]
    var reads = 0
    var failOn: Set<Int>

    init(_ bytes: [UInt8], failOn: Set<Int>) {
        self.bytes = bytes
        self.failOn = failOn
    }

    var byteCount: Int64 { Int64(bytes.count) }

    /// Where the last failed read was, and whether a read there has succeeded since.
    var failedOffset: Int64?
    var failedReadRetried = false

    func read(at offset: Int64, count: Int) throws(ByteStreamError) -> [UInt8] {
        reads += 1
        if failOn.contains(reads) {
            failedOffset = offset
            failedReadRetried = false
            throw .system(operation: "read", path: "flaky", errno: .ioError)
        }
        if offset == failedOffset { failedReadRetried = true }
        return try ArrayRandomAccessSource(bytes).read(at: offset, count: count)
    }
}

@Suite struct DemuxerResumeTests {
    @Test func anIOErrorCanBeRetriedWithoutRepeatingOrSkippingASample() throws {
        // Many small chunks so that reads happen all along the track (one window per chunk run).
        let count = 40
        let sizes = (0..<count).map { UInt32(5 + $0) }
        let starts = (0..<count).map { $0 * 300_000 }   // each chunk beyond the 256 KiB window of the last
        var bytes = SampleTableTests.file(sizes: sizes, stsc: [[1, 1, 1]], chunkStarts: starts.map { _ in 0 })
        let base = BoxBuilder.mdatPayloadOffset(bytes)
        bytes = BoxBuilder.audioFile(sizes: sizes, stsc: [[1, 1, 1]], chunkOffsets: starts.map { UInt32(base + $0) }, mdatSize: starts.last! + 100)
        let clean = try SampleTableTests.samples(bytes)
        #expect(clean.count == count)

        let flaky = FlakySource(bytes, failOn: [8, 9, 20, 33])
        let demuxer = MP4Demuxer(source: flaky)
        var resumed: [MediaSample] = []
        var failures = 0
        // The structure read may fail too: start again until it succeeds.
        while true {
            do { try demuxer.start(); break } catch { failures += 1; if failures > 10 { throw error } }
            if case .failed = demuxer.status { break }
        }
        if case .failed = demuxer.status {
            Issue.record("start failed on a flaky read and cannot be retried: \(demuxer.status)")
            return
        }
        while true {
            do {
                guard let sample = try demuxer.nextAudioSample() else { break }
                resumed.append(sample)
            } catch {
                failures += 1
                #expect(failures < 20)
            }
        }
        #expect(failures > 0, "the flaky source never failed")
        #expect(resumed == clean, "resumed delivery differs: \(resumed.count) samples vs \(clean.count)")

        // Runs retried after a failed read deliver the same samples, none twice.
        let again = MP4Demuxer(source: FlakySource(bytes, failOn: [3, 4, 12]))
        var runFailures = 0
        while true {
            do { try again.start(); break } catch { runFailures += 1; if runFailures > 10 { throw error } }
        }
        var fromRuns: [MediaSample] = []
        while true {
            do {
                guard let run = try again.nextSampleRun(trackID: 1) else { break }
                fromRuns += run.samples
            } catch {
                runFailures += 1
                #expect(runFailures < 20)
            }
        }
        #expect(runFailures > 0, "the flaky source never failed")
        #expect(fromRuns == clean)
    }
}
