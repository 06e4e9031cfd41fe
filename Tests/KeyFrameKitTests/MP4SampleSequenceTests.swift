import Foundation
import KeyFrameKit
import Synchronization
import Testing
import TestSupport

/// ``MP4SampleSequence``: the same samples as the synchronous demuxer, read off the cooperative
/// pool, with errors and cancellation ending the iteration.
@Suite(.blocking) struct MP4SampleSequenceTests {
    /// An AAC-LC M4A of the corpus (`../shared/corpus/`), read in place.
    static var corpusFile: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/corpus/androidx-media/mp4_bbb_1ch_8kHz_aac_lc.m4a")
    }

    /// A source over bytes in memory that records, for each read, whether it ran as part of a
    /// Swift task (that is, on the task's executor: the cooperative pool for a plain task), and
    /// that fails every read that starts in `failing`.
    final class ObservedSource: RandomAccessByteSource, Sendable {
        let bytes: [UInt8]
        let failing: Range<Int64>
        let readsInTasks = Atomic<Int>(0)
        let readsOutsideTasks = Atomic<Int>(0)

        init(_ bytes: [UInt8], failing: Range<Int64> = 0..<0) {
            self.bytes = bytes
            self.failing = failing
        }

        var byteCount: Int64 { Int64(bytes.count) }

        func read(at offset: Int64, count: Int) throws(ByteStreamError) -> [UInt8] {
            let inTask = withUnsafeCurrentTask { $0 != nil }
            if inTask { readsInTasks.add(1, ordering: .relaxed) } else { readsOutsideTasks.add(1, ordering: .relaxed) }
            if failing.contains(offset) {
                throw .system(operation: "read at \(offset)", path: "observed", errno: .ioError)
            }
            let start = Int(offset), end = min(bytes.count, start + count)
            return Array(bytes[start..<end])
        }
    }

    static func synchronousSamples(_ bytes: [UInt8]) throws -> [MediaSample] {
        let demuxer = MP4Demuxer(source: ArrayRandomAccessSource(bytes), configuration: DemuxerConfiguration(mediaTypes: .audio))
        try demuxer.start()
        var samples: [MediaSample] = []
        while let sample = try demuxer.nextAudioSample() { samples.append(sample) }
        return samples
    }

    @Test func deliversTheSynchronousDemuxersSamplesWithNoReadOnATask() async throws {
        let bytes = [UInt8](try Data(contentsOf: Self.corpusFile))
        let expected = try Self.synchronousSamples(bytes)
        #expect(expected.count > 2 * MP4SampleSequence<ObservedSource>.readAhead)

        let source = ObservedSource(bytes)
        // Not started: the sequence starts the demuxer on its queue, so even the structure
        // (moov) is read there.
        let demuxer = MP4Demuxer(source: source, configuration: DemuxerConfiguration(mediaTypes: .audio))
        var samples: [MediaSample] = []
        for try await sample in MP4SampleSequence(demuxer, trackID: expected[0].trackID) { samples.append(sample) }

        #expect(samples == expected)
        // The old `demuxer.samples(trackID:)` read inside `next()`, that is on the task: every
        // read counted in `readsInTasks`.
        #expect(source.readsInTasks.load(ordering: .relaxed) == 0)
        #expect(source.readsOutsideTasks.load(ordering: .relaxed) > 0)
    }

    @Test func anAlreadyStartedDemuxerIsReadFromWhereItStands() async throws {
        let bytes = [UInt8](try Data(contentsOf: Self.corpusFile))
        let expected = try Self.synchronousSamples(bytes)
        let demuxer = MP4Demuxer(source: ArrayRandomAccessSource(bytes), configuration: DemuxerConfiguration(mediaTypes: .audio))
        try demuxer.start()
        _ = try demuxer.nextAudioSample()
        var samples: [MediaSample] = []
        for try await sample in MP4SampleSequence(demuxer, trackID: expected[0].trackID) { samples.append(sample) }
        #expect(samples == Array(expected.dropFirst()))
    }

    @Test func aReadErrorIsThrownAfterTheSamplesBeforeItAndEndsTheIteration() async throws {
        // 30 s at 128 kb/s, moov first: about 480 kB of samples, more than one read window.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kfk-sequence-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("tone.m4a")
        try Subprocess.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=30",
                                          "-c:a", "aac", "-b:a", "128k", "-ar", "48000", "-movflags", "+faststart", file.path])
        let bytes = [UInt8](try Data(contentsOf: file))
        let expected = try Self.synchronousSamples(bytes)

        // The structure reads whole; a read that starts in the second half of mdat fails.
        let source = ObservedSource(bytes, failing: try Self.secondHalfOfMediaData(bytes))
        let demuxer = MP4Demuxer(source: source, configuration: DemuxerConfiguration(mediaTypes: .audio))
        var iterator = MP4SampleSequence(demuxer, trackID: expected[0].trackID).makeAsyncIterator()
        var delivered: [MediaSample] = []
        var thrown: MP4Error?
        do {
            while let sample = try await iterator.next() { delivered.append(sample) }
        } catch {
            thrown = error
        }
        guard case .stream? = thrown else {
            Issue.record("expected an I/O error, got \(String(describing: thrown))")
            return
        }
        #expect(!delivered.isEmpty)
        #expect(delivered.count < expected.count)
        #expect(delivered == Array(expected.prefix(delivered.count)))
        #expect(try await iterator.next() == nil)
        #expect(source.readsInTasks.load(ordering: .relaxed) == 0)
    }

    @Test func cancellingTheTaskEndsTheIteration() async throws {
        let bytes = [UInt8](try Data(contentsOf: Self.corpusFile))
        let expected = try Self.synchronousSamples(bytes)
        let trackID = expected[0].trackID
        let demuxer = MP4Demuxer(source: ArrayRandomAccessSource(bytes), configuration: DemuxerConfiguration(mediaTypes: .audio))
        let sequence = MP4SampleSequence(demuxer, trackID: trackID)
        let count = try await Task {
            var count = 0
            for try await _ in sequence {
                count += 1
                if count == 1 { withUnsafeCurrentTask { $0?.cancel() } }
            }
            return count
        }.value
        #expect(count >= 1)
        #expect(count <= MP4SampleSequence<ArrayRandomAccessSource>.readAhead)
        #expect(count < expected.count)
    }

    /// The second half of the `mdat` payload of a file whose `moov` comes first.
    static func secondHalfOfMediaData(_ bytes: [UInt8]) throws -> Range<Int64> {
        let demuxer = MP4Demuxer(source: ArrayRandomAccessSource(bytes), configuration: DemuxerConfiguration(mediaTypes: .audio))
        try demuxer.start()
        let boxes = try #require(demuxer.file).topLevelBoxes
        let moov = try #require(boxes.first { $0.type == "moov" })
        let mdat = try #require(boxes.first { $0.type == "mdat" })
        try #require(moov.offset < mdat.offset, "the test needs moov before mdat")
        return (mdat.payloadOffset + (mdat.size - Int64(mdat.headerSize)) / 2)..<(mdat.offset + mdat.size)
    }
}
