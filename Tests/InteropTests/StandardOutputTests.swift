import Foundation
import Testing
import TestSupport

/// `-o -`: decode's WAV and raw PCM and demux's ADTS go to standard output as streams, the same
/// samples and packets as the file outputs, read by FFmpeg from a pipe; every other output refuses
/// `-` and never writes a file of that name.
@Suite(.blocking) struct StandardOutputTests {
    let directory: URL
    let m4a: String

    init() throws {
        directory = try ExternalTool.scratchDirectory()
        m4a = directory.appendingPathComponent("tone.m4a").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=3:sample_rate=48000",
                                            "-ac", "2", "-c:a", "aac", "-b:a", "128k", m4a])
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// `sh -c` with the keyframe executable as `$1`, for a pipe between two commands.
    func shell(_ script: String) throws -> Subprocess.Result {
        try ExternalTool.run("sh", ["-c", script, "sh", try ExternalTool.keyframe])
    }

    @Test func decodeWritesAStreamingWAVWithTheFilesSamples() throws {
        let file = path("tone.wav")
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", m4a, "-o", file])
        let streamed = try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", m4a, "-o", "-"])
        let written = try Data(contentsOf: URL(fileURLWithPath: file))
        let bytes = streamed.outputData
        // Standard output holds the WAV alone (the summary went to stderr), its sizes left as a
        // streaming writer leaves them, and the file's header and data otherwise.
        #expect(bytes.count == written.count, "streamed \(bytes.count) bytes, the file has \(written.count)")
        #expect(Array(bytes.prefix(8)) == Array("RIFF".utf8) + [0xFF, 0xFF, 0xFF, 0xFF])
        let dataTag = try #require(bytes.firstRange(of: Data("data".utf8)))
        #expect(Array(bytes[dataTag.upperBound..<dataTag.upperBound + 4]) == [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(bytes[(dataTag.upperBound + 4)...] == written[(dataTag.upperBound + 4)...], "the samples differ")
        #expect(streamed.standardError.contains("standard output: 3.000 s, 48000 Hz, 2 ch"), "\(streamed.standardError)")
        #expect(!FileManager.default.fileExists(atPath: "-"))

        // FFmpeg reads it from a pipe to the same frames as the file.
        let piped = try shell("\"$1\" decode '\(m4a)' -o - 2>/dev/null | ffmpeg -nostdin -v error -i - -f framemd5 -")
        let fromFile = try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-i", file, "-f", "framemd5", "-"])
        func hashes(_ text: String) -> [Substring] { text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: ",").last ?? "" } }
        #expect(piped.status == 0, "\(piped.standardError)")
        #expect(!hashes(piped.standardOutput).isEmpty && hashes(piped.standardOutput) == hashes(fromFile.standardOutput))
    }

    @Test func decodeWritesRawPCMWithOutputFormatPCM() throws {
        let file = path("tone.pcm")
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", m4a, "-o", file, "--format", "f32le"])
        let streamed = try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", m4a, "-o", "-", "--output-format", "pcm", "--format", "f32le"])
        #expect(streamed.outputData == (try Data(contentsOf: URL(fileURLWithPath: file))))
        #expect(streamed.outputData.count == 144_000 * 2 * 4)
        // A named output is written as its name says: --output-format is for `-` only.
        let mismatched = try ExternalTool.run(try ExternalTool.keyframe, ["decode", m4a, "-o", path("x.wav"), "--output-format", "pcm"])
        #expect(mismatched.status == 64 && mismatched.standardError.contains("--output-format pcm is for -o -"), "\(mismatched.standardError)")
    }

    @Test func demuxWritesTheFilesADTSAsAStream() throws {
        let file = path("tone.aac")
        try ExternalTool.succeed(try ExternalTool.keyframe, ["demux", m4a, "-o", file])
        let streamed = try ExternalTool.succeed(try ExternalTool.keyframe, ["demux", m4a, "-o", "-"])
        #expect(streamed.outputData == (try Data(contentsOf: URL(fileURLWithPath: file))))
        #expect(streamed.standardError.contains("standard output: track 1, 142 AAC packets"), "\(streamed.standardError)")
        let probe = try shell("\"$1\" demux '\(m4a)' -o - 2>/dev/null | ffprobe -v warning -count_packets -show_entries stream=codec_name,nb_read_packets -of csv=p=0 -")
        #expect(probe.status == 0 && probe.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "aac,142"
                && probe.standardError.isEmpty, "\(probe.standardOutput) \(probe.standardError)")
        let both = try ExternalTool.run(try ExternalTool.keyframe, ["demux", m4a, "-o", "-", "--video-output", "-"])
        #expect(both.status == 64, "\(both.standardError)")
    }

    /// A reader that stops early ends the writer by SIGPIPE, as with any Unix filter: no hang.
    @Test func aClosedPipeEndsTheJob() throws {
        let result = try shell("\"$1\" decode '\(m4a)' -o - 2>/dev/null | head -c 100 | wc -c")
        #expect(result.status == 0 && result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "100",
                "\(result.standardOutput) \(result.standardError)")
    }

    @Test(arguments: [["encode", "IN.wav", "-o", "-"], ["convert", "IN.m4a", "-o", "-"], ["cut", "IN.m4a", "-o", "-", "--start", "1"],
                      ["mux", "IN.aac", "-o", "-"], ["split", "IN.m4a", "-o", "-", "--at", "1"], ["record", "-", "--duration", "1"]])
    func outputsThatAreNotStreamsRefuseStandardOutput(_ template: [String]) throws {
        let wav = path("tone.wav")
        let aac = path("tone.aac")
        if !FileManager.default.fileExists(atPath: wav) { try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", m4a, "-o", wav]) }
        if !FileManager.default.fileExists(atPath: aac) { try ExternalTool.succeed(try ExternalTool.keyframe, ["demux", m4a, "-o", aac]) }
        let arguments = template.map { ["IN.wav": wav, "IN.m4a": m4a, "IN.aac": aac][$0] ?? $0 }
        let result = try ExternalTool.run(try ExternalTool.keyframe, arguments)
        #expect(result.status == 64, "\(arguments): \(result.status) \(result.standardError)")
        #expect(result.standardError.contains("cannot be written to standard output"), "\(result.standardError)")
        #expect(result.outputData.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: "-"))
    }
}
