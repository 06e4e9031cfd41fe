import Foundation
import Testing
import TestSupport
import Glibc

/// Issue 13, item 1: `keyframe package IN --hls DIR`. The PyPI `m3u8` package parses the
/// playlist; a box walk in Python (not ours) checks each segment's `tfdt` against the samples
/// before it, whole AAC frames, and `EXTINF` against the samples; FFmpeg's HLS demuxer plays it
/// without a warning at lag 0; `keyframe decode index.m3u8` gives the source's samples;
/// `keyframe validate` says nothing on any package (issue 21).
@Suite(.blocking) struct PackageCommandTests {
    /// The playlist and segments as the `m3u8` package and a box walk see them.
    static let inspector = """
        import json, struct, sys, os, m3u8
        path = sys.argv[1]
        playlist = m3u8.load(path)
        base = os.path.dirname(path)
        def boxes(data, start, end):
            while start + 8 <= end:
                size, kind = struct.unpack(">I4s", data[start:start + 8])
                if size < 8: return
                yield kind, start, start + size
                start += size
        def find(data, start, end, kind):
            return [(s, e) for k, s, e in boxes(data, start, end) if k == kind]
        init = open(os.path.join(base, playlist.segment_map[0].uri), "rb").read()
        moov = find(init, 0, len(init), b"moov")[0]
        trak = find(init, moov[0] + 8, moov[1], b"trak")[0]
        mdia = find(init, trak[0] + 8, trak[1], b"mdia")[0]
        mdhd = find(init, mdia[0] + 8, mdia[1], b"mdhd")[0]
        version = init[mdhd[0] + 8]
        timescale = struct.unpack(">I", init[mdhd[0] + (28 if version == 1 else 20):][:4])[0]
        edts = find(init, trak[0] + 8, trak[1], b"edts")
        elst = find(init, edts[0][0] + 8, edts[0][1], b"elst")[0] if edts else None
        edit = None
        if elst:
            v = init[elst[0] + 8]
            n = struct.unpack(">I", init[elst[0] + 12:elst[0] + 16])[0]
            if v == 1:
                edit = struct.unpack(">Qq", init[elst[0] + 16:elst[0] + 32]) + (n,)
            else:
                edit = struct.unpack(">Ii", init[elst[0] + 16:elst[0] + 24]) + (n,)
        segments = []
        for segment in playlist.segments:
            data = open(os.path.join(base, segment.uri), "rb").read()
            kinds = [k.decode() for k, s, e in boxes(data, 0, len(data))]
            moof = find(data, 0, len(data), b"moof")[0]
            traf = find(data, moof[0] + 8, moof[1], b"traf")[0]
            tfdt = find(data, traf[0] + 8, traf[1], b"tfdt")[0]
            tv = data[tfdt[0] + 8]
            base_time = struct.unpack(">Q" if tv == 1 else ">I", data[tfdt[0] + 12:tfdt[0] + (20 if tv == 1 else 16)])[0]
            trun = find(data, traf[0] + 8, traf[1], b"trun")[0]
            flags = struct.unpack(">I", data[trun[0] + 8:trun[0] + 12])[0] & 0xFFFFFF
            count = struct.unpack(">I", data[trun[0] + 12:trun[0] + 16])[0]
            at = trun[0] + 16 + (4 if flags & 1 else 0) + (4 if flags & 4 else 0)
            durations = []
            for _ in range(count):
                entry = []
                for bit in (0x100, 0x200, 0x400, 0x800):
                    if flags & bit:
                        entry.append(struct.unpack(">I", data[at:at + 4])[0]); at += 4
                durations.append(entry[0] if flags & 0x100 else None)
            segments.append({"uri": segment.uri, "extinf": segment.duration, "kinds": kinds, "tfdt": base_time,
                             "durations": durations})
        print(json.dumps({"version": playlist.version, "target": playlist.target_duration, "type": playlist.playlist_type,
                          "endlist": playlist.is_endlist, "independent": playlist.is_independent_segments,
                          "map": playlist.segment_map[0].uri, "timescale": timescale, "edit": edit, "segments": segments}))
        """

    struct Inspection {
        var target: Int
        var type: String
        var ended: Bool
        var independent: Bool
        var timescale: Int
        var edit: [Int]
        var segments: [(extinf: Double, kinds: [String], tfdt: Int, durations: [Int])]
    }

    static func inspect(_ playlist: String) throws -> Inspection {
        let run = try ExternalTool.succeed("python3", ["-c", inspector, playlist])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        let segments = (object["segments"] as? [[String: Any]] ?? []).map { segment in
            (segment["extinf"] as? Double ?? -1, segment["kinds"] as? [String] ?? [], segment["tfdt"] as? Int ?? -1,
             (segment["durations"] as? [Any] ?? []).map { $0 as? Int ?? -1 })
        }
        return Inspection(target: object["target"] as? Int ?? 0, type: object["type"] as? String ?? "", ended: object["endlist"] as? Bool ?? false,
                          independent: object["independent"] as? Bool ?? false, timescale: object["timescale"] as? Int ?? 0,
                          edit: object["edit"] as? [Int] ?? [], segments: segments)
    }

    /// The checks every rendition passes: VOD tags, whole frames, tfdt continuity, EXTINF exact.
    static func expectWellFormed(_ inspection: Inspection, segmentSeconds: Double, priming: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(inspection.type.uppercased() == "VOD" && inspection.ended && inspection.independent, sourceLocation: sourceLocation)
        #expect(inspection.edit == [0, priming, 1], "one edit: segment_duration 0, media_time the priming", sourceLocation: sourceLocation)
        var expected = 0
        for (index, segment) in inspection.segments.enumerated() {
            #expect(segment.kinds == ["styp", "moof", "mdat"], sourceLocation: sourceLocation)
            #expect(segment.tfdt == expected, "segment \(index + 1): tfdt \(segment.tfdt), expected \(expected)", sourceLocation: sourceLocation)
            // Whole AAC frames; the stream's very last may say less (an M4A's stts keeps its padding out).
            let isLast = index == inspection.segments.count - 1
            let frames = isLast ? segment.durations.dropLast() : segment.durations[...]
            #expect(frames.allSatisfy { $0 == 1024 } && (segment.durations.last ?? 0) <= 1024 && (segment.durations.last ?? 0) > 0,
                    "whole AAC frames", sourceLocation: sourceLocation)
            let samples = segment.durations.reduce(0, +)
            #expect(abs(segment.extinf - Double(samples) / Double(inspection.timescale)) < 1e-6, "EXTINF exact", sourceLocation: sourceLocation)
            #expect(Int(segment.extinf.rounded()) <= inspection.target, "EXTINF within the target duration", sourceLocation: sourceLocation)
            if index < inspection.segments.count - 1 {
                #expect(abs(segment.extinf - segmentSeconds) < 1024.0 / Double(inspection.timescale), sourceLocation: sourceLocation)
            } else if inspection.segments.count > 1 {
                #expect(segment.extinf >= segmentSeconds / 2 - 0.05 && segment.extinf <= segmentSeconds * 1.5 + 0.05, "no short last segment",
                        sourceLocation: sourceLocation)
            }
            expected += samples
        }
    }

    /// `DIR/init.mp4` (or `initSegment`) then DIR's media segments in order: one CMAF track for
    /// `keyframe validate`.
    static func initAndSegments(_ directory: String, initSegment: String = "init.mp4") throws -> [String] {
        let segments = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".m4s") }.sorted()
        return ([initSegment] + segments).map { directory + "/" + $0 }
    }

    @Test func anM4AIsCopiedIntoSegmentsThatDecodeToItsSamples() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try EditCommandTests.makeSource(in: directory, seconds: 20)
        let hls = directory.appendingPathComponent("hls").path
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["package", source, "--hls", hls, "--json"])
        let summary = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
        #expect(summary?["copied"] as? Bool == true && summary?["segments"] as? Int == 3)
        let playlist = hls + "/index.m3u8"
        let inspection = try Self.inspect(playlist)
        Self.expectWellFormed(inspection, segmentSeconds: 6, priming: 1024)
        #expect(inspection.target == 8, "6-s segments and a last one of 8 s")
        try ValidationCheck.expectSilent([hls, playlist] + (try Self.initAndSegments(hls)), "package \(source) --hls (copied)")
        // Ours: exactly the source's samples. FFmpeg: at lag 0, no warning (it keeps the tail).
        let whole = try EditCommandTests.decode(source, in: directory)
        let ours = try EditCommandTests.decode(playlist, in: directory)
        let oursIsTheSource = ours.samples == whole.samples
        #expect(oursIsTheSource)
        let theirs = try EditCommandTests.ffmpegDecode(playlist, in: directory)
        let theirsLinesUp = theirs.frames >= whole.frames && theirs.frames < whole.frames + 1024 && theirs.samples.prefix(whole.samples.count) == whole.samples[...]
        #expect(theirsLinesUp, "FFmpeg's HLS demuxer: \(theirs.frames) frames")
    }

    @Test func anyOtherInputIsEncodedAndShortSegmentsWork() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        let frames = 44100 * 7 + 333
        try GaplessTests.makeSignal(rate: 44100, channels: 2, frames: frames, to: wav)
        let hls = directory.appendingPathComponent("two").path
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["package", wav, "--hls", hls, "--segment-duration", "2", "--json"])
        let summary = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
        #expect(summary?["copied"] as? Bool == false)
        let playlist = hls + "/index.m3u8"
        let inspection = try Self.inspect(playlist)
        Self.expectWellFormed(inspection, segmentSeconds: 2, priming: 1024)
        // 7.0 s in 2-s segments: 2, 2 and 3 (the last takes what would have been a short fourth).
        #expect(inspection.segments.count == 3 && inspection.target == 3, "\(inspection.segments.map(\.extinf))")
        try ValidationCheck.expectSilent([hls, playlist] + (try Self.initAndSegments(hls)), "package in.wav --hls --segment-duration 2 (encoded)")
        let decoded = try EditCommandTests.decode(playlist, in: directory)
        #expect(decoded.frames == frames, "the encoded rendition decodes to the input's length")
        let lag = GaplessTests.peakLag(try GaplessTests.pcm(wav, channels: 2), decoded, channel: 0)
        #expect(lag == 0, "and lines up with it")
        let check = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", playlist, "-f", "null", "-"])
        #expect(check.status == 0 && check.standardError.isEmpty, "\(check.standardError)")
    }

    /// `--hls file:///…`: the same package, put into the directory as an object store (made in
    /// a staging directory, then put media first): the same bytes as packaging into the directory,
    /// the player page beside them, and FFmpeg plays it without a warning.
    @Test func aFileURLStoreHoldsTheSamePackageAsTheDirectory() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try GaplessTests.makeSignal(rate: 44100, channels: 2, frames: 44100 * 5, to: wav)
        // The directories above the package's are made too, as mkdir -p makes them.
        let direct = directory.appendingPathComponent("shows/2026/direct").path
        let stored = directory.appendingPathComponent("stored dir").path
        _ = try ExternalTool.succeed(try ExternalTool.keyframe, ["package", wav, "--hls", direct, "--bitrates", "64k,128k", "--dash"])
        let single = directory.appendingPathComponent("shows/2027/single").path
        _ = try ExternalTool.succeed(try ExternalTool.keyframe, ["package", wav, "--hls", single])
        #expect(FileManager.default.fileExists(atPath: single + "/index.m3u8"))
        let url = "file://" + stored.replacingOccurrences(of: " ", with: "%20")
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["package", wav, "--hls", url, "--bitrates", "64k,128k", "--dash", "--json"])
        let summary = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
        #expect(summary?["playlist"] as? String == stored + "/master.m3u8")
        let names = try FileManager.default.subpathsOfDirectory(atPath: direct).sorted()
        #expect(try FileManager.default.subpathsOfDirectory(atPath: stored).sorted() == (names + ["index.html"]).sorted(), "and the player page")
        for name in names where !name.hasSuffix("k") {
            #expect(FileManager.default.contentsEqual(atPath: direct + "/" + name, andPath: stored + "/" + name), "\(name)")
        }
        let check = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", stored + "/master.m3u8", "-map", "0:a:0", "-f", "null", "-"])
        #expect(check.status == 0 && check.standardError.isEmpty, "\(check.standardError)")
        // A second package into it is refused, and what is there stays.
        let again = try ExternalTool.run(try ExternalTool.keyframe, ["package", wav, "--hls", url])
        #expect(again.status != 0 && again.standardError.contains("already holds a package"), "\(again.standardError)")
        #expect(FileManager.default.fileExists(atPath: stored + "/master.m3u8"))
    }

    @Test func aLadderHasAMasterPlaylistAndAlignedSegmentsAndDASHNamesTheSame() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try GaplessTests.makeSignal(rate: 48000, channels: 2, frames: 48000 * 14, to: wav)
        let out = directory.appendingPathComponent("ladder").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", wav, "--hls", out, "--bitrates", "64k,128k", "--dash", "--segment-duration", "4"])
        // The master playlist, as the m3u8 package reads it.
        let script = """
            import json, sys, m3u8
            master = m3u8.load(sys.argv[1])
            print(json.dumps([{"uri": p.uri, "bandwidth": p.stream_info.bandwidth, "average": p.stream_info.average_bandwidth,
                               "codecs": p.stream_info.codecs} for p in master.playlists]))
            """
        let run = try ExternalTool.succeed("python3", ["-c", script, out + "/master.m3u8"])
        let variants = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [[String: Any]] ?? []
        #expect(variants.compactMap { $0["uri"] as? String } == ["128k/index.m3u8", "64k/index.m3u8"])
        #expect(variants.allSatisfy { $0["codecs"] as? String == "mp4a.40.2" })
        let bandwidths = variants.compactMap { $0["bandwidth"] as? Int }, averages = variants.compactMap { $0["average"] as? Int }
        #expect(bandwidths.count == 2 && averages.count == 2 && zip(bandwidths, averages).allSatisfy { $0 >= $1 }, "peak ≥ average")
        #expect(averages.count == 2 && abs(averages[0] - 130_000) < 10_000 && abs(averages[1] - 66_000) < 8_000, "\(averages)")
        // Both renditions well formed, their segment boundaries identical.
        let high = try Self.inspect(out + "/128k/index.m3u8"), low = try Self.inspect(out + "/64k/index.m3u8")
        Self.expectWellFormed(high, segmentSeconds: 4, priming: 1024)
        Self.expectWellFormed(low, segmentSeconds: 4, priming: 1024)
        #expect(high.segments.map(\.tfdt) == low.segments.map(\.tfdt) && high.segments.map(\.extinf) == low.segments.map(\.extinf))
        // keyframe validate: the directory, the master, each rendition's playlist, the MPD, and
        // each rendition's HLS and DASH init segment with its media segments.
        var renditions: [String] = []
        for rendition in ["64k", "128k"] {
            let folder = out + "/" + rendition
            renditions += [folder + "/index.m3u8"] + (try Self.initAndSegments(folder)) + (try Self.initAndSegments(folder, initSegment: "init-dash.mp4"))
        }
        try ValidationCheck.expectSilent([out, out + "/master.m3u8", out + "/manifest.mpd"] + renditions,
                                         "package in.wav --hls --bitrates 64k,128k --dash --segment-duration 4")
        // FFmpeg plays the master playlist and the DASH manifest without an error, at lag 0.
        let source = try GaplessTests.pcm(wav, channels: 2)
        for manifest in [out + "/master.m3u8", out + "/manifest.mpd"] {
            let theirs = try EditCommandTests.ffmpegDecode(manifest, in: directory, map: "0:a:0")
            #expect(GaplessTests.peakLag(source, theirs, channel: 0) == 0, "\(manifest)")
            #expect(theirs.frames >= 48000 * 14 && theirs.frames < 48000 * 14 + 1024, "\(manifest): \(theirs.frames) frames")
        }
        let mpd = try String(contentsOfFile: out + "/manifest.mpd", encoding: .utf8)
        #expect(mpd.contains("initialization=\"64k/init-dash.mp4\"") && mpd.contains("media=\"128k/segment-$Number%05d$.m4s\""))
        // iTunSMPB (priming 1024, the valid length): in init.mp4 for HLS; for DASH not in its
        // header but in the first segment's moof, and in no other segment.
        let smpb = " 00000000 00000400 " // then the padding, then the length
        let length = String(48000 * 14, radix: 16, uppercase: true)
        for rendition in ["64k", "128k"] {
            func text(_ name: String) throws -> String { String(decoding: try Data(contentsOf: URL(fileURLWithPath: "\(out)/\(rendition)/\(name)")), as: UTF8.self) }
            #expect(try text("init.mp4").contains(smpb) && !(try text("init-dash.mp4")).contains("iTunSMPB"), "\(rendition)")
            let first = try text("segment-00001.m4s")
            #expect(first.contains(smpb) && first.contains(String(repeating: "0", count: 16 - length.count) + length), "\(rendition): segment 1 has the length")
            #expect(!(try text("segment-00002.m4s")).contains("iTunSMPB"), "\(rendition)")
        }
        let xml = "import sys, xml.etree.ElementTree as E\nr = E.parse(sys.argv[1]).getroot()\n"
            + "print(len([e for e in r.iter() if e.tag.endswith('Representation')]), r.get('type'))"
        let parsed = try ExternalTool.succeed("python3", ["-c", xml, out + "/manifest.mpd"]).standardOutput
        #expect(parsed == "2 static\n", "the MPD parses as XML: \(parsed)")
    }

    /// What GStreamer's `playbin` decodes from `uri`: interleaved s16 stereo at 48 kHz.
    static func gstreamerSamples(_ uri: String, in directory: URL) throws -> GaplessTests.PCM {
        let raw = directory.appendingPathComponent(UUID().uuidString + ".raw").path
        let run = try ExternalTool.run("gst-launch-1.0", ["-q", "playbin", "uri=\(uri)", "video-sink=fakesink",
                                                          "audio-sink=audioconvert ! audioresample ! audio/x-raw,format=S16LE,channels=2,rate=48000 ! filesink location=\(raw)"])
        #expect(run.status == 0, "gst-launch-1.0 playbin \(uri): \(run.standardError)")
        let data = (try? Data(contentsOf: URL(fileURLWithPath: raw))) ?? Data()
        var samples = [Int16](repeating: 0, count: data.count / 2)
        samples.withUnsafeMutableBytes { _ = data.copyBytes(to: $0) }
        return GaplessTests.PCM(samples: samples, channels: 2)
    }

    /// What VLC (`cvlc`, headless, its `afile` output) decodes from `path`. VLC refuses to run as
    /// root, so it runs as `nobody` when the tests do (`runuser`), writing into a directory open
    /// to it.
    static func vlcSamples(_ path: String, in directory: URL) throws -> GaplessTests.PCM {
        let out = directory.appendingPathComponent("vlc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
        let wav = out.appendingPathComponent("vlc.wav").path
        let vlc = ["cvlc", "-q", "--no-loop", "--play-and-exit", "--aout=afile", "--audiofile-file=\(wav)", path]
        let run = getuid() == 0
            ? try ExternalTool.run("runuser", ["-u", "nobody", "--", "env", "HOME=\(out.path)"] + vlc)
            : try ExternalTool.run("cvlc", Array(vlc.dropFirst()))
        #expect(run.status == 0, "cvlc \(path): \(run.standardError)")
        return try GaplessTests.pcm(wav, channels: 2)
    }

    @Test(.hangGuard(minutes: 15))
    func aPackagedLadderIsServedOverHTTPToEveryPlayer() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        let wav = directory.appendingPathComponent("in.wav").path
        let frames = 48000 * 8
        try GaplessTests.makeSignal(rate: 48000, channels: 2, frames: frames, to: wav)
        let out = directory.appendingPathComponent("web").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", wav, "--hls", out, "--bitrates", "64k,128k", "--dash", "--segment-duration", "3"])
        try ValidationCheck.expectSilent([out], "package in.wav --hls --bitrates 64k,128k --dash --segment-duration 3")
        let port = try HTTPProbe.freePort()
        let server = try RunningProcess(try ExternalTool.keyframe, ["serve", out, "--address", "127.0.0.1:\(port)"])
        defer { _ = server.send(SIGINT) }
        let base = "http://127.0.0.1:\(port)"
        var master = HTTPProbe.get(base + "/master.m3u8")
        for _ in 0..<50 where master.status != 200 {
            Subprocess.sleep(.milliseconds(100))
            master = HTTPProbe.get(base + "/master.m3u8")
        }
        try #require(master.status == 200 && master.body.contains("128k/index.m3u8"), "\(master.status)")
        #expect(HTTPProbe.get(base + "/64k/segment-00001.m4s").status == 200)
        // Nothing outside DIR, even a file of a kind it serves, asked for with a raw `..`.
        try Data([1, 2, 3]).write(to: directory.appendingPathComponent("outside.m4s"))
        #expect(HTTPProbe.rawStatus(port: port, path: "/../outside.m4s") == 404 && HTTPProbe.rawStatus(port: port, path: "/64k/../../outside.m4s") == 404)
        // HEAD and a byte range (RFC 9110 14) of a segment, as a player asks for them.
        let segmentBytes = try Data(contentsOf: URL(fileURLWithPath: out + "/64k/segment-00001.m4s"))
        let head = HTTPProbe.request(base + "/64k/segment-00001.m4s", method: "HEAD")
        #expect(head.status == 200 && head.body.isEmpty && head.headers["content-length"] == String(segmentBytes.count)
                && head.headers["accept-ranges"] == "bytes", "\(head.status) \(head.headers)")
        let ranged = HTTPProbe.request(base + "/64k/segment-00001.m4s", headers: ["Range": "bytes=8-23"])
        #expect(ranged.status == 206 && ranged.body == segmentBytes[8..<24] && ranged.headers["content-range"] == "bytes 8-23/\(segmentBytes.count)",
                "\(ranged.status) \(ranged.headers)")
        #expect(HTTPProbe.request(base + "/64k/segment-00001.m4s", headers: ["Range": "bytes=\(segmentBytes.count)-"]).status == 416)
        let source = try GaplessTests.pcm(wav, channels: 2)
        // FFmpeg: HLS and DASH over HTTP gapless. (Its DASH reader parses the header again for
        // each segment: the DASH header has no iTunSMPB, the first segment's moof has it.)
        let ffmpegHLS = try EditCommandTests.ffmpegDecode(base + "/master.m3u8", in: directory, map: "0:a:0")
        #expect(GaplessTests.peakLag(source, ffmpegHLS, channel: 0) == 0 && ffmpegHLS.frames >= frames && ffmpegHLS.frames < frames + 1024, "FFmpeg HLS: \(ffmpegHLS.frames)")
        let ffmpegDASH = try EditCommandTests.ffmpegDecode(base + "/manifest.mpd", in: directory, map: "0:a:0")
        #expect(GaplessTests.peakLag(source, ffmpegDASH, channel: 0) == 0 && ffmpegDASH.frames >= frames && ffmpegDASH.frames < frames + 1024,
                "FFmpeg DASH: \(ffmpegDASH.frames)")
        // Lined up after each segment boundary (3 s) and near the end too: nothing lost between.
        let checkpoints = [3 * 48000 + 2000, 6 * 48000 + 2000, frames - 6000]
        #expect(GaplessTests.continuity(source, ffmpegDASH, at: checkpoints) == nil, "FFmpeg DASH: samples lost at a segment boundary")
        // GStreamer 1.22 keeps the priming in both: its qtdemux does not apply the edit under a
        // TIME segment, and the MPD has no presentationTimeOffset to stand in for it (the edit
        // carries the priming alone, so that browsers, which apply the edit and subtract the
        // offset, skip it once: issue 21's review).
        let gstDASH = try Self.gstreamerSamples(base + "/manifest.mpd", in: directory)
        #expect(GaplessTests.peakLag(source, gstDASH, channel: 0, maxLag: 1100) == 1024 && gstDASH.frames >= frames + 1024, "GStreamer DASH: \(gstDASH.frames)")
        let gstHLS = try Self.gstreamerSamples(base + "/128k/index.m3u8", in: directory)
        #expect(GaplessTests.peakLag(source, gstHLS, channel: 0, maxLag: 1100) == 1024 && gstHLS.frames >= frames + 1024, "GStreamer HLS: \(gstHLS.frames)")
        // VLC: both gapless.
        for manifest in ["/master.m3u8", "/manifest.mpd"] {
            let vlc = try Self.vlcSamples(base + manifest, in: directory)
            #expect(GaplessTests.peakLag(source, vlc, channel: 0, maxLag: 1100) == 0 && vlc.frames >= frames && vlc.frames < frames + 1024,
                    "VLC \(manifest): \(vlc.frames)")
        }
    }

    @Test func aBrokenInputOrAnUnwritableDirectoryLeavesNothing() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try EditCommandTests.makeSource(in: directory, seconds: 3)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source)))
        bytes.removeLast(bytes.count / 2)
        let broken = directory.appendingPathComponent("broken.m4a").path
        try Data(bytes).write(to: URL(fileURLWithPath: broken))
        let hls = directory.appendingPathComponent("out").path
        let run = try ExternalTool.run(try ExternalTool.keyframe, ["package", broken, "--hls", hls])
        let left = (try? FileManager.default.contentsOfDirectory(atPath: hls)) ?? []
        #expect(run.status != 0 || left.contains("index.m3u8"), "a truncated file is an error or its whole part is packaged: \(run.standardError)")
        #expect(!left.contains { $0.hasPrefix(".") }, "no temporary file is left: \(left)")
        if run.status == 0 { try ValidationCheck.expectSilent([hls], "package broken.m4a (its first half) --hls") }
        let readOnly = directory.appendingPathComponent("readonly")
        try FileManager.default.createDirectory(at: readOnly, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: readOnly.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: readOnly.path) }
        let denied = try ExternalTool.run(try ExternalTool.keyframe, ["package", source, "--hls", readOnly.appendingPathComponent("hls").path])
        let isRoot = getuid() == 0
        #expect(isRoot || (denied.status != 0 && denied.standardError.contains("hls")), "\(denied.standardError)")
        // Never over another package: refused, the first left whole.
        let first = directory.appendingPathComponent("first").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", source, "--hls", first])
        try ValidationCheck.expectSilent([first], "package source.m4a --hls")
        let before = try String(contentsOfFile: first + "/index.m3u8", encoding: .utf8)
        let again = try ExternalTool.run(try ExternalTool.keyframe, ["package", source, "--hls", first])
        #expect(again.status != 0 && again.standardError.contains("already holds a package"), "\(again.standardError)")
        #expect(try String(contentsOfFile: first + "/index.m3u8", encoding: .utf8) == before)
        let notAudio = directory.appendingPathComponent("notes.txt").path
        try "not audio".write(toFile: notAudio, atomically: true, encoding: .utf8)
        let refused = try ExternalTool.run(try ExternalTool.keyframe, ["package", notAudio, "--hls", directory.appendingPathComponent("n").path])
        #expect(refused.status != 0 && !refused.standardError.isEmpty)
        // A ladder that fails leaves no directory behind either.
        let ladder = directory.appendingPathComponent("ladder").path
        let refusedLadder = try ExternalTool.run(try ExternalTool.keyframe, ["package", notAudio, "--hls", ladder, "--bitrates", "64k,96k", "--dash"])
        #expect(refusedLadder.status != 0 && !FileManager.default.fileExists(atPath: ladder), "\(refusedLadder.standardError)")
        // Ctrl-C in the middle of a ladder (its renditions encoded at once, a thread each, issue
        // 22): the segments written so far, the renditions and the directory all go.
        let long = directory.appendingPathComponent("long.flac").path
        try ExternalTool.succeed("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=60", "-ac", "1", long])
        let interrupted = directory.appendingPathComponent("interrupted").path
        let packaging = try RunningProcess(try ExternalTool.keyframe, ["package", long, "--hls", interrupted, "--bitrates", "64k,96k,128k", "--dash",
                                                                       "--segment-duration", "1"])
        let written = ["64k", "96k", "128k"].map { interrupted + "/\($0)/segment-00002.m4s" }
        for _ in 0..<3000 where !written.allSatisfy({ FileManager.default.fileExists(atPath: $0) }) && packaging.isRunning {
            Subprocess.sleep(.milliseconds(10))
        }
        try #require(written.allSatisfy { FileManager.default.fileExists(atPath: $0) }, "every rendition had written segments before Ctrl-C")
        #expect(packaging.send(SIGINT))
        let stopped = try packaging.wait(timeout: .seconds(60))
        #expect(stopped.result.status != 0 && !FileManager.default.fileExists(atPath: interrupted),
                "\(stopped.result.standardError) \((try? FileManager.default.subpathsOfDirectory(atPath: interrupted)) ?? [])")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("n").path)) ?? []).isEmpty)
    }
}
