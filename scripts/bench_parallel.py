"""The `parallel` job of scripts/bench.py: `convert`'s segment-parallel encode beside the serial
one (`--threads 1`), for AAC-LC and HE-AAC, on an idle machine and with the other core busy.

Each row is `keyframe convert` of the same WAV: `--threads 1`, `--threads 2`, and the default
(the encoders sized from the cores idle at the start). "Busy" runs the same commands while a
process spins on one core for the whole run, as another job on a shared machine would. The
ratios are parallel over serial in the same run: CPU (user+sys), peak RSS and wall time.
"""
from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Iterator

PROFILES = [("AAC-LC 128 kb/s", ["--bitrate", "128k"]),
            ("HE-AAC 64 kb/s", ["--profile", "he-aac", "--bitrate", "64k"])]
VARIANTS = [("serial (`--threads 1`)", ["--threads", "1"]),
            ("parallel (`--threads 2`)", ["--threads", "2"]),
            ("default (idle cores)", [])]


@contextlib.contextmanager
def busy_core() -> Iterator[None]:
    """One core kept busy by a process that spins until the block ends."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        spinner.kill()
        spinner.wait()


class Parallel:
    """The hooks scripts/bench.py calls for the parallel job; `bench` is bench.py's module."""

    def __init__(self, bench: ModuleType) -> None:
        self.b = bench

    def run(self, job, runs: int, keyframe: str, out_dir: Path, made: dict[str, Path]):
        b = self.b
        in_path = b.ensure_input(job.input, made, out_dir)
        job_dir = out_dir / job.name
        job_dir.mkdir(parents=True, exist_ok=True)
        out = job_dir / "keyframe.m4a"
        if job.max_runs is not None and runs > job.max_runs:
            print(f"{job.name}: {job.max_runs} runs (this job's cap) instead of {runs}", flush=True)
            runs = job.max_runs
        table: dict[tuple[str, str, str], list] = {}
        commands: dict[tuple[str, str], list[str]] = {}
        for load in ("idle", "busy"):
            with busy_core() if load == "busy" else contextlib.nullcontext():
                for profile, profile_args in PROFILES:
                    for variant, variant_args in VARIANTS:
                        cmd = [keyframe, "convert", str(in_path), "-o", str(out), *profile_args, *variant_args]
                        commands[(profile, variant)] = cmd
                        samples = table.setdefault((load, profile, variant), [])
                        for i in range(runs):
                            samples.append(b.measure(cmd, out))
                        print(f"{job.name}: {load}, {profile}, {variant}: median "
                              f"{b.Result.median_wall(samples):.2f} s wall, {b.Result.median_cpu(samples):.2f} s CPU",
                              flush=True)
        ours = table[("idle", PROFILES[0][0], VARIANTS[1][0])]
        serial = table[("idle", PROFILES[0][0], VARIANTS[0][0])]
        result = b.Result(job, in_path, commands[(PROFILES[0][0], VARIANTS[1][0])],
                          commands[(PROFILES[0][0], VARIANTS[0][0])], ours, serial, out, out)
        result.table = table  # type: ignore[attr-defined]
        result.commands = commands  # type: ignore[attr-defined]
        return result

    def ratio_line(self, r) -> str:
        b = self.b
        lines = []
        for profile, _ in PROFILES:
            serial = r.table[("idle", profile, VARIANTS[0][0])]
            parallel = r.table[("idle", profile, VARIANTS[1][0])]
            lines.append(f"{profile}: parallel/serial CPU "
                         f"{b.Result.median_cpu(parallel) / b.Result.median_cpu(serial):.2f}×, RSS "
                         f"{max(s.maxrss_kib for s in parallel) / max(s.maxrss_kib for s in serial):.2f}×")
        return "; ".join(lines)

    def section(self, r, info: dict[str, str], runs: int, invoked_as: str) -> str:
        b = self.b
        spec = b.INPUTS[r.job.input]
        rows = []
        for load in ("idle", "busy"):
            for profile, _ in PROFILES:
                serial = r.table[(load, profile, VARIANTS[0][0])]
                for variant, _ in VARIANTS:
                    s = r.table[(load, profile, variant)]
                    wall, cpu = b.Result.median_wall(s), b.Result.median_cpu(s)
                    rss = max(x.maxrss_kib for x in s)
                    rows.append(
                        f"| {load} | {profile} | {variant} | {wall:.2f} s | {cpu:.2f} s | {b.mib(rss)} "
                        f"| {wall / b.Result.median_wall(serial):.2f}× | {cpu / b.Result.median_cpu(serial):.2f}× "
                        f"| {rss / max(x.maxrss_kib for x in serial):.2f}× |")
        shown = [" ".join(c).replace(str(b.ROOT) + "/", "") for c in r.commands.values()]
        lines = [
            f"<!-- bench:{r.job.name} -->",
            f"### {r.job.name}",
            "",
            f"{r.job.what}. Input: {spec.description}, `{b.display(r.input_path)}`.",
            "",
            "| machine | profile | encoders | median wall | median CPU (user+sys) | peak RSS "
            "| wall / serial | CPU / serial | RSS / serial |",
            "|---|---|---|---|---|---|---|---|---|",
            *rows,
            "",
            f"**{self.ratio_line(r)}**",
            "",
            *[f"- `{c}`" for c in shown],
            f"- busy: a process spinning on one core for the whole run (`{sys.executable} -c 'while True: pass'`)",
            f"- {len(r.ours)} timed runs of each command, no warm-up; peak RSS is the largest of the runs (GNU time `%M`)",
            f"- {info['date']}, commit `{info['commit']}`, {info['machine']}, {info['swift']}",
            f"- produced by: `{invoked_as}`",
            f"<!-- /bench:{r.job.name} -->",
        ]
        return "\n".join(lines)
