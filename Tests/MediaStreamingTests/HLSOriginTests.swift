import Foundation
@testable import MediaFormats
@testable import MediaStreaming
import Testing

/// The HTTP origin without a server: files with their types, single byte ranges (RFC 9110 14),
/// `HEAD`, nothing outside the directory, and the live playlist's blocking-reload answers.
@Suite struct HLSOriginTests {
    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("origin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url.appendingPathComponent("128k"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: url.appendingPathComponent("folder.m4s"), withIntermediateDirectories: true)
        try Data((0..<100).map { UInt8($0) }).write(to: url.appendingPathComponent("128k/segment-00001.m4s"))
        try Data("#EXTM3U\n".utf8).write(to: url.appendingPathComponent("master.m3u8"))
        try Data("secret".utf8).write(to: url.appendingPathComponent(".hidden.m4s"))
        try Data("notes".utf8).write(to: url.appendingPathComponent("notes.txt"))
        return url
    }

    static func bytes(_ response: HLSOrigin.Response) -> [UInt8] {
        guard case .file(let file) = response.body else { return [] }
        return Array(file.chunks(of: 7).joined())
    }

    @Test func filesAreServedWholeOrByRange() async throws {
        let url = try Self.directory()
        defer { try? FileManager.default.removeItem(at: url) }
        let origin = HLSOrigin(publication: nil, directory: FilePath(url.path))
        let whole = await origin.respond(to: .init(path: ["128k", "segment-00001.m4s"]))
        #expect(whole.status == 200 && whole.header("content-type") == "video/iso.segment" && whole.header("Content-Length") == "100")
        #expect(Self.bytes(whole) == (0..<100).map { UInt8($0) })
        let playlist = await origin.respond(to: .init(path: ["master.m3u8"]))
        #expect(playlist.status == 200 && playlist.header("Cache-Control") == "public, max-age=1" && playlist.header("Content-Type") == "application/vnd.apple.mpegurl")
        // Ranges: first-last, first-, -suffix; past the end is 416; several ranges, the whole.
        let cases: [(String, Int, [UInt8])] = [("bytes=10-19", 206, (10..<20).map { UInt8($0) }), ("bytes=95-", 206, (95..<100).map { UInt8($0) }),
                                               ("bytes=-3", 206, [97, 98, 99]), ("bytes=90-500", 206, (90..<100).map { UInt8($0) }),
                                               ("bytes=0-1,5-6", 200, (0..<100).map { UInt8($0) }), ("items=0-1", 200, (0..<100).map { UInt8($0) })]
        for (range, status, expected) in cases {
            let answer = await origin.respond(to: .init(path: ["128k", "segment-00001.m4s"], range: range))
            #expect(answer.status == status && Self.bytes(answer) == expected && answer.header("Content-Length") == String(expected.count), "\(range)")
        }
        #expect(await origin.respond(to: .init(path: ["128k", "segment-00001.m4s"], range: "bytes=10-19")).header("Content-Range") == "bytes 10-19/100")
        let past = await origin.respond(to: .init(path: ["128k", "segment-00001.m4s"], range: "bytes=100-"))
        #expect(past.status == 416 && past.header("Content-Range") == "bytes */100")
        // HEAD: the headers, no body.
        let head = await origin.respond(to: .init(method: "HEAD", path: ["128k", "segment-00001.m4s"], range: "bytes=0-1"))
        #expect(head.status == 200 && head.header("Content-Length") == "100", "a HEAD ignores Range (RFC 9110 14.2)")
        if case .empty = head.body {} else { Issue.record("a HEAD has no body") }
        // Nothing outside the directory, nothing hidden, no other kind of file, no directory, no
        // other method.
        // A file of a kind it serves, beside the directory: `..` does not reach it.
        let outside = url.deletingLastPathComponent().appendingPathComponent(url.lastPathComponent + "-outside.m4s")
        try Data([1, 2, 3]).write(to: outside)
        defer { try? FileManager.default.removeItem(at: outside) }
        for path in [["..", outside.lastPathComponent], ["128k", "..", "..", outside.lastPathComponent], [".hidden.m4s"], ["notes.txt"], ["128k", ""],
                     ["missing.m4s"], ["folder.m4s"]] {
            #expect(await origin.respond(to: .init(path: path)).status == 404, "\(path)")
        }
        #expect(await origin.respond(to: .init(method: "PUT", path: ["master.m3u8"])).status == 405)
        // Without a publication the playlist is a file: none here.
        #expect(await origin.respond(to: .init(path: ["index.m3u8"])).status == 404)
    }

    @Test func theLivePlaylistAnswersBlockingReloads() async throws {
        let url = try Self.directory()
        defer { try? FileManager.default.removeItem(at: url) }
        let publication = LiveHLSPublication()
        let origin = HLSOrigin(publication: publication, directory: FilePath(url.path))
        #expect(await origin.respond(to: .init(path: ["index.m3u8"])).status == 404, "nothing published yet")
        publication.publish(LiveHLSPublicationTests.playlist(segments: 2, openParts: 1))
        let now = await origin.respond(to: .init(path: ["index.m3u8"]))
        guard case .text(let text) = now.body else { Issue.record("a playlist"); return }
        #expect(now.status == 200 && text.contains("#EXT-X-PART-INF") && now.header("Content-Length") == String(text.utf8.count))
        #expect(await origin.respond(to: .init(path: ["index.m3u8"], query: ["_HLS_msn": "9"])).status == 400)
        #expect(await origin.respond(to: .init(path: ["index.m3u8"], query: ["_HLS_msn": "x"])).status == 400)
        #expect(await origin.respond(to: .init(path: ["index.m3u8"], query: ["_HLS_part": "0"])).status == 400)
        #expect(await origin.respond(to: .init(path: ["index.m3u8"], query: ["_HLS_msn": "-1"])).status == 400)
        #expect(await origin.respond(to: .init(path: ["index.m3u8"], query: ["_HLS_msn": "2", "_HLS_part": "-1"])).status == 400)
        #expect(await origin.respond(to: .init(path: ["index.m3u8"], query: ["_HLS_msn": "2", "_HLS_part": "0"])).status == 200)
        #expect(HLSOrigin.part(named: "segment-00003.2.m4s")! == (2, 1) && HLSOrigin.part(named: "segment-00003.m4s") == nil)
    }
}
