import Foundation
import MediaCore
@testable import MP4
import VideoBitstream
import Testing
import TestSupport

@Suite("Annex B conversion", .blocking)
struct AnnexBConverterTests {
    static let long: [UInt8] = [0, 0, 0, 1]
    static let short: [UInt8] = [0, 0, 1]

    // H.264 units: the record's SPS and PPS, in-band ones that differ, slices.
    static let sps: [UInt8] = [0x67, 0x64, 0x00, 0x1F, 0xAC]
    static let pps: [UInt8] = [0x68, 0xEE, 0x3C, 0x80]
    static let inBandSPS: [UInt8] = [0x67, 0x64, 0x00, 0x1F, 0xBB]
    static let inBandPPS: [UInt8] = [0x68, 0xEF]
    static let idr: [UInt8] = [0x65, 0x88, 0x84, 0x00]          // first_mb_in_slice 0
    static let idrSecondSlice: [UInt8] = [0x65, 0x08, 0x84]     // first_mb_in_slice != 0
    static let slice: [UInt8] = [0x41, 0x9A, 0x02]              // non-IDR
    static let sei: [UInt8] = [0x06, 0x05, 0x01, 0x80]

    /// Length-prefixed NAL units.
    static func sample(_ units: [[UInt8]], lengthSize: Int = 4) -> [UInt8] {
        var bytes: [UInt8] = []
        for unit in units {
            for shift in stride(from: (lengthSize - 1) * 8, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: unit.count >> shift)) }
            bytes += unit
        }
        return bytes
    }

    static func h264(lengthSize: Int = 4) throws -> AnnexBConverter {
        try AnnexBConverter(codec: .h264, nalUnitLengthSize: lengthSize, parameterSets: [sps, pps])
    }

    static var recordHeader: [UInt8] { long + sps + long + pps }

    // MARK: H.264 rules

    @Test func idrGetsTheRecordsParameterSetsAndStartCodesFollowFFmpeg() throws {
        var converter = try Self.h264()
        // SEI first: 4-byte start code (first in the sample), then SPS+PPS before the IDR, whose
        // start code is then 3 bytes.
        #expect(try converter.convert(Self.sample([Self.sei, Self.idr]), isSync: true, trackID: 1, sampleIndex: 0)
                == Self.long + Self.sei + Self.recordHeader + Self.short + Self.idr)
        // A non-IDR sample: 4-byte start code, then 3-byte ones.
        #expect(try converter.convert(Self.sample([Self.slice, Self.slice]), isSync: false, trackID: 1, sampleIndex: 1)
                == Self.long + Self.slice + Self.short + Self.slice)
        // The next IDR gets them again; its second slice does not.
        #expect(try converter.convert(Self.sample([Self.idr, Self.idrSecondSlice]), isSync: true, trackID: 1, sampleIndex: 2)
                == Self.recordHeader + Self.short + Self.idr + Self.short + Self.idrSecondSlice)
        // An IDR right after an IDR (first_mb_in_slice 0) starts a new IDR picture.
        #expect(try converter.convert(Self.sample([Self.idr]), isSync: true, trackID: 1, sampleIndex: 3)
                == Self.recordHeader + Self.short + Self.idr)
        // A lone continuation slice of an IDR picture gets nothing.
        #expect(try converter.convert(Self.sample([Self.idrSecondSlice]), isSync: false, trackID: 1, sampleIndex: 4)
                == Self.long + Self.idrSecondSlice)
    }

    @Test func inBandParameterSetsAreNotDuplicatedAndStateCarriesOver() throws {
        var converter = try Self.h264()
        #expect(try converter.convert(Self.sample([Self.inBandSPS, Self.inBandPPS, Self.idr]), isSync: true, trackID: 1, sampleIndex: 0)
                == Self.long + Self.inBandSPS + Self.long + Self.inBandPPS + Self.short + Self.idr)
        // FFmpeg's state stays "parameter sets seen" (new_idr is never cleared on this path), so a
        // later IDR gets nothing inserted: byte-identical behaviour, quirk included.
        #expect(try converter.convert(Self.sample([Self.slice]), isSync: false, trackID: 1, sampleIndex: 1) == Self.long + Self.slice)
        #expect(try converter.convert(Self.sample([Self.idr]), isSync: true, trackID: 1, sampleIndex: 2) == Self.long + Self.idr)
        // reset() (a seek) starts over.
        converter.reset()
        #expect(try converter.convert(Self.sample([Self.idr]), isSync: true, trackID: 1, sampleIndex: 3)
                == Self.recordHeader + Self.short + Self.idr)
    }

    @Test func inBandPPSGetsTheRecordsSPSAndInBandSPSGetsTheRecordsPPS() throws {
        var converter = try Self.h264()
        #expect(try converter.convert(Self.sample([Self.inBandPPS, Self.idr]), isSync: true, trackID: 1, sampleIndex: 0)
                == Self.long + Self.sps + Self.long + Self.inBandPPS + Self.short + Self.idr)
        var other = try Self.h264()
        #expect(try other.convert(Self.sample([Self.inBandSPS, Self.idr]), isSync: true, trackID: 1, sampleIndex: 0)
                == Self.long + Self.inBandSPS + Self.long + Self.pps + Self.short + Self.idr)
    }

    @Test func zeroLengthUnitsAreDroppedAndLengthSizesOneAndTwoWork() throws {
        var converter = try Self.h264()
        #expect(try converter.convert(Self.sample([[], Self.idr, []]), isSync: true, trackID: 1, sampleIndex: 0)
                == Self.recordHeader + Self.short + Self.idr)
        for lengthSize in [1, 2, 3] {
            var small = try Self.h264(lengthSize: lengthSize)
            #expect(try small.convert(Self.sample([Self.sei, Self.idr], lengthSize: lengthSize), isSync: true, trackID: 1, sampleIndex: 0)
                    == Self.long + Self.sei + Self.recordHeader + Self.short + Self.idr)
        }
        // An empty sample gives nothing and changes nothing.
        #expect(try converter.convert([], isSync: false, trackID: 1, sampleIndex: 1).isEmpty)
    }

    @Test func recordInitializerMatchesFlatInitializer() throws {
        var reader = ByteReader(ConfigurationRecordTests.avcBytes)
        let record = try AVCDecoderConfigurationRecord(from: &reader)
        var fromRecord = AnnexBConverter(configuration: record)
        var flat = try Self.h264()
        let input = Self.sample([Self.sei, Self.idr, Self.idrSecondSlice])
        #expect(try fromRecord.convert(input, isSync: true, trackID: 1, sampleIndex: 0) == flat.convert(input, isSync: true, trackID: 1, sampleIndex: 0))
    }

    // MARK: HEVC rules

    static let vps: [UInt8] = [0x40, 0x01, 0x0C]
    static let hevcSPS: [UInt8] = [0x42, 0x01, 0x01]
    static let hevcPPS: [UInt8] = [0x44, 0x01, 0xC1]
    static let hevcSEI: [UInt8] = [0x4E, 0x01, 0x05]
    static let idrWRADL: [UInt8] = [0x26, 0x01, 0xAF]     // type 19
    static let cra: [UInt8] = [0x2A, 0x01, 0xAD]          // type 21
    static let trail: [UInt8] = [0x02, 0x01, 0xD0]        // type 1

    @Test func hevcPrefixesEveryIRAPSampleOnceWithAllRecordUnits() throws {
        var reader = ByteReader(ConfigurationRecordTests.hevcBytes)
        let record = try HEVCDecoderConfigurationRecord(from: &reader)
        var converter = AnnexBConverter(configuration: record)
        let header = record.allNALUnits.flatMap { Self.long + $0 }
        #expect(header.count == 4 * 5 + 3 * 4 + 2)
        #expect(try converter.convert(Self.sample([Self.hevcSEI, Self.idrWRADL, Self.idrWRADL]), isSync: true, trackID: 1, sampleIndex: 0)
                == Self.long + Self.hevcSEI + header + Self.long + Self.idrWRADL + Self.long + Self.idrWRADL)
        #expect(try converter.convert(Self.sample([Self.trail, Self.trail]), isSync: false, trackID: 1, sampleIndex: 1)
                == Self.long + Self.trail + Self.long + Self.trail)
        // In-band parameter sets do not stop the insertion (FFmpeg inserts anyway).
        #expect(try converter.convert(Self.sample([Self.vps, Self.hevcSPS, Self.hevcPPS, Self.cra]), isSync: true, trackID: 1, sampleIndex: 2)
                == Self.long + Self.vps + Self.long + Self.hevcSPS + Self.long + Self.hevcPPS + header + Self.long + Self.cra)
        // The flat initializer with the same units gives the same bytes.
        var flat = try AnnexBConverter(codec: .hevc, nalUnitLengthSize: 4, parameterSets: record.allNALUnits)
        #expect(try flat.convert(Self.sample([Self.cra]), isSync: true, trackID: 1, sampleIndex: 0) == header + Self.long + Self.cra)
    }

    // MARK: errors

    @Test func nalLengthPastTheSampleIsATypedErrorNamingTrackAndSample() throws {
        var converter = try Self.h264()
        let bad = Self.sample([Self.inBandSPS]) + [0x00, 0x00, 0x00, 0x10, 0x65, 0x88]
        let error = #expect(throws: MP4Error.self) {
            try converter.convert(bad, isSync: true, trackID: 7, sampleIndex: 3, sampleOffset: 1000)
        }
        #expect(error == .invalidField(path: BoxPath(components: ["track 7 sample 3"]), field: "NAL unit length", value: 16,
                                       offset: 1009, allowed: "0...2 (the bytes left in the 15-byte sample)"))
        #expect(error?.description == "track 7 sample 3 at byte 1009: NAL unit length is 16, allowed 0...2 (the bytes left in the 15-byte sample)")
        // The failed sample left no trace: the in-band SPS was not remembered.
        #expect(try converter.convert(Self.sample([Self.idr]), isSync: true, trackID: 7, sampleIndex: 4) == Self.recordHeader + Self.short + Self.idr)

        let truncatedField = Self.sample([Self.idr]) + [0x00, 0x00]
        let second = #expect(throws: MP4Error.self) { try converter.convert(truncatedField, isSync: true, trackID: 7, sampleIndex: 5) }
        guard case .invalidField(_, "NAL unit length field", 2, 8, _)? = second else { Issue.record("\(String(describing: second))"); return }
    }

    @Test func hevcRejectsUnitsShorterThanTheirHeader() throws {
        var converter = try AnnexBConverter(codec: .hevc, nalUnitLengthSize: 4, parameterSets: [Self.vps])
        let error = #expect(throws: MP4Error.self) {
            try converter.convert(Self.sample([Self.trail, [0x02]]), isSync: false, trackID: 2, sampleIndex: 9)
        }
        guard case .invalidField(let path, "NAL unit length", 1, 7, _)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(path.description == "track 2 sample 9")
        #expect(throws: MP4Error.self) { try converter.convert([0x00, 0x00, 0x00, 0xFF, 0x02, 0x01], isSync: false, trackID: 2, sampleIndex: 10) }
    }

    @Test func badConfigurationIsRefused() {
        #expect(throws: MP4Error.self) { try AnnexBConverter(codec: .other("vp09"), nalUnitLengthSize: 4, parameterSets: []) }
        #expect(throws: MP4Error.self) { try AnnexBConverter(codec: .h264, nalUnitLengthSize: 0, parameterSets: []) }
        #expect(throws: MP4Error.self) { try AnnexBConverter(codec: .hevc, nalUnitLengthSize: 5, parameterSets: []) }
    }

    @Test func randomSamplesNeverTrap() throws {
        var generator = SplitMix64(state: 11)
        var h264 = try Self.h264(lengthSize: 2)
        var hevc = try AnnexBConverter(codec: .hevc, nalUnitLengthSize: 1, parameterSets: [Self.vps])
        for index in 0..<5000 {
            let sample = (0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if let output = try? h264.convert(sample, isSync: false, trackID: 1, sampleIndex: index) { #expect(output.count <= sample.count * 2 + 64) }
            _ = try? hevc.convert(sample, isSync: false, trackID: 1, sampleIndex: index)
        }
    }

    // MARK: byte identity with ffmpeg

    /// Converts every sample of the first video track of `file` and compares with
    /// `ffmpeg -i FILE -map 0:v:0 -c:v copy -f h264|hevc`.
    static func checkAgainstFFmpeg(_ file: URL, in directory: URL, lengthSize rewrite: Int? = nil, countInsertions: Bool = true) throws {
        let bytes = try MediaTool.bytes(file)
        let walked = try WalkedFile(bytes)
        let track = try #require(walked.videoTrack)
        let configuration = try #require(track.configuration)
        var reader = configuration.payload
        let isHEVC = configuration.type == "hvcC"
        var converter: AnnexBConverter
        var lengthSize: Int
        if isHEVC {
            let record = try HEVCDecoderConfigurationRecord(from: &reader)
            converter = AnnexBConverter(configuration: record)
            lengthSize = record.nalUnitLengthSize
            if let rewrite { converter = try AnnexBConverter(codec: .hevc, nalUnitLengthSize: rewrite, parameterSets: record.allNALUnits) }
        } else {
            let record = try AVCDecoderConfigurationRecord(from: &reader)
            converter = AnnexBConverter(configuration: record)
            lengthSize = record.nalUnitLengthSize
            if let rewrite { converter = try AnnexBConverter(codec: .h264, nalUnitLengthSize: rewrite, parameterSets: record.parameterSets) }
        }
        let ranges = track.sampleRanges()
        // The walk must see every packet ffmpeg sees.
        let probe = try MediaTool.ffprobeJSON(["-select_streams", "v:0", "-count_packets", "-show_entries", "stream=nb_read_packets", file.path])
        let packets = ((probe["streams"] as? [[String: Any]])?.first?["nb_read_packets"] as? String).flatMap { Int($0) }
        #expect(packets == ranges.count, "\(file.lastPathComponent): ffprobe \(String(describing: packets)) packets, walk \(ranges.count)")

        var output: [UInt8] = []
        var irapSamples = 0
        var idrSamples = 0
        var inBandSPS = false
        var recordInsertions = 0
        for (index, range) in ranges.enumerated() {
            var sample = Array(bytes[range])
            let types = Self.nalTypes(sample, lengthSize: lengthSize, hevc: isHEVC)
            if isHEVC, types.contains(where: { (16...23).contains($0) }) { irapSamples += 1 }
            if !isHEVC, types.contains(5) { idrSamples += 1 }
            if !isHEVC, types.contains(7) { inBandSPS = true }
            if let rewrite { sample = Self.sample(Self.units(sample, lengthSize: lengthSize), lengthSize: rewrite) }
            let converted = try converter.convert(sample, isSync: track.isSync(index), trackID: track.trackID, sampleIndex: index)
            if !isHEVC, !types.contains(7), Self.contains(converted, [0, 0, 0, 1, 0x67]) { recordInsertions += 1 }
            output += converted
        }
        // The insertions really happened: H.264 without in-band SPS gets the record in front of
        // every IDR sample.
        if countInsertions, !isHEVC, !inBandSPS {
            #expect(recordInsertions == idrSamples && idrSamples >= 1, "\(file.lastPathComponent): \(recordInsertions) insertions, \(idrSamples) IDR samples")
        }
        let reference = directory.appendingPathComponent(file.deletingPathExtension().lastPathComponent + (isHEVC ? ".hevc" : ".h264"))
        try MediaTool.ffmpeg(["-i", file.path, "-map", "0:v:0", "-c:v", "copy", "-f", isHEVC ? "hevc" : "h264", reference.path])
        let expected = try MediaTool.bytes(reference)
        #expect(output.count == expected.count, "\(file.lastPathComponent)")
        if output != expected {
            let first = (0..<min(output.count, expected.count)).first { output[$0] != expected[$0] } ?? min(output.count, expected.count)
            Issue.record("\(file.lastPathComponent): first difference at byte \(first) of \(expected.count)")
        }
        // HEVC puts the record in front of every IRAP sample.
        if countInsertions, isHEVC {
            let vpsCount = Self.occurrences(of: [0, 0, 0, 1, 0x40, 0x01], in: output)
            #expect(vpsCount >= irapSamples && irapSamples >= 1, "\(file.lastPathComponent): \(vpsCount) VPS for \(irapSamples) IRAP samples")
        }
    }

    static func units(_ sample: [UInt8], lengthSize: Int) -> [[UInt8]] {
        var units: [[UInt8]] = []
        var position = 0
        while position + lengthSize <= sample.count {
            let length = sample[position..<(position + lengthSize)].reduce(0) { $0 << 8 | Int($1) }
            position += lengthSize
            guard position + length <= sample.count else { break }
            units.append(Array(sample[position..<(position + length)]))
            position += length
        }
        return units
    }

    static func nalTypes(_ sample: [UInt8], lengthSize: Int, hevc: Bool) -> [UInt8] {
        units(sample, lengthSize: lengthSize).compactMap { $0.first.map { hevc ? ($0 >> 1) & 0x3F : $0 & 0x1F } }
    }

    static func occurrences(of needle: [UInt8], in haystack: [UInt8]) -> Int {
        guard haystack.count >= needle.count else { return 0 }
        var count = 0
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { count += 1 }
        }
        return count
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool { occurrences(of: needle, in: haystack) > 0 }

    @Test(arguments: [
        ("x264-bframes", ["-c:v", "libx264", "-bf", "2", "-g", "15"]),
        ("x264-no-bframes", ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-bf", "0", "-g", "15"]),
        ("x264-inband-headers", ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-bf", "2", "-g", "15", "-x264-params", "repeat-headers=1"]),
        ("x264-slices", ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-g", "10", "-x264-params", "slices=3"]),
        ("x265-hev1", ["-c:v", "libx265", "-x265-params", "log-level=error", "-g", "15"]),
        ("x265-hvc1", ["-c:v", "libx265", "-x265-params", "log-level=error", "-g", "15", "-tag:v", "hvc1"]),
        ("x265-hvc1-no-bframes", ["-c:v", "libx265", "-x265-params", "log-level=error:bframes=0", "-g", "15", "-tag:v", "hvc1"]),
        ("x265-inband-headers", ["-c:v", "libx265", "-x265-params", "log-level=error:repeat-headers=1", "-g", "15", "-tag:v", "hvc1"]),
        ("x265-closed-gop-slices", ["-c:v", "libx265", "-x265-params", "log-level=error:open-gop=0:slices=2", "-g", "10"]),
    ])
    func ffmpegMadeFilesAreByteIdentical(_ name: String, _ codecArguments: [String]) throws {
        let directory = try MediaTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("\(name).mp4")
        try MediaTool.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=320x240:rate=30", "-t", "2"] + codecArguments + [file.path])
        try Self.checkAgainstFFmpeg(file, in: directory)
    }

    @Test(arguments: ["mp4_sample.mp4", "mp4_h265_bframes.mp4", "mp4_sample_with_metadata.mp4", "mp4_sample_rotate_and_reflect.mp4",
                      "mp4_sample_mdat_too_long.mp4"])
    func corpusFilesAreByteIdentical(_ name: String) throws {
        let directory = try MediaTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.checkAgainstFFmpeg(Corpus.url(name), in: directory)
    }

    /// Differential test against FFmpeg's filters: the samples of an encoded file (all but the
    /// first, which FFmpeg's muxer inspects) are cut into NAL units at random places, so that
    /// any NAL type, zero-length (H.264) and 1-byte units, IDR slices right after IDR slices, and
    /// in-band parameter sets in any order occur. Sample sizes stay the same, so the file stays
    /// valid, and our output must still be ffmpeg's, byte for byte.
    @Test(arguments: [("libx264", UInt64(1)), ("libx264", 2), ("libx264", 3), ("libx265", 4), ("libx265", 5)])
    func randomlyRecutSamplesMatchFFmpeg(_ encoder: String, _ seed: UInt64) throws {
        let directory = try MediaTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("source.mp4")
        let extra = encoder == "libx265" ? ["-x265-params", "log-level=error"] : ["-pix_fmt", "yuv420p"]
        try MediaTool.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=160x120:rate=30", "-t", "1", "-c:v", encoder, "-g", "8"] + extra + [file.path])
        var bytes = try MediaTool.bytes(file)
        let track = try #require(try WalkedFile(bytes).videoTrack)
        var generator = SplitMix64(state: seed)
        let minimum = encoder == "libx265" ? 2 : 0
        // Interesting first bytes: H.264 types 1, 5 (first_mb 0 or not), 7, 8, 6; HEVC IRAP/VPS/SPS/PPS.
        let headers: [[UInt8]] = encoder == "libx265"
            ? [[0x26, 0x01], [0x2A, 0x01], [0x40, 0x01], [0x42, 0x01], [0x44, 0x01], [0x02, 0x01], [0x4E, 0x01]]
            : [[0x41], [0x65, 0x88], [0x65, 0x08], [0x67], [0x68], [0x06], [0x65]]
        for range in track.sampleRanges().dropFirst() where Bool.random(using: &generator) {
            var position = range.lowerBound
            while position < range.upperBound {
                let left = range.upperBound - position - 4
                guard left >= minimum else { break }
                var length = Bool.random(using: &generator) ? left : Int.random(in: minimum...min(left, minimum + 12), using: &generator)
                if range.upperBound - (position + 4 + length) < 4 + minimum { length = left }   // no unusable tail
                for index in 0..<4 { bytes[position + index] = UInt8(truncatingIfNeeded: length >> (24 - 8 * index)) }
                let header = headers.randomElement(using: &generator) ?? []
                for (index, byte) in header.enumerated() where index < length && Bool.random(using: &generator) {
                    bytes[position + 4 + index] = byte
                }
                position += 4 + length
            }
        }
        let recut = directory.appendingPathComponent("recut.mp4")
        try Data(bytes).write(to: recut)
        try Self.checkAgainstFFmpeg(recut, in: directory, countInsertions: false)
    }

    /// The quirks of FFmpeg's H.264 filter, checked against ffmpeg itself: samples of an encoded
    /// file rewritten (same sizes) into chosen NAL unit layouts. Each layout lists the units'
    /// first bytes and lengths; the unit with length `nil` takes the rest of the sample. Once
    /// in-band parameter sets have been seen, FFmpeg's state never clears again, so each script
    /// ends with its in-band case.
    static let layoutSlice: [UInt8] = [0x41], layoutIDR: [UInt8] = [0x65, 0x88], layoutIDRLater: [UInt8] = [0x65, 0x08]
    static let scripts: [[[(header: [UInt8], length: Int?)]]] = [
        [
            [(layoutIDRLater, nil), (layoutIDR, 1)],                // a 1-byte IDR at the end: first_mb read from padding (0)
            [(layoutIDR, 1), (layoutIDRLater, nil)],                // a 1-byte IDR in the middle: read from the next length byte
            [(layoutSlice, nil), ([], 0), (layoutSlice, 5)],             // a zero-length unit is dropped; the slice clears the state
            [([0x06], 2), (layoutIDR, nil), (layoutIDRLater, 4)],   // SEI 4-byte, record, IDR 3-byte, second slice
            [(layoutSlice, nil)],
            [([0x68], 3), (layoutIDR, nil)],                  // in-band PPS: the record's SPS goes before it
            [(layoutSlice, nil)],
            [(layoutIDR, nil)],                               // …and nothing is inserted any more
        ],
        [
            [(layoutSlice, nil)],
            [([0x67], 3), (layoutIDR, nil), (layoutIDRLater, 6)],   // in-band SPS: the record's PPS before each IDR slice
            [(layoutSlice, nil)],
            [([0x06], 0), (layoutIDR, nil), ([0x68], 2)],     // PPS after the slice
            [(layoutIDR, nil)],
        ],
        [
            [(layoutSlice, nil)],
            [(layoutIDR, nil), ([0x68], 2), ([0x67], 2)],     // parameter sets after the IDR slice
            [(layoutSlice, nil)],
            [(layoutIDR, nil)],
        ],
    ]

    @Test(arguments: 0..<3)
    func scriptedH264LayoutsMatchFFmpeg(_ scriptIndex: Int) throws {
        let directory = try MediaTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("source.mp4")
        try MediaTool.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=160x120:rate=30", "-t", "0.5", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                              "-bf", "0", "-g", "300", file.path])
        let script = Self.scripts[scriptIndex]
        var bytes = try MediaTool.bytes(file)
        let ranges = try #require(try WalkedFile(bytes).videoTrack).sampleRanges()
        #expect(ranges.count > script.count)
        for (layout, range) in zip(script, ranges.dropFirst()) {
            let fixed = layout.compactMap(\.length).reduce(0, +) + 4 * layout.count
            var position = range.lowerBound
            for unit in layout {
                let length = unit.length ?? (range.count - fixed)
                for index in 0..<4 { bytes[position + index] = UInt8(truncatingIfNeeded: length >> (24 - 8 * index)) }
                for (index, byte) in unit.header.enumerated() where index < length { bytes[position + 4 + index] = byte }
                position += 4 + length
            }
            #expect(position == range.upperBound)
        }
        let scripted = directory.appendingPathComponent("scripted.mp4")
        try Data(bytes).write(to: scripted)
        try Self.checkAgainstFFmpeg(scripted, in: directory, countInsertions: false)
    }

    @Test func shorterLengthFieldsGiveTheSameStream() throws {
        // The same samples re-prefixed with 2-byte lengths convert to ffmpeg's bytes too.
        let directory = try MediaTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("small.mp4")
        try MediaTool.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=160x120:rate=30", "-t", "1", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                              "-g", "10", file.path])
        try Self.checkAgainstFFmpeg(file, in: directory, lengthSize: 2)
        let hevc = directory.appendingPathComponent("small265.mp4")
        try MediaTool.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=160x120:rate=30", "-t", "1", "-c:v", "libx265", "-x265-params", "log-level=error",
                              "-g", "10", hevc.path])
        try Self.checkAgainstFFmpeg(hevc, in: directory, lengthSize: 2)
    }
}
