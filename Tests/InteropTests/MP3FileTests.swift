import Foundation
import Testing
import TestSupport

/// MP3 files of our own writer (``MP3FileOutput``: an ID3v2.4 tag, an Info frame with the LAME
/// tag, LAME's frames), judged by FFmpeg, mpg123 and mutagen: a 10-s stereo 44.1 kHz input
/// converts to an MP3 whose decode by FFmpeg and by mpg123 is 441,000 samples that start at the
/// source's first (the LAME tag's delay and padding read), and whose tags, cover and chapters
/// read back in mutagen and ffprobe as they were set.
@Suite(.blocking) struct MP3FileTests {
    /// A 10-s stereo 44.1 kHz WAV, converted to an M4A that is tagged, given a cover and three
    /// chapters with `keyframe tag` and `keyframe chapters`: the source of the tests below.
    static func taggedSource(in directory: URL) throws -> (wav: String, m4a: String, cover: Data) {
        let wav = directory.appendingPathComponent("in.wav").path
        let m4a = directory.appendingPathComponent("tagged.m4a").path
        let cover = directory.appendingPathComponent("cover.png").path
        let chapters = directory.appendingPathComponent("chapters.txt").path
        try CodecInteropTests.makeWAV(rate: 44100, channels: 2, seconds: 10, to: wav)
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=teal:s=64x64", "-frames:v", "1", cover])
        try "00:00:00.000 Cold open\n00:00:04.500 Harbour report\n00:00:08.000 Tide tables\n".write(toFile: chapters, atomically: true, encoding: .utf8)
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", wav, "-o", m4a, "--codec", "alac"])
        try ExternalTool.succeed(try ExternalTool.keyframe, ["tag", m4a, "--set", "title=Tide Tables", "--set", "artist=Harbour Radio",
                                                             "--set", "album=Shipping Forecasts", "--set", "comment=Recorded at the quay",
                                                             "--cover", cover])
        try ExternalTool.succeed(try ExternalTool.keyframe, ["chapters", m4a, "--import", chapters])
        return (wav, m4a, try Data(contentsOf: URL(fileURLWithPath: cover)))
    }

    @Test func mp3DecodesToTheSourcesSamplesInFFmpegAndMpg123() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.taggedSource(in: directory)
        let mp3 = directory.appendingPathComponent("out.mp3").path
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", source.m4a, "-o", mp3])
        #expect(run.standardOutput.contains("MP3 packets"), "\(run.standardOutput)")
        #expect(try PeerQuirk.ffprobeWarnings(mp3).isEmpty)
        #expect(try PeerQuirk.ffmpegWarnings(mp3).isEmpty)

        // FFmpeg drops the LAME tag's delay + 529 and the padding − 529: at lag 0 when read.
        let ffmpeg = try CodecsBeyondAACTests.ffmpegPCM(mp3, in: directory, name: "ffmpeg.raw")
        #expect(ffmpeg.count == 441_000 * 4, "FFmpeg decodes \(ffmpeg.count / 4) samples")
        try CodecsBeyondAACTests.expectAlignedAtLagZero(source: source.wav, decoded: ffmpeg, in: directory, rate: 44100)
        // mpg123 reads the same tag with its own decoder: the same count, the same alignment.
        let raw = directory.appendingPathComponent("mpg123.raw").path
        try ExternalTool.succeed("mpg123", ["-q", "--gapless", "-e", "s16", "-o", "raw", "-a", raw, mp3])
        let mpg123 = try Data(contentsOf: URL(fileURLWithPath: raw))
        #expect(mpg123.count == 441_000 * 4, "mpg123 decodes \(mpg123.count / 4) samples")
        try CodecsBeyondAACTests.expectAlignedAtLagZero(source: source.wav, decoded: mpg123, in: directory, rate: 44100)

        // mutagen reads the LAME tag's length, and the encoder that made the frames.
        let info = try ExternalTool.succeed(try MP4Check.venvPython, ["-c", """
            import mutagen.mp3, sys
            f = mutagen.mp3.MP3(sys.argv[1])
            print(round(f.info.length * 44100), f.info.encoder_info, f.info.bitrate_mode)
            """, mp3])
        #expect(info.standardOutput.hasPrefix("441000 LAME 3.100"), "\(info.standardOutput)")
        // Our probe reads the LAME tag as well.
        let probe = try ExternalTool.succeed(try ExternalTool.keyframe, ["probe", mp3])
        #expect(probe.standardOutput.contains("priming 1105"), "\(probe.standardOutput)")
    }

    @Test func tagsCoverAndChaptersReadBackInMutagenAndFFprobe() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.taggedSource(in: directory)
        let mp3 = directory.appendingPathComponent("out.mp3").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", source.m4a, "-o", mp3])

        let mutagen = try ExternalTool.succeed(try MP4Check.venvPython, ["-c", """
            import mutagen.id3, hashlib, sys
            t = mutagen.id3.ID3(sys.argv[1])
            print(t.version)
            for key in ("TIT2", "TPE1", "TALB"): print(key, t[key].text[0])
            print("COMM", t.getall("COMM")[0].text[0])
            apic = t.getall("APIC")[0]
            print("APIC", apic.mime, int(apic.type), hashlib.sha256(apic.data).hexdigest())
            toc = t.getall("CTOC")[0]
            print("CTOC", toc.element_id, int(toc.flags), ",".join(toc.child_element_ids))
            for chap in sorted(t.getall("CHAP"), key=lambda c: c.start_time):
                print("CHAP", chap.element_id, chap.start_time, chap.end_time, chap.sub_frames["TIT2"].text[0])
            """, mp3]).standardOutput
        let coverHash = try ExternalTool.succeed("sha256sum", [directory.appendingPathComponent("cover.png").path])
            .standardOutput.prefix(64)
        #expect(mutagen == """
            (2, 4, 0)
            TIT2 Tide Tables
            TPE1 Harbour Radio
            TALB Shipping Forecasts
            COMM Recorded at the quay
            APIC image/png 3 \(coverHash)
            CTOC toc 3 chp0,chp1,chp2
            CHAP chp0 0 4500 Cold open
            CHAP chp1 4500 8000 Harbour report
            CHAP chp2 8000 10000 Tide tables

            """, "\(mutagen)")

        let ffprobe = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_chapters", "-show_entries", "format_tags=title,artist,album",
                                                           "-of", "compact", mp3]).standardOutput
        #expect(ffprobe.contains("start_time=4.500000|end=8000|end_time=8.000000|tag:title=Harbour report"), "\(ffprobe)")
        #expect(ffprobe.contains("end_time=10.000000|tag:title=Tide tables"), "\(ffprobe)")
        #expect(ffprobe.contains("tag:title=Tide Tables|tag:artist=Harbour Radio|tag:album=Shipping Forecasts"), "\(ffprobe)")
    }

    /// What an MP3 cannot hold, and what MP3 cannot be put in, is refused naming both.
    @Test func mp3IsRefusedWhereItCannotGo() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try CodecInteropTests.makeWAV(rate: 44100, channels: 2, seconds: 0.5, to: wav)
        let opusInMP3 = try ExternalTool.run(try ExternalTool.keyframe, ["convert", wav, "-o", directory.appendingPathComponent("x.mp3").path,
                                                                         "--codec", "opus"])
        #expect(opusInMP3.status == 64 && opusInMP3.standardError.contains("MP3 cannot hold opus"), "\(opusInMP3.standardError)")
        let mp3InMP4 = try ExternalTool.run(try ExternalTool.keyframe, ["convert", wav, "-o", directory.appendingPathComponent("x.m4a").path,
                                                                        "--codec", "mp3"])
        #expect(mp3InMP4.status == 64 && mp3InMP4.standardError.contains("MP4 cannot hold mp3"), "\(mp3InMP4.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("x.mp3").path))
    }
}
