import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Issue 35, item 5: journeys a new user takes in the first hour, each run by the installed tool
/// (`make install CONFIG=debug` into a scratch DESTDIR, once per test run) from the first command
/// to a listener, on material no one here made: Debian's pingus-data tracker modules rendered by
/// FFmpeg's libopenmpt decoder, espeak-ng speech and the freedesktop sounds.
///
/// - Podcast: speech and music normalized to −16 LUFS, tagged (title, artist, cover, chapters),
///   packaged as an `auto` HLS ladder with DASH, validated, served, and played by FFmpeg (lag 0)
///   and by Chromium through the player page (its title shown).
/// - Radio show: one capture from a PulseAudio null sink to a local file, to Icecast and to a
///   live HLS rendition served at once, with an FFmpeg listener on each.
/// - Audiobook: three spoken parts with chapters of their own, joined into an M4B whose chapters
///   ffprobe and mutagen read back.
/// - Damaged files: a truncated M4A, an M4A whose sample sizes were zeroed, ADTS with garbage
///   frames in the middle and a WAV cut mid-sample, through every command that reads a file.
extension RealTimeTests {
@Suite(.serialized) struct JourneyTests {
    // MARK: The installed tool

    /// Where `make install` put the tool, or why it could not.
    struct Installation: Sendable {
        var keyframe: String?
        var problem: String
    }

    /// The scratch DESTDIR of this test run (removed when the test process exits).
    static let installRoot = FileManager.default.temporaryDirectory.appendingPathComponent("keyframe-journeys-\(getpid())").path

    /// `make install CONFIG=debug DESTDIR=<scratch> PREFIX=/usr`, run once per test run, on first
    /// use (a static's initializer runs once, under the runtime's lock, whichever test asks first).
    static let installation: Installation = {
        let root = MP4Check.repositoryRoot.path
        try? FileManager.default.removeItem(atPath: installRoot)
        atexit { try? FileManager.default.removeItem(atPath: JourneyTests.installRoot) }
        do {
            let run = try Subprocess.run("make", ["-C", root, "--no-print-directory", "install", "CONFIG=debug", "DESTDIR=\(installRoot)", "PREFIX=/usr"],
                                         environment: ProcessInfo.processInfo.environment, timeout: .seconds(600))
            let keyframe = installRoot + "/usr/bin/keyframe"
            guard run.status == 0, FileManager.default.isExecutableFile(atPath: keyframe),
                  FileManager.default.isExecutableFile(atPath: installRoot + "/usr/bin/keyframe-serve") else {
                return Installation(keyframe: nil, problem: "make install exited \(run.status): \(run.standardOutput) \(run.standardError)")
            }
            return Installation(keyframe: keyframe, problem: "")
        } catch {
            return Installation(keyframe: nil, problem: "make install: \(error)")
        }
    }()

    /// The installed `keyframe`.
    static var keyframe: String {
        get throws {
            guard let path = installation.keyframe else { throw Subprocess.Failure(description: installation.problem) }
            return path
        }
    }

    /// The installed `keyframe` with `arguments`, killed (and a failure) past `timeout`.
    static func keyframe(_ arguments: [String], timeout: Duration = .seconds(120)) throws -> Subprocess.Result {
        try Subprocess.run(try keyframe, arguments, environment: ProcessInfo.processInfo.environment, timeout: timeout)
    }

    /// The installed `keyframe`, which must succeed.
    @discardableResult
    static func succeed(_ arguments: [String], timeout: Duration = .seconds(120), sourceLocation: SourceLocation = #_sourceLocation) throws -> Subprocess.Result {
        let run = try keyframe(arguments, timeout: timeout)
        try #require(run.status == 0, "keyframe \(arguments.joined(separator: " ")) exited \(run.status): \(run.standardError)",
                     sourceLocation: sourceLocation)
        return run
    }

    // MARK: Material no one here made

    static let modules = "/usr/share/games/pingus/data/music"

    /// `seconds` of a pingus-data module rendered by FFmpeg's libopenmpt decoder, 48 kHz stereo.
    static func music(_ module: String, seconds: Int, to path: String) throws {
        let file = modules + "/" + module
        try #require(FileManager.default.fileExists(atPath: file), "\(file) is missing: `make deps` installs pingus-data")
        try MP4Check.ffmpeg(["-i", file, "-t", "\(seconds)", "-ar", "48000", "-ac", "2", "-c:a", "pcm_s16le", path])
    }

    /// espeak-ng saying `text` (22.05 kHz mono WAV).
    static func speech(_ text: String, to path: String) throws {
        try ExternalTool.succeed("espeak-ng", ["-w", path, text])
    }

    /// Interleaved s16 samples of `file` decoded by FFmpeg at 48 kHz, `channels` channels.
    static func decoded(_ file: String, channels: Int = 2, in directory: URL) throws -> [Int16] {
        let raw = directory.appendingPathComponent("decoded-\(UUID().uuidString).s16").path
        defer { try? FileManager.default.removeItem(atPath: raw) }
        try MP4Check.ffmpeg(["-i", file, "-f", "s16le", "-ac", "\(channels)", "-ar", "48000", "-c:a", "pcm_s16le", raw])
        return CaptureCheck.samples(try Data(contentsOf: URL(fileURLWithPath: raw)))
    }

    /// Seconds of audio in 48 kHz stereo s16 samples whose 0.1-s blocks are above −50 dBFS RMS.
    static func loudSeconds(_ samples: [Int16]) -> Double {
        let block = 4800 * 2
        var loud = 0
        for start in stride(from: 0, to: samples.count - block + 1, by: block) {
            let x = samples[start..<(start + block)].map { Double($0) / 32768 }
            if CaptureCheck.rmsDBFS(x[...]) > -50 { loud += 1 }
        }
        return Double(loud) / 10
    }

    /// FFmpeg's EBU R 128 summary of `file`: integrated loudness (LUFS) and true peak (dBTP).
    static func loudness(_ file: String) throws -> (integrated: Double, truePeak: Double) {
        let run = try ExternalTool.run("ffmpeg", ["-nostdin", "-hide_banner", "-nostats", "-i", file, "-af", "ebur128=peak=true", "-f", "null", "-"])
        try #require(run.status == 0, "ffmpeg ebur128: \(run.standardError)")
        let summary = run.standardError.components(separatedBy: "Summary:").last ?? ""
        func value(after label: String) -> Double? {
            guard let range = summary.range(of: label) else { return nil }
            return Double(summary[range.upperBound...].split(whereSeparator: { $0 == " " || $0 == "\n" }).first ?? "")
        }
        return (try #require(value(after: "I:"), "\(summary)"), try #require(value(after: "Peak:"), "\(summary)"))
    }

    // MARK: 1. Podcast

    @Test("podcast: speech and music, −16 LUFS, tagged, an auto ladder with DASH, validated, served, heard at lag 0 and titled",
          .hangGuard(minutes: 15))
    func podcast() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

        try Self.speech("Welcome to the first hour. This week: keyframes, loudness, and a tracker module from the penguins.", to: path("speech.wav"))
        try Self.music("gd-myla.it", seconds: 14, to: path("music.wav"))
        try MP4Check.ffmpeg(["-i", path("speech.wav"), "-i", path("music.wav"), "-filter_complex",
                             "[0:a]aresample=48000,aformat=channel_layouts=stereo[s];[s][1:a]concat=n=2:v=0:a=1", "-c:a", "pcm_s16le", path("master.wav")])
        let speechSeconds = try #require(CaptureCheck.ffprobeStream(path("speech.wav")).duration)

        // The master: normalized to the podcast norm, −16 LUFS at a −1 dBTP ceiling.
        let episode = path("episode.m4a")
        let converted = try Self.succeed(["convert", path("master.wav"), "-o", episode, "--normalize", "-16"])
        let (integrated, truePeak) = try Self.loudness(episode)
        #expect(abs(integrated + 16) <= 0.5, "integrated \(integrated) LUFS, not −16 ± 0.5: \(converted.standardOutput)")
        #expect(truePeak <= -1 + 0.5, "true peak \(truePeak) dBTP, above the −1 dBTP ceiling: \(converted.standardOutput)")

        // Title, artist, a cover made by FFmpeg, and chapters.
        let title = "The First Hour", artist = "KeyFrameKit Radio"
        let cover = path("cover.png")
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=160x160", "-frames:v", "1", cover])
        try Self.succeed(["tag", episode, "--set", "title=" + title, "--set", "artist=" + artist, "--cover", cover])
        let chapterList = path("chapters.txt")
        let musicStart = (speechSeconds * 1000).rounded() / 1000
        try Data("0:00 Welcome\n\(musicStart) The module\n".utf8).write(to: URL(fileURLWithPath: chapterList))
        try Self.succeed(["chapters", episode, "--import", chapterList])
        let chapters = try #require(try JSONSerialization.jsonObject(with: try Self.succeed(["chapters", episode, "--json"]).outputData) as? [[String: Any]])
        #expect(chapters.map { $0["title"] as? String ?? "" } == ["Welcome", "The module"], "\(chapters)")
        let tags = try #require(try JSONSerialization.jsonObject(with: try Self.succeed(["tag", episode, "--json"]).outputData) as? [String: Any])
        let items = tags["tags"] as? [String: Any] ?? [:]
        #expect(items["©nam"] as? String == title && items["©ART"] as? String == artist && (items["covr"] as? String)?.hasPrefix("PNG") == true, "\(tags)")

        // The ladder, HLS and DASH, validated without a finding.
        let www = path("www")
        try Self.succeed(["package", episode, "--hls", www, "--profile", "auto", "--bitrates", "32k,64k,128k", "--dash"], timeout: .seconds(240))
        let validation = try Self.keyframe(["validate", www, "--json"])
        #expect(validation.status == 0 && validation.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty,
                "validate \(www): status \(validation.status): \(validation.standardOutput) \(validation.standardError)")

        // Served; FFmpeg plays every rendition of master.m3u8 and of the MPD over HTTP at lag 0
        // against its own decode of the M4A.
        let port = try LocalPort.freeTCP()
        let base = "http://127.0.0.1:\(port)"
        let server = try RunningProcess(try Self.keyframe, ["serve", www, "--address", "127.0.0.1:\(port)"])
        defer { server.stop() }
        try CDNCacheTests.waitUntilServed(base + "/")
        let reference = try DASHBesideHLSTests.decode(episode, stream: 0, in: directory)
        for (way, url) in [("HLS", base + "/master.m3u8"), ("DASH", base + "/manifest.mpd")] {
            for index in 0..<3 {
                let heard: GaplessTests.PCM
                do { heard = try DASHBesideHLSTests.decode(url, stream: index, in: directory) } catch {
                    Issue.record("\(way) rendition \(index): \(String(describing: error).prefix(600))")
                    continue
                }
                #expect(heard.frames >= reference.frames - 2048, "\(way) rendition \(index): \(heard.frames) samples for \(reference.frames)")
                // In the speech (1 s in) and in the music (2 s after it starts).
                for start in [48000, Int((speechSeconds + 2) * 48000)] {
                    let lag = GaplessTests.peakLag(GaplessTests.tail(reference, from: start), GaplessTests.tail(heard, from: start),
                                                   channel: 0, window: 8192, maxLag: 4000)
                    #expect(lag == 0, "\(way) rendition \(index): FFmpeg plays \(lag) samples off at \(Double(start) / 48000) s")
                }
            }
        }

        // The player page in Chromium names the stream by its tags.
        let unused = path("unused.wav")
        try GaplessTests.makeSignal(rate: 48000, channels: 1, frames: 4800, to: unused)
        let script = MP4Check.repositoryRoot.appendingPathComponent("scripts/browser-page.py").path
        let page = try ExternalTool.succeed(try MP4Check.venvPython, [script, base + "/", unused, "--screenshot", path("page.png"), "--load-only", "2"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(page.standardOutput.utf8)) as? [String: Any], "\(page.standardOutput)")
        let facts = report["page"] as? [String: Any] ?? [:]
        let player = (report["loaded"] as? [String: Any])?["player"] as? [String: Any] ?? [:]
        #expect(player["state"] as? String == "ready", "\(player)")
        #expect(facts["title"] as? String == title && facts["heading"] as? String == title && facts["artist"] as? String == artist,
                "the page: \(facts)")
        #expect(facts["cover"] is [String: Any], "the page shows no cover: \(facts)")
    }

    // MARK: 2. Radio show

    @Test("radio show: one capture to a file, to Icecast and to live HLS served, an FFmpeg listener on each", .hangGuard(minutes: 15))
    func radioShow() throws {
        let pulse = try PulseAudioServer(sinkName: "kf_sink", sampleRate: 48000, channels: 2)
        defer { pulse.stop() }
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        try Self.music("pingus-5.it", seconds: 40, to: path("show.wav"))
        let player = try pulse.start("paplay", ["-d", "kf_sink", "--latency-msec=50", path("show.wav")])
        defer { player.stop() }
        try pulse.waitForStreams("sink-inputs", while: player)
        try pulse.waitForLowSinkLatency()

        let icecast = try IcecastServer()
        defer { icecast.stop() }
        let mount = "/radio.aac"
        let hlsPort = try LocalPort.freeTCP()
        let seconds = 12.0
        let file = path("show.m4a"), hls = path("live")
        let recording = try pulse.start(try Self.keyframe, [
            "record", file, "--device", "pulse", "--sample-rate", "48000", "--duration", "\(seconds)", "--json", "--title", "Radio Pingus",
            "--hls", hls, "--segment-duration", "2", "--serve", "127.0.0.1:\(hlsPort)",
            "--publish", "icecast://source:\(icecast.password)@127.0.0.1:\(icecast.port)\(mount)"])
        defer { _ = recording.send(SIGINT) }

        // The listeners, each started as soon as its stream is there.
        try RunningProcess.waitUntil("the Icecast mount \(mount)", timeout: .seconds(20)) {
            guard recording.isRunning else { throw Subprocess.Failure(description: "record ended: \(recording.standardErrorSoFar)") }
            return icecast.status().contains("\(icecast.port)\(mount)\"")
        }
        let icecastListener = try RunningProcess("ffmpeg", ["-nostdin", "-v", "error", "-i", "http://127.0.0.1:\(icecast.port)\(mount)",
                                                            "-f", "s16le", "-ac", "2", "-ar", "48000", "-"])
        try RunningProcess.waitUntil("the live playlist", timeout: .seconds(20)) {
            HTTPProbe.get("http://127.0.0.1:\(hlsPort)/index.m3u8", timeout: 2).body.contains("#EXTINF")
        }
        let hlsListener = try RunningProcess("ffmpeg", ["-nostdin", "-v", "error", "-live_start_index", "0", "-i", "http://127.0.0.1:\(hlsPort)/index.m3u8",
                                                       "-f", "s16le", "-ac", "2", "-ar", "48000", "-"])

        let finished = try recording.wait(timeout: .seconds(60))
        try #require(finished.result.status == 0, "record exited \(finished.result.status): \(finished.result.standardError)")
        let summary = try CaptureCheck.json(finished.result, "record --json")
        #expect(summary["frames"] as? Int == Int(seconds * 48000) && summary["lostFrames"] as? Int == 0, "\(summary)")
        let destination = (summary["destinations"] as? [[String: Any]])?.first ?? [:]
        #expect(destination["state"] as? String == "finished" && destination["framesDropped"] as? Int == 0, "the Icecast destination: \(destination)")

        // Icecast's listener: from its connection to the source's goodbye.
        let fromIcecast = try icecastListener.wait(timeout: .seconds(30))
        let icecastSamples = CaptureCheck.samples(fromIcecast.result.outputData)
        let icecastSeconds = Double(icecastSamples.count / 2) / 48000
        #expect(fromIcecast.result.status == 0, "the Icecast listener: \(fromIcecast.result.standardError)")
        #expect(icecastSeconds >= seconds - 4 && icecastSeconds <= seconds + 1, "the Icecast listener decoded \(icecastSeconds) s of \(seconds)")
        #expect(Self.loudSeconds(icecastSamples) >= icecastSeconds - 1.5, "the Icecast listener heard \(Self.loudSeconds(icecastSamples)) s of sound in \(icecastSeconds) s")

        // The live HLS listener, from the first segment: the whole show but what the origin no
        // longer served once the recording ended.
        let fromHLS = try hlsListener.wait(timeout: .seconds(30))
        let hlsSamples = CaptureCheck.samples(fromHLS.result.outputData)
        let hlsSeconds = Double(hlsSamples.count / 2) / 48000
        #expect(hlsSeconds >= seconds - 4 && hlsSeconds <= seconds + 0.1, "the HLS listener decoded \(hlsSeconds) s of \(seconds): \(fromHLS.result.standardError)")
        #expect(Self.loudSeconds(hlsSamples) >= hlsSeconds - 1.5, "the HLS listener heard \(Self.loudSeconds(hlsSamples)) s of sound in \(hlsSeconds) s")

        // The file, once it is finished: exactly the recorded length, sound throughout.
        let fromFile = try Self.decoded(file, in: directory)
        // (FFmpeg 5.1 decodes the M4A's edit list to within one AAC frame.)
        #expect(abs(fromFile.count / 2 - Int(seconds * 48000)) <= 1024, "the file decodes to \(fromFile.count / 2) frames")
        let probed = try CaptureCheck.ffprobeStream(file)
        #expect(abs((probed.duration ?? 0) - seconds) < 0.001, "ffprobe: \(probed)")
        #expect(Self.loudSeconds(fromFile) >= seconds - 1.5, "the file holds \(Self.loudSeconds(fromFile)) s of sound in \(seconds) s")
        let validation = try Self.keyframe(["validate", file])
        #expect(validation.status == 0 && validation.standardOutput.hasSuffix(": ok\n"), "validate: \(validation.standardOutput)\(validation.standardError)")
    }

    // MARK: 3. Audiobook

    @Test("audiobook: three spoken parts with their own chapters, joined into an M4B that ffprobe and mutagen read back",
          .hangGuard(minutes: 15))
    func audiobook() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        let texts = ["Part one. The keyframe was found at dawn, under the old bridge, where the river bends twice.",
                     "Part two. Nobody knew who had encoded it, nor why its priming was exactly one thousand and twenty four samples.",
                     "Part three. In the end the listener heard every sample, gapless, from the first word to the last."]
        var parts: [String] = []
        var expected: [(start: Double, title: String)] = []
        var total = 0.0
        for (index, text) in texts.enumerated() {
            let number = index + 1
            try Self.speech(text, to: path("part\(number).wav"))
            let part = path("part\(number).m4a")
            try Self.succeed(["convert", path("part\(number).wav"), "-o", part])
            let list = path("part\(number).txt")
            try Data("0:00 Part \(number): opening\n0:02.500 Part \(number): the middle\n".utf8).write(to: URL(fileURLWithPath: list))
            try Self.succeed(["chapters", part, "--import", list])
            let duration = try #require(try ExternalTool.probeJSON(part)["duration"] as? Double)
            expected += [(total, "Part \(number): opening"), (total + 2.5, "Part \(number): the middle")]
            total += duration
            parts.append(part)
        }
        let book = path("book.m4b")
        try Self.succeed(["join"] + parts + ["-o", book])

        let frame = 1024.0 / 22050
        func expectChapters(_ found: [(start: Double, title: String)], _ reader: String) {
            #expect(found.map(\.title) == expected.map(\.title), "\(reader): \(found)")
            for (got, want) in zip(found, expected) {
                #expect(abs(got.start - want.start) <= frame, "\(reader): \(want.title) starts at \(got.start) s, not \(want.start)")
            }
        }
        let probed = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_chapters", "-of", "json", book])
        let ffprobeChapters = (try JSONSerialization.jsonObject(with: probed.outputData) as? [String: Any])?["chapters"] as? [[String: Any]] ?? []
        expectChapters(ffprobeChapters.map { (Double($0["start_time"] as? String ?? "") ?? -1, ($0["tags"] as? [String: Any])?["title"] as? String ?? "") },
                       "ffprobe")
        let script = "import sys, json, mutagen.mp4 as m\nf = m.MP4(sys.argv[1])\nprint(json.dumps([[c.start, c.title] for c in (f.chapters or [])]))"
        let mutagen = try ExternalTool.succeed(try MP4Check.venvPython, ["-c", script, book])
        let mutagenChapters = try JSONSerialization.jsonObject(with: Data(mutagen.standardOutput.utf8)) as? [[Any]] ?? []
        expectChapters(mutagenChapters.map { (($0.first as? NSNumber)?.doubleValue ?? -1, $0.last as? String ?? "") }, "mutagen")

        let joined = try #require(try ExternalTool.probeJSON(book)["duration"] as? Double)
        #expect(abs(joined - total) <= 1.0 / 22050, "the book lasts \(joined) s, the parts \(total) s")
        let ffprobeDuration = try #require(CaptureCheck.ffprobeStream(book).duration)
        #expect(abs(ffprobeDuration - total) <= 1.0 / 22050 + 1e-6, "ffprobe: \(ffprobeDuration) s, the parts \(total) s")
        let decoded = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", book])
        #expect(abs((Double(decoded.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) - total) <= frame, "\(decoded.standardOutput)")
    }

    // MARK: 4. Damaged files

    /// What one command did with one damaged file.
    struct Outcome: CustomStringConvertible {
        var file: String
        var command: String
        var status: Int32
        var verdict: String
        var said: String
        var description: String {
            "| \(file) | \(command) | \(status) | \(verdict) | \(said.replacingOccurrences(of: "\n", with: " ").prefix(160)) |"
        }
    }

    @Test("damaged files: every command that reads one says so, with status 2 or 3, and leaves it untouched", .hangGuard(minutes: 15))
    func damagedFiles() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

        // The whole files: a module's render, and its M4A and ADTS.
        let wav = path("whole.wav"), m4a = path("whole.m4a"), adts = path("whole.aac")
        try Self.music("sorcerer.it", seconds: 20, to: wav)
        try Self.succeed(["convert", wav, "-o", m4a])
        try Self.succeed(["convert", wav, "-o", adts])

        // A truncated M4A: its first half (head -c).
        let m4aBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: m4a)))
        let truncated = path("truncated.m4a")
        try Data(m4aBytes.prefix(m4aBytes.count / 2)).write(to: URL(fileURLWithPath: truncated))
        // An M4A whose stsz entries are zero from a quarter of the track to three quarters.
        var zeroedBytes = m4aBytes
        let stsz = try #require((4..<(zeroedBytes.count - 4)).first { zeroedBytes[$0..<($0 + 4)].elementsEqual("stsz".utf8) })
        let stszSize = zeroedBytes[(stsz - 4)..<stsz].reduce(0) { $0 << 8 | Int($1) }
        let entries = (stsz - 4 + stszSize - (stsz + 16)) / 4
        try #require(entries > 100, "stsz holds \(entries) entries")
        zeroedBytes.replaceSubrange((stsz + 16 + entries / 4 * 4)..<(stsz + 16 + entries * 3 / 4 * 4), with: repeatElement(0, count: (entries * 3 / 4 - entries / 4) * 4))
        let zeroed = path("zeroed-stsz.m4a")
        try Data(zeroedBytes).write(to: URL(fileURLWithPath: zeroed))
        // ADTS with ten frames in the middle overwritten by seeded noise, headers included.
        var adtsBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: adts)))
        var frames: [(offset: Int, length: Int)] = []
        var offset = 0
        while offset + 7 <= adtsBytes.count, adtsBytes[offset] == 0xFF {
            let length = Int(adtsBytes[offset + 3] & 3) << 11 | Int(adtsBytes[offset + 4]) << 3 | Int(adtsBytes[offset + 5]) >> 5
            guard length >= 7 else { break }
            frames.append((offset, length))
            offset += length
        }
        try #require(frames.count > 500 && offset == adtsBytes.count, "\(frames.count) ADTS frames, parsed to byte \(offset) of \(adtsBytes.count)")
        var random = SplitMix64(state: 35)
        for frame in frames[(frames.count / 2)..<(frames.count / 2 + 10)] {
            for index in frame.offset..<(frame.offset + frame.length) { adtsBytes[index] = UInt8(truncatingIfNeeded: random.next()) }
        }
        let corrupt = path("corrupt.aac")
        try Data(adtsBytes).write(to: URL(fileURLWithPath: corrupt))
        // A WAV cut in the middle of a sample: half its frames and one byte of the next.
        let chunk = try CaptureCheck.wavDataChunk(wav)
        let cutWAV = path("cut.wav")
        let wavBytes = try Data(contentsOf: URL(fileURLWithPath: wav))
        try wavBytes.prefix(chunk.offset + chunk.declaredSize / 8 * 4 + 1).write(to: URL(fileURLWithPath: cutWAV))

        /// Every command that reads a file, with outputs of its own in `work`.
        func commands(_ input: String, work: String) -> [(String, [String])] {
            [("probe", ["probe", input]),
             ("validate", ["validate", input]),
             ("decode", ["decode", input, "-o", work + "/decoded.wav"]),
             ("convert", ["convert", input, "-o", work + "/converted.m4a"]),
             ("cut", ["cut", input, "-o", work + "/cut.m4a", "--start", "1", "--end", "4"]),
             ("split", ["split", input, "--at", "2,4", "-o", work + "/parts/"]),
             ("join", ["join", input, input, "-o", work + "/joined.m4a"]),
             ("package", ["package", input, "--hls", work + "/hls"]),
             ("demux", ["demux", input, "-o", work + "/demuxed.aac"]),
             ("tag --json", ["tag", input, "--json"]),
             ("chapters", ["chapters", input])]
        }
        /// Runs `arguments` in a fresh work directory (60 s at most): the result, or nil on a hang.
        func run(_ arguments: [String], work: String) throws -> Subprocess.Result? {
            try? FileManager.default.removeItem(atPath: work)
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            do { return try Self.keyframe(arguments, timeout: .seconds(60)) } catch { return nil }
        }

        var table: [Outcome] = []
        for (damaged, whole) in [(truncated, m4a), (zeroed, m4a), (corrupt, adts), (cutWAV, wav)] {
            let name = URL(fileURLWithPath: damaged).lastPathComponent
            let before = try Data(contentsOf: URL(fileURLWithPath: damaged))
            let work = path("work-" + name)
            for ((command, arguments), (_, wholeArguments)) in zip(commands(damaged, work: work), commands(whole, work: work)) {
                // What the command does with the whole file of the same kind.
                let reference = try run(wholeArguments, work: work)
                guard let result = try run(arguments, work: work) else {
                    table.append(Outcome(file: name, command: command, status: -1, verdict: "HANG", said: "killed after 60 s"))
                    Issue.record("keyframe \(arguments.joined(separator: " ")) still ran after 60 s")
                    continue
                }
                let said = (result.standardError + result.standardOutput).trimmingCharacters(in: .whitespacesAndNewlines)
                let namesFile = result.standardError.contains(name) || result.standardOutput.contains(name)
                func sameOutput(_ a: Subprocess.Result, _ b: Subprocess.Result) -> Bool {
                    a.standardOutput.replacingOccurrences(of: damaged, with: "FILE") == b.standardOutput.replacingOccurrences(of: whole, with: "FILE")
                }
                var verdict: String
                if result.status > 128 {
                    verdict = "CRASH"
                } else if let reference, reference.status != 0 {
                    // A command that does not take this kind of file refuses it the same way.
                    verdict = (result.status == reference.status || result.status == 2) && namesFile ? "refused, as the whole file" : "BAD refusal"
                } else {
                    switch result.status {
                    case 2: verdict = namesFile ? "error naming the file" : "BAD: error without the file's name"
                    case 3: verdict = namesFile && result.standardError.contains("warning:") ? "salvage, said" : "BAD: salvage not said"
                    case 0 where command == "probe" && (said.contains("readable") || (said.contains("damage:") && !said.contains("damage: none"))):
                        verdict = "described the damage"
                    case 1 where command == "validate" && namesFile && said.contains("error"):
                        verdict = "validation error naming the file"
                    case 0 where (command == "tag --json" || command == "chapters") && reference.map { sameOutput(result, $0) } == true:
                        verdict = "nothing lost (same output as the whole file)"
                    case 0: verdict = "BAD: exit 0 on damage"
                    default: verdict = "BAD: status \(result.status)"
                    }
                }
                table.append(Outcome(file: name, command: command, status: result.status, verdict: verdict, said: said))
                #expect(!verdict.hasPrefix("BAD") && verdict != "CRASH",
                        "keyframe \(arguments.joined(separator: " ")): \(verdict), status \(result.status): \(said.prefix(600))")
                #expect(try Data(contentsOf: URL(fileURLWithPath: damaged)) == before, "\(command) changed \(name)")
            }
        }
        print((["| file | command | status | verdict | said |", "|---|---|---|---|---|"] + table.map(\.description)).joined(separator: "\n"))
    }
}
}

typealias JourneyTests = RealTimeTests.JourneyTests
