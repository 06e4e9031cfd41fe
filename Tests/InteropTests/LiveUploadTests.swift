import Foundation
import Testing
import TestSupport

/// Issue 40: a live rendition copied into remote stores as it is recorded. `record --hls DIR
/// --hls s3://… --hls dav://…` from a PulseAudio null sink's monitor (real time, ``PulseTone``) into SeaweedFS's S3 gateway
/// and nginx's WebDAV at once: each store ends holding exactly what the local directory holds
/// (a sliding window's old segments deleted there too), with the origin's headers on S3; and a
/// store stopped for 20 s mid-stream loses nothing while the local copy goes on.
extension RealTimeTests {
@Suite(.serialized) struct LiveUploadTests {
    /// The objects under `prefix/` in `bucket`: name → (Content-Type, Cache-Control).
    static func objects(in server: SeaweedFSServer, bucket: String, prefix: String) throws -> [String: (String, String?)] {
        let listed = try server.boto3("""
            for page in s3.get_paginator('list_objects_v2').paginate(Bucket='\(bucket)', Prefix='\(prefix)/'):
                for o in page.get('Contents', []):
                    h = s3.head_object(Bucket='\(bucket)', Key=o['Key'])
                    print(json.dumps([o['Key'][len('\(prefix)/'):], h['ContentType'], h.get('CacheControl')]))
            """)
        let rows = listed.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [Any] }
        return Dictionary(uniqueKeysWithValues: rows.compactMap { row in
            (row.first as? String).map { ($0, (row[1] as? String ?? "", row[2] as? String)) }
        })
    }

    /// Downloads every object under `prefix/` into `directory`.
    static func download(_ server: SeaweedFSServer, bucket: String, prefix: String, into directory: URL) throws {
        _ = try server.boto3("""
            import os
            for page in s3.get_paginator('list_objects_v2').paginate(Bucket='\(bucket)', Prefix='\(prefix)/'):
                for o in page.get('Contents', []):
                    path = os.path.join('\(directory.path)', o['Key'][len('\(prefix)/'):])
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    s3.download_file('\(bucket)', o['Key'], path)
            """)
    }

    /// `keyframe record` in the background as `pulse`'s client, signed for `seaweed`.
    static func record(_ arguments: [String], pulse: PulseTone, seaweed: SeaweedFSServer) throws -> RunningProcess {
        var environment = pulse.server.environment
        for (name, value) in seaweed.environment() where name.hasPrefix("AWS_") { environment[name] = value }
        return try RunningProcess(try ExternalTool.keyframe, ["record"] + arguments + ["--device", "pulse", "--sample-rate", "48000", "--json"],
                                  environment: environment)
    }

    /// `keyframe record` as ``record(_:pulse:seaweed:)`` starts it, on a terminal (util-linux's
    /// `script` gives it one), so that it draws its live line: the process's output is that
    /// terminal's, and the JSON report goes to `report`.
    static func recordOnATerminal(_ arguments: [String], pulse: PulseTone, seaweed: SeaweedFSServer, report: URL) throws -> RunningProcess {
        var environment = pulse.server.environment
        for (name, value) in seaweed.environment() where name.hasPrefix("AWS_") { environment[name] = value }
        let words = [try ExternalTool.keyframe, "record"] + arguments + ["--device", "pulse", "--sample-rate", "48000", "--json"]
        let line = words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ") + " > '\(report.path)'"
        return try RunningProcess("/usr/bin/script", ["-qfec", line, "/dev/null"], environment: environment)
    }

    /// The regular files under `directory`, by relative name.
    static func files(under directory: URL) -> Set<String> {
        let names = (FileManager.default.enumerator(atPath: directory.path)?.allObjects as? [String]) ?? []
        return Set(names.filter { name in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path, isDirectory: &isDirectory) && !isDirectory.boolValue
        })
    }

    @Test(.hangGuard(minutes: 10)) func aSlidingWindowGoesToS3AndWebDAVAtOnce() throws {
        let seaweed = try SeaweedFSServer()
        defer { seaweed.stop() }
        let dav = try NginxWebDAVServer()
        defer { dav.stop() }
        _ = try seaweed.boto3("s3.create_bucket(Bucket='live')")
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pulse = try PulseTone()
        defer { pulse.close() }
        let local = directory.appendingPathComponent("local")
        let davURL = dav.url("radio").replacingOccurrences(of: "http:", with: "dav:")

        let recording = try Self.record(["--hls", local.path, "--hls", "s3://live/radio", "--hls", davURL, "--hls-window", "6",
                                         "--segment-duration", "1", "--duration", "16"], pulse: pulse, seaweed: seaweed)
        let run = try recording.wait(timeout: .seconds(120)).result
        #expect(run.status == 0, "\(run.standardError)")
        let report = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any] ?? [:]
        let stores = report["stores"] as? [[String: Any]] ?? []
        #expect(stores.map { $0["store"] as? String } == ["s3://live/radio", davURL], "\(report)")
        for store in stores {
            #expect(store["state"] as? String == "current" && (store["lost"] as? [String])?.isEmpty == true, "\(store)")
            #expect((store["removedObjects"] as? Int ?? 0) > 0, "segments that left the window were deleted: \(store)")
        }

        // Each store holds what the local directory holds: the window's segments and the grace
        // window's, the old ones deleted.
        let held = Self.files(under: local)
        #expect(held.contains("index.m3u8") && !held.contains("segment-00001.m4s"), "\(held.sorted())")
        let s3 = try Self.objects(in: seaweed, bucket: "live", prefix: "radio")
        #expect(Set(s3.keys) == held.union(["index.html"]), "S3 \(s3.keys.sorted()) local \(held.sorted()) and the player page")
        #expect(Self.files(under: dav.root.appendingPathComponent("radio")) == held.union(["index.html"]))
        #expect(dav.accessLog.contains { $0.hasPrefix("DELETE /ingest/radio/segment-00001.m4s 204") }, "\(dav.accessLog.suffix(5))")

        // The origin's headers: a finished playlist kept a day, a live init segment revalidated
        // (it is written again at the end), segments kept a year.
        #expect(s3["index.m3u8"]?.0 == "application/vnd.apple.mpegurl" && s3["index.m3u8"]?.1 == "public, max-age=86400", "\(s3)")
        #expect(s3["init.mp4"]?.1 == "no-cache")
        #expect(s3.filter { $0.key.hasSuffix(".m4s") }.allSatisfy { $0.value == ("video/iso.segment", "public, max-age=31536000, immutable") })

        // The S3 copy is the local one, byte for byte, and validates; FFmpeg plays the WebDAV
        // copy over HTTP to its end.
        let copy = directory.appendingPathComponent("copy")
        try Self.download(seaweed, bucket: "live", prefix: "radio", into: copy)
        for name in held {
            #expect(FileManager.default.contentsEqual(atPath: copy.appendingPathComponent(name).path, andPath: local.appendingPathComponent(name).path), "\(name)")
        }
        try ExternalTool.succeed(try ExternalTool.keyframe, ["validate", copy.appendingPathComponent("index.m3u8").path])
        let played = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0",
                                                          dav.url("radio/index.m3u8")])
        #expect(abs((Double(played.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) - 6) < 0.2, "\(played.standardOutput)")
    }

    /// Low-latency HLS into S3: every part goes up as it is recorded, before the playlist that
    /// names it (each lane keeps the order the recorder wrote in); at the end the bucket holds
    /// what the local directory holds, and the playlist validates as S3 serves it, parts and all.
    @Test(.hangGuard(minutes: 10)) func lowLatencyPartsGoToS3() throws {
        let seaweed = try SeaweedFSServer()
        defer { seaweed.stop() }
        _ = try seaweed.boto3("s3.create_bucket(Bucket='live')")
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pulse = try PulseTone()
        defer { pulse.close() }
        let local = directory.appendingPathComponent("local")
        let recording = try Self.record(["--hls", local.path, "--hls", "s3://live/ll", "--segment-duration", "2", "--part-duration", "0.5",
                                         "--duration", "10"], pulse: pulse, seaweed: seaweed)
        let run = try recording.wait(timeout: .seconds(120)).result
        #expect(run.status == 0, "\(run.standardError)")
        let report = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any] ?? [:]
        for store in report["stores"] as? [[String: Any]] ?? [] {
            #expect(store["state"] as? String == "current" && (store["lost"] as? [String]) == [], "\(store)")
        }
        let held = Self.files(under: local)
        let playlist = try String(contentsOf: local.appendingPathComponent("index.m3u8"), encoding: .utf8)
        #expect(playlist.contains("#EXT-X-PART:") && playlist.contains("#EXT-X-ENDLIST"), "\(playlist)")
        let s3 = try Self.objects(in: seaweed, bucket: "live", prefix: "ll")
        #expect(Set(s3.keys) == held.union(["index.html"]), "S3 \(s3.keys.sorted()) local \(held.sorted())")
        #expect(s3.keys.contains { $0.hasSuffix(".1.m4s") } && s3.filter { $0.key.hasSuffix(".m4s") }.allSatisfy { $0.value.0 == "video/iso.segment" },
                "the parts, as segments are: \(s3.keys.sorted())")
        let validated = try Subprocess.run(try ExternalTool.keyframe, ["validate", "s3://live/ll/index.m3u8", "--s3-endpoint", seaweed.endpoint],
                                           environment: seaweed.environment())
        #expect(validated.status == 0 && validated.standardOutput == "s3://live/ll/index.m3u8: ok\n", "\(validated.standardOutput)\(validated.standardError)")
    }

    /// SeaweedFS stopped for 20 s mid-stream and started again: the segments recorded meanwhile
    /// wait in the spool and go up in order when it is back; the final playlist names every
    /// segment, each is there, the copy validates, and the local copy never stalled.
    @Test(.hangGuard(minutes: 10)) func aStoreStoppedFor20SecondsLosesNothing() throws {
        let seaweed = try SeaweedFSServer()
        defer { seaweed.stop() }
        _ = try seaweed.boto3("s3.create_bucket(Bucket='live')")
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pulse = try PulseTone()
        defer { pulse.close() }
        let local = directory.appendingPathComponent("local")

        let reportFile = directory.appendingPathComponent("report.json")
        let recording = try Self.recordOnATerminal(["--hls", local.path, "--hls", "s3://live/event", "--segment-duration", "1", "--duration", "40"],
                                                   pulse: pulse, seaweed: seaweed, report: reportFile)
        func localSegments() -> Int { Self.files(under: local).filter { $0.hasSuffix(".m4s") }.count }
        try RunningProcess.waitUntil("5 segments recorded", timeout: .seconds(30)) { localSegments() >= 5 }
        seaweed.halt()
        let atHalt = localSegments()
        Thread.sleep(forTimeInterval: 20)
        let atRestart = localSegments()
        try seaweed.start()
        let finished = try recording.wait(timeout: .seconds(180))
        #expect(finished.result.status == 0, "\(finished.result.standardOutput.suffix(2000))")
        #expect(atRestart - atHalt >= 18, "the local copy went on: \(atHalt) segments at the halt, \(atRestart) 20 s later")

        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: reportFile)) as? [String: Any] ?? [:]
        let store = (report["stores"] as? [[String: Any]])?.first ?? [:]
        #expect(store["state"] as? String == "current" && (store["failures"] as? Int ?? 0) > 0, "\(store)")
        // The live line said so meanwhile: the store retrying with its queue, then going again.
        let line = finished.result.standardOutput
        #expect(line.contains("s3 \u{1B}[33m↻\u{1B}[0m") && line.contains(" queued") && line.contains("s3 \u{1B}[32m●\u{1B}[0m"),
                "\(line.suffix(600))")
        #expect((store["lost"] as? [String]) == [] && (store["gaps"] as? [String]) == [], "\(store)")

        // SeaweedFS's gateway may serve a key overwritten just after its restart from its cache
        // for a moment: the final playlist is read once the store says it holds its bytes.
        let final = local.appendingPathComponent("index.m3u8").path
        try RunningProcess.waitUntil("S3 to serve the final playlist", timeout: .seconds(20)) {
            try seaweed.boto3("""
                import hashlib
                body = s3.get_object(Bucket='live', Key='event/index.m3u8')['Body'].read()
                print(hashlib.md5(body).hexdigest() == hashlib.md5(open('\(final)', 'rb').read()).hexdigest())
                """).hasPrefix("True")
        }
        let copy = directory.appendingPathComponent("copy")
        try Self.download(seaweed, bucket: "live", prefix: "event", into: copy)
        let held = Self.files(under: local)
        #expect(Self.files(under: copy) == held.union(["index.html"]), "S3 \(Self.files(under: copy).count) objects, local \(held.count)")
        let playlist = try String(contentsOf: copy.appendingPathComponent("index.m3u8"), encoding: .utf8)
        let named = playlist.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(named.count == 40 && playlist.contains("#EXT-X-ENDLIST") && !playlist.contains("EXT-X-GAP"), "\(playlist)")
        for name in held {
            #expect(FileManager.default.contentsEqual(atPath: copy.appendingPathComponent(name).path, andPath: local.appendingPathComponent(name).path), "\(name)")
        }
        // validate reads the playlist in the store, and every object it names, itself.
        let remote = try Subprocess.run(try ExternalTool.keyframe, ["validate", "s3://live/event/index.m3u8"], environment: seaweed.environment())
        #expect(remote.status == 0 && remote.standardOutput == "s3://live/event/index.m3u8: ok\n", "\(remote.standardOutput) \(remote.standardError)")
    }

    /// The issue's bar: a 60-s live ladder of three renditions (HE-AAC v2, HE-AAC, AAC-LC) into
    /// SeaweedFS and nginx's WebDAV at once, each behind an nginx `proxy_cache`: FFmpeg decodes
    /// the whole minute through the cache in front of S3, Chromium plays the player page through
    /// the cache in front of WebDAV to its end, and every S3 object has the origin's headers.
    @Test(.hangGuard(minutes: 15)) func aLiveLadderPlaysThroughACacheInFrontOfEachStore() throws {
        let seaweed = try SeaweedFSServer()
        defer { seaweed.stop() }
        let dav = try NginxWebDAVServer()
        defer { dav.stop() }
        _ = try seaweed.boto3("s3.create_bucket(Bucket='\(SeaweedFSServer.publicBucket)')")
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pulse = try PulseTone()
        defer { pulse.close() }
        let local = directory.appendingPathComponent("local")
        let davURL = dav.url("ladder").replacingOccurrences(of: "http:", with: "dav:")

        let recording = try Self.record(["--hls", local.path, "--hls", "s3://\(SeaweedFSServer.publicBucket)/ladder", "--hls", davURL,
                                         "--bitrates", "32k:auto,64k:auto,128k", "--segment-duration", "2", "--duration", "60"],
                                        pulse: pulse, seaweed: seaweed)
        let run = try recording.wait(timeout: .seconds(240)).result
        #expect(run.status == 0, "\(run.standardError)")
        let report = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any] ?? [:]
        #expect(report["ladder"] as? [String] == ["32k", "64k", "128k"] && report["profile"] as? String == "HE-AACv2", "\(report)")
        for store in report["stores"] as? [[String: Any]] ?? [] {
            #expect(store["state"] as? String == "current" && (store["lost"] as? [String]) == [], "\(store)")
        }

        // Each store holds the local ladder and the player page beside its master playlist.
        let held = Self.files(under: local)
        #expect(held.isSuperset(of: ["master.m3u8", "32k/index.m3u8", "64k/init.mp4", "128k/segment-00030.m4s"]), "\(held.sorted())")
        let s3 = try Self.objects(in: seaweed, bucket: SeaweedFSServer.publicBucket, prefix: "ladder")
        #expect(Set(s3.keys) == held.union(["index.html"]), "S3 \(s3.keys.sorted())")
        #expect(Self.files(under: dav.root.appendingPathComponent("ladder")) == held.union(["index.html"]))
        #expect(s3["index.html"]?.0 == "text/html; charset=utf-8" && s3["index.html"]?.1 == "no-cache", "\(s3["index.html"] ?? ("", nil))")
        #expect(s3["master.m3u8"]?.0 == "application/vnd.apple.mpegurl" && s3["64k/index.m3u8"]?.1 == "public, max-age=86400")
        #expect(s3.filter { $0.key.hasSuffix("init.mp4") }.allSatisfy { $0.value == ("video/mp4", "no-cache") })
        #expect(s3.filter { $0.key.hasSuffix(".m4s") }.allSatisfy { $0.value == ("video/iso.segment", "public, max-age=31536000, immutable") })
        try ExternalTool.succeed(try ExternalTool.keyframe, ["validate", local.appendingPathComponent("master.m3u8").path])

        // A cache in front of each store.
        let cacheS3 = directory.appendingPathComponent("cache-s3"), cacheDAV = directory.appendingPathComponent("cache-dav")
        for cache in [cacheS3, cacheDAV] { try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true) }
        let s3Edge = try HTTPProbe.freePort(), davEdge = try HTTPProbe.freePort()
        let s3Port = Int(seaweed.endpoint.split(separator: ":").last ?? "") ?? 0
        let edges = [try CDNCacheTests.startNginx(in: cacheS3, port: s3Edge, origin: s3Port),
                     try CDNCacheTests.startNginx(in: cacheDAV, port: davEdge, origin: dav.port)]
        defer { for edge in edges { edge.stop() } }
        let s3Master = "http://127.0.0.1:\(s3Edge)/\(SeaweedFSServer.publicBucket)/ladder/master.m3u8"
        try CDNCacheTests.waitUntilServed(s3Master)
        // The ladder as the cache in front of WebDAV serves it validates: every playlist and object.
        let davMaster = "http://127.0.0.1:\(davEdge)/ingest/ladder/master.m3u8"
        let remote = try Subprocess.run(try ExternalTool.keyframe, ["validate", davMaster])
        #expect(remote.status == 0 && remote.standardOutput == "\(davMaster): ok\n", "\(remote.standardOutput) \(remote.standardError)")

        // FFmpeg decodes the highest rendition's whole minute through the cache in front of S3.
        let decoded = directory.appendingPathComponent("decoded.wav").path
        try MP4Check.ffmpeg(["-i", s3Master, "-map", "0:a:0", "-c:a", "pcm_s16le", decoded])
        let frames = try CaptureCheck.ffprobeStream(decoded)
        #expect(abs((frames.duration ?? 0) - 60) < 0.05, "FFmpeg decoded \(frames.duration ?? 0) s")

        // Chromium plays the page the store serves, through the cache in front of WebDAV.
        let script = MP4Check.repositoryRoot.appendingPathComponent("scripts/browser-page.py").path
        let page = try ExternalTool.succeed(try MP4Check.venvPython, [script, "http://127.0.0.1:\(davEdge)/ingest/ladder/index.html",
                                                                    pulse.directory.appendingPathComponent("tone.wav").path,
                                                                    "--screenshot", directory.appendingPathComponent("page.png").path])
        let played = try #require(try JSONSerialization.jsonObject(with: Data(page.standardOutput.utf8)) as? [String: Any],
                                  "\(page.standardOutput.prefix(2000)) \(page.standardError.suffix(2000))")
        let player = played["player"] as? [String: Any] ?? [:]
        let heard = played["heard"] as? [String: Any] ?? [:]
        #expect((player["playlist"] as? String)?.hasSuffix("/128k/index.m3u8") == true && player["error"] is NSNull, "\(player)")
        #expect(abs(((heard["duration"] as? NSNumber)?.doubleValue ?? 0) - 60) < 0.05, "\(heard)")
        #expect(((heard["captured"] as? NSNumber)?.intValue ?? 0) >= 59 * 48000, "Chromium played the minute to its end: \(heard)")
    }
}
}

typealias LiveUploadTests = RealTimeTests.LiveUploadTests
