import Foundation
import TestSupport
import Testing

/// Issue 20: true 32-bit FLAC (bits per sample 32, written by the flac 1.4 tool) in
/// `keyframe convert`. FFmpeg 5.1 decodes no frame of it, so libFLAC reads it; the referee is
/// `flac -d`. Inputs are made by the `flac` tool from a 32-bit WAV ffmpeg writes (a chirp plus
/// noise, so that every bit of each sample is used):
/// - WAV and raw PCM output, in the decoded type or `--format s32le`, is bit-exact;
/// - an M4A decodes (`keyframe decode`, edit list applied) to exactly the source's frames, lined
///   up at lag 0, and carries the FLAC's tags;
/// - FLAC of 24 bits or fewer stays with libavcodec (`flac/flac`);
/// - a truncated 32-bit FLAC is an error naming the samples, and nothing is left behind.
@Suite(.blocking) struct Flac32Tests {
    static let rate = 48000
    static let channels = 2
    static let frames = 144_000 + 555

    /// `source.wav` (`bits` per sample), and `source.flac` the flac tool makes of it, with tags.
    static func makeInput(bits: Int = 32, in directory: URL) throws -> (wav: String, flac: String) {
        let wav = directory.appendingPathComponent("source.wav").path
        let left = "0.6*sin(2*PI*(150*t+1800*t*t))+0.39*(2*random(0)-1)"
        let right = "0.5*sin(2*PI*(260*t+1100*t*t))+0.49*(2*random(1)-1)"
        let seconds = Double(frames) / Double(rate) + 0.1
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "aevalsrc='\(left)|\(right)':s=\(rate):d=\(seconds)",
                             "-af", "atrim=end_sample=\(frames)", "-c:a", "pcm_s\(bits)le", "-bitexact", wav])
        let flac = directory.appendingPathComponent("source.flac").path
        try ExternalTool.succeed("flac", ["--silent", "--force", "-T", "TITLE=Thirty-two bits", "-T", "ARTIST=KeyFrameKit tests",
                                          wav, "-o", flac])
        return (wav, flac)
    }

    /// `flac -d`'s decode of `flac`: the referee's PCM, signed 32-bit little-endian.
    static func referee(_ flac: String, in directory: URL) throws -> Data {
        let wav = directory.appendingPathComponent("referee.wav").path
        try ExternalTool.succeed("flac", ["--silent", "--force", "--decode", flac, "-o", wav])
        return try CodecInteropTests.wavPayload(wav)
    }

    @Test func convertsLosslesslyToWAVAndRawPCM() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (wav, flac) = try Self.makeInput(in: directory)
        let expected = try Self.referee(flac, in: directory)
        #expect(expected.count == Self.frames * Self.channels * 4, "flac -d decodes \(expected.count) bytes")
        #expect(expected == (try CodecInteropTests.wavPayload(wav)), "flac is lossless on the source")

        for (name, extra) in [("decoded.wav", [String]()), ("s32.wav", ["--format", "s32le"]), ("decoded.pcm", []),
                              ("s32.pcm", ["--format", "s32le"])] {
            let output = directory.appendingPathComponent(name).path
            let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", flac, "-o", output] + extra)
            #expect(run.standardOutput.contains("from flac/libFLAC (\(Self.frames) frames)"), "\(name): \(run.standardOutput)")
            #expect(!run.standardError.contains("warning"), "\(name): \(run.standardError)")
            let ours = name.hasSuffix(".wav") ? try CodecInteropTests.wavPayload(output) : try Data(contentsOf: URL(fileURLWithPath: output))
            #expect(ours.count == expected.count, "\(name): \(ours.count / (Self.channels * 4)) frames, flac -d \(Self.frames)")
            let first = zip(ours, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(first == nil, "\(name): differs from flac -d from byte \(first ?? 0) on")
            if name.hasSuffix(".wav") {
                let probe = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,sample_rate,channels",
                                                                 "-of", "compact=p=0:nk=1", output])
                #expect(probe.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "pcm_s32le|\(Self.rate)|\(Self.channels)",
                        "\(name): ffprobe sees \(probe.standardOutput)")
            }
        }
    }

    @Test func convertsToAnM4AThatDecodesToExactlyTheSourcesFrames() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (_, flac) = try Self.makeInput(in: directory)
        let m4a = directory.appendingPathComponent("out.m4a").path
        let decoded = directory.appendingPathComponent("decoded.wav").path

        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", flac, "-o", m4a])
        #expect(run.standardOutput.contains("flac/libFLAC"), "\(run.standardOutput)")
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", m4a, "-o", decoded])
        let stream = try CaptureCheck.ffprobeStream(decoded)
        #expect(stream.sampleRate == Self.rate && stream.channels == Self.channels)
        #expect(stream.durationTS == Self.frames, "the M4A decodes to \(stream.durationTS ?? -1) frames; flac -d decodes \(Self.frames)")

        // Lined up with flac -d's decode at lag 0 (both as 16-bit, through ffmpeg).
        let reference = directory.appendingPathComponent("referee.wav").path
        try ExternalTool.succeed("flac", ["--silent", "--force", "--decode", flac, "-o", reference])
        let reference16 = directory.appendingPathComponent("referee16.wav").path
        let decoded16 = directory.appendingPathComponent("decoded16.wav").path
        try MP4Check.ffmpeg(["-i", reference, "-c:a", "pcm_s16le", reference16])
        try MP4Check.ffmpeg(["-i", decoded, "-c:a", "pcm_s16le", decoded16])
        let lag = GaplessTests.peakLag(try GaplessTests.pcm(reference16, channels: Self.channels),
                                       try GaplessTests.pcm(decoded16, channels: Self.channels), channel: 0)
        #expect(lag == 0, "the M4A lines up with flac -d's decode at lag \(lag)")

        // Peers read it without a word, and the FLAC's tags came along (read by libavformat).
        let check = try ExternalTool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", m4a, "-f", "null", "-"])
        #expect(check.status == 0 && check.standardError.isEmpty, "ffmpeg says \(check.standardError)")
        let tags = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "format_tags=title,artist",
                                                        "-of", "compact=p=0:nk=1", m4a])
        #expect(tags.standardOutput.contains("Thirty-two bits") && tags.standardOutput.contains("KeyFrameKit tests"),
                "ffprobe sees tags \(tags.standardOutput)")
    }

    @Test func flacOf24BitsStaysWithLibavcodec() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (_, flac) = try Self.makeInput(bits: 24, in: directory)
        let output = directory.appendingPathComponent("out.wav").path
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", flac, "-o", output, "--format", "s24le"])
        #expect(run.standardOutput.contains("from flac/flac (\(Self.frames) frames)"), "\(run.standardOutput)")
        #expect(try CodecInteropTests.wavPayload(output) == (try Self.referee(flac, in: directory)))
    }

    @Test func truncatedFileIsAnErrorNamingTheSamplesAndLeavesNothing() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (_, flac) = try Self.makeInput(in: directory)
        let whole = try Data(contentsOf: URL(fileURLWithPath: flac))
        let cut = directory.appendingPathComponent("cut.flac").path
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: cut))

        for name in ["out.wav", "out.m4a"] {
            let output = directory.appendingPathComponent(name).path
            let run = try ExternalTool.run(try ExternalTool.keyframe, ["convert", cut, "-o", output])
            #expect(run.status != 0, "\(name): convert of a truncated FLAC succeeded")
            #expect(run.standardError.contains("of the \(Self.frames) samples its STREAMINFO declares"), "\(name): \(run.standardError)")
            #expect(run.standardError.contains("cut.flac"), "\(name): the error names the file: \(run.standardError)")
            #expect(!FileManager.default.fileExists(atPath: output), "\(name) was left behind")
        }
    }
}
