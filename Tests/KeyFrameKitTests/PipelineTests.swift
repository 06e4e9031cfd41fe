import Foundation
import KeyFrameKit
import Testing

/// The pipeline shape: the ``Pump`` (progress, stop, cancel, damage, errors), composed
/// sources, and the one format table.
@Suite struct PipelineTests {
    /// A packet source of `count` numbered one-byte packets, with damage after the first.
    struct NumberSource: PacketSource {
        let count: Int
        var position = 0
        var failAt: Int?
        var damage: [DamageEvent] = []
        static let format = FormatDescription.audio(EncodedAudioFormat(codec: .aac, sampleRate: 1000, channelCount: 1,
                                                                       framesPerPacket: 1, decoderConfiguration: []))

        mutating func next() throws(ByteStreamError) -> MediaSample? {
            guard position < count else { return nil }
            if position == failAt { throw .system(operation: "read", path: "numbers", errno: .ioError) }
            if position == 1 { damage.append(DamageEvent(.skippedBytes(count: 3), at: 7, message: "3 bytes skipped at byte 7")) }
            defer { position += 1 }
            return MediaSample(data: [UInt8(truncatingIfNeeded: position)], presentationTime: MediaTime(value: Int64(position), timescale: 1000),
                               duration: MediaTime(value: 1, timescale: 1000), format: Self.format)
        }

        var progress: MediaProgress { MediaProgress(mediaSeconds: Double(position) / 1000, totalSeconds: Double(count) / 1000) }

        mutating func takeDamage() -> [DamageEvent] {
            defer { damage.removeAll() }
            return damage
        }
    }

    /// A sink that records what happened to it; `stopAfter` asks `control` to stop or cancel.
    struct RecordingSink: PacketSink {
        var written: [UInt8] = []
        var finished = false
        var cancelled = false
        var control: JobControl?
        var stopAfter: Int?
        var cancelInstead = false

        mutating func write(_ packet: MediaSample) {
            written += packet.data
            if written.count == stopAfter { if cancelInstead { control?.cancel() } else { control?.requestStop() } }
        }
        mutating func finish() { finished = true }
        mutating func cancel() { cancelled = true }
    }

    /// Duplicates every packet and, at the end, adds one packet 255: a transform that holds
    /// something back.
    struct Doubler: MediaTransform {
        mutating func transform(_ input: MediaSample) -> [MediaSample] { [input, input] }
        mutating func finish() -> [MediaSample] {
            [MediaSample(data: [255], presentationTime: .zero, duration: MediaTime(value: 1, timescale: 1000), format: NumberSource.format)]
        }
    }

    @Test func thePumpMovesEverythingFinishesTheSinkAndCollectsDamageAndProgress() throws {
        var source = NumberSource(count: 200)
        var sink = RecordingSink()
        var progress: [MediaProgress] = []
        let report = try Pump.run(from: &source, into: &sink) { progress.append($0) }
        #expect(sink.written == (0..<200).map { UInt8($0) })
        #expect(sink.finished && !sink.cancelled)
        #expect(report.elements == 200 && !report.stoppedEarly)
        #expect(report.damage == [DamageEvent(.skippedBytes(count: 3), at: 7, message: "3 bytes skipped at byte 7")])
        // Every 64 elements and once at the end; the last says all of it.
        #expect(progress.count == 4)
        #expect(progress.last == MediaProgress(mediaSeconds: 0.2, totalSeconds: 0.2))
        #expect(progress.last?.fraction == 1)
    }

    @Test func anErrorCancelsTheSinkAndArrivesAsAPipelineError() {
        var source = NumberSource(count: 10, failAt: 5)
        var sink = RecordingSink()
        #expect {
            try Pump.run(from: &source, into: &sink)
        } throws: { error in
            guard let error = error as? PipelineError, error.code == .stream, let stream = error.underlying(as: ByteStreamError.self) else {
                return false
            }
            return stream.description.contains("numbers")
        }
        #expect(sink.written.count == 5 && sink.cancelled && !sink.finished)
    }

    @Test func aStopFinishesTheSinkAndFlushesTheTransform() throws {
        let control = JobControl()
        var source = NumberSource(count: 100).transformed(by: Doubler())
        var sink = RecordingSink(control: control, stopAfter: 10)
        let report = try Pump.run(from: &source, into: &sink, control: control)
        #expect(report.stoppedEarly)
        // Five packets doubled, then what the transform held back at the end.
        #expect(sink.written == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 255])
        #expect(sink.finished && !sink.cancelled)
    }

    @Test func aCancelCancelsTheSink() {
        let control = JobControl()
        var source = NumberSource(count: 100)
        var sink = RecordingSink(control: control, stopAfter: 3, cancelInstead: true)
        #expect(throws: PipelineError.self) { try Pump.run(from: &source, into: &sink, control: control) }
        #expect(sink.cancelled && !sink.finished && sink.written.count == 3)
    }

    @Test func aTransformedSourceHandsOverWhatTheTransformHolds() throws {
        var source = NumberSource(count: 2).transformed(by: Doubler())
        var collected: [UInt8] = []
        while let packet = try source.next() { collected += packet.data }
        #expect(collected == [0, 0, 1, 1, 255])
        #expect(try source.next() == nil)
    }

    @Test func interleavingOrdersByDecodeTime() throws {
        struct Timed: PacketSource {
            var times: [Int64]
            let tag: UInt8
            mutating func next() -> MediaSample? {
                guard !times.isEmpty else { return nil }
                let time = times.removeFirst()
                return MediaSample(data: [tag], presentationTime: MediaTime(value: time, timescale: 10),
                                   duration: MediaTime(value: 1, timescale: 10), format: NumberSource.format)
            }
        }
        var merged = InterleavedSource(first: Timed(times: [0, 2, 4, 6], tag: 1), second: Timed(times: [0, 1, 5], tag: 2))
        var tags: [UInt8] = []
        while let packet = try merged.next() { tags += packet.data }
        #expect(tags == [1, 2, 2, 1, 1, 2, 1])
        #expect(merged.firstCount == 4 && merged.secondCount == 3)
    }

    @Test func interleavingKeepsEachSourcesEventsWithTheirPackets() throws {
        /// Tells a gapless event before its first packet and another at its end.
        struct Telling: PacketSource {
            var times: [Int64]
            let tag: UInt8
            var told: [StreamEvent] = []
            var started = false
            mutating func next() -> MediaSample? {
                if !started { started = true; told.append(.gapless(GaplessInfo(priming: Int64(tag)))) }
                guard !times.isEmpty else {
                    told.append(.gapless(GaplessInfo(priming: Int64(tag), validLength: 100)))
                    return nil
                }
                let time = times.removeFirst()
                return MediaSample(data: [tag], presentationTime: MediaTime(value: time, timescale: 10),
                                   duration: MediaTime(value: 1, timescale: 10), format: NumberSource.format)
            }
            mutating func takeEvents() -> [StreamEvent] {
                defer { told = [] }
                return told
            }
        }
        var merged = InterleavedSource(first: Telling(times: [0, 5], tag: 1), second: Telling(times: [1, 2], tag: 2))
        var order: [String] = []
        while let packet = try merged.next() {
            for case .gapless(let info) in merged.takeEvents() { order.append("e\(info.priming)\(info.isComplete ? "end" : "")") }
            order.append("p\(packet.data[0])")
        }
        for case .gapless(let info) in merged.takeEvents() { order.append("e\(info.priming)\(info.isComplete ? "end" : "")") }
        // Source 2's first event before its first packet, not before source 1's; the end events
        // after the last packet.
        #expect(order == ["e1", "p1", "e2", "p2", "p2", "p1", "e1end", "e2end"])
    }

    // MARK: - The format table

    @Test func sniffingRecognisesEachFormatByItsBytes() {
        #expect(MediaFileFormat.sniff(Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVEfmt ".utf8)) == .wav)
        #expect(MediaFileFormat.sniff(Array("RF64".utf8) + [0xFF, 0xFF, 0xFF, 0xFF] + Array("WAVEds64".utf8)) == .wav)
        #expect(MediaFileFormat.sniff([0, 0, 0, 0x20] + Array("ftypM4A ".utf8)) == .mp4)
        #expect(MediaFileFormat.sniff([0, 0, 0, 0x08] + Array("moov".utf8)) == .mp4)
        #expect(MediaFileFormat.sniff([0, 0, 0, 0x04] + Array("ftyp".utf8)) == nil, "a box smaller than its header")
        #expect(MediaFileFormat.sniff(Array("ID3\u{4}\u{0}".utf8)) == .adts)
        #expect(MediaFileFormat.sniff([0xFF, 0xF1, 0x50, 0x80]) == .adts)
        #expect(MediaFileFormat.sniff([0xFF, 0xFB, 0x90, 0x00]) == .mp3, "MPEG audio of layer III is MP3, not ADTS")
        #expect(MediaFileFormat.sniff(Array("OggS".utf8) + [0, 2] + [UInt8](repeating: 0, count: 20) + Array("\u{1}\u{13}OpusHead".utf8)) == .oggOpus)
        #expect(MediaFileFormat.sniff(Array("OggS".utf8) + [0, 2] + [UInt8](repeating: 0, count: 20) + Array("\u{1}\u{1E}\u{1}vorbis".utf8)) == nil,
                "Ogg Vorbis is libavformat's")
        #expect(MediaFileFormat.sniff([0, 0, 0, 1, 0x67, 0x64]) == .h264)
        #expect(MediaFileFormat.sniff([0, 0, 1, 0x09, 0xF0]) == .h264)
        #expect(MediaFileFormat.sniff([0, 0, 0, 1, 0x40, 0x01]) == .hevc)
        #expect(MediaFileFormat.sniff([0, 0, 0, 1, 0x46, 0x01]) == .hevc)
        #expect(MediaFileFormat.sniff([1, 2, 3, 4, 5, 6, 7, 8]) == nil)
        #expect(MediaFileFormat.sniff([]) == nil)
    }

    @Test func namesMapToOneFormatEach() {
        var seen: [String: MediaFileFormat] = [:]
        for format in MediaFileFormat.builtIn {
            for ext in format.fileExtensions {
                #expect(seen[ext] == nil, ".\(ext) is claimed twice")
                seen[ext] = format
                #expect(MediaFileFormat(fileExtension: ext.uppercased()) == format)
            }
        }
        #expect(MediaFileFormat(nameOf: "a/b.M4A") == .mp4)
        #expect(MediaFileFormat(nameOf: "noextension") == nil)
        #expect(MediaFileFormat.mp4.contents.contains(.gaplessInfo) && !MediaFileFormat.adts.contents.contains(.gaplessInfo))
    }

    @Test func contentWinsOverTheName() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("PipelineTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // An MP4 named .aac, a WAV named .pcm, and raw PCM whose name is all there is.
        let mp4 = directory.appendingPathComponent("really-mp4.aac")
        try Data([0, 0, 0, 0x10] + Array("ftypM4A ".utf8) + [0, 0, 0, 0]).write(to: mp4)
        let wav = directory.appendingPathComponent("really-wav.pcm")
        try Data(Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVEfmt ".utf8)).write(to: wav)
        let raw = directory.appendingPathComponent("raw.pcm")
        try Data([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]).write(to: raw)
        #expect(MediaFileFormat.detect(FilePath(mp4.path)) == .mp4)
        #expect(MediaFileFormat.detect(FilePath(wav.path)) == .wav)
        #expect(MediaFileFormat.detect(FilePath(raw.path)) == .rawPCM)
        #expect(MediaFileFormat.detect(FilePath(directory.appendingPathComponent("missing.m4a").path)) == .mp4)
    }
}

/// `WatchedInput` lets a job's control see its input reads: one number for the whole of one read,
/// none between reads (a live job's wait for the clock is not a read).
@Suite struct WatchedInputTests {
    struct Numbers: MediaSource {
        var left = 3
        let control: JobControl
        var seen: [UInt64?] = []
        mutating func next() throws(PipelineError) -> Int? {
            seen.append(control.inputReadInProgress)
            seen.append(control.inputReadInProgress)
            guard left > 0 else { return nil }
            left -= 1
            return left
        }
    }

    @Test func eachReadHasItsOwnNumberAndNoneBetween() throws {
        let control = JobControl()
        var source = WatchedInput(Numbers(control: control), control: control)
        #expect(control.inputReadInProgress == nil && !control.isReadingInput)
        while try source.next() != nil {
            #expect(control.inputReadInProgress == nil)
        }
        let seen = source.base.seen
        #expect(seen.count == 8 && seen.allSatisfy { $0 != nil })
        // The two looks inside one read agree; the next read has another number.
        for read in stride(from: 0, to: seen.count, by: 2) { #expect(seen[read] == seen[read + 1]) }
        #expect(Set(stride(from: 0, to: seen.count, by: 2).map { seen[$0] }).count == 4)
        #expect(!control.isReadingInput)
    }
}
