import Foundation
import MediaCore
@testable import MP4
import VideoBitstream
import Testing
import TestSupport

@Suite("avcC and hvcC records", .blocking)
struct ConfigurationRecordTests {
    // MARK: avcC, hand-checked

    /// version 1, High profile (100), compatibility 0, level 3.1, 4-byte lengths, one SPS, one PPS.
    static let avcBytes: [UInt8] = [0x01, 0x64, 0x00, 0x1F, 0xFF, 0xE1, 0x00, 0x05, 0x67, 0x64, 0x00, 0x1F, 0xAC,
                                    0x01, 0x00, 0x04, 0x68, 0xEE, 0x3C, 0x80]

    @Test func avcFieldsAndRoundTrip() throws {
        var reader = ByteReader(Self.avcBytes, baseOffset: 1000)
        let record = try AVCDecoderConfigurationRecord(from: &reader)
        #expect(reader.isAtEnd)
        #expect(record.configurationVersion == 1)
        #expect(record.profileIndication == 100)
        #expect(record.profileCompatibility == 0)
        #expect(record.levelIndication == 31)
        #expect(record.nalUnitLengthSize == 4)
        #expect(record.sequenceParameterSets == [[0x67, 0x64, 0x00, 0x1F, 0xAC]])
        #expect(record.pictureParameterSets == [[0x68, 0xEE, 0x3C, 0x80]])
        #expect(record.parameterSets == [[0x67, 0x64, 0x00, 0x1F, 0xAC], [0x68, 0xEE, 0x3C, 0x80]])
        #expect(record.extensionBytes.isEmpty)
        #expect(record.highProfileExtension == nil)
        #expect(record.reservedBits == 0x1FF)
        #expect(record.serialized() == Self.avcBytes)
    }

    @Test func avcHighProfileExtensionIsKeptRaw() throws {
        // chroma_format 1 (4:2:0), 8-bit luma and chroma, one SPS-ext of 2 bytes.
        let bytes = Self.avcBytes + [0xFD, 0xF8, 0xF8, 0x01, 0x00, 0x02, 0x6D, 0x10]
        var reader = ByteReader(bytes)
        let record = try AVCDecoderConfigurationRecord(from: &reader)
        #expect(record.extensionBytes == [0xFD, 0xF8, 0xF8, 0x01, 0x00, 0x02, 0x6D, 0x10])
        let ext = try #require(record.highProfileExtension)
        #expect(ext.chromaFormat == 1 && ext.bitDepthLumaMinus8 == 0 && ext.bitDepthChromaMinus8 == 0)
        #expect(ext.sequenceParameterSetExtensions == [[0x6D, 0x10]])
        #expect(record.parameterSets.count == 2)   // SPS-ext is not a parameter set to insert
        #expect(record.serialized() == bytes)
    }

    @Test func avcUnusualReservedBitsAndLengthSizeRoundTrip() throws {
        var bytes = Self.avcBytes
        bytes[4] = 0x01   // reserved bits zero, 2-byte lengths
        bytes[5] = 0x01   // reserved bits zero, one SPS
        var reader = ByteReader(bytes)
        let record = try AVCDecoderConfigurationRecord(from: &reader)
        #expect(record.nalUnitLengthSize == 2)
        #expect(record.reservedBits == 0)
        #expect(record.serialized() == bytes)
    }

    @Test func avcBuiltFromParts() throws {
        let record = try AVCDecoderConfigurationRecord(profileIndication: 100, profileCompatibility: 0, levelIndication: 31,
                                                       sequenceParameterSets: [[0x67, 0x64, 0x00, 0x1F, 0xAC]],
                                                       pictureParameterSets: [[0x68, 0xEE, 0x3C, 0x80]])
        #expect(record.serialized() == Self.avcBytes)
        #expect(throws: VideoBitstreamError.self) {
            try AVCDecoderConfigurationRecord(profileIndication: 66, profileCompatibility: 0, levelIndication: 30,
                                              sequenceParameterSets: Array(repeating: [0x67], count: 32), pictureParameterSets: [])
        }
        #expect(throws: VideoBitstreamError.self) {
            try AVCDecoderConfigurationRecord(profileIndication: 66, profileCompatibility: 0, levelIndication: 30, nalUnitLengthSize: 3,
                                              sequenceParameterSets: [], pictureParameterSets: [])
        }
        #expect(throws: VideoBitstreamError.self) {
            try AVCDecoderConfigurationRecord(profileIndication: 66, profileCompatibility: 0, levelIndication: 30,
                                              sequenceParameterSets: [[UInt8](repeating: 0x67, count: 65536)], pictureParameterSets: [])
        }
    }

    @Test func avcTruncatedAtEveryLengthIsATypedError() {
        for length in 0..<Self.avcBytes.count {
            var reader = ByteReader(Array(Self.avcBytes[..<length]), baseOffset: 500)
            do {
                _ = try AVCDecoderConfigurationRecord(from: &reader)
                Issue.record("a \(length)-byte prefix parsed")
            } catch {
                switch error {
                case .truncatedRecord(let record, let read):
                    #expect(record == "avcC")
                    #expect(read.offset >= 500 && read.offset <= 500 + Int64(length))
                case .invalidRecordField(_, let field, _, _, _):
                    #expect(field.hasPrefix("numOf"), "\(error)")
                default:
                    Issue.record("unexpected \(error)")
                }
            }
        }
    }

    @Test func avcCountsLargerThanTheBytesAreRefusedBeforeReading() {
        // 31 SPSs announced, nothing after.
        var reader = ByteReader([0x01, 0x64, 0x00, 0x1F, 0xFF, 0xFF], baseOffset: 40)
        #expect(throws: VideoBitstreamError.invalidRecordField(record: "avcC", field: "numOfSequenceParameterSets", value: 31,
                                              offset: 46, allowed: "at most 0 (the 0 bytes that remain hold no more)")) {
            try AVCDecoderConfigurationRecord(from: &reader)
        }
        // An SPS length past the end.
        var second = ByteReader([0x01, 0x64, 0x00, 0x1F, 0xFF, 0xE1, 0xFF, 0xFF, 0x67, 0x00])
        let error = #expect(throws: VideoBitstreamError.self) {
            try AVCDecoderConfigurationRecord(from: &second)
        }
        guard case .truncatedRecord(_, let read)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(read.needed == 0xFFFF && read.available == 2 && read.offset == 8)
        // configurationVersion 0.
        var third = ByteReader([0x00] + Self.avcBytes.dropFirst())
        #expect(throws: VideoBitstreamError.invalidRecordField(record: "avcC", field: "configurationVersion", value: 0, offset: 0, allowed: "1")) {
            try AVCDecoderConfigurationRecord(from: &third)
        }
    }

    // MARK: hvcC, hand-checked

    static let hevcHead: [UInt8] = [
        0x01,                                // configurationVersion
        0x01,                                // profile space 0, tier 0, profile 1 (Main)
        0x60, 0x00, 0x00, 0x00,              // compatibility flags
        0x90, 0x00, 0x00, 0x00, 0x00, 0x00,  // constraint flags
        0x5A,                                // level 90 (3.0)
        0xF0, 0x00,                          // reserved 1111, min_spatial_segmentation 0
        0xFC,                                // reserved, parallelismType 0
        0xFD,                                // reserved, chroma_format_idc 1
        0xF8, 0xF8,                          // bit depths 8
        0x00, 0x00,                          // avgFrameRate
        0x0F,                                // constantFrameRate 0, 1 temporal layer, nested, 4-byte lengths
    ]
    static let hevcBytes: [UInt8] = hevcHead + [
        0x04,                                                   // numOfArrays
        0xA0, 0x00, 0x01, 0x00, 0x03, 0x40, 0x01, 0x0C,         // complete VPS array
        0xA1, 0x00, 0x01, 0x00, 0x03, 0x42, 0x01, 0x01,         // SPS
        0xA2, 0x00, 0x02, 0x00, 0x03, 0x44, 0x01, 0xC1, 0x00, 0x02, 0x44, 0x01,   // two PPSs
        0x27, 0x00, 0x01, 0x00, 0x03, 0x4E, 0x01, 0x05,         // incomplete prefix SEI array
    ]

    @Test func hevcFieldsAndRoundTrip() throws {
        var reader = ByteReader(Self.hevcBytes)
        let record = try HEVCDecoderConfigurationRecord(from: &reader)
        #expect(reader.isAtEnd)
        #expect(record.configurationVersion == 1)
        #expect(record.generalProfileSpace == 0 && !record.generalTierFlag && record.generalProfileIDC == 1)
        #expect(record.generalProfileCompatibilityFlags == 0x6000_0000)
        #expect(record.generalConstraintIndicatorFlags == 0x9000_0000_0000)
        #expect(record.generalLevelIDC == 90)
        #expect(record.minSpatialSegmentationIDC == 0 && record.parallelismType == 0)
        #expect(record.chromaFormatIDC == 1 && record.bitDepthLumaMinus8 == 0 && record.bitDepthChromaMinus8 == 0)
        #expect(record.averageFrameRate == 0 && record.constantFrameRate == 0)
        #expect(record.numTemporalLayers == 1 && record.temporalIDNested)
        #expect(record.nalUnitLengthSize == 4)
        #expect(record.reservedBits == 0x3FF_FFFF)
        #expect(record.arrays.map(\.nalUnitType) == [32, 33, 34, 39])
        #expect(record.arrays.map(\.arrayCompleteness) == [true, true, true, false])
        #expect(record.parameterSets == [[0x40, 0x01, 0x0C], [0x42, 0x01, 0x01], [0x44, 0x01, 0xC1], [0x44, 0x01]])
        #expect(record.allNALUnits.last == [0x4E, 0x01, 0x05])
        #expect(record.serialized() == Self.hevcBytes)
    }

    @Test func hevcParameterSetsAreOrderedVPSThenSPSThenPPS() throws {
        // Arrays stored PPS, SPS, VPS: parameterSets still comes out in decoding order.
        let bytes = Self.hevcHead + [0x03, 0x22, 0x00, 0x01, 0x00, 0x02, 0x44, 0x01, 0x21, 0x00, 0x01, 0x00, 0x02, 0x42, 0x01,
                                     0x20, 0x00, 0x01, 0x00, 0x02, 0x40, 0x01]
        var reader = ByteReader(bytes)
        let record = try HEVCDecoderConfigurationRecord(from: &reader)
        #expect(record.parameterSets == [[0x40, 0x01], [0x42, 0x01], [0x44, 0x01]])
        #expect(record.allNALUnits == [[0x44, 0x01], [0x42, 0x01], [0x40, 0x01]])
        #expect(record.serialized() == bytes)
    }

    @Test func hevcOddBitsRoundTrip() throws {
        var bytes = Self.hevcBytes
        bytes[1] = 0xE5        // profile space 3, tier 1, profile 5
        bytes[13] = 0x3A       // reserved 0011, min_spatial 0xA..
        bytes[15] = 0x01
        bytes[16] = 0x02
        bytes[17] = 0x02
        bytes[18] = 0x5B
        bytes[21] = 0xDD       // constantFrameRate 3, 3 layers, nested, 2-byte lengths
        bytes[23] = 0xE0       // completeness and the reserved bit set
        bytes += [0x00, 0x01]  // trailing bytes
        var reader = ByteReader(bytes)
        let record = try HEVCDecoderConfigurationRecord(from: &reader)
        #expect(record.generalProfileSpace == 3 && record.generalTierFlag && record.generalProfileIDC == 5)
        #expect(record.constantFrameRate == 3 && record.numTemporalLayers == 3 && record.nalUnitLengthSize == 2)
        #expect(record.arrays[0].reservedBit)
        #expect(record.trailingBytes == [0x00, 0x01])
        #expect(record.serialized() == bytes)
    }

    @Test func hevcTruncatedAtEveryLengthIsATypedError() {
        for length in 0..<Self.hevcBytes.count {
            var reader = ByteReader(Array(Self.hevcBytes[..<length]))
            do {
                _ = try HEVCDecoderConfigurationRecord(from: &reader)
                Issue.record("a \(length)-byte prefix parsed")
            } catch {
                switch error {
                case .truncatedRecord, .invalidRecordField: break
                default: Issue.record("unexpected \(error)")
                }
            }
        }
    }

    @Test func hevcCountsLargerThanTheBytesAreRefused() {
        var reader = ByteReader(Self.hevcHead + [0xFF, 0x20, 0x00, 0x01])
        let first = #expect(throws: VideoBitstreamError.self) {
            try HEVCDecoderConfigurationRecord(from: &reader)
        }
        guard case .invalidRecordField(_, "numOfArrays", 255, 23, _)? = first else { Issue.record("\(String(describing: first))"); return }
        var second = ByteReader(Self.hevcHead + [0x01, 0x20, 0xFF, 0xFF, 0x00, 0x01, 0x40])
        let error = #expect(throws: VideoBitstreamError.self) {
            try HEVCDecoderConfigurationRecord(from: &second)
        }
        guard case .invalidRecordField(_, "numNalus", 0xFFFF, _, _)? = error else { Issue.record("\(String(describing: error))"); return }
    }

    @Test func randomBytesNeverTrap() {
        var generator = SplitMix64(state: 7)
        for round in 0..<4000 {
            let count = Int.random(in: 0...64, using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if round % 2 == 0, bytes.count > 1 { bytes[0] = 1 }
            var a = ByteReader(bytes)
            if let record = try? AVCDecoderConfigurationRecord(from: &a) { #expect(record.serialized() == bytes) }
            var h = ByteReader(bytes)
            if let record = try? HEVCDecoderConfigurationRecord(from: &h) { #expect(record.serialized() == bytes) }
        }
    }

    // MARK: records of real files

    static func records(in bytes: [UInt8]) throws -> [(type: String, payload: [UInt8], reader: ByteReader)] {
        try WalkedFile(bytes).tracks.compactMap { track in
            track.configuration.map { ($0.type, Array($0.payload.remainingBytes), $0.payload) }
        }
    }

    static func checkRoundTrip(_ bytes: [UInt8], name: String) throws -> Int {
        var count = 0
        for (type, payload, reader) in try records(in: bytes) {
            var reader = reader
            if type == "avcC" {
                let record = try AVCDecoderConfigurationRecord(from: &reader)
                #expect(record.serialized() == payload, "\(name) avcC")
                #expect(!record.sequenceParameterSets.isEmpty && record.sequenceParameterSets.allSatisfy { $0.first.map { $0 & 0x1F } == 7 })
                #expect(!record.pictureParameterSets.isEmpty && record.pictureParameterSets.allSatisfy { $0.first.map { $0 & 0x1F } == 8 })
            } else {
                let record = try HEVCDecoderConfigurationRecord(from: &reader)
                #expect(record.serialized() == payload, "\(name) hvcC")
                #expect(record.parameterSets.map { ($0[0] >> 1) & 0x3F } == [32, 33, 34], "\(name)")
            }
            #expect(reader.isAtEnd)
            count += 1
        }
        return count
    }

    @Test func corpusRecordsRoundTrip() throws {
        var found: [String] = []
        for name in try Corpus.mp4Files() {
            let bytes = try Corpus.bytes(name)
            // The broken corpus files are for the demuxer; a walk error there is expected.
            guard let count = try? Self.checkRoundTrip(bytes, name: name) else { continue }
            if count > 0 { found.append(name) }
        }
        #expect(found.contains("mp4_sample.mp4"))
        #expect(found.contains("mp4_h265_bframes.mp4"))
        #expect(found.contains("mp4_sample_rotate_and_reflect.mp4"))
        #expect(found.count >= 6, "\(found)")
    }

    @Test(arguments: [
        ["-c:v", "libx264", "-bf", "2", "-g", "15"],
        ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-profile:v", "high", "-bf", "0", "-g", "15"],
        ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-profile:v", "baseline"],
        ["-c:v", "libx264", "-pix_fmt", "yuv420p10le"],
        ["-c:v", "libx265", "-x265-params", "log-level=error", "-g", "15"],
        ["-c:v", "libx265", "-x265-params", "log-level=error", "-tag:v", "hvc1"],
        ["-c:v", "libx265", "-x265-params", "log-level=error", "-pix_fmt", "yuv422p10le", "-tag:v", "hvc1"],
    ])
    func ffmpegRecordsRoundTrip(_ codecArguments: [String]) throws {
        let directory = try MediaTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("v.mp4")
        try MediaTool.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=320x240:rate=30", "-t", "1"] + codecArguments + [file.path])
        #expect(try Self.checkRoundTrip(try MediaTool.bytes(file), name: "v.mp4") == 1)
    }
}
