import Foundation
import Testing
import TestSupport

/// Issue 23, item 1: the tail of every package and recording. The packet that holds the last
/// presented sample lasts only up to it: its `trun` sample duration is the priming plus the
/// valid length less every earlier sample's (1 to 1024), as FFmpeg writes it; the init keeps
/// its edit (`media_time` the priming) and iTunSMPB. The last segment's `EXTINF`, the last
/// part's `DURATION` and the MPD's `S@d` add up from the same durations (`mehd` stays 0, as
/// in every CMAF header). Checked with a
/// box walk in Python (not ours) on `package` (stream copy, encode, ladder, DASH) and `record
/// --hls` (event playlist and low-latency parts); `keyframe validate` accepts each and refuses a
/// tail that misses the valid length; FFmpeg decodes what it did before (it ignores the short
/// duration: the padding is still heard).
@Suite(.blocking) struct HLSTailInteropTests {
    /// The playlist, its init segment and every segment's and part's samples, as a box walk sees
    /// them; with a second argument, the MPD's timeline too.
    static let inspector = """
        import json, os, re, struct, sys
        import xml.etree.ElementTree as ET
        path = sys.argv[1]
        base = os.path.dirname(path)
        def boxes(data, start, end):
            while start + 8 <= end:
                size, kind = struct.unpack(">I4s", data[start:start + 8])
                if size < 8: return
                yield kind.decode("latin-1"), start, start + size
                start += size
        def first(data, box, kind):
            for k, s, e in boxes(data, box[1] + 8, box[2]):
                if k == kind: return (k, s, e)
            return None
        def fragments(data):
            out = []
            for kind, s, e in boxes(data, 0, len(data)):
                if kind != "moof": continue
                traf = first(data, (kind, s, e), "traf")
                tfhd = first(data, traf, "tfhd")
                hflags = struct.unpack(">I", data[tfhd[1] + 8:tfhd[1] + 12])[0] & 0xFFFFFF
                at = tfhd[1] + 16 + (8 if hflags & 1 else 0) + (4 if hflags & 2 else 0)
                default = struct.unpack(">I", data[at:at + 4])[0] if hflags & 8 else None
                tfdt = first(data, traf, "tfdt")
                v = data[tfdt[1] + 8]
                time = struct.unpack(">Q" if v == 1 else ">I", data[tfdt[1] + 12:tfdt[1] + (20 if v == 1 else 16)])[0]
                trun = first(data, traf, "trun")
                flags = struct.unpack(">I", data[trun[1] + 8:trun[1] + 12])[0] & 0xFFFFFF
                count = struct.unpack(">I", data[trun[1] + 12:trun[1] + 16])[0]
                at = trun[1] + 16 + (4 if flags & 1 else 0) + (4 if flags & 4 else 0)
                durations = []
                for _ in range(count):
                    entry = {}
                    for bit in (0x100, 0x200, 0x400, 0x800):
                        if flags & bit:
                            entry[bit] = struct.unpack(">I", data[at:at + 4])[0]; at += 4
                    durations.append(entry.get(0x100, default))
                out.append({"tfdt": time, "durations": durations})
            return out
        lines = open(path).read().splitlines()
        init, segments, parts, extinf = None, [], [], None
        for line in lines:
            if line.startswith("#EXT-X-MAP:"): init = re.search(r'URI="([^"]+)"', line).group(1)
            elif line.startswith("#EXTINF:"): extinf = float(line[8:].split(",")[0])
            elif line.startswith("#EXT-X-PART:"):
                uri = re.search(r'URI="([^"]+)"', line).group(1)
                duration = float(re.search(r"DURATION=([0-9.]+)", line).group(1))
                parts.append({"duration": duration, "fragments": fragments(open(os.path.join(base, uri), "rb").read())})
            elif line and not line.startswith("#"):
                data = open(os.path.join(base, line), "rb").read()
                segments.append({"uri": line, "extinf": extinf, "fragments": fragments(data), "parts": parts})
                parts = []
        data = open(os.path.join(base, init), "rb").read()
        moov = [b for b in boxes(data, 0, len(data)) if b[0] == "moov"][0]
        trak = first(data, moov, "trak")
        mdhd = first(data, first(data, trak, "mdia"), "mdhd")
        timescale = struct.unpack(">I", data[mdhd[1] + (28 if data[mdhd[1] + 8] == 1 else 20):][:4])[0]
        edts = first(data, trak, "edts")
        elst = first(data, edts, "elst") if edts else None
        edit = None
        if elst:
            v = data[elst[1] + 8]
            edit = list(struct.unpack(">Qq" if v == 1 else ">Ii", data[elst[1] + 16:elst[1] + (32 if v == 1 else 24)]))
        mvex = first(data, moov, "mvex")
        mehd = first(data, mvex, "mehd") if mvex else None
        fragment_duration = None
        if mehd:
            v = data[mehd[1] + 8]
            fragment_duration = struct.unpack(">Q" if v == 1 else ">I", data[mehd[1] + 12:mehd[1] + (20 if v == 1 else 16)])[0]
        smpb = None
        at = data.find(b"iTunSMPB")
        if at >= 0:
            value = data.find(b"data", at)
            size = struct.unpack(">I", data[value - 4:value])[0]
            smpb = [int(f, 16) for f in data[value + 12:value - 4 + size].decode().split()[1:4]]
        mpd = None
        if len(sys.argv) > 2:
            mpd = []
            for element in ET.parse(sys.argv[2]).getroot().iter():
                if element.tag.endswith("Representation"):
                    total = 0
                    for s in element.iter():
                        if s.tag.endswith("}S"): total += int(s.get("d")) * (int(s.get("r", "0")) + 1)
                    mpd.append(total)
        print(json.dumps({"timescale": timescale, "edit": edit, "mehd": fragment_duration, "smpb": smpb, "segments": segments, "mpd": mpd}))
        """

    struct Tail {
        var timescale: Int
        var edit: [Int]
        var mehd: Int?
        var smpb: [Int]?
        /// Per segment: EXTINF, the samples' durations, each fragment's tfdt, the parts (DURATION, durations).
        var segments: [(extinf: Double, durations: [Int], tfdts: [Int], parts: [(duration: Double, durations: [Int])])]
        var mpd: [Int]?
    }

    static func inspect(_ playlist: String, mpd: String? = nil) throws -> Tail {
        let run = try ExternalTool.succeed("python3", ["-c", inspector, playlist] + (mpd.map { [$0] } ?? []))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        func durations(_ fragments: Any?) -> (durations: [Int], tfdts: [Int]) {
            let list = fragments as? [[String: Any]] ?? []
            return (list.flatMap { ($0["durations"] as? [Any] ?? []).map { $0 as? Int ?? -1 } }, list.map { $0["tfdt"] as? Int ?? -1 })
        }
        let segments = (object["segments"] as? [[String: Any]] ?? []).map { segment in
            let (samples, tfdts) = durations(segment["fragments"])
            let parts = (segment["parts"] as? [[String: Any]] ?? []).map { part in (part["duration"] as? Double ?? -1, durations(part["fragments"]).durations) }
            return (segment["extinf"] as? Double ?? -1, samples, tfdts, parts)
        }
        return Tail(timescale: object["timescale"] as? Int ?? 0, edit: object["edit"] as? [Int] ?? [], mehd: object["mehd"] as? Int,
                    smpb: object["smpb"] as? [Int], segments: segments, mpd: object["mpd"] as? [Int])
    }

    /// The tail scheme, on one rendition of `frames` presented samples after a priming of 1024.
    static func expectTail(_ tail: Tail, frames: Int, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let priming = 1024
        let end = priming + frames
        let samples = tail.segments.flatMap(\.durations)
        let expectedLast = end - (samples.count - 1) * 1024
        #expect(tail.edit == [0, priming], "\(what): one edit, segment_duration 0, media_time the priming: \(tail.edit)", sourceLocation: sourceLocation)
        #expect(samples.dropLast().allSatisfy { $0 == 1024 }, "\(what): whole frames before the last sample", sourceLocation: sourceLocation)
        #expect(samples.last == expectedLast && (1...1024).contains(expectedLast),
                "\(what): the last sample lasts \(samples.last ?? -1), expected \(expectedLast) (priming + valid length − the samples before)",
                sourceLocation: sourceLocation)
        #expect(samples.reduce(0, +) == end, "\(what): the samples add up to \(samples.reduce(0, +)), not \(end)", sourceLocation: sourceLocation)
        var decodeTime = 0
        for (index, segment) in tail.segments.enumerated() {
            let sum = segment.durations.reduce(0, +)
            #expect(segment.tfdts.first == decodeTime, "\(what): segment \(index + 1)'s tfdt \(segment.tfdts)", sourceLocation: sourceLocation)
            #expect(abs(segment.extinf - Double(sum) / Double(tail.timescale)) < 1e-6,
                    "\(what): segment \(index + 1)'s EXTINF \(segment.extinf) against its samples, \(sum)", sourceLocation: sourceLocation)
            if !segment.parts.isEmpty {
                #expect(segment.parts.flatMap(\.durations) == segment.durations, "\(what): segment \(index + 1) is its parts", sourceLocation: sourceLocation)
                for part in segment.parts {
                    #expect(abs(part.duration - Double(part.durations.reduce(0, +)) / Double(tail.timescale)) < 1e-6,
                            "\(what): a part's DURATION \(part.duration) against its samples \(part.durations.reduce(0, +))", sourceLocation: sourceLocation)
                }
            }
            decodeTime += sum
        }
        // A CMAF header gives no duration (ISO/IEC 23000-19 7.3: mehd 0, the segments say it).
        #expect(tail.mehd == 0, "\(what): mehd \(tail.mehd ?? -1)", sourceLocation: sourceLocation)
        // iTunSMPB: the priming and the valid length (its padding is what the durations leave: none).
        #expect(tail.smpb.map { [$0[0], $0[2]] } == [priming, frames], "\(what): iTunSMPB \(tail.smpb ?? [])", sourceLocation: sourceLocation)
        if let mpd = tail.mpd {
            #expect(mpd.allSatisfy { $0 == frames }, "\(what): the MPD's timeline lasts \(mpd), expected \(frames) each", sourceLocation: sourceLocation)
        }
    }

    /// Frames FFmpeg decodes from `playlist` (mono or stereo, s16).
    static func ffmpegFrames(_ playlist: String, channels: Int) throws -> Int {
        let run = try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-i", playlist, "-f", "s16le", "-"])
        return run.outputData.count / (2 * channels)
    }

    /// Whole AAC frames hold the priming and the valid length: what is decoded past it.
    static func padding(_ frames: Int) -> Int { (1024 + frames + 1023) / 1024 * 1024 - 1024 - frames }

    @Test(.hangGuard(minutes: 15))
    func packageCopyEncodeAndLadderEndAtTheValidLength() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // 2.49 s and 2.3 s at 48 kHz: last samples of 736 and 192 frames.
        for frames in [119_520, 110_400] {
            let wav = directory.appendingPathComponent("in\(frames).wav").path
            try GaplessTests.makeSignal(rate: 48000, channels: 2, frames: frames, to: wav)
            // Encoded (one rendition).
            let encoded = directory.appendingPathComponent("enc\(frames)").path
            try ExternalTool.succeed(try ExternalTool.keyframe, ["package", wav, "--hls", encoded, "--segment-duration", "1"])
            Self.expectTail(try Self.inspect(encoded + "/index.m3u8"), frames: frames, "package in.wav (\(frames))")
            try ValidationCheck.expectSilent([encoded], "package in.wav --hls (\(frames))")
            // FFmpeg ignores the short duration: it decodes the padding too, as it did before.
            #expect(try Self.ffmpegFrames(encoded + "/index.m3u8", channels: 2) == frames + Self.padding(frames), "FFmpeg, \(frames)")
            // Stream copy of our M4A (its edit gives the valid length), with DASH.
            let m4a = directory.appendingPathComponent("in\(frames).m4a").path
            try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", m4a])
            let copied = directory.appendingPathComponent("copy\(frames)").path
            try ExternalTool.succeed(try ExternalTool.keyframe, ["package", m4a, "--hls", copied, "--segment-duration", "1", "--dash"])
            Self.expectTail(try Self.inspect(copied + "/index.m3u8", mpd: copied + "/manifest.mpd"), frames: frames, "package in.m4a --dash (\(frames))")
            try ValidationCheck.expectSilent([copied, copied + "/manifest.mpd"], "package in.m4a --hls --dash (\(frames))")
            // A ladder with DASH: each rendition ends there, and the MPD says so.
            let ladder = directory.appendingPathComponent("ladder\(frames)").path
            try ExternalTool.succeed(try ExternalTool.keyframe, ["package", wav, "--hls", ladder, "--bitrates", "64k,128k", "--dash",
                                                                  "--segment-duration", "1"])
            for rendition in ["64k", "128k"] {
                Self.expectTail(try Self.inspect(ladder + "/\(rendition)/index.m3u8", mpd: ladder + "/manifest.mpd"), frames: frames,
                                "package --bitrates \(rendition) (\(frames))")
            }
            try ValidationCheck.expectSilent([ladder], "package --bitrates 64k,128k --dash (\(frames))")
        }
    }

    @Test(.hangGuard(minutes: 15))
    func aLiveRecordingEndsAtTheValidLength() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = CaptureCheck.tone(frames: 5 * 48000, rate: 48000, frequencies: [1000, 1500])
        let raw = directory.appendingPathComponent("in.raw").path
        try CaptureCheck.bytes(input).write(to: URL(fileURLWithPath: raw))
        let configuration = try CaptureCheck.alsaConfiguration(in: directory, input: raw)
        // An event playlist of 1-s segments, and low-latency parts.
        for (name, options) in [("event", ["--segment-duration", "1", "--duration", "2.3"]),
                                ("parts", ["--segment-duration", "2", "--part-duration", "0.5", "--duration", "3.1"])] {
            let hls = directory.appendingPathComponent(name).path
            let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["record", "--hls", hls] + options + [
                "--device", "kf_in", "--alsa-config", configuration, "--sample-rate", "48000", "--json",
            ])
            let summary = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any] ?? [:]
            let frames = try #require(summary["frames"] as? Int, "\(summary)")
            let tail = try Self.inspect(hls + "/index.m3u8")
            Self.expectTail(tail, frames: frames, "record --hls (\(name))")
            #expect(name != "parts" || tail.segments.allSatisfy { !$0.parts.isEmpty }, "parts listed: \(tail.segments.map(\.parts.count))")
            try ValidationCheck.expectSilent([hls, hls + "/index.m3u8"], "record --hls \(options.joined(separator: " "))")
            #expect(try Self.ffmpegFrames(hls + "/index.m3u8", channels: 2) == frames + Self.padding(frames), "FFmpeg, record --hls (\(name))")
        }
    }

    /// `keyframe validate` takes the short last sample (above) and names one that misses the
    /// valid length.
    @Test func validateRefusesALastSampleThatMissesTheValidLength() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let frames = 119_520
        let wav = directory.appendingPathComponent("in.wav").path
        try GaplessTests.makeSignal(rate: 48000, channels: 2, frames: frames, to: wav)
        let hls = directory.appendingPathComponent("hls").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", wav, "--hls", hls, "--segment-duration", "1"])
        let last = try #require(try FileManager.default.contentsOfDirectory(atPath: hls).filter { $0.hasSuffix(".m4s") }.sorted().last)
        let path = hls + "/" + last
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // The last trun entry: durations, sizes and flags (0x700, our writer's), 12 bytes each.
        let trun = try MP4BrowserParityTests.find(Array("trun".utf8), in: bytes)
        let flags = Int(bytes[trun + 5]) << 16 | Int(bytes[trun + 6]) << 8 | Int(bytes[trun + 7])
        let count = bytes[(trun + 8)..<(trun + 12)].reduce(0) { $0 << 8 | Int($1) }
        try #require(flags & 0x100 != 0, "trun flags \(String(flags, radix: 16))")
        let stride = [0x100, 0x200, 0x400, 0x800].filter { flags & $0 != 0 }.count * 4
        let entry = trun + 12 + (flags & 1 != 0 ? 4 : 0) + (flags & 4 != 0 ? 4 : 0) + stride * (count - 1)
        let duration = bytes[entry..<(entry + 4)].reduce(0) { $0 << 8 | Int($1) }
        #expect(duration == frames + 1024 - 117 * 1024, "the last sample lasts \(duration)")
        bytes.replaceSubrange(entry..<(entry + 4), with: [0, 0, UInt8((duration - 1) >> 8), UInt8((duration - 1) & 0xFF)])
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let run = try ExternalTool.run(try ExternalTool.keyframe, ["validate", hls])
        #expect(run.status != 0 && run.standardOutput.contains("short last sample against the valid length"), "\(run.standardOutput)")
    }
}
