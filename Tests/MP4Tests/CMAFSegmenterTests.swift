import MediaCore
@testable import MP4
import Testing

/// The CMAF segmenter: a header and segments our own demuxer reads back sample for sample, tfdt
/// continuing, and a `udta` ending the first segment's `moof` (the DASH header's iTunSMPB)
/// without moving the samples.
@Suite struct CMAFSegmenterTests {
    @Test func segmentsWithAndWithoutUserDataReadBackWhole() throws {
        let segmenter = try CMAFSegmenter(format: MuxerTests.format, priming: 1024)
        for index in 0..<5 { segmenter.append(MuxerTests.packet(index, size: 50 + index)) }
        let tag = CMAFSegmenter.gaplessUserData(priming: 1024, padding: 500, validFrameCount: 9000)
        #expect(tag.count == CMAFSegmenter.gaplessUserData(priming: 0, padding: 0, validFrameCount: 0).count, "the placeholder has the tag's size")
        let first = try #require(segmenter.cutSegment(userData: tag))
        for index in 5..<8 { segmenter.append(MuxerTests.packet(index, size: 50 + index)) }
        let second = try #require(segmenter.cutSegment())
        #expect(first.baseDecodeTime == 0 && second.baseDecodeTime == 5 * 1024 && first.sequenceNumber == 1 && second.sequenceNumber == 2)
        // The first moof ends with the udta.
        let stypCount = CMAFSegmenter.segmentType.count
        let moofEnd = stypCount + first.bytes[stypCount..<(stypCount + 4)].reduce(0) { $0 << 8 | Int($1) }
        #expect(Array(first.bytes[(moofEnd - tag.count)..<moofEnd]) == tag)
        #expect(String(decoding: tag, as: UTF8.self).contains(" 00000000 00000400 000001F4 0000000000002328 "))
        // Header without the tag (DASH) + both segments: every sample back, in order.
        let header = segmenter.header(validFrameCount: 9000, mediaDuration: 8 * 1024, gaplessTag: false)
        #expect(!String(decoding: header, as: UTF8.self).contains("iTunSMPB"))
        #expect(String(decoding: segmenter.header(validFrameCount: 9000, mediaDuration: 8 * 1024), as: UTF8.self).contains("iTunSMPB"))
        let samples = try MuxerTests.audioSamples(header + first.bytes + second.bytes)
        #expect(samples.map(\.data) == (0..<8).map { MuxerTests.packet($0, size: 50 + $0).data })
    }
}
