import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Issue 36, hostile playlists: a playlist that names a directory (as its init segment or as a
/// segment) trapped probe, validate and decode with "arithmetic overflow" (a directory's length
/// read as 2⁶³ − 1), and one that names a FIFO would wait for ever for a writer. Each is now an
/// error that names the file, at once.
@Suite(.blocking) struct HostilePlaylistTests {
    /// A packaged rendition and, beside it, a directory and a FIFO.
    static func rendition(in directory: URL) throws -> URL {
        let wav = directory.appendingPathComponent("in.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=4", "-ar", "48000", "-ac", "2", wav])
        let rendition = directory.appendingPathComponent("hls")
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", wav, "--hls", rendition.path])
        try FileManager.default.createDirectory(at: rendition.appendingPathComponent("folder"), withIntermediateDirectories: true)
        #expect(mkfifo(rendition.appendingPathComponent("fifo").path, 0o644) == 0)
        return rendition
    }

    static func playlist(map: String, segment: String) -> String {
        "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:4\n#EXT-X-MAP:URI=\"\(map)\"\n#EXTINF:4.0,\n\(segment)\n#EXT-X-ENDLIST\n"
    }

    @Test(arguments: [("/", "segment-00001.m4s", "Is a directory"), ("folder", "segment-00001.m4s", "Is a directory"),
                      ("init.mp4", "folder", "Is a directory"), ("init.mp4", "fifo", "not a regular file"),
                      ("fifo", "segment-00001.m4s", "not a regular file")])
    func aPlaylistNamingWhatIsNotAFileIsAnErrorThatNamesIt(map: String, segment: String, words: String) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let rendition = try Self.rendition(in: directory)
        let playlist = rendition.appendingPathComponent("hostile.m3u8")
        try Self.playlist(map: map, segment: segment).write(to: playlist, atomically: true, encoding: .utf8)
        let named = map == "init.mp4" ? segment : map
        for arguments in [["probe", playlist.path], ["validate", playlist.path],
                          ["decode", playlist.path, "-o", directory.appendingPathComponent("out.wav").path]] {
            let process = try RunningProcess(try ExternalTool.keyframe, arguments)
            let finished = try process.wait(timeout: .seconds(60))
            let said = finished.result.standardError + finished.result.standardOutput
            #expect(finished.signal == nil, "\(arguments[0]) \(map) \(segment): ended by signal \(finished.result.status): \(said.prefix(400))")
            #expect([1, 2].contains(finished.result.status), "\(arguments[0]): status \(finished.result.status)")
            #expect(said.contains(words) && said.contains(named), "\(arguments[0]) \(map) \(segment): \(said.prefix(400))")
            #expect(!said.contains("overflow"), "\(said.prefix(400))")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("out.wav").path))
    }

    /// A playlist of more segments than the process may open files: probe, decode, convert and
    /// validate read it under `ulimit -n 40` (they held a descriptor per segment: our own
    /// package of 1,077 one-second segments failed under the usual 1,024).
    @Test func moreSegmentsThanDescriptorsAreRead() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=90", "-ar", "48000", "-ac", "2", wav])
        let rendition = directory.appendingPathComponent("hls")
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", wav, "--hls", rendition.path, "--segment-duration", "1"])
        let playlist = rendition.appendingPathComponent("index.m3u8").path
        let segments = try FileManager.default.contentsOfDirectory(atPath: rendition.path).filter { $0.hasSuffix(".m4s") }
        try #require(segments.count >= 80, "\(segments.count) segments")
        let keyframe = try ExternalTool.keyframe
        for arguments in [["probe", playlist], ["validate", playlist], ["decode", playlist, "-o", directory.appendingPathComponent("d.wav").path],
                          ["convert", playlist, "-o", directory.appendingPathComponent("c.wav").path]] {
            let line = "ulimit -n 40 && exec '\(keyframe)' " + arguments.map { "'\($0)'" }.joined(separator: " ")
            let run = try ExternalTool.run("/bin/sh", ["-c", line])
            #expect(run.status == 0, "\(arguments[0]): status \(run.status): \(run.standardError.prefix(400))")
            #expect(!run.standardError.contains("Too many open files"), "\(run.standardError.prefix(400))")
        }
        let decoded = try ExternalTool.run("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0",
                                                       directory.appendingPathComponent("d.wav").path])
        #expect(abs((Double(decoded.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) - 90) < 0.05, "\(decoded.standardOutput)")
    }

    /// A playlist that names one segment over and over costs memory for the one segment, not
    /// for each naming: validate held every fragment's samples, every finding, and a copy of
    /// every segment entry (3.8 KB per naming; 624 MB for a 6 MB playlist of 200,000). The
    /// growth from 1,000 namings to 10,000 is now under 1.5 KB a naming, the one finding per
    /// rule counted.
    @Test func aSegmentNamedThousandsOfTimesCostsLittleMemoryPerNaming() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let rendition = try Self.rendition(in: directory)
        var peaks: [Int: Int] = [:]
        for count in [1_000, 10_000] {
            var text = "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:4\n#EXT-X-MAP:URI=\"init.mp4\"\n"
            text += String(repeating: "#EXTINF:1.0,\nsegment-00001.m4s\n", count: count) + "#EXT-X-ENDLIST\n"
            let playlist = rendition.appendingPathComponent("repeated-\(count).m3u8").path
            try text.write(toFile: playlist, atomically: true, encoding: .utf8)
            // The child's peak resident set, as the kernel counts it (getrusage(2), in KiB).
            let run = try ExternalTool.run("python3", ["-c", """
                import resource, subprocess, sys
                done = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
                sys.stderr.write(done.stdout.decode(errors="replace")[-2000:])
                """, try ExternalTool.keyframe, "validate", playlist])
            let fields = run.standardOutput.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            try #require(fields.count == 2, "\(run.standardOutput) \(run.standardError)")
            #expect(fields[0] == 1, "the EXTINF durations are wrong: validate says so and exits 1")
            #expect(run.standardError.contains("(and \(count - 1) more like it in this file)"), "\(run.standardError)")
            peaks[count] = fields[1]
        }
        let perNaming = Double(peaks[10_000]! - peaks[1_000]!) * 1024 / 9_000
        #expect(perNaming < 1_500, "\(Int(perNaming)) bytes of peak memory per naming (\(peaks))")
    }
}
