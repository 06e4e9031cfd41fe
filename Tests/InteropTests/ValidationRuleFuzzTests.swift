import Foundation
import KeyFrameKit
import SystemPackage
import Testing
import TestSupport

/// The playlist and MPD rules of `keyframe validate` (HLSValidation, DASHValidation) over
/// hostile numbers: every number of a packaged ladder's master, media playlist and MPD set, one
/// at a time, to an extreme (0, 1e-15, Int64.max, past it, negative, 1e308), and the whole
/// check run in-process over the real segments. A trap fails the run; anything else is a
/// finding or a typed error. (The readers are fuzzed in HLSPlaylistDocumentTests and
/// DASHManifestTests, the segment rules in the `mp4` fuzz target; the arithmetic of the rules
/// is here: issue 21's review found three traps in it.)
@Suite(.blocking) struct ValidationRuleFuzzTests {
    static let extremes = ["0", "1e-15", "0.000000000000001", "9223372036854775807", "9223372036854775808", "18446744073709551616",
                           "-1", "1e308", "4294967295", "2147483648", "99999999999999999999"]

    @Test func extremeNumbersInPlaylistsAndManifestsGiveFindingsNotTraps() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try CodecInteropTests.makeWAV(rate: 48000, channels: 2, seconds: 4, to: wav)
        let ladder = directory.appendingPathComponent("ladder").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", wav, "--hls", ladder, "--bitrates", "32k,64k", "--segment-duration", "1", "--dash"])
        let texts = [("master.m3u8", ladder + "/master.m3u8"), ("32k/index.m3u8", ladder + "/32k/index.m3u8"), ("manifest.mpd", ladder + "/manifest.mpd")]
        let number = try NSRegularExpression(pattern: #"-?\d+(\.\d+)?"#)
        var random = SplitMix64(state: 0x21_0DA5)
        var runs = 0
        // The media playlist with low-latency numbers to mutate too (hold-backs, a part target).
        let media = try String(contentsOfFile: ladder + "/32k/index.m3u8", encoding: .utf8)
        let lowLatency = media.replacingOccurrences(of: "#EXT-X-PLAYLIST-TYPE:VOD\n", with: """
            #EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.5,HOLD-BACK=6
            #EXT-X-PART-INF:PART-TARGET=0.5
            #EXT-X-PLAYLIST-TYPE:VOD

            """)
        try lowLatency.write(toFile: ladder + "/32k/ll.m3u8", atomically: false, encoding: .utf8)
        // A master naming the mutated media playlist, so that the bit rate rules read it.
        try "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,AVERAGE-BANDWIDTH=1,CODECS=\"mp4a.40.2\"\n32k/fuzz-ll.m3u8\n"
            .write(toFile: ladder + "/fuzz-over.m3u8", atomically: false, encoding: .utf8)
        for (name, path) in texts + [("32k/ll.m3u8", ladder + "/32k/ll.m3u8")] {
            let text = try String(contentsOfFile: path, encoding: .utf8)
            let matches = number.matches(in: text, range: NSRange(text.startIndex..., in: text))
            // Every number once with a random extreme, then random pairs.
            var edits: [[NSRange]] = matches.map { [$0.range] }
            for _ in 0..<40 where matches.count > 1 {
                edits.append([matches[Int(random.next() % UInt64(matches.count))].range, matches[Int(random.next() % UInt64(matches.count))].range])
            }
            for ranges in edits {
                var mutated = text as NSString
                for range in ranges.sorted(by: { $0.location > $1.location }) where range.location + range.length <= mutated.length {
                    mutated = mutated.replacingCharacters(in: range, with: Self.extremes[Int(random.next() % UInt64(Self.extremes.count))]) as NSString
                }
                // Written beside the original, so that its relative URIs name the same files.
                let target = (path as NSString).deletingLastPathComponent + "/fuzz-" + (name as NSString).lastPathComponent
                try (mutated as String).write(toFile: target, atomically: false, encoding: .utf8)
                let checked = name == "32k/ll.m3u8" ? [FilePath(target), FilePath(ladder + "/fuzz-over.m3u8")] : [FilePath(target)]
                let reports = FileValidation.reports(for: checked)
                #expect(reports.count == checked.count, "\(name): \(ranges)")
                runs += 1
            }
        }
        #expect(runs > 100, "\(runs) mutations")
    }
}
