import Foundation
import Testing
import TestSupport

/// Issue 4, "Done means", judged by FFmpeg, ffprobe, mediainfo and mutagen on files that ffmpeg
/// writes in every mode: plain and faststart M4A, fragmented (with and without
/// `default_base_moof`), ISMV, QuickTime `.mov`, H.264 with B-frames, HEVC, two audio tracks.
///
/// - `keyframe demux` gives the same ADTS bytes as `ffmpeg -map 0:a:N -c:a copy -f adts`, and
///   `--video-output` the same Annex-B bytes as `ffmpeg -map 0:v:0 -c:v copy -f h264|hevc`;
/// - `keyframe probe --json` counts the packets ffprobe counts, per track, and agrees with it on
///   duration, audio configuration and video size;
/// - `keyframe decode` of an M4A is sample-identical to ffmpeg's decode from the first sample on
///   and ends exactly where the edit list ends;
/// - `probe --boxes` prints the box tree with offsets and sizes.
@Suite(.blocking) struct MP4InteropTests {
    @Test(arguments: MP4Fixture.allCases)
    func demuxedADTSIsByteIdenticalToFFmpegs(fixture: MP4Fixture) throws {
        try MP4Check.expectADTSMatchesFFmpeg(try fixture.path())
    }

    @Test func secondAudioTrackDemuxesLikeFFmpegsSecondAudioStream() throws {
        let file = try MP4Fixture.twoAudioTracks.path()
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let ours = directory.appendingPathComponent("ours.aac").path
        let theirs = directory.appendingPathComponent("theirs.aac").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["demux", file, "-o", ours, "--track", "2"])
        try MP4Check.ffmpeg(["-i", file, "-map", "0:a:1", "-c:a", "copy", "-f", "adts", theirs])
        try MP4Check.expectSameBytes(ours, theirs, "second audio track of \(file)")
    }

    @Test(arguments: MP4Fixture.allCases.filter { $0.videoCodec != nil })
    func demuxedVideoIsByteIdenticalToFFmpegs(fixture: MP4Fixture) throws {
        try MP4Check.expectVideoMatchesFFmpeg(try fixture.path())
    }

    @Test(arguments: MP4Fixture.allCases)
    func sampleCountsEqualFFprobesPacketCounts(fixture: MP4Fixture) throws {
        try MP4Check.expectSampleCountsMatchFFprobe(try fixture.path())
    }

    @Test(arguments: MP4Fixture.allCases)
    func probeAgreesWithFFprobe(fixture: MP4Fixture) throws {
        let file = try fixture.path()
        let report = try MP4Check.expectProbeAgreesWithFFprobe(file)
        let tracks = report["tracks"] as? [[String: Any]] ?? []
        #expect(report["fragmented"] as? Bool == fixture.isFragmented, "\(fixture)")
        // FFmpeg's AAC encoder primes with 1024 samples; its mov muxer says so in the edit list
        // (not in fragmented output, which has no edit list).
        if !fixture.isFragmented {
            for track in tracks where track["type"] as? String == "audio" {
                #expect(track["priming"] as? Int == 1024, "\(fixture): \(track)")
            }
        }
        // The encoder tag: ilst ©too in MP4/M4A; a QuickTime movie carries udta ©swr instead.
        let tags = report["tags"] as? [String: String] ?? [:]
        let tag = fixture == .quickTime ? "©swr" : "©too"
        #expect(tags[tag]?.hasPrefix("Lavf") == true, "\(fixture): tags \(tags)")
    }

    /// mediainfo and mutagen read our audio duration (within 0.05 s; mutagen reports the media
    /// duration, priming included, which is 1024/44100 s longer).
    @Test(arguments: [MP4Fixture.m4a, .m4aFaststart, .quickTime])
    func mediainfoAndMutagenAgreeOnTheAudioDuration(fixture: MP4Fixture) throws {
        let file = try fixture.path()
        let report = try ExternalTool.probeJSON(file)
        let audio = try #require((report["tracks"] as? [[String: Any]])?.first { $0["type"] as? String == "audio" })
        let ours = try #require(audio["duration"] as? Double)
        let info = try ExternalTool.succeed("mediainfo", ["--Output=JSON", file])
        let object = try JSONSerialization.jsonObject(with: info.outputData) as? [String: Any]
        let infoTracks = (object?["media"] as? [String: Any])?["track"] as? [[String: Any]] ?? []
        let infoAudio = try #require(infoTracks.first { $0["@type"] as? String == "Audio" }, "mediainfo: \(info.standardOutput)")
        let infoSeconds = try #require(Double(infoAudio["Duration"] as? String ?? ""))
        #expect(abs(infoSeconds - ours) <= 0.05, "mediainfo \(infoSeconds) s, ours \(ours) s")
        let mutagen = try ExternalTool.succeed(MP4Check.venvPython,
            ["-c", "import mutagen.mp4,sys; print(mutagen.mp4.MP4(sys.argv[1]).info.length)", file])
        let mutagenSeconds = try #require(Double(mutagen.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(abs(mutagenSeconds - ours) <= 0.05, "mutagen \(mutagenSeconds) s, ours \(ours) s")
    }

    /// A WAV of exactly N samples, encoded to M4A by ffmpeg: our decode has exactly N samples
    /// (the edit list applied at both ends) and equals ffmpeg's decode, which keeps the padding
    /// at the end (FFmpeg 5.1 applies only an edit list's start), from the first sample on.
    @Test(arguments: [
        DecodeCase(rate: 44100, channels: 1, frames: 44100),       // not a multiple of 1024, a whole ms
        DecodeCase(rate: 44100, channels: 2, frames: 45056),       // 44 × 1024
        DecodeCase(rate: 48000, channels: 1, frames: 48128),       // 47 × 1024
        DecodeCase(rate: 48000, channels: 2, frames: 48000),       // a whole second
        DecodeCase(rate: 44100, channels: 2, frames: 45000),       // not a multiple of 1024 nor of a ms
        DecodeCase(rate: 48000, channels: 1, frames: 47000),       // 979.1666… ms
    ])
    func decodeOfFFmpegsM4AIsExactAndMatchesFFmpeg(sample: DecodeCase) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        let m4a = directory.appendingPathComponent("in.m4a").path
        let ours = directory.appendingPathComponent("ours.wav").path
        let theirs = directory.appendingPathComponent("theirs.wav").path
        try MP4Check.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=523:sample_rate=\(sample.rate)",
                             "-f", "lavfi", "-i", "anoisesrc=a=0.05:r=\(sample.rate):seed=11",
                             "-filter_complex", "[0][1]amix=inputs=2:normalize=0,atrim=end_sample=\(sample.frames)",
                             "-ac", "\(sample.channels)", "-c:a", "pcm_s16le", wav])
        let bytesPerFrame = 2 * sample.channels
        #expect(try CodecInteropTests.wavPayload(wav).count == sample.frames * bytesPerFrame, "the input WAV has N samples")
        try MP4Check.ffmpeg(["-i", wav, "-c:a", "aac", m4a])
        try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", m4a, "-o", ours])
        try MP4Check.ffmpeg(["-i", m4a, theirs])
        let a = try CodecInteropTests.wavPayload(ours)
        let b = try CodecInteropTests.wavPayload(theirs)
        #expect(a.count / bytesPerFrame == sample.frames, "ours has \(a.count / bytesPerFrame) samples, the input \(sample.frames)")
        #expect(b.count >= a.count && b.count / bytesPerFrame - sample.frames <= 1023,
                "ffmpeg's has \(b.count / bytesPerFrame) samples")
        // probe says the same: 1024 of priming, and the samples between priming and remainder are N.
        let track = try #require((try ExternalTool.probeJSON(m4a)["tracks"] as? [[String: Any]])?.first)
        let priming = track["priming"] as? Int ?? -1, remainder = track["remainder"] as? Int ?? -1
        let decoded = track["decodedFrames"] as? Int ?? -1
        #expect(priming == 1024 && decoded - priming - remainder == sample.frames,
                "probe: decodedFrames \(decoded), priming \(priming), remainder \(remainder); N = \(sample.frames)")
        let common = min(a.count, b.count)
        let firstDifference = zip([UInt8](a.prefix(common)), [UInt8](b.prefix(common))).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(firstDifference == nil, "first differing byte of the PCM: \(firstDifference ?? -1) of \(common)")
    }

    @Test(arguments: [MP4Fixture.m4a, .m4aFaststart, .quickTime, .h264])
    func boxTreeShowsTheAudioSampleDescription(fixture: MP4Fixture) throws {
        let file = try fixture.path()
        let result = try ExternalTool.run(try ExternalTool.keyframe, ["probe", "--boxes", file])
        #expect(result.status == 0, "probe --boxes \(fixture): \(result.standardError)")
        let lines = MP4Check.boxLines(result.standardOutput)
        for type in ["moov", "trak", "mdia", "minf", "stbl", "stsd", "mp4a", "esds"] {
            #expect(lines.contains { $0.type == type }, "\(fixture): no [\(type)] line in\n\(result.standardOutput)")
        }
        // Nesting: every mp4a sits at moov/trak/mdia/minf/stbl/stsd/mp4a, inside each of its
        // ancestors, and has an esds below it (QuickTime puts it in mp4a/wave).
        for (index, line) in lines.enumerated() where line.type == "mp4a" && line.depth == 6 {
            let ancestors = MP4Check.ancestors(of: index, in: lines)
            #expect(ancestors.map(\.type) == ["moov", "trak", "mdia", "minf", "stbl", "stsd"], "\(fixture): mp4a under \(ancestors)")
            for (outer, inner) in zip(ancestors, ancestors.dropFirst() + [line]) {
                #expect(inner.offset >= outer.offset + 8 && inner.offset + inner.size <= outer.offset + outer.size,
                        "\(fixture): [\(inner.type)] \(inner) does not lie inside [\(outer.type)] \(outer)")
            }
            let below = lines[(index + 1)...].prefix { $0.depth > line.depth }
            #expect(below.contains { $0.type == "esds" }, "\(fixture): no esds under the mp4a at \(line.offset)")
        }
        // The top-level boxes are where the file has them.
        let top = try MP4Check.topLevelBoxes(of: file)
        #expect(lines.filter { $0.depth == 0 }.map { "\($0.type)@\($0.offset)+\($0.size)" } == top.map { "\($0.type)@\($0.offset)+\($0.size)" })
    }

    @Test(arguments: MP4Fixture.allCases.filter(\.isFragmented))
    func boxTreeOfAFragmentedFileShowsItsFragments(fixture: MP4Fixture) throws {
        let file = try fixture.path()
        let result = try ExternalTool.run(try ExternalTool.keyframe, ["probe", "--boxes", file])
        #expect(result.status == 0, "probe --boxes \(fixture): \(result.standardError)")
        let lines = MP4Check.boxLines(result.standardOutput)
        for type in ["moov", "mvex", "trex", "moof", "mfhd", "traf", "tfhd", "trun"] {
            #expect(lines.contains { $0.type == type }, "\(fixture): no [\(type)] line")
        }
        let moofs = try MP4Check.topLevelBoxes(of: file).filter { $0.type == "moof" }
        #expect(lines.filter { $0.type == "moof" && $0.depth == 0 }.map(\.offset) == moofs.map(\.offset))
        #expect(lines.filter { $0.type == "traf" }.allSatisfy { $0.depth == 1 })
        #expect(lines.filter { $0.type == "trun" }.allSatisfy { $0.depth == 2 })
    }
}

/// One decode case: an input WAV of `frames` samples.
struct DecodeCase: Sendable, CustomTestStringConvertible {
    var rate: Int
    var channels: Int
    var frames: Int
    var testDescription: String { "\(rate) Hz \(channels) ch \(frames) samples" }
}

/// The files ffmpeg writes in the modes issue 4 names, from lavfi sources (1.5 s), made once per
/// test process in one temporary folder (removed at exit).
enum MP4Fixture: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case m4a, m4aFaststart, fragmented, fragmentedDefaultBaseMoof, fragmentedAudio, ismv, quickTime, h264, hevc, twoAudioTracks

    var testDescription: String { rawValue }

    var fileName: String {
        switch self {
        case .m4a: "plain.m4a"
        case .m4aFaststart: "faststart.m4a"
        case .fragmented: "fragmented.mp4"
        case .fragmentedDefaultBaseMoof: "fragmented-dbm.mp4"
        case .fragmentedAudio: "fragmented-audio.m4a"
        case .ismv: "smooth.ismv"
        case .quickTime: "quicktime.mov"
        case .h264: "h264-bframes.mp4"
        case .hevc: "hevc.mp4"
        case .twoAudioTracks: "two-audio.mp4"
        }
    }

    var videoCodec: String? {
        switch self {
        case .fragmented, .fragmentedDefaultBaseMoof, .h264: "h264"
        case .hevc: "hevc"
        default: nil
        }
    }

    var isFragmented: Bool { [.fragmented, .fragmentedDefaultBaseMoof, .fragmentedAudio, .ismv].contains(self) }

    /// ffmpeg's arguments after `-y`.
    var ffmpegArguments: [String] {
        let audio = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=1.5"]
        let video = ["-f", "lavfi", "-i", "testsrc=size=160x120:rate=25:duration=1.5"]
        let h264 = ["-c:v", "libx264", "-preset", "veryfast", "-bf", "2", "-g", "12", "-pix_fmt", "yuv420p"]
        let aac = ["-c:a", "aac"]
        switch self {
        case .m4a: return audio + aac
        case .m4aFaststart: return audio + aac + ["-movflags", "+faststart"]
        case .fragmented: return video + audio + h264 + aac + ["-movflags", "frag_keyframe+empty_moov"]
        case .fragmentedDefaultBaseMoof: return video + audio + h264 + aac + ["-movflags", "frag_keyframe+empty_moov+default_base_moof"]
        case .fragmentedAudio: return audio + aac + ["-movflags", "frag_keyframe+empty_moov+default_base_moof"]
        case .ismv: return audio + aac + ["-f", "ismv"]
        case .quickTime: return audio + aac
        case .h264: return video + audio + h264 + aac
        case .hevc: return video + audio + ["-c:v", "libx265", "-preset", "veryfast", "-x265-params", "log-level=error:bframes=2",
                                           "-pix_fmt", "yuv420p"] + aac
        case .twoAudioTracks:
            return audio + ["-f", "lavfi", "-i", "sine=frequency=880:sample_rate=48000:duration=1.5"] + ["-map", "0", "-map", "1"] + aac
        }
    }

    /// The folder with every fixture, made on first use.
    private static let made: Result<URL, ExternalTool.ToolFailure> = {
        do {
            let directory = try ExternalTool.scratchDirectory()
            MP4Fixture.folderToRemove = directory.path
            atexit { if let path = MP4Fixture.folderToRemove { try? FileManager.default.removeItem(atPath: path) } }
            for fixture in MP4Fixture.allCases {
                try MP4Check.ffmpeg(fixture.ffmpegArguments + [directory.appendingPathComponent(fixture.fileName).path])
            }
            return .success(directory)
        } catch let error as ExternalTool.ToolFailure {
            return .failure(error)
        } catch {
            return .failure(ExternalTool.ToolFailure(description: "making the ffmpeg fixtures: \(error)"))
        }
    }()
    nonisolated(unsafe) private static var folderToRemove: String?

    /// The fixture's path (ffmpeg makes every fixture the first time one is asked for).
    func path() throws -> String {
        try Self.made.get().appendingPathComponent(fileName).path
    }
}

/// The comparisons, shared by the ffmpeg-made files, the corpus and the hostile-input suite.
enum MP4Check {
    /// The repository root, from this file's path.
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The project venv's Python (mutagen): `make deps` makes it.
    static var venvPython: String {
        get throws {
            let path = repositoryRoot.appendingPathComponent(".venv/bin/python").path
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw ExternalTool.ToolFailure(description: "\(path) is missing: run `make deps` (the venv with mutagen)")
            }
            return path
        }
    }

    /// Runs ffmpeg quietly, overwriting; it must succeed.
    @discardableResult
    static func ffmpeg(_ arguments: [String]) throws -> ExternalTool.Result {
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y"] + arguments)
    }

    static func expectSameBytes(_ ours: String, _ theirs: String, _ what: String,
                                sourceLocation: SourceLocation = #_sourceLocation) throws {
        let a = try Data(contentsOf: URL(fileURLWithPath: ours))
        let b = try Data(contentsOf: URL(fileURLWithPath: theirs))
        let first = zip([UInt8](a), [UInt8](b)).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? (a.count == b.count ? nil : min(a.count, b.count))
        #expect(first == nil, "\(what): ours (\(a.count) bytes) and ffmpeg's (\(b.count) bytes) differ at byte \(first ?? -1)",
                sourceLocation: sourceLocation)
    }

    // MARK: - ffprobe

    /// ffprobe's streams, packets counted (`nb_read_packets`).
    static func ffprobeStreams(_ file: String) throws -> [[String: Any]] {
        let result = try ExternalTool.succeed("ffprobe", ["-v", "error", "-count_packets", "-show_entries",
            "stream=index,codec_type,codec_name,nb_read_packets,sample_rate,channels,profile,width,height:stream_side_data=rotation",
            "-of", "json", file])
        let object = try JSONSerialization.jsonObject(with: result.outputData) as? [String: Any]
        return object?["streams"] as? [[String: Any]] ?? []
    }

    /// ffprobe's format duration in seconds, when it has one.
    static func ffprobeDuration(_ file: String) throws -> Double? {
        let result = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", file])
        return Double(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The end of the last packet (pts + duration) over all streams, for files whose container
    /// durations mislead ffprobe.
    static func ffprobePacketEnd(_ file: String) throws -> Double {
        let result = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "packet=pts_time,duration_time", "-of", "csv=p=0", file])
        return result.standardOutput.split(separator: "\n").compactMap { line -> Double? in
            let fields = line.split(separator: ",").compactMap { Double($0) }
            return fields.count == 2 ? fields[0] + fields[1] : nil
        }.max() ?? 0
    }

    static func packets(_ stream: [String: Any]) -> Int {
        Int(stream["nb_read_packets"] as? String ?? "") ?? 0
    }

    /// The index among audio streams of the first AAC stream (ffmpeg's `0:a:N`).
    static func firstAACAudioIndex(_ streams: [[String: Any]]) -> Int? {
        streams.filter { $0["codec_type"] as? String == "audio" }.firstIndex { $0["codec_name"] as? String == "aac" }
    }

    static func rotation(_ stream: [String: Any]) -> Int {
        ((stream["side_data_list"] as? [[String: Any]])?.compactMap { $0["rotation"] as? Int }.first) ?? 0
    }

    // MARK: - The checks

    /// `keyframe demux IN -o OUT.aac` equals `ffmpeg -i IN -map 0:a:N -c:a copy -f adts OUT`; a
    /// file without an AAC track is a clear error that leaves no output.
    static func expectADTSMatchesFFmpeg(_ file: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let ours = directory.appendingPathComponent("ours.aac").path
        let theirs = directory.appendingPathComponent("theirs.aac").path
        let ourRun = try ExternalTool.run(try ExternalTool.keyframe, ["demux", file, "-o", ours])
        guard let index = firstAACAudioIndex(try ffprobeStreams(file)) else {
            #expect(ourRun.status != 0, "\(file) has no AAC track, yet demux succeeded", sourceLocation: sourceLocation)
            #expect(!FileManager.default.fileExists(atPath: ours), "a failed demux left \(ours)", sourceLocation: sourceLocation)
            return
        }
        try ffmpeg(["-i", file, "-map", "0:a:\(index)", "-c:a", "copy", "-f", "adts", theirs])
        // 3: done with damage (a file cut short), said on stderr.
        #expect(ourRun.status == 0 || (ourRun.status == 3 && ourRun.standardError.contains("warning:")),
                "keyframe demux \(file): \(ourRun.standardError)", sourceLocation: sourceLocation)
        guard ourRun.status == 0 else { return }
        try expectSameBytes(ours, theirs, "ADTS of \(file)", sourceLocation: sourceLocation)
    }

    /// `keyframe demux IN --video-output OUT.h264|.h265` equals ffmpeg's `-c:v copy -f h264|hevc`.
    static func expectVideoMatchesFFmpeg(_ file: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let video = try #require(try ffprobeStreams(file).first { $0["codec_type"] as? String == "video" }, sourceLocation: sourceLocation)
        let hevc = video["codec_name"] as? String == "hevc"
        let ours = directory.appendingPathComponent(hevc ? "ours.h265" : "ours.h264").path
        let theirs = directory.appendingPathComponent(hevc ? "theirs.h265" : "theirs.h264").path
        let ourRun = try ExternalTool.run(try ExternalTool.keyframe, ["demux", file, "--video-output", ours])
        try ffmpeg(["-i", file, "-map", "0:v:0", "-c:v", "copy", "-f", hevc ? "hevc" : "h264", theirs])
        #expect(ourRun.status == 0 || (ourRun.status == 3 && ourRun.standardError.contains("warning:")),
                "keyframe demux --video-output \(file): \(ourRun.standardError)", sourceLocation: sourceLocation)
        guard ourRun.status == 0 || ourRun.status == 3 else { return }
        try expectSameBytes(ours, theirs, "\(hevc ? "HEVC" : "H.264") of \(file)", sourceLocation: sourceLocation)
    }

    /// `tracks[].sampleCount` equals ffprobe's packet count, track by track in stream order.
    @discardableResult
    static func expectSampleCountsMatchFFprobe(_ file: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let streams = try ffprobeStreams(file)
        let report = try ExternalTool.probeJSON(file)
        let tracks = report["tracks"] as? [[String: Any]] ?? []
        #expect(tracks.count == streams.count, "\(file): \(tracks.count) tracks, ffprobe \(streams.count) streams", sourceLocation: sourceLocation)
        for (track, stream) in zip(tracks, streams) {
            #expect(track["type"] as? String == stream["codec_type"] as? String, "\(file): \(track) vs \(stream)", sourceLocation: sourceLocation)
            #expect(track["sampleCount"] as? Int == packets(stream),
                    "\(file) track \(track["id"] ?? "?"): sampleCount \(track["sampleCount"] ?? "nil"), ffprobe \(packets(stream)) packets",
                    sourceLocation: sourceLocation)
        }
        return report
    }

    /// `probe --json`: format, duration (±0.05 s of ffprobe's), type and codec of every track,
    /// audio rate/channels/profile, priming from the edit list, video size after the transform.
    @discardableResult
    static func expectProbeAgreesWithFFprobe(_ file: String, referenceDuration: Double? = nil,
                                             sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let streams = try ffprobeStreams(file)
        let report = try ExternalTool.probeJSON(file)
        #expect(report["format"] as? String == "mp4", sourceLocation: sourceLocation)
        let duration = report["duration"] as? Double ?? -1
        if let reference = try referenceDuration ?? ffprobeDuration(file) {
            #expect(abs(duration - reference) <= 0.05, "\(file): duration \(duration) s, ffprobe \(reference) s", sourceLocation: sourceLocation)
        }
        let tracks = report["tracks"] as? [[String: Any]] ?? []
        let edits = try BMFFScan.mediaTimes(of: file)
        #expect(tracks.count == streams.count, sourceLocation: sourceLocation)
        for (position, (track, stream)) in zip(tracks, streams).enumerated() {
            let codec = stream["codec_name"] as? String
            #expect(track["type"] as? String == stream["codec_type"] as? String, "\(file): \(track)", sourceLocation: sourceLocation)
            #expect(track["codec"] as? String == codec, "\(file): \(track) vs ffprobe \(stream)", sourceLocation: sourceLocation)
            if codec == "aac" {
                #expect(track["sampleRate"] as? Int == Int(stream["sample_rate"] as? String ?? ""), "\(file): \(track)", sourceLocation: sourceLocation)
                #expect(track["channels"] as? Int == stream["channels"] as? Int, "\(file): \(track)", sourceLocation: sourceLocation)
                #expect(track["profile"] as? String == stream["profile"] as? String, "\(file): \(track)", sourceLocation: sourceLocation)
            }
            if track["type"] as? String == "audio", position < edits.count, let mediaTime = edits[position] {
                #expect(track["priming"] as? Int == Int(mediaTime), "\(file): priming \(track["priming"] ?? "nil"), elst media_time \(mediaTime)",
                        sourceLocation: sourceLocation)
            }
            if track["type"] as? String == "video" {
                let width = stream["width"] as? Int ?? -1, height = stream["height"] as? Int ?? -1
                let turned = abs(rotation(stream)) == 90
                #expect(track["width"] as? Int == (turned ? height : width) && track["height"] as? Int == (turned ? width : height),
                        "\(file): \(track["width"] ?? "nil")x\(track["height"] ?? "nil"), ffprobe \(width)x\(height) rotation \(rotation(stream))",
                        sourceLocation: sourceLocation)
            }
        }
        return report
    }

    // MARK: - probe --boxes

    struct BoxLine: CustomStringConvertible {
        var type: String
        var depth: Int
        var offset: Int
        var size: Int
        var description: String { "\(type) depth \(depth) offset \(offset) size \(size)" }
    }

    /// Parses `[type] offset=N size=N …` lines, two spaces of indent per level.
    static func boxLines(_ output: String) -> [BoxLine] {
        output.split(separator: "\n").compactMap { line in
            let indent = line.prefix { $0 == " " }.count
            let rest = line.dropFirst(indent)
            guard rest.hasPrefix("["), let close = rest.firstIndex(of: "]") else { return nil }
            let type = String(rest[rest.index(after: rest.startIndex)..<close])
            var offset: Int?, size: Int?
            for field in rest[close...].split(separator: " ") {
                if field.hasPrefix("offset=") { offset = Int(field.dropFirst(7)) }
                if field.hasPrefix("size=") { size = Int(field.dropFirst(5)) }
            }
            guard let offset, let size else { return nil }
            return BoxLine(type: type, depth: indent / 2, offset: offset, size: size)
        }
    }

    /// The lines enclosing line `index`, outermost first.
    static func ancestors(of index: Int, in lines: [BoxLine]) -> [BoxLine] {
        var result: [BoxLine] = []
        var depth = lines[index].depth
        for line in lines[..<index].reversed() where line.depth < depth {
            result.insert(line, at: 0)
            depth = line.depth
        }
        return result
    }

    /// The top-level boxes of a file, read by this test's own walker.
    static func topLevelBoxes(of file: String) throws -> [BoxLine] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        return BMFFScan.boxes(in: bytes, from: 0, to: bytes.count).map { BoxLine(type: $0.type, depth: 0, offset: $0.offset, size: $0.size) }
    }
}

/// A small ISO BMFF walker of the tests' own (independent of the code under test): box headers,
/// and each track's edit list.
enum BMFFScan {
    struct Box {
        var type: String
        var offset: Int
        var size: Int
        var headerSize: Int
        var payload: Range<Int> { (offset + headerSize)..<(offset + size) }
    }

    static func uint(_ bytes: [UInt8], _ at: Int, _ count: Int) -> UInt64 {
        bytes[at..<(at + count)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    /// The boxes in `from..<to` (a top-level size 0 runs to the end; an overlong box is cut).
    static func boxes(in bytes: [UInt8], from: Int, to: Int) -> [Box] {
        var found: [Box] = []
        var position = from
        while position + 8 <= to {
            var size = Int(uint(bytes, position, 4))
            var header = 8
            if size == 1, position + 16 <= to {
                size = Int(uint(bytes, position + 8, 8))
                header = 16
            } else if size == 0 {
                size = to - position
            }
            guard size >= header else { break }
            let type = String(decoding: bytes[(position + 4)..<(position + 8)], as: UTF8.self)
            found.append(Box(type: type, offset: position, size: size, headerSize: header))
            position += size
        }
        return found
    }

    /// For each `trak` of `moov`, in order: the media_time of its first non-empty edit, or nil.
    static func mediaTimes(of file: String) throws -> [Int64?] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        guard let moov = boxes(in: bytes, from: 0, to: bytes.count).first(where: { $0.type == "moov" }) else { return [] }
        return boxes(in: bytes, from: moov.payload.lowerBound, to: min(moov.payload.upperBound, bytes.count))
            .filter { $0.type == "trak" }
            .map { trak -> Int64? in
                guard let edts = boxes(in: bytes, from: trak.payload.lowerBound, to: trak.payload.upperBound).first(where: { $0.type == "edts" }),
                      let elst = boxes(in: bytes, from: edts.payload.lowerBound, to: edts.payload.upperBound).first(where: { $0.type == "elst" })
                else { return nil }
                let start = elst.payload.lowerBound
                let version = bytes[start]
                let count = Int(uint(bytes, start + 4, 4))
                var position = start + 8
                for _ in 0..<count {
                    let mediaTime: Int64 = version == 1 ? Int64(bitPattern: uint(bytes, position + 8, 8))
                                                        : Int64(Int32(bitPattern: UInt32(uint(bytes, position + 4, 4))))
                    position += version == 1 ? 20 : 12
                    if mediaTime != -1 { return mediaTime }
                }
                return nil
            }
    }
}
