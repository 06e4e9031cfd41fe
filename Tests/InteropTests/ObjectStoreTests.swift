import Foundation
import Testing
import TestSupport

/// Issue 40 (first part): packages into S3. `package --hls s3://bucket/prefix` against
/// SeaweedFS's S3 gateway (a real object store, started here on loopback): every object lands
/// with the Content-Type and Cache-Control our origin serves it with (read back by boto3), the
/// package downloaded again validates and plays in FFmpeg; a wrong secret is S3's
/// `SignatureDoesNotMatch` in words, without the secret, and nothing is written; a missing bucket
/// names itself; an existing package is not overwritten; an object over 8 MiB goes up in parts.
@Suite(.serialized) struct ObjectStoreTests {
    @Test(.hangGuard(minutes: 10)) func aLadderGoesIntoS3WithTheOriginsHeaders() throws {
        let server = try SeaweedFSServer()
        defer { server.stop() }
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try server.boto3("s3.create_bucket(Bucket='shows')")
        let wav = directory.appendingPathComponent("in.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=f=330:d=20:r=44100", "-ac", "2", wav])
        let keyframe = try ExternalTool.keyframe

        let made = try Subprocess.run(keyframe, ["package", wav, "--hls", "s3://shows/ep 1", "--s3-endpoint", server.endpoint,
                                                     "--bitrates", "64k,128k", "--dash", "--json"], environment: server.environment())
        #expect(made.status == 0, "\(made.standardError)")
        let listed = try server.boto3("""
            for o in s3.list_objects_v2(Bucket='shows', Prefix='ep 1/')['Contents']:
                h = s3.head_object(Bucket='shows', Key=o['Key'])
                print(json.dumps([o['Key'], h['ContentType'], h.get('CacheControl')]))
            """)
        let objects = listed.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String] }
        let byName = Dictionary(uniqueKeysWithValues: objects.map { ($0[0], ($0[1], $0[2])) })
        #expect(byName["ep 1/master.m3u8"]?.0 == "application/vnd.apple.mpegurl" && byName["ep 1/master.m3u8"]?.1 == "public, max-age=86400",
                "\(listed)")
        #expect(byName["ep 1/64k/index.m3u8"]?.1 == "public, max-age=86400" && byName["ep 1/manifest.mpd"]?.0 == "application/dash+xml")
        #expect(byName["ep 1/64k/init.mp4"]?.0 == "video/mp4" && byName["ep 1/128k/segment-00001.m4s"]?.0 == "video/iso.segment")
        #expect(byName["ep 1/128k/segment-00001.m4s"]?.1 == "public, max-age=31536000, immutable")
        #expect(objects.count == 15, "master, MPD, the player page, and per rendition a playlist, two init segments and three segments: \(listed)")
        #expect(byName["ep 1/index.html"]?.0 == "text/html; charset=utf-8" && byName["ep 1/index.html"]?.1 == "no-cache")

        // Downloaded again, the package validates and FFmpeg decodes every rendition's 20 s.
        let copy = directory.appendingPathComponent("copy")
        _ = try server.boto3("""
            import os
            for o in s3.list_objects_v2(Bucket='shows', Prefix='ep 1/')['Contents']:
                path = os.path.join('\(copy.path)', o['Key'][len('ep 1/'):])
                os.makedirs(os.path.dirname(path), exist_ok=True)
                s3.download_file('shows', o['Key'], path)
            """)
        try ExternalTool.succeed(keyframe, ["validate", copy.path])
        let decoded = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0",
                                                           copy.appendingPathComponent("master.m3u8").path])
        #expect(abs((Double(decoded.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) - 20) < 0.1, "\(decoded.standardOutput)")

        // Read from the bucket, the MPD validates with every segment its templates name, each
        // finding naming its object; a segment removed is named missing.
        let mpd = try Subprocess.run(keyframe, ["validate", "s3://shows/ep 1/manifest.mpd", "--s3-endpoint", server.endpoint],
                                     environment: server.environment())
        #expect(mpd.status == 0 && mpd.standardOutput == "s3://shows/ep 1/manifest.mpd: ok\n", "\(mpd.standardOutput)\(mpd.standardError)")
        _ = try server.boto3("s3.delete_object(Bucket='shows', Key='ep 1/128k/segment-00002.m4s')")
        let gap = try Subprocess.run(keyframe, ["validate", "s3://shows/ep 1/manifest.mpd", "--s3-endpoint", server.endpoint, "--json"],
                                     environment: server.environment())
        #expect(gap.status == 1 && gap.standardOutput.contains("s3://shows/ep 1/128k/segment-00002.m4s"), "\(gap.standardOutput)\(gap.standardError)")

        // The same place again: refused, nothing overwritten.
        let again = try Subprocess.run(keyframe, ["package", wav, "--hls", "s3://shows/ep 1"], environment: server.environment())
        #expect(again.status == 1 && again.standardError.contains("already holds a package"), "\(again.standardError)")
    }

    /// An object over 8 MiB (a minute of FLAC of white noise, one segment) goes up in parts of
    /// 8 MiB: S3's multipart ETag (`…-N`), and the bytes of the same package made in a directory.
    @Test(.hangGuard(minutes: 10)) func aLargeObjectIsPutInParts() throws {
        let server = try SeaweedFSServer()
        defer { server.stop() }
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try server.boto3("s3.create_bucket(Bucket='lossless')")
        let wav = directory.appendingPathComponent("noise.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=c=white:d=70:r=48000:a=0.9", "-ac", "2", "-c:a", "pcm_s24le", wav])
        let keyframe = try ExternalTool.keyframe
        let arguments = ["--codec", "flac", "--segment-duration", "60", "--no-loudness"]
        let local = directory.appendingPathComponent("local").path
        try ExternalTool.succeed(keyframe, ["package", wav, "--hls", local] + arguments)
        let made = try Subprocess.run(keyframe, ["package", wav, "--hls", "s3://lossless/noise", "--s3-endpoint", server.endpoint] + arguments,
                                      environment: server.environment())
        #expect(made.status == 0, "\(made.standardError)")
        let segment = try Data(contentsOf: URL(fileURLWithPath: local + "/segment-00001.m4s"))
        #expect(segment.count > 8 << 20, "a segment of \(segment.count) bytes")
        let copy = directory.appendingPathComponent("segment.m4s").path
        let tag = try server.boto3("""
            s3.download_file('lossless', 'noise/segment-00001.m4s', '\(copy)')
            print(s3.head_object(Bucket='lossless', Key='noise/segment-00001.m4s')['ETag'])
            """)
        let parts = (segment.count + (8 << 20) - 1) / (8 << 20)
        #expect(tag.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("-\(parts)\""), "\(parts) parts: \(tag)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == segment)
        #expect(try server.boto3("print(len(s3.list_multipart_uploads(Bucket='lossless').get('Uploads', [])))").hasPrefix("0"))
    }

    @Test(.hangGuard(minutes: 10)) func refusalsAreSaidInS3sWordsWithoutTheSecret() throws {
        let server = try SeaweedFSServer()
        defer { server.stop() }
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try server.boto3("s3.create_bucket(Bucket='shows')")
        let wav = directory.appendingPathComponent("in.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=f=330:d=5:r=44100", wav])
        let keyframe = try ExternalTool.keyframe

        let wrongSecret = "not-the-secret-0123456789"
        let refused = try Subprocess.run(keyframe, ["package", wav, "--hls", "s3://shows/wrong"], environment: server.environment(secret: wrongSecret))
        #expect(refused.status == 1 && refused.standardError.contains("HTTP 403 (SignatureDoesNotMatch"), "\(refused.standardError)")
        #expect(!(refused.standardError + refused.standardOutput).contains(wrongSecret))
        #expect(try server.boto3("print(s3.list_objects_v2(Bucket='shows').get('KeyCount', 0))").hasPrefix("0"))

        let missing = try Subprocess.run(keyframe, ["package", wav, "--hls", "s3://no-such-bucket/x"], environment: server.environment())
        #expect(missing.status == 1 && missing.standardError.contains("NoSuchBucket"), "\(missing.standardError)")

        // A URL or endpoint that does not read is a usage error, said before any request.
        for arguments in [["--hls", "s3://Shows/x"], ["--hls", "s3://shows:9000/x"], ["--hls", "s3://shows/x", "--s3-endpoint", "ftp://host"]] {
            let misused = try Subprocess.run(keyframe, ["package", wav] + arguments, environment: server.environment())
            #expect(misused.status == 64, "\(arguments): \(misused.status) \(misused.standardError)")
        }

        var unset = server.environment()
        unset["AWS_ACCESS_KEY_ID"] = nil
        unset["AWS_SECRET_ACCESS_KEY"] = nil
        unset["HOME"] = directory.path
        // No keys: an output fails (1), an input cannot be read (2), whichever command it is.
        for (arguments, status) in [(["package", wav, "--hls", "s3://shows/x"], 1), (["convert", wav, "-o", "s3://shows/x.m4a"], 1),
                                    (["probe", "s3://shows/x.m4a"], 2), (["validate", "s3://shows/x/index.m3u8"], 2),
                                    (["convert", "s3://shows/x.flac", "-o", directory.appendingPathComponent("x.m4a").path], 2)] as [([String], Int32)] {
            let anonymous = try Subprocess.run(keyframe, arguments, environment: unset)
            #expect(anonymous.status == status && anonymous.standardError.contains("no S3 credentials"), "\(arguments): \(anonymous.standardError)")
        }
    }
}
