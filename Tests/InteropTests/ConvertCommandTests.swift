import Foundation
import TestSupport
import Testing

/// Issue 11: `keyframe convert`. Every input kind is made by ffmpeg from a chirp-plus-noise WAV;
/// ffmpeg's own decode of that input is the referee:
/// - the M4A we write decodes (`keyframe decode`, edit list applied) to exactly as many frames
///   as ffmpeg decodes from the input, lined up at lag 0;
/// - ffmpeg reads the M4A without a warning, ffprobe sees AAC at the input's rate;
/// - ADTS output is byte-identical to `ffmpeg -c:a aac` of the same input (serial encoding);
/// - resampling matches ffmpeg's soxr in length, WAV output is bit-exact, a downmix matches
///   ffmpeg's `-ac 2`;
/// - a broken input is an error naming the file, and nothing is left behind;
/// - `keyframe validate` says nothing on the M4As (issue 21).
@Suite(.blocking) struct ConvertCommandTests {
    struct InputKind: Sendable, CustomTestStringConvertible {
        var name: String
        var fileExtension: String
        var codec: [String]
        var rate: Int
        var channels: Int
        var testDescription: String { name }
    }

    static let kinds = [
        InputKind(name: "mp3 (LAME)", fileExtension: "mp3", codec: ["-c:a", "libmp3lame", "-b:a", "128k"], rate: 44100, channels: 2),
        InputKind(name: "ogg vorbis", fileExtension: "ogg", codec: ["-c:a", "libvorbis", "-q:a", "4"], rate: 44100, channels: 2),
        InputKind(name: "ogg opus", fileExtension: "opus", codec: ["-c:a", "libopus", "-b:a", "96k"], rate: 48000, channels: 2),
        InputKind(name: "webm opus", fileExtension: "webm", codec: ["-c:a", "libopus", "-b:a", "64k"], rate: 48000, channels: 1),
        InputKind(name: "flac", fileExtension: "flac", codec: ["-c:a", "flac"], rate: 48000, channels: 2),
        InputKind(name: "alac in m4a", fileExtension: "m4a", codec: ["-c:a", "alac"], rate: 44100, channels: 2),
        InputKind(name: "aiff s24be", fileExtension: "aiff", codec: ["-c:a", "pcm_s24be"], rate: 44100, channels: 2),
        InputKind(name: "w64", fileExtension: "w64", codec: ["-c:a", "pcm_s16le"], rate: 22050, channels: 1),
    ]

    /// An input of `kind`: `frames` frames of the test signal, encoded by ffmpeg.
    static func makeInput(_ kind: InputKind, frames: Int, in directory: URL) throws -> String {
        let wav = directory.appendingPathComponent("signal.wav").path
        try GaplessTests.makeSignal(rate: kind.rate, channels: kind.channels, frames: frames, to: wav)
        let input = directory.appendingPathComponent("input.\(kind.fileExtension)").path
        try MP4Check.ffmpeg(["-i", wav] + kind.codec + [input])
        return input
    }

    /// ffmpeg's decode of `path` as 16-bit PCM.
    static func referee(_ path: String, channels: Int, in directory: URL) throws -> GaplessTests.PCM {
        let wav = directory.appendingPathComponent("referee-\(UUID().uuidString).wav").path
        try MP4Check.ffmpeg(["-i", path, "-c:a", "pcm_s16le", wav])
        return try GaplessTests.pcm(wav, channels: channels)
    }

    @Test(arguments: kinds)
    func convertsToAGaplessM4AThatHoldsExactlyTheDecodedFrames(_ kind: InputKind) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try Self.makeInput(kind, frames: kind.rate * 2 + 123, in: directory)
        let m4a = directory.appendingPathComponent("out.m4a").path
        let decoded = directory.appendingPathComponent("decoded.wav").path
        let expected = try Self.referee(input, channels: kind.channels, in: directory)

        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", input, "-o", m4a])
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", m4a, "-o", decoded])
        let ours = try GaplessTests.pcm(decoded, channels: kind.channels)
        #expect(ours.frames == expected.frames, "\(kind.name): the M4A decodes to \(ours.frames) frames, ffmpeg decodes \(expected.frames) from the input")
        let lag = GaplessTests.peakLag(expected, ours, channel: 0)
        #expect(lag == 0, "\(kind.name): the M4A lines up with ffmpeg's decode of the input at lag \(lag)")

        let check = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", m4a, "-f", "null", "-"])
        #expect(check.status == 0 && check.standardError.isEmpty, "\(kind.name): ffmpeg says \(check.standardError)")
        let probe = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,sample_rate,channels",
                                                         "-of", "compact=p=0:nk=1", m4a])
        #expect(probe.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "aac|\(kind.rate)|\(kind.channels)",
                "\(kind.name): ffprobe sees \(probe.standardOutput)")
        try ValidationCheck.expectSilent([m4a], "convert \(kind.name) -o out.m4a")
    }

    @Test func serialADTSIsByteIdenticalToFFmpegsEncoderOnTheSameInput() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for kind in [Self.kinds[0], Self.kinds[4]] {
            let input = try Self.makeInput(kind, frames: 70_000, in: directory)
            let ours = directory.appendingPathComponent("ours.aac").path
            let theirs = directory.appendingPathComponent("theirs.aac").path
            try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", input, "-o", ours, "--bitrate", "128k", "--threads", "1"])
            try MP4Check.ffmpeg(["-i", input, "-c:a", "aac", "-b:a", "128k", theirs])
            let same = FileManager.default.contentsEqual(atPath: ours, andPath: theirs)
            #expect(same, "\(kind.name): our ADTS differs from ffmpeg's")
        }
    }

    @Test func aRateAACCannotCarryIsResampledAsFFmpegsSoxrDoes() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("high.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=192000:duration=1.5", "-c:a", "pcm_s24le", input])
        let m4a = directory.appendingPathComponent("high.m4a").path
        let decoded = directory.appendingPathComponent("high-decoded.wav").path
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", input, "-o", m4a])
        #expect(run.standardOutput.contains("48000 Hz"), "\(run.standardOutput)")
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", m4a, "-o", decoded])
        let ours = try GaplessTests.pcm(decoded, channels: 1)
        let soxr = directory.appendingPathComponent("soxr.wav").path
        try MP4Check.ffmpeg(["-i", input, "-af", "aresample=resampler=soxr:precision=28", "-ar", "48000", "-c:a", "pcm_s16le", soxr])
        let theirs = try GaplessTests.pcm(soxr, channels: 1)
        #expect(ours.frames == theirs.frames && ours.frames == 72000, "ours \(ours.frames), ffmpeg's soxr \(theirs.frames), want 72000")
        try ValidationCheck.expectSilent([m4a], "convert high.wav (192 kHz) -o high.m4a")

        // --sample-rate to float WAV: the same samples as ffmpeg's soxr.
        let wav = directory.appendingPathComponent("resampled.wav").path
        let float = directory.appendingPathComponent("soxr-float.wav").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", input, "-o", wav, "--sample-rate", "48000", "--format", "f32le"])
        try MP4Check.ffmpeg(["-i", input, "-af", "aresample=resampler=soxr:precision=28", "-ar", "48000", "-c:a", "pcm_f32le", float])
        let ours32 = try Self.floats(wav), theirs32 = try Self.floats(float)
        #expect(ours32.count == theirs32.count && ours32.count == 72000)
        let worst = zip(ours32, theirs32).map { abs($0 - $1) }.max() ?? .infinity
        #expect(worst <= 1e-6, "resampled samples differ from ffmpeg's soxr by up to \(worst)")
    }

    /// A float WAV's samples (ffmpeg's decode, so the header is read by a peer).
    static func floats(_ path: String) throws -> [Float] {
        let bytes = try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-f", "f32le", "-"]).outputData
        return bytes.withUnsafeBytes { raw in (0..<(bytes.count / 4)).map { raw.loadUnaligned(fromByteOffset: 4 * $0, as: Float.self) } }
    }

    /// Reducing to 16 bits dithers: a sine of a third of an LSB, which plain rounding turns into
    /// silence, comes out as noise around it, still correlated with it.
    @Test func reducingToSixteenBitsDithers() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("faint.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "aevalsrc='(1/3)/32768*sin(2*PI*1000*t)':s=48000:d=1", "-c:a", "pcm_f32le", input])
        let output = directory.appendingPathComponent("faint16.wav").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", input, "-o", output, "--format", "s16le"])
        let samples = try GaplessTests.pcm(output, channels: 1).samples
        #expect(samples.count == 48000)
        let nonzero = samples.filter { $0 != 0 }.count
        #expect(nonzero > 4800, "only \(nonzero) of 48000 samples are not zero: no dither")
        let correlation = samples.enumerated().reduce(0.0) { $0 + Double($1.element) * sin(2 * Double.pi * 1000 * Double($1.offset) / 48000) }
        #expect(correlation > 0, "the dithered output does not follow the sine (\(correlation))")
        // Undithered rounding of the same input (ffmpeg's default) is silence: the test can fail.
        let plain = directory.appendingPathComponent("plain16.wav").path
        try MP4Check.ffmpeg(["-i", input, "-c:a", "pcm_s16le", plain])
        #expect(try GaplessTests.pcm(plain, channels: 1).samples.allSatisfy { $0 == 0 })
    }

    @Test func wavOutputIsBitExactAndADownmixIsFFmpegs() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // 24-bit FLAC → WAV: nothing lost (the decoded 32-bit samples, exactly ffmpeg's).
        let flac = directory.appendingPathComponent("deep.flac").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "aevalsrc='0.5*sin(2*PI*440*t)|0.4*sin(2*PI*660*t)':s=96000:d=1.2",
                             "-c:a", "flac", "-sample_fmt", "s32", flac])
        let wav = directory.appendingPathComponent("deep.wav").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", flac, "-o", wav])
        let ours = try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-i", wav, "-f", "s32le", "-"]).outputData
        let theirs = try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-i", flac, "-f", "s32le", "-"]).outputData
        #expect(!ours.isEmpty && ours == theirs, "the WAV's samples differ from ffmpeg's decode of the FLAC")
        // The decoder's own sample type: 24-bit FLAC decodes to 32-bit integers, 16-bit to 16.
        let codec = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", wav])
        #expect(codec.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "pcm_s32le")
        let shallow = directory.appendingPathComponent("shallow.flac").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.5", "-c:a", "flac", "-sample_fmt", "s16", shallow])
        let shallowWAV = directory.appendingPathComponent("shallow.wav").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", shallow, "-o", shallowWAV])
        let shallowCodec = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", shallowWAV])
        #expect(shallowCodec.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "pcm_s16le")

        // 5.1 → --channels 2: libswresample's ITU matrix, as `ffmpeg -ac 2` applies it.
        let surround = directory.appendingPathComponent("surround.flac").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "aevalsrc='0.2*sin(2*PI*300*t)|0.2*sin(2*PI*400*t)|0.2*sin(2*PI*500*t)|0.1*sin(2*PI*60*t)|0.2*sin(2*PI*700*t)|0.2*sin(2*PI*800*t)':s=48000:d=1:c=5.1",
                             "-c:a", "flac", surround])
        let stereo = directory.appendingPathComponent("stereo.wav").path
        let reference = directory.appendingPathComponent("reference.wav").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", surround, "-o", stereo, "--channels", "2", "--format", "s16le"])
        try MP4Check.ffmpeg(["-i", surround, "-ac", "2", "-c:a", "pcm_s16le", reference])
        let a = try GaplessTests.pcm(stereo, channels: 2), b = try GaplessTests.pcm(reference, channels: 2)
        #expect(a.frames == b.frames && a.frames == 48000)
        let worst = zip(a.samples, b.samples).map { abs(Int($0) - Int($1)) }.max() ?? Int.max
        #expect(worst <= 1, "the downmix differs from ffmpeg's -ac 2 by up to \(worst)")
        // 5.1 stays 5.1 unless asked.
        let m4a = directory.appendingPathComponent("surround.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", surround, "-o", m4a])
        let probe = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "stream=channels", "-of", "csv=p=0", m4a])
        #expect(probe.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "6")
        try ValidationCheck.expectSilent([m4a], "convert surround.flac (5.1) -o surround.m4a")
    }

    /// libavformat is loaded only by jobs that need it: glibc's loader (`LD_DEBUG=libs`) names
    /// every library a process opens, dlopen included.
    @Test func probeDemuxAndMuxNeverLoadLibavformat() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let mp3 = try Self.makeInput(Self.kinds[0], frames: 20_000, in: directory)
        let m4a = directory.appendingPathComponent("a.m4a").path
        let adts = directory.appendingPathComponent("a.aac").path
        let remuxed = directory.appendingPathComponent("b.m4a").path
        var environment = ProcessInfo.processInfo.environment
        environment["LD_DEBUG"] = "libs"
        let keyframe = try ExternalTool.keyframe
        let convert = try Subprocess.run(keyframe, ["convert", mp3, "-o", m4a], environment: environment)
        #expect(convert.status == 0 && convert.standardError.contains("libavformat.so"), "convert must load it (the check can fail)")
        for arguments in [["probe", m4a], ["demux", m4a, "-o", adts], ["mux", adts, "-o", remuxed]] {
            let run = try Subprocess.run(keyframe, arguments, environment: environment)
            #expect(run.status == 0, "\(arguments[0]): \(run.standardError.suffix(400))")
            #expect(!run.standardError.contains("libavformat.so"), "\(arguments[0]) loaded libavformat")
            #expect(!run.standardError.contains("libavcodec.so"), "\(arguments[0]) loaded libavcodec")
        }
        try ValidationCheck.expectSilent([m4a], "convert input.mp3 -o a.m4a")
        // The mux of the demuxed ADTS signals no priming: ADTS carries none (the stream copy has
        // nothing to copy it from), so validate's warning is true and expected, on it alone.
        try ValidationCheck.expectSilent([remuxed], "demux a.m4a -o a.aac, then mux a.aac -o b.m4a", allowing: [ValidationCheck.primingNotSignalled])
    }

    /// The audio track of a video file (Matroska with MPEG-4 video and FLAC audio).
    @Test func theAudioOfAVideoIsConverted() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let video = directory.appendingPathComponent("film.mkv").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=2", "-f", "lavfi", "-i", "sine=duration=2",
                             "-c:v", "mpeg4", "-c:a", "flac", video])
        let m4a = directory.appendingPathComponent("film.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", video, "-o", m4a])
        let expected = try Self.referee(video, channels: 1, in: directory)
        let decoded = directory.appendingPathComponent("film.wav").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", m4a, "-o", decoded])
        #expect(try GaplessTests.pcm(decoded, channels: 1).frames == expected.frames)
        let probe = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0", m4a])
        #expect(probe.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "audio")
        try ValidationCheck.expectSilent([m4a], "convert film.mkv -o film.m4a")
    }

    /// A container whose stream length is an estimate (PCM in AVI) is not taken for truncated.
    @Test func anEstimatedLengthIsNotHeldAgainstAWholeFile() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let avi = directory.appendingPathComponent("pcm.avi").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=duration=2.00123", "-c:a", "pcm_s16le", avi])
        let m4a = directory.appendingPathComponent("pcm.m4a").path
        let run = try ExternalTool.run(try ExternalTool.keyframe, ["convert", avi, "-o", m4a])
        #expect(run.status == 0, "\(run.standardError)")
        let expected = try Self.referee(avi, channels: 1, in: directory)
        let decoded = directory.appendingPathComponent("pcm.wav").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", m4a, "-o", decoded])
        #expect(try GaplessTests.pcm(decoded, channels: 1).frames == expected.frames)
        try ValidationCheck.expectSilent([m4a], "convert pcm.avi -o pcm.m4a")
    }

    @Test func aBrokenInputIsAnErrorNamingTheFileAndLeavesNothing() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var cases: [(name: String, path: String, says: String)] = []
        let random = directory.appendingPathComponent("random.mp3").path
        // Seeded: some random files (rarely) look like an audio stream to libavformat's probe.
        var generator = SplitMix64(state: 0x5EED_0F_F00D)
        _ = FileManager.default.createFile(atPath: random, contents: Data((0..<20_000).map { _ in UInt8.random(in: 0...255, using: &generator) }))
        cases.append(("random bytes", random, "not a media file"))
        let empty = directory.appendingPathComponent("empty.flac").path
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        cases.append(("a zero-length file", empty, "empty"))
        let flac = try Self.makeInput(Self.kinds[4], frames: 96_000, in: directory)
        let truncated = directory.appendingPathComponent("truncated.flac").path
        let whole = try Data(contentsOf: URL(fileURLWithPath: flac))
        _ = FileManager.default.createFile(atPath: truncated, contents: whole.prefix(whole.count * 6 / 10))
        cases.append(("a truncated FLAC", truncated, "truncated"))
        let zeroChannels = directory.appendingPathComponent("zero-channels.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.2", "-c:a", "pcm_s16le", zeroChannels])
        var bytes = try Data(contentsOf: URL(fileURLWithPath: zeroChannels))
        bytes[22] = 0   // fmt chunk: nChannels = 0
        bytes[23] = 0
        try bytes.write(to: URL(fileURLWithPath: zeroChannels))
        cases.append(("a 0-channel stream", zeroChannels, "channel"))
        let video = directory.appendingPathComponent("silent-film.mkv").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=1", "-c:v", "mpeg4", video])
        cases.append(("a video with no audio", video, "no audio stream"))

        for item in cases {
            let output = directory.appendingPathComponent("out-\(UUID().uuidString).m4a").path
            let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            let run = try ExternalTool.run(try ExternalTool.keyframe, ["convert", item.path, "-o", output])
            #expect(run.status != 0, "\(item.name): convert succeeded")
            #expect(run.standardError.contains(item.path), "\(item.name): the error does not name the file: \(run.standardError)")
            #expect(item.says.isEmpty || run.standardError.contains(item.says), "\(item.name): the error says \(run.standardError)")
            #expect(!run.standardError.contains("Fatal error"), "\(item.name): crashed: \(run.standardError)")
            let after = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            #expect(after == before, "\(item.name): left \(Set(after).subtracting(before))")
        }
    }
}

/// Issue 11, item 7: `keyframe convert IN… -o DIR/ --jobs N`.
@Suite(.blocking) struct BatchConvertTests {
    @Test func goodFilesConvertBrokenOnesFailAloneAndNothingHalfWrittenIsLeft() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var good: [String] = []
        for (index, kind) in [ConvertCommandTests.kinds[0], ConvertCommandTests.kinds[2], ConvertCommandTests.kinds[4]].enumerated() {
            let made = try ConvertCommandTests.makeInput(kind, frames: kind.rate + 1000 * index, in: directory)
            let named = directory.appendingPathComponent("good\(index).\(kind.fileExtension)").path
            try FileManager.default.moveItem(atPath: made, toPath: named)
            good.append(named)
        }
        let broken = directory.appendingPathComponent("broken.flac").path
        _ = FileManager.default.createFile(atPath: broken, contents: Data("fLaC but not really".utf8))
        let empty = directory.appendingPathComponent("empty.mp3").path
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        let output = directory.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)

        let run = try ExternalTool.run(try ExternalTool.keyframe, ["convert"] + [good[0], broken, good[1], empty, good[2]]
                                       + ["-o", output.path + "/", "--jobs", "2"])
        #expect(run.status != 0, "a batch with failures exits non-zero")
        #expect(run.standardError.contains(broken) && run.standardError.contains(empty), "errors name the files: \(run.standardError)")
        #expect(run.standardOutput.contains("3 of 5 converted"), "\(run.standardOutput)")
        let written = try FileManager.default.contentsOfDirectory(atPath: output.path).sorted()
        #expect(written == ["good0.m4a", "good1.m4a", "good2.m4a"], "the directory holds \(written)")
        for (index, input) in good.enumerated() {
            let m4a = output.appendingPathComponent("good\(index).m4a").path
            let decoded = directory.appendingPathComponent("check\(index).wav").path
            try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", m4a, "-o", decoded])
            let channels = [2, 2, 2][index]
            let ours = try GaplessTests.pcm(decoded, channels: channels)
            let expected = try ConvertCommandTests.referee(input, channels: channels, in: directory)
            #expect(ours.frames == expected.frames, "good\(index): \(ours.frames) frames, ffmpeg decodes \(expected.frames)")
        }
        try ValidationCheck.expectSilent(written.map { output.appendingPathComponent($0).path }, "convert good0.mp3 … good2.flac -o out/ --jobs 2")

        // --json: one object per file.
        let again = directory.appendingPathComponent("again")
        try FileManager.default.createDirectory(at: again, withIntermediateDirectories: true)
        let json = try ExternalTool.run(try ExternalTool.keyframe, ["convert", good[0], broken, "-o", again.path, "--output-type", "wav", "--json"])
        let lines = json.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(lines.count == 2 && json.status != 0, "\(json.standardOutput)")
        #expect(lines.contains { $0["input"] as? String == good[0] && $0["ok"] as? Bool == true && ($0["output"] as? String)?.hasSuffix("good0.wav") == true })
        #expect(lines.contains { $0["input"] as? String == broken && $0["ok"] as? Bool == false && $0["error"] != nil })
    }

    @Test func twoInputsWithOneOutputNameAreRefusedBeforeAnyWork() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let mp3 = try ConvertCommandTests.makeInput(ConvertCommandTests.kinds[0], frames: 20_000, in: directory)
        let flac = try ConvertCommandTests.makeInput(ConvertCommandTests.kinds[4], frames: 20_000, in: directory)
        let output = directory.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        let run = try ExternalTool.run(try ExternalTool.keyframe, ["convert", mp3, flac, "-o", output.path])
        #expect(run.status != 0 && run.standardError.contains("input.m4a"), "\(run.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: output.path).isEmpty)
    }
}

/// Issue 11, item 5: tags carried from Vorbis comments, ID3v2 and FLAC pictures into iTunes
/// `ilst` atoms, as mutagen reads them; ReplayGain written as freeform tags.
@Suite(.blocking) struct ConvertTagsTests {
    /// mutagen's view of an MP4's tags: text items, numbers, the cover's bytes (hex) and type.
    static func mutagenTags(_ path: String) throws -> [String: Any] {
        let script = """
            import json, sys, mutagen.mp4 as m
            f = m.MP4(sys.argv[1])
            out = {}
            for k, v in f.tags.items():
                if k == 'covr': out[k] = [[c.imageformat, bytes(c).hex()] for c in v]
                elif k in ('trkn', 'disk'): out[k] = [list(x) for x in v]
                elif k.startswith('----'): out[k] = [bytes(x).decode() for x in v]
                elif isinstance(v, bool): out[k] = v
                else: out[k] = list(v)
            print(json.dumps(out))
            """
        let run = try ExternalTool.succeed("python3", ["-c", script, path])
        return try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any] ?? [:]
    }

    @Test func tagsAndCoverArtBecomeITunesAtoms() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let jpeg = directory.appendingPathComponent("cover.jpg").path
        let png = directory.appendingPathComponent("cover.png").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "color=c=blue:s=32x32", "-frames:v", "1", jpeg])
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "color=c=red:s=32x32", "-frames:v", "1", png])
        let tags = ["title=Héllo Wörld", "artist=The Artist", "album=An Album", "album_artist=Various", "track=3/12", "disc=1/2",
                    "date=2024", "genre=Jazz", "comment=A comment", "composer=Comp Oser"]
        let metadata = tags.flatMap { ["-metadata", $0] }
        let expected: [String: String] = ["©nam": "Héllo Wörld", "©ART": "The Artist", "©alb": "An Album", "aART": "Various",
                                          "©day": "2024", "©gen": "Jazz", "©cmt": "A comment", "©wrt": "Comp Oser"]
        let inputs: [(name: String, arguments: [String], cover: String?, format: Int)] = [
            ("tagged.mp3", ["-i", jpeg, "-map", "0:a", "-map", "1:v", "-c:a", "libmp3lame", "-c:v", "copy", "-disposition:v", "attached_pic",
                            "-id3v2_version", "3"], jpeg, 13),
            ("tagged.flac", ["-i", png, "-map", "0:a", "-map", "1:v", "-c:a", "flac", "-c:v", "copy", "-disposition:v", "attached_pic"], png, 14),
            ("tagged.ogg", ["-c:a", "libvorbis"], nil, 0),
        ]
        for input in inputs {
            let path = directory.appendingPathComponent(input.name).path
            try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=duration=1.5"] + input.arguments + metadata + [path])
            let m4a = path + ".m4a"
            try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", path, "-o", m4a])
            let read = try Self.mutagenTags(m4a)
            for (key, value) in expected {
                #expect((read[key] as? [String])?.first == value, "\(input.name): \(key) is \(String(describing: read[key])), want \(value)")
            }
            #expect((read["trkn"] as? [[Int]])?.first == [3, 12], "\(input.name): trkn \(String(describing: read["trkn"]))")
            #expect((read["disk"] as? [[Int]])?.first == [1, 2], "\(input.name): disk \(String(describing: read["disk"]))")
            if let cover = input.cover {
                let bytes = try Data(contentsOf: URL(fileURLWithPath: cover)).map { String(format: "%02x", $0) }.joined()
                let covr = read["covr"] as? [[Any]]
                #expect(covr?.first?.first as? Int == input.format && covr?.first?.last as? String == bytes,
                        "\(input.name): covr is not the attached picture")
            }
        }
        // An M4A's own ilst (our MP4 reader) is carried too, cover included: re-convert the
        // MP3's M4A.
        let first = directory.appendingPathComponent("tagged.mp3.m4a").path
        let again = directory.appendingPathComponent("again.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", first, "-o", again])
        let before = try Self.mutagenTags(first), after = try Self.mutagenTags(again)
        for key in Array(expected.keys) + ["trkn", "disk"] {
            #expect(String(describing: before[key]) == String(describing: after[key]), "re-converted: \(key)")
        }
        #expect(String(describing: (before["covr"] as? [[Any]])?.first?.last) == String(describing: (after["covr"] as? [[Any]])?.first?.last),
                "re-converted: covr")
        // --no-tags carries none.
        let bare = directory.appendingPathComponent("bare.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", directory.appendingPathComponent("tagged.ogg").path, "-o", bare, "--no-tags"])
        #expect(try Self.mutagenTags(bare)["©nam"] == nil)
        try ValidationCheck.expectSilent(inputs.map { directory.appendingPathComponent($0.name).path + ".m4a" } + [again, bare],
                                         "convert tagged.mp3/.flac/.ogg, the MP3's M4A again, --no-tags")
    }

    @Test func replayGainIsTheGainToMinus18LUFSAndThePeak() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("music.flac").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "aevalsrc='0.3*sin(2*PI*440*t)+0.05*(2*random(0)-1)|0.2*sin(2*PI*330*t)':s=44100:d=8",
                             "-c:a", "flac", input])
        let m4a = directory.appendingPathComponent("music.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", input, "-o", m4a, "--replaygain"])
        let read = try Self.mutagenTags(m4a)
        let gainText = try #require((read["----:com.apple.iTunes:replaygain_track_gain"] as? [String])?.first)
        let peakText = try #require((read["----:com.apple.iTunes:replaygain_track_peak"] as? [String])?.first)
        #expect(gainText.hasSuffix(" dB"))
        let gain = try #require(Double(gainText.dropLast(3)))
        let peak = try #require(Double(peakText))
        let source = try LoudnessTests.ffmpegLoudness(input)
        #expect(abs(gain - (-18 - source.integrated)) <= 0.2, "gain \(gain) dB; ffmpeg measures \(source.integrated) LUFS")
        #expect(abs(20 * log10(peak) - source.truePeak) <= 0.2, "peak \(peak); ffmpeg's true peak \(source.truePeak) dBTP")
        try ValidationCheck.expectSilent([m4a], "convert music.flac -o music.m4a --replaygain")
        // Normalised to HE-AAC at 32k, encoded again to hold the ceiling: the tags are the
        // decoded output's, as FFmpeg measures it.
        let low = directory.appendingPathComponent("low.m4a").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", input, "-o", low, "--replaygain", "--normalize", "-14",
                                                             "--profile", "he-aac", "--bitrate", "32k", "--threads", "1"])
        let lowRead = try Self.mutagenTags(low)
        let lowGain = try #require(((lowRead["----:com.apple.iTunes:replaygain_track_gain"] as? [String])?.first?.dropLast(3)).flatMap { Double($0) })
        let lowPeak = try #require(((lowRead["----:com.apple.iTunes:replaygain_track_peak"] as? [String])?.first).flatMap { Double($0) })
        let decoded = try LoudnessTests.ffmpegLoudness(low)
        #expect(abs(lowGain - (-18 - decoded.integrated)) <= 0.15, "gain \(lowGain) dB; ffmpeg measures \(decoded.integrated) LUFS decoded")
        #expect(abs(20 * log10(lowPeak) - decoded.truePeak) <= 0.15, "peak \(lowPeak); ffmpeg's true peak \(decoded.truePeak) dBTP decoded")
    }
}
