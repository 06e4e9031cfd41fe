import Foundation
import Testing
import TestSupport

/// Issue 20, item 2: real media from Debian packages, read where the packages put them (never
/// copied into the repository). `make deps` installs them (`REAL_MEDIA_PACKAGES` in the Makefile,
/// plus alsa-utils). Every `keyframe` command that takes such a file runs on every one:
/// - `probe` and `probe --json` describe it: rate, channels and length as ffprobe and ffmpeg
///   see them;
/// - `decode` gives ffmpeg's samples (bit for bit from PCM, within 2 LSB from Vorbis, whose
///   float output is rounded or dithered to 16 bits);
/// - `convert` to .m4a (and `encode` for WAV) decodes to exactly as many frames as
///   `ffmpeg -i F -f wav` gives, lined up at lag 0 (normalized correlation), and ffprobe says
///   nothing about it;
/// - `probe --loudness` measures it.
@Suite(.blocking) struct RealMediaTests {
    /// A package's media: where it puts them and which kind.
    struct Source: Sendable {
        var package: String
        var directory: String
        var extensions: Set<String>
    }

    static let sources = [
        Source(package: "alsa-utils", directory: "/usr/share/sounds/alsa", extensions: ["wav"]),
        Source(package: "sound-theme-freedesktop", directory: "/usr/share/sounds/freedesktop/stereo", extensions: ["oga"]),
        Source(package: "yaru-theme-sound", directory: "/usr/share/sounds/Yaru/stereo", extensions: ["oga"]),
        Source(package: "sound-icons", directory: "/usr/share/sounds/sound-icons", extensions: ["wav"]),
        Source(package: "eiskaltdcpp-sounds", directory: "/usr/share/eiskaltdcpp/sounds", extensions: ["wav"]),
    ]

    /// One file of a package: its real path (links, like sound-icons' `at` → `cembalo-6.wav`,
    /// are read once, through their target).
    struct MediaFile: Sendable, CustomTestStringConvertible {
        var package: String
        var path: String
        var isWAV: Bool { path.hasSuffix(".wav") }
        var testDescription: String { "\(package): \(URL(fileURLWithPath: path).lastPathComponent)" }
    }

    static let files: [MediaFile] = {
        var seen = Set<String>()
        var files: [MediaFile] = []
        for source in sources {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: source.directory)) ?? []
            for name in names.sorted() {
                let path = URL(fileURLWithPath: source.directory).appendingPathComponent(name).resolvingSymlinksInPath().path
                guard source.extensions.contains(URL(fileURLWithPath: path).pathExtension.lowercased()), seen.insert(path).inserted else { continue }
                files.append(MediaFile(package: source.package, path: path))
            }
        }
        return files
    }()

    @Test func everyPackageIsInstalledAndShipsMedia() throws {
        for source in Self.sources {
            let count = Self.files.filter { $0.package == source.package }.count
            #expect(count > 0, "\(source.package): no \(source.extensions.sorted()) in \(source.directory); `make deps` installs it")
        }
        #expect(Self.files.count >= 90, "\(Self.files.count) files")
    }

    /// ffprobe's first audio stream: codec, rate, channels.
    static func ffprobeStream(_ path: String) throws -> (codec: String, sampleRate: Int, channels: Int) {
        let run = try ExternalTool.succeed("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries",
                                                       "stream=codec_name,sample_rate,channels", "-of", "json", path])
        let object = try JSONSerialization.jsonObject(with: run.outputData) as? [String: Any]
        let stream = (object?["streams"] as? [[String: Any]])?.first ?? [:]
        return (stream["codec_name"] as? String ?? "", Int(stream["sample_rate"] as? String ?? "") ?? -1, stream["channels"] as? Int ?? -1)
    }

    /// ffprobe's duration of the first audio stream, in seconds (-1 when it gives none).
    static func ffprobeDuration(_ path: String) throws -> Double {
        let run = try ExternalTool.succeed("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=duration",
                                                       "-of", "default=noprint_wrappers=1:nokey=1", path])
        return Double(run.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// ffmpeg's decode of `path` as 16-bit PCM (`-f wav`), at `rate` when given.
    static func referee(_ path: String, channels: Int, rate: Int? = nil, in directory: URL) throws -> GaplessTests.PCM {
        let wav = directory.appendingPathComponent("referee-\(UUID().uuidString).wav").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", path] + (rate.map { ["-ar", "\($0)"] } ?? [])
                                 + ["-c:a", "pcm_s16le", "-f", "wav", wav])
        return try GaplessTests.pcm(wav, channels: channels)
    }

    static func ourDecode(_ path: String, channels: Int, in directory: URL) throws -> GaplessTests.PCM {
        let wav = directory.appendingPathComponent("ours-\(UUID().uuidString).wav").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", path, "-o", wav])
        return try GaplessTests.pcm(wav, channels: channels)
    }

    /// How well `ours` lines up with `reference` on channel 0: the normalized correlation at lag
    /// 0 and the best one within ±64 samples, over 4096 frames from just before the reference's
    /// first loud sample (many of these sounds open with silence); `nil` for a silent file.
    static func alignment(_ reference: GaplessTests.PCM, _ ours: GaplessTests.PCM) -> (atZero: Double, best: Double, bestLag: Int)? {
        guard let loud = reference.samples.firstIndex(where: { abs(Int($0)) > 600 }) else { return nil }
        let start = max(64, loud / reference.channels - 256)
        let channel = { (pcm: GaplessTests.PCM) in stride(from: 0, to: pcm.samples.count, by: pcm.channels).map { Double(pcm.samples[$0]) } }
        let (x, y) = (channel(reference), channel(ours))
        let end = min(x.count, y.count - 64, start + 4096)
        guard end > start else { return nil }
        func correlation(_ lag: Int) -> Double {
            var (xy, xx, yy) = (0.0, 0.0, 0.0)
            for n in start..<end { xy += x[n] * y[n + lag]; xx += x[n] * x[n]; yy += y[n + lag] * y[n + lag] }
            return xx > 0 && yy > 0 ? xy / (xx * yy).squareRoot() : 0
        }
        let best = (-64...64).map { (lag: $0, value: correlation($0)) }.max { $0.value < $1.value }!
        return (correlation(0), best.value, best.lag)
    }

    @Test(arguments: files)
    func probeDescribesIt(_ file: MediaFile) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = try Self.ffprobeStream(file.path)
        let frames = try Self.referee(file.path, channels: stream.channels, in: directory).frames
        let text = try ExternalTool.run(try ExternalTool.keyframe, ["probe", file.path])
        #expect(text.status == 0 && text.standardOutput.contains("\(stream.sampleRate) Hz"), "probe: \(text.standardError)\(text.standardOutput)")
        let json = try ExternalTool.run(try ExternalTool.keyframe, ["probe", "--json", file.path])
        #expect(json.status == 0, "probe --json: \(json.standardError)")
        guard json.status == 0 else { return }
        let object = try JSONSerialization.jsonObject(with: json.outputData) as? [String: Any] ?? [:]
        let track = (object["tracks"] as? [[String: Any]])?.first ?? [:]
        #expect(track["type"] as? String == "audio" && track["sampleRate"] as? Int == stream.sampleRate && track["channels"] as? Int == stream.channels,
                "\(track)")
        // The length: exact where it is given in frames, else to the nearest frame.
        if let decodedFrames = track["decodedFrames"] as? Int {
            #expect(decodedFrames == frames, "decodedFrames \(decodedFrames), ffmpeg decodes \(frames)")
        }
        // The length libavformat gives (as ffprobe says it), or what ffmpeg decodes. They differ
        // for Ogg Vorbis, where ffprobe's length counts the first packet's 128 or 256 samples of
        // pre-roll that the decoder drops (FFmpeg 5.1).
        let duration = object["duration"] as? Double ?? -1
        let peerDuration = try Self.ffprobeDuration(file.path)
        let decoded = Double(frames) / Double(stream.sampleRate)
        #expect(min(abs(duration - decoded), abs(duration - peerDuration)) <= 1.0 / Double(stream.sampleRate),
                "duration \(duration) s; ffprobe says \(peerDuration) s, ffmpeg decodes \(frames) frames at \(stream.sampleRate) Hz")
        #expect((object["damageCount"] as? Int ?? 0) == 0, "\(object["damage"] ?? "")")
    }

    @Test(arguments: files)
    func decodeGivesFFmpegsSamples(_ file: MediaFile) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = try Self.ffprobeStream(file.path)
        let theirs = try Self.referee(file.path, channels: stream.channels, in: directory)
        let ours = try Self.ourDecode(file.path, channels: stream.channels, in: directory)
        #expect(ours.frames == theirs.frames, "decode: \(ours.frames) frames, ffmpeg \(theirs.frames)")
        let tolerance = stream.codec.hasPrefix("pcm_") ? 0 : 2
        let largest = zip(ours.samples, theirs.samples).reduce(0) { max($0, abs(Int($1.0) - Int($1.1))) }
        #expect(largest <= tolerance, "\(stream.codec): samples differ from ffmpeg's by up to \(largest)")
    }

    @Test(arguments: files)
    func convertAndEncodeKeepEveryFrame(_ file: MediaFile) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = try Self.ffprobeStream(file.path)
        var jobs = [("convert", directory.appendingPathComponent("converted.m4a").path)]
        if file.isWAV { jobs.append(("encode", directory.appendingPathComponent("encoded.m4a").path)) }
        for (command, m4a) in jobs {
            let run = try ExternalTool.run(try ExternalTool.keyframe, [command, file.path, "-o", m4a])
            #expect(run.status == 0, "\(command): \(run.standardError)")
            guard run.status == 0 else { continue }
            // AAC carries every rate these files have; a resampled output is held to ffmpeg's
            // decode at the output's rate.
            let output = try Self.ffprobeStream(m4a)
            #expect(output.codec == "aac" && output.channels == stream.channels, "\(command): \(output)")
            let reference = try Self.referee(file.path, channels: stream.channels, rate: output.sampleRate == stream.sampleRate ? nil : output.sampleRate,
                                             in: directory)
            let ours = try Self.ourDecode(m4a, channels: stream.channels, in: directory)
            #expect(ours.frames == reference.frames, "\(command): the M4A decodes to \(ours.frames) frames, ffmpeg -f wav gives \(reference.frames)")
            // At lag 0: as well as at any lag (a pure tone correlates at its period too). Noise-like
            // sounds (a camera shutter) keep their envelope, not their waveform, through AAC: ρ
            // can be 0.5 there, and is near 0 off by a frame.
            if let alignment = Self.alignment(reference, ours) {
                #expect(alignment.atZero > 0.3 && alignment.atZero >= alignment.best - 0.001,
                        "\(command): the M4A lines up with ffmpeg's decode at lag \(alignment.bestLag) (ρ \(alignment.best)), not 0 (ρ \(alignment.atZero))")
            }
            let warnings = try PeerQuirk.ffprobeWarnings(m4a)
            #expect(warnings.isEmpty, "\(command): ffprobe says \(warnings)")
            let decodeWarnings = try PeerQuirk.ffmpegWarnings(m4a)
            #expect(decodeWarnings.isEmpty, "\(command): ffmpeg says \(decodeWarnings)")
        }
    }

    @Test(arguments: files)
    func loudnessIsMeasured(_ file: MediaFile) throws {
        let run = try ExternalTool.run(try ExternalTool.keyframe, ["probe", "--loudness", "--json", file.path])
        #expect(run.status == 0, "\(run.standardError)")
        let object = try? JSONSerialization.jsonObject(with: run.outputData) as? [String: Any]
        let loudness = object?["loudness"] as? [String: Any]
        #expect(loudness?["truePeak"] is Double, "\(run.standardOutput)")
    }
}
