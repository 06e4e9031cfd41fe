import Foundation
import Testing
import TestSupport

/// The seams a new user met in the first hour, each reproduced: one command-line vocabulary,
/// one bitrate parser whose range fits the output, the exit statuses of the README's table,
/// outputs that keep what they replace, and the layouts, profiles and bitrates the tools say.
@Suite("the first hour: vocabulary, exit statuses, seams", .blocking)
struct FirstHourTests {
    static func keyframe(_ arguments: [String]) throws -> Subprocess.Result {
        try ExternalTool.run(try ExternalTool.keyframe, arguments)
    }

    /// A WAV of `seconds` of pink noise at `rate` Hz, `channels` channels, made by FFmpeg.
    static func wav(_ name: String, in directory: URL, rate: Int = 44100, channels: Int = 2, seconds: Double = 2) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=color=pink:sample_rate=\(rate):duration=\(seconds):amplitude=0.3",
                             "-ac", "\(channels)", path])
        return path
    }

    // MARK: One bitrate parser, its range for the actual output

    @Test("a bitrate out of range names the range of the output's rate and channels, the same each time")
    func bitrateRangeFitsTheOutput() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try Self.wav("mono.wav", in: directory, rate: 22050, channels: 1)
        let output = directory.appendingPathComponent("o.m4a").path
        for bitrate in ["9999k", "4608k", "200k"] {
            for command in ["encode", "convert"] {
                let run = try Self.keyframe([command, input, "-o", output, "--bitrate", bitrate])
                #expect(run.status == 64, "\(command) --bitrate \(bitrate): status \(run.status): \(run.standardError)")
                // 22.05 kHz mono AAC carries at most 6 bits a sample: 132,300 b/s.
                #expect(run.standardError.contains("8k...132300"), "\(command) --bitrate \(bitrate): \(run.standardError)")
                #expect(!run.standardError.contains("4608000"), "\(command): the range of 8 channels at 96 kHz: \(run.standardError)")
                #expect(!FileManager.default.fileExists(atPath: output))
            }
        }
        // A publishing URL's #bitrate= is read by the same parser: 0.048M is 48 kb/s there too
        // (nothing listens on the port: the summary still says what was encoded, status 1).
        let port = try LocalPort.freeTCP()
        let run = try Self.keyframe(["publish", input, "icecast://source:pw@127.0.0.1:\(port)/x#bitrate=0.048M", "--json",
                                     "--duration", "0.5", "--reconnect-max", "0.5"])
        #expect(run.status == 1, "\(run.standardError)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.outputData) as? [String: Any], "\(run.standardOutput)")
        #expect(report["bitrates"] as? [Int] == [48000], "\(report)")
    }

    // MARK: One vocabulary for encoders and raw input

    @Test("encode and convert share the default bitrate (128k) and the raw-input options")
    func encodeAndConvertAgree() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try Self.wav("in.wav", in: directory)
        let encoded = try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", input, "-o", directory.appendingPathComponent("e.m4a").path])
        let converted = try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", input, "-o", directory.appendingPathComponent("c.m4a").path])
        #expect(encoded.standardOutput.contains("at 128000 b/s"), "\(encoded.standardOutput)")
        #expect(converted.standardOutput.contains("at 128000 b/s"), "\(converted.standardOutput)")
        for command in ["encode", "convert"] {
            let help = try ExternalTool.succeed(try ExternalTool.keyframe, [command, "--help"]).standardOutput
            for option in ["--bitrate", "--profile", "--input-sample-rate", "--input-channels", "--input-format"] {
                #expect(help.contains(option), "\(command) --help lacks \(option)")
            }
        }

        // Raw PCM: --input-* on both; encode's older names still work, hidden.
        let raw = directory.appendingPathComponent("in.pcm").path
        try MP4Check.ffmpeg(["-i", input, "-f", "s16le", "-ar", "44100", "-ac", "2", raw])
        for (command, layout) in [("encode", ["--input-sample-rate", "44100", "--input-channels", "2"]),
                                  ("convert", ["--input-sample-rate", "44100", "--input-channels", "2"]),
                                  ("encode", ["--sample-rate", "44100", "--channels", "2"])] {
            let output = directory.appendingPathComponent("raw-\(command)-\(layout[0].dropFirst(2)).m4a").path
            let run = try Self.keyframe([command, raw, "-o", output] + layout)
            #expect(run.status == 0, "\(command) \(layout): \(run.standardError)")
            #expect(try ExternalTool.ffprobeAudio(output).sampleRate == 44100)
        }
        let encodeHelp = try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", "--help"]).standardOutput
        #expect(!encodeHelp.contains("--sample-rate "), "the older names are hidden: \(encodeHelp)")

        // --sample-rate on a WAV described raw input and was silently ignored: now a usage error
        // that says what to use.
        let output = directory.appendingPathComponent("r.m4a").path
        let run = try Self.keyframe(["encode", input, "-o", output, "--sample-rate", "16000"])
        #expect(run.status == 64, "status \(run.status)")
        #expect(run.standardError.contains("keyframe convert") && run.standardError.contains("--sample-rate 16000"), "\(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    // MARK: Exit statuses

    @Test("exit statuses: 2 for an input that cannot be read, 3 for a salvage, 64 for usage")
    func exitStatuses() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("o.wav").path

        // Not an M4A at all: the input cannot be read.
        let garbage = directory.appendingPathComponent("garbage.m4a")
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }).write(to: garbage)
        for command in ["decode", "convert"] {
            let run = try Self.keyframe([command, garbage.path, "-o", output])
            #expect(run.status == 2, "\(command) of garbage: status \(run.status): \(run.standardError)")
            #expect(run.standardError.contains(garbage.path), "the error names the file: \(run.standardError)")
        }
        let absent = directory.appendingPathComponent("missing.m4a").path
        for arguments in [["decode", absent, "-o", output], ["probe", absent], ["cut", absent, "-o", output + ".m4a", "--start", "1"],
                          ["split", absent, "--at", "1", "-o", directory.appendingPathComponent("parts").path + "/"],
                          ["package", absent, "--hls", directory.appendingPathComponent("hls").path], ["probe", garbage.path],
                          ["probe", absent, "--boxes"], ["play", absent, "--device", "null"],
                          ["publish", absent, "icecast://source:pw@127.0.0.1:1/x.aac"],
                          ["join", absent, garbage.path, "-o", output + ".m4a"]] {
            let run = try Self.keyframe(arguments)
            #expect(run.status == 2, "\(arguments): status \(run.status): \(run.standardError)")
            #expect(run.standardError.contains(arguments[1]), "the error names the file: \(run.standardError)")
        }

        // ADTS with its last frame cut: decoded, and the damage said, with status 3.
        let adts = directory.appendingPathComponent("cut.aac")
        let wav = try Self.wav("in.wav", in: directory)
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", adts.path])
        let whole = try Data(contentsOf: adts)
        try whole.prefix(whole.count - 100).write(to: adts)
        let salvaged = try Self.keyframe(["decode", adts.path, "-o", output])
        #expect(salvaged.status == 3, "status \(salvaged.status): \(salvaged.standardError)")
        #expect(salvaged.standardError.contains("warning:"), "\(salvaged.standardError)")
        #expect(FileManager.default.fileExists(atPath: output))

        // Usage errors: swift-argument-parser's 64.
        #expect(try Self.keyframe(["decode"]).status == 64)
        #expect(try Self.keyframe(["encode", wav, "-o", output, "--no-such-option"]).status == 64)
        #expect(try Self.keyframe(["package", wav, "--hls", directory.appendingPathComponent("h").path, "--bitrates", "32k,abc"]).status == 64)
        // The command line's mistakes a first trial made: each 64, nothing written.
        let m4a = directory.appendingPathComponent("x.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", m4a])
        let mistakes: [[String]] = [
            ["cut", m4a, "-o", directory.appendingPathComponent("c.m4a").path, "--start", "1.5", "--end", "0.5"],
            ["convert", wav, "-o", directory.appendingPathComponent("x.wma").path],
            ["convert", wav, "-o", directory.appendingPathComponent("n.m4a").path, "--normalize", "5"],
            ["convert", wav, "-o", directory.appendingPathComponent("r.wav").path, "--sample-rate", "7"],
            ["tag", m4a, "--set", "nokey=1"],
            ["publish", wav, "icecast://127.0.0.1:9/live.aac"],
        ]
        for arguments in mistakes {
            let run = try Self.keyframe(arguments)
            #expect(run.status == 64, "\(arguments.joined(separator: " ")): status \(run.status): \(run.standardError)")
        }
        for name in ["c.m4a", "x.wma", "n.m4a", "r.wav"] {
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path), "\(name)")
        }
    }

    @Test("publish that delivered nothing fails (status 1) and says why in one clear sentence")
    func publishThatDeliveredNothingFails() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try Self.wav("in.wav", in: directory, seconds: 1)
        let port = try LocalPort.freeTCP()
        let run = try Self.keyframe(["publish", input, "icecast://source:secret@127.0.0.1:\(port)/x.aac", "--reconnect-max", "0.5",
                                     "--duration", "1"])
        #expect(run.status == 1, "status \(run.status): \(run.standardError)")
        #expect(run.standardError.lowercased().contains("refused"), "\(run.standardError)")
        #expect(!run.standardError.contains("secret"), "the password is masked: \(run.standardError)")
        // Every "(" closed once: no message wrapped in another's parentheses.
        for line in run.standardError.split(separator: "\n") where line.hasPrefix("Error:") {
            let opened = line.filter { $0 == "(" }.count
            let closed = line.filter { $0 == ")" }.count
            #expect(opened == closed, "\(line)")
            #expect(!line.contains("))"), "\(line)")
        }
    }

    /// A server that is not there is told while the input plays (it was told only at the end,
    /// as "N s published"), and the summary says nothing was delivered.
    @Test("publish to a server that is not there says so at once, and not 'published'")
    func publishToAMissingServerSaysSoAtOnce() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try Self.wav("in.wav", in: directory, seconds: 30)
        let port = try LocalPort.freeTCP()
        let process = try RunningProcess(try ExternalTool.keyframe, ["publish", input, "icecast://source:secret@127.0.0.1:\(port)/x.aac"])
        var told = ""
        for _ in 0..<100 where !told.contains("trying again while the input plays") {
            Subprocess.sleep(.milliseconds(100))
            told = process.standardErrorSoFar
        }
        #expect(told.contains("Connection refused") && told.contains("trying again while the input plays"), "\(told)")
        #expect(process.send(SIGINT), "the publish ended before it said anything")
        let finished = try process.wait(timeout: .seconds(60))
        #expect(finished.result.status == 1, "status \(finished.result.status): \(finished.result.standardError)")
        #expect(finished.result.standardOutput.contains("played, nothing delivered"), "\(finished.result.standardOutput)")
        #expect(!finished.result.standardOutput.contains("published"), "\(finished.result.standardOutput)")
        #expect(!(finished.result.standardError + finished.result.standardOutput).contains("secret"))
    }

    @Test("publish of an M4A as it is tells Icecast the input's bitrate (ice-bitrate was 0)")
    func icecastIsToldTheInputsBitrate() throws {
        let server = try IcecastServer()
        defer { server.stop() }
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Long enough that a publisher started late on a loaded machine is still on the air
        // when the status is read.
        let input = try Self.wav("in.wav", in: directory, rate: 48000, seconds: 30)
        let m4a = directory.appendingPathComponent("in.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", input, "-o", m4a, "--bitrate", "96k"])
        let mount = "/copy.aac"
        let publisher = try RunningProcess(try ExternalTool.keyframe,
                                           ["publish", m4a, "icecast://source:\(server.password)@127.0.0.1:\(server.port)\(mount)", "--json"])
        defer { publisher.stop() }
        var status = ""
        try RunningProcess.waitUntil("the source on \(mount)", timeout: .seconds(60)) {
            status = server.status()
            return status.contains("\"listenurl\":\"http://127.0.0.1:\(server.port)\(mount)\"")
                && Self.announcedBitrate(in: status) != nil
        }
        // icecast2's status names what the source said in Ice-Audio-Info: as the source's
        // `bitrate`, and in `audio_info` once the server has copied the header there.
        let said = try #require(Self.announcedBitrate(in: status), "\(status)")
        let kilobits = try #require(Int(said))
        #expect(abs(kilobits - 96) <= 10, "ice-bitrate=\(kilobits) for a 96 kb/s M4A: \(status)")
        // Ctrl-C: the publication stops at the next packet and reports.
        #expect(publisher.send(SIGINT))
        let finished = try publisher.wait(timeout: .seconds(60))
        #expect(finished.result.status == 0, "\(finished.result.standardError)")
        let report = try CaptureCheck.json(finished.result, "publish --json")
        #expect(report["copied"] as? Bool == true)
        let destination = try #require((report["destinations"] as? [[String: Any]])?.first)
        #expect(abs((destination["bitrate"] as? Int ?? 0) - 96_000) <= 10_000, "\(destination)")
    }

    /// The kilobits per second icecast2's status JSON says the source announced.
    static func announcedBitrate(in status: String) -> Substring? {
        status.firstMatch(of: #/ice-bitrate=(\d+)/#)?.output.1
            ?? status.firstMatch(of: #/"bitrate":(\d+)/#)?.output.1
    }

    // MARK: What the tools say

    @Test("probe of HE-AAC in ADTS says HE-AAC at the output rate, as ffprobe does", arguments: ["he-aac", "he-aac-v2"])
    func probeFindsSBRAndPSInTheFrames(profile: String) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try Self.wav("in.wav", in: directory, rate: 48000)
        let adts = directory.appendingPathComponent("he.aac").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", input, "-o", adts, "--profile", profile, "--bitrate", "32k"])
        let report = try ExternalTool.probeJSON(adts)
        let track = try #require((report["tracks"] as? [[String: Any]])?.first)
        let peer = try ExternalTool.ffprobeAudio(adts)
        #expect(peer.sampleRate == 48000 && peer.channels == 2)
        #expect(track["sampleRate"] as? Int == peer.sampleRate, "\(track)")
        #expect(track["channels"] as? Int == peer.channels, "\(track)")
        #expect(track["profile"] as? String == (profile == "he-aac" ? "HE-AAC" : "HE-AACv2"), "ffprobe: \(peer.profile); ours: \(track)")
        let text = try ExternalTool.succeed(try ExternalTool.keyframe, ["probe", adts]).standardOutput
        #expect(text.contains("48000") && !text.contains("24000"), "\(text)")
    }

    @Test("validate of a folder of M4As with no playlist checks each file")
    func validateFolderOfM4As() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try Self.wav("in.wav", in: directory, seconds: 1)
        let album = directory.appendingPathComponent("album")
        try FileManager.default.createDirectory(at: album, withIntermediateDirectories: true)
        for name in ["01.m4a", "02.m4a"] {
            try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", input, "-o", album.appendingPathComponent(name).path])
        }
        try Data("notes".utf8).write(to: album.appendingPathComponent("notes.txt"))
        let run = try Self.keyframe(["validate", album.path])
        #expect(run.status == 0, "status \(run.status): \(run.standardOutput) \(run.standardError)")
        for name in ["01.m4a", "02.m4a"] {
            #expect(run.standardOutput.contains(album.appendingPathComponent(name).path + ": ok"), "\(run.standardOutput)")
        }
        let empty = directory.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let none = try Self.keyframe(["validate", empty.path])
        #expect(none.status == 2 && none.standardError.contains("no MP4/M4A/M4B, MP3, FLAC or Ogg Opus file"), "\(none.standardError)")
    }

    // MARK: Signals

    @Test("Ctrl-C during a segment-parallel convert cancels it: status 1, 'cancelled', nothing left", arguments: ["lc", "he-aac"])
    func ctrlCEndsAParallelConvert(profile: String) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Four 30-s segments at 48 kHz: each encoder has seconds of work when the signal comes.
        let input = try Self.wav("long.wav", in: directory, rate: 48000, seconds: 120)
        let output = directory.appendingPathComponent("out.m4a").path
        let process = try RunningProcess(try ExternalTool.keyframe, ["convert", input, "-o", output, "--threads", "4", "--profile", profile])
        // Once the first segments are being encoded (the input is read in well under a second).
        Subprocess.sleep(.milliseconds(1500))
        #expect(process.send(SIGINT))
        let finished = try process.wait(timeout: .seconds(60))
        #expect(finished.result.status == 1, "status \(finished.result.status): \(finished.result.standardError)")
        #expect(finished.result.standardError.contains("cancelled"), "\(finished.result.standardError)")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(left == ["long.wav"], "left behind: \(left)")
    }

    // MARK: Split, then join

    /// `ffprobe`'s packets of the audio: size and MD5 of each.
    static func packets(_ file: String) throws -> [String] {
        try ExternalTool.succeed("ffprobe", ["-v", "error", "-select_streams", "a", "-show_entries", "packet=size,data_hash", "-show_data_hash", "MD5",
                                             "-of", "csv=p=0", file]).standardOutput.split(separator: "\n").map(String.init)
    }

    @Test("split then join gives back the source: its packets, one edit, its decode (PNS included), its chapters")
    func splitThenJoinIsTheSource() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try Self.wav("in.wav", in: directory, seconds: 60)
        let episode = directory.appendingPathComponent("episode.m4a").path
        // Noise at 64k: libavcodec codes much of it as perceptual noise substitution.
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", input, "-o", episode, "--bitrate", "64k"])
        let chapters = directory.appendingPathComponent("chapters.txt")
        try Data("0:00 Intro\n0:12 Music\n0:31 Talk\n0:47 Outro\n".utf8).write(to: chapters)
        try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", episode, "--import", chapters.path])
        let parts = directory.appendingPathComponent("parts")
        try ExternalTool.succeed(try ExternalTool.keyframe, ["split", episode, "--at", "10,25,40", "-o", parts.path + "/"])
        let names = try FileManager.default.contentsOfDirectory(atPath: parts.path).sorted()
        #expect(names.count == 4)
        let joined = directory.appendingPathComponent("joined.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["join"] + names.map { parts.appendingPathComponent($0).path } + ["-o", joined])

        // The source's packet sequence, byte for byte: no pre-roll repeated at the seams.
        let source = try Self.packets(episode)
        #expect(source.count > 2500)
        #expect(try Self.packets(joined) == source)
        // FFmpeg's stream copy of it is clean (a repeated pre-roll behind edits gave
        // non-monotonic DTS at every seam).
        let copy = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", joined, "-c", "copy", "-f", "null", "-"])
        #expect(copy.status == 0 && copy.standardError.isEmpty, "\(copy.standardError)")
        // The same decode: PNS noise comes from the decoder's running generator, so only the
        // same packets in one run give the same samples.
        let a = directory.appendingPathComponent("a.wav").path, b = directory.appendingPathComponent("b.wav").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", episode, "-o", a])
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", joined, "-o", b])
        #expect(try Data(contentsOf: URL(fileURLWithPath: a)) == (try Data(contentsOf: URL(fileURLWithPath: b))))
        // Each part kept its chapters; a chapter cut by a split is one chapter again.
        func chapterList(_ file: String) throws -> [String] {
            try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_chapters", "-show_entries", "chapter=start_time:chapter_tags=title",
                                                 "-of", "csv=p=0", file]).standardOutput.split(separator: "\n").map(String.init)
        }
        let joinedChapters = try chapterList(joined)
        #expect(joinedChapters == (try chapterList(episode)), "\(joinedChapters)")
        #expect(joinedChapters.count == 4)

        // Parts of different streams keep their own pre-roll, each behind its own edit.
        let other = directory.appendingPathComponent("other.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", input, "-o", other, "--bitrate", "96k"])
        let mixed = directory.appendingPathComponent("mixed.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["join", parts.appendingPathComponent(names[0]).path, other, "-o", mixed])
        func packetCount(_ file: String) throws -> Int {
            ((try ExternalTool.probeJSON(file)["tracks"] as? [[String: Any]])?.first?["sampleCount"] as? Int) ?? -1
        }
        #expect(try packetCount(mixed) == (try packetCount(parts.appendingPathComponent(names[0]).path)) + (try packetCount(other)))
    }

    // MARK: A file cut short

    @Test("probe of a WAV cut short gives the declared and the readable length, and the damage's offset")
    func truncatedWAVIsReportedAsSuch() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let whole = try Self.wav("whole.wav", in: directory, rate: 48000, channels: 2, seconds: 4)
        let cut = directory.appendingPathComponent("cut.wav").path
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        try bytes.prefix(bytes.count / 2 + 1).write(to: URL(fileURLWithPath: cut))
        let text = try ExternalTool.succeed(try ExternalTool.keyframe, ["probe", cut]).standardOutput
        #expect(text.contains("4.000000 s declared, 1.99") && text.contains("readable"), "\(text)")
        #expect(text.contains("data chunk declares") && !text.contains("damage: none"), "\(text)")
        let report = try ExternalTool.probeJSON(cut)
        #expect((report["readableDuration"] as? Double ?? 0) < 2.0, "\(report)")
        #expect(report["damageCount"] as? Int == 1, "\(report)")
        #expect(try ExternalTool.succeed(try ExternalTool.keyframe, ["probe", whole]).standardOutput.contains("damage: none"))
    }

    @Test("an M4A cut short: probe gives the readable length beside the declared one; convert, decode and cut say where, status 3")
    func truncatedM4AIsReportedAsSuch() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try Self.wav("in.wav", in: directory, seconds: 20)
        let whole = directory.appendingPathComponent("whole.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", input, "-o", whole])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        let cut = directory.appendingPathComponent("cut.m4a").path
        try bytes.prefix(bytes.count / 4).write(to: URL(fileURLWithPath: cut))

        let report = try ExternalTool.probeJSON(cut)
        let declared = try #require(report["duration"] as? Double)
        let readable = try #require(report["readableDuration"] as? Double, "\(report)")
        #expect(abs(declared - 20) < 0.01)
        #expect(readable > 2 && readable < 8, "readable \(readable) of \(declared)")
        let text = try ExternalTool.succeed(try ExternalTool.keyframe, ["probe", cut]).standardOutput
        #expect(text.contains("declared") && text.contains("readable"), "\(text)")
        #expect(try ExternalTool.probeJSON(whole)["readableDuration"] == nil, "a whole file has no readable length of its own")

        for command in ["convert", "decode"] {
            let output = directory.appendingPathComponent("\(command).wav").path
            let run = try Self.keyframe([command, cut, "-o", output])
            #expect(run.status == 3, "\(command): status \(run.status): \(run.standardError)")
            #expect(run.standardError.contains(cut) && run.standardError.contains("byte"), "\(command): \(run.standardError)")
        }
        let packaged = try Self.keyframe(["package", cut, "--hls", directory.appendingPathComponent("hls").path])
        #expect(packaged.status == 3 && packaged.standardError.contains("warning:"), "package: \(packaged.status): \(packaged.standardError)")
        let part = directory.appendingPathComponent("part.m4a").path
        let within = try Self.keyframe(["cut", cut, "-o", part, "--start", "0.5", "--end", "2"])
        #expect(within.status == 3, "cut within the readable part: status \(within.status): \(within.standardError)")
        #expect(within.standardError.contains("the file ends at byte \(bytes.count / 4)"), "\(within.standardError)")
        #expect(abs((try ExternalTool.probeJSON(part)["duration"] as? Double ?? 0) - 1.5) < 0.001)
        let past = try Self.keyframe(["cut", cut, "-o", directory.appendingPathComponent("past.m4a").path, "--start", "15"])
        #expect(past.status == 1 && past.standardError.contains("readable samples") && past.standardError.contains(cut), "\(past.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("past.m4a").path))
        // Past the readable end: the cut ends where the file can be read to, and says so.
        let tail = try Self.keyframe(["cut", cut, "-o", directory.appendingPathComponent("tail.m4a").path, "--start", "1", "--end", "19"])
        #expect(tail.status == 3, "\(tail.standardError)")
        let tailLength = try ExternalTool.probeJSON(directory.appendingPathComponent("tail.m4a").path)["duration"] as? Double ?? 0
        #expect(tailLength < readable, "a cut past the readable end claims \(tailLength) s of \(readable) readable")
    }

    // MARK: Outputs that keep what they replace

    @Test("an output that replaces a file keeps its mode; through a link, the target is replaced and the link stays")
    func replacedOutputsKeepTheirAttributes() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try Self.wav("in.wav", in: directory, seconds: 1)
        let output = directory.appendingPathComponent("out.m4a").path
        try Data("old".utf8).write(to: URL(fileURLWithPath: output))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: output)
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", input, "-o", output])
        let attributes = try FileManager.default.attributesOfItem(atPath: output)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try ExternalTool.ffprobeAudio(output).sampleRate == 44100)

        // Through a symbolic link (a relative one, into a folder beside it).
        let store = directory.appendingPathComponent("store")
        try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true)
        let target = store.appendingPathComponent("episode.m4a").path
        try Data("old".utf8).write(to: URL(fileURLWithPath: target))
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: target)
        let link = directory.appendingPathComponent("latest.m4a").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "store/episode.m4a")
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", input, "-o", link])
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "store/episode.m4a", "the link stays a link")
        #expect(try ExternalTool.ffprobeAudio(target).sampleRate == 44100, "the target holds the new file")
        #expect((try FileManager.default.attributesOfItem(atPath: target)[.posixPermissions] as? NSNumber)?.intValue == 0o640)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.path) == ["episode.m4a"], "no temporary file left")

        // A link someone else owns (planted in a shared directory) is not followed: the link
        // itself is replaced, what it names is untouched.
        let victim = directory.appendingPathComponent("victim.txt").path
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: victim))
        let planted = directory.appendingPathComponent("planted.m4a").path
        try FileManager.default.createSymbolicLink(atPath: planted, withDestinationPath: victim)
        try ExternalTool.succeed("chown", ["-h", "nobody", planted])
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", input, "-o", planted])
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep me")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: planted)) == nil, "the planted link was replaced by the output")
        // Through a link of our own to a FIFO: refused, the FIFO stays a FIFO.
        let fifo = directory.appendingPathComponent("pipe").path
        try ExternalTool.succeed("mkfifo", [fifo])
        let toFIFO = directory.appendingPathComponent("to-fifo.m4a").path
        try FileManager.default.createSymbolicLink(atPath: toFIFO, withDestinationPath: fifo)
        let refused = try Self.keyframe(["encode", input, "-o", toFIFO])
        #expect(refused.status != 0 && refused.standardError.contains("not a regular file"), "\(refused.standardError)")
        let fifoType = try FileManager.default.attributesOfItem(atPath: fifo)[.type] as? FileAttributeType
        #expect(fifoType != .typeRegular, "the FIFO became \(String(describing: fifoType))")

        // A link (symbolic or hard) to the input is the input: refused, the input untouched.
        let before = try Data(contentsOf: URL(fileURLWithPath: input))
        let symbolic = directory.appendingPathComponent("symbolic.m4a").path
        try FileManager.default.createSymbolicLink(atPath: symbolic, withDestinationPath: input)
        let hard = directory.appendingPathComponent("hard.m4a").path
        try FileManager.default.linkItem(atPath: input, toPath: hard)
        for path in [symbolic, hard] {
            for extra in [[], ["--fragmented"]] {
                let run = try Self.keyframe(["encode", input, "-o", path] + extra)
                #expect(run.status != 0 && run.standardError.contains("is the input"), "\(path) \(extra): \(run.standardError)")
                #expect(try Data(contentsOf: URL(fileURLWithPath: input)) == before, "\(path) \(extra): the input changed")
            }
        }
    }

    // MARK: Layouts known before decoding

    @Test("an HE-AAC ladder and a looped publish from an M4A or ADTS input: the layout is known before decoding",
          arguments: ["m4a", "aac"])
    func layoutOfAACInputsIsKnownBeforeDecoding(container: String) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = try Self.wav("in.wav", in: directory, rate: 48000, seconds: 3)
        let master = directory.appendingPathComponent("master.\(container)").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", wav, "-o", master])
        let www = directory.appendingPathComponent("www").path
        let run = try Self.keyframe(["package", master, "--hls", www, "--profile", "auto", "--bitrates", "32k,64k,128k", "--json"])
        try #require(run.status == 0, "package: \(run.standardError)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.outputData) as? [String: Any])
        let codecs = (report["codecs"] as? [String: String] ?? [:]).values.sorted()
        #expect(codecs == ["mp4a.40.2", "mp4a.40.29", "mp4a.40.5"], "\(report)")
        try ExternalTool.succeed(try ExternalTool.keyframe, ["validate", www])
    }
}

/// What a new user's trial found at the seams: a mistyped directory to serve, a damaged file in
/// a batch, and a truncated file with chapters.
@Suite("the first hour: a trial's seams", .blocking)
struct TrialSeamTests {
    @Test func serveRefusesWhatIsNotADirectory() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("episode.m4a").path
        try Data("not a directory".utf8).write(to: URL(fileURLWithPath: file))
        for (path, words) in [(directory.appendingPathComponent("nosuchdir").path, "no such directory"), (file, "not a directory")] {
            let run = try FirstHourTests.keyframe(["serve", path, "--address", "127.0.0.1:\(try LocalPort.freeTCP())"])
            #expect(run.status == 2 && run.standardError.contains(words), "serve \(path): \(run.status) \(run.standardError)")
        }
        // A port in use: the system's words, once.
        let port = try LocalPort.freeTCP()
        let first = try RunningProcess(try ExternalTool.keyframe, ["serve", directory.path, "--address", "127.0.0.1:\(port)"])
        defer { first.stop() }
        try RunningProcess.waitUntil("the first server on \(port)", timeout: .seconds(90)) { LocalPort.accepts(port) }
        let busy = try FirstHourTests.keyframe(["serve", directory.path, "--address", "127.0.0.1:\(port)"])
        #expect(busy.status == 1 && busy.standardError.contains("Address already in use"), "\(busy.standardError)")
        #expect(!busy.standardError.contains("errno") && !busy.standardError.contains("bind("), "\(busy.standardError)")
    }

    @Test func aBatchSaysWhichInputWasDamagedAndExitsThree() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = try FirstHourTests.wav("in.wav", in: directory, rate: 48000, channels: 2, seconds: 6)
        let whole = directory.appendingPathComponent("whole.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", whole])
        let chapters = directory.appendingPathComponent("chapters.txt").path
        try "00:00:00.000 One\n00:00:03.000 Two\n".write(toFile: chapters, atomically: true, encoding: .utf8)
        try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", whole, "--import", chapters])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        let cut = directory.appendingPathComponent("cut.m4a").path
        try bytes.prefix(bytes.count * 6 / 10).write(to: URL(fileURLWithPath: cut))
        // probe: the file's readable length is the audio's, not the chapter track's.
        let report = try ExternalTool.probeJSON(cut)
        let audio = try #require((report["tracks"] as? [[String: Any]])?.first { $0["type"] as? String == "audio" })
        let readable = try #require(audio["readableDuration"] as? Double, "\(audio)")
        #expect(abs((report["readableDuration"] as? Double ?? 0) - readable) < 0.001, "\(report)")
        // A batch: the damaged item's line says so, and the batch exits 3.
        let out = directory.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let batch = try FirstHourTests.keyframe(["convert", wav, cut, "-o", out.path + "/", "--output-type", "wav"])
        #expect(batch.status == 3, "status \(batch.status): \(batch.standardOutput) \(batch.standardError)")
        #expect((batch.standardOutput + batch.standardError).contains("damaged input"), "\(batch.standardOutput) \(batch.standardError)")
        let json = try FirstHourTests.keyframe(["convert", wav, cut, "-o", out.path + "/", "--output-type", "wav", "--json"])
        #expect(json.status == 3)
        let lines = json.standardOutput.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let damaged = lines.first { ($0["input"] as? String) == cut }
        #expect((damaged?["damage"] as? [String])?.isEmpty == false, "\(json.standardOutput)")
        #expect(lines.first { ($0["input"] as? String) == wav }?["damage"] == nil, "\(json.standardOutput)")
        // One file: its --json carries the damage too, and the status is 3.
        let single = try FirstHourTests.keyframe(["convert", cut, "-o", directory.appendingPathComponent("one.wav").path, "--json"])
        #expect(single.status == 3, "status \(single.status): \(single.standardError)")
        let object = try JSONSerialization.jsonObject(with: Data(single.standardOutput.utf8)) as? [String: Any]
        #expect((object?["damage"] as? [String])?.isEmpty == false, "\(single.standardOutput)")
    }

    /// One vocabulary for where things go: `package -o DIR` as `--hls DIR`, `convert … -o DIR/`
    /// makes the directory as `package` does, and `tag` lists tags by the names `--set` takes.
    @Test func outputsAndTagsSpeakTheUsersWords() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try FirstHourTests.wav("first.wav", in: directory, seconds: 2)
        let second = try FirstHourTests.wav("second.wav", in: directory, seconds: 2)
        let rendition = directory.appendingPathComponent("rendition").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", first, "-o", rendition])
        #expect(FileManager.default.fileExists(atPath: rendition + "/index.m3u8"))
        let made = directory.appendingPathComponent("new/deeper").path
        let batch = try FirstHourTests.keyframe(["convert", first, second, "-o", made + "/"])
        #expect(batch.status == 0, "\(batch.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: made).sorted() == ["first.m4a", "second.m4a"])
        let tagged = made + "/first.m4a"
        try ExternalTool.succeed(try ExternalTool.keyframe, ["tag", tagged, "--set", "title=Episode 1", "--set", "album_artist=The Show"])
        let listing = try ExternalTool.succeed(try ExternalTool.keyframe, ["tag", tagged]).standardOutput
        #expect(listing.contains("title (©nam): Episode 1") && listing.contains("album_artist (aART): The Show"), "\(listing)")
    }
}

/// `--sample-rate` and `--channels` on `package` and `publish`: what is encoded, as on `convert`.
@Suite("the first hour: package and publish take the output's rate and channels", .blocking)
struct OutputLayoutTests {
    @Test func packageEncodesTheRateAndChannelsAsked() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = try FirstHourTests.wav("in.wav", in: directory, rate: 44100, channels: 2, seconds: 3)
        // One rendition, resampled and downmixed.
        let one = directory.appendingPathComponent("one").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", wav, "--hls", one, "--sample-rate", "32000", "--channels", "1"])
        let peer = try ExternalTool.ffprobeAudio(one + "/index.m3u8")
        #expect(peer.sampleRate == 32000 && peer.channels == 1, "ffprobe: \(peer)")
        // An AAC input is encoded, not copied, when a layout is asked.
        let m4a = directory.appendingPathComponent("in.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", m4a])
        let mono = directory.appendingPathComponent("mono").path
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["package", m4a, "--hls", mono, "--channels", "1", "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: run.outputData) as? [String: Any])
        #expect(report["copied"] as? Bool == false, "\(report)")
        #expect(try ExternalTool.ffprobeAudio(mono + "/index.m3u8").channels == 1)
        // A mono auto ladder: HE-AAC v1 at 32k, AAC-LC at 96k (TN2236's mono rule), all mono.
        let ladder = directory.appendingPathComponent("ladder").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", wav, "--hls", ladder, "--channels", "1", "--profile", "auto",
                                                             "--bitrates", "32k,96k"])
        let master = try String(contentsOfFile: ladder + "/master.m3u8", encoding: .utf8)
        #expect(master.contains("CODECS=\"mp4a.40.5\"") && master.contains("CODECS=\"mp4a.40.2\"") && !master.contains("mp4a.40.29"), "\(master)")
        for rendition in ["32k", "96k"] {
            let audio = try ExternalTool.ffprobeAudio(ladder + "/\(rendition)/index.m3u8")
            #expect(audio.channels == 1 && audio.sampleRate == 44100, "\(rendition): \(audio)")
        }
        // Out of range: usage errors, nothing written.
        for (option, value) in [("--channels", "9"), ("--sample-rate", "4000")] {
            let refused = try FirstHourTests.keyframe(["package", wav, "--hls", directory.appendingPathComponent("bad").path, option, value])
            #expect(refused.status == 64, "\(option) \(value): \(refused.standardError)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("bad").path))
    }

    @Test func publishEncodesTheRateAndChannelsAsked() throws {
        let server = try IcecastServer()
        defer { server.stop() }
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = try FirstHourTests.wav("in.wav", in: directory, rate: 48000, channels: 2, seconds: 20)
        let mount = "/layout.aac"
        let publisher = try RunningProcess(try ExternalTool.keyframe,
                                           ["publish", wav, "icecast://source:\(server.password)@127.0.0.1:\(server.port)\(mount)",
                                            "--sample-rate", "22050", "--channels", "1", "--json"])
        defer { publisher.stop() }
        try RunningProcess.waitUntil("the source on \(mount)", timeout: .seconds(60)) {
            server.status().contains("\"listenurl\":\"http://127.0.0.1:\(server.port)\(mount)\"")
        }
        let listened = try ExternalTool.run("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=sample_rate,channels",
                                                         "-of", "csv=p=0", "http://127.0.0.1:\(server.port)\(mount)"])
        #expect(listened.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "22050,1",
                "a listener's ffprobe: \(listened.standardOutput) \(listened.standardError)")
    }
}
