import Foundation
import MediaCore
import Testing
import TestSupport
@testable import VideoBitstream

/// Bad input gives typed errors that name the NAL unit's offset; nothing traps.
@Suite("Annex B reader: malformed input", .blocking)
struct AnnexBErrorTests {
    /// A short ffmpeg-made stream, as NAL units.
    static func units(_ codec: VideoCodec) throws -> [NALUnit] {
        let directory = try Tool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fixture = StreamFixture(name: "small", codec: codec, rate: "30", seconds: 0.5, size: "64x64",
                                    encoder: codec == .h264 ? ["-c:v", "libx264", "-bf", "2"]
                                        : ["-c:v", "libx265", "-x265-params", "bframes=2:log-level=error"],
                                    expectedDelay: 1, expectedPOCType: nil)
        let path = try fixture.make(in: directory)
        return try nalUnits(of: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    static func isParameterSet(_ unit: NALUnit, _ codec: VideoCodec) -> Bool {
        codec == .h264 ? [7, 8].contains(unit.h264Type.rawValue) : [32, 33, 34].contains(unit.hevcType.rawValue)
    }

    @Test func garbageIsNotAnnexB() throws {
        var generator = SystemRandomNumberGenerator()
        var garbage = (0..<5000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        garbage[0] = 0x47
        #expect(throws: VideoBitstreamError.notAnnexB(offset: 0, reason: "byte 71 before the first start code 00 00 01")) {
            try readAllSamples(bytes: garbage, codec: .h264)
        }
        // A lone 00 00 01 needs at least two zeros before it; one is not enough.
        #expect(throws: VideoBitstreamError.notAnnexB(offset: 1, reason: "byte 1 before the first start code 00 00 01")) {
            try readAllSamples(bytes: [0, 1, 0x67], codec: .hevc)
        }
    }

    @Test func emptyOrZeroStreamsHaveNoSamplesAndNoConfiguration() throws {
        for bytes in [[], [UInt8](repeating: 0, count: 100_000)] {
            #expect(try readAllSamples(bytes: bytes, codec: .h264, chunkSize: 1000).isEmpty)
            var reader = try AnnexBReader(source: ArrayByteSource(bytes), codec: .h264)
            #expect(throws: VideoBitstreamError.noPictures) { try reader.avcConfiguration() }
        }
        #expect(throws: VideoBitstreamError.self) { try AnnexBReader(source: ArrayByteSource([]), codec: .other("vp09")) }
        #expect(throws: VideoBitstreamError.self) {
            try AnnexBReader(source: ArrayByteSource([]), codec: .h264, frameDuration: MediaTime(value: 0, timescale: 30))
        }
    }

    @Test(arguments: [VideoCodec.h264, .hevc])
    func sliceBeforeParameterSetsIsMissingParameterSet(_ codec: VideoCodec) throws {
        let units = try Self.units(codec)
        let withoutParameterSets = units.filter { !Self.isParameterSet($0, codec) }
        let stream = annexB(withoutParameterSets.map(\.bytes))
        // The first slice is the first VCL unit; its offset in the new stream follows 4-byte start codes.
        let firstSlice = try #require(withoutParameterSets.firstIndex { codec == .h264 ? $0.h264Type.isVCL : $0.hevcType.isVCL })
        let offset = Int64(withoutParameterSets[..<firstSlice].reduce(0) { $0 + 4 + $1.bytes.count } + 4)
        #expect(throws: VideoBitstreamError.missingParameterSet(kind: "PPS", id: 0, nalOffset: offset)) {
            try readAllSamples(bytes: stream, codec: codec)
        }
        // A PPS without its SPS: the slice names the PPS, the PPS an SPS that is not there.
        let withoutSPS = units.filter { codec == .h264 ? $0.h264Type != .sequenceParameterSet : $0.hevcType != .sequenceParameterSet }
        #expect(throws: VideoBitstreamError.self) { try readAllSamples(bytes: annexB(withoutSPS.map(\.bytes)), codec: codec) }
        do {
            _ = try readAllSamples(bytes: annexB(withoutSPS.map(\.bytes)), codec: codec)
        } catch {
            guard case .missingParameterSet(kind: "SPS", id: 0, _) = error else {
                Issue.record("expected a missing SPS, got \(error)")
                return
            }
        }
    }

    @Test(arguments: [VideoCodec.h264, .hevc])
    func truncatedParameterSetsAndSlicesNameTheStructureAndOffset(_ codec: VideoCodec) throws {
        let units = try Self.units(codec)
        let header = codec == .h264 ? 1 : 2
        let spsIndex = try #require(units.firstIndex { codec == .h264 ? $0.h264Type == .sequenceParameterSet : $0.hevcType == .sequenceParameterSet })
        var cut = units.map(\.bytes)
        cut[spsIndex] = Array(cut[spsIndex].prefix(header + 2))
        let spsOffset = Int64(units[..<spsIndex].reduce(0) { $0 + 4 + $1.bytes.count } + 4)
        do {
            _ = try readAllSamples(bytes: annexB(cut), codec: codec)
            Issue.record("a truncated SPS was accepted")
        } catch {
            guard case .truncated(let structure, _, let offset, _) = error else {
                Issue.record("expected truncated, got \(error)")
                return
            }
            #expect(structure == (codec == .h264 ? "H.264 SPS" : "HEVC SPS"))
            #expect(offset == spsOffset)
        }
        // A slice cut right after its NAL unit header.
        let sliceIndex = try #require(units.firstIndex { codec == .h264 ? $0.h264Type.isVCL : $0.hevcType.isVCL })
        cut = units.map(\.bytes)
        cut[sliceIndex] = Array(cut[sliceIndex].prefix(header))
        do {
            _ = try readAllSamples(bytes: annexB(cut), codec: codec)
            Issue.record("a truncated slice was accepted")
        } catch {
            if codec == .h264 {
                guard case .truncated(structure: "H.264 slice header", field: "first_mb_in_slice", _, _) = error else {
                    Issue.record("expected a truncated slice header, got \(error)")
                    return
                }
            } else {
                guard case .truncated(structure: "HEVC slice segment header", field: "first_slice_segment_in_pic_flag", _, _) = error else {
                    Issue.record("expected a truncated slice header, got \(error)")
                    return
                }
            }
        }
    }

    @Test func malformedHeadersAndOversizedUnitsAreErrors() throws {
        #expect(throws: VideoBitstreamError.invalidNALUnitHeader(nalOffset: 4, reason: "forbidden_zero_bit is 1")) {
            try readAllSamples(bytes: annexB([[0xE5, 0x88]]), codec: .h264)
        }
        #expect(throws: VideoBitstreamError.invalidNALUnitHeader(nalOffset: 4, reason: "1-byte NAL unit, shorter than the 2-byte HEVC header")) {
            try readAllSamples(bytes: annexB([[0x40]]), codec: .hevc)
        }
        #expect(throws: VideoBitstreamError.invalidNALUnitHeader(nalOffset: 4, reason: "nuh_temporal_id_plus1 is 0")) {
            try readAllSamples(bytes: annexB([[0x40, 0x00, 0x01]]), codec: .hevc)
        }
        var reader = try AnnexBReader(source: ArrayByteSource(annexB([[0x06] + [UInt8](repeating: 0x55, count: 5000)])), codec: .h264,
                                      maximumAccessUnitSize: 1000)
        #expect(throws: VideoBitstreamError.tooLarge(what: "NAL unit", size: 5001, limit: 1000, offset: 4)) { try reader.nextSample() }
    }

    /// Random damage and truncation anywhere: every outcome is samples or a typed error.
    @Test(arguments: [VideoCodec.h264, .hevc])
    func mutatedStreamsNeverTrap(_ codec: VideoCodec) throws {
        let original = annexB(try Self.units(codec).map(\.bytes))
        var generator = SystemRandomNumberGenerator()
        var failures = 0
        for round in 0..<1000 {
            var bytes = original
            if round % 3 == 0 {
                bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
            } else {
                // One round in three damages the first 200 bytes: the parameter sets and first slice headers.
                let limit = round % 3 == 1 ? min(bytes.count, 200) : bytes.count
                for _ in 0..<Int.random(in: 1...8, using: &generator) {
                    bytes[Int.random(in: 0..<limit, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
            }
            do {
                var reader = try AnnexBReader(source: ArrayByteSource(bytes), codec: codec, chunkSize: 512)
                while let sample = try reader.nextSample() { #expect(sample.presentationTime >= sample.decodeTime) }
                _ = codec == .h264 ? try reader.avcConfiguration().serialized() : try reader.hevcConfiguration().serialized()
            } catch {
                failures += 1
                #expect(!error.description.isEmpty)
            }
        }
        #expect(failures < 1000)
    }
}
