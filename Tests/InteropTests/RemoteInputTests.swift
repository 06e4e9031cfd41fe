import Foundation
import Testing
import TestSupport

/// Issue 40: inputs in stores. `probe https://…/1h.m4a` reads the boxes of an hour of AAC by
/// ranged GETs, under 1 MB of its 58 MB (nginx counts what it sent); `convert s3://…/in.flac
/// s3://…/out.m4a` leaves no state behind: the FLAC read from SeaweedFS, the M4A put there with
/// its type, decoding to the same length, then packaged from the bucket into the bucket.
@Suite(.serialized) struct RemoteInputTests {
    @Test(.hangGuard(minutes: 10)) func probingAnHourOverHTTPReadsItsBoxesNotItsMedia() throws {
        let server = try NginxWebDAVServer()
        defer { server.stop() }
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let ten = directory.appendingPathComponent("ten.m4a").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=10:r=44100", "-ac", "2", "-c:a", "aac", "-b:a", "128k", ten])
        let hour = server.root.appendingPathComponent("1h.m4a").path
        try MP4Check.ffmpeg(["-stream_loop", "359", "-i", ten, "-c", "copy", hour])
        let size = try FileManager.default.attributesOfItem(atPath: hour)[.size] as? Int ?? 0

        let probed = try ExternalTool.succeed(try ExternalTool.keyframe, ["probe", server.url("1h.m4a"), "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(probed.standardOutput.utf8)) as? [String: Any] ?? [:]
        #expect(abs((report["duration"] as? Double ?? 0) - 3602.8) < 0.1, "\(report)")
        let local = try ExternalTool.succeed(try ExternalTool.keyframe, ["probe", hour, "--json"])
        #expect(probed.standardOutput == local.standardOutput, "the same report as the file's")
        #expect(size > 50_000_000 && server.bytesSent < 1_000_000, "sent \(server.bytesSent) bytes of \(size)")
        #expect(server.accessLog.allSatisfy { $0.hasPrefix("GET /ingest/1h.m4a 206") }, "ranged GETs only: \(server.accessLog)")
    }

    /// Any other file in a store is described from its container's headers, read in ranges:
    /// ten minutes of FLAC, MP3 (with LAME's Info tag), Ogg Opus and WAV over HTTP give the
    /// duration, codec, rate, channels, priming and tags the local probe of the same file
    /// gives, for a few hundred KB of each; the report says it read the headers only.
    @Test(.hangGuard(minutes: 10)) func probingOtherFormatsOverHTTPReadsTheirHeadersNotTheirPackets() throws {
        let server = try NginxWebDAVServer()
        defer { server.stop() }
        let keyframe = try ExternalTool.keyframe
        // Ten minutes each, at the encoders' quickest settings.
        let files: [(name: String, arguments: [String])] = [
            ("long.flac", ["-f", "lavfi", "-i", "sine=f=440:d=600:r=44100", "-compression_level", "0"]),
            ("long.mp3", ["-f", "lavfi", "-i", "sine=f=440:d=600:r=44100", "-c:a", "libmp3lame", "-b:a", "64k", "-compression_level", "9"]),
            ("long.opus", ["-f", "lavfi", "-i", "sine=f=440:d=600:r=48000", "-c:a", "libopus", "-b:a", "96k", "-compression_level", "0"]),
            ("long.wav", ["-f", "lavfi", "-i", "sine=f=440:d=600:r=44100"]),
        ]
        for (name, arguments) in files {
            let path = server.root.appendingPathComponent(name).path
            try MP4Check.ffmpeg(arguments + ["-metadata", "title=Ten minutes", path])
            let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            let sentBefore = server.bytesSent, requestsBefore = server.accessLog.count
            let probed = try ExternalTool.succeed(keyframe, ["probe", server.url(name), "--json"])
            let sent = server.bytesSent - sentBefore
            let requests = server.accessLog.dropFirst(requestsBefore)
            let local = try ExternalTool.succeed(keyframe, ["probe", path, "--json"])
            let remote = try JSONSerialization.jsonObject(with: Data(probed.standardOutput.utf8)) as? [String: Any] ?? [:]
            let expected = try JSONSerialization.jsonObject(with: Data(local.standardOutput.utf8)) as? [String: Any] ?? [:]
            let track = (remote["tracks"] as? [[String: Any]])?.first ?? [:]
            let localTrack = (expected["tracks"] as? [[String: Any]])?.first ?? [:]

            #expect(remote["headersOnly"] as? Bool == true && remote["durationEstimated"] == nil, "\(name): \(remote)")
            #expect(remote["format"] as? String == expected["format"] as? String, "\(name): \(remote)")
            let duration = remote["duration"] as? Double ?? 0, localDuration = expected["duration"] as? Double ?? -1
            // FLAC's STREAMINFO and a WAV's data size are exact; an MP3's Info tag and an Ogg
            // Opus stream's last granule are read as the local probe reads them.
            if name.hasSuffix(".flac") || name.hasSuffix(".wav") {
                #expect(duration == localDuration, "\(name): \(duration) against \(localDuration)")
            } else {
                #expect(abs(duration - localDuration) < 0.001, "\(name): \(duration) against \(localDuration)")
            }
            #expect(abs(duration - 600) < 0.05, "\(name): \(duration)")
            #expect(track["duration"] as? Double == duration && track["sampleCount"] as? Int == 0, "\(name): \(track)")
            for key in ["codec", "sampleRate", "channels", "priming", "remainder"] {
                #expect("\(track[key] ?? "none")" == "\(localTrack[key] ?? "none")", "\(name): \(key) \(track) against \(localTrack)")
            }
            #expect((remote["tags"] as? [String: String])?["title"] == "Ten minutes", "\(name): \(remote)")
            // The headers (and, for Ogg, the last page), not the packets.
            #expect(sent < 300_000 && sent * 20 < size, "\(name): sent \(sent) bytes of \(size)")
            #expect(!requests.isEmpty && requests.allSatisfy { $0.hasPrefix("GET /ingest/\(name) 206") }, "\(name): ranged GETs only: \(requests)")
        }

        // Said in words too; --boxes shows an MP4's boxes only, and --loudness decodes it all.
        let text = try ExternalTool.succeed(keyframe, ["probe", server.url("long.flac")])
        #expect(text.standardOutput.contains("600.000000 s") && text.standardOutput.contains("read: the headers only"), "\(text.standardOutput)")
        let boxes = try Subprocess.run(keyframe, ["probe", server.url("long.flac"), "--boxes"])
        #expect(boxes.status == 64 && boxes.standardError.contains("not an MP4"), "\(boxes.status) \(boxes.standardError)")
        let ten = server.root.appendingPathComponent("ten.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=10:r=48000", ten])
        let loudness = try ExternalTool.succeed(keyframe, ["probe", server.url("ten.wav"), "--loudness", "--json"])
        let localLoudness = try ExternalTool.succeed(keyframe, ["probe", ten, "--loudness", "--json"])
        #expect(loudness.standardOutput == localLoudness.standardOutput && loudness.standardOutput.contains("integrated"), "\(loudness.standardOutput)")
    }

    /// The commands that read local files only say so for a store's URL, with the usage exit
    /// status, naming those that read stores, the password masked; nothing is asked of a server.
    @Test func commandsThatReadLocalFilesSaySoForAnObjectsURL() throws {
        let url = "https://studio:s3cret-pass@127.0.0.1:9/in.m4a"
        let commands = [["decode", url, "-o", "x.wav"], ["tag", url], ["chapters", url], ["cut", url, "-o", "x.m4a", "--end", "1"],
                        ["split", url, "--at", "1", "-o", "parts"], ["join", "s3://bucket/a.m4a", url, "-o", "x.m4a"], ["play", url],
                        ["demux", "env:KEYFRAME_IN", "-o", "x.aac"], ["mux", "s3://bucket/a.aac", "-o", "x.m4a"],
                        ["publish", url, "icecast://127.0.0.1:9/live"]]
        for arguments in commands {
            let run = try Subprocess.run(try ExternalTool.keyframe, arguments)
            #expect(run.status == 64 && run.standardError.contains("\(arguments[0]) reads local files")
                    && run.standardError.contains("convert") && !run.standardError.contains("s3cret-pass"), "\(arguments): \(run.standardError)")
        }
    }

    @Test(.hangGuard(minutes: 10)) func aConvertFromS3IntoS3LeavesNothingBehind() throws {
        let server = try SeaweedFSServer()
        defer { server.stop() }
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let flac = directory.appendingPathComponent("in.flac").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=f=550:d=20:r=48000", "-ac", "2", flac])
        _ = try server.boto3("""
            s3.create_bucket(Bucket='media')
            s3.upload_file('\(flac)', 'media', 'inbox/in.flac')
            """)
        var environment = server.environment()
        environment["TMPDIR"] = directory.appendingPathComponent("tmp").path
        try FileManager.default.createDirectory(atPath: environment["TMPDIR"]!, withIntermediateDirectories: true)
        let run = try Subprocess.run(try ExternalTool.keyframe, ["convert", "s3://media/inbox/in.flac", "-o", "s3://media/outbox/out.m4a"],
                                     environment: environment)
        #expect(run.status == 0, "\(run.standardError)")
        // The summary names the object, not the staging file, once it is in the bucket.
        #expect(run.standardOutput.hasPrefix("s3://media/outbox/out.m4a: "), "\(run.standardOutput)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: environment["TMPDIR"]!).isEmpty, "no staging left behind")
        let copy = directory.appendingPathComponent("out.m4a").path
        let type = try server.boto3("""
            s3.download_file('media', 'outbox/out.m4a', '\(copy)')
            head = s3.head_object(Bucket='media', Key='outbox/out.m4a')
            print(head['ContentType'], head.get('CacheControl'), sep='|')
            """)
        #expect(type.trimmingCharacters(in: .whitespacesAndNewlines) == "audio/mp4|public, max-age=86400", "\(type)")
        let stream = try CaptureCheck.ffprobeStream(copy)
        #expect(stream.sampleRate == 48000 && abs((stream.duration ?? 0) - 20) < 0.01, "\(stream)")

        // The converted object packaged from the bucket into the bucket, nothing left behind.
        let packaged = try Subprocess.run(try ExternalTool.keyframe, ["package", "s3://media/outbox/out.m4a", "--hls", "s3://media/show"],
                                          environment: environment)
        #expect(packaged.status == 0, "\(packaged.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: environment["TMPDIR"]!).isEmpty, "no staging left behind")
        let keys = try server.boto3("print(sorted(o['Key'] for o in s3.list_objects_v2(Bucket='media', Prefix='show/')['Contents']))")
        #expect(keys.contains("'show/index.m3u8'") && keys.contains("'show/init.mp4'") && keys.contains("'show/index.html'"), "\(keys)")
        // validate takes the place the package was put, as it takes a directory.
        let validated = try Subprocess.run(try ExternalTool.keyframe, ["validate", "s3://media/show"], environment: environment)
        #expect(validated.status == 0 && validated.standardOutput == "s3://media/show/index.m3u8: ok\n", "\(validated.standardOutput) \(validated.standardError)")

        // A missing object is said before anything is written.
        let missing = try Subprocess.run(try ExternalTool.keyframe, ["convert", "s3://media/inbox/none.flac", "-o", "s3://media/outbox/x.m4a"],
                                         environment: environment)
        #expect(missing.status == 2 && missing.standardError.contains("NoSuchKey"), "\(missing.status) \(missing.standardError)")

        // A missing bucket for the output is said before any work, and --json never says ok.
        let nowhere = try Subprocess.run(try ExternalTool.keyframe, ["convert", "s3://media/inbox/in.flac", "-o", "s3://nobucket/x.m4a", "--json"],
                                         environment: environment)
        #expect(nowhere.status == 1 && nowhere.standardError.contains("NoSuchBucket") && nowhere.standardOutput.isEmpty,
                "\(nowhere.standardOutput) \(nowhere.standardError)")
    }

    /// An output past S3's part size goes up in parts read from the file, and into WebDAV as a
    /// stream; `encode` reads its WAV from a bucket. The copies are the local conversion's bytes.
    @Test(.hangGuard(minutes: 10)) func aLargeOutputGoesUpInPartsAndEncodeReadsABucket() throws {
        let server = try SeaweedFSServer()
        defer { server.stop() }
        let dav = try NginxWebDAVServer()
        defer { dav.stop() }
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // 70 s of two channels of noise: FLAC keeps it near its 13.4 MB of PCM, past the 8 MiB part size.
        let wav = directory.appendingPathComponent("in.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=d=70:r=48000:a=0.9:seed=7", "-f", "lavfi", "-i", "anoisesrc=d=70:r=48000:a=0.9:seed=9",
                             "-filter_complex", "amerge=inputs=2", wav])
        _ = try server.boto3("""
            s3.create_bucket(Bucket='media')
            s3.upload_file('\(wav)', 'media', 'inbox/in.wav')
            """)
        let environment = server.environment()
        let keyframe = try ExternalTool.keyframe
        let local = directory.appendingPathComponent("local.flac").path
        try ExternalTool.succeed(keyframe, ["convert", wav, "-o", local])
        let size = try #require(try FileManager.default.attributesOfItem(atPath: local)[.size] as? Int)
        #expect(size > 8 << 20, "\(size) bytes")

        let toS3 = try Subprocess.run(keyframe, ["convert", wav, "-o", "s3://media/outbox/out.flac"], environment: environment)
        #expect(toS3.status == 0, "\(toS3.standardError)")
        let copy = directory.appendingPathComponent("copy.flac").path
        let said = try server.boto3("""
            s3.download_file('media', 'outbox/out.flac', '\(copy)')
            head = s3.head_object(Bucket='media', Key='outbox/out.flac')
            print(head['ContentType'], head['ETag'])
            """)
        // A multipart object's ETag ends with its number of parts.
        #expect(said.contains("audio/flac") && said.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("-2\""), "\(said)")
        #expect(FileManager.default.contentsEqual(atPath: copy, andPath: local))
        try ExternalTool.succeed("flac", ["-t", "-s", copy])

        let davURL = dav.url("outbox/out.flac").replacingOccurrences(of: "http:", with: "dav:")
        let toDAV = try Subprocess.run(keyframe, ["convert", wav, "-o", davURL])
        #expect(toDAV.status == 0, "\(toDAV.standardError)")
        #expect(FileManager.default.contentsEqual(atPath: dav.root.appendingPathComponent("outbox/out.flac").path, andPath: local))
        // The same share named http://, into a directory that is not there: nginx answers 500,
        // tried again, then said with the way to have the directories made.
        let plain = try Subprocess.run(keyframe, ["convert", wav, "-o", dav.url("elsewhere/out.flac")])
        #expect(plain.status == 1 && plain.standardError.contains("HTTP 500") && plain.standardError.contains("dav://"),
                "\(plain.status) \(plain.standardError)")

        // encode's input from the bucket.
        let encoded = directory.appendingPathComponent("encoded.m4a").path
        let encode = try Subprocess.run(keyframe, ["encode", "s3://media/inbox/in.wav", "-o", encoded, "--bitrate", "96k"],
                                        environment: environment)
        #expect(encode.status == 0, "\(encode.standardError)")
        let stream = try CaptureCheck.ffprobeStream(encoded)
        #expect(stream.sampleRate == 48000 && abs((stream.duration ?? 0) - 70) < 0.01, "\(stream)")
    }
}

