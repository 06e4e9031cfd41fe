import Foundation
import Testing
import TestSupport

/// Issue 36, item 5: the origin's defences, kept tested. `keyframe serve` of a package on a free
/// loopback port, attacked by `scripts/origin-hostile.py` (raw sockets, standard library only):
/// every traversal form, a symbolic link out of the folder, a 1 MB header line and 10,000
/// headers, Content-Length with Transfer-Encoding and two Content-Lengths, the writing methods,
/// 1,000 ranges, hidden and partial files, directories. The server must leak nothing, write
/// nothing, answer each in HTTP's words, stay up, and come back to its descriptors.
@Suite(.blocking) struct OriginHostileTests {
    @Test func hostileRequestsLeakNothingWriteNothingAndLeaveTheServerAsItWas() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tone = directory.appendingPathComponent("tone.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=8", "-ac", "2", "-c:a", "pcm_s16le", tone])
        let hls = directory.appendingPathComponent("hls").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", tone, "--hls", hls, "--segment-duration", "4"])
        let port = try HTTPProbe.freePort()
        // `keyframe` replaces itself with `keyframe-serve` (execv): the process id is the server's.
        let server = try RunningProcess(try ExternalTool.keyframe, ["serve", hls, "--address", "127.0.0.1:\(port)"])
        defer { _ = server.send(SIGINT); _ = try? server.wait(timeout: .seconds(10)) }
        try RunningProcess.waitUntil("the server", timeout: .seconds(20)) {
            !server.isRunning || HTTPProbe.get("http://127.0.0.1:\(port)/index.m3u8", timeout: 2).status == 200
        }
        try #require(server.isRunning, "keyframe serve exited: \(server.standardErrorSoFar)")
        let script = MP4Check.repositoryRoot.appendingPathComponent("scripts/origin-hostile.py").path
        let run = try ExternalTool.succeed("python3", [script, "--port", String(port), "--pid", String(server.processIdentifier),
                                                       "--dir", hls, "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        let cases = try #require(report["cases"] as? [[String: Any]])
        #expect(cases.count >= 34, "\(cases.count) cases")
        for item in cases {
            let kind = item["case"] as? String ?? "", path = item["path"] as? String ?? ""
            let statuses = item["statuses"] as? [Int] ?? []
            let said = "\(kind) \(path): \(statuses), closed \(item["closed"] ?? "?")"
            #expect(item["leaked"] as? Bool == false, "leaked /etc/passwd: \(said)")
            #expect(item["alive"] as? Bool == true, "the server stopped answering after \(said)")
            // One answer at most: a smuggled second request is never answered.
            #expect(statuses.count <= 1, "\(said)")
            if kind == "traversal" || kind.hasPrefix("hidden") || kind.hasPrefix("symlink") {
                #expect(statuses == [404] || statuses == [400], "\(said)")
            } else if kind.hasPrefix("writing method") {
                #expect(statuses == [405], "\(said)")
            } else if kind.contains("header") || kind.contains("Content-Length") {
                #expect(statuses.isEmpty || statuses == [400] || statuses == [431], "\(said)")
            } else if kind == "1,000 ranges" {
                #expect(statuses == [200] || statuses == [206] || statuses == [416], "\(said)")
                #expect((item["bytes"] as? Int ?? 0) < 4 << 20, "\(said): \(item["bytes"] ?? 0) bytes")
            }
        }
        #expect(report["folderUnchanged"] as? Bool == true, "\(report["folderChanges"] ?? [])")
        let descriptors = try #require(report["descriptors"] as? [String: Int])
        #expect(try #require(descriptors["after"]) <= (try #require(descriptors["before"])), "\(descriptors)")
        let resident = try #require(report["residentKiB"] as? [String: Int])
        // The 1 MB header and 10,000 headers are refused, not held: resident memory grows by
        // less than 16 MiB over the second pass.
        #expect(try #require(resident["after"]) - (try #require(resident["before"])) < 16 * 1024, "\(resident)")
        print("origin under hostile requests: \(cases.count) cases, descriptors \(descriptors), RSS KiB \(resident)")
    }
}
