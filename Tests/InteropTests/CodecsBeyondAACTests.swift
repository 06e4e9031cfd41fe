import Foundation
import Testing
import TestSupport

/// Opus, FLAC and ALAC in MP4, each a registered codec (an encoder entry and a sample-entry
/// description), judged by FFmpeg and MediaInfo: a 10-s stereo 44.1 kHz input encodes with
/// `keyframe encode --codec`, ffprobe reads the codec and the exact length from the edit list
/// (441,000 samples, or 480,000 for Opus at 48 kHz) without a warning, FFmpeg's decode of FLAC
/// and ALAC is the input to the byte, and FFmpeg's decode of Opus starts at the input's first
/// sample (its pre-skip read from the edit list) and agrees with ours.
@Suite(.blocking) struct CodecsBeyondAACTests {
    static let codecs: [(codec: String, ffprobeName: String, mediainfoName: String, rate: Int)] = [
        ("opus", "opus", "Opus", 48000), ("flac", "flac", "FLAC", 44100), ("alac", "alac", "ALAC", 44100),
    ]

    /// The 16-bit PCM FFmpeg decodes `file` to, interleaved.
    static func ffmpegPCM(_ file: String, in directory: URL, name: String) throws -> Data {
        let raw = directory.appendingPathComponent(name).path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", file, "-f", "s16le", raw])
        return try Data(contentsOf: URL(fileURLWithPath: raw))
    }

    @Test(arguments: codecs.map(\.codec))
    func encodesToMP4AndFFmpegReadsItExactly(codec: String) throws {
        let expected = Self.codecs.first { $0.codec == codec }!
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        let m4a = directory.appendingPathComponent("out.m4a").path
        try CodecInteropTests.makeWAV(rate: 44100, channels: 2, seconds: 10, to: wav)
        let encode = try ExternalTool.succeed(try ExternalTool.keyframe, ["encode", wav, "-o", m4a, "--codec", codec])
        #expect(encode.standardOutput.contains("\(expected.mediainfoName) packets"), "\(encode.standardOutput)")

        #expect(try PeerQuirk.ffprobeWarnings(m4a).isEmpty)
        #expect(try PeerQuirk.ffmpegWarnings(m4a).isEmpty)
        let probe = try ExternalTool.run("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries",
                                                     "stream=codec_name,sample_rate,channels,duration_ts", "-of", "default=nw=1", m4a])
        let fields = Dictionary(probe.standardOutput.split(separator: "\n").compactMap { line -> (String, String)? in
            let parts = line.split(separator: "=", maxSplits: 1)
            return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
        }, uniquingKeysWith: { a, _ in a })
        #expect(fields["codec_name"] == expected.ffprobeName)
        #expect(fields["sample_rate"] == "\(expected.rate)")
        #expect(fields["channels"] == "2")
        #expect(fields["duration_ts"] == "\(expected.rate * 10)", "the edit list's length: \(fields)")

        let mediainfo = try ExternalTool.succeed("mediainfo", ["--Inform=Audio;%Format%", m4a])
        #expect(mediainfo.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == expected.mediainfoName)

        let source = try CodecInteropTests.wavPayload(wav)
        let theirs = try Self.ffmpegPCM(m4a, in: directory, name: "theirs.raw")
        let oursWAV = directory.appendingPathComponent("ours.wav").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", m4a, "-o", oursWAV])
        let ours = try CodecInteropTests.wavPayload(oursWAV)
        #expect(ours.count == expected.rate * 10 * 4, "our decode is the edit list's length")
        if codec == "opus" {
            // FFmpeg 5.1 drops the pre-skip but not the padding after the edit's end: its first
            // 480,000 samples are ours, sample for sample (the same libopus decode).
            #expect(theirs.count >= ours.count)
            #expect(theirs.prefix(ours.count) == ours, "FFmpeg's decode of the Opus track starts where ours does")
            try Self.expectAlignedAtLagZero(source: wav, decoded: ours, in: directory)
        } else {
            #expect(theirs == source, "FFmpeg's decode of the \(codec) track is the input, byte for byte")
            #expect(ours == source, "our decode of the \(codec) track is the input, byte for byte")
        }
        let validate = try ExternalTool.run(try ExternalTool.keyframe, ["validate", m4a])
        #expect(validate.status == 0, "\(validate.standardOutput)\(validate.standardError)")
    }

    /// The decode (16-bit stereo at `rate`) lines up with the source (resampled to `rate` by
    /// FFmpeg's soxr when it differs) best with no shift: the priming was dropped exactly.
    static func expectAlignedAtLagZero(source wav: String, decoded: Data, in directory: URL, rate: Int = 48000) throws {
        let resampled = directory.appendingPathComponent("reference-\(rate).raw").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", wav, "-af", "aresample=\(rate):resampler=soxr:precision=28",
                                            "-f", "s16le", resampled])
        let reference = try Data(contentsOf: URL(fileURLWithPath: resampled))
        func samples(_ data: Data) -> [Double] {
            data.withUnsafeBytes { raw in raw.bindMemory(to: Int16.self).map { Double(Int16(littleEndian: $0)) } }
        }
        let a = samples(reference), b = samples(decoded)
        let count = min(a.count, b.count) - 16
        func snr(lag: Int) -> Double {
            var signal = 0.0, noise = 0.0
            for index in stride(from: 8, to: count, by: 1) {
                let x = a[index], y = b[index + 2 * lag]
                signal += x * x
                noise += (x - y) * (x - y)
            }
            return 10 * log10(signal / max(noise, 1))
        }
        let atZero = snr(lag: 0)
        for lag in [-2, -1, 1, 2] { #expect(atZero > snr(lag: lag), "lag \(lag) fits better than lag 0") }
    }

    /// `convert` from a FLAC file: to ALAC in MP4 the decode is the source to the byte; to Opus,
    /// normalised, the loudness is measured on the decode of what was written.
    @Test func convertWritesEachCodecAndNormalisesOpus() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        let flac = directory.appendingPathComponent("in.flac").path
        try CodecInteropTests.makeWAV(rate: 44100, channels: 2, seconds: 3, to: wav)
        try ExternalTool.succeed("flac", ["--silent", "--force", "-o", flac, wav])
        let alac = directory.appendingPathComponent("alac.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", flac, "-o", alac, "--codec", "alac"])
        #expect(try Self.ffmpegPCM(alac, in: directory, name: "alac.raw") == CodecInteropTests.wavPayload(wav))

        // Normalised into each lossy codec and container: the loudness reported is the decoded
        // output's, as FFmpeg's ebur128 measures it, and within 0.5 LU of the target.
        for (name, codec) in [("opus.m4a", ["--codec", "opus"]), ("norm.mp3", []), ("norm.opus", [])] {
            let output = directory.appendingPathComponent(name).path
            let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", flac, "-o", output, "--normalize", "-16"] + codec)
            let reported = run.standardOutput.firstMatch(of: #/→ (-?[0-9.]+) LUFS, (-?[0-9.]+) dBTP decoded/#).flatMap { Double($0.output.1) }
            let loudness = try ExternalTool.run("ffmpeg", ["-nostdin", "-hide_banner", "-i", output, "-af", "ebur128", "-f", "null", "-"])
            let integrated = loudness.standardError.split(separator: "\n").last { $0.contains("I:") && $0.contains("LUFS") }
                .flatMap { line in line.split(separator: " ").compactMap { Double($0) }.first }
            #expect(integrated.map { abs($0 + 16) <= 0.5 } == true, "\(name): FFmpeg measures \(integrated.map { "\($0)" } ?? "nothing") LUFS")
            if let reported, let integrated {
                #expect(abs(reported - integrated) <= 0.2, "\(name): reported \(reported) LUFS decoded, FFmpeg measures \(integrated)")
            } else {
                Issue.record("\(name): no decoded loudness reported: \(run.standardOutput)")
            }
        }
    }

    /// Native FLAC (`.flac`): `flac -t` checks every frame and the MD5, which is the reference
    /// `flac` tool's own for the same samples; `metaflac` reads the length; the tags carried from
    /// the input read back in mutagen and ffprobe; FFmpeg's decode is the input to the byte.
    @Test func nativeFLACPassesFlacTestWithTheReferenceMD5AndTags() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let plain = directory.appendingPathComponent("plain.wav").path
        let wav = directory.appendingPathComponent("in.wav").path
        try CodecInteropTests.makeWAV(rate: 44100, channels: 2, seconds: 10, to: plain)
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", plain, "-metadata", "title=Tide Tables",
                                            "-metadata", "artist=Harbour Radio", "-c", "copy", wav])
        let ours = directory.appendingPathComponent("ours.flac").path
        let reference = directory.appendingPathComponent("reference.flac").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", wav, "-o", ours])
        try ExternalTool.succeed("flac", ["--silent", "--force", "-o", reference, wav])
        let test = try ExternalTool.run("flac", ["-t", ours])
        #expect(test.status == 0 && test.standardError.contains("ok"), "flac -t: \(test.standardError)")
        let md5 = try ExternalTool.succeed("metaflac", ["--show-md5sum", "--show-total-samples", ours]).standardOutput
        let referenceMD5 = try ExternalTool.succeed("metaflac", ["--show-md5sum", "--show-total-samples", reference]).standardOutput
        #expect(md5 == referenceMD5, "ours: \(md5) reference: \(referenceMD5)")
        #expect(md5.contains("441000"))
        #expect(try Self.ffmpegPCM(ours, in: directory, name: "ours.raw") == CodecInteropTests.wavPayload(wav))
        #expect(try PeerQuirk.ffprobeWarnings(ours).isEmpty)
        let tags = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "format_tags=title,artist", "-of", "default=nw=1", ours])
        // FLAC's field names are case-insensitive: ffprobe shows them as written (TITLE).
        #expect(tags.standardOutput.lowercased().contains("tag:title=tide tables")
                    && tags.standardOutput.lowercased().contains("tag:artist=harbour radio"), "\(tags.standardOutput)")
        #expect(try ExternalTool.succeed("metaflac", ["--show-bps", ours]).standardOutput.hasPrefix("16"), "a 16-bit input stays 16-bit")
        let mutagen = try ExternalTool.succeed(try MP4Check.venvPython, ["-c", "import mutagen.flac,sys; f=mutagen.flac.FLAC(sys.argv[1]); "
                                                             + "print(f['title'][0], '|', f['artist'][0], '|', f.info.total_samples)", ours])
        #expect(mutagen.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "Tide Tables | Harbour Radio | 441000")
    }

    /// Native FLAC carries the cover as a PICTURE block and the chapters as CHAPTERxxx fields
    /// (mutagen and ffprobe read them), and its SEEKTABLE's points each land on a frame's
    /// sync code at the sample they name.
    @Test func nativeFLACCarriesCoverChaptersAndASeekTable() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try MP3FileTests.taggedSource(in: directory)
        let flac = directory.appendingPathComponent("out.flac").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", source.m4a, "-o", flac])
        #expect(try Self.ffmpegPCM(flac, in: directory, name: "flac.raw") == CodecInteropTests.wavPayload(source.wav))
        let mutagen = try ExternalTool.succeed(try MP4Check.venvPython, ["-c", """
            import mutagen.flac, hashlib, sys
            f = mutagen.flac.FLAC(sys.argv[1])
            p = f.pictures[0]
            print(p.type, p.mime, p.width, p.height, hashlib.sha256(p.data).hexdigest())
            print(f["CHAPTER002"][0], f["CHAPTER002NAME"][0])
            data = open(sys.argv[1], "rb").read()
            # The first frame follows the last metadata block.
            at = 4
            while True:
                last, size = data[at] & 0x80, int.from_bytes(data[at + 1:at + 4], "big")
                at += 4 + size
                if last: break
            points = [s for s in f.seektable.seekpoints if s.first_sample != 0xFFFFFFFFFFFFFFFF]
            ok = all(data[at + s.byte_offset] == 0xFF and data[at + s.byte_offset + 1] & 0xFE == 0xF8 for s in points)
            print(len(points), ok, points[1].first_sample == points[0].num_samples)
            """, flac]).standardOutput
        let coverHash = try ExternalTool.succeed("sha256sum", [directory.appendingPathComponent("cover.png").path]).standardOutput.prefix(64)
        let lines = mutagen.split(separator: "\n")
        #expect(lines.first.map(String.init) == "3 image/png 64 64 \(coverHash)", "\(mutagen)")
        #expect(lines.dropFirst().first == "00:00:04.500 Harbour report", "\(mutagen)")
        // 10 s of 4,096-sample frames: the hundredths (4,410 samples apart) each fall in a frame
        // of their own (frames 0–107), a point each.
        #expect(lines.last == "100 True True", "\(mutagen)")
        let chapters = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_chapters", "-of", "compact", flac]).standardOutput
        #expect(chapters.contains("start_time=8.000000") && chapters.contains("tag:title=Tide tables"), "\(chapters)")
    }

    /// `--codec` is on every command that encodes (`encode`, `convert`, `record`, `package`, and
    /// `publish` for Icecast); a codec the output cannot hold is a usage error that names both,
    /// and nothing is written: `record` writes Opus, FLAC and ALAC into .m4a and HLS only, and
    /// never MP3.
    @Test func commandsRefuseACodecTheirOutputCannotHold() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try CodecInteropTests.makeWAV(rate: 44100, channels: 2, seconds: 0.5, to: wav)
        for (arguments, words) in [(["record", directory.appendingPathComponent("take.aac").path, "--codec", "opus"], "into .m4a"),
                                   (["record", directory.appendingPathComponent("take.m4a").path, "--codec", "mp3"], "a recording writes aac, opus")] {
            let run = try ExternalTool.run(try ExternalTool.keyframe, arguments + ["--duration", "1"])
            #expect(run.status == 64, "\(arguments): \(run.standardError)")
            #expect(run.standardError.contains("--codec") && run.standardError.contains(words), "\(run.standardError)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["in.wav"])
        // A PCM output holds no codec: asked for one, convert says where it goes.
        let pcm = try ExternalTool.run(try ExternalTool.keyframe, ["convert", wav, "-o", directory.appendingPathComponent("x.wav").path,
                                                                   "--codec", "flac"])
        #expect(pcm.status != 0 && pcm.standardError.contains(".flac"), "\(pcm.standardError)")
    }

    @Test func aCodecTheContainerCannotHoldIsRefusedNamingBoth() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try CodecInteropTests.makeWAV(rate: 44100, channels: 2, seconds: 0.5, to: wav)
        let flac = try ExternalTool.run(try ExternalTool.keyframe, ["encode", wav, "-o", directory.appendingPathComponent("x.flac").path,
                                                                    "--codec", "alac"])
        #expect(flac.status == 64)
        #expect(flac.standardError.contains("FLAC cannot hold alac"), "\(flac.standardError)")
        let adts = try ExternalTool.run(try ExternalTool.keyframe, ["encode", wav, "-o", directory.appendingPathComponent("x.aac").path,
                                                                    "--codec", "opus"])
        #expect(adts.status == 64)
        #expect(adts.standardError.contains("ADTS") && adts.standardError.contains("opus"), "\(adts.standardError)")
        let profile = try ExternalTool.run(try ExternalTool.keyframe, ["encode", wav, "-o", directory.appendingPathComponent("x.m4a").path,
                                                                       "--codec", "flac", "--profile", "he-aac"])
        #expect(profile.status == 64)
        #expect(profile.standardError.contains("--profile"), "\(profile.standardError)")
        let unknown = try ExternalTool.run(try ExternalTool.keyframe, ["encode", wav, "-o", directory.appendingPathComponent("x.m4a").path,
                                                                       "--codec", "vorbis"])
        #expect(unknown.status == 64)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("x.m4a").path))
        // A bitrate for a lossless codec, a rate the codec does not take, a codec for PCM: usage
        // errors of encode and convert alike, naming the option.
        let refused: [([String], String)] = [
            (["convert", wav, "-o", directory.appendingPathComponent("y.flac").path, "--bitrate", "128k"], "--bitrate: FLAC is lossless"),
            (["encode", wav, "-o", directory.appendingPathComponent("y.m4a").path, "--codec", "alac", "--bitrate", "256k"], "--bitrate: ALAC is lossless"),
            (["convert", wav, "-o", directory.appendingPathComponent("y.opus").path, "--sample-rate", "44100"], "--sample-rate 44100: Opus takes 48000 Hz"),
            (["convert", wav, "-o", directory.appendingPathComponent("y.wav").path, "--codec", "flac"], "holds PCM"),
        ]
        for (arguments, words) in refused {
            let run = try ExternalTool.run(try ExternalTool.keyframe, arguments)
            #expect(run.status == 64 && run.standardError.contains(words), "\(arguments): \(run.status) \(run.standardError)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["in.wav"])
    }
    /// A batch into a directory writes any type a single convert writes, each file its codec;
    /// a type it cannot write is a usage error before the directory is made.
    @Test func aBatchConvertsIntoEachNativeFormat() throws {
        let scratch = try CodecInteropTests.scratchWAV(rate: 44100, channels: 2, seconds: 1)
        defer { scratch.remove() }
        let second = scratch.directory.appendingPathComponent("second.wav").path
        try CodecInteropTests.makeWAV(rate: 48000, channels: 1, seconds: 0.5, to: second)
        for (type, codec) in [("flac", "flac"), ("mp3", "mp3"), ("opus", "opus")] {
            let directory = scratch.directory.appendingPathComponent("batch-\(type)")
            try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", scratch.wav, second, "-o", directory.path + "/", "--output-type", type])
            for name in ["in", "second"] {
                let file = directory.appendingPathComponent("\(name).\(type)").path
                let probed = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", file])
                #expect(probed.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == codec, "\(file): \(probed.standardOutput)")
                // The encoder tag names ours, not what made the input (FFmpeg's WAV says Lavf).
                let encoder = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "format_tags=encoder:stream_tags=encoder",
                                                                   "-of", "compact", file]).standardOutput.lowercased()
                #expect(encoder.contains("encoder=keyframekit (libavcodec \(codec))") && !encoder.contains("lavf"), "\(file): \(encoder)")
            }
        }
        let unknown = try ExternalTool.run(try ExternalTool.keyframe, ["convert", scratch.wav, second, "-o", scratch.directory.path + "/none/",
                                                                       "--output-type", "xyz"])
        #expect(unknown.status == 64 && unknown.standardError.contains("flac") && unknown.standardError.contains("mp3"), "\(unknown.standardError)")
        #expect(!FileManager.default.fileExists(atPath: scratch.directory.appendingPathComponent("none").path))
    }
}
