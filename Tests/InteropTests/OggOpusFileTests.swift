import Foundation
import Testing
import TestSupport

/// Ogg Opus files of our own writer (``OggOpusFileOutput``), judged by opus-tools, FFmpeg and
/// mutagen: a 10-s stereo 44.1 kHz input converts to an `.opus` file that `opusinfo` reads
/// without a warning, that `opusdec` and FFmpeg decode to exactly 480,000 samples at 48 kHz
/// starting at the source's first (the pre-skip and the last page's granule position read),
/// and whose tags, chapters and cover read back in mutagen and ffprobe.
@Suite(.blocking) struct OggOpusFileTests {
    @Test func opusDecodesToTheSourcesSamplesInOpusdecAndFFmpeg() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try MP3FileTests.taggedSource(in: directory)
        let opus = directory.appendingPathComponent("out.opus").path
        let run = try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", source.m4a, "-o", opus])
        #expect(run.standardOutput.contains("Opus packets"), "\(run.standardOutput)")
        #expect(try PeerQuirk.ffprobeWarnings(opus).isEmpty)
        #expect(try PeerQuirk.ffmpegWarnings(opus).isEmpty)

        let info = try ExternalTool.succeed("opusinfo", [opus]).standardOutput
        #expect(!info.contains("WARNING") && !info.contains("ERROR"), "\(info)")
        #expect(info.contains("Pre-skip: 312") && info.contains("Playback length: 0m:10.000s"), "\(info)")

        let decoded = directory.appendingPathComponent("opusdec.raw").path
        try ExternalTool.succeed("opusdec", ["--quiet", "--rate", "48000", "--force-wav", opus, decoded])
        let opusdec = try CodecInteropTests.wavPayload(decoded)
        #expect(opusdec.count == 480_000 * 4, "opusdec decodes \(opusdec.count / 4) samples")
        try CodecsBeyondAACTests.expectAlignedAtLagZero(source: source.wav, decoded: opusdec, in: directory)
        let ffmpeg = try CodecsBeyondAACTests.ffmpegPCM(opus, in: directory, name: "ffmpeg.raw")
        #expect(ffmpeg.count == 480_000 * 4, "FFmpeg decodes \(ffmpeg.count / 4) samples")
        try CodecsBeyondAACTests.expectAlignedAtLagZero(source: source.wav, decoded: ffmpeg, in: directory)
    }

    @Test func tagsChaptersAndCoverReadBackInMutagenAndFFprobe() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try MP3FileTests.taggedSource(in: directory)
        let opus = directory.appendingPathComponent("out.ogg").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["convert", source.m4a, "-o", opus])
        let mutagen = try ExternalTool.succeed(try MP4Check.venvPython, ["-c", """
            import mutagen.oggopus, mutagen.flac, base64, hashlib, sys
            f = mutagen.oggopus.OggOpus(sys.argv[1])
            print(round(f.info.length * 48000))
            for key in ("title", "artist", "album", "comment"): print(key, f[key][0])
            for n in (1, 2, 3): print(f["CHAPTER%03d" % n][0], f["CHAPTER%03dNAME" % n][0])
            picture = mutagen.flac.Picture(base64.b64decode(f["METADATA_BLOCK_PICTURE"][0]))
            print(picture.type, picture.mime, picture.width, picture.height, hashlib.sha256(picture.data).hexdigest())
            """, opus]).standardOutput
        let coverHash = try ExternalTool.succeed("sha256sum", [directory.appendingPathComponent("cover.png").path]).standardOutput.prefix(64)
        #expect(mutagen == """
            480000
            title Tide Tables
            artist Harbour Radio
            album Shipping Forecasts
            comment Recorded at the quay
            00:00:00.000 Cold open
            00:00:04.500 Harbour report
            00:00:08.000 Tide tables
            3 image/png 64 64 \(coverHash)

            """, "\(mutagen)")
        // ffprobe shows Vorbis field names as written (TITLE), and reads CHAPTERxxx as chapters.
        let ffprobe = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_chapters", "-show_entries",
                                                           "stream_tags=title,artist:stream=codec_name,sample_rate", "-of", "compact", opus]).standardOutput
        #expect(ffprobe.lowercased().contains("codec_name=opus|sample_rate=48000|tag:title=tide tables|tag:artist=harbour radio"), "\(ffprobe)")
        #expect(ffprobe.contains("start=4500|start_time=4.500000|end=8000|end_time=8.000000|tag:title=Harbour report"), "\(ffprobe)")
    }
}
