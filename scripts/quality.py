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
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
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
MAX_LAG = 8192


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
    args = parser.parse_args()
    if args.seconds < 5:
        parser.error("--seconds must be at least 5")
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
    for br in args.bitrates:
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
            key = sha256(Path(d))
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
        "results": rows, **info, "keyframe": keyframe,
    }
    table = render_table(report)
    if args.json:
        print(json.dumps(report, indent=2))
        log(table)
    else:
        print(table)
    if not args.no_write:
        invoked_as = args.invoked_as or shlex.join(
            [".venv/bin/python", "scripts/quality.py", *sys.argv[1:]])
        write_doc(report, table, invoked_as, args.doc)
        log(f"quality: updated {bench.display(args.doc)}")
    return 0


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
