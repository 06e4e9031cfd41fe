import Foundation
import MediaCore
import Testing
import TestSupport
@testable import VideoBitstream

@Suite("Annex B reader: NAL units, RBSP, picture order count", .blocking)
struct AnnexBReaderTests {
    @Test func nalUnitsSplitOnThreeAndFourByteStartCodesWithoutTrailingZeros() throws {
        let bytes: [UInt8] = [0, 0, 0, 1, 0x67, 0xAA, 0, 0, 1, 0x68, 0xBB, 0x00, 0x00, 0, 0, 0, 1, 0x65, 0x00, 0x00, 0x03, 0x01, 0, 0, 1, 0, 0, 1, 0x06, 0x80]
        for chunk in [1, 2, 3, 16, 1 << 16] {
            var reader = AnnexBNALUnitReader(source: ArrayByteSource(bytes), chunkSize: chunk)
            var units: [NALUnit] = []
            while let unit = try reader.next() { units.append(unit) }
            #expect(units == [NALUnit(bytes: [0x67, 0xAA], offset: 4), NALUnit(bytes: [0x68, 0xBB], offset: 9),
                              NALUnit(bytes: [0x65, 0x00, 0x00, 0x03, 0x01], offset: 17), NALUnit(bytes: [0x06, 0x80], offset: 28)],
                    "chunk size \(chunk)")
        }
    }

    @Test func rbspDropsEmulationPreventionBytesAndExpGolombDecodes() throws {
        #expect(RBSPReader.payload(of: [0x65, 0x00, 0x00, 0x03, 0x01, 0x00, 0x00, 0x03], from: 1, limit: .max).bytes == [0, 0, 1, 0, 0])
        #expect(RBSPReader.payload(of: [0x65, 1, 2, 3, 4], from: 1, limit: 2) == ([1, 2], false))
        // ue: 1 → 0, 010 → 1, 011 → 2, 00100 → 3; se: 00101 → −2 (code 4), 00110 → 3 (code 5).
        var reader = RBSPReader(rbsp: [0b1010_0110, 0b0100_0010, 0b1001_1000], structure: "test", nalOffset: 100)
        #expect(try reader.ue("a") == 0)
        #expect(try reader.ue("b") == 1)
        #expect(try reader.ue("c") == 2)
        #expect(try reader.ue("d") == 3)
        #expect(try reader.se("e") == -2)
        #expect(try reader.se("f") == 3)
        #expect(throws: VideoBitstreamError.self) { try reader.ue("g") }
        var zeros = RBSPReader(rbsp: [0, 0, 0, 0, 0, 0x80], structure: "test", nalOffset: 7)
        #expect(throws: VideoBitstreamError.invalidField(structure: "test", field: "long", value: 32, nalOffset: 7,
                                                         allowed: "an Exp-Golomb code of at most 31 leading zero bits")) {
            try zeros.ue("long")
        }
    }

    /// POC type 1 (8.2.1.2) with I P B B P B B: the B pictures share a frame_num and differ in
    /// delta_pic_order_cnt[0], which is what makes them two pictures (7.4.1.2.4).
    @Test func pictureOrderCountTypeOneGivesPresentationOrder() throws {
        let poc = 1
        let stream = annexB([
            SyntheticH264.sps(pocType: poc), SyntheticH264.pps(),
            SyntheticH264.slice(kind: 2, frameNum: 0, reference: true, idr: true, pocType: poc),
            SyntheticH264.slice(kind: 0, frameNum: 1, reference: true, pocType: poc),           // POC 6
            SyntheticH264.slice(kind: 1, frameNum: 2, reference: false, pocType: poc),          // POC 2
            SyntheticH264.slice(kind: 1, frameNum: 2, reference: false, pocType: poc, delta0: 2), // POC 4
            SyntheticH264.slice(kind: 0, frameNum: 2, reference: true, pocType: poc),           // POC 12
            SyntheticH264.slice(kind: 1, frameNum: 3, reference: false, pocType: poc),          // POC 8
            SyntheticH264.slice(kind: 1, frameNum: 3, reference: false, pocType: poc, delta0: 2), // POC 10
        ])
        let samples = try readAllSamples(bytes: stream, codec: .h264)
        #expect(samples.count == 7)
        #expect(samples.map { $0.decodeTime.value } == [0, 1, 2, 3, 4, 5, 6])
        // Presentation ranks I0 P3 B1 B2 P6 B4 B5, delayed by one frame.
        #expect(samples.map { $0.presentationTime.value } == [1, 4, 2, 3, 7, 5, 6])
        #expect(samples.map(\.isSync) == [true, false, false, false, false, false, false])
        guard case .video(let format) = samples[0].format else { throw Tool.Failure(description: "not video") }
        #expect((format.width, format.height) == (32, 32))
        #expect(format.parameterSets == [SyntheticH264.sps(pocType: poc), SyntheticH264.pps()])
    }

    /// An MMCO 5 picture empties the output queue and restarts picture order counts at 0
    /// (8.2.1, C.4.4): pictures after it come after it, whatever their counts.
    @Test func memoryManagementControlOperationFiveStartsANewOrderingRun() throws {
        let stream = annexB([
            SyntheticH264.sps(pocType: 0), SyntheticH264.pps(),
            SyntheticH264.slice(kind: 2, frameNum: 0, reference: true, idr: true, pocType: 0, pocLsb: 0),
            SyntheticH264.slice(kind: 0, frameNum: 1, reference: true, pocType: 0, pocLsb: 8),
            SyntheticH264.slice(kind: 0, frameNum: 2, reference: true, pocType: 0, pocLsb: 12, mmco5: true),  // becomes POC 0
            SyntheticH264.slice(kind: 0, frameNum: 1, reference: true, pocType: 0, pocLsb: 4),   // POC 4 after the reset
            SyntheticH264.slice(kind: 1, frameNum: 2, reference: false, pocType: 0, pocLsb: 2),  // POC 2
        ])
        let samples = try readAllSamples(bytes: stream, codec: .h264)
        #expect(samples.count == 5)
        // Ranks 0, 1 | 2 (MMCO 5), 4, 3. The SPS declares no reorder depth, so the delay is learnt:
        // 0 for the first run (ranked when the MMCO 5 picture arrives), 1 from the B picture on,
        // leaving presentation time 2 unused rather than letting a pts precede its dts.
        #expect(samples.map { $0.presentationTime.value } == [0, 1, 3, 5, 4])
        #expect(samples.map(\.isSync) == [true, false, false, false, false])
    }

    /// Two fields of a frame are one sample (H.264 field pair), ordered by the smaller count.
    @Test func complementaryFieldPairsBecomeOneSample() throws {
        let top = (bottom: false, present: true)
        let bottom = (bottom: true, present: true)
        let stream = annexB([
            SyntheticH264.sps(pocType: 0, frameMacroblocksOnly: false), SyntheticH264.pps(),
            SyntheticH264.slice(kind: 2, frameNum: 0, reference: true, idr: true, pocType: 0, pocLsb: 0, field: top),
            SyntheticH264.slice(kind: 2, frameNum: 0, reference: true, pocType: 0, pocLsb: 1, field: bottom),
            SyntheticH264.slice(kind: 0, frameNum: 1, reference: true, pocType: 0, pocLsb: 4, field: top),
            SyntheticH264.slice(kind: 0, frameNum: 1, reference: true, pocType: 0, pocLsb: 5, field: bottom),
            SyntheticH264.slice(kind: 0, frameNum: 2, reference: true, pocType: 0, pocLsb: 9, field: bottom),
        ])
        let samples = try readAllSamples(bytes: stream, codec: .h264)
        #expect(samples.count == 3)
        #expect(samples.map { sampleUnits($0.data).count } == [2, 2, 1])
        #expect(samples.map(\.isSync) == [true, false, false])
        #expect(samples.map { $0.presentationTime.value } == [0, 1, 2])
        guard case .video(let format) = samples[0].format else { throw Tool.Failure(description: "not video") }
        #expect((format.width, format.height) == (32, 64))
    }

    @Test func presentationBufferRanksByBoundWhenTheWindowFills() throws {
        // I P B B P B B … with one IDR: a 4-unit window still gives the right order, ranking all
        // but the declared reorder depth (1) each time it fills.
        var units = [SyntheticH264.sps(pocType: 0, maxNumberOfReorderFrames: 1), SyntheticH264.pps(),
                     SyntheticH264.slice(kind: 2, frameNum: 0, reference: true, idr: true, pocType: 0, pocLsb: 0)]
        var frameNum = 1
        for group in 0..<4 {
            let base = group * 6
            units.append(SyntheticH264.slice(kind: 0, frameNum: frameNum, reference: true, pocType: 0, pocLsb: (base + 6) % 16))
            units.append(SyntheticH264.slice(kind: 1, frameNum: (frameNum + 1) % 16, reference: false, pocType: 0, pocLsb: (base + 2) % 16))
            units.append(SyntheticH264.slice(kind: 1, frameNum: (frameNum + 1) % 16, reference: false, pocType: 0, pocLsb: (base + 4) % 16))
            frameNum += 1
        }
        var reader = try AnnexBReader(source: ArrayByteSource(annexB(units)), codec: .h264,
                                      frameDuration: MediaTime(value: 1, timescale: 30), reorderWindow: 4)
        var presentation: [Int64] = []
        while let sample = try reader.nextSample() { presentation.append(sample.presentationTime.value) }
        #expect(presentation == [1, 4, 2, 3, 7, 5, 6, 10, 8, 9, 13, 11, 12])
        #expect(reader.compositionDelay == 1)
    }
}
