import Foundation
import KeyFrameKit
import Synchronization
import Testing
import TestSupport

/// Issue 22, items 2 and 4: one registry of formats that every job opens its files through,
/// and tags and chapters that travel in the stream (``StreamEvent/metadata(_:)``) from the
/// reader that finds them to the muxer that writes them, checked with ffprobe and mutagen.
@Suite(.blocking) struct FormatRegistryTests {
    /// A 2-s 44.1 kHz stereo tone made by ffmpeg, in `name`'s format, with a title, an artist
    /// and, for MP4, two chapters.
    static func source(_ name: String, in directory: URL, chapters: Bool = false) throws -> String {
        let path = directory.appendingPathComponent(name).path
        var arguments = ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=2", "-ac", "2"]
        if chapters {
            let list = directory.appendingPathComponent("chapters.ffmeta")
            try ";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=1200\ntitle=Opening\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=1200\nEND=2000\ntitle=Close\n"
                .write(to: list, atomically: true, encoding: .utf8)
            arguments += ["-i", list.path, "-map", "0:a", "-map_chapters", "1"]
        }
        arguments += ["-metadata", "title=Registry Tone", "-metadata", "artist=KeyFrameKit Tests", path]
        try ExternalTool.succeed("ffmpeg", arguments)
        return path
    }

    /// ffprobe's format tags of `file`.
    static func formatTags(_ file: String) throws -> [String: String] {
        let run = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "format_tags", "-of", "json", file])
        let object = try JSONSerialization.jsonObject(with: run.outputData) as? [String: Any]
        return ((object?["format"] as? [String: Any])?["tags"] as? [String: String]) ?? [:]
    }

    @Test func decodeTakesFLACOggAndMP3ThroughTheRegistry() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for name in ["in.flac", "in.ogg", "in.mp3"] {
            let input = try Self.source(name, in: directory)
            let file = try AudioFileInput(path: FilePath(input))
            #expect(file.refusal == nil && file.packetsDecoded == nil, "\(name): \(file.description)")
            #expect(file.metadata["title"] == "Registry Tone", "\(name): \(file.metadata.tags)")
            let output = directory.appendingPathComponent("\(name).wav").path
            let summary = try Transcode.decode(FilePath(input), to: FilePath(output))
            #expect(summary.format.sampleRate == 44100 && summary.format.channelCount == 2 && summary.packets == 0)
            // FLAC and Ogg Vorbis are exact; MP3's LAME header gives its delay and padding.
            #expect(abs(summary.frames - 88200) <= (name == "in.mp3" ? 1152 : 0), "\(name): \(summary.frames)")
        }
    }

    @Test func aRegistryDecidesWhoReadsAndWhetherARefusalFallsBack() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let flac = try Self.source("in.flac", in: directory)
        let wav = try Self.source("in.wav", in: directory)

        // Without a fallback, a FLAC is refused by name; with KeyFrameKit's, libavformat reads it.
        #expect {
            _ = try AudioFileInput(path: FilePath(flac), registry: .containers)
        } throws: { error in
            guard let error = error as? PipelineError else { return false }
            return error.code == .unsupported && "\(error)".contains("PCM input is .wav")
        }
        #expect(try AudioFileInput(path: FilePath(flac)).description == "flac/flac")

        // An entry replaced: the registry's WAV reader is the one a job gets.
        let opened = Mutex(0)
        var registry = MediaFormatRegistry.standard
        guard var entry = registry.entry(for: .wav), let open = entry.pcmSource else {
            Issue.record("no WAV entry")
            return
        }
        entry.pcmSource = { path, options throws(PipelineError) in
            opened.withLock { $0 += 1 }
            return try open(path, options)
        }
        registry.register(entry)
        var input = try AudioFileInput(path: FilePath(wav), registry: registry)
        #expect(opened.withLock { $0 } == 1 && input.isPCMFile)
        var frames = 0
        while let buffer = try input.next() { frames += buffer.frameCount }
        #expect(frames == 88200)

        // A playlist our reader refuses is never handed to libavformat: the playlist's error.
        let playlist = directory.appendingPathComponent("index.m3u8")
        try "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:6\n#EXT-X-MAP:URI=\"init.mp4\"\n#EXTINF:6,\nmissing.m4s\n#EXT-X-ENDLIST\n"
            .write(to: playlist, atomically: true, encoding: .utf8)
        #expect(throws: PipelineError.self) { _ = try AudioFileInput(path: FilePath(playlist.path)) }
        #expect(MediaFormatRegistry.standard.entry(for: .hlsPlaylist)?.fallsBack(.cancelled) == false)
    }

    @Test func tagsAndChaptersTravelInBandFromTheReaderToTheMuxer() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try Self.source("in.m4a", in: directory, chapters: true)
        let packets = try AudioPacketInput(path: FilePath(input))
        #expect(packets.metadata["title"] == "Registry Tone" && packets.metadata.chapters.map(\.title) == ["Opening", "Close"])

        // convert: reader → decoder → resampler → encoder → muxer; the muxer learns the tags
        // and chapters from the stream alone.
        let output = directory.appendingPathComponent("out.m4a").path
        _ = try Transcode.convert(FilePath(input), to: FilePath(output), options: Transcode.ConvertOptions(replayGain: true))
        let tags = try Self.formatTags(output)
        #expect(tags["title"] == "Registry Tone" && tags["artist"] == "KeyFrameKit Tests", "\(tags)")
        let chapters = try EditCommandTests.ffprobeChapters(output)
        #expect(chapters.map(\.title) == ["Opening", "Close"], "\(chapters)")
        #expect(chapters.count == 2 && abs(chapters[1].start - 1.2) < 0.001, "\(chapters)")
        let mutagen = try EditCommandTests.mutagenChapters(output)
        #expect(mutagen.map(\.title) == ["Opening", "Close"], "\(mutagen)")
        // ReplayGain joins the stream's tags as iTunes freeform items, as mutagen reads them.
        let script = "import sys, mutagen.mp4 as m\nf = m.MP4(sys.argv[1])\nprint(sorted(k for k in f.tags.keys() if 'replaygain' in k))"
        let keys = try ExternalTool.succeed("python3", ["-c", script, output]).standardOutput
        #expect(keys.contains("----:com.apple.iTunes:replaygain_track_gain"), "\(keys)")

        // Without tags: nothing travels.
        let bare = directory.appendingPathComponent("bare.m4a").path
        _ = try Transcode.convert(FilePath(input), to: FilePath(bare), options: Transcode.ConvertOptions(carriesTags: false))
        #expect(try Self.formatTags(bare)["title"] == nil)
        #expect(try EditCommandTests.ffprobeChapters(bare).isEmpty)
    }

    @Test func aFragmentedOutputTakesTagsToldBeforeItsFirstPacketAndNoChapters() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try Self.source("in.m4a", in: directory, chapters: true)
        let output = directory.appendingPathComponent("frag.m4a").path
        var source = try AudioPacketInput(path: FilePath(input), purpose: .remuxing)
        var sink = try AudioPacketOutput(path: FilePath(output), fragmentDuration: MediaTime(value: 1, timescale: 1))
        try Pump.run(from: &source, into: &sink)
        #expect(sink.metadata?.chapters.count == 2)
        #expect(try Self.formatTags(output)["title"] == "Registry Tone")
        #expect(try EditCommandTests.ffprobeChapters(output).isEmpty)
    }

    @Test func anInputsReplayGainIsNeverCarriedAndSegmentsAreNeverDropped() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let plain = try Self.source("plain.flac", in: directory)
        let flac = directory.appendingPathComponent("tagged.flac").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-i", plain, "-c", "copy", "-metadata", "REPLAYGAIN_TRACK_GAIN=+5.00 dB",
                                            "-metadata", "REPLAYGAIN_ALBUM_GAIN=+4.00 dB", flac])
        #expect(try AudioFileInput(path: FilePath(flac)).metadata.tags.contains { $0.key.lowercased() == "replaygain_track_gain" })
        let script = "import sys, mutagen.mp4 as m\nf = m.MP4(sys.argv[1])\nprint([(k, [bytes(v).decode() for v in f.tags[k]]) for k in sorted(f.tags.keys()) if 'replaygain' in k])"
        // A plain convert carries the title, not the input's gains.
        let out = directory.appendingPathComponent("plain.m4a").path
        _ = try Transcode.convert(FilePath(flac), to: FilePath(out))
        let plainKeys = try ExternalTool.succeed("python3", ["-c", script, out]).standardOutput
        #expect(plainKeys.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(plainKeys)")
        #expect(try Self.formatTags(out)["title"] == "Registry Tone")
        // --replaygain: one track gain, the output's.
        let measured = directory.appendingPathComponent("measured.m4a").path
        _ = try Transcode.convert(FilePath(flac), to: FilePath(measured), options: Transcode.ConvertOptions(replayGain: true))
        let keys = try ExternalTool.succeed("python3", ["-c", script, measured]).standardOutput
        #expect(keys.components(separatedBy: "replaygain_track_gain").count == 2 && !keys.contains("+5.00") && !keys.contains("album"), "\(keys)")
        // Segments or a track name an MP4's parts: refused for any other input, never ignored.
        for options in [MediaFormatRegistry.InputOptions(segments: [FilePath(plain)]), MediaFormatRegistry.InputOptions(trackID: 2)] {
            #expect(throws: PipelineError.self) { _ = try AudioFileInput(path: FilePath(flac), options: options) }
        }
        #expect(throws: PipelineError.self) { _ = try Transcode.decode(FilePath(flac), segments: [FilePath(plain)], to: FilePath(directory.appendingPathComponent("x.wav").path)) }
    }

    @Test func chaptersReachAnHLSPackageAsWebVTT() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try Self.source("in.m4a", in: directory, chapters: true)
        let expected = "WEBVTT\n\n1\n00:00:00.000 --> 00:00:01.200\nOpening\n\n2\n00:00:01.200 --> 00:00:02.000\nClose\n"
        // By copy (the packets' reader tells them), and encoded as a ladder (through the decoder,
        // the tee and each branch's encoder).
        let copied = directory.appendingPathComponent("copied").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", input, "--hls", copied])
        #expect(try String(contentsOfFile: copied + "/chapters.vtt", encoding: .utf8) == expected)
        let ladder = directory.appendingPathComponent("ladder").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", input, "--hls", ladder, "--bitrates", "64k,96k"])
        for rendition in ["64k", "96k"] {
            let text = try String(contentsOfFile: "\(ladder)/\(rendition)/chapters.vtt", encoding: .utf8)
            #expect(text.hasPrefix("WEBVTT\n\n1\n00:00:00.000 --> 00:00:01.200\nOpening\n") && text.contains("Close"), "\(text)")
        }
        // Without chapters, no file.
        let plain = try Self.source("plain.m4a", in: directory)
        let bare = directory.appendingPathComponent("bare").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", plain, "--hls", bare])
        #expect(!FileManager.default.fileExists(atPath: bare + "/chapters.vtt"))
    }

    @Test func streamMetadataMapsToITunesItems() {
        let metadata = StreamMetadata(tags: [(key: "TITLE", value: "A"), (key: "title", value: "B"), (key: "track", value: "3/12"),
                                             (key: "replaygain_track_gain", value: "-3.20 dB"), (key: "encoder", value: "x")],
                                      coverArt: [0x89, 0x50, 0x4E, 0x47, 0, 0])
        let items = ITunesMetadata(metadata)
        #expect(items.title == "A" && items.track == ITunesMetadata.Position(number: 3, total: 12))
        #expect(items.freeform.map(\.name) == ["replaygain_track_gain"] && items.artwork?.format == .png)
        #expect(StreamMetadata(genericTags: ["b": "2", "a": "1"]).tags.map(\.key) == ["a", "b"])
    }
}
