@testable import KeyFrameKit
@testable import MediaFormats
@testable import MediaStreaming
@testable import MediaValidation
import Testing
import TestSupport

/// A bounded, seeded mutation fuzz run of the streaming text parsers, in `make test`: the media
/// playlist parser (`HLSMediaPlaylist(text:)`, which `keyframe decode x.m3u8` runs on any file)
/// and the HTTP `Range` parser (which the server runs on any request). Neither may trap; a
/// playlist that parses writes a text that parses again to the same segments; a range lies
/// within the file.
@Suite struct StreamingParserFuzzTests {
    static var seeds: [String] {
        var live = HLSMediaPlaylist(mapURI: "init.mp4", segments: (1...3).map { .init(uri: "segment-0000\($0).m4s", duration: 0.975238, programDateTime: 1.7e9) },
                                    playlistType: nil, isEnded: false, mediaSequence: 4)
        live.partTarget = 0.5
        live.segments[2].parts = [.init(uri: "segment-00003.1.m4s", duration: 0.5)]
        live.openParts = [.init(uri: "segment-00004.1.m4s", duration: 0.5)]
        live.preloadHint = "segment-00004.2.m4s"
        live.canBlockReload = true
        let vod = HLSMediaPlaylist(mapURI: "init.mp4", segments: [.init(uri: "a.m4s", duration: 6.016), .init(uri: "b.m4s", duration: 2.5)])
        return [live.text, vod.text, "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,CODECS=\"mp4a.40.2\"\n64k/index.m3u8\n",
                "#EXTM3U\n#EXTINF:1e308,\nx\n#EXTINF:inf,\ny\n#EXT-X-MAP:URI=\"\n"]
    }

    /// Tokens a mutation inserts: tags, attribute pieces, numbers at the edges.
    static let tokens = ["#EXTINF:", "#EXT-X-MAP:URI=\"", "#EXT-X-MEDIA-SEQUENCE:", "#EXT-X-ENDLIST", "#EXT-X-BYTERANGE:1@0", ",", "\"", "=",
                         "\n", "\r\n", "9223372036854775807", "-1", "1e309", "nan", "inf", "0x10", "URI=", "#EXT-X-PART:DURATION=", "\u{0}", "é"]

    static func mutate(_ text: String, _ random: inout SplitMix64) -> String {
        var bytes = Array(text.utf8)
        for _ in 0..<Int.random(in: 1...6, using: &random) {
            let at = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<5, using: &random) {
            case 0 where !bytes.isEmpty: bytes[at] = UInt8.random(in: 0...255, using: &random)
            case 1 where !bytes.isEmpty: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...16, using: &random)))
            case 2: bytes.insert(contentsOf: Array(tokens.randomElement(using: &random)!.utf8), at: at)
            case 3 where !bytes.isEmpty:
                let end = min(bytes.count, at + Int.random(in: 1...64, using: &random))
                bytes.insert(contentsOf: bytes[at..<end], at: at)
            default: bytes = Array(bytes.prefix(at))
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func mediaPlaylistsNeverTrapAndRoundTrip() {
        var random = SplitMix64(state: 13)
        var parsed = 0
        for round in 0..<6000 {
            let seed = Self.seeds[round % Self.seeds.count]
            let text = round < Self.seeds.count ? seed : Self.mutate(seed, &random)
            guard let playlist = try? HLSMediaPlaylist(text: text) else { continue }
            parsed += 1
            let again = try? HLSMediaPlaylist(text: playlist.text)
            #expect(again?.segments.map(\.uri) == playlist.segments.map(\.uri) && again?.mapURI == playlist.mapURI, "round \(round): \(text.debugDescription)")
            #expect(playlist.segments.allSatisfy { $0.duration.isFinite && $0.duration >= 0 })
        }
        #expect(parsed > 500, "most mutations still parse: \(parsed)")
        // What the first runs found: a huge or infinite EXTINF (it trapped), an unquoted MAP URI.
        for text in ["#EXTM3U\n#EXTINF:1e308,\nx\n", "#EXTM3U\n#EXTINF:inf,\nx\n", "#EXTM3U\n#EXT-X-MAP:URI=init.mp4\n",
                     "#EXTM3U\n#EXT-X-MAP:URI=\"init.mp4\n"] {
            #expect(throws: PipelineError.self, "\(text.debugDescription) is refused") { try HLSMediaPlaylist(text: text) }
        }
    }

    @Test func byteRangesNeverTrapAndStayInTheFile() {
        var random = SplitMix64(state: 7)
        let seeds = ["bytes=0-99", "bytes=-5", "bytes=10-", "bytes=5-1", "bytes=0-1,2-3", "bytes = 1 - 2", "BYTES=3-4", "bytes=-0"]
        for round in 0..<20000 {
            let value = Self.mutate(seeds[round % seeds.count], &random)
            let size = [Int64(0), 1, 100, Int64.max / 2].randomElement(using: &random)!
            switch HLSOrigin.byteRange(value, size: size) {
            case .part(let range):
                #expect(range.lowerBound >= 0 && range.upperBound <= size && !range.isEmpty, "\(value.debugDescription) of \(size): \(range)")
            case .whole, .unsatisfiable: break
            }
        }
    }
}
