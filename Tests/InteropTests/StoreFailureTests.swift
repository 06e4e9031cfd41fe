import Foundation
import Testing
import TestSupport

/// Issue 40's failure rules against a server that fails on purpose
/// (``MisbehavingObjectServer``): a 500 is retried and the package lands whole; a server that
/// keeps answering 500 ends in an error that says so, after the retries, without the secret;
/// S3's `ExpiredToken` makes the store read its credentials again, and the requests after go
/// with the renewed key.
@Suite(.serialized) struct StoreFailureTests {
    /// A short stereo WAV, made by FFmpeg.
    static func wav(in directory: URL, seconds: Int = 12) throws -> String {
        let wav = directory.appendingPathComponent("in.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=f=330:d=\(seconds):r=44100", "-ac", "2", wav])
        return wav
    }

    @Test(.hangGuard(minutes: 5)) func aServerAnswering500IsTriedAgainAndTakesEverything() throws {
        let server = try MisbehavingObjectServer(.firstPutFails)
        defer { server.stop() }
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let made = try Subprocess.run(try ExternalTool.keyframe, ["package", try Self.wav(in: directory), "--hls",
                                                                  server.url("show", user: "studio", password: "s3cret-pass"),
                                                                  "--bitrates", "64k,128k", "--json"])
        #expect(made.status == 0, "\(made.standardError)")
        #expect(!(made.standardOutput + made.standardError).contains("s3cret-pass"))
        // Each object: one 500, then stored on the next try; nothing stored twice.
        let puts = server.requests.filter { $0.hasPrefix("PUT ") }
        let failed = puts.filter { $0.hasSuffix(" 500") }.map { $0.split(separator: " ")[1] }
        let stored = puts.filter { $0.hasSuffix(" 201") }.map { $0.split(separator: " ")[1] }
        #expect(Set(failed) == Set(stored) && failed.count == stored.count && stored.count == Set(stored).count, "\(puts)")
        #expect(stored.contains("/show/master.m3u8") && stored.contains("/show/64k/segment-00002.m4s") && stored.last == "/show/index.html",
                "\(stored)")
    }

    @Test(.hangGuard(minutes: 5)) func aServerThatKeepsFailingEndsInAnErrorSayingSo() throws {
        let server = try MisbehavingObjectServer(.alwaysFails)
        defer { server.stop() }
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let made = try Subprocess.run(try ExternalTool.keyframe, ["package", try Self.wav(in: directory, seconds: 4), "--hls",
                                                                  server.url("show", user: "studio", password: "s3cret-pass")])
        #expect(made.status == 1, "\(made.standardError)")
        #expect(made.standardError.contains("HTTP 500") && made.standardError.contains("studio:****@")
                && !made.standardError.contains("s3cret-pass"), "\(made.standardError)")
        // Tried again: five times in all for the object that failed first (about 4 s).
        let tries = Dictionary(grouping: server.requests.filter { $0.hasPrefix("PUT ") }, by: { $0.split(separator: " ")[1] })
        #expect(tries.values.map(\.count).max() == 5, "\(tries)")
    }

    @Test(.hangGuard(minutes: 5)) func anExpiredKeyIsReadAgainFromTheCredentialsFile() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let credentials = directory.appendingPathComponent("credentials")
        try "[default]\naws_access_key_id = OLDKEY\naws_secret_access_key = old-secret-value\n".write(to: credentials, atomically: true,
                                                                                                      encoding: .utf8)
        let server = try MisbehavingObjectServer(.expiringKeys(credentialsFile: credentials))
        defer { server.stop() }
        var environment = ProcessInfo.processInfo.environment
        for name in environment.keys where name.hasPrefix("AWS_") { environment[name] = nil }
        environment["AWS_SHARED_CREDENTIALS_FILE"] = credentials.path
        environment["AWS_CONFIG_FILE"] = directory.appendingPathComponent("config").path
        let made = try Subprocess.run(try ExternalTool.keyframe, ["package", try Self.wav(in: directory, seconds: 6), "--hls", "s3://shows/ep1",
                                                                  "--s3-endpoint", server.endpoint], environment: environment)
        #expect(made.status == 0, "\(made.standardError)")
        let output = made.standardOutput + made.standardError
        #expect(!output.contains("old-secret-value") && !output.contains("new-secret-value"), "\(output)")
        // The first request met the expired key; every one after the renewal went with the new
        // key, and every object was stored.
        let requests = server.requests
        #expect(requests.first?.hasSuffix("403 OLDKEY") == true, "\(requests)")
        let expired = requests.filter { $0.hasSuffix(" OLDKEY") }
        #expect(expired.count <= 4 && expired.allSatisfy { $0.contains(" 403 ") }, "\(requests)")
        let stored = requests.filter { $0.hasPrefix("PUT ") && $0.hasSuffix(" 200 NEWKEY") }.map { $0.split(separator: " ")[1] }
        #expect(stored.contains("/shows/ep1/index.m3u8") && stored.contains("/shows/ep1/init.mp4") && stored.last == "/shows/ep1/index.html",
                "\(requests)")
    }

    @Test(.hangGuard(minutes: 5)) func aWrongSecretIsOneRequestAndNoRetry() throws {
        let server = try MisbehavingObjectServer(.refusesSignatures)
        defer { server.stop() }
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var environment = ProcessInfo.processInfo.environment
        for name in environment.keys where name.hasPrefix("AWS_") { environment[name] = nil }
        environment["AWS_ACCESS_KEY_ID"] = "AKIDEXAMPLE"
        environment["AWS_SECRET_ACCESS_KEY"] = "wrong-secret-value"
        let wav = try Self.wav(in: directory, seconds: 4)
        for arguments in [["package", wav, "--hls", "s3://shows/ep1"], ["convert", wav, "-o", "s3://shows/ep1.m4a"]] {
            let before = server.requests.count
            let run = try Subprocess.run(try ExternalTool.keyframe, arguments + ["--s3-endpoint", server.endpoint], environment: environment)
            #expect(run.status != 0 && run.standardError.contains("SignatureDoesNotMatch") && !run.standardError.contains("wrong-secret-value"),
                    "\(arguments[0]): \(run.standardError)")
            #expect(server.requests.count - before == 1, "\(arguments[0]): \(server.requests.suffix(from: before))")
        }
    }

    @Test(.hangGuard(minutes: 5)) func aSkewedClockIsSetByTheServersAndTheRequestGoesAgain() throws {
        let server = try MisbehavingObjectServer(.skewedClock)
        defer { server.stop() }
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var environment = ProcessInfo.processInfo.environment
        for name in environment.keys where name.hasPrefix("AWS_") { environment[name] = nil }
        environment["AWS_ACCESS_KEY_ID"] = "AKIDEXAMPLE"
        environment["AWS_SECRET_ACCESS_KEY"] = "secret-value"
        let made = try Subprocess.run(try ExternalTool.keyframe, ["package", try Self.wav(in: directory, seconds: 4), "--hls", "s3://shows/ep1",
                                                                  "--s3-endpoint", server.endpoint], environment: environment)
        #expect(made.status == 0, "\(made.standardError)")
        // One request met the skew; every one after went signed by the server's clock.
        let requests = server.requests
        #expect(requests.first?.contains(" 403 ") == true && requests.filter { $0.contains(" 403 ") }.count == 1, "\(requests)")
        #expect(requests.contains("PUT /shows/ep1/index.m3u8 200 AKIDEXAMPLE") && requests.last == "PUT /shows/ep1/index.html 200 AKIDEXAMPLE",
                "\(requests)")
    }

    @Test(.hangGuard(minutes: 5)) func anUntrustedCertificateIsOneConnectionAndAnErrorSayingSo() throws {
        let server = try MisbehavingObjectServer(.untrustedCertificate)
        defer { server.stop() }
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let made = try Subprocess.run(try ExternalTool.keyframe, ["package", try Self.wav(in: directory, seconds: 4), "--hls",
                                                                  server.secureURL("show")])
        #expect(made.status == 1 && made.standardError.contains("certificate is not trusted"), "\(made.standardError)")
        #expect(server.connections == 1 && server.requests.isEmpty, "\(server.connections) connections, \(server.requests)")
    }
}
