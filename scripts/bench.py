#!/usr/bin/env python3
"""Benchmarks of `keyframe` against FFmpeg doing the same job on the same input in the same run.

    python3 scripts/bench.py [--jobs encode,decode] [--runs 5] [--keyframe PATH] [--no-write]

For each job it runs our command and the matching ffmpeg command once each untimed (warm-up),
then N times each, alternating (ours, ffmpeg, ours, ffmpeg, ...). It reports the median and
minimum wall time, the median CPU time (user + system), the peak resident set size of each
(GNU time's %M for the child), and the ratio of the medians, ours / ffmpeg. The
figures go to stdout and into BENCHMARKS.md, between the markers <!-- bench:JOB --> and
<!-- /bench:JOB -->. There are no timed assertions: the exit status is 0 however slow we are,
and non-zero only when a command fails or an input cannot be made.

Standard library only. Inputs are generated deterministically with ffmpeg into bench-out/
(gitignored) once, and reused while they exist.

To add a job, add an Input it needs to INPUTS and a Job to JOBS.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "bench-out"
DOC = ROOT / "BENCHMARKS.md"

# --- the test signal ------------------------------------------------------------------------------


def test_signal_graph(rate: int, seconds: float) -> str:
    """A deterministic, music/speech-like stereo filtergraph (output pad [out], s16 stereo).

    Each channel mixes: a voiced 'vowel' (130 Hz fundamental with slow vibrato and five
    harmonics, two formant boosts, a 3.7 Hz syllable envelope), pink noise (different seeds
    left and right), high-passed white-noise bursts every 250 ms (hi-hat-like transients), and an
    A-major chord with a decaying 880 Hz ping every 500 ms. The right channel weights the parts
    differently and is delayed 5 ms, so the channels are correlated but not identical, as in a
    real stereo mix. A limiter (no auto-level) keeps peaks below -1.9 dBFS; RMS is about -13 dBFS.
    Every source is either an expression of t or a seeded noise generator, so the same arguments
    always give the same bytes.
    """
    r, d = rate, seconds
    f0 = "(130*t+3*sin(2*PI*0.5*t))"
    harmonics = "+".join(
        f"{amp}*sin({2 * k}*PI*{f0})"
        for k, amp in [(1, 1), (2, 0.5), (3, 0.33), (4, 0.25), (5, 0.2), (6, 0.16)]
    )
    return ";".join([
        f"aevalsrc='0.5*(0.5+0.5*sin(2*PI*3.7*t))^2*({harmonics})':s={r}:d={d},"
        "equalizer=f=700:t=q:w=2:g=8,equalizer=f=1200:t=q:w=2:g=6,asplit[v1][v2]",
        f"anoisesrc=color=pink:seed=1:a=0.12:r={r}:d={d}[p1]",
        f"anoisesrc=color=pink:seed=3:a=0.12:r={r}:d={d}[p2]",
        f"anoisesrc=color=white:seed=2:a=0.3:r={r}:d={d},highpass=f=6000,"
        "volume='if(lt(mod(t,0.25),0.04),1,0.05)':eval=frame,asplit[h1][h2]",
        "aevalsrc='0.12*sin(2*PI*220*t)+0.10*sin(2*PI*277.18*t)+0.08*sin(2*PI*329.63*t)"
        f"+0.05*sin(2*PI*880*t)*exp(-3*mod(t,0.5))':s={r}:d={d},asplit[c1][c2]",
        "[v1][p1][h1][c1]amix=inputs=4:weights=1 1 1 0.6:normalize=0,"
        "alimiter=limit=0.8:level=0,aformat=channel_layouts=mono[L]",
        "[v2][p2][h2][c2]amix=inputs=4:weights=0.7 1 1 1:normalize=0,adelay=5,"
        "alimiter=limit=0.8:level=0,aformat=channel_layouts=mono[R]",
        "[L][R]join=inputs=2:channel_layout=stereo,aformat=sample_fmts=s16[out]",
    ])


def make_test_wav(path: Path, rate: int, seconds: float) -> None:
    """Writes the test signal as a 16-bit stereo WAV (atomically: temp file, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part.wav")
    run_checked(["ffmpeg", "-nostdin", "-v", "error", "-y",
                 "-filter_complex", test_signal_graph(rate, seconds),
                 "-map", "[out]", "-c:a", "pcm_s16le", "-fflags", "+bitexact",
                 "-flags:a", "+bitexact", str(tmp)])
    tmp.replace(path)


def run_checked(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise BenchError(f"command failed (exit {proc.returncode}): {shlex.join(cmd)}\n"
                         f"{proc.stderr.strip()}")


class BenchError(Exception):
    pass


# --- inputs and jobs (add rows here) --------------------------------------------------------------


@dataclass
class Input:
    """A cached input file in bench-out/, made by `make(path, inputs)` when missing."""
    name: str
    filename: str
    description: str
    make: Callable[[Path, dict[str, Path]], None]
    needs: list[str] = field(default_factory=list)


@dataclass
class Job:
    """One benchmark: our command and FFmpeg's, both templates over {keyframe}, {in}, {out}."""
    name: str
    input: str
    what: str
    ours: list[str]
    ffmpeg: list[str]
    out_ext: str
    target: float = 1.0  # the target ratio, ours / ffmpeg


BENCH_SECONDS = 600
BENCH_RATE = 44100


def make_inputs(seconds: int = BENCH_SECONDS, rate: int = BENCH_RATE) -> dict[str, Input]:
    length = f"{seconds // 60}-minute" if seconds % 60 == 0 else f"{seconds}-second"
    return {i.name: i for i in [
        Input(
            name="wav",
            filename=f"input-v1-{seconds}s-{rate}-stereo-s16.wav",
            description=f"{length} stereo {rate / 1000:g} kHz s16 WAV (voice-like harmonics, "
                        "pink noise, noise bursts, chords; deterministic)",
            make=lambda path, _: make_test_wav(path, rate, seconds),
        ),
        Input(
            name="adts",
            filename=f"input-v1-{seconds}s-{rate}-stereo-96k.aac",
            description=f"ADTS AAC-LC 96 kb/s made by ffmpeg from the {length} WAV",
            needs=["wav"],
            make=lambda path, inputs: run_checked(
                ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(inputs["wav"]),
                 "-c:a", "aac", "-b:a", "96k", "-f", "adts", str(path)]),
        ),
        Input(
            name="m4a-hour",
            filename=f"input-v1-3600s-{rate}-stereo-96k.m4a",
            description="1-hour stereo AAC-LC 96 kb/s M4A (faststart), stream-copied by ffmpeg from six "
                        f"concatenations of the {length} ADTS",
            needs=["adts"],
            make=lambda path, inputs: make_hour_m4a(path, inputs["adts"]),
        ),
        Input(
            name="adts-hour",
            filename=f"input-v1-3600s-{rate}-stereo-96k.aac",
            description=f"1-hour stereo ADTS AAC-LC 96 kb/s: six concatenations of the {length} ADTS",
            needs=["adts"],
            make=lambda path, inputs: make_hour_adts(path, inputs["adts"]),
        ),
    ]}


def make_hour_m4a(path: Path, adts: Path) -> None:
    """Six copies of the ADTS file end to end are one valid ADTS stream; ffmpeg copies it into MP4."""
    joined = path.with_suffix(".joined.aac")
    with open(joined, "wb") as out:
        for _ in range(6):
            out.write(adts.read_bytes())
    run_checked(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(joined), "-c", "copy",
                 "-movflags", "+faststart", str(path)])
    joined.unlink()


def make_hour_adts(path: Path, adts: Path) -> None:
    """Six copies of the ADTS file end to end (one valid ADTS stream), written atomically."""
    tmp = path.with_name(path.name + ".part")
    data = adts.read_bytes()
    with open(tmp, "wb") as out:
        for _ in range(6):
            out.write(data)
    tmp.replace(path)


INPUTS: dict[str, Input] = make_inputs()

JOBS: dict[str, Job] = {j.name: j for j in [
    Job(
        name="encode",
        input="wav",
        what="WAV → ADTS AAC-LC 96 kb/s (libavcodec's native aac encoder in both)",
        ours=["{keyframe}", "encode", "{in}", "-o", "{out}", "--bitrate", "96k"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "{in}",
                "-c:a", "aac", "-b:a", "96k", "-f", "adts", "{out}"],
        out_ext=".aac",
    ),
    Job(
        name="decode",
        input="adts",
        what="ADTS AAC-LC → 16-bit WAV (libavcodec's aac decoder in both)",
        ours=["{keyframe}", "decode", "{in}", "-o", "{out}"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "{in}", "{out}"],
        out_ext=".wav",
    ),
    Job(
        name="demux",
        input="m4a-hour",
        what="1-hour M4A → ADTS (stream copy, no decoding)",
        ours=["{keyframe}", "demux", "{in}", "-o", "{out}"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "{in}", "-map", "0:a:0", "-c:a", "copy", "-f", "adts", "{out}"],
        out_ext=".aac",
        target=0.5,
    ),
    Job(
        name="mux",
        input="adts-hour",
        what="1-hour ADTS → faststart M4A (stream copy, no decoding)",
        ours=["{keyframe}", "mux", "{in}", "-o", "{out}"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "{in}", "-c", "copy", "-movflags", "+faststart", "{out}"],
        out_ext=".m4a",
        target=0.5,
    ),
]}


def ensure_input(name: str, made: dict[str, Path], out_dir: Path) -> Path:
    if name in made:
        return made[name]
    spec = INPUTS[name]
    for dep in spec.needs:
        ensure_input(dep, made, out_dir)
    path = out_dir / spec.filename
    if not path.is_file() or path.stat().st_size == 0:
        print(f"making {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} "
              f"({spec.description}) ...", flush=True)
        started = time.perf_counter()
        spec.make(path, made)
        print(f"  done in {time.perf_counter() - started:.1f} s", flush=True)
    made[name] = path
    return path


# --- measuring ------------------------------------------------------------------------------------


@dataclass
class Sample:
    wall: float      # seconds
    cpu: float       # user + system seconds
    maxrss_kib: int  # ru_maxrss (KiB on Linux)


def measure(cmd: list[str], out: Path) -> Sample:
    """Runs cmd once (output file removed first) under GNU time and returns its figures.

    Peak RSS comes from GNU time (`%M`): a small C parent, so the figure is the command's own.
    `os.wait4` from Python would report at least Python's own RSS, because the child's resident
    high-water mark is taken over from the forked Python image before exec (~14 MiB here).
    """
    if out.exists():
        out.unlink()
    with tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile(mode="r") as report:
        started = time.perf_counter()
        proc = subprocess.Popen([GNU_TIME, "-f", "%M %U %S", "-o", report.name, *cmd], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err)
        status = proc.wait()
        wall = time.perf_counter() - started
        if status != 0:
            err.seek(0)
            text = err.read().decode(errors="replace").strip()
            raise BenchError(f"command failed (exit {status}): {shlex.join(cmd)}\n"
                             f"{text[-2000:]}")
        fields = report.read().split()[-3:]
    if not out.is_file() or out.stat().st_size == 0:
        raise BenchError(f"command wrote no output {out}: {shlex.join(cmd)}")
    return Sample(wall=wall, cpu=float(fields[1]) + float(fields[2]), maxrss_kib=int(fields[0]))


GNU_TIME = "/usr/bin/time"


@dataclass
class Result:
    job: Job
    input_path: Path
    ours_cmd: list[str]
    ffmpeg_cmd: list[str]
    ours: list[Sample]
    ffmpeg: list[Sample]
    ours_out: Path
    ffmpeg_out: Path

    @staticmethod
    def median_wall(samples: list[Sample]) -> float:
        return statistics.median(s.wall for s in samples)

    @property
    def ratio(self) -> float:
        return self.median_wall(self.ours) / self.median_wall(self.ffmpeg)


def run_job(job: Job, runs: int, keyframe: str, out_dir: Path, made: dict[str, Path]) -> Result:
    in_path = ensure_input(job.input, made, out_dir)
    job_dir = out_dir / job.name
    job_dir.mkdir(parents=True, exist_ok=True)
    ours_out = job_dir / f"keyframe{job.out_ext}"
    ffmpeg_out = job_dir / f"ffmpeg{job.out_ext}"

    def fill(template: list[str], out: Path) -> list[str]:
        return [a.replace("{keyframe}", keyframe).replace("{in}", str(in_path))
                 .replace("{out}", str(out)) for a in template]

    ours_cmd, ffmpeg_cmd = fill(job.ours, ours_out), fill(job.ffmpeg, ffmpeg_out)
    print(f"{job.name}: warm-up ...", flush=True)
    measure(ours_cmd, ours_out)
    measure(ffmpeg_cmd, ffmpeg_out)
    ours, ffmpeg = [], []
    for i in range(runs):
        ours.append(measure(ours_cmd, ours_out))
        ffmpeg.append(measure(ffmpeg_cmd, ffmpeg_out))
        print(f"{job.name}: run {i + 1}/{runs}: keyframe {ours[-1].wall:.3f} s, "
              f"ffmpeg {ffmpeg[-1].wall:.3f} s", flush=True)
    return Result(job, in_path, ours_cmd, ffmpeg_cmd, ours, ffmpeg, ours_out, ffmpeg_out)


# --- the record -----------------------------------------------------------------------------------


def capture(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              cwd=ROOT, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine_info() -> dict[str, str]:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ncpu = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    commit = capture(["git", "rev-parse", "--short", "HEAD"]) or "unknown"
    if capture(["git", "status", "--porcelain"]):
        commit += "-dirty"
    ffmpeg = capture(["ffmpeg", "-version"]).splitlines()
    swift = capture(["swift", "--version"]).splitlines()
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit,
        "machine": f"{ncpu} × {cpu}, {platform.system()} {platform.release()}",
        "ffmpeg": re.sub(r"\s+Copyright.*", "", ffmpeg[0]) if ffmpeg else "ffmpeg: unknown",
        "swift": swift[0] if swift else "swift: unknown",
    }


def mib(kib: int) -> str:
    return f"{kib / 1024:.1f} MiB"


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def wav_data(path: Path) -> bytes | None:
    """The payload of a RIFF/WAVE file's data chunk, or None if it is not a WAV file."""
    with path.open("rb") as f:
        head = f.read(12)
        if len(head) < 12 or head[:4] not in (b"RIFF", b"RF64") or head[8:12] != b"WAVE":
            return None
        while True:
            chunk = f.read(8)
            if len(chunk) < 8:
                return None
            size = int.from_bytes(chunk[4:8], "little")
            if chunk[:4] == b"data":
                # RF64 (and some streaming writers) put 0xFFFFFFFF here: take the rest.
                return f.read() if size == 0xFFFFFFFF else f.read(size)
            f.seek(size + (size & 1), os.SEEK_CUR)


def compare_outputs(a: Path, b: Path) -> str:
    if file_digest(a) == file_digest(b):
        return "byte-identical"
    da, db = wav_data(a), wav_data(b)
    if da is not None and db is not None:
        if da == db:
            return "same PCM samples (the WAV headers differ)"
        return f"PCM samples differ ({len(da)} vs {len(db)} data bytes)"
    return "not byte-identical"


def display(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def ratio_line(r: Result) -> str:
    return (f"{r.job.name}: keyframe is {r.ratio:.2f}× ffmpeg's time (target ≤ {r.job.target:g}×)")


def table(r: Result) -> list[str]:
    def row(name: str, s: list[Sample]) -> str:
        return (f"| {name} | {statistics.median(x.wall for x in s):.3f} s "
                f"| {min(x.wall for x in s):.3f} s "
                f"| {statistics.median(x.cpu for x in s):.3f} s "
                f"| {mib(max(x.maxrss_kib for x in s))} |")
    o_rss = max(x.maxrss_kib for x in r.ours)
    f_rss = max(x.maxrss_kib for x in r.ffmpeg)
    o_min, f_min = min(x.wall for x in r.ours), min(x.wall for x in r.ffmpeg)
    o_cpu = statistics.median(x.cpu for x in r.ours)
    f_cpu = statistics.median(x.cpu for x in r.ffmpeg)
    return [
        "| | median wall | min wall | median CPU (user+sys) | peak RSS |",
        "|---|---:|---:|---:|---:|",
        row("keyframe", r.ours),
        row("ffmpeg", r.ffmpeg),
        f"| keyframe / ffmpeg | **{r.ratio:.2f}×** | {o_min / f_min:.2f}× "
        f"| {(o_cpu / f_cpu if f_cpu else float('nan')):.2f}× | {o_rss / f_rss:.2f}× |",
    ]


def section(r: Result, info: dict[str, str], runs: int, invoked_as: str) -> str:
    same = compare_outputs(r.ours_out, r.ffmpeg_out)
    spec = INPUTS[r.job.input]
    size_in = r.input_path.stat().st_size
    shown = [shlex.join(c).replace(str(ROOT) + "/", "") for c in (r.ours_cmd, r.ffmpeg_cmd)]
    lines = [
        f"<!-- bench:{r.job.name} -->",
        f"### {r.job.name}",
        "",
        f"{r.job.what}. Input: {spec.description}, `{display(r.input_path)}` "
        f"({size_in / 1e6:.1f} MB).",
        "",
        *table(r),
        "",
        f"**{ratio_line(r)}**",
        "",
        f"- keyframe: `{shown[0]}`",
        f"- ffmpeg: `{shown[1]}`",
        f"- outputs: keyframe {r.ours_out.stat().st_size} bytes, ffmpeg "
        f"{r.ffmpeg_out.stat().st_size} bytes: {same}",
        f"- {runs} timed runs each after one untimed warm-up each, alternating keyframe, ffmpeg; "
        "peak RSS is the largest of the runs, measured by GNU time (`%M`)",
        f"- {info['date']}, commit `{info['commit']}`, {info['machine']}, {info['ffmpeg']}, "
        f"{info['swift']}",
        f"- produced by: `{invoked_as}`",
        f"<!-- /bench:{r.job.name} -->",
    ]
    return "\n".join(lines)


DOC_HEADER = """# Benchmarks

Speed and memory of `keyframe` against FFmpeg doing the same job, on the same input, in the same
run (see DESIGN.md, "How we know it works"). These are records, never tests: nothing fails because
we are slower. Each figure that matters is a ratio to FFmpeg on the same machine in the same run,
so the numbers from different machines can be compared by their ratios only.

- `make bench` builds `keyframe` in release mode and runs `scripts/bench.py` (`BENCH_RUNS`, default
  5); `python3 scripts/bench.py --jobs encode --runs 3` runs a subset. Inputs are generated
  deterministically with ffmpeg into `bench-out/` and cached there.
- Wall time is measured around each child process; CPU time and peak RSS (GNU time's `%U+%S` and `%M`, KiB on
  Linux) come from `os.wait4` on that child.
- Noise: the machine has 2 cores and is shared with builds and tests, so a ratio moves by about
  ±5–10 % from run to run (an A/A run, ffmpeg against itself through the same harness, gave 0.93×,
  1.00× and 1.04×). Read a ratio within that band of 1.0 as "the same speed"; CPU time (user+sys)
  is steadier than wall time.
- `make quality` compares the perceptual quality of our AAC with ffmpeg's (below).

## Speed and memory
"""


def write_doc(sections: dict[str, str], doc: Path) -> None:
    text = doc.read_text() if doc.exists() else DOC_HEADER
    for name, body in sections.items():
        pattern = re.compile(rf"<!-- bench:{re.escape(name)} -->.*?<!-- /bench:{re.escape(name)} -->",
                             re.S)
        if pattern.search(text):
            text = pattern.sub(lambda _: body, text, count=1)
        else:
            # New jobs go after the last bench section, or before the quality section.
            ends = list(re.finditer(r"<!-- /bench:[\w-]+ -->\n?", text))
            quality = text.find("<!-- quality -->")
            if ends:
                at = ends[-1].end()
                text = text[:at] + "\n" + body + "\n" + text[at:]
            elif quality >= 0:
                text = text[:quality] + body + "\n\n" + text[quality:]
            else:
                text = text.rstrip("\n") + "\n\n" + body + "\n"
    doc.write_text(text)


# --- main -----------------------------------------------------------------------------------------


def default_keyframe() -> str:
    env = os.environ.get("KEYFRAME_BIN")
    if env:
        return env
    bin_dir = capture(["swift", "build", "-c", "release", "--show-bin-path"])
    return str(Path(bin_dir) / "keyframe") if bin_dir else "keyframe"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", default=",".join(JOBS),
                        help=f"comma-separated jobs to run (default: all: {','.join(JOBS)})")
    parser.add_argument("--runs", type=int, default=5,
                        help="timed runs of each command after one warm-up (default 5)")
    parser.add_argument("--keyframe", default=None,
                        help="the keyframe executable (default: $KEYFRAME_BIN, else the release "
                             "build's)")
    parser.add_argument("--out-dir", type=Path, default=OUT_DIR,
                        help="inputs and outputs (default bench-out/)")
    parser.add_argument("--seconds", type=int, default=BENCH_SECONDS,
                        help=f"length of the generated input (default {BENCH_SECONDS})")
    parser.add_argument("--doc", type=Path, default=DOC, help="the Markdown file to update")
    parser.add_argument("--no-write", action="store_true", help="do not update BENCHMARKS.md")
    parser.add_argument("--invoked-as", default=None,
                        help="the command recorded in BENCHMARKS.md (default: this command line)")
    args = parser.parse_args()

    names = [n.strip() for n in args.jobs.split(",") if n.strip()]
    unknown = [n for n in names if n not in JOBS]
    if unknown or not names:
        parser.error(f"unknown job(s) {', '.join(unknown) or '(none)'}; known: {', '.join(JOBS)}")
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.seconds < 1:
        parser.error("--seconds must be at least 1")
    INPUTS.clear()
    INPUTS.update(make_inputs(args.seconds))
    for tool in ("ffmpeg",):
        if shutil.which(tool) is None:
            print(f"bench: {tool} not found on PATH", file=sys.stderr)
            return 2
    keyframe = args.keyframe or default_keyframe()
    if not (os.path.isfile(keyframe) and os.access(keyframe, os.X_OK)):
        print(f"bench: no keyframe executable at {keyframe} "
              "(build it: swift build -c release --product keyframe)", file=sys.stderr)
        return 2
    invoked_as = args.invoked_as or shlex.join(
        ["python3", "scripts/bench.py", *sys.argv[1:]])

    info = machine_info()
    print(f"bench: {info['date']}, commit {info['commit']}, {info['machine']}")
    print(f"bench: {info['ffmpeg']}; {info['swift']}; keyframe {keyframe}")
    made: dict[str, Path] = {}
    results: list[Result] = []
    failed = False
    for name in names:
        try:
            results.append(run_job(JOBS[name], args.runs, keyframe, args.out_dir, made))
        except BenchError as e:
            print(f"{name}: FAILED: {e}", file=sys.stderr)
            failed = True

    sections = {}
    for r in results:
        body = section(r, info, args.runs, invoked_as)
        sections[r.job.name] = body
        print()
        print("\n".join(line for line in body.splitlines() if not line.startswith("<!--")))
    print()
    for r in results:
        print(ratio_line(r))
    if sections and not args.no_write:
        write_doc(sections, args.doc)
        print(f"bench: updated {display(args.doc)} ({', '.join(sections)})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
