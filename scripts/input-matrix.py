#!/usr/bin/env python3
"""Issue 20, item 1: a covering matrix of inputs written by FFmpeg, `flac` and `lame`.

    scripts/input-matrix.py generate DIR     make the inputs and DIR/manifest.json (cached)
    scripts/input-matrix.py list             print the matrix without making anything

Every input is a short (0.75 s) deterministic signal, a different chirp plus seeded noise on each
channel (ffmpeg's lavfi `aevalsrc`), encoded by one encoder into one container. The matrix is a
covering set, not the cross product: every codec, every sample rate it allows at least once, every
channel count it allows at least once, every container at least once, and tags, a cover and
chapters at least once in every container that holds them. What each codec allows was found with
ffmpeg 5.1 itself (encode at every rate 8-384 kHz and 1-8 channels, read back with ffprobe, keep
what was not silently converted); the tables below are that result.

For each input the manifest gives the referee: what `keyframe convert` must reproduce.
- `refereeFrames`: the frames of `ffmpeg -i SRC -f wav` (FFmpeg's decode, which is what every
  player of these files does), except where FFmpeg 5.1 is wrong: 32-bit FLAC, which it decodes to
  0 frames, is decoded with `flac -d` (libFLAC, the reference decoder).
- `outputRate`: the rate of our AAC. An AAC rate is kept; above 96 kHz `convert` resamples to
  48 kHz (44.1 kHz for the multiples of 44.1 kHz) with soxr, and `expectedFrames` is then the
  length of `ffmpeg -af aresample=resampler=soxr:precision=28 -ar OUT` of the referee (the
  length `convert` gives: round(N * OUT / IN)).
- `referee`: the referee decode as 16-bit WAV at `outputRate` (beside the input), for the
  cross-correlation of the test.

Cached: when DIR/manifest.json exists and names this script's own SHA-256 and every file is
there, nothing is made again.
"""
import base64
import concurrent.futures
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

DURATION = 0.75
AAC_RATES = {8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000}
ALL_RATES = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000,
             176400, 192000, 352800, 384000]
LAYOUTS = {1: "mono", 2: "stereo", 3: "2.1", 4: "quad", 5: "5.0", 6: "5.1", 7: "6.1", 8: "7.1"}
HIGH = ALL_RATES  # every rate 8-384 kHz
UPTO96 = ALL_RATES[:12]
UPTO48 = ALL_RATES[:9]
ANY_CH = list(range(1, 9))

# (container name, file extension, extra muxer arguments)
CONTAINERS = {
    "wav": ("wav", []), "aiff": ("aiff", []), "caf": ("caf", []), "w64": ("w64", []),
    "rf64": ("rf64.wav", ["-rf64", "always"]),
}

# PCM: every codec FFmpeg 5.1 writes into each of WAV/AIFF/CAF/W64/RF64 and reads back as itself
# (pcm_s64be, the unsigned 16/24/32-bit codecs and s8 in WAV are refused by the muxers).
PCM = {
    "pcm_u8": ["wav", "aiff", "w64", "rf64"],
    "pcm_s8": ["aiff", "caf"],
    "pcm_s16le": ["wav", "aiff", "caf", "w64", "rf64"],
    "pcm_s16be": ["aiff", "caf"],
    "pcm_s24le": ["wav", "caf", "w64", "rf64"],
    "pcm_s24be": ["aiff", "caf"],
    "pcm_s32le": ["wav", "caf", "w64", "rf64"],
    "pcm_s32be": ["aiff", "caf"],
    "pcm_s64le": ["wav", "w64", "rf64"],
    "pcm_f32le": ["wav", "caf", "w64", "rf64"],
    "pcm_f32be": ["aiff", "caf"],
    "pcm_f64le": ["wav", "caf", "w64", "rf64"],
    "pcm_f64be": ["aiff", "caf"],
    "pcm_alaw": ["wav", "aiff", "caf", "w64", "rf64"],
    "pcm_mulaw": ["wav", "aiff", "caf", "w64", "rf64"],
}

# Coded audio: (label, encoder, extension, rates, channel counts, encoder arguments, tool).
# The rates and channel counts are those the encoder takes without converting (ffmpeg 5.1).
CODECS = [
    ("mp3-libmp3lame", "libmp3lame", "mp3", UPTO48, [1, 2], [], "ffmpeg"),
    ("mp3-lame", "lame", "mp3", UPTO48, [1, 2], [], "lame"),
    ("mp3-libshine", "libshine", "mp3", [32000, 44100, 48000], [1, 2], [], "ffmpeg"),
    ("vorbis", "libvorbis", "ogg", ALL_RATES[:14], ANY_CH, [], "ffmpeg"),
    ("vorbis-webm", "libvorbis", "webm", [48000], [2], [], "ffmpeg"),
    # Opus always decodes at 48 kHz; the rate is the encoder's input (OpusHead input_sample_rate).
    ("opus", "libopus", "opus", [8000, 12000, 16000, 24000, 48000], [1, 2, 4, 5, 6, 7, 8], [], "ffmpeg"),
    ("opus-webm", "libopus", "webm", [48000], [1], [], "ffmpeg"),
    ("opus-mka", "libopus", "mka", [48000], [2], [], "ffmpeg"),
    ("flac16", "flac", "flac", HIGH, ANY_CH, ["-sample_fmt", "s16"], "ffmpeg"),
    ("flac24", "flac", "flac", HIGH, ANY_CH, ["-sample_fmt", "s32", "-bits_per_raw_sample", "24"], "ffmpeg"),
    ("flac-ogg", "flac", "oga", [44100], [2], ["-sample_fmt", "s16"], "ffmpeg"),
    ("flac-mka", "flac", "mka", [96000], [2], ["-sample_fmt", "s32", "-bits_per_raw_sample", "24"], "ffmpeg"),
    ("flac32-tool", "flac", "flac", [44100, 96000, 192000, 384000], [1, 2, 6, 8], [], "flac"),
    ("flac16-tool", "flac", "flac", [44100], [2], [], "flac16"),
    ("alac", "alac", "m4a", HIGH, [1, 2, 5, 6, 7], [], "ffmpeg"),
    ("alac-caf", "alac", "caf", [44100, 96000], [2, 6], [], "ffmpeg"),
    ("wavpack", "wavpack", "wv", HIGH, ANY_CH, [], "ffmpeg"),
    ("tta", "tta", "tta", HIGH, [1, 2, 3, 4, 6, 7, 8], [], "ffmpeg"),
    ("ac3", "ac3", "ac3", [32000, 44100, 48000], [1, 2, 3, 4, 5, 6], [], "ffmpeg"),
    ("eac3", "eac3", "eac3", [32000, 44100, 48000], [1, 2, 3, 4, 5, 6], [], "ffmpeg"),
    ("mp2", "mp2", "mp2", [24000, 32000, 44100, 48000], [1, 2], [], "ffmpeg"),
    ("mp2-twolame", "libtwolame", "mp2", [48000], [2], [], "ffmpeg"),
    ("wmav1", "wmav1", "wma", UPTO48, [1, 2], [], "ffmpeg"),
    ("wmav2", "wmav2", "wma", UPTO48, [1, 2], [], "ffmpeg"),
    ("speex", "libspeex", "spx", [8000, 16000, 32000], [1, 2], [], "ffmpeg"),
    ("adpcm_ima_wav", "adpcm_ima_wav", "wav", HIGH, [1, 2], [], "ffmpeg"),
    ("adpcm_ms", "adpcm_ms", "wav", HIGH, [1, 2], [], "ffmpeg"),
    ("adpcm_yamaha", "adpcm_yamaha", "wav", [8000, 22050, 44100], [1, 2], [], "ffmpeg"),
    ("g722-wav", "g722", "wav", [16000], [1], [], "ffmpeg"),
    ("g722", "g722", "g722", [16000], [1], [], "ffmpeg"),
    ("g726-wav", "g726", "wav", [8000], [1], [], "ffmpeg"),
    ("adpcm_swf", "adpcm_swf", "flv", [11025, 22050, 44100], [1, 2], [], "ffmpeg"),
    ("adpcm_ima_qt-aiff", "adpcm_ima_qt", "aiff", [22050], [1], [], "ffmpeg"),
    ("adpcm_ima_qt-caf", "adpcm_ima_qt", "caf", [44100], [2], [], "ffmpeg"),
    ("adpcm_ima_qt-mov", "adpcm_ima_qt", "mov", [48000], [2], [], "ffmpeg"),
    ("adpcm_adx", "adpcm_adx", "adx", [22050, 48000], [1, 2], [], "ffmpeg"),
    ("adpcm_ima_apm", "adpcm_ima_apm", "apm", [22050], [2], [], "ffmpeg"),
    ("adpcm_ima_ws", "adpcm_ima_ws", "aud", [22050], [1], [], "ffmpeg"),
    ("gsm", "libgsm", "gsm", [8000], [1], [], "ffmpeg"),
    ("gsm_ms-wav", "libgsm_ms", "wav", [8000], [1], [], "ffmpeg"),
    ("g723_1-wav", "g723_1", "wav", [8000], [1], [], "ffmpeg"),
    ("codec2", "libcodec2", "c2", [8000], [1], ["-mode", "3200"], "ffmpeg"),
    ("nellymoser", "nellymoser", "flv", [8000, 11025, 16000, 22050, 44100], [1], [], "ffmpeg"),
    ("real_144", "real_144", "rm", [8000], [1], [], "ffmpeg"),
    ("roq_dpcm", "roq_dpcm", "roq", [22050], [1, 2], [], "ffmpeg"),
    ("dfpwm", "dfpwm", "dfpwm", [48000], [1], [], "ffmpeg"),
    ("sbc", "sbc", "sbc", [16000, 32000, 44100, 48000], [1, 2], [], "ffmpeg"),
    ("aptx", "aptx", "aptx", [48000], [2], [], "ffmpeg"),
    ("aptx_hd", "aptx_hd", "aptxhd", [48000], [2], [], "ffmpeg"),
    ("dts", "dca", "dts", UPTO48, [1, 2, 4, 5, 6], ["-strict", "-2"], "ffmpeg"),
    ("truehd", "truehd", "thd", [44100, 48000, 96000, 176400], [2, 5, 6], ["-strict", "-2"], "ffmpeg"),
    ("mlp", "mlp", "mlp", [44100, 48000, 88200, 96000], [1, 2, 3, 4, 5, 6], ["-strict", "-2"], "ffmpeg"),
    ("pcm_dvd-vob", "pcm_dvd", "vob", [96000, 48000], [1, 6, 2, 8], [], "ffmpeg"),
    ("s302m-ts", "s302m", "ts", [48000], [2, 4, 6, 8], ["-strict", "-2"], "ffmpeg"),
    ("aac-m4a", "aac", "m4a", UPTO96, ANY_CH, [], "ffmpeg"),
    ("aac-adts", "aac", "aac", [44100], [2], [], "ffmpeg"),
]

# Tags, a cover and chapters, in every container that holds them (what ffmpeg 5.1 writes and
# reads back; ogg/opus/speex covers are METADATA_BLOCK_PICTURE comments, which ffmpeg's ogg muxer
# cannot write from an attached picture, so they are written as the comment itself).
# (label, encoder, extension, rate, channels, encoder args, tool, cover, chapters)
TAGGED = [
    ("mp3-libmp3lame", "libmp3lame", "mp3", 44100, 2, [], "ffmpeg", True, True),
    ("mp3-lame", "lame", "mp3", 44100, 2, [], "lame", True, False),
    ("flac16", "flac", "flac", 44100, 2, ["-sample_fmt", "s16"], "ffmpeg", True, True),
    ("flac32-tool", "flac", "flac", 48000, 2, [], "flac", True, False),
    ("vorbis", "libvorbis", "ogg", 44100, 2, [], "ffmpeg", True, True),
    ("opus", "libopus", "opus", 48000, 2, [], "ffmpeg", True, True),
    ("speex", "libspeex", "spx", 16000, 1, [], "ffmpeg", False, False),
    ("alac", "alac", "m4a", 44100, 2, [], "ffmpeg", True, True),
    ("aac-m4a", "aac", "m4a", 48000, 2, [], "ffmpeg", True, True),
    ("alac-caf", "alac", "caf", 48000, 2, [], "ffmpeg", False, False),
    ("adpcm_ima_qt-mov", "adpcm_ima_qt", "mov", 44100, 2, [], "ffmpeg", False, True),
    ("pcm_s16le-wav", "pcm_s16le", "wav", 44100, 2, [], "ffmpeg", False, False),
    ("pcm_s16le-rf64", "pcm_s16le", "rf64.wav", 44100, 2, ["-rf64", "always"], "ffmpeg", False, False),
    ("pcm_s16be-aiff", "pcm_s16be", "aiff", 44100, 2, ["-write_id3v2", "1"], "ffmpeg", True, True),
    ("wavpack", "wavpack", "wv", 44100, 2, [], "ffmpeg", False, False),
    ("tta", "tta", "tta", 44100, 2, [], "ffmpeg", False, False),
    # No cover: FFmpeg 5.1's ASF muxer writes the picture as a one-frame mjpeg video stream
    # (ffprobe: attached_pic=0), not a WM/Picture tag, so there is no cover to carry.
    ("wmav2", "wmav2", "wma", 44100, 2, [], "ffmpeg", False, True),
    ("flac-mka", "flac", "mka", 48000, 2, [], "ffmpeg", True, True),
    ("opus-webm", "libopus", "webm", 48000, 2, [], "ffmpeg", False, True),
]

TAGS = {"title": "Matrix Tone", "artist": "KeyFrameKit", "album": "Inputs", "date": "2024",
        "genre": "Test", "track": "3/12", "comment": "issue 20"}


def ffmpeg(*args):
    run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args])


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: exit {result.returncode}: {result.stderr.strip()[-600:]}")
    return result.stdout


def signal(rate, channels, duration=DURATION):
    """lavfi source: a chirp plus seeded noise, different on every channel."""
    # Channel k sweeps from 200 + 50k Hz up by 2 * (1800 + 60k) Hz a second: below 3.9 kHz at
    # 0.75 s, so it fits 8 kHz sampling, and wide enough for one sharp cross-correlation peak.
    parts = [f"0.3*sin(2*PI*({200 + 50 * k}*t+{1800 + 60 * k}*t*t))+0.06*(2*random({k})-1)" for k in range(channels)]
    return ["-f", "lavfi", "-i",
            f"aevalsrc='{'|'.join(parts)}':s={rate}:c={LAYOUTS[channels]}:d={duration}"]


def wav_frames(path):
    """Frames in a WAV (RIFF, WAVE_FORMAT_EXTENSIBLE or RF64) as ffmpeg or flac writes it."""
    with open(path, "rb") as f:
        data = f.read()
    position, block, size64 = 12, None, None
    while position + 8 <= len(data):
        chunk, size = data[position:position + 4], struct.unpack("<I", data[position + 4:position + 8])[0]
        if chunk == b"ds64":
            size64 = struct.unpack("<Q", data[position + 16:position + 24])[0]
        elif chunk == b"fmt ":
            block = struct.unpack("<H", data[position + 20:position + 22])[0]
        elif chunk == b"data":
            if size == 0xFFFFFFFF and size64 is not None:
                size = size64
            size = min(size, len(data) - position - 8)
            return size // block
        position += 8 + size + (size & 1)
    raise RuntimeError(f"{path}: no data chunk")


def aac_output_rate(rate):
    if rate in AAC_RATES:
        return rate
    return 44100 if rate % 44100 == 0 else 48000


def flac_picture_comment(jpeg):
    """A METADATA_BLOCK_PICTURE Vorbis comment (base64 of a FLAC PICTURE block), front cover."""
    mime, description = b"image/jpeg", b"cover"
    block = struct.pack(">II", 3, len(mime)) + mime + struct.pack(">I", len(description)) + description
    block += struct.pack(">IIIII", 64, 64, 24, 0, len(jpeg)) + jpeg
    return base64.b64encode(block).decode()


def plan():
    """The covering set: a list of entries (dicts) without the referee."""
    entries = []

    def cover(rates, channels):
        """Pairs (rate, channels) that use every rate and every channel count at least once."""
        return [(rates[i % len(rates)], channels[i % len(channels)]) for i in range(max(len(rates), len(channels)))]

    # PCM: every codec in every container that takes it; rates and channel counts cycle.
    index = 0
    for codec, containers in PCM.items():
        for container in containers:
            rate, channels = ALL_RATES[index % len(ALL_RATES)], ANY_CH[(index * 3) % len(ANY_CH)]
            index += 1
            extension, extra = CONTAINERS[container]
            entries.append(dict(name=f"{codec}-{container}-{rate}-{channels}ch.{extension}", label=f"{codec}-{container}",
                                encoder=codec, tool="ffmpeg", container=container, rate=rate, channels=channels,
                                args=["-c:a", codec, *extra], tagged=False))
    # Coded audio.
    for label, encoder, extension, rates, channel_counts, extra, tool in CODECS:
        for rate, channels in cover(rates, channel_counts):
            entries.append(dict(name=f"{label}-{rate}-{channels}ch.{extension}", label=label, encoder=encoder, tool=tool,
                                container=container_name(extension), rate=rate, channels=channels,
                                args=["-c:a", encoder, *extra] if tool == "ffmpeg" else [], tagged=False))
    # Tags, cover, chapters.
    for label, encoder, extension, rate, channels, extra, tool, has_cover, has_chapters in TAGGED:
        if tool == "ffmpeg":
            args = ["-c:a", encoder, *extra]
        else:
            args = []
        entries.append(dict(name=f"tagged-{label}-{rate}-{channels}ch.{extension}", label=label, encoder=encoder, tool=tool,
                            container=container_name(extension), rate=rate, channels=channels, args=args, tagged=True,
                            cover=has_cover, chapters=has_chapters))
    # pcm_s16le at 48 kHz stereo in WAV is the plainest input; make sure the corner of each
    # container holds at least one entry (it does: every container above).
    names = [e["name"] for e in entries]
    assert len(names) == len(set(names)), "duplicate names"
    return entries


def container_name(extension):
    return {"rf64.wav": "rf64", "oga": "ogg", "ogg": "ogg", "opus": "ogg", "spx": "ogg", "m4a": "mp4", "mov": "mov",
            "webm": "webm", "mka": "matroska", "wma": "asf", "flv": "flv", "rm": "rm", "vob": "mpeg-ps", "ts": "mpeg-ts",
            "aac": "adts"}.get(extension, extension)


def metadata_file(directory, chapters):
    path = os.path.join(directory, "metadata-chapters.txt" if chapters else "metadata.txt")
    if not os.path.exists(path):
        lines = [";FFMETADATA1"] + [f"{k}={v}" for k, v in TAGS.items()]
        if chapters:
            lines += ["[CHAPTER]", "TIMEBASE=1/1000", "START=0", "END=400", "title=One",
                      "[CHAPTER]", "TIMEBASE=1/1000", "START=400", f"END={int(DURATION * 1000)}", "title=Two"]
        with open(path + ".tmp", "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(path + ".tmp", path)
    return path


def make(entry, directory, cover_jpeg):
    """Makes one input and its referee; returns the entry with the referee fields."""
    out = os.path.join(directory, entry["name"])
    rate, channels = entry["rate"], entry["channels"]
    with tempfile.TemporaryDirectory(dir=directory) as scratch:
        tool = entry["tool"]
        if tool == "ffmpeg":
            inputs, maps, meta = signal(rate, channels), ["-map", "0:a"], []
            if entry["tagged"]:
                extension = entry["name"].rsplit(".", 1)[-1]
                inputs += ["-i", metadata_file(directory, entry["chapters"])]
                meta = ["-map_metadata", "1"] + (["-map_chapters", "1"] if entry["chapters"] else ["-map_chapters", "-1"])
                if extension in ("ogg", "opus", "spx", "oga") and entry["cover"]:
                    with open(cover_jpeg, "rb") as f:
                        picture = flac_picture_comment(f.read())
                    meta += ["-metadata:s:a:0", f"METADATA_BLOCK_PICTURE={picture}"]
                elif extension == "mka" and entry["cover"]:
                    meta += ["-attach", cover_jpeg, "-metadata:s:t", "mimetype=image/jpeg", "-metadata:s:t", "filename=cover.jpg"]
                elif entry["cover"]:
                    inputs += ["-i", cover_jpeg]
                    maps += ["-map", "2:v"]
                    meta += ["-c:v", "copy", "-disposition:v", "attached_pic"]
            ffmpeg(*inputs, *maps, *meta, *entry["args"], out)
        elif tool == "lame":
            wav = os.path.join(scratch, "in.wav")
            ffmpeg(*signal(rate, channels), "-c:a", "pcm_s16le", wav)
            tags = []
            if entry["tagged"]:
                tags = ["--tt", TAGS["title"], "--ta", TAGS["artist"], "--tl", TAGS["album"], "--ty", TAGS["date"],
                        "--tn", TAGS["track"], "--tc", TAGS["comment"], "--ti", cover_jpeg]
            run(["lame", "--quiet", "--noreplaygain", *tags, wav, out])
        elif tool in ("flac", "flac16"):
            wav = os.path.join(scratch, "in.wav")
            ffmpeg(*signal(rate, channels), "-c:a", "pcm_s32le" if tool == "flac" else "pcm_s16le", wav)
            tags = []
            if entry["tagged"]:
                tags = [f"--tag={k.upper() if k != 'track' else 'TRACKNUMBER'}={v}" for k, v in TAGS.items()]
                tags += [f"--picture={cover_jpeg}"]
            run(["flac", "--silent", "--force", *tags, "-o", out, wav])
        else:
            raise RuntimeError(f"unknown tool {tool}")

        # What the file is, as ffprobe reads it.
        probe = json.loads(run(["ffprobe", "-v", "error", "-show_streams", "-show_chapters", "-show_format",
                                "-of", "json", out]))
        audio = next(s for s in probe["streams"] if s["codec_type"] == "audio")
        tags = {**probe.get("format", {}).get("tags", {}), **audio.get("tags", {})}
        result = dict(entry)
        result.pop("args")
        result.update(codec=audio["codec_name"], decodedRate=int(audio["sample_rate"]), decodedChannels=audio["channels"],
                      layout=audio.get("channel_layout", ""), format=probe["format"]["format_name"],
                      bitsPerSample=int(audio.get("bits_per_raw_sample") or audio.get("bits_per_sample") or 0),
                      tags=sorted(k.lower() for k in tags if k.lower() in TAGS or k.lower() == "tracknumber"),
                      coverRead=any(s["codec_type"] in ("video", "attachment") for s in probe["streams"])
                      or any("METADATA_BLOCK_PICTURE" == k.upper() for k in tags),
                      chaptersRead=len(probe.get("chapters", [])))
        del result["tagged"]
        result["tagged"] = entry["tagged"]

        # The referee decode.
        referee_note = ""
        full = os.path.join(scratch, "referee.wav")
        ffmpeg("-i", out, "-map", "0:a:0", "-c:a", "pcm_s32le", "-f", "wav", full)
        frames = result["ffmpegFrames"] = wav_frames(full)
        referee_tool = "ffmpeg"
        if result["codec"] == "flac" and result["format"] == "flac":
            # libFLAC's decode beside FFmpeg's: FFmpeg 5.1 decodes no frame of 32-bit FLAC, nor of
            # the non-subset FLAC its own encoder writes at >= 176.4 kHz (blocks of 16384 or 32768
            # samples whose frames outgrow its parser); flac -d is then the referee.
            reference = os.path.join(scratch, "libflac.wav")
            run(["flac", "--silent", "--force", "-d", "-o", reference, out])
            result["flacDecodeFrames"] = wav_frames(reference)
            if result["flacDecodeFrames"] != frames:
                why = "32-bit FLAC" if result["bitsPerSample"] == 32 else "non-subset FLAC (large blocks) from FFmpeg's encoder"
                referee_note = f"FFmpeg 5.1 decodes {frames} frames of this {why}: libFLAC's flac -d is the referee"
                referee_tool = "flac -d"
                full, frames = reference, result["flacDecodeFrames"]
        if result["format"].startswith("mov,mp4"):
            # FFmpeg 5.1 applies an edit list's start (the AAC priming) but not its end: it gives
            # whole packets. The referee ends where the edit ends.
            edit = edit_list_frames(out)
            if edit is not None and edit < frames:
                trimmed = os.path.join(scratch, "trimmed.wav")
                ffmpeg("-i", full, "-af", f"atrim=end_sample={edit}", "-c:a", "pcm_s32le", trimmed)
                referee_note = (f"FFmpeg 5.1 gives {frames} frames (whole packets): it applies the edit list's start "
                                f"but not its end; the referee ends with the edit, at {edit}")
                full, frames = trimmed, wav_frames(trimmed)
        if tool == "lame":
            # The lame tool's own decoder, for the record: it agrees with FFmpeg (both honour the
            # LAME tag's delay and padding).
            lame_wav = os.path.join(scratch, "lame.wav")
            run(["lame", "--quiet", "--decode", out, lame_wav])
            result["lameDecodeFrames"] = wav_frames(lame_wav)
        output_rate = aac_output_rate(result["decodedRate"])
        referee = entry["name"] + ".referee.wav"
        if output_rate == result["decodedRate"]:
            ffmpeg("-i", full, "-c:a", "pcm_s16le", os.path.join(directory, referee))
            expected = frames
        else:
            ffmpeg("-i", full, "-af", "aresample=resampler=soxr:precision=28", "-ar", str(output_rate),
                   "-c:a", "pcm_s16le", os.path.join(directory, referee))
            expected = wav_frames(os.path.join(directory, referee))
        result.update(refereeFrames=frames, refereeTool=referee_tool, refereeNote=referee_note, outputRate=output_rate,
                      expectedFrames=expected, referee=referee)
        return result


def boxes(data, start, end):
    """(type, payload start, payload end) of the ISO BMFF boxes in data[start:end]."""
    while start + 8 <= end:
        size, kind = struct.unpack(">I4s", data[start:start + 8])
        header = 8
        if size == 1:
            size, header = struct.unpack(">Q", data[start + 8:start + 16])[0], 16
        elif size == 0:
            size = end - start
        if size < header or start + size > end:
            return
        yield kind.decode("latin-1"), start + header, start + size
        start += size


def edit_list_frames(path):
    """The first sound track's edit duration in its media timescale (frames), or None."""
    with open(path, "rb") as f:
        data = f.read()
    for kind, start, end in boxes(data, 0, len(data)):
        if kind != "moov":
            continue
        movie_scale = None
        for k, s, e in boxes(data, start, end):
            if k == "mvhd":
                movie_scale = struct.unpack(">I", data[s + (20 if data[s] == 1 else 12):][:4])[0]
        for k, s, e in boxes(data, start, end):
            if k != "trak":
                continue
            children = {kk: (ss, ee) for kk, ss, ee in boxes(data, s, e)}
            if "mdia" not in children:
                continue
            media = {kk: (ss, ee) for kk, ss, ee in boxes(data, *children["mdia"])}
            if "hdlr" not in media or data[media["hdlr"][0] + 8:media["hdlr"][0] + 12] != b"soun":
                continue
            mdhd = media["mdhd"][0]
            media_scale = struct.unpack(">I", data[mdhd + (20 if data[mdhd] == 1 else 12):][:4])[0]
            if "edts" not in children or not movie_scale:
                return None
            for kk, ss, ee in boxes(data, *children["edts"]):
                if kk == "elst":
                    version, count = data[ss], struct.unpack(">I", data[ss + 4:ss + 8])[0]
                    total = 0
                    for i in range(count):
                        if version == 1:
                            duration, media_time = struct.unpack(">Qq", data[ss + 8 + 20 * i:ss + 24 + 20 * i])
                        else:
                            duration, media_time = struct.unpack(">Ii", data[ss + 8 + 12 * i:ss + 16 + 12 * i])
                        if media_time >= 0:
                            total += duration
                    return (2 * total * media_scale + movie_scale) // (2 * movie_scale)
            return None
    return None


def script_hash():
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def generate(directory):
    directory = os.path.abspath(directory)
    manifest_path = os.path.join(directory, "manifest.json")
    digest = script_hash()
    if os.path.exists(manifest_path):
        try:
            with open(manifest_path) as f:
                manifest = json.load(f)
            if manifest.get("generator") == digest and all(
                    os.path.exists(os.path.join(directory, e["name"])) and os.path.exists(os.path.join(directory, e["referee"]))
                    for e in manifest["entries"]):
                print(f"{manifest_path}: up to date ({len(manifest['entries'])} inputs)")
                return manifest
        except (OSError, ValueError, KeyError):
            pass
    for tool in ("ffmpeg", "ffprobe", "flac", "lame"):
        if shutil.which(tool) is None:
            sys.exit(f"input-matrix: {tool} not found (make deps installs it)")
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    cover_jpeg = os.path.join(directory, "cover.jpg")
    ffmpeg("-f", "lavfi", "-i", "color=c=0x3366cc:s=64x64", "-frames:v", "1", cover_jpeg)
    metadata_file(directory, False)
    metadata_file(directory, True)
    entries = plan()
    failures = []
    results = [None] * len(entries)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        futures = {pool.submit(make, entry, directory, cover_jpeg): i for i, entry in enumerate(entries)}
        for future in concurrent.futures.as_completed(futures):
            try:
                results[futures[future]] = future.result()
            except Exception as error:  # noqa: BLE001 - every failure is listed, then fatal
                failures.append(f"{entries[futures[future]]['name']}: {error}")
    if failures:
        sys.exit("input-matrix: could not make\n  " + "\n  ".join(failures))
    manifest = {"generator": digest, "count": len(results), "duration": DURATION, "entries": results,
                "summary": summary(results)}
    with open(manifest_path + ".tmp", "w") as f:
        json.dump(manifest, f, indent=1)
    os.replace(manifest_path + ".tmp", manifest_path)
    print(f"{manifest_path}: {len(results)} inputs made")
    return manifest


def summary(results):
    return {"codecs": sorted({e["codec"] for e in results}),
            "containers": sorted({e["container"] for e in results}),
            "rates": sorted({e["rate"] for e in results}),
            "channels": sorted({e["channels"] for e in results}),
            "tagged": sum(1 for e in results if e["tagged"])}


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "generate":
        generate(sys.argv[2])
    elif len(sys.argv) == 2 and sys.argv[1] == "list":
        for entry in plan():
            print(entry["name"])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
