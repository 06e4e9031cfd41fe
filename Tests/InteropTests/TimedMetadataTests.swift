import Foundation
import KeyFrameKit
import SystemPackage
import Testing
import Glibc
import TestSupport

/// Issue 39: metadata as stream events. A 60-s live recording from PulseAudio with a title, two
/// title changes and a 15-s ad break given as JSON lines (`record --metadata-from`, part of the
/// file written while it records); and a package with chapters and an ad break from a sidecar
/// (`package --ad-breaks`). Each `emsg` is found by our reader and by pymp4's box walker at its
/// time, in the segment whose presentation range holds it, and mutagen reads its ID3 tag; each
/// SCTE-35 section in a DATERANGE is parsed by threefive, CRC checked.
@Suite(.blocking, .serialized) struct TimedMetadataTests {
    /// What pymp4 (an ISO BMFF parser of its own) finds in each segment, in order: the top-level
    /// boxes, and each `emsg`'s fields (version 1: timescale, presentation_time, event_duration,
    /// id, scheme, value) with its message written beside for mutagen, whose ID3 frames are given.
    static let walker = """
        import sys, json, struct, io
        from pymp4.parser import Box
        import mutagen.id3
        out = []
        for path in sys.argv[1:]:
            data = open(path, 'rb').read()
            stream = io.BytesIO(data)
            boxes, messages = [], []
            while stream.tell() < len(data):
                box = Box.parse_stream(stream)
                kind = box.type.decode() if isinstance(box.type, bytes) else str(box.type)
                boxes.append(kind)
                if kind == 'emsg':
                    raw = bytes(box.data)
                    version = raw[0]
                    timescale, time, duration, ident = struct.unpack('>IQII', raw[4:24])
                    rest = raw[24:]
                    scheme, rest = rest.split(b'\\0', 1)
                    value, message = rest.split(b'\\0', 1)
                    entry = dict(version=version, timescale=timescale, time=time, duration=duration, id=ident,
                                 scheme=scheme.decode(), value=value.decode(), size=len(message))
                    if scheme.decode() == 'https://aomedia.org/emsg/ID3':
                        tag = mutagen.id3.ID3(io.BytesIO(message))
                        entry['frames'] = {key: str(tag[key]) for key in tag.keys()}
                        entry['id3version'] = list(tag.version)
                    messages.append(entry)
            out.append(dict(path=path, boxes=boxes, messages=messages))
        print(json.dumps(out))
        """

    /// threefive's reading of each `0x…` SCTE-35 section, with the CRC it computes over the
    /// section against the one stored.
    static let spliceReader = """
        import sys, json
        import threefive
        from threefive.crc import crc32
        out = []
        for text in sys.argv[1:]:
            cue = threefive.Cue(text)
            cue.decode()
            raw = bytes.fromhex(text[2:])
            stored = int.from_bytes(raw[-4:], 'big')
            out.append(dict(command=cue.command.get(), section=cue.info_section.get(), crc_ok=crc32(raw[:-4]) == stored))
        print(json.dumps(out))
        """

    /// Runs `script` with the venv's python on `arguments`; its JSON.
    static func python(_ script: String, _ arguments: [String]) throws -> Any {
        let run = try ExternalTool.succeed("python3", ["-c", script] + arguments)
        return try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8))
    }

    /// The segments of a media playlist in order, with each one's presentation range in seconds
    /// (EXTINF added up, less the priming `priming` seconds; the first from 0).
    static func segments(_ playlist: String, priming: Double) throws -> [(uri: String, start: Double, end: Double)] {
        let text = try String(contentsOfFile: playlist, encoding: .utf8)
        var result: [(String, Double, Double)] = []
        var elapsed = 0.0
        var pending: Double?
        for line in text.split(separator: "\n") {
            if line.hasPrefix("#EXTINF:") { pending = Double(line.dropFirst(8).prefix { $0 != "," }) }
            else if !line.hasPrefix("#"), let duration = pending {
                result.append((String(line), max(0, elapsed - priming), elapsed + duration - priming))
                elapsed += duration
                pending = nil
            }
        }
        return result
    }

    /// The `SCTE35-OUT`/`-IN` values of a playlist's date ranges, by ID.
    static func spliceValues(_ text: String, attribute: String) -> [String] {
        text.split(separator: "\n").filter { $0.hasPrefix("#EXT-X-DATERANGE:") }.compactMap { line in
            line.split(separator: ",").first { $0.hasPrefix(attribute + "=") }.map { String($0.dropFirst(attribute.count + 1)) }
        }
    }

    /// Checks that the ID3 messages `walked` (pymp4's) of a rendition are those `expected`
    /// (title, seconds), each in the segment whose range holds it, and that our reader finds the
    /// same boxes.
    static func expectMessages(_ walked: [[String: Any]], in ranges: [(uri: String, start: Double, end: Double)], directory: String,
                               expected: [(title: String, artist: String, seconds: Double)], scte35: [Double], _ what: String) throws {
        var id3: [(title: String, artist: String, seconds: Double, segment: Int)] = []
        var splices: [(seconds: Double, segment: Int)] = []
        for (index, segment) in walked.enumerated() {
            let boxes = segment["boxes"] as? [String] ?? []
            let messages = segment["messages"] as? [[String: Any]] ?? []
            // Every emsg precedes the moof (ISO/IEC 23000-19 7.4.5).
            if let moof = boxes.firstIndex(of: "moof") {
                #expect(!boxes[moof...].contains("emsg"), "\(what): \(boxes)")
            }
            // Our reader finds the same messages in the same order.
            let ours = try EventMessage.messages(inSegment: [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + ranges[index].uri))))
            #expect(ours.map(\.scheme) == messages.map { $0["scheme"] as? String ?? "" }, "\(what): ours and pymp4's in \(ranges[index].uri)")
            #expect(ours.map(\.presentationTime) == messages.map { UInt64($0["time"] as? Int ?? -1) }, "\(what): times in \(ranges[index].uri)")
            for message in messages {
                let seconds = Double(message["time"] as? Int ?? 0) / Double(message["timescale"] as? Int ?? 1)
                #expect(message["version"] as? Int == 1, "\(what): emsg version 1 only")
                if message["scheme"] as? String == EventMessage.id3Scheme {
                    #expect(message["duration"] as? Int == 0xFFFF_FFFF && message["value"] as? String == "", "\(what): \(message)")
                    let frames = message["frames"] as? [String: String] ?? [:]
                    #expect((message["id3version"] as? [Int])?.prefix(2) == [2, 4], "\(what): ID3v2.4")
                    id3.append((frames["TIT2"] ?? "", frames["TPE1"] ?? "", seconds, index))
                } else {
                    #expect(message["scheme"] as? String == EventMessage.scte35Scheme, "\(what): \(message)")
                    splices.append((seconds, index))
                }
            }
        }
        #expect(id3.map(\.title) == expected.map(\.title) && id3.map(\.artist) == expected.map(\.artist), "\(what): \(id3)")
        for (found, wanted) in zip(id3, expected) {
            #expect(abs(found.seconds - wanted.seconds) < 0.001, "\(what): \(found.title) at \(found.seconds) s, wanted \(wanted.seconds)")
            let range = ranges[found.segment]
            #expect(range.start - 0.001 <= found.seconds && found.seconds < range.end, "\(what): \(found.title) at \(found.seconds) s in \(range)")
        }
        #expect(splices.map(\.seconds).map { ($0 * 1000).rounded() } == scte35.map { ($0 * 1000).rounded() }, "\(what): SCTE-35 at \(splices)")
        for splice in splices {
            let range = ranges[splice.segment]
            #expect(range.start - 0.001 <= splice.seconds && splice.seconds < range.end, "\(what): SCTE-35 at \(splice.seconds) s in \(range)")
        }
    }

    /// The ad break's DATERANGE pair, read by threefive: a splice_insert out at `start` with a
    /// `duration` break, and its return at `start + duration`, one event ID, CRCs right.
    static func expectAdBreak(_ playlist: String, start: Double, duration: Double, _ what: String) throws {
        let text = try String(contentsOfFile: playlist, encoding: .utf8)
        let outs = spliceValues(text, attribute: "SCTE35-OUT")
        let ins = spliceValues(text, attribute: "SCTE35-IN")
        try #require(outs.count == 1 && ins.count == 1, "\(what): \(outs) \(ins)")
        let read = try python(spliceReader, outs + ins) as? [[String: Any]] ?? []
        try #require(read.count == 2, "\(what): \(read)")
        for (index, cue) in read.enumerated() {
            let command = cue["command"] as? [String: Any] ?? [:]
            #expect(cue["crc_ok"] as? Bool == true, "\(what): threefive's CRC of \(index == 0 ? outs[0] : ins[0])")
            #expect(command["command_type"] as? Int == 5 && command["out_of_network_indicator"] as? Bool == (index == 0), "\(what): \(command)")
            let pts = command["pts_time"] as? Double ?? -1
            #expect(abs(pts - (index == 0 ? start : start + duration)) < 0.001, "\(what): pts_time \(pts)")
            if index == 0 { #expect(abs((command["break_duration"] as? Double ?? 0) - duration) < 0.001, "\(what): \(command)") }
        }
        let ids = read.map { ($0["command"] as? [String: Any])?["splice_event_id"] as? Int }
        #expect(ids[0] != nil && ids[0] == ids[1], "\(what): one splice_event_id: \(ids)")
        // RFC 8216 4.3.2.7: a playlist with a date range has program date-times.
        #expect(text.contains("#EXT-X-PROGRAM-DATE-TIME:") && text.contains("#EXT-X-CUE-OUT:DURATION=") && text.contains("#EXT-X-CUE-IN"),
                "\(what): \(text)")
    }

    /// The `done when` of issue 39's live part, for fMP4 HLS: `record --hls --metadata-from` for
    /// 60 s of PulseAudio (real time), the file's first lines there at the start and the rest
    /// appended while it records.
    @Test(.hangGuard(minutes: 6))
    func aLiveRecordingCarriesTitlesAndAnAdBreak() throws {
        let pulse = try PulseTone()
        defer { pulse.close() }
        let hls = pulse.directory.appendingPathComponent("live").path
        let metadata = pulse.directory.appendingPathComponent("now-playing.jsonl").path
        try Data("""
            {"at": 0, "title": "Morning Show", "artist": "KeyFrame Radio"}
            {"start": 30, "duration": 15, "id": "break-1", "uri": "https://ads.example/break-1.m3u8"}

            """.utf8).write(to: URL(fileURLWithPath: metadata))
        let recording = try pulse.startRecording(["--hls", hls, "--segment-duration", "2", "--duration", "60", "--device", "pulse",
                                                  "--sample-rate", "48000", "--metadata-from", metadata, "--json"])
        try pulse.server.waitForStreams("source-outputs", while: recording)
        Subprocess.sleep(.seconds(3))
        // Lines added while it records are followed.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: metadata))
        handle.seekToEndOfFile()
        handle.write(Data("""
            {"at": 20.5, "title": "Second Song", "artist": "The Band", "album": "The LP", "url": "https://example.com/second"}
            not json: a warning, and skipped
            {"at": 47.25, "title": "Third Song", "artist": "Another Band"}

            """.utf8))
        try handle.close()
        let finished = try recording.wait(timeout: .seconds(120))
        #expect(finished.result.status == 0, "\(finished.result.standardError)")
        #expect(finished.result.standardError.contains("line 4") && finished.result.standardError.contains("skipped"),
                "a bad line is named: \(finished.result.standardError)")
        let playlist = hls + "/index.m3u8"
        let header = [UInt8](try Data(contentsOf: URL(fileURLWithPath: hls + "/init.mp4")))
        #expect(String(decoding: header.prefix(64), as: UTF8.self).contains("aid3"), "the aid3 brand")
        // The priming: the init segment's edit (AAC-LC: 1024).
        let ranges = try Self.segments(playlist, priming: 1024.0 / 48000)
        let walked = try Self.python(Self.walker, ranges.map { hls + "/" + $0.uri }) as? [[String: Any]] ?? []
        try #require(walked.count == ranges.count)
        try Self.expectMessages(walked, in: ranges, directory: hls,
                                expected: [("Morning Show", "KeyFrame Radio", 0), ("Second Song", "The Band", 20.5), ("Third Song", "Another Band", 47.25)],
                                scte35: [30, 45], "record --hls --metadata-from")
        try Self.expectAdBreak(playlist, start: 30, duration: 15, "record --hls --metadata-from")
        let text = try String(contentsOfFile: playlist, encoding: .utf8)
        #expect(text.contains("CLASS=\"com.apple.hls.interstitial\"") && text.contains("X-ASSET-URI=\"https://ads.example/break-1.m3u8\""), "\(text)")
        // FFmpeg plays it through, the messages and tags beside the media.
        let check = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", playlist, "-f", "null", "-"])
        #expect(check.status == 0 && check.standardError.isEmpty, "\(check.standardError)")
        try ValidationCheck.expectSilent([hls, playlist], "record --hls --metadata-from")
    }

    /// What mutagen reads of each ID3 tag in `bytes` (tags back to back, as FFmpeg copies a
    /// timed ID3 stream's packets), or of the tag a segment starts with: its `TIT2`, and a
    /// `PRIV` timestamp's eight bytes as a number.
    static let id3Reader = """
        import sys, json, io
        import mutagen.id3
        out = []
        for path in sys.argv[1:]:
            data = open(path, 'rb').read()
            tags = []
            position = 0
            while position + 10 <= len(data) and data[position:position + 3] == b'ID3':
                size = 0
                for byte in data[position + 6:position + 10]:
                    size = size << 7 | byte
                tag = mutagen.id3.ID3(io.BytesIO(data[position:position + 10 + size]))
                entry = {'title': str(tag['TIT2']) if 'TIT2' in tag else None}
                for frame in tag.getall('PRIV'):
                    if frame.owner == 'com.apple.streaming.transportStreamTimestamp':
                        entry['timestamp'] = int.from_bytes(frame.data, 'big')
                tags.append(entry)
                position += 10 + size
                if path.endswith('.aac'):
                    break
            out.append(tags)
        print(json.dumps(out))
        """

    /// The PES payloads of one PID of a transport stream (argv: the file, the PID, the output),
    /// back to back: a walker of ISO/IEC 13818-1 2.4.3 of its own.
    static let pesPayloads = """
        import sys
        data = open(sys.argv[1], 'rb').read()
        pid = int(sys.argv[2])
        pes, out = bytearray(), bytearray()
        def finish():
            if len(pes) >= 9 and pes[:3] == b'\\x00\\x00\\x01':
                out.extend(pes[9 + pes[8]:])
        for offset in range(0, len(data) - 187, 188):
            packet = data[offset:offset + 188]
            if packet[0] != 0x47 or ((packet[1] & 0x1F) << 8 | packet[2]) != pid:
                continue
            start = 4 + (1 + packet[4] if packet[3] & 0x20 else 0)
            if packet[1] & 0x40:
                finish()
                pes = bytearray()
            if packet[3] & 0x10:
                pes.extend(packet[start:])
        finish()
        open(sys.argv[3], 'wb').write(out)
        """

    /// The same 60-s recording as packed audio (`--segments packed-audio`), published over SRT
    /// at once: FFmpeg and GStreamer play the variant without a warning, each segment's PRIV
    /// timestamp (mutagen) continues the one before by its EXTINF, the title tags sit before
    /// the frame of their time; the transport stream carries a timed ID3 stream ffprobe lists
    /// as `timed_id3`, whose tags mutagen reads, each at its PTS.
    @Test(.hangGuard(minutes: 6))
    func packedAudioAndSRTCarryTheTitles() throws {
        let pulse = try PulseTone()
        defer { pulse.close() }
        let hls = pulse.directory.appendingPathComponent("packed").path
        let metadata = pulse.directory.appendingPathComponent("now-playing.jsonl").path
        try Data("""
            {"at": 0, "title": "Morning Show", "artist": "KeyFrame Radio"}
            {"start": 30, "duration": 15, "id": "break-1"}
            {"at": 20.5, "title": "Second Song", "artist": "The Band"}
            {"at": 47.25, "title": "Third Song", "artist": "Another Band"}

            """.utf8).write(to: URL(fileURLWithPath: metadata))
        let port = try LocalPort.freeUDP()
        let listener = try SRTListener.start(port: port)
        defer { listener.stop(grace: .zero) }
        let recording = try pulse.startRecording(["--hls", hls, "--segments", "packed-audio", "--segment-duration", "2", "--duration", "60",
                                                  "--device", "pulse", "--sample-rate", "48000", "--metadata-from", metadata,
                                                  "--publish", "srt://127.0.0.1:\(port)"])
        let finished = try recording.wait(timeout: .seconds(150))
        #expect(finished.result.status == 0, "\(finished.result.standardError)")
        let playlist = hls + "/index.m3u8"
        let text = try String(contentsOfFile: playlist, encoding: .utf8)
        #expect(!text.contains("#EXT-X-MAP") && text.contains("segment-00001.aac"), "\(text)")
        try Self.expectAdBreak(playlist, start: 30, duration: 15, "record --segments packed-audio")
        // FFmpeg and GStreamer play it through, every frame.
        let ranges = try Self.segments(playlist, priming: 0)
        let frames = try ranges.reduce(0) { $0 + (try PackedAudioSegment(path: FilePath(hls + "/" + $1.uri))).frameCount }
        let raw = pulse.directory.appendingPathComponent("ffmpeg.s16").path
        let check = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", playlist, "-f", "s16le", raw])
        #expect(check.status == 0 && check.standardError.isEmpty, "\(check.standardError)")
        // Packed audio signals no priming and no end: FFmpeg plays every frame, the encoder's
        // 1024 samples of priming first and the last frame whole; GStreamer drops the first frame.
        let decoded = ((try? Data(contentsOf: URL(fileURLWithPath: raw)))?.count ?? 0) / 4
        #expect(decoded == frames * 1024, "FFmpeg decoded \(decoded) samples of \(frames) frames")
        let wav = pulse.directory.appendingPathComponent("gstreamer.wav").path
        let gstreamer = try ExternalTool.run("gst-launch-1.0", ["-q", "uridecodebin", "uri=file://\(playlist)", "!", "audioconvert", "!",
                                                                "audio/x-raw,format=S16LE", "!", "wavenc", "!", "filesink", "location=\(wav)"])
        #expect(gstreamer.status == 0 && !gstreamer.standardError.contains("WARN"), "GStreamer: \(gstreamer.standardError)")
        let played = Int(try ExternalTool.succeed("python3", ["-c", "import sys, wave; print(wave.open(sys.argv[1]).getnframes())", wav])
            .standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(played >= frames * 1024 - 1024 && played <= frames * 1024, "GStreamer played \(played) samples of \(frames) frames")
        // Each segment's PRIV timestamp (mutagen) continues the one before by its frames.
        let segmentTags = try Self.python(Self.id3Reader, ranges.map { hls + "/" + $0.uri }) as? [[[String: Any]]] ?? []
        var expected = 0.0
        for (index, tags) in segmentTags.enumerated() {
            let timestamp = tags.first?["timestamp"] as? Int
            #expect(timestamp.map { abs(Double($0) / 90_000 - expected) < 0.0001 } == true,
                    "segment \(index + 1): PRIV timestamp \(String(describing: timestamp)), expected \(expected * 90_000)")
            let segment = try PackedAudioSegment(path: FilePath(hls + "/" + ranges[index].uri))
            expected += segment.seconds
        }
        // The title tags between the frames: each before the frame whose time holds it (the
        // priming, 1024 samples, first).
        var titles: [(String, Double)] = []
        var elapsed = 0.0
        for range in ranges {
            let segment = try PackedAudioSegment(path: FilePath(hls + "/" + range.uri))
            for tag in segment.timedMetadata {
                let title = NowPlaying(id3: tag.tag)?.title ?? ""
                titles.append((title, elapsed + Double(tag.afterFrames * 1024 - 1024) / 48000))
            }
            elapsed += segment.seconds
        }
        #expect(titles.map(\.0) == ["Morning Show", "Second Song", "Third Song"], "\(titles)")
        for ((_, at), wanted) in zip(titles, [0, 20.5, 47.25]) {
            #expect(at >= wanted - 0.0001 && at < wanted + 1024.0 / 48000, "a title tag before the frame at \(at) s for \(wanted) s")
        }

        // SRT: the timed ID3 stream.
        _ = try listener.wait(timeout: .seconds(10))
        let received = pulse.directory.appendingPathComponent("received.ts").path
        try listener.standardOutputSoFar.write(to: URL(fileURLWithPath: received))
        let streams = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", received])
        #expect(Set(streams.standardOutput.split(whereSeparator: \.isNewline).map(String.init)) == ["aac", "timed_id3"], "\(streams.standardOutput)")
        let packets = try ExternalTool.succeed("ffprobe", ["-v", "error", "-select_streams", "d:0", "-show_entries", "packet=pts_time",
                                                           "-of", "csv=p=0", received])
        // (A packet's side data adds a comma to the line.)
        let times = packets.standardOutput.split(whereSeparator: \.isNewline).compactMap { Double($0.split(separator: ",").first ?? "") }
        let audio = try ExternalTool.succeed("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "packet=pts_time",
                                                         "-read_intervals", "%+#1", "-of", "csv=p=0", received])
        let first = Double(audio.standardOutput.split(whereSeparator: \.isNewline).first?.split(separator: ",").first ?? "") ?? -1
        // Each tag's PTS: the audio's first PTS, the priming, then the title's time.
        #expect(times.count == 3 && zip(times, [0, 20.5, 47.25]).allSatisfy { abs($0 - (first + 1024.0 / 48000 + $1)) < 0.002 },
                "timed_id3 PTS \(times), audio from \(first)")
        // The tags as the PES packets carry them (FFmpeg 5.1's demuxer drops the first 5 bytes of
        // a stream_type 0x15 PES, taking them for ISO/IEC 13818-1 2.12.4's metadata access unit
        // wrapper, which Apple's timed metadata and hls.js do not have).
        let tags = pulse.directory.appendingPathComponent("tags.bin").path
        try ExternalTool.succeed("python3", ["-c", Self.pesPayloads, received, String(0x102), tags])
        let read = try Self.python(Self.id3Reader, [tags]) as? [[[String: Any]]] ?? []
        #expect(read.first?.compactMap { $0["title"] as? String } == ["Morning Show", "Second Song", "Third Song"], "\(read)")
        try ValidationCheck.expectSilent([hls, playlist], "record --segments packed-audio")
    }

    /// The player page of a live recording served low-latency (`record --hls --serve`, parts of
    /// 0.5 s) in headless Chromium: each title the `emsg` boxes carry is shown within one part of
    /// its time (the playhead when the page showed it, read through the DevTools protocol), and
    /// the ad break is marked on its timeline at its time.
    @Test(.hangGuard(minutes: 6))
    func thePlayerPageShowsEachTitleAtItsTime() throws {
        let pulse = try PulseTone()
        defer { pulse.close() }
        let hls = pulse.directory.appendingPathComponent("live").path
        let metadata = pulse.directory.appendingPathComponent("now-playing.jsonl").path
        let titles: [(String, Double)] = [("Opening", 0), ("First Song", 6), ("Second Song", 9), ("Third Song", 12)]
        try Data((titles.map { "{\"at\": \($0.1), \"title\": \"\($0.0)\", \"artist\": \"KeyFrame Radio\"}" }
                  + ["{\"start\": 10, \"duration\": 2, \"id\": \"break-1\"}"]).joined(separator: "\n").utf8 + [0x0A])
            .write(to: URL(fileURLWithPath: metadata))
        let port = try HTTPProbe.freePort()
        let base = "http://127.0.0.1:\(port)"
        let recording = try pulse.startRecording(["--hls", hls, "--serve", "127.0.0.1:\(port)", "--segment-duration", "1", "--part-duration", "0.5",
                                                  "--device", "pulse", "--sample-rate", "48000", "--duration", "30", "--metadata-from", metadata])
        defer { _ = recording.send(SIGINT) }
        try pulse.server.waitForStreams("source-outputs", while: recording)
        for msn in 0...2 {
            var playlist = HTTPProbe.get(base + "/index.m3u8?_HLS_msn=\(msn)")
            for _ in 0..<60 where playlist.status != 200 {
                Subprocess.sleep(.milliseconds(100))
                playlist = HTTPProbe.get(base + "/index.m3u8?_HLS_msn=\(msn)")
            }
            try #require(playlist.status == 200, "_HLS_msn=\(msn): \(playlist.status) \(playlist.body)")
        }
        let report = try PlayerPageLive.listen(base + "/", ["--live", "--play", "14"])
        let after = PlayerPageLive.object(report, "playerAfter")
        let log = after["nowPlayingLog"] as? [[String: Any]] ?? []
        let part = 0.5
        for (title, time) in titles.dropFirst() {
            let shown = log.first { $0["title"] as? String == title }
            let at = (shown?["shownAt"] as? NSNumber)?.doubleValue ?? -1
            #expect(shown != nil && abs(at - time) <= part, "\(title) at \(time) s shown at \(at) s: \(log)")
        }
        let line = PlayerPageLive.object(report, "nowPlaying")
        #expect((line["text"] as? String)?.hasPrefix("Now playing: ") == true && line["live"] as? String == "polite", "\(line)")
        let marks = after["marks"] as? [[String: Any]] ?? []
        let adBreak = marks.first { $0["kind"] as? String == "ad" }
        let start = (adBreak?["start"] as? NSNumber)?.doubleValue ?? -1
        #expect(adBreak?["id"] as? String == "break-1" && abs(start - 10) < 0.05 && (adBreak?["duration"] as? NSNumber)?.doubleValue == 2,
                "the ad break on the timeline: \(marks)")
        #expect((line["timeline"] as? [[String: Any]] ?? []).contains { $0["kind"] as? String == "ad" }, "\(line)")
    }

    /// On demand too: a package's page marks its ad break and chapters on the timeline and shows
    /// the title of the moment.
    @Test(.hangGuard(minutes: 6))
    func thePlayerPageMarksAPackagesAdBreakAndChapters() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let chapters = directory.appendingPathComponent("chapters.txt").path
        try Data(";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=3000\ntitle=Intro\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=3000\nEND=12000\ntitle=Main\n"
            .utf8).write(to: URL(fileURLWithPath: chapters))
        let input = directory.appendingPathComponent("episode.m4a").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=12:r=48000", "-i", chapters, "-map", "0", "-map_chapters", "1", "-ac", "2",
                             "-c:a", "aac", input])
        let sidecar = directory.appendingPathComponent("ads.jsonl").path
        try Data("{\"start\": 2, \"duration\": 1.5, \"id\": \"mid\"}\n{\"at\": 1, \"title\": \"Sponsor\"}\n".utf8).write(to: URL(fileURLWithPath: sidecar))
        let package = directory.appendingPathComponent("pkg").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", input, "--hls", package, "--segment-duration", "1", "--ad-breaks", sidecar])
        let port = try HTTPProbe.freePort()
        let server = try RunningProcess(try ExternalTool.keyframe, ["serve", package, "--address", "127.0.0.1:\(port)"])
        defer { server.stop() }
        try CDNCacheTests.waitUntilServed("http://127.0.0.1:\(port)/")
        let report = try PlayerPageLive.listen("http://127.0.0.1:\(port)/", ["--play", "3"])
        let after = PlayerPageLive.object(report, "playerAfter")
        let marks = (after["marks"] as? [[String: Any]] ?? []).map { ($0["kind"] as? String ?? "", ($0["start"] as? NSNumber)?.doubleValue ?? -1) }
        #expect(marks.count == 3 && marks.contains { $0.0 == "ad" && abs($0.1 - 2) < 0.01 } && marks.contains { $0.0 == "chapter" && abs($0.1 - 3) < 0.01 }
                && marks.contains { $0.0 == "chapter" && abs($0.1) < 0.01 }, "\(marks)")
        let shown = (after["nowPlayingLog"] as? [[String: Any]] ?? []).first
        #expect(shown?["title"] as? String == "Sponsor" && abs(((shown?["shownAt"] as? NSNumber)?.doubleValue ?? -1) - 1) <= 0.25, "\(after)")
        let page = PlayerPageLive.object(report, "nowPlaying")
        #expect((page["adBreaks"] as? [String]) == ["Ad break at 0:02 for 2 s"] && (page["timeline"] as? [Any])?.count == 4, "\(page)")
    }

    /// `package --ad-breaks` over an M4A with chapters: the chapters as DATERANGE tags, the ad
    /// break as a SCTE-35 pair and cue tags, its sections as `emsg` boxes; VOD with program
    /// date-times; a bad sidecar line a usage error naming it.
    @Test func aPackageCarriesChaptersAndAnAdBreak() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("episode.m4a").path
        let chapters = directory.appendingPathComponent("chapters.txt").path
        try Data(";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=12000\ntitle=Intro\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=12000\nEND=40000\ntitle=Main\n"
            .utf8).write(to: URL(fileURLWithPath: chapters))
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=40:r=48000", "-i", chapters, "-map", "0", "-map_chapters", "1", "-ac", "2",
                             "-c:a", "aac", "-b:a", "128k", input])
        let sidecar = directory.appendingPathComponent("ads.jsonl").path
        try Data("{\"start\": 20, \"duration\": 8, \"id\": \"42\"}\n{\"at\": 3, \"title\": \"Sponsor\"}\n".utf8).write(to: URL(fileURLWithPath: sidecar))
        let out = directory.appendingPathComponent("pkg").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", input, "--hls", out, "--ad-breaks", sidecar, "--dash"])
        let playlist = out + "/index.m3u8"
        let text = try String(contentsOfFile: playlist, encoding: .utf8)
        #expect(text.contains("#EXT-X-PLAYLIST-TYPE:VOD") && text.contains("ID=\"chapter-1\",CLASS=\"com.keyframekit.chapter\"")
                && text.contains("X-TITLE=\"Main\""), "\(text)")
        try Self.expectAdBreak(playlist, start: 20, duration: 8, "package --ad-breaks")
        let ranges = try Self.segments(playlist, priming: 1024.0 / 48000)
        let walked = try Self.python(Self.walker, ranges.map { out + "/" + $0.uri }) as? [[String: Any]] ?? []
        try Self.expectMessages(walked, in: ranges, directory: out, expected: [("Sponsor", "", 3)], scte35: [20, 28], "package --ad-breaks")
        let check = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", playlist, "-f", "null", "-"])
        #expect(check.status == 0 && check.standardError.isEmpty, "\(check.standardError)")
        // DASH: the ID3 scheme as an InbandEventStream, and the period's EventStream of the
        // SCTE-35 sections (SCTE 214-1 xml+bin; their emsg boxes are not declared too, or a
        // client would take each break twice).
        let mpd = try String(contentsOfFile: out + "/manifest.mpd", encoding: .utf8)
        #expect(mpd.contains("<InbandEventStream schemeIdUri=\"https://aomedia.org/emsg/ID3\"")
                && !mpd.contains("<InbandEventStream schemeIdUri=\"urn:scte:scte35:2013:bin\""), "\(mpd)")
        #expect(String(decoding: [UInt8](try Data(contentsOf: URL(fileURLWithPath: out + "/init.mp4"))).prefix(64), as: UTF8.self).contains("aid3"),
                "a package of title changes lists aid3")
        let binaries = mpd.components(separatedBy: "<Binary>").dropFirst().map { String($0.prefix { $0 != "<" }) }
        let sections = binaries.compactMap { Data(base64Encoded: $0) }.map { "0x" + $0.map { String(format: "%02X", $0) }.joined() }
        #expect(sections == Self.spliceValues(text, attribute: "SCTE35-OUT") + Self.spliceValues(text, attribute: "SCTE35-IN"),
                "the MPD's cues are the playlist's: \(sections)")
        let dash = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", out + "/manifest.mpd", "-f", "null", "-"])
        #expect(dash.status == 0 && dash.standardError.isEmpty, "\(dash.standardError)")
        try ValidationCheck.expectSilent([out, playlist, out + "/manifest.mpd"], "package --ad-breaks --dash")

        // A line without a time, or not of the schema: a usage error (64) naming the line.
        for (line, words) in [("{\"duration\": 5}", "no time"), ("{\"start\": 1, \"duration\": 5, \"title\": \"x\"}", "line 1"),
                              ("{\"start\": -1, \"duration\": 5}", "line 1"), ("{\"colour\": \"red\"}", "\"colour\" is not a field")] {
            try Data((line + "\n").utf8).write(to: URL(fileURLWithPath: sidecar))
            let refused = try ExternalTool.run(try ExternalTool.keyframe, ["package", input, "--hls", directory.appendingPathComponent("bad").path,
                                                                          "--ad-breaks", sidecar])
            #expect(refused.status == 64 && refused.standardError.contains(words), "\(line): \(refused.status) \(refused.standardError)")
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("bad").path), "\(line): nothing made")
        }
    }
}
