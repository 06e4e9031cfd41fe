import Foundation
import MediaCore
@testable import MP4
import Testing

/// Chapters: the Nero `chpl` box and the QuickTime chapter track, written by the muxer and by the
/// movie editor, read back; malformed lists are typed errors.
@Suite struct ChapterTests {
    static let chapters = [MovieChapter(seconds: 0, title: "One"), MovieChapter(seconds: 0.5, title: "Twö"),
                           MovieChapter(seconds: 1.25, title: String(repeating: "x", count: 300))]

    /// A faststart M4A of 60 packets (about 1.39 s), with `chapters` and a join's two edits.
    static func muxed(chapters: [MovieChapter] = chapters, edits: [Range<Int64>]? = nil) throws -> [UInt8] {
        let muxer = MP4Muxer(sink: ArrayByteSink())
        try muxer.start()
        if let edits { muxer.setEdits(keeping: edits) } else { muxer.setGapless(priming: 1024, validFrameCount: 58 * 1024) }
        try muxer.setChapters(chapters)
        for index in 0..<60 { try muxer.append(MuxerTests.packet(index, size: 10 + index)) }
        try muxer.finish()
        return try #require(muxer.sink as? ArrayByteSink).bytes
    }

    @Test func aChapterListWritesAndReadsBack() throws {
        let box = ChapterListBox(chapters: Self.chapters).box
        var reader = ByteReader(Array(box.dropFirst(8)))
        let read = try ChapterListBox(from: &reader, path: BoxPath(components: ["chpl"]))
        #expect(read.chapters.map(\.title) == ["One", "Twö", String(repeating: "x", count: 255)], "titles cut at 255 bytes")
        #expect(read.chapters.map(\.startTime) == Self.chapters.map(\.startTime))
        // A count past the bytes is an error naming it, before anything is allocated.
        var short = Array(box.dropFirst(8))
        short[8] = 200
        var shortReader = ByteReader(short)
        #expect(throws: MP4Error.self) { try ChapterListBox(from: &shortReader, path: BoxPath(components: ["chpl"])) }
        // A title that runs past the box is a truncation.
        var cut = ByteReader(Array(box.dropFirst(8).dropLast(5)))
        #expect(throws: MP4Error.self) { try ChapterListBox(from: &cut, path: BoxPath(components: ["chpl"])) }
    }

    @Test func textSamplesCarryTitles() {
        #expect(ChapterTrack.title(fromSample: ChapterTrack.sample(title: "Héllo")) == "Héllo")
        #expect(ChapterTrack.title(fromSample: [0x00, 0x09, 0xFE, 0xFF, 0x00, 0x48, 0x00, 0x69]) == nil, "a length past the sample")
        #expect(ChapterTrack.title(fromSample: [0x00, 0x06, 0xFE, 0xFF, 0x00, 0x48, 0x00, 0x69]) == "Hi", "UTF-16 with a BOM")
        #expect(ChapterTrack.title(fromSample: [0x00]) == nil)
    }

    @Test func chaptersAreNormalized() {
        let list = [MovieChapter(seconds: 3, title: "C"), MovieChapter(seconds: 1, title: "B"), MovieChapter(seconds: 1, title: "B2"),
                    MovieChapter(seconds: 9, title: "Late")]
        let normalized = list.normalized(duration: MediaTime(value: 5, timescale: 1))
        #expect(normalized.map(\.title) == ["B2", "C"], "sorted, one per time, none past the end")
        #expect(normalized.first?.startTime.value == 0, "the first starts at 0")
    }

    @Test func theMuxerWritesBothKindsAndTheReaderPrefersTheTrack() throws {
        let bytes = try Self.muxed()
        let source = ArrayRandomAccessSource(bytes)
        let file = try MP4File(source: source)
        let track = try #require(file.chapterTrack)
        #expect(track.handlerType == "text" && track.trackHeader.flags & 1 == 0, "a disabled text track")
        #expect(file.tracks.first?.references["chap"] == [track.id])
        #expect(file.movieHeader?.nextTrackID == track.id + 1)
        let read = try file.chapters(source: source)
        #expect(read.map(\.title) == Self.chapters.map(\.title) && read.map(\.seconds) == [0, 0.5, 1.25])
        #expect(try file.chapterList()?.chapters.map(\.seconds) == [0, 0.5, 1.25])
        // The audio is where it was: the demuxer still delivers every packet.
        #expect(try MuxerTests.audioSamples(bytes).map(\.data) == (0..<60).map { MuxerTests.packet($0, size: 10 + $0).data })
    }

    @Test func severalEditsAreWrittenAndReadAsRanges() throws {
        let bytes = try Self.muxed(edits: [1024..<20000, 31744..<50000])
        let file = try MP4File(source: ArrayRandomAccessSource(bytes))
        let track = try #require(file.tracks.first)
        #expect(track.editList.map(\.mediaTime) == [1024, 31744])
        #expect(track.editedMediaRanges(movieTimescale: file.movieTimescale) == [1024..<20000, 31744..<50000])
        #expect(file.movieHeader?.duration == UInt64(18976 + 18256), "the movie lasts the edits' sum")
    }

    @Test func theEditorReplacesChaptersInPlaceAndRemovesThem() throws {
        let bytes = try Self.muxed(chapters: [])
        let source = ArrayRandomAccessSource(bytes)
        let boxes = try MovieEditor.topLevelBoxes(of: source)
        let edit = try MovieEditor.edit(boxes: boxes, source: source, items: nil, chapters: Self.chapters)
        #expect(edit.fitsInPlace, "2 KiB of padding hold three chapters")
        var edited = bytes
        edited.replaceSubrange(Int(edit.movieRange.lowerBound)..<Int(edit.paddingRange.upperBound), with: edit.inPlaceBytes)
        #expect(edited.count == bytes.count)
        let editedSource = ArrayRandomAccessSource(edited)
        let file = try MP4File(source: editedSource)
        #expect(try file.chapters(source: editedSource).map(\.title) == Self.chapters.map(\.title))
        #expect(try MuxerTests.audioSamples(edited).count == 60)
        // Again, with other chapters: the chapter samples' mdat is reused, the size stays.
        let again = try MovieEditor.edit(boxes: try MovieEditor.topLevelBoxes(of: editedSource), source: editedSource, items: nil,
                                         chapters: [MovieChapter(seconds: 0, title: "Only")])
        #expect(again.fitsInPlace)
        var twice = edited
        twice.replaceSubrange(Int(again.movieRange.lowerBound)..<Int(again.paddingRange.upperBound), with: again.inPlaceBytes)
        let twiceSource = ArrayRandomAccessSource(twice)
        let twiceFile = try MP4File(source: twiceSource)
        #expect(try twiceFile.chapters(source: twiceSource).map(\.title) == ["Only"])
        #expect(twiceFile.tracks.count == 2, "the old chapter track is gone")
        // Removal leaves no track, reference or list.
        let removal = try MovieEditor.edit(boxes: try MovieEditor.topLevelBoxes(of: twiceSource), source: twiceSource, items: nil, chapters: [])
        var none = twice
        none.replaceSubrange(Int(removal.movieRange.lowerBound)..<Int(removal.paddingRange.upperBound), with: removal.inPlaceBytes)
        let noneSource = ArrayRandomAccessSource(none)
        let noneFile = try MP4File(source: noneSource)
        #expect(noneFile.tracks.count == 1 && noneFile.tracks[0].references.isEmpty)
        #expect(try noneFile.chapterList() == nil)
    }
}
