import Foundation
import HLSServer
import MediaStreaming
import SystemPackage
import TestSupport
import Testing

/// The HTTP server on its own: it serves a package's files over loopback as curl asks for them,
/// with the types and statuses an HLS client expects, and nothing outside the directory.
@Suite(.blocking) struct LiveHLSServerTests {
    @Test func servesThePackageAndNothingElse() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("hls-server-\(UUID().uuidString)")
        let package = url.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: url) }
        let playlist = "#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:6.0,\nsegment-00001.m4s\n#EXT-X-ENDLIST\n"
        try Data(playlist.utf8).write(to: package.appendingPathComponent("index.m3u8"))
        try Data((0..<200).map { UInt8($0) }).write(to: package.appendingPathComponent("segment-00001.m4s"))
        try Data("outside".utf8).write(to: url.appendingPathComponent("secret.txt"))

        let port = try LocalPort.freeTCP()
        let running = try LiveHLSServer(publication: nil, directory: FilePath(package.path)).start(host: "127.0.0.1", port: port)
        defer { running.stop() }
        let base = "http://127.0.0.1:\(port)"
        func get(_ path: String) throws -> (status: String, type: String, body: Data) {
            let result = try Subprocess.run("curl", ["-s", "--path-as-is", "-o", "-", "-w", "\n%{http_code} %{content_type}", base + path])
            let data = result.outputData
            let newline = data.lastIndex(of: UInt8(ascii: "\n")) ?? data.endIndex
            let tail = String(decoding: data[newline...], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            let fields = tail.split(separator: " ", maxSplits: 1).map(String.init)
            return (fields.first ?? "", fields.count > 1 ? fields[1] : "", Data(data[..<newline]))
        }

        let index = try get("/index.m3u8")
        #expect(index.status == "200")
        #expect(index.type.lowercased().hasPrefix("application/vnd.apple.mpegurl"))
        #expect(String(decoding: index.body, as: UTF8.self) == playlist)
        let segment = try get("/segment-00001.m4s")
        #expect(segment.status == "200")
        #expect(segment.body == Data((0..<200).map { UInt8($0) }))
        #expect(try get("/segment-00002.m4s").status == "404")
        let escape = try get("/../secret.txt")
        #expect(escape.status != "200")
        #expect(!String(decoding: escape.body, as: UTF8.self).contains("outside"))
    }
}
