import Foundation
import Testing
import TestSupport

/// Issue 23, item 2: `keyframe serve` over HTTPS with a certificate and key, CORS for players on
/// other origins (`--cors-origin`), preflights answered, the player page at `/`: checked with
/// curl, as a browser on another origin would ask.
@Suite(.blocking) struct ServeOptionsTests {
    /// curl's status line and header fields (lowercased names) of `arguments`.
    static func curl(_ arguments: [String]) throws -> (status: Int, headers: [String: String], body: String) {
        let run = try ExternalTool.run("curl", ["-sS", "-k", "-i", "--max-time", "20"] + arguments)
        let text = run.standardOutput.replacingOccurrences(of: "\r\n", with: "\n")
        let parts = text.components(separatedBy: "\n\n")
        let lines = parts[0].split(separator: "\n")
        let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? -1
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, headers, parts.dropFirst().joined(separator: "\n\n"))
    }

    @Test func httpsWithANamedCORSOrigin() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try GaplessTests.makeSignal(rate: 48000, channels: 2, frames: 48000 * 3, to: wav)
        let package = directory.appendingPathComponent("vod").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", wav, "--hls", package, "--segment-duration", "1"])
        let certificate = directory.appendingPathComponent("cert.pem").path, key = directory.appendingPathComponent("key.pem").path
        try ExternalTool.succeed("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "1",
                                             "-subj", "/CN=127.0.0.1"])
        // A key without its certificate is refused before anything is served.
        for origin in ["https://player.example/", "player.example", ""] {
            let wrong = try ExternalTool.run(try ExternalTool.keyframe, ["serve", package, "--cors-origin", origin])
            #expect(wrong.status != 0 && wrong.standardError.contains("--cors-origin ORIGIN"), "\(origin): \(wrong.standardError)")
        }
        let half = try ExternalTool.run(try ExternalTool.keyframe, ["serve", package, "--tls-key", key])
        #expect(half.status != 0 && half.standardError.contains("--tls-certificate and --tls-key go together"), "\(half.standardError)")

        let port = try HTTPProbe.freePort()
        let server = try RunningProcess(try ExternalTool.keyframe, ["serve", package, "--address", "127.0.0.1:\(port)", "--tls-certificate", certificate,
                                                                    "--tls-key", key, "--cors-origin", "https://player.example"])
        defer { server.stop() }
        let base = "https://127.0.0.1:\(port)"
        try RunningProcess.waitUntil("the HTTPS server", timeout: .seconds(30)) { (try? Self.curl([base + "/index.m3u8"]))?.status == 200 }
        let playlist = try Self.curl(["-H", "Origin: https://player.example", base + "/index.m3u8"])
        #expect(playlist.status == 200 && playlist.body.hasPrefix("#EXTM3U"))
        #expect(playlist.headers["access-control-allow-origin"] == "https://player.example" && playlist.headers["vary"] == "Origin", "\(playlist.headers)")
        #expect(playlist.headers["cache-control"] == "public, max-age=86400" && playlist.headers["etag"] != nil)
        let preflight = try Self.curl(["-X", "OPTIONS", "-H", "Origin: https://player.example", "-H", "Access-Control-Request-Method: GET",
                                       "-H", "Access-Control-Request-Headers: range", base + "/segment-00001.m4s"])
        #expect(preflight.status == 204 && preflight.headers["access-control-allow-methods"] == "GET, HEAD, OPTIONS", "\(preflight)")
        let page = try Self.curl([base + "/"])
        #expect(page.status == 200 && page.headers["content-type"] == "text/html; charset=utf-8" && page.body.contains("<audio id=\"player\""))
        // Plain HTTP on the same port is not answered as HTTP.
        let plain = try ExternalTool.run("curl", ["-sS", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/index.m3u8"])
        #expect(plain.standardOutput != "200")
        // The segment through TLS is the file, byte for byte.
        let bytes = try ExternalTool.run("curl", ["-sS", "-k", "--max-time", "20", "-o", directory.appendingPathComponent("got.m4s").path,
                                                  base + "/segment-00001.m4s"])
        #expect(bytes.status == 0)
        #expect(FileManager.default.contentsEqual(atPath: directory.appendingPathComponent("got.m4s").path, andPath: package + "/segment-00001.m4s"))
    }

    @Test func corsCanBeTurnedOff() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try "#EXTM3U\n#EXT-X-ENDLIST\n".write(to: directory.appendingPathComponent("index.m3u8"), atomically: true, encoding: .utf8)
        let port = try HTTPProbe.freePort()
        let server = try RunningProcess(try ExternalTool.keyframe, ["serve", directory.path, "--address", "127.0.0.1:\(port)", "--cors-origin", "none"])
        defer { server.stop() }
        let base = "http://127.0.0.1:\(port)"
        try RunningProcess.waitUntil("the server", timeout: .seconds(30)) { (try? Self.curl([base + "/index.m3u8"]))?.status == 200 }
        #expect(try Self.curl([base + "/index.m3u8"]).headers["access-control-allow-origin"] == nil)
        // The default is any origin.
        let open = try HTTPProbe.freePort()
        let other = try RunningProcess(try ExternalTool.keyframe, ["serve", directory.path, "--address", "127.0.0.1:\(open)"])
        defer { other.stop() }
        try RunningProcess.waitUntil("the second server", timeout: .seconds(30)) { (try? Self.curl(["http://127.0.0.1:\(open)/index.m3u8"]))?.status == 200 }
        #expect(try Self.curl(["http://127.0.0.1:\(open)/index.m3u8"]).headers["access-control-allow-origin"] == "*")
    }
}
