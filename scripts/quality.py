#!/usr/bin/env python3
"""Quality parity: `keyframe encode` against `ffmpeg -c:a aac`, scored by perceptual metrics.

    .venv/bin/python scripts/quality.py [--json] [--bitrates 96k,128k] [--seconds 15]
                                        [--keyframe PATH] [--no-visqol] [--no-write]

A deterministic 48 kHz stereo test signal (the one scripts/bench.py uses: voice-like harmonics,
pink noise, noise bursts, chords) is encoded at each bitrate by `keyframe encode` and by
`ffmpeg -c:a aac -b:a RATE -f adts`. Both ADTS files are decoded by the same decoder (ffmpeg's,
to 32-bit float so no requantisation is added), aligned to the original (the encoder's priming,
1024 samples, is measured by cross-correlation, not assumed), cut to the original's length, and
scored against it:

- Zimtohrli (PyPI `zimtohrli`): a psychoacoustic distance, 0 for identical signals, LOWER IS
  BETTER; computed per channel at 48 kHz and averaged. Its approximate MOS mapping is also shown.
- ViSQOL v3 audio mode (PyPI `visqol-python`, a pure-Python port): MOS-LQO from 1 to 5, HIGHER
  IS BETTER; the audio model tops out near 4.73 (the score of a signal against itself). ViSQOL
  mixes stereo to mono first. Skipped with --no-visqol or when the package is missing.
- SNR of the aligned decode against the original, in dB (not perceptual; a sanity figure).

It also says whether the two AAC files are byte-identical. The exit status is non-zero only when a
tool fails (an encoder, the decoder, a metric), never because of a score.

HE-AAC (issue 25; section `he-aac`, on by default, `--sections lc` leaves it out): on three inputs,
each `--he-aac-seconds` long (default 20), 48 kHz stereo, made once into bench-out/quality/ and
reused:

- bench: the test signal above;
- music: an Impulse Tracker module from Debian's pingus-data (`pingus-8.it`, "pingus - level" by
  Joseph Toscano, GPL-2+: piano, bass guitar, square-wave lead, drums, brass choir; full band to
  20 kHz), rendered from its start by openmpt123 (libopenmpt: 48 kHz float, no dither, 8-tap
  interpolation; the same bytes every time), then to s16;
- speech: recorded human speech from Debian's ktuberling-data (`/usr/share/ktuberling/sounds/en`,
  GPL-2+: 72 English words, 44.1 kHz stereo Ogg Vorbis with near-identical channels, kept stereo),
  the files in name order, resampled to 48 kHz by ffmpeg, 0.3 s of silence after each, cut to length;

at each `--he-aac-bitrates` (48k,64k): `keyframe encode --profile he-aac` to ADTS against
`ffmpeg -c:a aac -b:a RATE -f adts` (LC) at the same rate, and ffmpeg's LC at
`--reference-bitrate` (96k: the issue's "aim for LC at 96k"). Each is decoded, aligned and scored as
above (HE-AAC in ADTS carries no trim: its lag is the decoder delay, ~3000 samples), plus:

- kb/s: the ADTS file's bytes × 8 over the input's duration (ADTS headers included);
- 8–16 kHz: the level of the aligned decode against the source in the third-octave bands of
  midband 8, 10, 12.5 and 16 kHz (IEC 61260 base-10: fm = 1000 × 10^(k/10), edges fm × 10^(±1/20)),
  and the mean absolute difference (the issue's target: within 4 dB). A band where the source is
  below -80 dB (re full-scale mean square) is not counted (the speech has little above 14 kHz);
- for keyframe also `keyframe encode --profile he-aac` to .m4a: ffprobe's profile and rate,
  ffmpeg's decode of it (lag 0, all the input's frames: FFmpeg 5.1 keeps the end padding) and
  `keyframe decode`'s (exactly the input's frames at lag 0).

HE-AAC v2 (issue 26; section `he-aac-v2`): on the same inputs, at each `--he-aac-v2-bitrates`
(24k,32k): `keyframe encode --profile he-aac-v2` against our own `--profile he-aac` (v1) and
ffmpeg's LC at the same rate, scored the same way; the v2 rows also get the .m4a check (ffprobe's
`HE-AACv2`, lag 0, exactly the input's frames in `keyframe decode`).

The section is skipped (with a message, not a failure) while `keyframe encode --help` does not
mention `he-aac` (`he-aac-v2` for the v2 section). The table says whether the issue's targets are met; they are never asserted.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

sys.dont_write_bytecode = True  # no scripts/__pycache__ in the work tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (the shared test signal, machine info and keyframe lookup)

ROOT = bench.ROOT
RATE = 48000  # Zimtohrli requires 48 kHz; ViSQOL's audio mode expects it.
# The largest delay looked for, in samples: LC's priming is 1024; HE-AAC in ADTS (no trim) adds the
# QMF/SBR delay and the core's at half the rate, ~3000 in all.
MAX_LAG = 8192

# HE-AAC inputs (make deps installs the packages): Debian's pingus-data and ktuberling-data.
MUSIC_MODULE = Path("/usr/share/games/pingus/data/music/pingus-8.it")
SPEECH_DIR = Path("/usr/share/ktuberling/sounds/en")
SPEECH_GAP = 0.3  # seconds of silence after each word
# Third-octave bands of the SBR range: IEC 61260 base-10 midbands 10^(k/10) kHz, k = 9..12.
THIRD_OCTAVES = [("8k", 1000 * 10 ** (9 / 10)), ("10k", 1000 * 10 ** (10 / 10)),
                 ("12.5k", 1000 * 10 ** (11 / 10)), ("16k", 1000 * 10 ** (12 / 10))]
BAND_FLOOR_DB = -80.0  # a band whose source level is below this is not counted
BAND_TARGET_DB = 4.0


class ToolError(Exception):
    pass


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise ToolError(f"command failed (exit {proc.returncode}): {shlex.join(cmd)}\n"
                        f"{proc.stderr.strip()[-2000:]}")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- WAV in and out (PCM 16-bit and IEEE float 32, plain or WAVE_FORMAT_EXTENSIBLE) --------------


def read_wav(path: Path):
    import numpy as np
    data = path.read_bytes()
    if data[:4] not in (b"RIFF", b"RF64") or data[8:12] != b"WAVE":
        raise ToolError(f"{path}: not a WAV file")
    pos, fmt, samples = 12, None, None
    while pos + 8 <= len(data):
        cid, size = data[pos:pos + 4], struct.unpack_from("<I", data, pos + 4)[0]
        body = data[pos + 8:pos + 8 + size]
        if cid == b"fmt ":
            tag, channels, rate = struct.unpack_from("<HHI", body, 0)
            bits = struct.unpack_from("<H", body, 14)[0]
            if tag == 0xFFFE:
                tag = struct.unpack_from("<H", body, 24)[0]
            fmt = (tag, channels, rate, bits)
        elif cid == b"data":
            samples = body
            break
        pos += 8 + size + (size & 1)
    if fmt is None or samples is None:
        raise ToolError(f"{path}: no fmt or data chunk")
    tag, channels, rate, bits = fmt
    if (tag, bits) == (1, 16):
        pcm = np.frombuffer(samples[:len(samples) // 2 * 2], dtype="<i2").astype(np.float32) / 32768
    elif (tag, bits) == (3, 32):
        pcm = np.frombuffer(samples[:len(samples) // 4 * 4], dtype="<f4").astype(np.float32)
    else:
        raise ToolError(f"{path}: unsupported WAV format tag {tag}, {bits} bits")
    frames = len(pcm) // channels
    return pcm[:frames * channels].reshape(frames, channels), rate


def write_wav_f32(path: Path, pcm, rate: int) -> None:
    import numpy as np
    body = np.ascontiguousarray(pcm, dtype="<f4").tobytes()
    channels = pcm.shape[1]
    fmt = struct.pack("<HHIIHH", 3, channels, rate, rate * channels * 4, channels * 4, 32)
    with path.open("wb") as f:
        f.write(b"RIFF" + struct.pack("<I", 4 + 8 + len(fmt) + 8 + len(body)) + b"WAVE")
        f.write(b"fmt " + struct.pack("<I", len(fmt)) + fmt)
        f.write(b"data" + struct.pack("<I", len(body)) + body)


# --- alignment and metrics ------------------------------------------------------------------------


def measure_lag(ref, deg) -> int:
    """The delay of deg against ref (0..MAX_LAG samples), by FFT cross-correlation of the mono mix
    over the first seconds."""
    import numpy as np
    n = min(len(ref), 4 * RATE)
    a = ref[:n].mean(axis=1).astype(np.float64)
    b = deg[:n + MAX_LAG].mean(axis=1).astype(np.float64)
    size = 1 << (len(b) + len(a)).bit_length()
    corr = np.fft.irfft(np.fft.rfft(b, size) * np.conj(np.fft.rfft(a, size)), size)
    return int(np.argmax(corr[:MAX_LAG + 1]))


def snr_db(ref, deg) -> float:
    import numpy as np
    noise = float(np.sum((ref.astype(np.float64) - deg) ** 2))
    signal = float(np.sum(ref.astype(np.float64) ** 2))
    return float("inf") if noise == 0 else 10 * np.log10(signal / noise)


def third_octave_levels(pcm) -> dict[str, float]:
    """The level in each of THIRD_OCTAVES, dB re full-scale mean square: the band's share of the
    signal's mean square (from one FFT of the whole signal), averaged over the channels."""
    import numpy as np
    x = np.asarray(pcm, dtype=np.float64)
    n = len(x)
    power = (np.abs(np.fft.rfft(x, axis=0)) ** 2).mean(axis=1)
    power[1:] *= 2  # one-sided
    freqs = np.fft.rfftfreq(n, 1 / RATE)
    levels = {}
    for label, fm in THIRD_OCTAVES:
        lo, hi = fm * 10 ** (-1 / 20), fm * 10 ** (1 / 20)
        ms = float(power[(freqs >= lo) & (freqs < hi)].sum()) / n ** 2
        levels[label] = 10 * np.log10(ms) if ms > 1e-20 else -200.0
    return levels


def band_check(ref_levels: dict[str, float], deg_levels: dict[str, float]) -> dict:
    """Decode level minus source level per band; the mean absolute difference over the bands whose
    source level reaches BAND_FLOOR_DB."""
    diffs = {b: deg_levels[b] - ref_levels[b] for b, _ in THIRD_OCTAVES}
    counted = [b for b, _ in THIRD_OCTAVES if ref_levels[b] >= BAND_FLOOR_DB]
    mean = sum(abs(diffs[b]) for b in counted) / len(counted) if counted else None
    return {"levels": deg_levels, "diff_db": diffs, "counted": counted, "mean_abs_diff_db": mean}


def zimtohrli_scores(ref, deg) -> dict:
    import zimtohrli
    z = zimtohrli.Pyohrli()
    per_channel = [float(z.distance(ref[:, c], deg[:, c])) for c in range(ref.shape[1])]
    mean = sum(per_channel) / len(per_channel)
    return {"distance": mean, "per_channel": per_channel,
            "mos": float(zimtohrli.mos_from_zimtohrli(mean))}


def visqol_score(ref_path: str, deg_path: str) -> float:
    """Runs in a worker process: ViSQOL audio mode, MOS-LQO."""
    import logging
    logging.disable(logging.WARNING)
    from visqol import VisqolApi
    api = VisqolApi()
    api.create(mode="audio")
    return float(api.measure(ref_path, deg_path).moslqo)


# --- the run --------------------------------------------------------------------------------------


def parse_bitrates(text: str) -> list[str]:
    rates = [r.strip() for r in text.split(",") if r.strip()]
    for r in rates:
        if not re.fullmatch(r"\d+(\.\d+)?[kKmM]?", r):
            raise argparse.ArgumentTypeError(f"not a bitrate: {r}")
    return rates


SECTIONS = ("lc", "he-aac", "he-aac-v2")
HE_INPUTS = ("bench", "music", "speech")


def parse_choices(known: tuple[str, ...]):
    def parse(text: str) -> list[str]:
        names = [n.strip() for n in text.split(",") if n.strip()]
        bad = [n for n in names if n not in known]
        if bad or not names:
            raise argparse.ArgumentTypeError(f"unknown {', '.join(bad) or '(none)'}; known: {', '.join(known)}")
        return names
    return parse


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print JSON (the table goes to stderr)")
    parser.add_argument("--bitrates", type=parse_bitrates, default=["96k", "128k"],
                        help="comma-separated (default 96k,128k)")
    parser.add_argument("--seconds", type=int, default=15, help="test signal length (default 15)")
    parser.add_argument("--keyframe", default=None,
                        help="the keyframe executable (default: $KEYFRAME_BIN, else the release "
                             "build's)")
    parser.add_argument("--no-visqol", action="store_true", help="skip ViSQOL (slow: ~25 s a score)")
    parser.add_argument("--out-dir", type=Path, default=bench.OUT_DIR / "quality")
    parser.add_argument("--doc", type=Path, default=bench.DOC, help="the Markdown file to update")
    parser.add_argument("--no-write", action="store_true", help="do not update BENCHMARKS.md")
    parser.add_argument("--invoked-as", default=None,
                        help="the command recorded in BENCHMARKS.md (default: this command line)")
    parser.add_argument("--sections", type=parse_choices(SECTIONS), default=list(SECTIONS),
                        help=f"comma-separated sections to run (default {','.join(SECTIONS)}): lc is the "
                             "LC parity table, he-aac the HE-AAC one (issue 25), he-aac-v2 the HE-AAC v2 one "
                             "(issue 26)")
    parser.add_argument("--inputs", type=parse_choices(HE_INPUTS), default=list(HE_INPUTS),
                        help=f"HE-AAC inputs (default {','.join(HE_INPUTS)})")
    parser.add_argument("--he-aac-bitrates", type=parse_bitrates, default=["48k", "64k"],
                        help="HE-AAC against LC at each (default 48k,64k)")
    parser.add_argument("--he-aac-v2-bitrates", type=parse_bitrates, default=["24k", "32k"],
                        help="HE-AAC v2 against LC and our HE-AAC v1 at each (default 24k,32k)")
    parser.add_argument("--he-aac-seconds", type=int, default=20,
                        help="length of each HE-AAC input, 5 to 55 (default 20; the music module "
                             "lasts 57.8 s)")
    parser.add_argument("--reference-bitrate", default="96k",
                        help="ffmpeg's LC reference row of the HE-AAC table (default 96k; 'none' for none)")
    args = parser.parse_args()
    if args.seconds < 5:
        parser.error("--seconds must be at least 5")
    if not 5 <= args.he_aac_seconds <= 55:
        parser.error("--he-aac-seconds must be 5 to 55")
    if args.reference_bitrate.lower() == "none":
        args.reference_bitrate = None
    elif not re.fullmatch(r"\d+(\.\d+)?[kKmM]?", args.reference_bitrate):
        parser.error(f"not a bitrate: {args.reference_bitrate}")
    try:
        return run_all(args)
    except ToolError as e:
        log(f"quality: FAILED: {e}")
        return 1


def run_all(args) -> int:
    try:
        import numpy as np  # noqa: F401
        import zimtohrli  # noqa: F401
    except ImportError as e:
        raise ToolError(f"{e}; run `make deps` and use .venv/bin/python") from e
    use_visqol = not args.no_visqol
    visqol_note = None
    if use_visqol:
        try:
            import visqol  # noqa: F401
        except ImportError:
            use_visqol, visqol_note = False, "visqol-python not installed: ViSQOL skipped"
            log(f"quality: {visqol_note}")

    keyframe = args.keyframe or bench.default_keyframe()
    if not (os.path.isfile(keyframe) and os.access(keyframe, os.X_OK)):
        raise ToolError(f"no keyframe executable at {keyframe} "
                        "(build it: swift build -c release --product keyframe)")
    out = args.out_dir
    out.mkdir(parents=True, exist_ok=True)
    ref_path = out / f"reference-v1-{args.seconds}s-{RATE}-stereo-s16.wav"
    if not ref_path.is_file():
        log(f"quality: making {bench.display(ref_path)}")
        bench.make_test_wav(ref_path, RATE, args.seconds)
    ref, rate = read_wav(ref_path)
    if rate != RATE or ref.shape[1] != 2:
        raise ToolError(f"{ref_path}: expected {RATE} Hz stereo, got {rate} Hz {ref.shape[1]} ch")
    # ViSQOL reads the reference as float too, so that both sides of each comparison match.
    ref_f32 = out / "reference.f32.wav"
    write_wav_f32(ref_f32, ref, RATE)

    rows, visqol_jobs = [], []
    for br in (args.bitrates if "lc" in args.sections else []):
        encoders = {
            "keyframe": [keyframe, "encode", str(ref_path), "-o", str(out / f"keyframe-{br}.aac"),
                         "--bitrate", br],
            "ffmpeg": ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(ref_path),
                       "-c:a", "aac", "-b:a", br, "-f", "adts", str(out / f"ffmpeg-{br}.aac")],
            # Issue 11: one file on two encoders at once (30 s segments; a signal shorter than
            # one segment gives the serial bytes).
            "keyframe-parallel": [keyframe, "convert", str(ref_path), "-o", str(out / f"keyframe-parallel-{br}.aac"),
                                  "--bitrate", br, "--threads", "2"],
        }
        decoded = {}
        for name, cmd in encoders.items():
            aac = Path(cmd[-1] if name == "ffmpeg" else cmd[4])
            aac.unlink(missing_ok=True)
            log(f"quality: {br} {name}: {shlex.join(cmd)}")
            run(cmd)
            wav = out / f"{name}-{br}.decoded.wav"
            run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(aac), "-ac", "2",
                 "-c:a", "pcm_f32le", str(wav)])
            deg, deg_rate = read_wav(wav)
            if deg_rate != RATE:
                raise ToolError(f"{wav}: decoded at {deg_rate} Hz, expected {RATE}")
            lag = measure_lag(ref, deg)
            if len(deg) < lag + len(ref):
                raise ToolError(f"{wav}: {len(deg)} frames, shorter than lag {lag} + {len(ref)}")
            aligned = deg[lag:lag + len(ref)]
            aligned_path = out / f"{name}-{br}.aligned.wav"
            write_wav_f32(aligned_path, aligned, RATE)
            decoded[name] = aligned
            z = zimtohrli_scores(ref, aligned)
            row = {
                "bitrate": br, "encoder": name, "command": cmd,
                "aac_bytes": aac.stat().st_size, "aac_sha256": sha256(aac),
                "decoded_frames": len(deg), "lag": lag,
                "zimtohrli": z["distance"], "zimtohrli_per_channel": z["per_channel"],
                "zimtohrli_mos": z["mos"], "snr_db": snr_db(ref, aligned), "visqol": None,
            }
            rows.append(row)
            if use_visqol:
                visqol_jobs.append((row, str(ref_f32), str(aligned_path)))
        ours, theirs, parallel = rows[-3], rows[-2], rows[-1]
        same = ours["aac_sha256"] == theirs["aac_sha256"]
        ours["byte_identical_to_ffmpeg"] = theirs["byte_identical_to_ffmpeg"] = same
        parallel["byte_identical_to_ffmpeg"] = parallel["aac_sha256"] == theirs["aac_sha256"]
        diff = float(np.max(np.abs(decoded["keyframe"] - decoded["ffmpeg"])))
        ours["max_abs_diff_vs_ffmpeg"] = theirs["max_abs_diff_vs_ffmpeg"] = diff
        parallel["max_abs_diff_vs_ffmpeg"] = float(np.max(np.abs(decoded["keyframe-parallel"] - decoded["ffmpeg"])))

    he, he_note = None, None
    if "he-aac" in args.sections:
        he_note = bench.keyframe_lacks(keyframe, "encode", "he-aac")
        if he_note is None:
            he = run_he_aac(args, keyframe, out, visqol_jobs)
        elif args.sections == ["he-aac"]:
            raise ToolError(f"HE-AAC: {he_note}")
        else:
            log(f"quality: HE-AAC section skipped: {he_note}")

    he2, he2_note = None, None
    if "he-aac-v2" in args.sections:
        he2_note = bench.keyframe_lacks(keyframe, "encode", "he-aac-v2")
        if he2_note is None:
            he2 = run_he_aac(args, keyframe, out, visqol_jobs, section="he-aac-v2")
        elif args.sections == ["he-aac-v2"]:
            raise ToolError(f"HE-AAC v2: {he2_note}")
        else:
            log(f"quality: HE-AAC v2 section skipped: {he2_note}")

    visqol_seconds = None
    if visqol_jobs:
        log(f"quality: ViSQOL on {len(visqol_jobs)} decodes (~25 s a run on this machine) ...")
        started = time.perf_counter()
        workers = max(1, min(len(visqol_jobs), len(os.sched_getaffinity(0))))
        # ViSQOL is deterministic: a decode whose samples equal one already queued (the two
        # encoders' output is often byte-identical) gets that score instead of a second run.
        unique: dict[str, list[dict]] = {}
        paths: dict[str, tuple[str, str]] = {}
        for row, r, d in visqol_jobs:
            key = sha256(Path(r)) + sha256(Path(d))
            unique.setdefault(key, []).append(row)
            paths[key] = (r, d)
        workers = max(1, min(len(unique), workers))
        with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(visqol_score, *paths[k]): k for k in unique}
            try:
                for fut in concurrent.futures.as_completed(futures):
                    for row in unique[futures[fut]]:
                        row["visqol"] = fut.result()
            except Exception as e:  # a metric failure is a tool failure
                raise ToolError(f"ViSQOL failed: {e!r}") from e
        log(f"quality: ViSQOL ran {len(unique)} time(s) for {len(visqol_jobs)} decodes "
            "(identical decodes share a run)")
        visqol_seconds = time.perf_counter() - started

    info = bench.machine_info()
    report = {
        "signal": {"path": bench.display(ref_path), "seconds": args.seconds, "sample_rate": RATE,
                   "channels": 2, "sha256": sha256(ref_path)},
        "decoder": "ffmpeg -i X.aac -ac 2 -c:a pcm_f32le X.wav (libavcodec aac)",
        "metrics": {
            "zimtohrli": "Zimtohrli distance, mean of the two channels; lower is better, 0 = identical",
            "zimtohrli_mos": "zimtohrli.mos_from_zimtohrli(distance), approximate MOS 1-5, higher is better",
            "visqol": "ViSQOL v3 audio mode MOS-LQO 1-5 (ceiling ~4.73), higher is better; stereo mixed to mono",
            "snr_db": "SNR of the aligned decode against the original, dB, higher is better",
        },
        "visqol_note": visqol_note, "visqol_seconds": visqol_seconds,
        "results": rows, "he_aac": he, "he_aac_note": he_note, "he_aac_v2": he2, "he_aac_v2_note": he2_note,
        **info, "keyframe": keyframe,
    }
    tables = []
    if "lc" in args.sections:
        tables.append(("## Quality parity (AAC-LC)", render_table(report)))
    if he is not None:
        tables.append(("## HE-AAC (issue 25)", render_he_table(report)))
    if he2 is not None:
        tables.append(("## HE-AAC v2 (issue 26)", render_he_table(report, key="he_aac_v2")))
    text = "\n\n".join(f"{title}\n\n{table}" if len(tables) > 1 else table for title, table in tables)
    if args.json:
        print(json.dumps(report, indent=2))
        log(text)
    else:
        print(text)
    if not args.no_write:
        invoked_as = args.invoked_as or shlex.join(
            [".venv/bin/python", "scripts/quality.py", *sys.argv[1:]])
        if "lc" in args.sections:
            write_doc(report, render_table(report), invoked_as, args.doc)
        if he is not None:
            write_he_doc(report, invoked_as, args.doc)
        if he2 is not None:
            write_he_doc(report, invoked_as, args.doc, key="he_aac_v2")
        if "lc" in args.sections or he is not None or he2 is not None:
            log(f"quality: updated {bench.display(args.doc)}")
    return 0


# --- HE-AAC (issue 25) ----------------------------------------------------------------------------


def make_music_wav(path: Path, seconds: int) -> None:
    """The first `seconds` of pingus-8.it rendered by openmpt123 at 48 kHz stereo float (no
    dither, so the same bytes every time), then to s16 by ffmpeg (no dither either)."""
    if not MUSIC_MODULE.is_file():
        raise ToolError(f"{MUSIC_MODULE} is missing: `make deps` installs pingus-data")
    if shutil.which("openmpt123") is None:
        raise ToolError("openmpt123 not found: `make deps` installs it")
    path.parent.mkdir(parents=True, exist_ok=True)
    rendered = path.with_name(path.name + ".part.f32.wav")
    tmp = path.with_name(path.name + ".part.wav")
    run(["openmpt123", "--quiet", "--batch", "--samplerate", str(RATE), "--channels", "2", "--float",
         "--dither", "0", "--filter", "8", "--end-time", str(seconds), "--force", "-o", str(rendered),
         str(MUSIC_MODULE)])
    run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(rendered), "-af", f"apad=whole_dur={seconds}",
         "-t", str(seconds), "-c:a", "pcm_s16le", "-fflags", "+bitexact", "-flags:a", "+bitexact", str(tmp)])
    rendered.unlink()
    tmp.replace(path)


def make_speech_wav(path: Path, seconds: int) -> None:
    """ktuberling's English words in name order, each resampled to 48 kHz stereo and followed by
    SPEECH_GAP s of silence, joined and cut (or padded) to `seconds`."""
    words = sorted(SPEECH_DIR.glob("*.ogg"))
    if not words:
        raise ToolError(f"no .ogg in {SPEECH_DIR}: `make deps` installs ktuberling-data")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part.wav")
    graph = "".join(f"[{i}:a]aresample={RATE},aformat=sample_fmts=fltp:channel_layouts=stereo,"
                    f"apad=pad_dur={SPEECH_GAP}[w{i}];" for i in range(len(words)))
    graph += "".join(f"[w{i}]" for i in range(len(words)))
    graph += f"concat=n={len(words)}:v=0:a=1,apad=whole_dur={seconds}[out]"
    cmd = ["ffmpeg", "-nostdin", "-v", "error", "-y"]
    for w in words:
        cmd += ["-i", str(w)]
    run(cmd + ["-filter_complex", graph, "-map", "[out]", "-t", str(seconds), "-c:a", "pcm_s16le",
               "-fflags", "+bitexact", "-flags:a", "+bitexact", str(tmp)])
    tmp.replace(path)


HE_INPUT_INFO = {
    "bench": "the bench test signal (scripts/bench.py: voice-like harmonics, pink noise, noise bursts, "
             "chords; deterministic)",
    "music": f"`{MUSIC_MODULE}` (Debian pingus-data, GPL-2+; \"pingus - level\" by Joseph Toscano, Impulse "
             "Tracker: piano, bass guitar, square-wave lead, drums, brass choir) from its start, rendered by "
             "openmpt123 at 48 kHz stereo float without dither, then s16",
    "speech": f"recorded human speech: the English words of `{SPEECH_DIR}/*.ogg` (Debian ktuberling-data, "
              f"GPL-2+; 44.1 kHz stereo Vorbis, near-identical channels, kept stereo) in name order, "
              f"resampled to 48 kHz by ffmpeg, {SPEECH_GAP} s of silence after each",
}


def he_input(name: str, out: Path, seconds: int) -> Path:
    """The input, made once into `out` and reused: the bench signal (the LC table's, at this
    length), the music or the speech."""
    if name == "bench":
        path = out / f"reference-v1-{seconds}s-{RATE}-stereo-s16.wav"
    else:
        path = out / f"{name}-v1-{seconds}s-{RATE}-stereo-s16.wav"
    if not path.is_file():
        log(f"quality: making {bench.display(path)}")
        if name == "bench":
            bench.make_test_wav(path, RATE, seconds)
        else:
            (make_music_wav if name == "music" else make_speech_wav)(path, seconds)
    return path


def decode_align(coded: Path, ref, stem: Path) -> tuple:
    """ffmpeg's decode of `coded` to float, aligned to ref by cross-correlation and cut to its
    length (padded with silence if the decode ends early: counted in `short_by`)."""
    import numpy as np
    wav = stem.with_name(stem.name + ".decoded.wav")
    run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(coded), "-ac", "2", "-c:a", "pcm_f32le", str(wav)])
    deg, deg_rate = read_wav(wav)
    if deg_rate != RATE:
        raise ToolError(f"{wav}: decoded at {deg_rate} Hz, expected {RATE} (SBR not signalled or not found?)")
    lag = measure_lag(ref, deg)
    aligned = deg[lag:lag + len(ref)]
    short_by = len(ref) - len(aligned)
    if short_by > 0:
        aligned = np.concatenate([aligned, np.zeros((short_by, aligned.shape[1]), dtype=aligned.dtype)])
    aligned_path = stem.with_name(stem.name + ".aligned.wav")
    write_wav_f32(aligned_path, aligned, RATE)
    return aligned, aligned_path, {"decoded_frames": len(deg), "lag": lag, "short_by": max(0, short_by)}


def ffprobe_stream(path: Path) -> dict:
    proc = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries",
                           "stream=codec_name,profile,sample_rate,channels", "-of", "json", str(path)],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ToolError(f"ffprobe failed on {path}: {proc.stderr.strip()[-500:]}")
    streams = json.loads(proc.stdout).get("streams") or [{}]
    return streams[0]


def run_he_aac(args, keyframe: str, out: Path, visqol_jobs: list, section: str = "he-aac") -> dict:
    """The rows of the HE-AAC section (`he-aac`: v1 against LC at the same rate and LC at the
    reference rate) or the HE-AAC v2 one (`he-aac-v2`: v2 against LC and our v1 at the same rate)."""
    v2 = section == "he-aac-v2"
    bitrates = args.he_aac_v2_bitrates if v2 else args.he_aac_bitrates
    he_dir = out / section
    he_dir.mkdir(parents=True, exist_ok=True)
    inputs, rows = [], []
    for name in args.inputs:
        src = he_input(name, out, args.he_aac_seconds)
        ref, rate = read_wav(src)
        if rate != RATE or ref.shape[1] != 2:
            raise ToolError(f"{src}: expected {RATE} Hz stereo, got {rate} Hz {ref.shape[1]} ch")
        ref_f32 = he_dir / f"{name}.reference.f32.wav"
        write_wav_f32(ref_f32, ref, RATE)
        ref_levels = third_octave_levels(ref)
        seconds = len(ref) / RATE
        inputs.append({"name": name, "path": bench.display(src), "sha256": sha256(src), "frames": len(ref),
                       "seconds": seconds, "description": HE_INPUT_INFO[name], "levels": ref_levels})
        plan = []
        for br in bitrates:
            plan += ([("keyframe", "he-aac-v2", br)] if v2 else []) + [("keyframe", "he-aac", br), ("ffmpeg", "lc", br)]
        if args.reference_bitrate and not v2:
            plan.append(("ffmpeg", "lc", args.reference_bitrate))
        for encoder, profile, br in plan:
            stem = he_dir / f"{name}-{encoder}-{profile}-{br}"
            aac = stem.with_suffix(".aac")
            if encoder == "keyframe":
                cmd = [keyframe, "encode", str(src), "-o", str(aac), "--profile", profile, "--bitrate", br]
            else:
                cmd = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(src), "-c:a", "aac", "-b:a", br,
                       "-f", "adts", str(aac)]
            aac.unlink(missing_ok=True)
            log(f"quality: HE-AAC {name} {br} {encoder} {profile}: {shlex.join(cmd)}")
            run(cmd)
            aligned, aligned_path, dec = decode_align(aac, ref, stem)
            z = zimtohrli_scores(ref, aligned)
            row = {
                "input": name, "encoder": encoder, "profile": profile, "bitrate": br, "command": cmd,
                "aac_bytes": aac.stat().st_size, "kbps": aac.stat().st_size * 8 / seconds / 1000,
                "adts_stream": ffprobe_stream(aac), **dec,
                "zimtohrli": z["distance"], "zimtohrli_per_channel": z["per_channel"], "zimtohrli_mos": z["mos"],
                "snr_db": snr_db(ref, aligned), "visqol": None,
                "bands": band_check(ref_levels, third_octave_levels(aligned)),
            }
            if encoder == "keyframe" and (profile == "he-aac-v2" or not v2):
                row["m4a"] = check_m4a(keyframe, src, ref, stem, profile, br)
            rows.append(row)
            if not args.no_visqol:
                visqol_jobs.append((row, str(ref_f32), str(aligned_path)))
    return {"inputs": inputs, "results": rows, "he_aac_bitrates": bitrates,
            "reference_bitrate": None if v2 else args.reference_bitrate, "section": section}


def check_m4a(keyframe: str, src: Path, ref, stem: Path, profile: str, br: str) -> dict:
    """The same encode to .m4a: ffprobe's profile and rate, and ffmpeg's decode (edit list applied):
    its frames against the input's and its lag (the issue: exactly the input's frames, lag 0)."""
    m4a = stem.with_suffix(".m4a")
    m4a.unlink(missing_ok=True)
    cmd = [keyframe, "encode", str(src), "-o", str(m4a), "--profile", profile, "--bitrate", br]
    log(f"quality: HE-AAC M4A: {shlex.join(cmd)}")
    run(cmd)
    stream = ffprobe_stream(m4a)
    wav = stem.with_name(stem.name + ".m4a.decoded.wav")
    run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(m4a), "-ac", "2", "-c:a", "pcm_f32le", str(wav)])
    deg, deg_rate = read_wav(wav)
    # Our own decode of the same file: the issue wants exactly the input's frames.
    ours_wav = stem.with_name(stem.name + ".m4a.keyframe.wav")
    run([keyframe, "decode", str(m4a), "-o", str(ours_wav), "--format", "f32le"])
    own, own_rate = read_wav(ours_wav)
    return {"command": cmd, "bytes": m4a.stat().st_size, "profile": stream.get("profile"),
            "sample_rate": int(stream.get("sample_rate", 0)), "channels": stream.get("channels"),
            "decoded_rate": deg_rate, "decoded_frames": len(deg), "input_frames": len(ref),
            "lag": measure_lag(ref, deg) if deg_rate == RATE else None,
            "own_frames": len(own), "own_lag": measure_lag(ref, own) if own_rate == RATE else None}


def fmt(x, spec: str) -> str:
    return "—" if x is None else format(x, spec)


def render_table(report: dict) -> str:
    lines = [
        "| bitrate | encoder | AAC bytes | Zimtohrli distance ↓ | Zimtohrli MOS ↑ "
        "| ViSQOL MOS-LQO ↑ | SNR dB ↑ | lag |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report["results"]:
        lines.append(f"| {r['bitrate']} | {r['encoder']} | {r['aac_bytes']} "
                     f"| {r['zimtohrli']:.6f} | {r['zimtohrli_mos']:.3f} | {fmt(r['visqol'], '.3f')} "
                     f"| {r['snr_db']:.2f} | {r['lag']} |")
    lines.append("")
    for r in report["results"]:
        if r["encoder"] == "ffmpeg":
            continue
        what = "`keyframe encode`" if r["encoder"] == "keyframe" else "`keyframe convert --threads 2`"
        if r["byte_identical_to_ffmpeg"]:
            lines.append(f"- {r['bitrate']}: {what} and ffmpeg's AAC files are byte-identical")
        else:
            lines.append(f"- {r['bitrate']}: {what} and ffmpeg's AAC files differ; decoded samples differ by "
                         f"at most {r['max_abs_diff_vs_ffmpeg']:.6g} (full scale 1.0)")
    return "\n".join(lines)


def he_row(rows: list[dict], input_name: str, encoder: str, bitrate: str, profile: str | None = None) -> dict | None:
    return next((r for r in rows if r["input"] == input_name and r["encoder"] == encoder
                 and r["bitrate"] == bitrate and (profile is None or r["profile"] == profile)), None)


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("**met**" if ok else "**not met**")


def he_targets(report: dict) -> list[str]:
    """Issue 25's targets, read off the rows: ViSQOL and Zimtohrli against LC (on real music, the
    target's input; the other inputs for information), the 8–16 kHz bands, the M4A's signalling,
    length and lag."""
    he = report["he_aac"]
    rows = he["results"]
    lines = []
    for inp in he["inputs"]:
        name = inp["name"]
        label = "real music: the targets' input" if name == "music" else "for information"
        lines.append(f"- **{name}** ({label})")
        for br in he["he_aac_bitrates"]:
            ours, lc = he_row(rows, name, "keyframe", br), he_row(rows, name, "ffmpeg", br)
            if ours is None or lc is None:
                continue
            parts = []
            need = 0.5 if br == "48k" else 0.0
            if ours["visqol"] is not None and lc["visqol"] is not None:
                d = ours["visqol"] - lc["visqol"]
                parts.append(f"ViSQOL {ours['visqol']:.3f} vs LC's {lc['visqol']:.3f}: {d:+.3f} "
                             f"(target ≥ {need:+.1f}: {verdict(d >= need)})")
            else:
                parts.append("ViSQOL not run")
            parts.append(f"Zimtohrli {ours['zimtohrli']:.5f} vs LC's {lc['zimtohrli']:.5f} "
                         f"(target lower: {verdict(ours['zimtohrli'] < lc['zimtohrli'])})")
            band = ours["bands"]["mean_abs_diff_db"]
            parts.append(f"8–16 kHz mean |Δ| {fmt(band, '.1f')} dB (target ≤ {BAND_TARGET_DB:g} dB: "
                         f"{verdict(None if band is None else band <= BAND_TARGET_DB)})")
            a = ours["adts_stream"]
            adts_he = a.get("profile") == "HE-AAC" and int(a.get("sample_rate", 0)) == RATE
            parts.append(f"ffprobe says `{a.get('profile')}` at {a.get('sample_rate')} Hz for the ADTS "
                         f"({verdict(adts_he)})")
            m = ours.get("m4a")
            if m:
                # FFmpeg 5.1 applies the edit list's start, not its end: it keeps the padding.
                ffmpeg_ok = m["lag"] == 0 and m["input_frames"] <= m["decoded_frames"] < m["input_frames"] + 2048
                exact = m.get("own_frames") == m["input_frames"] and m.get("own_lag") == 0
                he_profile = m["profile"] == "HE-AAC" and m["sample_rate"] == RATE
                parts.append(f"`{m['profile']}` at {m['sample_rate']} Hz for the M4A ({verdict(he_profile)}), "
                             f"whose ffmpeg decode starts at lag {m['lag']} with {m['decoded_frames']} frames "
                             f"(the input {m['input_frames']} and the padding FFmpeg 5.1 keeps: {verdict(ffmpeg_ok)}), "
                             f"and `keyframe decode` gives {m.get('own_frames')} frames at lag {m.get('own_lag')} "
                             f"(exactly the input's: {verdict(exact)})")
            lines.append(f"  - HE-AAC {br} against LC {br}: " + "; ".join(parts))
        ref = he["reference_bitrate"]
        top = he["he_aac_bitrates"][-1] if he["he_aac_bitrates"] else None
        ours = he_row(rows, name, "keyframe", top) if ref and top else None
        lc_ref = he_row(rows, name, "ffmpeg", ref) if ref and top else None
        if ours and lc_ref:
            if ours["visqol"] is not None and lc_ref["visqol"] is not None:
                d = ours["visqol"] - lc_ref["visqol"]
                text = f"ViSQOL {ours['visqol']:.3f} vs {lc_ref['visqol']:.3f}: {d:+.3f} (aim ≥ 0: {verdict(d >= 0)})"
            else:
                text = "ViSQOL not run"
            lines.append(f"  - HE-AAC {top} against LC {ref}: {text}; Zimtohrli {ours['zimtohrli']:.5f} vs "
                         f"{lc_ref['zimtohrli']:.5f}")
    return lines


def he_v2_targets(report: dict) -> list[str]:
    """Issue 26's targets, read off the rows: on real music at 32k, v2's ViSQOL at least LC's + 0.5
    and at least our v1's, Zimtohrli lower than LC's; the M4A's signalling, length and lag."""
    he = report["he_aac_v2"]
    rows = he["results"]
    lines = []
    for inp in he["inputs"]:
        name = inp["name"]
        label = "real music: the targets' input" if name == "music" else "for information"
        lines.append(f"- **{name}** ({label})")
        for br in he["he_aac_bitrates"]:
            ours = he_row(rows, name, "keyframe", br, "he-aac-v2")
            v1, lc = he_row(rows, name, "keyframe", br, "he-aac"), he_row(rows, name, "ffmpeg", br)
            if ours is None or lc is None or v1 is None:
                continue
            parts = []
            if ours["visqol"] is not None and lc["visqol"] is not None and v1["visqol"] is not None:
                d, d1 = ours["visqol"] - lc["visqol"], ours["visqol"] - v1["visqol"]
                parts.append(f"ViSQOL {ours['visqol']:.3f} vs LC's {lc['visqol']:.3f}: {d:+.3f} "
                             f"(target ≥ +0.5: {verdict(d >= 0.5)}) and vs our v1's {v1['visqol']:.3f}: {d1:+.3f} "
                             f"(target ≥ 0: {verdict(d1 >= 0)})")
            else:
                parts.append("ViSQOL not run")
            parts.append(f"Zimtohrli {ours['zimtohrli']:.5f} vs LC's {lc['zimtohrli']:.5f} "
                         f"(target lower: {verdict(ours['zimtohrli'] < lc['zimtohrli'])}) and v1's {v1['zimtohrli']:.5f}")
            a = ours["adts_stream"]
            adts_ok = a.get("profile") == "HE-AACv2" and int(a.get("sample_rate", 0)) == RATE and a.get("channels") == 2
            parts.append(f"ffprobe says `{a.get('profile')}` at {a.get('sample_rate')} Hz, {a.get('channels')} channels "
                         f"for the ADTS ({verdict(adts_ok)})")
            m = ours.get("m4a")
            if m:
                ffmpeg_ok = m["lag"] == 0 and m["input_frames"] <= m["decoded_frames"] < m["input_frames"] + 2048
                exact = m.get("own_frames") == m["input_frames"] and m.get("own_lag") == 0
                profile_ok = m["profile"] == "HE-AACv2" and m["sample_rate"] == RATE
                parts.append(f"`{m['profile']}` at {m['sample_rate']} Hz for the M4A ({verdict(profile_ok)}), "
                             f"whose ffmpeg decode starts at lag {m['lag']} with {m['decoded_frames']} frames "
                             f"({verdict(ffmpeg_ok)}), and `keyframe decode` gives {m.get('own_frames')} frames at lag "
                             f"{m.get('own_lag')} (exactly the input's: {verdict(exact)})")
            lines.append(f"  - HE-AAC v2 {br}: " + "; ".join(parts))
    return lines


def band_cell(row: dict, band: str) -> str:
    d = row["bands"]["diff_db"][band]
    text = f"{d:+.1f}"
    return text if band in row["bands"]["counted"] else f"({text})"


def render_he_table(report: dict, key: str = "he_aac") -> str:
    he = report[key]
    bands = [b for b, _ in THIRD_OCTAVES]
    lines = [
        "| input | encoder | profile | bitrate | kb/s | Zimtohrli ↓ | Zimtohrli MOS ↑ | ViSQOL MOS-LQO ↑ "
        "| lag | " + " | ".join(f"Δ {b}" for b in bands) + " | mean \\|Δ\\| 8–16 kHz ↓ |",
        "|---|---|---|---|---:|---:|---:|---:|---:|" + "---:|" * len(bands) + "---:|",
    ]
    for r in he["results"]:
        lines.append(f"| {r['input']} | {r['encoder']} | {r['profile']} | {r['bitrate']} | {r['kbps']:.1f} "
                     f"| {r['zimtohrli']:.5f} | {r['zimtohrli_mos']:.3f} | {fmt(r['visqol'], '.3f')} | {r['lag']} | "
                     + " | ".join(band_cell(r, b) for b in bands)
                     + f" | {fmt(r['bands']['mean_abs_diff_db'], '.1f')} |")
    lines.append("")
    for inp in he["inputs"]:
        levels = ", ".join(f"{b} {inp['levels'][b]:.1f}" for b in bands)
        lines.append(f"- source levels, {inp['name']} (dB re full-scale mean square): {levels}")
    for r in he["results"]:
        if r["short_by"]:
            lines.append(f"- {r['input']} {r['encoder']} {r['profile']} {r['bitrate']}: the decode ends "
                         f"{r['short_by']} samples before the source's end (padded with silence to score it)")
    if key == "he_aac_v2":
        lines += ["", "Targets (issue 26):", ""] + he_v2_targets(report)
    else:
        lines += ["", "Targets (issue 25):", ""] + he_targets(report)
    return "\n".join(lines)


def write_he_doc(report: dict, invoked_as: str, doc: Path, key: str = "he_aac") -> None:
    he = report[key]
    v2 = key == "he_aac_v2"
    marker = "quality:he-aac-v2" if v2 else "quality:he-aac"
    inputs = [f"- **{i['name']}**: {i['description']}; `{i['path']}`, {i['seconds']:g} s, sha256 "
              f"`{i['sha256'][:16]}…`" for i in he["inputs"]]
    ref = he["reference_bitrate"]
    if v2:
        title = "## HE-AAC v2 quality (issue 26)"
        what = ("`keyframe encode --profile he-aac-v2` (HE-AAC v2: a mono downmix in HE-AAC v1 plus parametric "
                "stereo) to ADTS against our own `--profile he-aac` (v1) and `ffmpeg -c:a aac -b:a RATE -f adts` "
                f"(AAC-LC) at the same rate, {', '.join(he['he_aac_bitrates'])}, on 48 kHz stereo inputs (the same "
                "as the HE-AAC table's):")
    else:
        title = "## HE-AAC quality (issue 25)"
        what = ("`keyframe encode --profile he-aac` (HE-AAC v1: SBR over an AAC-LC core at half the rate) to ADTS "
                f"against `ffmpeg -c:a aac -b:a RATE -f adts` (AAC-LC) at {', '.join(he['he_aac_bitrates'])}"
                + (f", and ffmpeg's LC at {ref} (the issue's \"aim for LC at 96k\")" if ref else "")
                + ", on 48 kHz stereo inputs:")
    body = "\n".join([
        f"<!-- {marker} -->",
        title,
        "",
        what,
        "",
        *inputs,
        "",
        "Every file is decoded by ffmpeg to float, aligned to its source by cross-correlation (HE-AAC in ADTS "
        "carries no trim, so its lag is the decoder delay), cut to the source's length and scored as in the "
        "LC table above: Zimtohrli (lower is better), ViSQOL v3 audio mode (higher is better, ceiling ~4.73)"
        + (f" ({report['visqol_note']})" if report["visqol_note"] else "") + ".",
        "",
        "- **kb/s**: the ADTS file's bytes × 8 over the source's duration (ADTS headers included).",
        "- **Δ 8k … 16k**: the decode's level minus the source's in the third-octave band of that midband "
        "(IEC 61260 base-10: 7.94, 10, 12.6, 15.8 kHz; edges × 10^(±1/20)), dB; in parentheses where the "
        f"source is below {BAND_FLOOR_DB:g} dB there (not counted). **mean |Δ|**: their mean absolute value "
        f"(the issue's target: ≤ {BAND_TARGET_DB:g} dB).",
        "- For each keyframe row the same encode is also written to .m4a: ffprobe's profile and rate, and "
        "ffmpeg's decode of it (lag, frames) and `keyframe decode`'s (exactly the source's frames), in the targets below.",
        "",
        render_he_table(report, key=key),
        "",
        f"- {report['date']}, commit `{report['commit']}`, {report['machine']}, {report['ffmpeg']}",
        f"- produced by: `{invoked_as}` (`--json` for the full record)",
        f"<!-- /{marker} -->",
    ])
    text = doc.read_text() if doc.exists() else bench.DOC_HEADER
    pattern = re.compile(rf"<!-- {marker} -->.*?<!-- /{marker} -->", re.S)
    after = "<!-- /quality:he-aac -->" if v2 and "<!-- /quality:he-aac -->" in text else "<!-- /quality -->"
    if pattern.search(text):
        text = pattern.sub(lambda _: body, text, count=1)
    elif (at := text.find(after)) >= 0:
        at += len(after)
        text = text[:at] + "\n\n" + body + text[at:]
    else:
        text = text.rstrip("\n") + "\n\n" + body + "\n"
    doc.write_text(text)


def write_doc(report: dict, table: str, invoked_as: str, doc: Path) -> None:
    sig = report["signal"]
    body = "\n".join([
        "<!-- quality -->",
        "## Quality parity",
        "",
        f"`keyframe encode` and `keyframe convert --threads 2` (issue 11: the file cut into 30 s "
        "segments encoded at once and stitched; a signal shorter than a segment gives the serial "
        f"bytes) against `ffmpeg -c:a aac -b:a RATE -f adts` on a {sig['seconds']} s "
        f"stereo {sig['sample_rate'] / 1000:g} kHz test signal (`{sig['path']}`, the bench "
        "signal: voice-like harmonics, pink noise, noise bursts, chords; deterministic). Both ADTS "
        "files are decoded by ffmpeg to float, aligned to the original by cross-correlation "
        "(lag = the encoder's priming), cut to its length and scored against it.",
        "",
        "- **Zimtohrli distance**: psychoacoustic distance (PyPI `zimtohrli`), per channel at "
        "48 kHz, averaged; **lower is better**, 0 = identical. Zimtohrli MOS is its approximate "
        "mapping to a 1–5 opinion score (higher is better).",
        "- **ViSQOL MOS-LQO**: ViSQOL v3 audio mode (PyPI `visqol-python`, pure Python), 1–5, "
        "**higher is better**; its ceiling is about 4.73 (a signal against itself); stereo is "
        "mixed to mono." + (f" ({report['visqol_note']}.)" if report["visqol_note"] else ""),
        "- **SNR**: the aligned decode against the original, dB; a sanity figure, not perceptual "
        "(low here because the signal is mostly noise, whose waveform a perceptual coder does not "
        "keep).",
        "- **lag**: the delay of the decode against the original, in samples, measured by "
        "cross-correlation: the encoder's 1024-sample priming, which ADTS does not signal.",
        "",
        table,
        "",
        f"- {report['date']}, commit `{report['commit']}`, {report['machine']}, "
        f"{report['ffmpeg']}",
        f"- produced by: `{invoked_as}` (`--json` for the full record)",
        "<!-- /quality -->",
    ])
    text = doc.read_text() if doc.exists() else bench.DOC_HEADER
    pattern = re.compile(r"<!-- quality -->.*?<!-- /quality -->", re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: body, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + body + "\n"
    doc.write_text(text)


if __name__ == "__main__":
    sys.exit(main())
