import Foundation
import Testing
import TestSupport

/// Issue 39, item 6: `validate --rules apple` against Apple's HLS Authoring Specification. Our
/// ladder passes with no finding (its init segments carry the loudness measured, `ludt`); a
/// hand-broken copy of it names each rule broken; FFmpeg's audio ladder is missing
/// AVERAGE-BANDWIDTH and INDEPENDENT-SEGMENTS.
@Suite struct AppleRulesTests {
    static func validate(_ path: String) throws -> (status: Int32, findings: [[String: Any]]) {
        let run = try ExternalTool.run(try ExternalTool.keyframe, ["validate", path, "--rules", "apple", "--json"])
        let findings = run.standardOutput.split(whereSeparator: \.isNewline).compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        return (run.status, findings)
    }

    static func rules(_ findings: [[String: Any]]) -> [String] { findings.compactMap { $0["rule"] as? String } }

    @Test func ourLadderPassesAndABrokenOneNamesEachRule() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=30:r=48000", "-ac", "2", wav])
        let ladder = directory.appendingPathComponent("ladder").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", wav, "--hls", ladder, "--bitrates", "64k,128k", "--dash"])
        let ours = try Self.validate(ladder)
        #expect(ours.status == 0 && ours.findings.isEmpty, "our ladder: \(ours.findings)")
        // The ludt: its programme loudness is the input's (FFmpeg's ebur128 within 0.5 LU).
        let ludt = try #require(try Self.ludtLoudness(ladder + "/64k/init.mp4"))
        let integrated = try Self.ffmpegLoudness(wav)
        #expect(abs(ludt - integrated) <= 0.5, "ludt says \(ludt) LUFS, ebur128 \(integrated)")

        // Broken by hand: the master without CODECS, AVERAGE-BANDWIDTH and INDEPENDENT-SEGMENTS
        // and with a BANDWIDTH twice the peak; a rendition of another target duration and no
        // playlist type; an init segment without its ludt.
        let broken = directory.appendingPathComponent("broken").path
        try FileManager.default.copyItem(atPath: ladder, toPath: broken)
        var master = try String(contentsOfFile: broken + "/master.m3u8", encoding: .utf8)
        master = master.replacingOccurrences(of: "#EXT-X-INDEPENDENT-SEGMENTS\n", with: "")
        master = master.replacingOccurrences(of: #",AVERAGE-BANDWIDTH=\d+"#, with: "", options: .regularExpression)
        master = master.replacingOccurrences(of: #",CODECS="mp4a.40.2""#, with: "", options: .regularExpression)
        master = master.replacingOccurrences(of: #"BANDWIDTH=(\d+)"#, with: "BANDWIDTH=999000", options: .regularExpression)
        try Data(master.utf8).write(to: URL(fileURLWithPath: broken + "/master.m3u8"))
        var media = try String(contentsOfFile: broken + "/64k/index.m3u8", encoding: .utf8)
        media = media.replacingOccurrences(of: "#EXT-X-TARGETDURATION:6", with: "#EXT-X-TARGETDURATION:8")
        media = media.replacingOccurrences(of: "#EXT-X-PLAYLIST-TYPE:VOD\n", with: "")
        try Data(media.utf8).write(to: URL(fileURLWithPath: broken + "/64k/index.m3u8"))
        var initSegment = [UInt8](try Data(contentsOf: URL(fileURLWithPath: broken + "/128k/init.mp4")))
        let box = try #require((0..<(initSegment.count - 4)).first { initSegment[$0..<($0 + 4)] == ArraySlice("ludt".utf8) })
        initSegment.replaceSubrange(box..<(box + 4), with: Array("free".utf8))
        try Data(initSegment).write(to: URL(fileURLWithPath: broken + "/128k/init.mp4"))
        let found = try Self.validate(broken)
        let named = Self.rules(found.findings).joined(separator: "\n")
        #expect(found.status == 1, "\(named)")
        for rule in ["9.1 (MUST)", "9.14 (MUST)", "9.11 (SHOULD)", "9.21 (MUST", "1.27 (MUST)", "8.2 (MUST)", "8.6 (MUST)", "7.5 (SHOULD)", "2.19 (SHOULD)"] {
            #expect(named.contains("Apple HLS authoring " + rule), "\(rule) is named: \(named)")
        }
    }

    /// The programme loudness an init segment's `ludt` codes, in LUFS: its first `tlou`'s
    /// first method_value (4 × (LUFS + 57.75), ISO/IEC 23003-4).
    static func ludtLoudness(_ path: String) throws -> Double? {
        let header = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        guard let at = (0..<(header.count - 4)).first(where: { header[$0..<($0 + 4)] == ArraySlice("ludt".utf8) }) else { return nil }
        // ludt type, tlou header (8) and version/flags (4), then IDs (2), peaks (3), TP system (1),
        // count (1), method_definition (1): method_value.
        return Double(header[at + 4 + 12 + 8]) / 4 - 57.75
    }

    /// FFmpeg's integrated loudness (its ebur128 filter) of what `path` decodes to.
    static func ffmpegLoudness(_ path: String) throws -> Double {
        let measured = try ExternalTool.run("ffmpeg", ["-nostdin", "-i", path, "-af", "ebur128", "-f", "null", "-"]).standardError
        return try #require(measured.components(separatedBy: "I:").last.flatMap { Double($0.trimmingCharacters(in: .whitespaces).prefix { $0 != " " }) })
    }

    /// A package made by stream copy of FFmpeg's M4A decodes the copied packets to measure them:
    /// its init segment's ludt says FFmpeg's loudness of that M4A, and Apple's rules pass; with
    /// `--no-loudness` nothing is decoded and rule 2.19 is named.
    @Test func aCopiedPackageCarriesTheLoudnessOfItsPackets() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let m4a = directory.appendingPathComponent("in.m4a").path
        // 150 s: long enough to be measured in parts.
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=f=330:d=150:r=44100", "-f", "lavfi", "-i", "anoisesrc=c=pink:d=150:r=44100:a=0.2",
                             "-filter_complex", "[0][1]amix=inputs=2,volume='if(lt(mod(t,20),10),1,0.3)':eval=frame", "-ac", "2",
                             "-c:a", "aac", "-b:a", "128k", m4a])
        let copied = directory.appendingPathComponent("copied").path
        let run = try ExternalTool.run(try ExternalTool.keyframe, ["package", m4a, "--hls", copied, "--json"])
        #expect(run.status == 0 && run.standardOutput.contains(#""copied" : true"#), "\(run.standardOutput) \(run.standardError)")
        let ours = try Self.validate(copied)
        #expect(ours.status == 0 && Self.rules(ours.findings).allSatisfy { !$0.contains("2.19") }, "\(ours.findings)")
        let ludt = try #require(try Self.ludtLoudness(copied + "/init.mp4"))
        let reference = try Self.ffmpegLoudness(m4a)
        #expect(abs(ludt - reference) <= 0.3, "ludt says \(ludt) LUFS, FFmpeg's ebur128 \(reference)")

        let bare = directory.appendingPathComponent("bare").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", m4a, "--hls", bare, "--no-loudness"])
        #expect(try Self.ludtLoudness(bare + "/init.mp4") == nil)
        #expect(Self.rules(try Self.validate(bare).findings).contains { $0.contains("2.19 (SHOULD)") })
        // An encode writes none either.
        let encoded = directory.appendingPathComponent("encoded").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", m4a, "--hls", encoded, "--bitrate", "96k", "--no-loudness"])
        #expect(try Self.ludtLoudness(encoded + "/init.mp4") == nil)
    }

    @Test func ffmpegsAudioLadderLacksAverageBandwidthAndIndependentSegments() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=20:r=48000", "-ac", "2", wav])
        let out = directory.appendingPathComponent("ffmpeg").path
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        // FFmpeg 5.1's audio-only ladder, asked for independent segments.
        try MP4Check.ffmpeg(["-i", wav, "-map", "0:a", "-map", "0:a", "-c:a", "aac", "-b:a:0", "64k", "-b:a:1", "128k", "-f", "hls", "-hls_time", "6",
                             "-hls_playlist_type", "vod", "-hls_segment_type", "fmp4", "-hls_flags", "independent_segments",
                             "-master_pl_name", "master.m3u8", "-var_stream_map", "a:0 a:1", "-hls_segment_filename", out + "/v%v/seg%d.m4s",
                             out + "/v%v/index.m3u8"])
        let found = try Self.validate(out + "/master.m3u8")
        let named = Self.rules(found.findings).joined(separator: "\n")
        #expect(named.contains("9.14 (MUST): AVERAGE-BANDWIDTH") && named.contains("9.11 (SHOULD): EXT-X-INDEPENDENT-SEGMENTS"), "\(named)")
        #expect(found.findings.filter { ($0["rule"] as? String)?.contains("9.14") == true }.count == 2, "both variants: \(named)")
    }
}
