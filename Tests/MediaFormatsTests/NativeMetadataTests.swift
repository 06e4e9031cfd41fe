import AudioBitstreams
import MediaCore
@testable import MediaFormats
import Testing

/// The mappings between a stream's metadata and Vorbis comments and ID3v2 tags, on values no
/// writer of ours makes.
@Suite struct NativeMetadataTests {
    /// A chapter time that is not a clock (`inf`, an exponent, a hex float) is not a chapter, and
    /// one past a million hours neither: none of them traps.
    @Test func hostileChapterTimesAreNotChapters() {
        for time in ["inf", "1e300", "0x1p10", "nan", "99999999999:00:00", "-1", "1:2:3:4", ""] {
            let comment = VorbisComment(vendor: "v", fields: [.init("CHAPTER001", time), .init("CHAPTER001NAME", "x")])
            #expect(StreamMetadata(vorbisComment: comment).chapters.isEmpty, "\(time)")
        }
        let good = VorbisComment(vendor: "v", fields: [.init("chapter001", "01:02:03.500"), .init("CHAPTER001NAME", "One"),
                                                       .init("CHAPTER002", "1:02:04"), .init("TITLE", "T")])
        let metadata = StreamMetadata(vorbisComment: good)
        #expect(metadata.chapters.map(\.start.seconds) == [3723.5, 3724] && metadata.chapters.first?.title == "One")
        #expect(metadata.tags.map(\.key) == ["title"])
        // A chapter whose time is past what a UInt32 of milliseconds holds is clamped, not a trap.
        let far = StreamMetadata(chapters: [.init(start: MediaTime(value: .max, timescale: 1), title: "far")])
        _ = ID3v2Tag(far, duration: MediaTime(value: .max, timescale: 1)).bytes()
        #expect(VorbisComment(far, vendor: "v").fields.first?.value == "1000000:00:00.000")
    }

    /// A COMM frame's language of odd characters still writes three bytes, and reads back.
    @Test func commentLanguageIsThreeBytes() throws {
        let tag = ID3v2Tag(frames: [.comment(language: "\r\nX", description: "", text: "t")])
        let read = try ID3v2Tag(bytes: tag.bytes())
        #expect(read.frames == [.comment(language: "\r\nX", description: "", text: "t")])
    }
}
