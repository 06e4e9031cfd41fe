import Foundation
import MediaCore
@testable import MP4
import Testing
import TestSupport

/// `SegmentSequenceValidation` (a fragmented track checked against ISO/IEC 14496-12 and CMAF
/// 23000-19) on FFmpeg's HLS and DASH output and on our own CMAFSegmenter's: a clean sequence
/// says nothing but what FFmpeg's HLS init really lacks; each rule is found, with its severity,
/// file and box, on the clean sequence with one box's bytes patched, and nothing unrelated is;
/// hostile bytes never trap; and the `sidx` parser.
@Suite(.blocking) struct SegmentSequenceValidationTests {
    // MARK: - The sequences

    /// An init segment and its media segments, each a file's bytes, checked end to end.
    struct SegmentFiles: Sendable {
        var names: [String]
        var files: [[UInt8]]

        var parts: [SegmentSequenceValidation.Part] { zip(names, files).map { .init(name: $0, byteCount: Int64($1.count)) } }
        var bytes: [UInt8] { files.flatMap { $0 } }

        func validate() throws(MP4Error) -> SegmentSequenceValidation {
            try SegmentSequenceValidation(source: ArrayRandomAccessSource(bytes), parts: parts)
        }

        subscript(name: String) -> [UInt8] { files[names.firstIndex(of: name)!] }

        /// The sequence with the file `name` edited.
        func editing(_ name: String, _ edit: (inout [UInt8]) throws -> Void) rethrows -> SegmentFiles {
            var copy = self
            try edit(&copy.files[names.firstIndex(of: name)!])
            return copy
        }

        /// The sequence with every media segment edited.
        func editingSegments(_ edit: (inout [UInt8]) throws -> Void) rethrows -> SegmentFiles {
            var copy = self
            for index in copy.files.indices.dropFirst() { try edit(&copy.files[index]) }
            return copy
        }
    }

    /// `ffmpeg -f lavfi -i sine=f=440:d=3:r=48000 -c:a aac -b:a 64k` (3 s of mono AAC-LC at
    /// 48 kHz: FFmpeg's 1024 samples of priming, 141 whole frames and a last one of 640) as
    /// 1-second HLS segments: init.mp4, index0.m4s … index3.m4s, each `styp sidx moof mdat`.
    static let hls = Result { () throws -> SegmentFiles in
        try ffmpegSequence(["-f", "hls", "-hls_segment_type", "fmp4", "-hls_time", "1", "-hls_playlist_type", "vod", "index.m3u8"],
                           initName: "init.mp4", segmentPrefix: "index")
    }
    /// The same as DASH: the same segments, but the init's edit skips the priming (`media_time`
    /// 1024, `segment_duration` 0).
    static let dash = Result { () throws -> SegmentFiles in
        try ffmpegSequence(["-f", "dash", "-seg_duration", "1", "manifest.mpd"], initName: "init-stream0.m4s", segmentPrefix: "chunk-stream0-")
    }

    static func ffmpegSequence(_ output: [String], initName: String, segmentPrefix: String) throws -> SegmentFiles {
        let directory = try MediaTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try MediaTool.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=3:r=48000", "-c:a", "aac", "-b:a", "64k"] + output.dropLast()
                             + [directory.appendingPathComponent(output.last!).path])
        let segments = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasPrefix(segmentPrefix) && $0.hasSuffix(".m4s") }.sorted()
        let names = [initName] + segments
        return SegmentFiles(names: names, files: try names.map { try MediaTool.bytes(directory.appendingPathComponent($0)) })
    }

    /// FFmpeg's priming plus 3 s at 48 kHz: what the `trun`s add up to.
    static let totalDuration: Int64 = 1024 + 3 * 48000
    static let priming = "encoder priming not signalled"

    /// Our own CMAF (`CMAFSegmenter`, the packager's): 44.1 kHz AAC, 1024 of priming, 4 segments
    /// of 5 packets whose last lasts `lastDuration`; the header's iTunSMPB says `validFrameCount`
    /// (the samples after the priming, by default exactly those there are).
    static func ours(lastDuration: Int64 = 500, validFrameCount: Int64? = nil) throws -> SegmentFiles {
        let segmenter = try CMAFSegmenter(format: MuxerTests.format, priming: 1024)
        var segments: [[UInt8]] = []
        for index in 0..<20 {
            let duration = index == 19 ? lastDuration : 1024
            segmenter.append(MediaSample(data: [UInt8](repeating: UInt8(index), count: 40 + index),
                                         presentationTime: MediaTime(value: Int64(index) * 1024, timescale: 44100),
                                         duration: MediaTime(value: duration, timescale: 44100), format: MuxerTests.format))
            if index % 5 == 4 { segments.append(try #require(segmenter.cutSegment()).bytes) }
        }
        let total = 19 * 1024 + lastDuration
        let header = segmenter.header(validFrameCount: validFrameCount ?? total - 1024, mediaDuration: total)
        return SegmentFiles(names: ["header.mp4"] + (1...4).map { "segment-0000\($0).m4s" }, files: [header] + segments)
    }

    // MARK: - Clean

    @Test func cleanHLSSequenceSaysOnlyThatThePrimingIsNotSignalled() throws {
        let clean = try Self.hls.get()
        #expect(clean.names == ["init.mp4", "index0.m4s", "index1.m4s", "index2.m4s", "index3.m4s"])
        let validation = try clean.validate()
        // FFmpeg's HLS init has an edit whose media_time is 0 and no iTunSMPB: its priming is heard.
        #expect(validation.findings.count == 1, "\(validation.findings)")
        let priming = try #require(validation.findings.first)
        #expect(priming.rule == Self.priming && priming.severity == .warning)
        #expect(priming.file == "init.mp4" && priming.location == "moov/trak[1]/edts/elst")
        #expect(!validation.claimsCMAF)

        let track = try #require(validation.track)
        #expect(track.trackID == 1 && track.timescale == 48000 && track.sampleEntryType == "mp4a")
        #expect(track.codecs == "mp4a.40.2" && track.sampleRate == 48000 && track.channelCount == 1 && track.audioObjectType == 2)
        #expect(track.frameDuration == 1024 && track.priming == 0 && track.validLength == nil)

        // One timing per media segment, each what the segment's own boxes say.
        #expect(validation.segments.map(\.name) == Array(clean.names.dropFirst()))
        var next: Int64 = 0
        for (timing, name) in zip(validation.segments, clean.names.dropFirst()) {
            let bytes = clean[name]
            let tfdt = try #require(Box.find("moof/traf/tfdt", in: bytes))
            let tfhd = try #require(Box.find("moof/traf/tfhd", in: bytes))
            let trun = try #require(Box.find("moof/traf/trun", in: bytes))
            #expect(Box.flags(bytes, trun) & 0x100 == 0, "the durations are tfhd's default")
            let count = Int(Box.u32(bytes, trun.payload + 4))
            #expect(timing.firstDecodeTime == Box.decodeTime(bytes, tfdt))
            #expect(timing.firstDecodeTime == next, "\(name) starts where the one before ended")
            #expect(timing.sampleCount == count)
            #expect(timing.duration == Int64(count) * Int64(try #require(Box.defaultSampleDuration(bytes, tfhd))))
            #expect(timing.byteCount == Int64(bytes.count) && timing.fragmentCount == 1)
            next = (timing.firstDecodeTime ?? 0) + timing.duration
        }
        #expect(validation.segments.map(\.sampleCount) == [47, 47, 47, 1])
        #expect(validation.segments.map(\.firstDecodeTime) == [0, 48128, 96256, 144_384])
        #expect(validation.segments.reduce(0) { $0 + $1.duration } == Self.totalDuration)
        #expect(validation.segments.last?.duration == 640, "FFmpeg trims the tail: the last frame is short")
    }

    @Test func cleanDASHSequenceSaysNothing() throws {
        let clean = try Self.dash.get()
        #expect(clean.names.count == 5)
        let validation = try clean.validate()
        #expect(validation.findings.isEmpty, "\(validation.findings)")
        let track = try #require(validation.track)
        #expect(track.priming == 1024 && track.validLength == nil && track.codecs == "mp4a.40.2" && track.frameDuration == 1024)
        #expect(validation.segments.map(\.name) == Array(clean.names.dropFirst()))
        #expect(validation.segments.reduce(0) { $0 + $1.duration } == Self.totalDuration)
    }

    /// FFmpeg's DASH init with its edit's segment_duration set to `milliseconds` (mvhd's
    /// timescale is 1000): the valid length.
    static func dashWithValidLength(milliseconds: UInt32) throws -> SegmentFiles {
        let clean = try Self.dash.get()
        return try clean.editing(clean.names[0]) { bytes in
            let elst = try #require(Box.find("moov/trak/edts/elst", in: bytes))
            try #require(bytes[elst.payload] == 0 && Box.u32(bytes, elst.payload + 4) == 1, "one version-0 entry")
            #expect(Box.u32(bytes, Box.find("moov/mvhd", in: bytes)!.payload + 12) == 1000)
            Box.setU32(&bytes, elst.payload + 8, milliseconds)
        }
    }

    @Test func cleanSequenceWithAValidLengthSaysNothing() throws {
        // 3000 ms: the samples (1024 + 144000) end exactly where the edit does.
        let validation = try Self.dashWithValidLength(milliseconds: 3000).validate()
        #expect(validation.findings.isEmpty, "\(validation.findings)")
        #expect(validation.track?.priming == 1024 && validation.track?.validLength == 144_000)
    }

    /// Our own CMAF: it claims cmfc, its styp has cmfs, its edit skips the priming and its
    /// iTunSMPB gives the valid length, which the short last sample ends at.
    @Test func ourCMAFSaysNothing() throws {
        let sequence = try Self.ours()
        let validation = try sequence.validate()
        #expect(validation.findings.isEmpty, "\(validation.findings)")
        #expect(validation.claimsCMAF)
        let track = try #require(validation.track)
        #expect(track.timescale == 44100 && track.sampleRate == 44100 && track.channelCount == 2 && track.frameDuration == 1024)
        #expect(track.priming == 1024 && track.validLength == 19 * 1024 + 500 - 1024)
        #expect(validation.segments.map(\.firstDecodeTime) == [0, 5120, 10240, 15360])
        #expect(validation.segments.map(\.duration) == [5120, 5120, 5120, 4 * 1024 + 500])
        #expect(validation.segments.map(\.sampleCount) == [5, 5, 5, 5])
    }

    /// FFmpeg's fragmented MP4 of a 3-s tone: `ftyp moov`, then four `moof mdat` of about a
    /// second, then `mfra`.
    static func ffmpegFragmented() throws -> [UInt8] {
        let directory = try MediaTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("f.mp4")
        try MediaTool.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=3:r=48000", "-c:a", "aac", "-b:a", "64k",
                              "-movflags", "frag_keyframe+empty_moov+default_base_moof", "-frag_duration", "1000000", url.path])
        return try MediaTool.bytes(url)
    }

    /// A single fragmented file (`ftyp moov (moof mdat)… mfra`) is one part: one timing for it.
    @Test func oneFragmentedFileIsOnePart() throws {
        let bytes = try Self.ffmpegFragmented()
        let validation = try SegmentSequenceValidation(source: ArrayRandomAccessSource(bytes), parts: [.init(name: "f.mp4", byteCount: Int64(bytes.count))])
        // FFmpeg's fragmented MP4 has no edit list at all.
        #expect(validation.findings.map(\.rule) == [Self.priming], "\(validation.findings)")
        #expect(validation.findings.first?.location == "moov/trak[1]")
        let timing = try #require(validation.segments.first)
        #expect(validation.segments.count == 1)
        #expect(timing.name == "f.mp4" && timing.firstDecodeTime == 0 && timing.duration == Self.totalDuration)
        #expect(timing.fragmentCount == 4 && timing.sampleCount == 142 && timing.byteCount == Int64(bytes.count))
    }

    // MARK: - One rule each

    /// The finding of `rule` in `file`: exactly one, with that severity and location.
    @discardableResult
    static func expectFinding(_ validation: SegmentSequenceValidation, _ rule: String, _ severity: ValidationFinding.Severity,
                              file: String, location: String, sourceLocation: SourceLocation = #_sourceLocation) -> ValidationFinding? {
        let matching = validation.findings.filter { $0.rule == rule && $0.file == file }
        #expect(matching.count == 1, "\(rule) in \(file): \(validation.findings)", sourceLocation: sourceLocation)
        guard let finding = matching.first else { return nil }
        #expect(finding.severity == severity, "\(finding)", sourceLocation: sourceLocation)
        #expect(finding.location == location, "\(finding)", sourceLocation: sourceLocation)
        return finding
    }

    /// The rules found, but FFmpeg's HLS init's own warning.
    static func rules(_ validation: SegmentSequenceValidation) -> Set<String> {
        Set(validation.findings.map(\.rule)).subtracting([priming])
    }

    @Test func tfdtContinuity() throws {
        // A frame's gap before index1.m4s: every later tfdt (and sidx) a frame late.
        let gap = try Self.hls.get().editingSegments { bytes in
            let tfdt = try #require(Box.find("moof/traf/tfdt", in: bytes))
            let time = Box.decodeTime(bytes, tfdt)
            guard time > 0 else { return }
            Box.setDecodeTime(&bytes, tfdt, time + 1024)
            let sidx = try #require(Box.find("sidx", in: bytes))
            let fields = Box.segmentIndexFields(bytes, sidx)
            #expect(fields.wide, "FFmpeg writes a version-1 sidx")
            Box.setU64(&bytes, fields.earliest, Box.u64(bytes, fields.earliest) + 1024)
        }.validate()
        let finding = Self.expectFinding(gap, "tfdt continuity", .error, file: "index1.m4s", location: "moof[1]/traf/tfdt")
        #expect(finding?.expected.hasPrefix("48128") == true && finding?.found == "49152")
        #expect(Self.rules(gap) == ["tfdt continuity"], "\(gap.findings)")
        #expect(gap.findings.count == 2)
    }

    @Test func mfhdSequenceNumberIncreases() throws {
        let repeated = try Self.hls.get().editing("index2.m4s") { bytes in
            let mfhd = try #require(Box.find("moof/mfhd", in: bytes))
            #expect(Box.u32(bytes, mfhd.payload + 4) == 3)
            Box.setU32(&bytes, mfhd.payload + 4, 2)
        }.validate()
        let finding = Self.expectFinding(repeated, "mfhd sequence_number increases", .error, file: "index2.m4s", location: "moof[1]/mfhd")
        #expect(finding?.found == "2" && finding?.expected == "more than 2")
        #expect(Self.rules(repeated) == ["mfhd sequence_number increases"], "\(repeated.findings)")
    }

    @Test func oneTrackPerFragment() throws {
        // A second traf, a copy of the first for track 2, after it.
        let second = try Self.hls.get().editing("index1.m4s") { bytes in
            let traf = try #require(Box.find("moof/traf", in: bytes))
            var copy = Array(bytes[traf.offset..<traf.end])
            Box.setU32(&copy, try #require(Box.find("traf/tfhd", in: copy)).payload + 4, 2)
            Box.replaceInMoof(&bytes, traf, with: Array(bytes[traf.offset..<traf.end]) + copy)
        }.validate()
        // FFmpeg's init claims no CMAF: the traf count is CMAF's rule (23000-19 7.3.2.3), a warning
        // for its segments (14496-12 8.8 allows several trafs).
        Self.expectFinding(second, "one track per fragment", .warning, file: "index1.m4s", location: "moof[1]")
        Self.expectFinding(second, "one track per fragment: the init's track", .error, file: "index1.m4s", location: "moof[1]/traf/tfhd")
        #expect(Self.rules(second).isSuperset(of: ["one track per fragment", "one track per fragment: the init's track"]))
        #expect(!Self.rules(second).contains("tfdt continuity") && !Self.rules(second).contains("samples inside the mdat that follows"),
                "the first traf is still read: \(second.findings)")

        // The only traf for a track the init does not declare.
        let foreign = try Self.hls.get().editing("index1.m4s") { bytes in
            Box.setU32(&bytes, try #require(Box.find("moof/traf/tfhd", in: bytes)).payload + 4, 2)
        }.validate()
        let finding = Self.expectFinding(foreign, "one track per fragment: the init's track", .error, file: "index1.m4s", location: "moof[1]/traf/tfhd")
        #expect(finding?.expected == "track_ID 1" && finding?.found == "2")
        #expect(foreign.segments[1].sampleCount == 0 && foreign.segments[1].firstDecodeTime == nil, "track 2's samples are not the track's")
        // The reader's damage ("a run for track 2") is in index1.m4s, not in the init.
        // A bug this test found, now fixed: MP4File's damage over the whole sequence is named after the init, at a byte of the concatenation.
        #expect(foreign.findings.filter { $0.file == "init.mp4" }.map(\.rule) == [Self.priming], "\(foreign.findings)")
    }

    @Test func samplesInsideTheMdatThatFollows() throws {
        let past = try Self.hls.get().editing("index2.m4s") { bytes in
            let trun = try #require(Box.find("moof/traf/trun", in: bytes))
            #expect(Box.flags(bytes, trun) & 0x01 != 0)
            Box.setU32(&bytes, trun.payload + 8, Box.u32(bytes, trun.payload + 8) + 64)
        }.validate()
        let finding = Self.expectFinding(past, "samples inside the mdat that follows", .error, file: "index2.m4s", location: "moof[1]/traf/trun")
        // In index2.m4s's bytes: the mdat's payload, and the run 64 bytes on.
        let mdat = try #require(Box.find("mdat", in: try Self.hls.get()["index2.m4s"]))
        #expect(finding?.expected == "bytes \(mdat.payload)..<\(mdat.end)" && finding?.found == "bytes \(mdat.payload + 64)..<\(mdat.end + 64)")
        #expect(Self.rules(past) == ["samples inside the mdat that follows"], "\(past.findings)")
    }

    @Test func aSampleLastsOneFrame() throws {
        // index1.m4s's samples 10 and 11 last 1000 and 1048: the segment's length is unchanged.
        let uneven = try Self.hls.get().editing("index1.m4s") { bytes in
            let trun = try #require(Box.find("moof/traf/trun", in: bytes))
            let rebuilt = try #require(Box.trunWithDurations(bytes, trun) { index in index == 9 ? 1000 : index == 10 ? 1048 : 1024 })
            Box.replaceInMoof(&bytes, trun, with: rebuilt)
        }.validate()
        let finding = Self.expectFinding(uneven, "whole frames: a sample lasts one frame (but the last)", .error,
                                         file: "index1.m4s", location: "moof[1]/traf/trun sample 10")
        #expect(finding?.expected == "1024" && finding?.found == "1000 (and 1 more like it in this file)")
        #expect(Self.rules(uneven) == ["whole frames: a sample lasts one frame (but the last)"], "\(uneven.findings)")
        #expect(uneven.segments[1].duration == 48128 && uneven.segments[1].sampleCount == 47)
    }

    @Test func repeatedFindingsCollapseIntoOnePerFileAndRule() throws {
        // tfhd's default_sample_duration 1000 in index1.m4s: 47 samples that are not a frame.
        let short = try Self.hls.get().editing("index1.m4s") { bytes in
            let tfhd = try #require(Box.find("moof/traf/tfhd", in: bytes))
            Box.setU32(&bytes, try #require(Box.defaultSampleDurationOffset(bytes, tfhd)), 1000)
        }.validate()
        let finding = Self.expectFinding(short, "whole frames: a sample lasts one frame (but the last)", .error,
                                         file: "index1.m4s", location: "moof[1]/traf/trun sample 1")
        #expect(finding?.found == "1000 (and 46 more like it in this file)")
        // What follows from it: index2.m4s starts late, and the sidx says the old length.
        #expect(Self.rules(short) == ["whole frames: a sample lasts one frame (but the last)", "tfdt continuity", "sidx subsegment_duration"],
                "\(short.findings)")
        Self.expectFinding(short, "tfdt continuity", .error, file: "index2.m4s", location: "moof[1]/traf/tfdt")

        // One rule broken in every segment: one finding per file, none collapsed across files.
        let everywhere = try Self.hls.get().editingSegments { bytes in
            let tfhd = try #require(Box.find("moof/traf/tfhd", in: bytes))
            Box.setFlags(&bytes, tfhd, Box.flags(bytes, tfhd) & ~0x02_0000)
        }.validate()
        let rule = "CMAF: default-base-is-moof"
        #expect(everywhere.findings.filter { $0.rule == rule }.map(\.file) == ["index0.m4s", "index1.m4s", "index2.m4s", "index3.m4s"])
        #expect(everywhere.findings.allSatisfy { !$0.found.contains("more like it") })
        #expect(Self.rules(everywhere) == [rule], "\(everywhere.findings)")
    }

    @Test func theLastSampleAtMostAFrame() throws {
        // The last sample 2048 long (and the sidx saying so, so that nothing else is wrong).
        let long = try Self.hls.get().editing("index3.m4s") { bytes in
            let tfhd = try #require(Box.find("moof/traf/tfhd", in: bytes))
            let offset = try #require(Box.defaultSampleDurationOffset(bytes, tfhd))
            #expect(Box.u32(bytes, offset) == 640)
            Box.setU32(&bytes, offset, 2048)
            let fields = Box.segmentIndexFields(bytes, try #require(Box.find("sidx", in: bytes)))
            Box.setU32(&bytes, fields.reference + 4, 2048)
        }.validate()
        let finding = Self.expectFinding(long, "whole frames: the last sample at most a frame", .error,
                                         file: "index3.m4s", location: "moof[1]/traf/trun sample 1")
        #expect(finding?.expected == "1…1024" && finding?.found == "2048")
        #expect(Self.rules(long) == ["whole frames: the last sample at most a frame"], "\(long.findings)")
    }

    @Test func moofFollowedByItsMdat() throws {
        // index1.m4s's mdat renamed: the moof is followed by a free.
        let renamed = try Self.hls.get().editing("index1.m4s") { bytes in
            Box.rename(&bytes, try #require(Box.find("mdat", in: bytes)), to: "free")
        }.validate()
        let finding = Self.expectFinding(renamed, "moof followed by its mdat", .error, file: "index1.m4s", location: "moof[1]")
        #expect(finding?.found == "free")
        // Without its mdat the fragment is not one the sidx can reference.
        #expect(Self.rules(renamed) == ["moof followed by its mdat", "sidx referenced_size"], "\(renamed.findings)")

        // The last segment ends with its moof: its mdat moved before it (styp sidx mdat moof), the
        // trun's data_offset pointing back at the samples.
        let clean = try Self.hls.get()
        let cut = try clean.editing("index3.m4s") { bytes in
            let moof = try #require(Box.find("moof", in: bytes))
            let mdat = try #require(Box.find("mdat", in: bytes))
            #expect(mdat.end == bytes.count && moof.end == mdat.offset)
            var moved = Array(bytes[moof.offset..<moof.end])
            let trun = try #require(Box.find("moof/traf/trun", in: moved))
            Box.setU32(&moved, trun.payload + 8, UInt32(bitPattern: Int32(mdat.headerSize - mdat.size)))
            bytes = Array(bytes[..<moof.offset]) + Array(bytes[mdat.offset..<mdat.end]) + moved
        }.validate()
        let end = Self.expectFinding(cut, "moof followed by its mdat", .error, file: "index3.m4s", location: "moof[1]")
        #expect(end?.found == "the end of the segment")
        #expect(Self.rules(cut) == ["moof followed by its mdat", "sidx referenced_size"], "\(cut.findings)")
        #expect(cut.segments.last?.duration == 640, "the fragment is still read")

        // A segment in the middle ends with its moof: the next segment's styp follows it, but the
        // moof is index1.m4s's.
        let middle = try clean.editing("index1.m4s") { bytes in bytes.removeSubrange(try #require(Box.find("mdat", in: bytes)).offset...) }.validate()
        #expect(middle.findings.contains { $0.rule == "moof followed by its mdat" && $0.found == "the end of the segment" })
        // A bug this test found, now fixed: the finding names the file of the box after the moof (index2.m4s), not the moof's.
        #expect(middle.findings.contains { $0.rule == "moof followed by its mdat" && $0.file == "index1.m4s" }, "\(middle.findings)")
    }

    @Test func aMediaSegmentHoldsNoHeaderBox() throws {
        let ftyp = try Self.hls.get().editing("index1.m4s") { bytes in
            Box.rename(&bytes, try #require(Box.find("styp", in: bytes)), to: "ftyp")
        }.validate()
        Self.expectFinding(ftyp, "a media segment holds no header box", .error, file: "index1.m4s", location: "ftyp")
        #expect(Self.rules(ftyp) == ["a media segment holds no header box"], "\(ftyp.findings)")

        // A moov in index2.m4s (its sidx renamed).
        let moov = try Self.hls.get().editing("index2.m4s") { bytes in
            Box.rename(&bytes, try #require(Box.find("sidx", in: bytes)), to: "moov")
        }.validate()
        Self.expectFinding(moov, "a media segment holds no header box", .error, file: "index2.m4s", location: "moov")
        #expect(Self.rules(moov).isSubset(of: ["a media segment holds no header box", "damage a reader steps over"]), "\(moov.findings)")
    }

    /// FFmpeg's HLS sequence whose init claims CMAF: its ftyp's compatible brand mp41 patched to cmfc.
    static func claimingCMAF(_ sequence: SegmentFiles) throws -> SegmentFiles {
        try sequence.editing("init.mp4") { bytes in
            let ftyp = try #require(Box.find("ftyp", in: bytes))
            let brands = stride(from: ftyp.payload + 8, to: ftyp.end, by: 4).map { String(decoding: bytes[$0..<($0 + 4)], as: UTF8.self) }
            let index = try #require(brands.firstIndex(of: "mp41"))
            bytes.replaceSubrange((ftyp.payload + 8 + 4 * index)..<(ftyp.payload + 12 + 4 * index), with: Array("cmfc".utf8))
        }
    }

    @Test func tfdtPresentIsAWarningUnlessTheInitClaimsCMAF() throws {
        let withoutTfdt = try Self.hls.get().editing("index1.m4s") { bytes in
            Box.rename(&bytes, try #require(Box.find("moof/traf/tfdt", in: bytes)), to: "free")
        }
        let plain = try withoutTfdt.validate()
        #expect(!plain.claimsCMAF)
        Self.expectFinding(plain, "CMAF: tfdt present", .warning, file: "index1.m4s", location: "moof[1]/traf/tfdt")
        #expect(Self.rules(plain) == ["CMAF: tfdt present"], "\(plain.findings)")
        // Without the tfdt the fragment continues where the one before ended.
        #expect(plain.segments[1].firstDecodeTime == 48128)

        let cmaf = try Self.claimingCMAF(withoutTfdt).validate()
        #expect(cmaf.claimsCMAF)
        Self.expectFinding(cmaf, "CMAF: tfdt present", .error, file: "index1.m4s", location: "moof[1]/traf/tfdt")
        // FFmpeg's styp (msdh, msix) has no CMAF brand: a warning per segment, nothing else.
        #expect(Self.rules(cmaf) == ["CMAF: tfdt present", "brands: a CMAF segment's styp"], "\(cmaf.findings)")
        #expect(cmaf.findings.filter { $0.rule == "brands: a CMAF segment's styp" }.allSatisfy { $0.severity == .warning && $0.location == "styp" })
    }

    @Test func defaultBaseIsMoof() throws {
        let cleared = try Self.hls.get().editing("index2.m4s") { bytes in
            let tfhd = try #require(Box.find("moof/traf/tfhd", in: bytes))
            #expect(Box.flags(bytes, tfhd) == 0x02_0038)
            Box.setFlags(&bytes, tfhd, 0x00_0038)
        }
        let plain = try cleared.validate()
        let finding = Self.expectFinding(plain, "CMAF: default-base-is-moof", .warning, file: "index2.m4s", location: "moof[1]/traf/tfhd")
        #expect(finding?.expected == "1" && finding?.found == "0")
        // The base is still the moof (the first traf's, 14496-12 8.8.7.1): the samples are found.
        #expect(Self.rules(plain) == ["CMAF: default-base-is-moof"], "\(plain.findings)")
        Self.expectFinding(try Self.claimingCMAF(cleared).validate(), "CMAF: default-base-is-moof", .error, file: "index2.m4s", location: "moof[1]/traf/tfhd")
    }

    @Test func trunDataOffset() throws {
        // index1.m4s's trun without its data_offset: its samples then start at the moof.
        let missing = try Self.hls.get().editing("index1.m4s") { bytes in
            let trun = try #require(Box.find("moof/traf/trun", in: bytes))
            var rebuilt = Array(bytes[trun.offset..<trun.end])
            rebuilt.removeSubrange(16..<20)
            Box.setU32(&rebuilt, 0, UInt32(rebuilt.count))
            Box.setU32(&rebuilt, 8, Box.u32(rebuilt, 8) & ~0x01)
            Box.replaceInMoof(&bytes, trun, with: rebuilt)
        }.validate()
        Self.expectFinding(missing, "CMAF: trun data_offset", .warning, file: "index1.m4s", location: "moof[1]/traf/trun")
        Self.expectFinding(missing, "samples inside the mdat that follows", .error, file: "index1.m4s", location: "moof[1]/traf/trun")
    }

    @Test func segmentIndexAgainstTheFragments() throws {
        let clean = try Self.hls.get()
        func patched(_ edit: @escaping (inout [UInt8], (earliest: Int, wide: Bool, reference: Int)) -> Void) throws -> SegmentSequenceValidation {
            try clean.editing("index1.m4s") { bytes in
                let sidx = try #require(Box.find("sidx", in: bytes))
                edit(&bytes, Box.segmentIndexFields(bytes, sidx))
            }.validate()
        }
        let time = try patched { bytes, fields in Box.setU64(&bytes, fields.earliest, 12345) }
        let timeFinding = Self.expectFinding(time, "sidx earliest_presentation_time", .error, file: "index1.m4s", location: "sidx at byte 24")
        #expect(timeFinding?.found == "12345")
        #expect(Self.rules(time) == ["sidx earliest_presentation_time"], "\(time.findings)")

        let size = try patched { bytes, fields in Box.setU32(&bytes, fields.reference, Box.u32(bytes, fields.reference) - 8) }
        Self.expectFinding(size, "sidx referenced_size", .error, file: "index1.m4s", location: "sidx at byte 24 reference 1")
        #expect(Self.rules(size) == ["sidx referenced_size"], "\(size.findings)")

        let duration = try patched { bytes, fields in Box.setU32(&bytes, fields.reference + 4, 48000) }
        let durationFinding = Self.expectFinding(duration, "sidx subsegment_duration", .error, file: "index1.m4s", location: "sidx at byte 24 reference 1")
        #expect(durationFinding?.found == "48000")
        #expect(Self.rules(duration) == ["sidx subsegment_duration"], "\(duration.findings)")

        let reference = try patched { bytes, fields in Box.setU32(&bytes, fields.earliest - 8, 7) }
        Self.expectFinding(reference, "sidx reference_ID", .error, file: "index1.m4s", location: "sidx at byte 24")
        let timescale = try patched { bytes, fields in Box.setU32(&bytes, fields.earliest - 4, 1000) }
        Self.expectFinding(timescale, "sidx timescale", .warning, file: "index1.m4s", location: "sidx at byte 24")
    }

    @Test func shortLastSampleAgainstTheValidLength() throws {
        // The edit says 2900 ms (139200 after the priming): the short last sample ends at 145024.
        let shorter = try Self.dashWithValidLength(milliseconds: 2900).validate()
        let last = "chunk-stream0-00004.m4s"
        let finding = Self.expectFinding(shorter, "short last sample against the valid length", .error, file: last,
                                         location: "moof[1]/traf/trun sample 1")
        #expect(finding?.expected.hasPrefix("the samples to end at 140224") == true && finding?.found == "\(Self.totalDuration)")
        #expect(shorter.findings.map(\.rule) == ["short last sample against the valid length"], "\(shorter.findings)")

        // Our own CMAF whose iTunSMPB says 100 samples fewer than there are.
        let ours = try Self.ours(validFrameCount: 19 * 1024 + 500 - 1024 - 100).validate()
        Self.expectFinding(ours, "short last sample against the valid length", .error, file: "segment-00004.m4s",
                           location: "moof[1]/traf/trun sample 5")
        #expect(ours.findings.map(\.rule) == ["short last sample against the valid length"], "\(ours.findings)")

        // A whole last frame that ends before the edit does (3100 ms): the samples do not cover it.
        let uncovered = try Self.dashWithValidLength(milliseconds: 3100).editing(last) { bytes in
            let tfhd = try #require(Box.find("moof/traf/tfhd", in: bytes))
            Box.setU32(&bytes, try #require(Box.defaultSampleDurationOffset(bytes, tfhd)), 1024)
            Box.setU32(&bytes, Box.segmentIndexFields(bytes, try #require(Box.find("sidx", in: bytes))).reference + 4, 1024)
        }.validate()
        Self.expectFinding(uncovered, "the samples cover the valid length", .error, file: last, location: "moof[1]/traf/trun sample 1")
        #expect(uncovered.findings.map(\.rule) == ["the samples cover the valid length"], "\(uncovered.findings)")
    }

    @Test func headerRules() throws {
        let noFtyp = try Self.hls.get().editing("init.mp4") { bytes in Box.rename(&bytes, try #require(Box.find("ftyp", in: bytes)), to: "free") }.validate()
        Self.expectFinding(noFtyp, "brands: the header starts with ftyp", .error, file: "init.mp4", location: "free")
        let noMvex = try Self.hls.get().editing("init.mp4") { bytes in Box.rename(&bytes, try #require(Box.find("moov/mvex", in: bytes)), to: "free") }.validate()
        Self.expectFinding(noMvex, "fragmented header: mvex", .error, file: "init.mp4", location: "moov")
        // styp second in index1.m4s (after its sidx, whose first_offset then skips the styp).
        let stypSecond = try Self.hls.get().editing("index1.m4s") { bytes in
            let styp = try #require(Box.find("styp", in: bytes))
            let sidx = try #require(Box.find("sidx", in: bytes))
            let fields = Box.segmentIndexFields(bytes, sidx)
            Box.setU64(&bytes, fields.earliest + 8, UInt64(styp.size))
            bytes = Array(bytes[sidx.offset..<sidx.end]) + Array(bytes[styp.offset..<styp.end]) + Array(bytes[sidx.end...])
        }.validate()
        let finding = Self.expectFinding(stypSecond, "brands: styp comes first in its segment", .error, file: "index1.m4s", location: "styp")
        #expect(finding?.found == "box 2")
        #expect(Self.rules(stypSecond) == ["brands: styp comes first in its segment"], "\(stypSecond.findings)")
    }

    @Test func anInitWithoutATrack() throws {
        let empty = try Self.hls.get().editing("init.mp4") { bytes in
            Box.rename(&bytes, try #require(Box.find("moov/trak", in: bytes)), to: "free")
        }.validate()
        Self.expectFinding(empty, "a track", .error, file: "init.mp4", location: "moov")
        #expect(empty.track == nil)
        // A bug this test found, now fixed: without a track the walk is skipped and no segment is timed: segments is empty, not one per media segment.
        #expect(empty.segments.count == 4)
    }

    @Test func aBoxEndsInsideItsSegment() throws {
        // index1.m4s's mdat claims the first 100 bytes of index2.m4s.
        let long = try Self.hls.get().editing("index1.m4s") { bytes in
            let mdat = try #require(Box.find("mdat", in: bytes))
            Box.setU32(&bytes, mdat.offset, UInt32(mdat.size + 100))
        }.validate()
        let mdat = try #require(Box.find("mdat", in: try Self.hls.get()["index1.m4s"]))
        let finding = Self.expectFinding(long, "a box ends inside its segment", .error, file: "index1.m4s", location: "mdat at byte \(mdat.offset)")
        #expect(finding?.expected == "\(mdat.size) bytes at most" && finding?.found == "\(mdat.size + 100)")
        // A bug this test found, now fixed: the walk goes on 100 bytes into index2.m4s (inside its moof) and skips that segment: nothing checked, nothing timed.
        #expect(long.segments[2].sampleCount == 47 && long.segments[2].firstDecodeTime == 96256, "\(long.segments)")
        #expect(!long.findings.contains { $0.rule == "tfdt continuity" }, "\(long.findings)")
    }

    @Test func boxStructure() throws {
        // Eight bytes after index2.m4s's mdat: a box header whose size (3) is less than its header.
        let garbage = try Self.hls.get().editing("index2.m4s") { bytes in bytes += Box.be32(3) + Array("free".utf8) }.validate()
        Self.expectFinding(garbage, "box structure", .error, file: "index2.m4s", location: "byte \(try Self.hls.get()["index2.m4s"].count)")
        // The reader's damage says the same, named after the init (see ``oneTrackPerFragment()``).
        #expect(Self.rules(garbage).isSubset(of: ["box structure", "damage a reader steps over"]), "\(garbage.findings)")
        // A bug this test found, now fixed: the walk stops at the bad header: index3.m4s, a part of its own, is neither checked nor timed.
        #expect(garbage.segments[3].sampleCount == 1 && garbage.segments[3].duration == 640, "\(garbage.segments)")
    }

    @Test func sampleDescriptionIndex() throws {
        // trex's default_sample_description_index 2, with one stsd entry: every fragment's runs.
        let second = try Self.hls.get().editing("init.mp4") { bytes in
            let trex = try #require(Box.find("moov/mvex/trex", in: bytes))
            #expect(Box.u32(bytes, trex.payload + 8) == 1)
            Box.setU32(&bytes, trex.payload + 8, 2)
        }.validate()
        for name in ["index0.m4s", "index1.m4s", "index2.m4s", "index3.m4s"] {
            let finding = Self.expectFinding(second, "sample_description_index names an stsd entry", .error, file: name, location: "moof[1]/traf/tfhd")
            #expect(finding?.expected == "1…1" && finding?.found == "2")
        }
    }

    @Test func theValidLengthOfATimelineThatDoesNotStartAtZero() throws {
        // Every tfdt (and sidx) a million units on: the edit's end (1024 + 144000) says nothing
        // about samples that start at 1000000, and the check is meant to be skipped then (it
        // is guarded by the first segment's tfdt being 0).
        let later = try Self.dashWithValidLength(milliseconds: 3000).editingSegments { bytes in
            let tfdt = try #require(Box.find("moof/traf/tfdt", in: bytes))
            Box.setDecodeTime(&bytes, tfdt, Box.decodeTime(bytes, tfdt) + 1_000_000)
            let fields = Box.segmentIndexFields(bytes, try #require(Box.find("sidx", in: bytes)))
            Box.setU64(&bytes, fields.earliest, Box.u64(bytes, fields.earliest) + 1_000_000)
        }.validate()
        #expect(later.segments.first?.firstDecodeTime == 1_000_000)
        // A bug this test found, now fixed: checkEnd reads `segments` before the walk sets it, so its guard always passes.
        #expect(later.findings.isEmpty, "\(later.findings)")
        // Only some segments of a timeline that does start at 0: their times are absolute, the check holds.
        let dash = try Self.dashWithValidLength(milliseconds: 3000)
        let tail = SegmentFiles(names: [dash.names[0]] + dash.names.dropFirst(2), files: [dash.files[0]] + dash.files.dropFirst(2))
        let validation = try tail.validate()
        #expect(validation.findings.isEmpty, "\(validation.findings)")
        #expect(validation.segments.first?.firstDecodeTime == 48128 && validation.segments.count == 3)
    }

    // MARK: - Hostile input

    /// Never a trap: an MP4Error, or findings that each name one of the parts, and a timing per
    /// media segment.
    static func expectNoTrap(_ bytes: [UInt8], _ parts: [SegmentSequenceValidation.Part], sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let names = Set(parts.map(\.name))
        do {
            let validation = try SegmentSequenceValidation(source: ArrayRandomAccessSource(bytes), parts: parts)
            let named = validation.findings.allSatisfy { names.contains($0.file) && !$0.rule.isEmpty }
            // An init without a track is a known issue (``anInitWithoutATrack()``): no timings.
            let timed = validation.segments.count == max(1, parts.count - 1) || (validation.track == nil && validation.segments.isEmpty)
            let sane = validation.segments.allSatisfy { $0.duration >= 0 && $0.sampleCount >= 0 && $0.fragmentCount >= 0 }
            #expect(named && timed && sane, "\(validation.findings) \(validation.segments)", sourceLocation: sourceLocation)
            return named && timed && sane
        } catch {
            // The init is `throws(MP4Error)`: any error here is one.
            _ = error as MP4Error
            return true
        }
    }

    @Test func truncationsNeverTrap() throws {
        let clean = try Self.hls.get()
        let bytes = clean.bytes
        let parts = clean.parts
        for length in stride(from: 0, through: bytes.count, by: 7) {
            // Each part keeps its name; those past the cut are empty.
            var start: Int64 = 0
            let cutParts = parts.map { part in
                defer { start += part.byteCount }
                return SegmentSequenceValidation.Part(name: part.name, byteCount: max(0, min(part.byteCount, Int64(length) - start)))
            }
            guard Self.expectNoTrap(Array(bytes[..<length]), cutParts) else { break }
        }
        // And one part: the whole truncated sequence as a single file.
        for length in stride(from: 0, through: bytes.count, by: 97) {
            guard Self.expectNoTrap(Array(bytes[..<length]), [.init(name: "one.mp4", byteCount: Int64(length))]) else { break }
        }
    }

    @Test func seededMutationsNeverTrap() throws {
        var generator = SplitMix64(state: 0x5EC5_E9E7_1A7E)
        for clean in [try Self.hls.get(), try Self.dash.get(), try Self.ours()] {
            let bytes = clean.bytes
            // The boxes' headers and fields, not the AAC payload, are what the validator reads:
            // most mutations land in the first bytes of a part.
            var starts: [Int] = []
            var total = 0
            for file in clean.files { starts.append(total); total += file.count }
            for _ in 0..<1200 {
                var mutated = bytes
                for _ in 0..<Int.random(in: 1...6, using: &generator) {
                    let part = Int.random(in: 0..<clean.files.count, using: &generator)
                    let span = Bool.random(using: &generator) ? min(clean.files[part].count, 400) : clean.files[part].count
                    let offset = starts[part] + Int.random(in: 0..<span, using: &generator)
                    let values: [UInt8] = [0, 0xFF, 0x7F, 0x80, 1, UInt8.random(in: 0...255, using: &generator)]
                    mutated[offset] = values[Int.random(in: 0..<values.count, using: &generator)]
                }
                guard Self.expectNoTrap(mutated, clean.parts) else { return }
            }
        }
    }

    // MARK: - sidx

    static func segmentIndexPayload(version: UInt8, earliest: UInt64, firstOffset: UInt64, count: UInt16,
                                    references: [(word: UInt32, duration: UInt32, sap: UInt32)]) -> [UInt8] {
        var bytes: [UInt8] = [version, 0, 0, 0] + Box.be32(1) + Box.be32(48000)
        if version == 0 {
            bytes += Box.be32(UInt32(earliest)) + Box.be32(UInt32(firstOffset))
        } else {
            bytes += Box.be32(UInt32(earliest >> 32)) + Box.be32(UInt32(truncatingIfNeeded: earliest))
                + Box.be32(UInt32(firstOffset >> 32)) + Box.be32(UInt32(truncatingIfNeeded: firstOffset))
        }
        bytes += [0, 0, UInt8(count >> 8), UInt8(count & 0xFF)]
        for reference in references { bytes += Box.be32(reference.word) + Box.be32(reference.duration) + Box.be32(reference.sap) }
        return bytes
    }

    static let sidxPath = BoxPath.root.appending("sidx")

    @Test func segmentIndexVersions() throws {
        let references: [(word: UInt32, duration: UInt32, sap: UInt32)] = [(0x8000_0100, 1000, 0x9000_0000), (512, 2000, 0)]
        let zero = try SegmentIndex(from: ByteReader(Self.segmentIndexPayload(version: 0, earliest: 1234, firstOffset: 16, count: 2,
                                                                                 references: references)), path: Self.sidxPath)
        #expect(zero.referenceID == 1 && zero.timescale == 48000 && zero.earliestPresentationTime == 1234 && zero.firstOffset == 16)
        #expect(zero.references == [.init(isIndex: true, size: 256, duration: 1000, startsWithSAP: true),
                                    .init(isIndex: false, size: 512, duration: 2000, startsWithSAP: false)])

        let one = try SegmentIndex(from: ByteReader(Self.segmentIndexPayload(version: 1, earliest: 0x1_0000_0005, firstOffset: 0x2_0000_0000, count: 2,
                                                                                references: references)), path: Self.sidxPath)
        #expect(one.earliestPresentationTime == 0x1_0000_0005 && one.firstOffset == 0x2_0000_0000)
        #expect(one.references == zero.references)

        // FFmpeg's: one reference, the fragment (moof + mdat) and its 47 frames.
        let clean = try Self.hls.get()
        let bytes = clean["index0.m4s"]
        let sidx = try #require(Box.find("sidx", in: bytes))
        let ffmpeg = try SegmentIndex(from: ByteReader(bytes, range: sidx.payload..<sidx.end), path: Self.sidxPath)
        let moof = try #require(Box.find("moof", in: bytes))
        let mdat = try #require(Box.find("mdat", in: bytes))
        #expect(ffmpeg.referenceID == 1 && ffmpeg.timescale == 48000 && ffmpeg.earliestPresentationTime == 0 && ffmpeg.firstOffset == 0)
        #expect(ffmpeg.references == [.init(isIndex: false, size: UInt32(moof.size + mdat.size), duration: 47 * 1024, startsWithSAP: true)])
    }

    @Test func segmentIndexCountPastItsBytesIsAnError() throws {
        // reference_count 65535 with one reference's bytes: an MP4Error, not an allocation.
        for version: UInt8 in [0, 1] {
            let payload = Self.segmentIndexPayload(version: version, earliest: 0, firstOffset: 0, count: 0xFFFF, references: [(100, 1024, 0)])
            #expect {
                _ = try SegmentIndex(from: ByteReader(payload), path: Self.sidxPath)
            } throws: { error in
                guard case .invalidField(_, let field, let value, _, _) = error as? MP4Error else { return false }
                return field == "reference_count" && value == 0xFFFF
            }
            // Two references claimed, one there.
            let short = Self.segmentIndexPayload(version: version, earliest: 0, firstOffset: 0, count: 2, references: [(100, 1024, 0)])
            #expect(throws: MP4Error.self) { _ = try SegmentIndex(from: ByteReader(short), path: Self.sidxPath) }
            // Cut anywhere before its end: an error.
            let whole = Self.segmentIndexPayload(version: version, earliest: 0, firstOffset: 0, count: 1, references: [(100, 1024, 0)])
            for length in 0..<whole.count {
                #expect(throws: MP4Error.self) { _ = try SegmentIndex(from: ByteReader(Array(whole[..<length])), path: Self.sidxPath) }
            }
            #expect(try SegmentIndex(from: ByteReader(whole), path: Self.sidxPath).references.count == 1)
        }
    }
}

// MARK: - A box walk for patching

/// Finds boxes in a file's bytes by path (`moof/traf/tfdt`, `moov/trak/edts/elst`; a component
/// may carry a 1-based index, `traf[2]`), and reads or patches their fields. Independent of the
/// module's parser.
extension SegmentSequenceValidationTests {
    enum Box {
        struct Found: Equatable {
            var offset: Int
            var size: Int
            var headerSize: Int
            var type: String
            var end: Int { offset + size }
            /// The first byte after the header (a full box's version).
            var payload: Int { offset + headerSize }
        }

        static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | UInt32($1) } }
        static func u64(_ bytes: [UInt8], _ at: Int) -> UInt64 { bytes[at..<(at + 8)].reduce(0) { $0 << 8 | UInt64($1) } }
        static func setU32(_ bytes: inout [UInt8], _ at: Int, _ value: UInt32) {
            for i in 0..<4 { bytes[at + i] = UInt8(truncatingIfNeeded: value >> (24 - 8 * i)) }
        }
        static func setU64(_ bytes: inout [UInt8], _ at: Int, _ value: UInt64) {
            for i in 0..<8 { bytes[at + i] = UInt8(truncatingIfNeeded: value >> (56 - 8 * i)) }
        }
        static func be32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }

        /// The boxes in `range`, up to the first that does not fit.
        static func children(_ bytes: [UInt8], in range: Range<Int>) -> [Found] {
            var boxes: [Found] = []
            var offset = range.lowerBound
            while offset + 8 <= range.upperBound {
                var size = Int(u32(bytes, offset))
                var header = 8
                if size == 1, offset + 16 <= range.upperBound { size = Int(clamping: u64(bytes, offset + 8)); header = 16 }
                if size == 0 { size = range.upperBound - offset }
                guard size >= header, size <= range.upperBound - offset else { break }
                boxes.append(Found(offset: offset, size: size, headerSize: header, type: String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)))
                offset += size
            }
            return boxes
        }

        static func find(_ path: String, in bytes: [UInt8]) -> Found? {
            var range = 0..<bytes.count
            var found: Found?
            for component in path.split(separator: "/") {
                var type = Substring(component)
                var index = 1
                if let open = component.firstIndex(of: "["), let number = Int(component[component.index(after: open)...].dropLast()) {
                    type = component[..<open]
                    index = number
                }
                let matching = children(bytes, in: range).filter { $0.type == type }
                guard matching.count >= index else { return nil }
                let box = matching[index - 1]
                found = box
                range = box.payload..<box.end
            }
            return found
        }

        static func flags(_ bytes: [UInt8], _ box: Found) -> UInt32 { u32(bytes, box.payload) & 0xFF_FFFF }
        static func setFlags(_ bytes: inout [UInt8], _ box: Found, _ flags: UInt32) {
            setU32(&bytes, box.payload, UInt32(bytes[box.payload]) << 24 | flags)
        }
        static func rename(_ bytes: inout [UInt8], _ box: Found, to type: String) {
            bytes.replaceSubrange((box.offset + 4)..<(box.offset + 8), with: Array(type.utf8))
        }

        /// `tfdt`'s baseMediaDecodeTime.
        static func decodeTime(_ bytes: [UInt8], _ tfdt: Found) -> Int64 {
            bytes[tfdt.payload] == 1 ? Int64(u64(bytes, tfdt.payload + 4)) : Int64(u32(bytes, tfdt.payload + 4))
        }
        static func setDecodeTime(_ bytes: inout [UInt8], _ tfdt: Found, _ time: Int64) {
            if bytes[tfdt.payload] == 1 { setU64(&bytes, tfdt.payload + 4, UInt64(time)) } else { setU32(&bytes, tfdt.payload + 4, UInt32(time)) }
        }

        /// Where `tfhd`'s default_sample_duration is, when present.
        static func defaultSampleDurationOffset(_ bytes: [UInt8], _ tfhd: Found) -> Int? {
            let flags = flags(bytes, tfhd)
            guard flags & 0x08 != 0 else { return nil }
            return tfhd.payload + 8 + (flags & 0x01 != 0 ? 8 : 0) + (flags & 0x02 != 0 ? 4 : 0)
        }
        static func defaultSampleDuration(_ bytes: [UInt8], _ tfhd: Found) -> UInt32? {
            defaultSampleDurationOffset(bytes, tfhd).map { u32(bytes, $0) }
        }

        /// Where `sidx`'s fields are: earliest_presentation_time (first_offset follows it), whether
        /// they are 64-bit, and the first reference's referenced_size word (subsegment_duration
        /// follows it).
        static func segmentIndexFields(_ bytes: [UInt8], _ sidx: Found) -> (earliest: Int, wide: Bool, reference: Int) {
            let wide = bytes[sidx.payload] == 1
            let earliest = sidx.payload + 12
            return (earliest, wide, earliest + (wide ? 16 : 8) + 4)
        }

        /// A `trun` of flags 0x201 (data offset, sample sizes) rewritten with a duration for each
        /// sample (0x301); `nil` for another layout.
        static func trunWithDurations(_ bytes: [UInt8], _ trun: Found, _ duration: (Int) -> UInt32) -> [UInt8]? {
            guard flags(bytes, trun) == 0x201 else { return nil }
            let count = Int(u32(bytes, trun.payload + 4))
            var body: [UInt8] = [bytes[trun.payload], 0, 0x03, 0x01] + be32(UInt32(count)) + Array(bytes[(trun.payload + 8)..<(trun.payload + 12)])
            for index in 0..<count { body += be32(duration(index)) + Array(bytes[(trun.payload + 12 + 4 * index)..<(trun.payload + 16 + 4 * index)]) }
            return be32(UInt32(8 + body.count)) + Array("trun".utf8) + body
        }

        /// Replaces `box`, inside the segment's moof, with `new`: the moof and the traf around it
        /// grow by the difference, and so (the mdat moving with them) do every trun's data_offset
        /// and the sidx's first referenced_size.
        static func replaceInMoof(_ bytes: inout [UInt8], _ box: Found, with new: [UInt8]) {
            let delta = new.count - box.size
            guard let moof = find("moof", in: bytes) else { return }
            let containers = [moof] + children(bytes, in: moof.payload..<moof.end).filter {
                $0.type == "traf" && $0 != box && $0.offset <= box.offset && box.end <= $0.end
            }
            bytes.replaceSubrange(box.offset..<box.end, with: new)
            for container in containers { setU32(&bytes, container.offset, UInt32(container.size + delta)) }
            guard let grown = find("moof", in: bytes) else { return }
            for traf in children(bytes, in: grown.payload..<grown.end) where traf.type == "traf" {
                for trun in children(bytes, in: traf.payload..<traf.end) where trun.type == "trun" && flags(bytes, trun) & 0x01 != 0 {
                    setU32(&bytes, trun.payload + 8, UInt32(bitPattern: Int32(bitPattern: u32(bytes, trun.payload + 8)) + Int32(delta)))
                }
            }
            if let sidx = find("sidx", in: bytes) {
                let reference = segmentIndexFields(bytes, sidx).reference
                setU32(&bytes, reference, UInt32(Int(u32(bytes, reference)) + delta))
            }
        }
    }
}

/// A stream that repeats one fragment (an HLS playlist naming one segment thousands of times)
/// costs the same few words however many times: the file counts its fragments and keeps none of
/// them, and the demuxer reads them again one `moof` at a time.
@Suite(.blocking) struct RepeatedFragmentTests {
    /// The init of FFmpeg's fragmented file, then its second fragment (moof and mdat) `count`
    /// times over.
    static func repeated(_ count: Int) throws -> [UInt8] {
        let bytes = try SegmentSequenceValidationTests.ffmpegFragmented()
        let moofs = try MovieEditor.topLevelBoxes(of: ArrayRandomAccessSource(bytes)).filter { $0.type == "moof" }
        try #require(moofs.count == 4)
        let second = Array(bytes[Int(moofs[1].offset)..<Int(moofs[2].offset)])
        return Array(bytes[..<Int(moofs[0].offset)]) + Array(repeating: second, count: count).flatMap { $0 }
    }

    @Test func aFileKeepsNothingPerFragment() throws {
        let five = try Self.repeated(5), fifty = try Self.repeated(50)
        let small = try MP4File(source: ArrayRandomAccessSource(five))
        let large = try MP4File(source: ArrayRandomAccessSource(fifty))
        // The boxes up to the first moof, the same however many follow; all of them counted.
        #expect(large.topLevelBoxes.map(\.type) == small.topLevelBoxes.map(\.type))
        #expect(large.topLevelBoxes.last?.type == "moof")
        #expect(large.topLevelBoxCount == (try MovieEditor.topLevelBoxes(of: ArrayRandomAccessSource(fifty))).count)
        let track = try #require(large.tracks.first)
        let perFragment = try #require(small.tracks.first).fragments.sampleCount / 5
        #expect(perFragment > 1)
        #expect(large.fragmentCount == 50 && track.fragments.runCount == 50 && track.fragments.sampleCount == 50 * perFragment)
        // The runs, read again, are the ones counted: one per repetition, each its own bytes.
        let runs = try large.fragmentRuns(trackID: track.id, in: ArrayRandomAccessSource(fifty))
        #expect(runs.count == 50 && runs.reduce(0) { $0 + $1.sampleCount } == track.fragments.sampleCount)
        #expect(Set(runs.map(\.dataOffset)).count == 50)
        #expect(Set(runs.map(\.firstDecodeTime)).count == 1, "each repetition carries the same tfdt")
        #expect(runs.map { $0.sizes?.reduce(Int64(0)) { $0 + Int64($1) } ?? 0 }.reduce(0, +) == track.fragments.byteCount)
    }

    /// The demuxer, reading the fragments as it goes, delivers every sample of every repetition,
    /// the same bytes each time.
    @Test func theDemuxerReadsEachRepetition() throws {
        let fifty = try Self.repeated(50)
        let demuxer = MP4Demuxer(source: ArrayRandomAccessSource(fifty), configuration: DemuxerConfiguration(mediaTypes: .audio))
        try demuxer.start()
        let track = try #require(demuxer.audioTrack)
        let perFragment = track.fragments.sampleCount / 50
        var samples: [[UInt8]] = []
        while let sample = try demuxer.nextAudioSample() { samples.append(sample.data) }
        #expect(samples.count == track.fragments.sampleCount)
        for repetition in 1..<50 {
            #expect(samples[(repetition * perFragment)..<((repetition + 1) * perFragment)].elementsEqual(samples[..<perFragment]))
        }
    }

    /// A read of a `moof` that fails is thrown once the samples before it are delivered; the next
    /// pull reads it again, and no sample is lost or repeated.
    @Test func aFailedReadOfAFragmentCanBeRetried() throws {
        let bytes = try Self.repeated(6)
        let counted = FlakySource(bytes, failOn: [])
        let clean = MP4Demuxer(source: counted, configuration: DemuxerConfiguration(mediaTypes: .audio))
        try clean.start()
        let readsToStart = counted.reads
        var expected: [[UInt8]] = []
        while let sample = try clean.nextAudioSample() { expected.append(sample.data) }
        #expect(counted.reads > readsToStart + 12, "the fragments are read again as the samples are")
        // Each read fails in turn, one per run: a box header, a moof, or a window of samples.
        for failing in 1...counted.reads {
            let flaky = FlakySource(bytes, failOn: [failing])
            let demuxer = MP4Demuxer(source: flaky, configuration: DemuxerConfiguration(mediaTypes: .audio))
            var samples: [[UInt8]] = []
            var failures = 0
            while failures < 3 {
                do {
                    try demuxer.start()
                    guard let sample = try demuxer.nextAudioSample() else { break }
                    samples.append(sample.data)
                } catch {
                    guard case .stream = error else { throw error }
                    // Thrown before the read is tried again: not held past a retry that worked.
                    #expect(!flaky.failedReadRetried, "read \(failing): the failure is thrown after its read was retried")
                    failures += 1
                }
            }
            #expect(failures == 1, "read \(failing)")
            #expect(samples == expected, "read \(failing)")
        }
    }

    /// The same failures through ``MP4Demuxer/nextSampleRun(trackID:maxBytes:)`` and
    /// ``MP4Demuxer/skipSamples(trackID:count:)``: every sample once, each failure thrown once.
    @Test func aFailedReadOfAFragmentCanBeRetriedByRunsAndSkips() throws {
        let bytes = try Self.repeated(6)
        let counted = FlakySource(bytes, failOn: [])
        let clean = MP4Demuxer(source: counted, configuration: DemuxerConfiguration(mediaTypes: .audio))
        try clean.start()
        var expected: [UInt8] = []
        while let run = try clean.nextSampleRun(trackID: try #require(clean.audioTrack).id) { expected += run.data }
        for failing in 1...counted.reads {
            let flaky = FlakySource(bytes, failOn: [failing])
            let demuxer = MP4Demuxer(source: flaky, configuration: DemuxerConfiguration(mediaTypes: .audio))
            var data: [UInt8] = []
            var failures = 0
            var skipped = false
            while failures < 3 {
                do {
                    try demuxer.start()
                    let id = try #require(demuxer.audioTrack).id
                    // One skip of no samples part way: it must not eat a pending failure.
                    if !skipped, data.count > expected.count / 2 { skipped = true; #expect(demuxer.skipSamples(trackID: id, count: 0) == 0) }
                    guard let run = try demuxer.nextSampleRun(trackID: id) else { break }
                    data += run.data
                } catch {
                    guard case .stream = error as? MP4Error else { throw error }
                    #expect(!flaky.failedReadRetried, "read \(failing): the failure is thrown after its read was retried")
                    failures += 1
                }
            }
            #expect(failures == 1 && data == expected, "read \(failing)")
        }
    }

    /// What the file counts is what the demuxer delivers, whatever the damage: a fragment that
    /// does not read, a file cut inside its last fragment, garbage after it. The tags still read.
    @Test func theDemuxerDeliversWhatTheFileCounts() throws {
        let clean = try Self.repeated(6)
        let moofs = try MovieEditor.topLevelBoxes(of: ArrayRandomAccessSource(clean)).filter { $0.type == "moof" }
        var broken = clean
        // The third moof's mfhd made a box that overruns it: the fragment is skipped.
        let third = Int(moofs[2].offset)
        broken[third + 8 + 3] = 0xFF
        let variants: [(String, [UInt8])] = [
            ("a fragment that does not read", broken),
            ("cut inside the last fragment", Array(clean.dropLast(100))),
            ("garbage after the fragments", clean + Array(repeating: 0xEE, count: 40)),
        ]
        for (name, bytes) in variants {
            let file = try MP4File(source: ArrayRandomAccessSource(bytes))
            let counted = try #require(file.tracks.first).fragments.sampleCount
            #expect(!file.damage.isEmpty, "\(name): damage reported")
            let demuxer = MP4Demuxer(source: ArrayRandomAccessSource(bytes), configuration: DemuxerConfiguration(mediaTypes: .audio))
            try demuxer.start()
            var delivered = 0
            while try demuxer.nextAudioSample() != nil { delivered += 1 }
            #expect(delivered == counted && counted > 0, "\(name): \(delivered) of \(counted)")
            #expect(throws: Never.self, "\(name)") { _ = try MovieEditor.itemList(of: file, source: ArrayRandomAccessSource(bytes)) }
        }
    }
}
