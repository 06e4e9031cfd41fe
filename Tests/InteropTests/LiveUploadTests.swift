import Foundation
import Testing
import TestSupport

/// Issue 40: a live rendition copied into remote stores as it is recorded. `record --hls DIR
/// --hls s3://… --hls dav://…` from a PulseAudio null sink's monitor (real time, ``PulseTone``) into SeaweedFS's S3 gateway
/// and nginx's WebDAV at once: each store ends holding exactly what the local directory holds
/// (a sliding window's old segments deleted there too), with the origin's headers on S3; and a
/// store stopped for 20 s mid-stream loses nothing while the local copy goes on.
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
        #expect(Set(s3.keys) == held, "S3 \(s3.keys.sorted()) local \(held.sorted())")
        #expect(Self.files(under: dav.root.appendingPathComponent("radio")) == held)
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

        let recording = try Self.record(["--hls", local.path, "--hls", "s3://live/event", "--segment-duration", "1", "--duration", "40"],
                                        pulse: pulse, seaweed: seaweed)
        func localSegments() -> Int { Self.files(under: local).filter { $0.hasSuffix(".m4s") }.count }
        try RunningProcess.waitUntil("5 segments recorded", timeout: .seconds(30)) { localSegments() >= 5 }
        seaweed.halt()
        let atHalt = localSegments()
        Thread.sleep(forTimeInterval: 20)
        let atRestart = localSegments()
        try seaweed.start()
        let finished = try recording.wait(timeout: .seconds(180))
        #expect(finished.result.status == 0, "\(finished.result.standardError)")
        #expect(atRestart - atHalt >= 18, "the local copy went on: \(atHalt) segments at the halt, \(atRestart) 20 s later")

        let report = try JSONSerialization.jsonObject(with: Data(finished.result.standardOutput.utf8)) as? [String: Any] ?? [:]
        let store = (report["stores"] as? [[String: Any]])?.first ?? [:]
        #expect(store["state"] as? String == "current" && (store["failures"] as? Int ?? 0) > 0, "\(store)")
        #expect((store["lost"] as? [String]) == [] && (store["gaps"] as? [String]) == [], "\(store)")

        let copy = directory.appendingPathComponent("copy")
        try Self.download(seaweed, bucket: "live", prefix: "event", into: copy)
        let held = Self.files(under: local)
        #expect(Self.files(under: copy) == held, "S3 \(Self.files(under: copy).count) objects, local \(held.count)")
        let playlist = try String(contentsOf: copy.appendingPathComponent("index.m3u8"), encoding: .utf8)
        let named = playlist.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(named.count == 40 && playlist.contains("#EXT-X-ENDLIST") && !playlist.contains("EXT-X-GAP"), "\(playlist)")
        for name in held {
            #expect(FileManager.default.contentsEqual(atPath: copy.appendingPathComponent(name).path, andPath: local.appendingPathComponent(name).path), "\(name)")
        }
        try ExternalTool.succeed(try ExternalTool.keyframe, ["validate", copy.appendingPathComponent("index.m3u8").path])
    }
}
