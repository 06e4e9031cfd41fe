#!/usr/bin/env python3
"""M4As written by others, for the interop tests (issue 20, item 3): FFmpeg in its -movflags
layouts and with timestamps that jitter or jump, GStreamer's mp4mux and qtmux (avenc_aac and
voaacenc), files tagged by AtomicParsley and by mutagen, and a hand-made `stsc` whose second
entry repeats the first chunk number (Firefox's mp4parse reads it).

    foreign-m4a.py OUTDIR

Writes OUTDIR/*.m4a and OUTDIR/manifest.json, a list of {name, file, recipe, fragmented,
packets, expectedFrames, priming, sampleRate, channels, quirks, damage, timing, inputWarnings}:
packets is the number of AAC packets, expectedFrames what the file's own tables say a decoder
presents (the edit; the media's own end where the edit is that end rounded to the movie
timescale; with no edit, the `stts`/`trun` sum), priming the edit's media_time, quirks the
FFmpeg 5.1 lines the file draws ("cover"), damage whether keyframe must report damage, timing how
its timestamps run. Nothing is redone while OUTDIR/stamp holds the hash of this script and the
tools' versions; a new set is built beside OUTDIR and renamed onto it, so two test processes can
race. Prints the manifest's path.

Runs with the venv's python (mutagen); ffmpeg, gst-launch-1.0 and AtomicParsley come from
`make deps`.
"""

import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

RATE = 44100
FRAMES = 6 * RATE + 321  # an odd length: the last packet is short

# The signal: a chirp plus seeded noise on each channel (lines up at one lag only).
SIGNAL = ("aevalsrc='0.3*sin(2*PI*(150*t+1800*t*t))+0.25*(2*random(0)-1)"
          "|0.3*sin(2*PI*(260*t+1100*t*t))+0.25*(2*random(1)-1)':s=%d:d=%f")


def run(*args, **kwargs):
    result = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)
    if result.returncode != 0:
        sys.exit("foreign-m4a: %s failed (%d):\n%s" % (" ".join(args), result.returncode,
                                                      result.stderr.decode(errors="replace")))
    return result.stdout.decode(errors="replace")


def ffmpeg(*args):
    run("ffmpeg", "-nostdin", "-v", "error", "-y", *args)


def gst(pipeline):
    run("gst-launch-1.0", "-q", *pipeline.split())


# --- ISO BMFF ------------------------------------------------------------------------------------

CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"edts", b"udta", b"moof", b"traf", b"mvex"}


def boxes(data, start=0, end=None):
    end = len(data) if end is None else end
    position = start
    while position + 8 <= end:
        size, kind = struct.unpack(">I4s", data[position:position + 8])
        header = 8
        if size == 1:
            size = struct.unpack(">Q", data[position + 8:position + 16])[0]
            header = 16
        elif size == 0:
            size = end - position
        if size < header:
            break
        yield position, size, kind, header
        position += size


def find(data, kind, start=0, end=None, path=()):
    """Every box of `kind` below start..end: (offset, size, header, path of the parents' offsets)."""
    for offset, size, box, header in boxes(data, start, end):
        if box == kind:
            yield offset, size, header, path
        if box in CONTAINERS:
            yield from find(data, kind, offset + header, offset + size, path + (offset,))


def full_box(data, offset, header):
    version = data[offset + header]
    return version, offset + header + 4


def tables(path):
    """What the file's own tables say: packets, presented frames, fragmented, timescale."""
    whole = open(path, "rb").read()
    # The sound track's boxes only (a cover or a chapter track has tables of its own); the moov
    # and the fragments are searched as they are, their one audio track being the first.
    data = whole
    for offset, size, header, _ in find(whole, b"trak"):
        handler = next(find(whole, b"hdlr", offset + header, offset + size), None)
        if handler and whole[handler[0] + handler[2] + 8:handler[0] + handler[2] + 12] == b"soun":
            data = bytearray(whole)
            for other, other_size, other_header, _ in find(whole, b"trak"):
                if other != offset:
                    data[other + 4:other + 8] = b"skip"  # hide the other tracks from find()
            data = bytes(data)
            break
    packets = 0
    stts_total = 0
    for offset, size, header, _ in find(data, b"stts"):
        _, body = full_box(data, offset, header)
        (count,) = struct.unpack(">I", data[body:body + 4])
        for index in range(count):
            n, delta = struct.unpack(">II", data[body + 4 + 8 * index:body + 12 + 8 * index])
            packets += n
            stts_total += n * delta
    fragmented = any(True for _ in find(data, b"moof"))
    default_duration = 0
    for offset, size, header, _ in find(data, b"trex"):
        _, body = full_box(data, offset, header)
        default_duration = struct.unpack(">I", data[body + 8:body + 12])[0]
    for offset, size, header, _ in find(data, b"traf"):
        traf_default = default_duration
        for t_offset, _, t_header, _ in find(data, b"tfhd", offset + header, offset + size):
            flags = struct.unpack(">I", data[t_offset + t_header:t_offset + t_header + 4])[0] & 0xFFFFFF
            cursor = t_offset + t_header + 8
            if flags & 0x1:
                cursor += 8
            if flags & 0x2:
                cursor += 4
            if flags & 0x8:
                traf_default = struct.unpack(">I", data[cursor:cursor + 4])[0]
        for r_offset, _, r_header, _ in find(data, b"trun", offset + header, offset + size):
            flags = struct.unpack(">I", data[r_offset + r_header:r_offset + r_header + 4])[0] & 0xFFFFFF
            count = struct.unpack(">I", data[r_offset + r_header + 4:r_offset + r_header + 8])[0]
            cursor = r_offset + r_header + 8 + (4 if flags & 0x1 else 0) + (4 if flags & 0x4 else 0)
            for _ in range(count):
                duration = traf_default
                if flags & 0x100:
                    duration = struct.unpack(">I", data[cursor:cursor + 4])[0]
                cursor += 4 * bin(flags & 0xF00).count("1")
                packets += 1
                stts_total += duration
    movie_timescale = media_timescale = None
    for offset, size, header, _ in find(data, b"mvhd"):
        version, body = full_box(data, offset, header)
        movie_timescale = struct.unpack(">I", data[body + (16 if version else 8):][:4])[0]
    for offset, size, header, _ in find(data, b"mdhd"):
        version, body = full_box(data, offset, header)
        media_timescale = struct.unpack(">I", data[body + (16 if version else 8):][:4])[0]
    edits = []
    for offset, size, header, _ in find(data, b"elst"):
        version, body = full_box(data, offset, header)
        (count,) = struct.unpack(">I", data[body:body + 4])
        cursor = body + 4
        for _ in range(count):
            if version:
                duration, media_time = struct.unpack(">Qq", data[cursor:cursor + 16])
                cursor += 20
            else:
                duration, media_time = struct.unpack(">Ii", data[cursor:cursor + 8])
                cursor += 12
            edits.append((duration, media_time))
    presented = stts_total
    priming = 0
    media_edits = [(d, m) for d, m in edits if m >= 0]
    if len(media_edits) == 1:
        duration, priming = media_edits[0]
        media = stts_total - priming
        presented = media
        if duration and not fragmented:
            # The edit is in the movie timescale (FFmpeg's is 1000, GStreamer's 1800): when the
            # media after media_time is within one movie tick of it, the edit is that media's end
            # rounded, and the media's end is the exact one; else the edit, to the nearest sample,
            # never past the media.
            tick = -(-media_timescale // movie_timescale)
            from_edit = duration * media_timescale / movie_timescale
            if abs(from_edit - media) >= tick:
                presented = min(media, (2 * duration * media_timescale + movie_timescale) // (2 * movie_timescale))
    return {"packets": packets, "expectedFrames": presented, "fragmented": fragmented, "priming": priming,
            "edits": edits, "sttsTotal": stts_total}


def replace_box(data, kind, payload):
    """Replaces the body of the first `kind` box (a box inside the last top-level box, the moov,
    so that nothing after it moves but the moov's own bytes) and fixes its parents' sizes."""
    offset, size, header, parents = next(find(data, kind))
    delta = header + len(payload) - size
    data[offset + header:offset + size] = payload
    for box in parents + (offset,):
        (box_size,) = struct.unpack(">I", data[box:box + 4])
        data[box:box + 4] = struct.pack(">I", box_size + delta)


def repeat_first_stsc_entry(source, target, per_chunk=20):
    """Copies source (one chunk, moov after mdat: FFmpeg's default) with its samples in chunks of
    `per_chunk` and an stsc of two entries, the second repeating the first's chunk number:
    [(1, per_chunk, 1), (1, per_chunk, 1)]. Chunk 1 then has two entries: read either way, every
    chunk holds per_chunk samples (FFmpeg moves the second entry to chunk 2 with a warning, mp4parse
    takes the later entry)."""
    data = bytearray(open(source, "rb").read())
    moov = next(o for o, s, k, h in boxes(data) if k == b"moov")
    mdat = next(o for o, s, k, h in boxes(data) if k == b"mdat")
    assert mdat < moov, "the moov must come last"
    offset, size, header, _ = next(find(data, b"stsz"))
    _, body = full_box(data, offset, header)
    uniform, count = struct.unpack(">II", data[body:body + 8])
    sizes = [uniform] * count if uniform else list(struct.unpack(">%dI" % count, data[body + 8:body + 8 + 4 * count]))
    offset, size, header, _ = next(find(data, b"stco"))
    _, body = full_box(data, offset, header)
    assert struct.unpack(">I", data[body:body + 4])[0] == 1, "one chunk expected"
    (position,) = struct.unpack(">I", data[body + 4:body + 8])
    offsets = []
    for index, sample_size in enumerate(sizes):
        if index % per_chunk == 0:
            offsets.append(position)
        position += sample_size
    replace_box(data, b"stco", struct.pack(">II%dI" % len(offsets), 0, len(offsets), *offsets))
    last = count - per_chunk * (len(offsets) - 1)
    entries = [(1, per_chunk, 1), (1, per_chunk, 1)] + ([(len(offsets), last, 1)] if last != per_chunk else [])
    replace_box(data, b"stsc", struct.pack(">II", 0, len(entries)) + b"".join(struct.pack(">III", *e) for e in entries))
    open(target, "wb").write(data)


# --- the recipes --------------------------------------------------------------------------------

QUIRK_COVER = "cover"                 # ffprobe: "stream 0, timescale not set"
QUIRK_CHAPTER_TRACK = "chapterTrack"  # ffprobe: "Unsupported codec with id 98314"


# How each file's timestamps run: "regular" (1024 a packet, the last one shorter), "jitter"
# (deltas of 1022-1025), "gap" (one delta of two frames' time or more), "emptyEdit" (an empty edit
# first). Only "regular" files decode to FFmpeg's samples from start to end.
TIMING = {"ffmpeg-jitter": "jitter", "ffmpeg-gap-2048": "gap", "ffmpeg-gap-2964": "gap", "ffmpeg-ts-offset": "emptyEdit"}
# What FFmpeg says about the input itself, and so about an edit in place that keeps its tables.
INPUT_WARNINGS = {"stsc-repeated-chunk": ["STSC entry 1 is invalid (first=1 count=20 id=1)"]}


def jitter(expression):
    return ["-c", "copy", "-bsf:a", "setts=ts='%s'" % expression]


def recipes(work):
    """(name, recipe text, function making the file, quirks, damage expected from keyframe)."""
    wav = os.path.join(work, "signal.wav")
    src = os.path.join(work, "ffmpeg-plain.m4a")
    cover = os.path.join(work, "cover.jpg")
    meta = os.path.join(work, "chapters.txt")

    def ff(*args, source=None):
        def make(out):
            if source:
                ffmpeg("-i", source, *args, out)
            else:
                ffmpeg("-i", wav, "-c:a", "aac", "-aac_pns", "0", "-b:a", "128k", *args, out)
        return make

    def gst_make(encoder, muxer, extra=""):
        def make(out):
            gst("filesrc location=%s ! wavparse ! audioconvert ! %s ! aacparse ! %s %s ! filesink location=%s"
                % (wav, encoder, muxer, extra, out))
        return make

    def atomicparsley(out):
        shutil.copy(src, out)
        run("AtomicParsley", out, "--title", "From AtomicParsley", "--artist", "AP Artist", "--album", "AP Album",
            "--tracknum", "2/9", "--year", "2019", "--genre", "Speech", "--comment", "tagged by AtomicParsley",
            "--artwork", cover, "--overWrite")

    def mutagen_tag(base):
        def make(out):
            shutil.copy(base, out)
            import mutagen.mp4 as mp4
            f = mp4.MP4(out)
            f["\xa9nam"] = ["From Mutagen"]
            f["\xa9ART"] = ["Mutagen Artist"]
            f["trkn"] = [(4, 7)]
            f["----:com.example:note"] = [mp4.MP4FreeForm(b"free form")]
            f["covr"] = [mp4.MP4Cover(open(cover, "rb").read(), imageformat=mp4.MP4Cover.FORMAT_JPEG)]
            f.save()
        return make

    def stsc(out):
        repeat_first_stsc_entry(src, out)

    frag = "frag_keyframe+empty_moov"
    return [
        ("ffmpeg-plain", "ffmpeg -c:a aac -aac_pns 0 -b:a 128k", lambda out: shutil.copy(src, out), [], False),
        ("ffmpeg-faststart", "ffmpeg -movflags +faststart", ff("-movflags", "+faststart"), [], False),
        ("ffmpeg-frag", "ffmpeg -movflags " + frag, ff("-movflags", frag), [], False),
        ("ffmpeg-frag-1s", "ffmpeg -movflags %s -frag_duration 1000000" % frag,
         ff("-movflags", frag, "-frag_duration", "1000000"), [], False),
        ("ffmpeg-dash", "ffmpeg -movflags dash", ff("-movflags", "dash"), [], False),
        ("ffmpeg-cmaf", "ffmpeg -movflags cmaf -frag_duration 2000000", ff("-movflags", "cmaf", "-frag_duration", "2000000"), [], False),
        ("ffmpeg-separate-moof", "ffmpeg -movflags %s+separate_moof" % frag, ff("-movflags", frag + "+separate_moof"), [], False),
        ("ffmpeg-default-base-moof", "ffmpeg -movflags %s+default_base_moof -frag_duration 1000000" % frag,
         ff("-movflags", frag + "+default_base_moof", "-frag_duration", "1000000"), [], False),
        ("ffmpeg-omit-tfhd-offset", "ffmpeg -movflags %s+omit_tfhd_offset -frag_duration 1000000" % frag,
         ff("-movflags", frag + "+omit_tfhd_offset", "-frag_duration", "1000000"), [], False),
        ("ffmpeg-metadata-tags", "ffmpeg -movflags use_metadata_tags -metadata title=… -metadata custom_key=…",
         ff("-movflags", "use_metadata_tags", "-metadata", "title=Metadata Tags", "-metadata", "custom_key=custom value"), [], False),
        ("ffmpeg-negative-cts", "ffmpeg -movflags %s+negative_cts_offsets -frag_duration 1000000" % frag,
         ff("-movflags", frag + "+negative_cts_offsets", "-frag_duration", "1000000"), [], False),
        ("ffmpeg-ts-offset", "ffmpeg -c copy -output_ts_offset 0.25 (an empty edit first)",
         ff("-c", "copy", "-output_ts_offset", "0.25", source=src), [], False),
        ("ffmpeg-jitter", "ffmpeg -c copy -bsf:a setts: stts deltas 1022, 1024, 1025, 1025",
         ff(*jitter("TS+if(eq(mod(N,4),1),-2,if(eq(mod(N,4),2),-2,if(eq(mod(N,4),3),-1,0)))"), source=src), [], False),
        ("ffmpeg-gap-2048", "ffmpeg -c copy -bsf:a setts: from packet 40 on +1024 (one stts delta 2048)",
         ff(*jitter("TS+if(gte(N,40),1024,0)"), source=src), [], False),
        ("ffmpeg-gap-2964", "ffmpeg -c copy -bsf:a setts: from packet 40 on +1940 (one stts delta 2964)",
         ff(*jitter("TS+if(gte(N,40),1940,0)"), source=src), [], False),
        ("ffmpeg-chapters-cover", "ffmpeg with FFMETADATA chapters and an attached-picture cover",
         lambda out: ffmpeg("-i", src, "-i", cover, "-i", meta, "-map", "0:a", "-map", "1:v", "-map_chapters", "2",
                            "-c", "copy", "-disposition:v", "attached_pic", out),
         [QUIRK_COVER, QUIRK_CHAPTER_TRACK], False),
        ("gst-mp4mux-avenc", "gst-launch-1.0 wavparse ! avenc_aac aac-pns=false ! aacparse ! mp4mux", gst_make("avenc_aac aac-pns=false", "mp4mux"), [], False),
        ("gst-mp4mux-voaac", "gst-launch-1.0 wavparse ! voaacenc ! aacparse ! mp4mux faststart=true",
         gst_make("voaacenc", "mp4mux", "faststart=true"), [], False),
        ("gst-qtmux-voaac", "gst-launch-1.0 wavparse ! voaacenc ! aacparse ! qtmux", gst_make("voaacenc", "qtmux"), [], False),
        ("gst-mp4mux-fragmented", "gst-launch-1.0 wavparse ! avenc_aac aac-pns=false ! aacparse ! mp4mux fragment-duration=1000",
         gst_make("avenc_aac aac-pns=false", "mp4mux", "fragment-duration=1000"), [], False),
        ("atomicparsley-tagged", "FFmpeg's M4A tagged by AtomicParsley (text, track, genre, artwork)", atomicparsley, [QUIRK_COVER], False),
        ("mutagen-tagged", "FFmpeg's M4A tagged by mutagen (text, track, free-form, cover)", mutagen_tag(src), [QUIRK_COVER], False),
        ("mutagen-tagged-gst", "GStreamer's mp4mux M4A tagged by mutagen (text, track, free-form, cover)",
         mutagen_tag(os.path.join(work, "gst-mp4mux-avenc.m4a")), [QUIRK_COVER], False),
        ("stsc-repeated-chunk", "FFmpeg's M4A with the stsc's first entry written twice (second entry's first_chunk = 1)",
         stsc, [], True),
    ]


def stamp_text(script):
    versions = []
    for tool in (["ffmpeg", "-version"], ["gst-launch-1.0", "--version"], ["AtomicParsley", "--version"]):
        try:
            versions.append(subprocess.run(tool, stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout.decode(errors="replace").splitlines()[0])
        except OSError:
            versions.append(tool[0] + " missing")
    try:
        import mutagen
        versions.append("mutagen " + mutagen.version_string)
    except ImportError:
        versions.append("mutagen missing")
    return hashlib.sha256(open(script, "rb").read()).hexdigest() + "\n" + "\n".join(versions) + "\n"


def build(outdir):
    stamp = stamp_text(os.path.abspath(__file__))
    stamp_path = os.path.join(outdir, "stamp")
    if os.path.exists(stamp_path) and open(stamp_path).read() == stamp and os.path.exists(os.path.join(outdir, "manifest.json")):
        return
    parent = os.path.dirname(os.path.abspath(outdir))
    os.makedirs(parent, exist_ok=True)
    work = tempfile.mkdtemp(prefix=".foreign-m4a-", dir=parent)
    try:
        wav = os.path.join(work, "signal.wav")
        ffmpeg("-f", "lavfi", "-i", SIGNAL % (RATE, FRAMES / RATE + 0.1), "-af", "atrim=end_sample=%d" % FRAMES,
               "-c:a", "pcm_s16le", wav)
        ffmpeg("-i", wav, "-c:a", "aac", "-aac_pns", "0", "-b:a", "128k", os.path.join(work, "ffmpeg-plain.m4a"))
        ffmpeg("-f", "lavfi", "-i", "testsrc=s=64x64", "-frames:v", "1", "-q:v", "3", os.path.join(work, "cover.jpg"))
        with open(os.path.join(work, "chapters.txt"), "w") as f:
            f.write(";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=2500\ntitle=Eins\n"
                    "[CHAPTER]\nTIMEBASE=1/1000\nSTART=2500\nEND=6000\ntitle=Zwei\n")
        manifest = []
        for name, recipe, make, quirks, damage in recipes(work):
            out = os.path.join(work, name + ".m4a")
            if name != "ffmpeg-plain":
                make(out)
            entry = {"name": name, "file": os.path.join(os.path.abspath(outdir), name + ".m4a"), "recipe": recipe,
                     "sampleRate": RATE, "channels": 2, "sourceFrames": FRAMES, "quirks": quirks, "damage": damage,
                     "timing": TIMING.get(name, "regular"), "inputWarnings": INPUT_WARNINGS.get(name, [])}
            entry.update(tables(out))
            if entry["timing"] == "gap":
                # A decoder never sees stts: every frame decodes to 1024 samples, back to back, so
                # a gap in the timestamps is not heard as silence (issue 20: edits and decodes count
                # frames). What is presented is every decoded sample after the priming.
                entry["expectedFrames"] = min(entry["expectedFrames"], entry["packets"] * 1024 - entry["priming"])
            manifest.append(entry)
        os.remove(os.path.join(work, "chapters.txt"))
        with open(os.path.join(work, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1)
        with open(os.path.join(work, "stamp"), "w") as f:
            f.write(stamp)
        # Replace the old set: rename it away, move the new one in (a racing twin may win).
        old = None
        if os.path.exists(outdir):
            old = tempfile.mkdtemp(prefix=".foreign-m4a-old-", dir=parent)
            os.rename(outdir, os.path.join(old, "set"))
        try:
            os.rename(work, outdir)
            work = None
        except OSError:
            pass
        if old:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    build(sys.argv[1])
    print(os.path.join(os.path.abspath(sys.argv[1]), "manifest.json"))
