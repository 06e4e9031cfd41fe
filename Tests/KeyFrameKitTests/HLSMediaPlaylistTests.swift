import Foundation
import KeyFrameKit
import SystemPackage
import Testing

/// The playlist's text (RFC 8216 and the low-latency tags of RFC 8216bis), and its parse.
@Suite struct HLSMediaPlaylistTests {
    @Test func aLowLatencyPlaylistListsPartsAndHintsTheNext() throws {
        var segment = HLSMediaPlaylist.Segment(uri: "segment-00001.m4s", duration: 1.984, programDateTime: 0)
        segment.parts = [.init(uri: "segment-00001.1.m4s", duration: 0.992), .init(uri: "segment-00001.2.m4s", duration: 0.992)]
        var list = HLSMediaPlaylist(mapURI: "init.mp4", segments: [segment], playlistType: nil, isEnded: false, mediaSequence: 4)
        list.partTarget = 1
        list.openParts = [.init(uri: "segment-00002.1.m4s", duration: 0.992)]
        list.preloadHint = "segment-00002.2.m4s"
        list.targetHint = 2
        list.canBlockReload = true
        let text = list.text
        #expect(text.contains("#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=3.000\n#EXT-X-PART-INF:PART-TARGET=1.000\n"))
        #expect(text.contains("#EXT-X-PROGRAM-DATE-TIME:1970-01-01T00:00:00.000Z\n#EXT-X-PART:DURATION=0.992000,URI=\"segment-00001.1.m4s\",INDEPENDENT=YES\n"))
        #expect(text.hasSuffix("segment-00001.m4s\n#EXT-X-PART:DURATION=0.992000,URI=\"segment-00002.1.m4s\",INDEPENDENT=YES\n"
                               + "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"segment-00002.2.m4s\"\n"), "\(text)")
        #expect(text.contains("#EXT-X-TARGETDURATION:2\n") && text.contains("#EXT-X-MEDIA-SEQUENCE:4\n") && !text.contains("ENDLIST"))
        let parsed = try HLSMediaPlaylist(text: text)
        #expect(parsed.segments.map(\.uri) == ["segment-00001.m4s"] && parsed.mapURI == "init.mp4" && parsed.mediaSequence == 4 && !parsed.isEnded)
    }

    @Test func targetDurationAndDates() throws {
        let list = HLSMediaPlaylist(mapURI: "init.mp4", segments: [.init(uri: "a", duration: 6.016), .init(uri: "b", duration: 8.49)])
        #expect(list.targetDuration == 8, "EXTINF rounded to the nearest integer is at most it")
        let dated = HLSMediaPlaylist(mapURI: nil, segments: [.init(uri: "a", duration: 1, programDateTime: 1_764_048_662.5)])
        #expect(dated.text.contains("#EXT-X-PROGRAM-DATE-TIME:2025-11-25T05:31:02.500Z"))
        #expect(throws: PipelineError.self) { try HLSMediaPlaylist(text: "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nx.m3u8\n") }
        #expect(throws: PipelineError.self) { try HLSMediaPlaylist(text: "#EXTM3U\nsegment.m4s\n") }
    }

    /// Spaces and tabs around a line, and the carriage return of a CRLF line end, are not part of
    /// a URI or tag.
    @Test func linesAreTrimmed() throws {
        let text = "#EXTM3U\r\n\t#EXT-X-TARGETDURATION:2 \r\n#EXT-X-MAP:URI=\"init.mp4\"\r\n#EXTINF:2.0,\r\n  a b.m4s \t\r\n#EXT-X-ENDLIST\r\n"
        let parsed = try HLSMediaPlaylist(text: text)
        #expect(parsed.segments.map(\.uri) == ["a b.m4s"] && parsed.mapURI == "init.mp4" && parsed.isEnded)
        #expect(" \t x y\t \r".trimmingSpaces == "x y" && "xy".trimmingSpaces == "xy" && " \t\r".trimmingSpaces == "")
    }
}

/// A playlist that names one segment many times costs a few words per naming.
@Suite struct RepeatedSegmentPlaylistTests {
    @Test func aURINamedAgainSharesItsStorage() throws {
        let text = "#EXTM3U\n#EXT-X-MAP:URI=\"init.mp4\"\n" + String(repeating: "#EXTINF:6.0,\nsegment-00001-of-the-stream.m4s\n", count: 1000)
        let playlist = try HLSMediaPlaylist(text: text)
        #expect(playlist.segments.count == 1000)
        func storage(_ uri: String) -> UnsafePointer<UInt8>? {
            var uri = uri
            return uri.withUTF8 { $0.baseAddress }
        }
        let first = try #require(playlist.segments.first).uri
        #expect(first == "segment-00001-of-the-stream.m4s")
        #expect(playlist.segments.allSatisfy { storage($0.uri) == storage(first) })
    }

    /// The files of a playlist that names one segment many times in a row are one run: the
    /// reader keeps the segment once, whatever the number of namings, and reads it that many times.
    @Test func aSegmentNamedAgainInARowIsOneRun() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("RepeatedSegmentPlaylistTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let segment: [UInt8] = Array(0..<100)
        try Data([1, 2, 3]).write(to: folder.appendingPathComponent("init.mp4"))
        try Data(segment).write(to: folder.appendingPathComponent("a.m4s"))
        try Data(segment.reversed()).write(to: folder.appendingPathComponent("b.m4s"))
        let namings = 20_000
        let text = "#EXTM3U\n#EXT-X-MAP:URI=\"init.mp4\"\n" + String(repeating: "#EXTINF:6.0,\na.m4s\n", count: namings)
            + "#EXTINF:6.0,\nb.m4s\n#EXTINF:6.0,\n./a.m4s\n#EXT-X-ENDLIST\n"
        try Data(text.utf8).write(to: folder.appendingPathComponent("index.m3u8"))
        let files = try HLSMediaPlaylist.files(of: FilePath(folder.appendingPathComponent("index.m3u8").path))
        #expect(files.segments.count == namings + 2)
        #expect(files.segments.runs.map(\.count) == [namings, 1, 1])
        #expect(files.segments.runs.map { $0.element.lastComponent?.string } == ["a.m4s", "b.m4s", "a.m4s"])
        let source = try MediaInput.open(files.initSegment, segments: files.segments)
        #expect(source.byteCount == 3 + Int64(namings + 2) * 100)
        #expect(try source.read(at: 3 + 100 * 15_000 + 98, count: 4) == [98, 99, 0, 1], "across two namings of one segment")
        #expect(try source.read(at: 3 + 100 * Int64(namings) + 99, count: 2) == [0, 0], "b's last byte, then a's first")
        let listed = try MediaInput.open(files.initSegment, segments: Array(files.segments))
        #expect(listed.byteCount == source.byteCount)
        for offset in stride(from: Int64(0), to: source.byteCount, by: 99_991) {
            #expect(try source.read(at: offset, count: 250) == listed.read(at: offset, count: 250), "at \(offset)")
        }
    }

    /// Line numbers in errors count every line of the text, blank ones too.
    @Test func errorsNameTheLine() {
        let error = #expect(throws: PipelineError.self) { try HLSMediaPlaylist(text: "#EXTM3U\n\n#EXT-X-MAP:URI=\"i.mp4\"\na.m4s\n") }
        #expect(error?.description.contains("line 4: segment a.m4s has no #EXTINF before it") == true, "\(String(describing: error))")
    }
}
