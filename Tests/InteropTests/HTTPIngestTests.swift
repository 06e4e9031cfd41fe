import Foundation
import Testing
import TestSupport

/// Issue 40: packages into an HTTP ingest point. `package --hls dav://…` against nginx's
/// WebDAV module (PUT, DELETE, MKCOL; no automatic parents, so the show's and renditions'
/// directories are made by MKCOL before their first PUT): the package lands whole, validates and plays in FFmpeg; the
/// credentials go as HTTP Basic, from the URL or from `env:NAME`, and never appear in output;
/// a wrong password is one 401 said in words, without retries.
@Suite(.serialized) struct HTTPIngestTests {
    @Test(.hangGuard(minutes: 10)) func aLadderGoesIntoWebDAVMakingItsCollections() throws {
        let server = try NginxWebDAVServer(user: "studio", password: "s3cret-pass")
        defer { server.stop() }
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=f=330:d=20:r=44100", "-ac", "2", wav])
        let keyframe = try ExternalTool.keyframe

        var environment = ProcessInfo.processInfo.environment
        environment["INGEST_URL"] = server.url("show", user: "studio", password: "s3cret-pass").replacingOccurrences(of: "http:", with: "dav:")
        let made = try Subprocess.run(keyframe, ["package", wav, "--hls", "env:INGEST_URL", "--bitrates", "64k,128k", "--json"],
                                      environment: environment)
        #expect(made.status == 0, "\(made.standardError)")
        #expect(!(made.standardOutput + made.standardError).contains("s3cret-pass"))
        let show = server.root.appendingPathComponent("show")
        try ExternalTool.succeed(keyframe, ["validate", show.path])
        let decoded = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0",
                                                           show.appendingPathComponent("master.m3u8").path])
        #expect(abs((Double(decoded.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) - 20) < 0.1, "\(decoded.standardOutput)")

        // The collections were made once each, the deepest tried first (409: its parent is
        // missing); the playlists went up after every object they name, and the player page
        // after the master playlist.
        let log = server.accessLog
        #expect(log.contains("MKCOL /ingest/show/ 201") && log.contains("MKCOL /ingest/show/64k/ 201"), "\(log)")
        // Media go up four at once: two may ask for one collection (405 the second time).
        #expect(log.filter { $0.hasPrefix("MKCOL") && $0.hasSuffix(" 201") }.sorted()
                    == ["MKCOL /ingest/show/ 201", "MKCOL /ingest/show/128k/ 201", "MKCOL /ingest/show/64k/ 201"], "\(log)")
        #expect(!log.contains { $0.hasPrefix("MKCOL /ingest/ ") }, "nothing is asked above what is needed: \(log)")
        let puts = log.filter { $0.hasPrefix("PUT") && $0.hasSuffix(" 201") }.map { $0.split(separator: " ")[1] }
        #expect(puts.suffix(2) == ["/ingest/show/master.m3u8", "/ingest/show/index.html"], "the player page last: \(puts)")
        let playlist = try #require(puts.firstIndex(of: "/ingest/show/64k/index.m3u8"))
        #expect(puts[..<playlist].contains("/ingest/show/64k/segment-00003.m4s") && !log.contains { $0.hasSuffix(" 500") })

        // The same place again: asked first (HEAD), refused, nothing overwritten.
        let again = try Subprocess.run(keyframe, ["package", wav, "--hls", "env:INGEST_URL"], environment: environment)
        #expect(again.status == 1 && again.standardError.contains("already holds a package"), "\(again.standardError)")
    }

    @Test(.hangGuard(minutes: 10)) func aWrongPasswordIsOneRefusalWithoutTheSecret() throws {
        let server = try NginxWebDAVServer(user: "studio", password: "right-pass")
        defer { server.stop() }
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=f=330:d=5:r=44100", wav])
        let keyframe = try ExternalTool.keyframe

        let refused = try Subprocess.run(keyframe, ["package", wav, "--hls", server.url("x", user: "studio", password: "wrong-pass-123")])
        #expect(refused.status == 1 && refused.standardError.contains("HTTP 401 (the user or password is wrong)"), "\(refused.standardError)")
        #expect(refused.standardError.contains("studio:****@") && !(refused.standardError + refused.standardOutput).contains("wrong-pass-123"))
        #expect(server.accessLog.count == 1, "one request, no retries: \(server.accessLog)")

        // A password in the clear to another machine, and an unset variable: usage errors.
        for target in ["http://user:pw@example.com/x", "env:KEYFRAME_NO_SUCH_VARIABLE"] {
            let misused = try Subprocess.run(keyframe, ["package", wav, "--hls", target])
            #expect(misused.status == 64 && !misused.standardError.contains(":pw@"), "\(target): \(misused.status) \(misused.standardError)")
        }
    }
}
