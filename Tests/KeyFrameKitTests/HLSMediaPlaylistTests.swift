import KeyFrameKit
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

    /// Line numbers in errors count every line of the text, blank ones too.
    @Test func errorsNameTheLine() {
        let error = #expect(throws: PipelineError.self) { try HLSMediaPlaylist(text: "#EXTM3U\n\n#EXT-X-MAP:URI=\"i.mp4\"\na.m4s\n") }
        #expect(error?.description.contains("line 4: segment a.m4s has no #EXTINF before it") == true, "\(String(describing: error))")
    }
}
