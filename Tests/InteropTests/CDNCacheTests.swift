import Foundation
import Testing
import TestSupport

/// Issue 23, item 3: the origin behind a CDN. nginx with `proxy_cache` and `proxy_cache_lock`,
/// started by the test on loopback in front of `keyframe serve`: 40 listeners fetching a VOD
/// package cost the origin one request per object, and what they get is the package, byte for
/// byte. nginx's access log says which requests reached the origin (`$upstream_addr`).
extension RealTimeTests {
@Suite(.serialized) struct CDNCacheTests {
    /// nginx in the foreground (no master, no daemon) with a cache in `directory`, proxying
    /// `127.0.0.1:port` to the origin at `origin`.
    static func startNginx(in directory: URL, port: Int, origin: Int) throws -> RunningProcess {
        let root = directory.path
        for sub in ["cache", "temp"] { try FileManager.default.createDirectory(atPath: "\(root)/\(sub)", withIntermediateDirectories: true) }
        let configuration = """
            worker_processes 1;
            daemon off;
            master_process off;
            pid \(root)/nginx.pid;
            error_log \(root)/error.log warn;
            events { worker_connections 1024; }
            http {
              log_format cdn '$request_uri $status $upstream_cache_status $upstream_addr';
              access_log \(root)/access.log cdn;
              client_body_temp_path \(root)/temp/body;
              proxy_temp_path \(root)/temp/proxy;
              fastcgi_temp_path \(root)/temp/fastcgi;
              uwsgi_temp_path \(root)/temp/uwsgi;
              scgi_temp_path \(root)/temp/scgi;
              proxy_cache_path \(root)/cache levels=1:2 keys_zone=media:10m max_size=256m inactive=10m use_temp_path=off;
              server {
                listen 127.0.0.1:\(port);
                location / {
                  proxy_pass http://127.0.0.1:\(origin);
                  proxy_http_version 1.1;
                  proxy_set_header Connection "";
                  proxy_cache media;
                  proxy_cache_lock on;
                  proxy_cache_lock_timeout 30s;
                  proxy_cache_lock_age 30s;
                  add_header X-Cache $upstream_cache_status;
                }
              }
            }
            """
        let file = directory.appendingPathComponent("nginx.conf")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        // Debian puts it in /usr/sbin, which a user's PATH may not hold.
        let nginx = FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") ? "/usr/sbin/nginx" : "nginx"
        return try RunningProcess(nginx, ["-p", root, "-c", file.path])
    }

    /// Waits until `url` answers (anything but a refused connection).
    static func waitUntilServed(_ url: String) throws {
        try RunningProcess.waitUntil("\(url) answers", timeout: .seconds(30)) { HTTPProbe.get(url).status > 0 }
    }

    @Test func fortyListenersBehindTheCacheCostOneOriginRequestPerObject() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try GaplessTests.makeSignal(rate: 48000, channels: 2, frames: 48000 * 10, to: wav)
        let package = directory.appendingPathComponent("vod").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", wav, "--hls", package, "--segment-duration", "2"])
        let names = ["index.m3u8", "init.mp4"] + (try FileManager.default.contentsOfDirectory(atPath: package)).filter { $0.hasSuffix(".m4s") }.sorted()
        try #require(names.count >= 7, "\(names)")

        let origin = try HTTPProbe.freePort()
        let server = try RunningProcess(try ExternalTool.keyframe, ["serve", package, "--address", "127.0.0.1:\(origin)"])
        defer { server.stop() }
        try Self.waitUntilServed("http://127.0.0.1:\(origin)/index.m3u8")
        let edge = try HTTPProbe.freePort()
        let nginxDirectory = directory.appendingPathComponent("nginx")
        try FileManager.default.createDirectory(at: nginxDirectory, withIntermediateDirectories: true)
        let nginx = try Self.startNginx(in: nginxDirectory, port: edge, origin: origin)
        defer { nginx.stop() }
        try Self.waitUntilServed("http://127.0.0.1:\(edge)/index.m3u8")
        // The probe above went through: start the count after its line. nginx logs a request
        // after it has sent the response, so wait for that line before counting.
        let log = nginxDirectory.appendingPathComponent("access.log")
        func logLines() -> Int { (try? String(contentsOf: log, encoding: .utf8))?.split(separator: "\n").count ?? 0 }
        var before = logLines()
        for _ in 0..<20 {
            Subprocess.sleep(.milliseconds(100))
            let now = logLines()
            if now == before && now > 0 { break }
            before = now
        }

        // 40 listeners at once, each fetching every object in order, comparing with the file.
        let script = """
            import sys, threading, urllib.request
            base, root, names = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
            wrong, done = [], []
            def listen(n):
                for name in names:
                    with urllib.request.urlopen(base + "/" + name, timeout=60) as r:
                        body = r.read()
                    if body != open(root + "/" + name, "rb").read():
                        wrong.append((n, name))
                done.append(n)
            threads = [threading.Thread(target=listen, args=(n,)) for n in range(40)]
            for t in threads: t.start()
            for t in threads: t.join()
            print(len(done), len(wrong))
            """
        let run = try ExternalTool.succeed("python3", ["-c", script, "http://127.0.0.1:\(edge)", package, names.joined(separator: ",")])
        #expect(run.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "40 0", "listeners done, wrong bytes: \(run.standardOutput)")

        let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").dropFirst(before)
        #expect(lines.count == 40 * names.count, "requests at the edge: \(lines.count)")
        let atOrigin = lines.filter { $0.split(separator: " ").last != "-" }
        // The probe cached the playlist already; every other object once.
        #expect(atOrigin.count <= names.count, "origin requests \(atOrigin.count) for \(names.count) objects:\n\(atOrigin.joined(separator: "\n"))")
        let fetched = Set(atOrigin.compactMap { $0.split(separator: " ").first.map { String($0.dropFirst()) } })
        #expect(fetched.isSuperset(of: Set(names.dropFirst())), "\(fetched)")
        print("CDN: 40 listeners × \(names.count) objects through nginx proxy_cache: \(atOrigin.count) origin requests")

        // A second wave is served from the cache alone.
        let again = try ExternalTool.succeed("python3", ["-c", script, "http://127.0.0.1:\(edge)", package, names.joined(separator: ",")])
        #expect(again.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "40 0")
        let all = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").dropFirst(before + lines.count)
        #expect(all.allSatisfy { $0.split(separator: " ").last == "-" }, "\(all.filter { $0.split(separator: " ").last != "-" })")
    }
}
}

typealias CDNCacheTests = RealTimeTests.CDNCacheTests

extension RecordCommandTests.PulseAudio {
    /// Live low-latency HLS through the same cache: each blocking reload (`_HLS_msn`, `_HLS_part`)
    /// passes through nginx and is answered when its part exists, the part follows, and a second
    /// listener asking the same query is served from the cache. The delays are figures
    /// (BENCHMARKS.md), not assertions.
    @Test(.hangGuard(minutes: 15))
    func lowLatencyHLSPassesThroughTheCache() throws {
        let pulse = try PulseTone()
        defer { pulse.close() }
        let hls = pulse.directory.appendingPathComponent("live").path
        let origin = try HTTPProbe.freePort()
        let recording = try pulse.startRecording(["--hls", hls, "--serve", "127.0.0.1:\(origin)", "--segment-duration", "2", "--part-duration", "0.5",
                                                  "--device", "pulse", "--sample-rate", "48000"])
        defer { _ = recording.send(SIGINT) }
        try pulse.server.waitForStreams("source-outputs", while: recording)
        let nginxDirectory = pulse.directory.appendingPathComponent("nginx")
        try FileManager.default.createDirectory(at: nginxDirectory, withIntermediateDirectories: true)
        let edgePort = try HTTPProbe.freePort()
        let nginx = try CDNCacheTests.startNginx(in: nginxDirectory, port: edgePort, origin: origin)
        defer { nginx.stop() }
        let edge = "http://127.0.0.1:\(edgePort)"
        var first = HTTPProbe.get(edge + "/index.m3u8")
        for _ in 0..<60 where first.status != 200 {
            Subprocess.sleep(.milliseconds(100))
            first = HTTPProbe.get(edge + "/index.m3u8")
        }
        try #require(first.status == 200, "the playlist through the cache: \(first.status)")
        func hint(_ playlist: String) -> (uri: String, msn: Int, part: Int)? {
            guard let line = playlist.split(separator: "\n").first(where: { $0.hasPrefix("#EXT-X-PRELOAD-HINT") }),
                  let uri = line.split(separator: "\"").dropFirst().first.map(String.init) else { return nil }
            let numbers = uri.dropFirst("segment-".count).dropLast(".m4s".count).split(separator: ".").compactMap { Int($0) }
            return numbers.count == 2 ? (uri, numbers[0] - 1, numbers[1] - 1) : nil
        }
        var playlist = first.body
        var delays: [Double] = []
        for _ in 0..<8 {
            let next = try #require(hint(playlist), "a preload hint in \(playlist)")
            let query = "/index.m3u8?_HLS_msn=\(next.msn)&_HLS_part=\(next.part)"
            let held = HTTPProbe.get(edge + query)
            #expect(held.status == 200 && held.body.contains("URI=\"\(next.uri)\""), "\(query): \(held.status)")
            delays.append(held.seconds)
            // The part itself, and the same query again from the cache.
            #expect(HTTPProbe.get(edge + "/" + next.uri).status == 200)
            let cached = HTTPProbe.request(edge + query)
            #expect(cached.status == 200 && cached.headers["x-cache"] == "HIT", "\(query) again: \(cached.headers["x-cache"] ?? "-")")
            playlist = held.body
        }
        let sorted = delays.sorted()
        print("LL-HLS through nginx proxy_cache: blocking reload answered after \(sorted.map { String(format: "%.3f", $0) }.joined(separator: ", ")) s"
              + " (parts of 0.5 s; median \(String(format: "%.3f", sorted[sorted.count / 2])) s, max \(String(format: "%.3f", sorted.last ?? 0)) s)")
        try #require(recording.send(SIGINT))
        let finished = try recording.wait(timeout: .seconds(60))
        #expect(finished.result.status == 0, "\(finished.result.standardError)")
    }
}
