import Foundation
@testable import KeyFrameKit
@testable import MediaFormats
@testable import MediaStreaming
@testable import MediaValidation
import Testing
import TestSupport

/// The validator's playlist reader (`HLSPlaylistDocument`): what our writer, our master
/// playlist and FFmpeg's HLS muxer write reads back to every value with its line; each kind of
/// syntax problem is recorded on its line and the rest still read; hostile text never traps,
/// never yields a negative or infinite duration or a byte range past 2⁶³ − 1, and a few
/// megabytes read in linear time.
@Suite(.blocking) struct HLSPlaylistDocumentTests {
    typealias Kind = HLSPlaylistDocument.Problem.Kind

    // MARK: What we write

    static var vod: HLSMediaPlaylist {
        HLSMediaPlaylist(mapURI: "init.mp4", segments: [.init(uri: "segment-00001.m4s", duration: 6.016),
                                                        .init(uri: "segment-00002.m4s", duration: 2.5)])
    }

    static var live: HLSMediaPlaylist {
        var segments = (1...3).map { HLSMediaPlaylist.Segment(uri: "segment-0000\($0).m4s", duration: 1.984, programDateTime: 1_764_048_662.5 + Double($0)) }
        segments[1].parts = [.init(uri: "segment-00002.1.m4s", duration: 0.992), .init(uri: "segment-00002.2.m4s", duration: 0.992, independent: false)]
        segments[2].parts = [.init(uri: "segment-00003.1.m4s", duration: 0.992), .init(uri: "segment-00003.2.m4s", duration: 0.992)]
        var list = HLSMediaPlaylist(mapURI: "init.mp4", segments: segments, playlistType: nil, isEnded: false, mediaSequence: 4)
        list.partTarget = 1
        list.openParts = [.init(uri: "segment-00004.1.m4s", duration: 0.992)]
        list.preloadHint = "segment-00004.2.m4s"
        list.targetHint = 2
        list.canBlockReload = true
        return list
    }

    static var master: String {
        StreamManifests.masterPlaylist([
            .init(path: "64k", segments: [(8000, 96000), (7000, 96000)], timescale: 48000, channelCount: 2, priming: 2048),
            .init(path: "128k", segments: [(16000, 96000), (15000, 96000)], timescale: 48000, channelCount: 2, priming: 2048),
        ])
    }

    /// What `ffmpeg -f hls -hls_segment_type fmp4 -hls_time 2` (5.1) writes for 7.3 s of AAC,
    /// and with `-hls_flags single_file`: the mutation seeds (the tests below run FFmpeg itself).
    static let ffmpegSegments = """
        #EXTM3U
        #EXT-X-VERSION:7
        #EXT-X-TARGETDURATION:2
        #EXT-X-MEDIA-SEQUENCE:0
        #EXT-X-PLAYLIST-TYPE:VOD
        #EXT-X-MAP:URI="init.mp4"
        #EXTINF:2.005333,
        index0.m4s
        #EXTINF:2.005333,
        index1.m4s
        #EXTINF:2.005333,
        index2.m4s
        #EXTINF:1.305333,
        index3.m4s
        #EXT-X-ENDLIST

        """
    static let ffmpegSingleFile = """
        #EXTM3U
        #EXT-X-VERSION:7
        #EXT-X-TARGETDURATION:2
        #EXT-X-MEDIA-SEQUENCE:0
        #EXT-X-PLAYLIST-TYPE:VOD
        #EXT-X-MAP:URI="index.m4s",BYTERANGE="765@0"
        #EXTINF:2.005333,
        #EXT-X-BYTERANGE:32532@765
        index.m4s
        #EXTINF:2.005333,
        #EXT-X-BYTERANGE:32664@33297
        index.m4s
        #EXTINF:2.005333,
        #EXT-X-BYTERANGE:32649@65961
        index.m4s
        #EXTINF:1.305333,
        #EXT-X-BYTERANGE:21555@98610
        index.m4s
        #EXT-X-ENDLIST

        """

    /// The line (from 1) of the first line of `text` equal to `line`.
    static func line(of line: String, in text: String) -> Int? {
        text.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0 == line }.map { $0 + 1 }
    }

    @Test func ourVODPlaylistReadsBack() throws {
        let text = Self.vod.text
        let document = HLSPlaylistDocument(text: text)
        #expect(document.problems.isEmpty, "\(document.problems)")
        #expect(document.startsWithEXTM3U && !document.isMaster)
        #expect(document.version == 7 && document.versionLine == 2)
        #expect(document.targetDuration == Self.vod.targetDuration && document.targetDurationLine == 3)
        #expect(document.playlistType == "VOD" && document.mediaSequence == 0 && document.independentSegments)
        #expect(document.endList && document.endListLine == Self.line(of: "#EXT-X-ENDLIST", in: text))
        #expect(document.partTarget == nil && document.serverControl == nil && document.preloadHints.isEmpty && document.trailingParts.isEmpty)
        let mapLine = try #require(Self.line(of: "#EXT-X-MAP:URI=\"init.mp4\"", in: text))
        #expect(document.maps == [.init(uri: "init.mp4", byteRange: nil, line: mapLine)])
        #expect(document.segments.map(\.uri) == Self.vod.segments.map(\.uri))
        #expect(document.segments.map(\.duration) == Self.vod.segments.map(\.duration))
        for segment in document.segments {
            #expect(segment.line == Self.line(of: segment.uri, in: text) && segment.extinfLine == segment.line - 1)
            #expect(segment.map?.uri == "init.mp4" && segment.map?.line == mapLine && segment.byteRange == nil && segment.title.isEmpty)
            #expect(!segment.discontinuity && !segment.gap && segment.parts.isEmpty && segment.key == nil && segment.programDateTime == nil)
        }
        #expect(document.tags.first?.name == "EXTM3U" && document.tags.count == text.split(separator: "\n").filter { $0.hasPrefix("#EXT") }.count)
        #expect(document.tags(named: "EXTINF").map(\.value) == ["6.016000,", "2.500000,"])
    }

    @Test func ourLowLatencyPlaylistReadsBack() throws {
        let list = Self.live
        let text = list.text
        let document = HLSPlaylistDocument(text: text)
        #expect(document.problems.isEmpty, "\(document.problems)")
        #expect(!document.endList && document.endListLine == nil && document.playlistType == nil && document.mediaSequence == 4)
        #expect(document.targetDuration == 2 && document.partTarget == 1 && document.partTargetLine == Self.line(of: "#EXT-X-PART-INF:PART-TARGET=1.000", in: text))
        let control = try #require(document.serverControl)
        #expect(control.canBlockReload && control.partHoldBack == 3 && control.holdBack == nil && control.canSkipUntil == nil)
        #expect(control.line == Self.line(of: "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=3.000", in: text))
        #expect(document.segments.map(\.uri) == list.segments.map(\.uri) && document.segments.allSatisfy { $0.duration == 1.984 })
        #expect(document.segments.map(\.programDateTimeSeconds) == list.segments.map(\.programDateTime))
        #expect(document.segments[0].programDateTime == "2025-11-25T05:31:03.500Z")
        // The writer lists the parts of the last three segments: here every one (the first has none).
        for (read, written) in zip(document.segments, list.segments) {
            #expect(read.parts.map(\.uri) == written.parts.map(\.uri) && read.parts.map(\.duration) == written.parts.map(\.duration))
            #expect(read.parts.map(\.independent) == written.parts.map(\.independent))
            #expect(read.parts.allSatisfy { Self.line(of: "#EXT-X-PART:DURATION=0.992000,URI=\"\($0.uri)\"" + ($0.independent ? ",INDEPENDENT=YES" : ""), in: text) == $0.line })
        }
        #expect(document.trailingParts.map(\.uri) == ["segment-00004.1.m4s"] && document.trailingParts[0].duration == 0.992 && document.trailingParts[0].independent)
        let hintLine = Self.line(of: "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"segment-00004.2.m4s\"", in: text)
        #expect(document.preloadHints == [.init(type: "PART", uri: "segment-00004.2.m4s", byteRangeStart: nil, byteRangeLength: nil, line: try #require(hintLine))])
    }

    @Test func ourMasterPlaylistReadsBack() throws {
        let text = Self.master
        let document = HLSPlaylistDocument(text: text)
        #expect(document.problems.isEmpty, "\(document.problems)")
        #expect(document.isMaster && document.segments.isEmpty && document.independentSegments && document.version == 7)
        #expect(document.variants.map(\.uri) == ["128k/index.m3u8", "64k/index.m3u8"])
        #expect(document.variants.map(\.bandwidth) == [16000 * 8 * 48000 / 96000, 8000 * 8 * 48000 / 96000])
        #expect(document.variants.map(\.averageBandwidth) == [31000 * 8 * 48000 / 192_000, 15000 * 8 * 48000 / 192_000])
        for variant in document.variants {
            #expect(variant.codecs == "mp4a.40.2" && variant.attributes["CODECS"]?.isQuoted == true && variant.resolution == nil)
            #expect(variant.line == Self.line(of: variant.uri, in: text) && variant.tagLine == variant.line - 1)
        }
    }

    // MARK: What FFmpeg writes

    static func ffmpegHLS(_ extra: [String]) throws -> (directory: URL, text: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("HLSPlaylistDocumentTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Subprocess.succeed("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=f=440:d=7.3:r=48000", "-ac", "2", "-c:a", "aac", "-b:a", "128k",
                                          "-f", "hls", "-hls_segment_type", "fmp4", "-hls_time", "2", "-hls_playlist_type", "vod"]
                                         + extra + [directory.appendingPathComponent("index.m3u8").path])
        return (directory, try String(contentsOf: directory.appendingPathComponent("index.m3u8"), encoding: .utf8))
    }

    @Test func ffmpegFMP4SegmentsReadBack() throws {
        let (directory, text) = try Self.ffmpegHLS([])
        defer { try? FileManager.default.removeItem(at: directory) }
        let document = HLSPlaylistDocument(text: text)
        #expect(document.problems.isEmpty, "\(document.problems)")
        #expect(document.version == 7 && document.targetDuration == 2 && document.mediaSequence == 0 && document.playlistType == "VOD" && document.endList)
        #expect(document.segments.map(\.uri) == (0..<4).map { "index\($0).m4s" })
        #expect(document.segments.map(\.duration) == [2.005333, 2.005333, 2.005333, 1.305333])
        #expect(abs(document.totalDuration - 7.321332) < 1e-9)
        #expect(document.segments.allSatisfy { $0.map?.uri == "init.mp4" && $0.byteRange == nil })
        for segment in document.segments {
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent(segment.uri).path))
        }
    }

    @Test func ffmpegSingleFileByteRangesResolve() throws {
        let (directory, text) = try Self.ffmpegHLS(["-hls_flags", "single_file"])
        defer { try? FileManager.default.removeItem(at: directory) }
        let document = HLSPlaylistDocument(text: text)
        #expect(document.problems.isEmpty, "\(document.problems)")
        #expect(document.segments.map(\.duration) == [2.005333, 2.005333, 2.005333, 1.305333])
        let map = try #require(document.maps.first)
        let mapRange = try #require(map.byteRange)
        #expect(map.uri == "index.m4s" && mapRange.offset == 0 && mapRange.offsetIsExplicit)
        // The init segment, then each segment right after the one before, to the end of the file.
        var end = mapRange.end
        for segment in document.segments {
            let range = try #require(segment.byteRange)
            #expect(segment.uri == "index.m4s" && segment.map == map && range.offset == end && range.length > 0)
            #expect(segment.byteRangeLine == segment.extinfLine + 1)
            end = range.end
        }
        let size = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("index.m4s").path)[.size] as? NSNumber
        #expect(end == size?.int64Value)
    }

    // MARK: Problems, each on its line

    /// The problems of `text` as (line, kind) pairs.
    static func found(_ text: String) -> [(line: Int, kind: Kind)] {
        HLSPlaylistDocument(text: text).problems.map { ($0.line, $0.kind) }
    }

    @Test(arguments: [
        // Attribute lists (RFC 8216 4.2).
        ("#EXTM3U\n#EXT-X-MAP:URI=init.mp4\n", [(2, Kind.quotedStringExpected)]),
        ("#EXTM3U\n#EXT-X-MAP:URI=\"init.mp4\n", [(2, .malformedAttributeList)]),
        ("#EXTM3U\n#EXT-X-MAP:URI=\"a\",URI=\"b\"\n", [(2, .duplicateAttribute)]),
        ("#EXTM3U\n#EXT-X-MAP:URI\n", [(2, .malformedAttributeList), (2, .missingAttribute)]),
        ("#EXTM3U\n#EXT-X-MAP:URI=\"a\",\n", [(2, .malformedAttributeList)]),
        ("#EXTM3U\n#EXT-X-MAP:URI=\"a\"x\n", [(2, .malformedAttributeList)]),
        ("#EXTM3U\n#EXT-X-MAP:uri=\"a\"\n", [(2, .malformedAttributeList), (2, .missingAttribute)]),
        ("#EXTM3U\n#EXT-X-MAP:URI=\"a\", BYTERANGE=\"1@0\"\n", [(2, .whitespace)]),
        ("#EXTM3U\n#EXT-X-MAP:\n", [(2, .missingValue)]),
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,CODECS=mp4a.40.2\nv.m3u8\n", [(2, .quotedStringExpected)]),
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=\"1\"\nv.m3u8\n", [(2, .invalidValue)]),
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=99999999999999999999\nv.m3u8\n", [(2, .invalidValue)]),
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,RESOLUTION=1280*720\nv.m3u8\n", [(2, .invalidValue)]),
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,FRAME-RATE=1e3\nv.m3u8\n", [(2, .invalidValue)]),
        ("#EXTM3U\n#EXT-X-STREAM-INF:CODECS=\"mp4a.40.2\"\nv.m3u8\n", [(2, .missingAttribute)]),
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n#EXT-X-STREAM-INF:BANDWIDTH=2\nv.m3u8\n", [(2, .tagWithoutURI)]),
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n", [(2, .tagWithoutURI)]),
        ("#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"en\",DEFAULT=yes\n", [(2, .invalidValue)]),
        ("#EXTM3U\n#EXT-X-MEDIA:TYPE=SOUND,GROUP-ID=\"a\"\n", [(2, .invalidValue), (2, .missingAttribute)]),
        ("#EXTM3U\n#EXT-X-KEY:METHOD=AES-128,IV=0xZZ\n", [(2, .invalidValue), (2, .missingAttribute)]),
        ("#EXTM3U\n#EXT-X-PART:DURATION=inf,URI=\"p\"\n", [(2, .invalidValue)]),
        ("#EXTM3U\n#EXT-X-PRELOAD-HINT:TYPE=PART\n", [(2, .missingAttribute)]),
        // EXTINF (RFC 8216 4.3.2.1) and URI lines.
        ("#EXTM3U\n#EXTINF:-1,\na.m4s\n", [(2, .invalidDuration)]),
        ("#EXTM3U\n#EXTINF:nan,\na.m4s\n", [(2, .invalidDuration)]),
        ("#EXTM3U\n#EXTINF:1e308,\na.m4s\n", [(2, .invalidDuration)]),
        ("#EXTM3U\n#EXTINF:2\na.m4s\n", [(2, .invalidDuration)]),
        ("#EXTM3U\n#EXTINF\na.m4s\n", [(2, .missingValue)]),
        ("#EXTM3U\na.m4s\n", [(2, .uriWithoutTag)]),
        ("#EXTM3U\n#EXTINF:1,\n#EXTINF:1,\na.m4s\n", [(2, .tagWithoutURI)]),
        ("#EXTM3U\n#EXTINF:1,\na.m4s\n#EXTINF:1,\n", [(4, .tagWithoutURI)]),
        // Playlist tags.
        ("#EXTM3U\n#EXT-X-TARGETDURATION:\n", [(2, .missingValue)]),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:2.5\n", [(2, .invalidValue)]),
        ("#EXTM3U\n#EXT-X-MEDIA-SEQUENCE:-1\n", [(2, .invalidValue)]),
        ("#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-VERSION:3\n", [(3, .duplicateTag)]),
        ("#EXTM3U\n#EXT-X-ENDLIST:YES\n", [(2, .unexpectedValue)]),
        ("#EXTM3U\n#EXT-X-PLAYLIST-TYPE:LIVE\n", [(2, .invalidValue)]),
        ("#EXTM3U\n#EXT-X-PROGRAM-DATE-TIME:yesterday\n#EXTINF:1,\na\n", [(2, .invalidValue)]),
        // Byte ranges (RFC 8216 4.3.2.2).
        ("#EXTM3U\n#EXTINF:1,\n#EXT-X-BYTERANGE:100\na.mp4\n", [(3, .invalidByteRange)]),
        ("#EXTM3U\n#EXTINF:1,\n#EXT-X-BYTERANGE:10@0\na.mp4\n#EXTINF:1,\n#EXT-X-BYTERANGE:10\nb.mp4\n", [(6, .invalidByteRange)]),
        ("#EXTM3U\n#EXTINF:1,\n#EXT-X-BYTERANGE:9223372036854775807@1\na.mp4\n", [(3, .invalidByteRange)]),
        ("#EXTM3U\n#EXTINF:1,\n#EXT-X-BYTERANGE:9223372036854775807@0\na.mp4\n#EXTINF:1,\n#EXT-X-BYTERANGE:1\na.mp4\n", [(6, .invalidByteRange)]),
        ("#EXTM3U\n#EXTINF:1,\n#EXT-X-BYTERANGE:x@1\na.mp4\n", [(3, .invalidByteRange)]),
        ("#EXTM3U\n#EXT-X-MAP:URI=\"a\",BYTERANGE=\"99999999999999999999\"\n", [(2, .invalidByteRange)]),
        // The text as a whole (RFC 8216 4.1, 4.3.1.1).
        ("\u{FEFF}#EXTM3U\n", [(1, .byteOrderMark)]),
        ("#EXT-X-VERSION:7\n", [(1, .missingEXTM3U)]),
        ("", [(1, .missingEXTM3U)]),
        ("#EXTM3U \n", [(1, .whitespace)]),
        ("#EXTM3U\n#EXTINF:1,\tx\na\n", [(2, .controlCharacter)]),
        ("#EXTM3U\n#EXTINF:1,\na\rb\n", [(3, .controlCharacter)]),
        ("#EXTM3U\n#EXTM3U\n", [(2, .duplicateTag)]),
    ] as [(String, [(Int, Kind)])])
    func eachProblemIsOnItsLine(text: String, expected: [(Int, Kind)]) {
        let found = Self.found(text)
        #expect(found.map(\.line) == expected.map(\.0) && found.map(\.kind) == expected.map(\.1),
                "\(text.debugDescription): \(HLSPlaylistDocument(text: text).problems)")
    }

    @Test func problemsAreReadPastAndNamed() throws {
        // A BOM, CRLF line ends, an unquoted URI: recorded, and everything still read.
        let text = "\u{FEFF}#EXTM3U\r\n#EXT-X-TARGETDURATION:2\r\n#EXT-X-MAP:URI=init.mp4\r\n#EXTINF:1.5,first\r\na.m4s\r\n#EXTINF:oops,\r\nb.m4s\r\n"
        let document = HLSPlaylistDocument(text: text)
        #expect(document.startsWithEXTM3U && document.targetDuration == 2)
        #expect(document.problems.map(\.line) == [1, 3, 6] && document.problems.map(\.kind) == [.byteOrderMark, .quotedStringExpected, .invalidDuration])
        #expect(document.problems[1].tag == "EXT-X-MAP" && document.problems[1].message.contains("RFC 8216 4.3.2.5"))
        #expect(document.problems[2].description.hasPrefix("line 6 (EXTINF): "))
        #expect(document.segments.map(\.uri) == ["a.m4s", "b.m4s"] && document.segments.map(\.duration) == [1.5, 0])
        #expect(document.segments.map(\.line) == [5, 7] && document.segments[0].title == "first" && document.segments[0].map?.uri == "init.mp4")
        #expect(HLSPlaylistDocument(text: "#EXTM3U\r\n#EXT-X-ENDLIST\r\n").problems.isEmpty)
    }

    @Test func quotedStringsKeepTheirCommas() throws {
        let text = """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="English, stereo",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="2",URI="en/index.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=2000000,AVERAGE-BANDWIDTH=1500000,CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=1280x720,FRAME-RATE=29.970,AUDIO="aac",CLOSED-CAPTIONS=NONE
            720p/index.m3u8
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=100000,CODECS="avc1.64001f",URI="720p/iframes.m3u8"

            """
        let document = HLSPlaylistDocument(text: text)
        #expect(document.problems.isEmpty, "\(document.problems)")
        #expect(document.isMaster)
        let variant = try #require(document.variants.first)
        #expect(variant.codecs == "avc1.64001f,mp4a.40.2" && variant.resolution == .init(width: 1280, height: 720) && variant.frameRate == 29.97)
        #expect(variant.bandwidth == 2_000_000 && variant.averageBandwidth == 1_500_000 && variant.audioGroup == "aac" && variant.closedCaptions == "NONE")
        #expect(variant.uri == "720p/index.m3u8" && variant.line == 4 && variant.tagLine == 3)
        let rendition = try #require(document.media.first)
        #expect(rendition.type == "AUDIO" && rendition.groupID == "aac" && rendition.name == "English, stereo" && rendition.uri == "en/index.m3u8")
        #expect(rendition.isDefault && rendition.autoselect && rendition.language == "en" && rendition.channels == "2" && rendition.line == 2)
        #expect(document.iFrameVariants.map(\.uri) == ["720p/iframes.m3u8"] && document.iFrameVariants[0].line == 5)
        let list = HLSPlaylistDocument.AttributeList(parsing: "CODECS=\"a,b\",X=1,Y=\"\"")
        #expect(list.attributes.map(\.name) == ["CODECS", "X", "Y"] && list["CODECS"]?.value == "a,b" && list["X"]?.decimalInteger == 1 && list["Y"]?.value == "")
    }

    @Test func byteRangesContinueFromTheSameResource() throws {
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:2
            #EXT-X-MAP:URI="main.mp4",BYTERANGE="700"
            #EXTINF:2,
            #EXT-X-BYTERANGE:1000@700
            main.mp4
            #EXTINF:2,
            #EXT-X-BYTERANGE:1100
            main.mp4
            #EXTINF:2,
            #EXT-X-BYTERANGE:900
            main.mp4
            #EXT-X-PART:DURATION=1,URI="next.mp4",BYTERANGE="50@0"
            #EXT-X-PART:DURATION=1,URI="next.mp4",BYTERANGE="60",INDEPENDENT=YES
            #EXT-X-PRELOAD-HINT:TYPE=PART,URI="next.mp4",BYTERANGE-START=110
            #EXT-X-RENDITION-REPORT:URI="../64k/index.m3u8",LAST-MSN=3,LAST-PART=1

            """
        let document = HLSPlaylistDocument(text: text)
        #expect(document.problems.isEmpty, "\(document.problems)")
        #expect(document.maps.first?.byteRange == .init(length: 700, offset: 0, offsetIsExplicit: false))
        #expect(document.segments.map(\.byteRange) == [.init(length: 1000, offset: 700, offsetIsExplicit: true), .init(length: 1100, offset: 1700, offsetIsExplicit: false),
                                                       .init(length: 900, offset: 2800, offsetIsExplicit: false)])
        #expect(document.trailingParts.map(\.byteRange) == [.init(length: 50, offset: 0, offsetIsExplicit: true), .init(length: 60, offset: 50, offsetIsExplicit: false)])
        #expect(document.trailingParts.map(\.independent) == [false, true] && document.trailingParts.map(\.line) == [13, 14])
        #expect(document.preloadHints == [.init(type: "PART", uri: "next.mp4", byteRangeStart: 110, byteRangeLength: nil, line: 15)])
        #expect(document.renditionReports == [.init(uri: "../64k/index.m3u8", lastMediaSequence: 3, lastPart: 1, line: 16)])
        // Another resource in between breaks the chain.
        let broken = HLSPlaylistDocument(text: "#EXTM3U\n#EXTINF:1,\n#EXT-X-BYTERANGE:10@0\na.mp4\n#EXTINF:1,\n#EXT-X-BYTERANGE:10@0\nb.mp4\n#EXTINF:1,\n#EXT-X-BYTERANGE:10\na.mp4\n")
        #expect(broken.problems.map(\.line) == [9] && broken.segments.map(\.byteRange?.offset) == [0, 0, nil] && broken.segments[2].byteRangeLine == 9)
    }

    @Test func segmentTagsApplyWhereRFC8216Says() {
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXT-X-DISCONTINUITY-SEQUENCE:2
            #EXT-X-KEY:METHOD=AES-128,URI="key.bin",IV=0x00000000000000000000000000000001
            #EXT-X-MAP:URI="a.mp4"
            #EXTINF:4,
            1.m4s
            #EXT-X-DISCONTINUITY
            #EXT-X-MAP:URI="b.mp4"
            #EXT-X-PROGRAM-DATE-TIME:2025-11-25T06:31:02.250+01:00
            #EXT-X-BITRATE:128
            #EXT-X-GAP
            #EXTINF:4,
            2.m4s
            #EXT-X-KEY:METHOD=NONE
            #EXTINF:4,
            3.m4s
            #EXT-X-START:TIME-OFFSET=-12.5,PRECISE=YES
            #EXT-X-SERVER-CONTROL:CAN-SKIP-UNTIL=24,HOLD-BACK=12
            #EXT-X-DATERANGE:ID="ad",START-DATE="2025-11-25T05:31:02Z",DURATION=30,X-COM-EXAMPLE="a,b"

            """
        let document = HLSPlaylistDocument(text: text)
        #expect(document.problems.isEmpty, "\(document.problems)")
        #expect(document.discontinuitySequence == 2 && document.discontinuitySequenceLine == 3)
        #expect(document.segments.map(\.map?.uri) == ["a.mp4", "b.mp4", "b.mp4"] && document.maps.map(\.line) == [5, 9])
        #expect(document.segments.map(\.discontinuity) == [false, true, false] && document.segments.map(\.gap) == [false, true, false])
        #expect(document.segments.map(\.key?.method) == ["AES-128", "AES-128", "NONE"] && document.segments[0].key?.uri == "key.bin")
        #expect(document.segments.map(\.bitrate) == [nil, 128, 128])
        #expect(document.segments.map(\.programDateTimeSeconds) == [nil, 1_764_048_662.25, nil])
        #expect(document.start == .init(timeOffset: -12.5, precise: true, line: 18))
        #expect(document.serverControl?.canSkipUntil == 24 && document.serverControl?.holdBack == 12 && document.serverControl?.canBlockReload == false)
        #expect(document.dateRanges.map(\.id) == ["ad"] && document.dateRanges[0].attributes["X-COM-EXAMPLE"]?.value == "a,b")
    }

    // MARK: Hostile text

    static let tokens = ["#EXTINF:", "#EXT-X-MAP:URI=\"", "#EXT-X-BYTERANGE:", "#EXT-X-PART:DURATION=", "#EXT-X-STREAM-INF:BANDWIDTH=",
                         "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"x\",BYTERANGE-START=", "@", ",", "\"", "=", "\n", "\r\n", "\r", "\u{FEFF}", "\t",
                         "9223372036854775807", "9223372036854775808", "18446744073709551615", "99999999999999999999999", "-1", "1e308", "1e309",
                         "inf", "nan", "0x10", "1" + String(repeating: "0", count: 400), "0.000000001", "URI=", "BYTERANGE=\"", "\u{0}", "é"]

    /// `text` mutated a few times: bytes changed, deleted, inserted and repeated; lines deleted
    /// and repeated; a number made hostile; the end cut off.
    static func mutate(_ text: String, _ random: inout SplitMix64) -> String {
        var bytes = Array(text.utf8)
        for _ in 0..<Int.random(in: 1...6, using: &random) {
            let at = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
            let lineStart = bytes[..<at].lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
            let lineEnd = bytes[at...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? bytes.count
            switch Int.random(in: 0..<9, using: &random) {
            case 0 where !bytes.isEmpty: bytes[at] = UInt8.random(in: 0...255, using: &random)
            case 1 where !bytes.isEmpty: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...16, using: &random)))
            case 2: bytes.insert(contentsOf: Array(tokens.randomElement(using: &random)!.utf8), at: at)
            case 3 where !bytes.isEmpty: bytes.insert(contentsOf: bytes[at..<min(bytes.count, at + Int.random(in: 1...64, using: &random))], at: at)
            case 4: bytes.removeSubrange(lineStart..<lineEnd)
            case 5: bytes.insert(contentsOf: bytes[lineStart..<lineEnd], at: lineStart)
            case 6, 7:
                // The digits around `at` become a hostile number.
                var start = at, end = at
                while start > 0, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[start - 1]) { start -= 1 }
                while end < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[end]) { end += 1 }
                let hostile = ["9223372036854775807", "9223372036854775806", "18446744073709551615", "1e308", "inf", "-0", "0", "99999999999999999999"]
                bytes.replaceSubrange(start..<end, with: Array(hostile.randomElement(using: &random)!.utf8))
            default: bytes = Array(bytes.prefix(at))
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func checkInvariants(_ document: HLSPlaylistDocument, lineCount: Int, _ comment: @autoclosure () -> String) {
        func valid(_ range: HLSPlaylistDocument.ByteRange?) -> Bool {
            guard let range else { return true }
            return range.offset >= 0 && range.length >= 0 && !range.offset.addingReportingOverflow(range.length).overflow
        }
        func valid(_ part: HLSPlaylistDocument.Part) -> Bool { part.duration.isFinite && part.duration >= 0 && valid(part.byteRange) }
        let segmentsValid = document.segments.allSatisfy { segment in
            segment.duration.isFinite && segment.duration >= 0 && valid(segment.byteRange) && valid(segment.map?.byteRange) && segment.parts.allSatisfy(valid)
                && segment.extinfLine < segment.line && (1...lineCount).contains(segment.line)
        }
        #expect(segmentsValid, "\(comment())")
        #expect(document.trailingParts.allSatisfy(valid) && document.maps.allSatisfy { valid($0.byteRange) }, "\(comment())")
        #expect(document.preloadHints.allSatisfy { hint in
            (hint.byteRangeStart ?? 0) >= 0 && (hint.byteRangeLength ?? 0) >= 0 && !(hint.byteRangeStart ?? 0).addingReportingOverflow(hint.byteRangeLength ?? 0).overflow
        }, "\(comment())")
        #expect(document.partTarget.map { $0.isFinite && $0 >= 0 } ?? true, "\(comment())")
        #expect(document.problems.allSatisfy { (1...lineCount).contains($0.line) } && zip(document.problems, document.problems.dropFirst()).allSatisfy { $0.line <= $1.line },
                "\(comment())")
        #expect(document.problems.count <= HLSPlaylistDocument.maximumProblems, "\(comment())")
    }

    @Test func mutantsNeverTrapNorReadAnImpossibleValue() {
        let seeds = [Self.vod.text, Self.live.text, Self.master, Self.ffmpegSegments, Self.ffmpegSingleFile,
                     "#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"x, y\"\n#EXT-X-STREAM-INF:BANDWIDTH=1,CODECS=\"a,b\",RESOLUTION=1x1\nv.m3u8\n",
                     "#EXTM3U\n#EXTINF:1,\n#EXT-X-BYTERANGE:10@0\na\n#EXTINF:1,\n#EXT-X-BYTERANGE:10\na\n#EXT-X-PART:DURATION=1,URI=\"p\",BYTERANGE=\"5@0\"\n#EXT-X-PART:DURATION=1,URI=\"p\",BYTERANGE=\"5\"\n"]
        var random = SplitMix64(state: 21)
        var withProblems = 0
        for round in 0..<6000 {
            let seed = seeds[round % seeds.count]
            let text = round < seeds.count ? seed : Self.mutate(seed, &random)
            let document = HLSPlaylistDocument(text: text)
            if round < seeds.count { #expect(document.problems.isEmpty, "seed \(round): \(document.problems)") }
            if !document.problems.isEmpty { withProblems += 1 }
            let lineCount = text.utf8.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
            Self.checkInvariants(document, lineCount: lineCount, "round \(round): \(text.debugDescription)")
            // Reading is a function of the text.
            if round % 100 == 0 { #expect(HLSPlaylistDocument(text: text) == document) }
        }
        #expect(withProblems > 3000, "most mutants have a problem to report: \(withProblems)")
    }

    @Test func megabytesReadInLinearTime() {
        let size = 3 << 20
        let texts = [
            // One long line of each kind: an attribute list, a quoted-string without its end, a URI, a number, a tag name.
            "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1," + String(repeating: "CODECS=\"a,b\",", count: size / 14) + "\nv.m3u8\n",
            "#EXTM3U\n#EXT-X-MAP:URI=\"" + String(repeating: "a,=", count: size / 3) + "\n",
            "#EXTM3U\n#EXTINF:1,\n" + String(repeating: "a", count: size) + "\n",
            "#EXTM3U\n#EXTINF:" + String(repeating: "9", count: size) + ",\na\n",
            "#EXTM3U\n#EXT-X-BYTERANGE:" + String(repeating: "1", count: size) + "@1\n",
            "#EXTM3U\n#EXT" + String(repeating: "X", count: size) + "\n",
            "#EXTM3U\n#EXT-X-PART:" + String(repeating: "A=1,", count: size / 4) + "\n",
            // Many short lines: segments, problems, blank lines.
            "#EXTM3U\n" + String(repeating: "#EXTINF:2.005333,\n#EXT-X-BYTERANGE:100\nsegment.m4s\n", count: size / 48),
            "#EXTM3U\n" + String(repeating: "x\n", count: size / 2),
            String(repeating: "\n", count: size),
        ]
        for text in texts {
            let clock = ContinuousClock()
            var document: HLSPlaylistDocument?
            let elapsed = clock.measure { document = HLSPlaylistDocument(text: text) }
            // A release build reads each in about a tenth of a second, a debug build in under one;
            // the bound leaves room for a loaded machine and still catches anything quadratic
            // (hours, at 3 MB).
            #expect(elapsed < .seconds(10), "\(text.prefix(40).debugDescription)…: \(elapsed)")
            if let document {
                Self.checkInvariants(document, lineCount: text.utf8.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }, "\(text.prefix(40).debugDescription)")
            }
        }
    }
}
