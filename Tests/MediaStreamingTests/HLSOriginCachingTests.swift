import Foundation
@testable import MediaStreaming
import TestSupport
import Testing

/// Issue 23, items 2 and 3, without a server: the player page at `/`, CORS on every response and
/// preflights answered, a `Cache-Control` per kind of response, validators and 304s.
@Suite struct HLSOriginCachingTests {
    static func package() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("origin-cache-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Data((0..<64).map { UInt8($0) }).write(to: url.appendingPathComponent("segment-00001.m4s"))
        try Data((0..<32).map { UInt8($0) }).write(to: url.appendingPathComponent("init.mp4"))
        try Data("#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:6.0,\nsegment-00001.m4s\n#EXT-X-ENDLIST\n".utf8)
            .write(to: url.appendingPathComponent("index.m3u8"))
        try Data("#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:6.0,\nsegment-00001.m4s\n".utf8).write(to: url.appendingPathComponent("open.m3u8"))
        try Data("<MPD type=\"static\"></MPD>".utf8).write(to: url.appendingPathComponent("manifest.mpd"))
        return url
    }

    @Test func eachKindOfResponseHasItsCacheLifetime() async throws {
        let url = try Self.package()
        defer { try? FileManager.default.removeItem(at: url) }
        let vod = HLSOrigin(publication: nil, directory: FilePath(url.path))
        try Data("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=64000,CODECS=\"mp4a.40.2\"\n64k/index.m3u8\n".utf8)
            .write(to: url.appendingPathComponent("master.m3u8"))
        let expected: [(String, String)] = [
            ("segment-00001.m4s", "public, max-age=31536000, immutable"), ("init.mp4", "public, max-age=31536000, immutable"),
            ("index.m3u8", "public, max-age=86400"), ("open.m3u8", "public, max-age=1"), ("manifest.mpd", "public, max-age=86400"),
            ("missing.m4s", "max-age=1"), ("master.m3u8", "public, max-age=86400"),
        ]
        for (name, cacheControl) in expected {
            let answer = await vod.respond(to: .init(path: [name]))
            #expect(answer.header("Cache-Control") == cacheControl, "\(name): \(answer.headers)")
        }
        // Live: the init is rewritten at the end; the plain playlist changes with every part; a
        // blocking reload's answer names one state; a part not yet written is a short 404.
        let publication = LiveHLSPublication()
        let live = HLSOrigin(publication: publication, directory: FilePath(url.path))
        publication.publish(LiveHLSPublicationTests.playlist(segments: 2, openParts: 1))
        #expect(await live.respond(to: .init(path: ["init.mp4"])).header("Cache-Control") == "no-cache")
        #expect(await live.respond(to: .init(path: ["index.m3u8"])).header("Cache-Control") == "public, max-age=1")
        let blocking = await live.respond(to: .init(path: ["index.m3u8"], query: ["_HLS_msn": "2", "_HLS_part": "0"]))
        #expect(blocking.status == 200 && blocking.header("Cache-Control") == "public, max-age=\(6 * publication.targetDuration)")
        let tooFar = await live.respond(to: .init(path: ["index.m3u8"], query: ["_HLS_msn": "9"]))
        #expect(tooFar.status == 400 && tooFar.header("Cache-Control") == "max-age=1")
    }

    @Test func validatorsAnswer304() async throws {
        let url = try Self.package()
        defer { try? FileManager.default.removeItem(at: url) }
        let origin = HLSOrigin(publication: nil, directory: FilePath(url.path))
        let first = await origin.respond(to: .init(path: ["segment-00001.m4s"]))
        let tag = try #require(first.header("ETag"))
        let modified = try #require(first.header("Last-Modified"))
        #expect(tag.hasPrefix("\"") && tag.hasSuffix("\"") && modified.hasSuffix(" GMT"))
        for request in [HLSOrigin.Request(path: ["segment-00001.m4s"], ifNoneMatch: tag),
                        HLSOrigin.Request(path: ["segment-00001.m4s"], ifNoneMatch: "\"other\", W/\(tag)"),
                        HLSOrigin.Request(path: ["segment-00001.m4s"], ifNoneMatch: "*"),
                        HLSOrigin.Request(path: ["segment-00001.m4s"], ifModifiedSince: modified)] {
            let again = await origin.respond(to: request)
            #expect(again.status == 304 && again.header("ETag") == tag && again.header("Content-Length") == nil, "\(request)")
            if case .empty = again.body {} else { Issue.record("a 304 has no body") }
        }
        #expect(await origin.respond(to: .init(path: ["segment-00001.m4s"], ifNoneMatch: "\"other\"")).status == 200)
        // If-None-Match wins over If-Modified-Since (RFC 9110 13.2.2).
        #expect(await origin.respond(to: .init(path: ["segment-00001.m4s"], ifNoneMatch: "\"other\"", ifModifiedSince: modified)).status == 200)
        // Validators before ranges (RFC 9110 13.2.2): a match is 304 even with a Range, even an
        // unsatisfiable one; If-Range sends the range only for the file as it is.
        #expect(await origin.respond(to: .init(path: ["segment-00001.m4s"], range: "bytes=0-3", ifNoneMatch: tag)).status == 304)
        #expect(await origin.respond(to: .init(path: ["segment-00001.m4s"], range: "bytes=900-", ifNoneMatch: tag)).status == 304)
        #expect(await origin.respond(to: .init(path: ["segment-00001.m4s"], range: "bytes=0-3", ifRange: tag)).status == 206)
        #expect(await origin.respond(to: .init(path: ["segment-00001.m4s"], range: "bytes=0-3", ifRange: modified)).status == 206)
        let stale = await origin.respond(to: .init(path: ["segment-00001.m4s"], range: "bytes=0-3", ifRange: "\"old\""))
        #expect(stale.status == 200 && stale.header("Content-Length") == "64")
        let head = await origin.respond(to: .init(method: "HEAD", path: ["segment-00001.m4s"], ifNoneMatch: tag))
        #expect(head.status == 304)
        // A rewritten file gets a new tag.
        try Data((0..<65).map { UInt8($0) }).write(to: url.appendingPathComponent("segment-00001.m4s"))
        #expect(await origin.respond(to: .init(path: ["segment-00001.m4s"])).header("ETag") != tag)
        // A live playlist's tag is its text's.
        let publication = LiveHLSPublication()
        let live = HLSOrigin(publication: publication, directory: FilePath(url.path))
        publication.publish(LiveHLSPublicationTests.playlist(segments: 2, openParts: 1))
        let playlistTag = try #require(await live.respond(to: .init(path: ["index.m3u8"])).header("ETag"))
        #expect(await live.respond(to: .init(path: ["index.m3u8"], ifNoneMatch: playlistTag)).status == 304)
    }

    @Test func everyResponseCarriesCORSAndPreflightsAreAnswered() async throws {
        let url = try Self.package()
        defer { try? FileManager.default.removeItem(at: url) }
        let origin = HLSOrigin(publication: nil, directory: FilePath(url.path))
        for path in [["segment-00001.m4s"], ["index.m3u8"], ["missing.m4s"], []] {
            let answer = await origin.respond(to: .init(path: path))
            #expect(answer.header("Access-Control-Allow-Origin") == "*", "\(path)")
            #expect(answer.header("Access-Control-Expose-Headers")?.contains("Content-Range") == true, "\(path)")
        }
        let preflight = await origin.respond(to: .init(method: "OPTIONS", path: ["segment-00001.m4s"]))
        #expect(preflight.status == 204 && preflight.header("Access-Control-Allow-Methods") == "GET, HEAD, OPTIONS")
        #expect(preflight.header("Access-Control-Allow-Headers")?.contains("Range") == true && preflight.header("Access-Control-Max-Age") == "86400")
        let refused = await origin.respond(to: .init(method: "POST", path: ["index.m3u8"]))
        #expect(refused.status == 405 && refused.header("Allow") == "GET, HEAD, OPTIONS")
        // One origin allowed: named, with Vary; none: no CORS fields.
        let named = HLSOrigin(publication: nil, directory: FilePath(url.path), allowedOrigin: "https://player.example")
        let answer = await named.respond(to: .init(path: ["index.m3u8"]))
        #expect(answer.header("Access-Control-Allow-Origin") == "https://player.example" && answer.header("Vary") == "Origin")
        let closed = HLSOrigin(publication: nil, directory: FilePath(url.path), allowedOrigin: nil)
        #expect(await closed.respond(to: .init(path: ["index.m3u8"])).header("Access-Control-Allow-Origin") == nil)
    }

    @Test func slashIsThePlayerPage() async throws {
        let url = try Self.package()
        defer { try? FileManager.default.removeItem(at: url) }
        let origin = HLSOrigin(publication: nil, directory: FilePath(url.path))
        let page = await origin.respond(to: .init(path: []))
        guard case .text(let html) = page.body else {
            Issue.record("a page")
            return
        }
        #expect(page.status == 200 && page.header("Content-Type") == "text/html; charset=utf-8")
        #expect(html.contains("const playlistPath = \"index.m3u8\"") && html.contains("<audio id=\"player\" controls"))
        #expect(!html.contains("autoplay") && html.contains("aria-live=\"polite\"") && html.contains("appendWindowEnd"))
        // A ladder's master playlist is the one played.
        try Data("#EXTM3U\n".utf8).write(to: url.appendingPathComponent("master.m3u8"))
        guard case .text(let ladder) = await origin.respond(to: .init(path: ["index.html"])).body else { return }
        #expect(ladder.contains("const playlistPath = \"master.m3u8\""))
        #expect(HLSOrigin(publication: nil, directory: "x").playerPage(playing: "a\"</script>").contains("a\\\"\\u003C/script>"))
        #expect(HLSOrigin(publication: nil, directory: "x").playerPage(playing: "a\nb\u{2028}c").contains("\"a\\nb\\u2028c\""))
    }

    @Test func chaptersAreWrittenAsEscapedWebVTT() {
        let chapters = [StreamMetadata.Chapter(start: MediaTime(value: 0, timescale: 1), title: "A <b> & --> c\nd"),
                        StreamMetadata.Chapter(start: MediaTime(value: 61_500, timescale: 1000), title: ""),
                        StreamMetadata.Chapter(start: MediaTime(value: 99, timescale: 1), title: "past the end")]
        let text = HLSSegmentOutput.webVTT(chapters, ending: MediaTime(value: 90, timescale: 1))
        #expect(text == "WEBVTT\n\n1\n00:00:00.000 --> 00:01:01.500\nA &lt;b&gt; &amp; --&gt; c d\n\n2\n00:01:01.500 --> 00:01:30.000\nChapter 2\n")
    }
}

/// The player page's script is JavaScript that parses (`node --check`), checked from the page the
/// origin serves: the resource embedded in the module, with the playlist put in.
@Suite(.blocking) struct PlayerPageScriptTests {
    @Test func theScriptParses() throws {
        let page = HLSOrigin(publication: nil, directory: "x").playerPage(playing: "a\"</script>\u{2028}")
        let start = try #require(page.range(of: "<script>")), end = try #require(page.range(of: "</script>", options: .backwards))
        #expect(page.hasPrefix("<!doctype html>") && page.hasSuffix("</html>"))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("player-page-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let script = folder.appendingPathComponent("player.js"), broken = folder.appendingPathComponent("broken.js")
        try Data(page[start.upperBound..<end.lowerBound].utf8).write(to: script)
        try Data((page[start.upperBound..<end.lowerBound] + "\nfunction (").utf8).write(to: broken)
        let checked = try Subprocess.run("node", ["--check", script.path])
        #expect(checked.status == 0, "\(checked.standardError)")
        #expect(try Subprocess.run("node", ["--check", broken.path]).status != 0, "node --check finds a syntax error")
    }
}
