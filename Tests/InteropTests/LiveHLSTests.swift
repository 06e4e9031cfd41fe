import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport
import Glibc

/// Issue 13, item 2: `keyframe record --hls DIR`. From ALSA's `file` plugin (no clock): an event
/// playlist and a sliding window, program date-times, whole segments, a decode that gives every
/// frame recorded. From PulseAudio in real time: SIGINT ends the playlist; after a SIGKILL it
/// lists only complete segments and FFmpeg plays them without an error. `keyframe validate`
/// says nothing on any of the playlists (issue 21).
@Suite(.blocking) struct LiveHLSTests {
    static let listing = """
        import json, sys, m3u8
        p = m3u8.load(sys.argv[1])
        whole = [s for s in p.segments if s.uri]  # m3u8 lists the open segment's parts as a segment without a URI
        print(json.dumps({"type": p.playlist_type, "sequence": p.media_sequence, "ended": p.is_endlist,
                          "dates": [s.program_date_time.isoformat() if s.program_date_time else None for s in whole],
                          "uris": [s.uri for s in whole], "durations": [s.duration for s in whole]}))
        """

    static func listing(_ playlist: String) throws -> [String: Any] {
        let run = try ExternalTool.succeed("python3", ["-c", listing, playlist])
        return try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any] ?? [:]
    }

    @Test(.hangGuard(minutes: 15))
    func anEventPlaylistAndASlidingWindowFromTheFilePlugin() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = CaptureCheck.tone(frames: 10 * 48000, rate: 48000, frequencies: [1000, 1500])
        let raw = directory.appendingPathComponent("in.raw").path
        try CaptureCheck.bytes(input).write(to: URL(fileURLWithPath: raw))
        let configuration = try CaptureCheck.alsaConfiguration(in: directory, input: raw)
        for window in [0, 3] {
            let hls = directory.appendingPathComponent("hls\(window)").path
            let run = try ExternalTool.succeed(try ExternalTool.keyframe, [
                "record", "--hls", hls, "--hls-window", "\(window)", "--segment-duration", window == 0 ? "1" : "0.5", "--duration", window == 0 ? "3.5" : "9",
                "--device", "kf_in",
                "--alsa-config", configuration, "--sample-rate", "48000", "--json",
            ])
            let summary = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any] ?? [:]
            let frames = summary["frames"] as? Int ?? -1
            #expect(summary["container"] as? String == "hls" && frames > 0, "\(summary)")
            let playlist = hls + "/index.m3u8"
            let list = try Self.listing(playlist)
            let uris = list["uris"] as? [String] ?? []
            let all = (try FileManager.default.contentsOfDirectory(atPath: hls)).filter { $0.hasSuffix(".m4s") }.sorted()
            #expect(list["ended"] as? Bool == true, "ended by --duration")
            #expect((list["dates"] as? [Any] ?? []).allSatisfy { $0 is String } && !uris.isEmpty, "a program date-time per segment: \(list)")
            if window == 0 {
                #expect((list["type"] as? String)?.uppercased() == "EVENT" && uris == all && list["sequence"] as? Int == 0)
                // Every frame recorded, decoded from the playlist (the padding trimmed by iTunSMPB).
                let decoded = try EditCommandTests.decode(playlist, in: directory)
                #expect(decoded.frames == frames, "decoded \(decoded.frames) frames, recorded \(frames)")
                let durations = list["durations"] as? [Double] ?? []
                #expect(durations.dropLast().allSatisfy { abs($0 - 1) < 0.022 }, "1-s segments of whole frames: \(durations)")
            } else {
                #expect(list["type"] == nil || list["type"] is NSNull, "a sliding window has no playlist type")
                // The last three, or more when they last less than three target durations (RFC 8216 6.2.2).
                let listed = (list["durations"] as? [Double] ?? []).reduce(0, +)
                #expect(uris.count >= 3 && uris.count < all.count && uris == Array(all.suffix(uris.count)), "the last of \(all): \(list)")
                let firstListed = uris.first.flatMap { Int($0.dropFirst("segment-".count).prefix(5)) } ?? 0
                #expect(list["sequence"] as? Int == firstListed - 1 && listed >= 3, "\(list)")
                // A segment a window's worth out of the playlist is removed; the ones just out stay.
                let dropped = firstListed - 1
                if dropped > 0 {
                    let kept = (1...dropped).filter { all.contains(String(format: "segment-%05d.m4s", $0)) }
                    #expect(kept == Array(max(1, dropped - 2)...dropped), "out of the window \(dropped): kept \(kept) of \(all)")
                }
            }
            let check = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", playlist, "-f", "null", "-"])
            #expect(check.status == 0 && check.standardError.isEmpty, "\(check.standardError)")
            try ValidationCheck.expectSilent([hls, playlist], "record --hls --hls-window \(window) (file plugin)")
        }
    }
}

extension LiveHLSTests {
    static let partListing = """
        import json, sys, m3u8
        p = m3u8.load(sys.argv[1])
        print(json.dumps({"partTarget": p.part_inf.part_target if p.part_inf else None,
                          "holdBack": p.server_control.part_hold_back if p.server_control else None,
                          "canBlock": p.server_control.can_block_reload if p.server_control else None,
                          "segments": [{"uri": s.uri, "parts": [[q.uri, q.duration, q.independent] for q in s.parts]} for s in p.segments]}))
        """

    @Test(.hangGuard(minutes: 15))
    func lowLatencyPartsAreListedAndMakeTheSegments() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = CaptureCheck.tone(frames: 5 * 48000, rate: 48000, frequencies: [1000, 1500])
        let raw = directory.appendingPathComponent("in.raw").path
        try CaptureCheck.bytes(input).write(to: URL(fileURLWithPath: raw))
        let configuration = try CaptureCheck.alsaConfiguration(in: directory, input: raw)
        let hls = directory.appendingPathComponent("ll").path
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, [
            "record", "--hls", hls, "--segment-duration", "2", "--part-duration", "0.5", "--duration", "4.2", "--device", "kf_in",
            "--alsa-config", configuration, "--sample-rate", "48000", "--json",
        ])
        let summary = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any] ?? [:]
        let playlist = hls + "/index.m3u8"
        let listed = try JSONSerialization.jsonObject(with: Data(try ExternalTool.succeed("python3", ["-c", Self.partListing, playlist]).standardOutput.utf8))
            as? [String: Any] ?? [:]
        let target = listed["partTarget"] as? Double ?? -1
        // Not served: a hold-back, but no blocking reload advertised.
        #expect(target == 0.5 && (listed["holdBack"] as? Double ?? 0) >= 3 * target && listed["canBlock"] as? String != "YES", "\(listed)")
        let segments = listed["segments"] as? [[String: Any]] ?? []
        #expect(segments.count >= 2)
        for segment in segments {
            let parts = segment["parts"] as? [[Any]] ?? []
            #expect(!parts.isEmpty && parts.allSatisfy { ($0[1] as? Double ?? 9) <= target && $0[2] as? String == "YES" }, "\(segment)")
            // A segment is its parts after a styp.
            let whole = try Data(contentsOf: URL(fileURLWithPath: hls + "/" + (segment["uri"] as? String ?? "")))
            var joined = Data()
            for part in parts { joined += try Data(contentsOf: URL(fileURLWithPath: hls + "/" + (part[0] as? String ?? ""))) }
            #expect(whole.count > joined.count && whole.suffix(joined.count) == joined && whole.prefix(8).suffix(4) == Data("styp".utf8),
                    "\(segment["uri"] ?? "")")
        }
        let decoded = try EditCommandTests.decode(playlist, in: directory)
        #expect(decoded.frames == summary["frames"] as? Int, "every frame recorded")
        let check = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", playlist, "-f", "null", "-"])
        #expect(check.status == 0 && check.standardError.isEmpty, "\(check.standardError)")
        try ValidationCheck.expectSilent([hls, playlist], "record --hls --segment-duration 2 --part-duration 0.5 (file plugin)")
    }
}

extension RecordCommandTests.PulseAudio {
    @Test(.hangGuard(minutes: 15))
    func liveHLSEndsOnSIGINTAndSurvivesSIGKILL() throws {
        // Also killed while serving low-latency HLS: the parts on disk are whole too.
        for (signal, served) in [(SIGINT, false), (SIGKILL, false), (SIGKILL, true)] {
            let pulse = try PulseTone()
            defer { pulse.close() }
            let hls = pulse.directory.appendingPathComponent("live").path
            let what = "record --hls --device pulse\(served ? " --serve" : ""), signal \(signal)"
            let port = try HTTPProbe.freePort()
            let serving = served ? ["--serve", "127.0.0.1:\(port)", "--part-duration", "0.25"] : []
            let recording = try pulse.startRecording(["--hls", hls, "--segment-duration", "1", "--device", "pulse", "--sample-rate", "48000"] + serving)
            try pulse.server.waitForStreams("source-outputs", while: recording)
            Subprocess.sleep(.milliseconds(3500))
            if served {
                let live = HTTPProbe.get("http://127.0.0.1:\(port)/index.m3u8?_HLS_msn=2")
                #expect(live.status == 200 && live.body.contains("#EXT-X-PART:"), "\(what): \(live.status)")
            }
            try #require(recording.send(signal), "\(what): ended before the signal: \(recording.standardErrorSoFar)")
            let finished = try recording.wait(timeout: .seconds(60))
            let playlist = hls + "/index.m3u8"
            try #require(FileManager.default.fileExists(atPath: playlist), "\(what): no playlist")
            let list = try LiveHLSTests.listing(playlist)
            let uris = list["uris"] as? [String] ?? []
            #expect(uris.count >= 2, "\(what): \(uris)")
            for uri in uris { #expect(FileManager.default.fileExists(atPath: hls + "/" + uri), "\(what): \(uri) is listed but missing") }
            // Every part listed exists (the preload hint names the one not yet written).
            let text = try String(contentsOfFile: playlist, encoding: .utf8)
            let parts = text.split(separator: "\n").filter { $0.hasPrefix("#EXT-X-PART:") }.compactMap { $0.split(separator: "\"").dropFirst().first }
            #expect(served == !parts.isEmpty, "\(what): \(parts.count) parts listed")
            for part in parts { #expect(FileManager.default.fileExists(atPath: hls + "/" + part), "\(what): part \(part) is listed but missing") }
            let leftovers = (try FileManager.default.contentsOfDirectory(atPath: hls)).filter { $0.hasPrefix(".") }
            if signal == SIGINT {
                #expect(finished.result.status == 0 && list["ended"] as? Bool == true, "\(what): \(finished.result.standardError)")
                #expect(leftovers.isEmpty, "\(what): \(leftovers)")
            } else {
                #expect(finished.signal == SIGKILL && list["ended"] as? Bool == false, "\(what)")
            }
            // A killed recording's playlist has no EXT-X-ENDLIST: FFmpeg takes it for a live one and
            // reloads it; one reload without a new segment ends the read.
            let raw = pulse.directory.appendingPathComponent("ffmpeg.s16").path
            let decode = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-max_reload", "1",
                                                       "-live_start_index", "0", "-i", playlist, "-f", "s16le", "-c:a", "pcm_s16le", raw],
                                            environment: ProcessInfo.processInfo.environment, timeout: .seconds(60))
            #expect(decode.status == 0 && decode.standardError.isEmpty, "\(what): ffmpeg -v error said: \(decode.standardError)")
            let samples = CaptureCheck.samples((try? Data(contentsOf: URL(fileURLWithPath: raw))) ?? Data())
            #expect(samples.count / 2 >= 48000 * uris.count - 48000, "\(what): \(samples.count / 2) frames from \(uris.count) segments")
            PulseTone.expectTone(samples, rate: 48000, what)
            try ValidationCheck.expectSilent([hls, playlist], what)
        }
    }
}

/// A small HTTP client for the server tests: status, body and how long the answer took.
enum HTTPProbe {
    static func get(_ url: String, timeout: TimeInterval = 30) -> (status: Int, body: String, seconds: Double) {
        let answer = request(url, timeout: timeout)
        return (answer.status, String(decoding: answer.body, as: UTF8.self), answer.seconds)
    }

    /// `method` of `url` with `headers`: the status, the response's header fields (lowercased
    /// names), the body and how long it took.
    static func request(_ url: String, method: String = "GET", headers: [String: String] = [:], timeout: TimeInterval = 30)
        -> (status: Int, headers: [String: String], body: Data, seconds: Double) {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result = (status: -1, headers: [String: String](), body: Data(), seconds: 0.0)
        let start = Date()
        var request = URLRequest(url: URL(string: url)!)
        request.timeoutInterval = timeout
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let task = URLSession.shared.dataTask(with: request) { data, response, _ in
            let http = response as? HTTPURLResponse
            let fields = (http?.allHeaderFields ?? [:]).reduce(into: [String: String]()) { $0["\($1.key)".lowercased()] = "\($1.value)" }
            result = (http?.statusCode ?? -1, fields, data ?? Data(), Date().timeIntervalSince(start))
            done.signal()
        }
        task.resume()
        done.wait()
        return result
    }

    /// The status of a GET of `path` sent exactly as given (no `..` collapsed, as URL clients
    /// do), on loopback.
    static func rawStatus(port: Int, path: String) -> Int {
        let script = "import http.client, sys\nc = http.client.HTTPConnection('127.0.0.1', int(sys.argv[1]), timeout=30)\n"
            + "c.request('GET', sys.argv[2])\nprint(c.getresponse().status)"
        guard let run = try? ExternalTool.run("python3", ["-c", script, String(port), path]) else { return -1 }
        return Int(run.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// A free TCP port on loopback.
    static func freePort() throws -> Int {
        let run = try ExternalTool.succeed("python3", ["-c", "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"])
        return Int(run.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }
}

extension RecordCommandTests.PulseAudio {
    @Test(.hangGuard(minutes: 15))
    func lowLatencyHLSIsServedWithBlockingReload() throws {
        let pulse = try PulseTone()
        defer { pulse.close() }
        let hls = pulse.directory.appendingPathComponent("served").path
        let port = try HTTPProbe.freePort()
        let base = "http://127.0.0.1:\(port)"
        let recording = try pulse.startRecording(["--hls", hls, "--serve", "127.0.0.1:\(port)", "--segment-duration", "2", "--part-duration", "0.5",
                                                  "--device", "pulse", "--sample-rate", "48000"])
        defer { _ = recording.send(SIGINT) }
        try pulse.server.waitForStreams("source-outputs", while: recording)
        // The first playlist, once a part exists.
        var first = HTTPProbe.get(base + "/index.m3u8")
        for _ in 0..<40 where first.status != 200 {
            Subprocess.sleep(.milliseconds(100))
            first = HTTPProbe.get(base + "/index.m3u8")
        }
        try #require(first.status == 200, "the playlist: \(first.status) \(first.body)")
        #expect(first.body.contains("#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.500") && first.body.contains("#EXT-X-PART-INF:PART-TARGET=0.500"))
        // The hinted part: a blocking request for it is held until it exists, then names it.
        let hint = first.body.split(separator: "\n").first { $0.hasPrefix("#EXT-X-PRELOAD-HINT") }.map(String.init) ?? ""
        let uri = hint.split(separator: "\"").dropFirst().first.map(String.init) ?? ""
        let numbers = uri.dropFirst("segment-".count).dropLast(".m4s".count).split(separator: ".").compactMap { Int($0) }
        try #require(numbers.count == 2, "the preload hint: \(hint)")
        let (msn, part) = (numbers[0] - 1, numbers[1] - 1)
        let held = HTTPProbe.get(base + "/index.m3u8?_HLS_msn=\(msn)&_HLS_part=\(part)")
        #expect(held.status == 200 && held.body.contains("URI=\"\(uri)\""), "held until \(uri) exists: \(held.status) \(held.body)")
        #expect(held.seconds > 0.05 && held.seconds < 2, "held \(held.seconds) s for a part of 0.5 s")
        // A request for the next hinted part itself is held until the part exists.
        let nextHint = held.body.split(separator: "\n").first { $0.hasPrefix("#EXT-X-PRELOAD-HINT") }.map(String.init) ?? ""
        let nextURI = nextHint.split(separator: "\"").dropFirst().first.map(String.init) ?? ""
        let early = HTTPProbe.get(base + "/" + nextURI)
        #expect(early.status == 200 && !early.body.isEmpty && early.seconds > 0.05, "the hinted part \(nextURI): \(early.status) after \(early.seconds) s")
        // The part and its segment are served.
        let partFile = HTTPProbe.get(base + "/" + uri)
        #expect(partFile.status == 200 && !partFile.body.isEmpty)
        #expect(HTTPProbe.get(base + "/init.mp4").status == 200)
        // Nothing outside DIR, even a file of a kind it serves, asked for with a raw `..`.
        try Data([1, 2, 3]).write(to: pulse.directory.appendingPathComponent("outside.m4s"))
        #expect(HTTPProbe.rawStatus(port: port, path: "/../outside.m4s") == 404)
        // Too far ahead: 400 at once; a part more than the Advance Part Limit (3 ÷ 0.5 s = 6
        // parts) past the last published one too: part 9 of the segment after the one being
        // recorded is at least 7 past, even if that one has just been finished.
        let ahead = HTTPProbe.get(base + "/index.m3u8?_HLS_msn=\(msn + 5)")
        #expect(ahead.status == 400 && ahead.seconds < 1, "\(ahead.status)")
        let now = HTTPProbe.get(base + "/index.m3u8").body
        let sequence = now.split(separator: "\n").first { $0.hasPrefix("#EXT-X-MEDIA-SEQUENCE:") }.flatMap { Int($0.dropFirst("#EXT-X-MEDIA-SEQUENCE:".count)) } ?? 0
        let open = sequence + now.components(separatedBy: "#EXTINF:").count - 1
        let partsAhead = HTTPProbe.get(base + "/index.m3u8?_HLS_msn=\(open + 1)&_HLS_part=9")
        #expect(partsAhead.status == 400 && partsAhead.seconds < 1, "\(partsAhead.status)")
        // FFmpeg's HLS demuxer (5.1 reads no EXT-X-PART: whole segments only) plays the live
        // stream over HTTP without an error, once two segments are whole (a blocking request).
        let twoSegments = HTTPProbe.get(base + "/index.m3u8?_HLS_msn=1")
        #expect(twoSegments.status == 200 && twoSegments.body.contains("segment-00002.m4s"), "\(twoSegments.status)")
        let play = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-i", base + "/index.m3u8", "-t", "2", "-f", "null", "-"],
                                      environment: ProcessInfo.processInfo.environment, timeout: .seconds(60))
        #expect(play.status == 0 && play.standardError.isEmpty, "ffmpeg over HTTP: \(play.standardError)")
        // A second server on the same port: a clear error, nothing written.
        let other = pulse.directory.appendingPathComponent("other").path
        let busy = try Subprocess.run(try ExternalTool.keyframe, ["record", "--hls", other, "--serve", "127.0.0.1:\(port)", "--device", "pulse"],
                                      environment: ProcessInfo.processInfo.environment, timeout: .seconds(60))
        #expect(busy.status != 0 && busy.standardError.contains("127.0.0.1:\(port)"), "\(busy.standardError)")
        #expect(!FileManager.default.fileExists(atPath: other + "/index.m3u8"))
        // Ctrl-C ends the stream: the playlist is ended.
        try #require(recording.send(SIGINT))
        let finished = try recording.wait(timeout: .seconds(60))
        #expect(finished.result.status == 0, "\(finished.result.standardError)")
        let ended = try String(contentsOfFile: hls + "/index.m3u8", encoding: .utf8)
        #expect(ended.contains("#EXT-X-ENDLIST") && !ended.contains("PRELOAD-HINT"))
        try ValidationCheck.expectSilent([hls, hls + "/index.m3u8"], "record --hls --serve --segment-duration 2 --part-duration 0.5, ended by SIGINT")
    }
}
