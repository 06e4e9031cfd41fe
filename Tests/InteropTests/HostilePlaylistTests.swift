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
@Suite struct HostilePlaylistTests {
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
}
