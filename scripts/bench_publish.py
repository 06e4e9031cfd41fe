"""The `publish` job of scripts/bench.py (issue 24): `keyframe record --publish` against ffmpeg's tee muxer.

Both commands capture the same live source as the `record` job (the PulseAudio null sink with the bench
signal looped into it, ALSA device `pulse`), encode it once (AAC-LC 128 kb/s, libavcodec's `fast` coder)
and send the packets to three places: an M4A file, an RTMP server and an Icecast server. The servers are
started by this module on loopback ports picked free at the start of the job, and stopped at its end (also
on error or Ctrl-C):

- nginx with libnginx-mod-rtmp (`live on`, `record all`: the server writes every publish to
  `rtmp/STREAM.flv`), run in the foreground without a master process;
- icecast2 (as `nobody` when we are root: it refuses to run as root), with a `dump-file` per mount: every
  byte a source sends, as the server received it.

A run counts only if all three outputs hold the recording: the M4A's duration, and the number of AAC frames
in the FLV nginx recorded and in the ADTS icecast2 dumped (each frame is 1024 samples), must each be within
2 s of the recording's length; otherwise the job fails, so a publish that broke can never look cheap. The
figure is the CPU time (GNU time's user + system) of each command; the ratio is keyframe's / ffmpeg's.

The capture length is $BENCH_PUBLISH_SECONDS (default 60). The job is a hook object (`Publish`) that
scripts/bench.py calls for its run, its section of BENCHMARKS.md and its summary line; it uses bench.py's
own helpers (the null sink, GNU time, the inputs), handed to it as a module so that there is one copy of
each.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import socket
import statistics
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Iterator

PASSWORD = "bench-source"    # Icecast's source password (loopback only)
TOLERANCE = 2.0              # seconds a destination may miss at the start (connecting) and still count
NGINX = "/usr/sbin/nginx"
RTMP_MODULE = "/usr/lib/nginx/modules/ngx_rtmp_module.so"


def seconds() -> int:
    value = os.environ.get("BENCH_PUBLISH_SECONDS", "60")
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 5:
        raise ValueError(f"BENCH_PUBLISH_SECONDS={value!r}: give a whole number of seconds, at least 5")
    return n


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def accepts(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class Servers:
    directory: Path
    rtmp_port: int
    icecast_port: int

    @property
    def rtmp_dir(self) -> Path:
        return self.directory / "rtmp"

    @property
    def icecast_dir(self) -> Path:
        return self.directory / "icecast"

    def flv(self, stream: str) -> Path:
        return self.rtmp_dir / f"{stream}.flv"

    def dump(self, mount: str) -> Path:
        return self.icecast_dir / f"dump-{mount.strip('/')}"

    def rtmp_sessions(self, stream: str) -> list[str]:
        """nginx-rtmp's access log lines of the finished publish sessions of `stream`."""
        log = self.rtmp_dir / "access.log"
        text = log.read_text(errors="replace") if log.exists() else ""
        return [line for line in text.splitlines() if f' PUBLISH "live" "{stream}" ' in line]

    def icecast_sources(self) -> list[str]:
        """The mounts with a source connected now (icecast2's status-json.xsl)."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.icecast_port}/status-json.xsl", timeout=5) as r:
                stats = json.loads(r.read().decode(errors="replace"))
        except (OSError, ValueError):
            return []
        sources = stats.get("icestats", {}).get("source", [])
        if isinstance(sources, dict):
            sources = [sources]
        return [s.get("listenurl", "").rsplit("/", 1)[-1] for s in sources]


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def servers(directory: Path, mounts: list[str], error: type[Exception]) -> Iterator[Servers]:
    """nginx-rtmp and icecast2 on free loopback ports, configured in `directory`, stopped on the way out."""
    tools = [("nginx", NGINX), ("icecast2", shutil.which("icecast2"))]
    if os.geteuid() == 0:
        tools.append(("setpriv", shutil.which("setpriv")))  # icecast2 refuses root: run as nobody
    for tool, path in tools:
        if not path or not os.access(path, os.X_OK):
            raise error(f"{tool} not found (make deps installs nginx, libnginx-mod-rtmp and icecast2)")
    if not os.path.isfile(RTMP_MODULE):
        raise error(f"{RTMP_MODULE} not found (make deps installs libnginx-mod-rtmp)")
    shutil.rmtree(directory, ignore_errors=True)
    s = Servers(directory, free_port(), free_port())
    s.rtmp_dir.mkdir(parents=True)
    s.icecast_dir.mkdir(parents=True)
    os.chmod(s.icecast_dir, 0o777)  # icecast2 runs as nobody: its logs and dumps go here
    (s.rtmp_dir / "nginx.conf").write_text(f"""\
load_module {RTMP_MODULE};
daemon off;
master_process off;
error_log {s.rtmp_dir}/error.log info;
pid {s.rtmp_dir}/nginx.pid;
events {{}}
rtmp {{
    access_log {s.rtmp_dir}/access.log;
    server {{
        listen 127.0.0.1:{s.rtmp_port};
        application live {{
            live on;
            record all;
            record_path {s.rtmp_dir};
            record_unique off;
        }}
    }}
}}
""")
    dumps = "".join(f"<mount><mount-name>{m}</mount-name><dump-file>{s.dump(m)}</dump-file></mount>" for m in mounts)
    config = s.icecast_dir / "icecast.xml"
    config.write_text(f"""\
<icecast>
  <location>loopback</location><admin>bench@localhost</admin>
  <limits><clients>20</clients><sources>8</sources><queue-size>524288</queue-size>
    <client-timeout>30</client-timeout><header-timeout>5</header-timeout><source-timeout>10</source-timeout>
    <burst-on-connect>1</burst-on-connect><burst-size>65535</burst-size></limits>
  <authentication><source-password>{PASSWORD}</source-password>
    <admin-user>admin</admin-user><admin-password>bench-admin</admin-password></authentication>
  <hostname>127.0.0.1</hostname>
  <listen-socket><port>{s.icecast_port}</port><bind-address>127.0.0.1</bind-address></listen-socket>
  <paths><basedir>/usr/share/icecast2</basedir><logdir>{s.icecast_dir}</logdir>
    <webroot>/usr/share/icecast2/web</webroot><adminroot>/usr/share/icecast2/admin</adminroot></paths>
  <logging><accesslog>access.log</accesslog><errorlog>error.log</errorlog><loglevel>3</loglevel></logging>
  <security><chroot>0</chroot></security>
  {dumps}
</icecast>
""")
    os.chmod(config, 0o644)
    icecast = [shutil.which("icecast2") or "icecast2", "-c", str(config)]
    if os.geteuid() == 0:
        icecast = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *icecast]
    procs: list[tuple[str, subprocess.Popen, int, Path]] = []
    try:
        for name, cmd, port, log in (
                ("nginx", [NGINX, "-p", str(s.rtmp_dir), "-c", str(s.rtmp_dir / "nginx.conf"),
                           "-e", str(s.rtmp_dir / "error.log")], s.rtmp_port, s.rtmp_dir / "output.log"),
                ("icecast2", icecast, s.icecast_port, s.icecast_dir / "output.log")):
            with open(log, "wb") as out:
                proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
            procs.append((name, proc, port, log))
            deadline = time.monotonic() + 15
            while not accepts(port):
                if proc.poll() is not None:
                    raise error(f"{name} exited ({proc.returncode}): {log.read_text(errors='replace')[-500:]}")
                if time.monotonic() > deadline:
                    raise error(f"{name} did not listen on 127.0.0.1:{port} within 15 s")
                time.sleep(0.1)
        yield s
    finally:
        for _, proc, _, _ in reversed(procs):
            stop(proc)


def frames_seconds(path: Path, rate: int) -> float:
    """The AAC frames in an FLV or ADTS file, in seconds (1024 samples a frame); 0 if none or unreadable."""
    if not path.is_file() or path.stat().st_size == 0:
        return 0.0
    out = subprocess.run(["ffprobe", "-v", "error", "-count_packets", "-select_streams", "a:0",
                          "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", str(path)],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60).stdout.strip()
    try:
        return int(out.split(",")[0]) * 1024 / rate
    except ValueError:
        return 0.0


def file_seconds(path: Path) -> float:
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", str(path)],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60).stdout.strip()
    try:
        return float(out)
    except ValueError:
        return 0.0


@dataclass
class Delivery:
    """What one run delivered: seconds of audio in the file and as received by each server."""
    file: float
    rtmp: float
    icecast: float
    rtmp_bytes: int  # nginx-rtmp's bytes received in the session (its access log)
    icecast_bytes: int  # the dump's size
    dropped: int = 0  # keyframe: frames its destinations dropped (record --json)
    reconnects: int = 0


class Publish:
    """The hooks scripts/bench.py calls for the publish job; `bench` is bench.py's module."""

    def __init__(self, bench: ModuleType) -> None:
        self.b = bench
        self.seconds = 60

    # --- running ------------------------------------------------------------------------------

    def run(self, job, runs: int, keyframe: str, out_dir: Path, made: dict[str, Path]):
        b = self.b
        try:
            self.seconds = seconds()
        except ValueError as e:
            raise b.BenchError(str(e)) from None
        in_path = b.ensure_input(job.input, made, out_dir)
        job_dir = out_dir / job.name
        job_dir.mkdir(parents=True, exist_ok=True)
        ours_out, ffmpeg_out = job_dir / f"keyframe{job.out_ext}", job_dir / f"ffmpeg{job.out_ext}"
        if job.max_runs is not None and runs > job.max_runs:
            print(f"{job.name}: {job.max_runs} runs (this job's cap) instead of {runs}", flush=True)
            runs = job.max_runs
        streams = {"keyframe": ("bench", "/bench.aac"), "ffmpeg": ("ff", "/ff.aac")}
        ours, theirs, delivered = [], [], {"keyframe": [], "ffmpeg": []}
        with contextlib.ExitStack() as stack:
            srv = stack.enter_context(servers(job_dir / "servers", [m for _, m in streams.values()], b.BenchError))
            env = stack.enter_context(b.pulse_null_sink(job_dir, in_path))

            def fill(template: list[str], out: Path) -> list[str]:
                values = {"{keyframe}": keyframe, "{out}": str(out), "{seconds}": str(self.seconds),
                          "{rtmp-port}": str(srv.rtmp_port), "{icecast-port}": str(srv.icecast_port),
                          "{password}": PASSWORD}
                filled = []
                for a in template:
                    for k, v in values.items():
                        a = a.replace(k, v)
                    filled.append(a)
                return filled

            cmds = {"keyframe": (fill(job.ours, ours_out), ours_out, ours),
                    "ffmpeg": (fill(job.ffmpeg, ffmpeg_out), ffmpeg_out, theirs)}
            print(f"{job.name}: RTMP on 127.0.0.1:{srv.rtmp_port} (nginx), Icecast on 127.0.0.1:{srv.icecast_port} "
                  f"(icecast2); {self.seconds} s per command per run", flush=True)
            for i in range(runs):
                print(f"{job.name}: run {i + 1}/{runs}:", end="", flush=True)
                for who in ("keyframe", "ffmpeg"):
                    cmd, out, samples = cmds[who]
                    stream, mount = streams[who]
                    print(f" {who} ...", end="", flush=True)
                    srv.flv(stream).unlink(missing_ok=True)
                    srv.dump(mount).unlink(missing_ok=True)  # icecast2 appends to a dump
                    sessions = len(srv.rtmp_sessions(stream))
                    samples.append(b.measure(cmd, out, env))
                    if who == "keyframe":
                        b.ours_overruns(samples[-1])  # its --json, checked now
                    delivered[who].append(self.check(who, cmd, samples[-1], out, srv, stream, mount, sessions))
                    print(f" {samples[-1].cpu:.2f} s CPU", end="", flush=True)
                print(flush=True)
        result = b.Result(job, in_path, cmds["keyframe"][0], cmds["ffmpeg"][0], ours, theirs, ours_out, ffmpeg_out)
        result.delivered = delivered  # type: ignore[attr-defined]
        result.ports = (srv.rtmp_port, srv.icecast_port)  # type: ignore[attr-defined]
        return result

    def check(self, who: str, cmd: list[str], sample, out: Path, srv: Servers, stream: str, mount: str, sessions: int) -> Delivery:
        """Waits for both servers to close the run's streams, then checks what each received."""
        b = self.b
        deadline = time.monotonic() + 15
        while len(srv.rtmp_sessions(stream)) <= sessions or mount.strip("/") in srv.icecast_sources():
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)
        session = srv.rtmp_sessions(stream)[sessions:]
        try:
            rtmp_bytes = int(session[-1].split(" - ", 1)[1].split()[0]) if session else 0
        except (IndexError, ValueError):
            rtmp_bytes = 0
        rate = self.b.RECORD_RATE
        d = Delivery(file=file_seconds(out), rtmp=frames_seconds(srv.flv(stream), rate),
                     icecast=frames_seconds(srv.dump(mount), rate), rtmp_bytes=rtmp_bytes,
                     icecast_bytes=srv.dump(mount).stat().st_size if srv.dump(mount).exists() else 0)
        if who == "keyframe":
            try:
                record = json.loads(sample.stdout)
            except json.JSONDecodeError:
                record = {}
            for dest in record.get("destinations", []):
                d.dropped += int(dest.get("framesDropped", 0))
                d.reconnects += int(dest.get("reconnects", 0))
        short = [f"{name} {got:.3f} s" for name, got in (("the file", d.file), ("RTMP (nginx's recording)", d.rtmp),
                                                           ("Icecast (icecast2's dump)", d.icecast))
                 if got < self.seconds - TOLERANCE]
        if short:
            raise b.BenchError(f"{who} did not deliver {self.seconds} s to all three outputs: {', '.join(short)}; "
                               f"command: {shlex.join(cmd)}\n{sample.stderr.strip()[-1500:]}")
        return d

    # --- reporting ----------------------------------------------------------------------------

    def ratio_line(self, r) -> str:
        o = statistics.median(x.cpu_share for x in r.ours)
        f = statistics.median(x.cpu_share for x in r.ffmpeg)
        verdict = "met" if r.ratio <= r.job.target else "missed"
        return (f"{r.job.name}: keyframe (file + RTMP + Icecast) uses {r.ratio:.2f}× ffmpeg's CPU time with its tee "
                f"muxer (target ≤ {r.job.target:g}×: {verdict}); {o:.2%} of one core against {f:.2%}")

    def section(self, r, info: dict[str, str], runs: int, invoked_as: str) -> str:
        b = self.b
        delivered: dict[str, list[Delivery]] = r.delivered
        rtmp_port, icecast_port = r.ports

        def row(name: str, s: list, d: list[Delivery]) -> str:
            return (f"| {name} | {statistics.median(x.wall for x in s):.3f} s "
                    f"| {statistics.median(x.cpu for x in s):.3f} s "
                    f"| {min(x.cpu for x in s):.3f}–{max(x.cpu for x in s):.3f} s "
                    f"| {statistics.median(x.cpu_share for x in s):.2%} "
                    f"| {b.mib(max(x.maxrss_kib for x in s))} "
                    f"| {min(x.file for x in d):.3f} s "
                    f"| {min(x.rtmp for x in d):.3f} s "
                    f"| {min(x.icecast for x in d):.3f} s |")

        o_rss = max(x.maxrss_kib for x in r.ours)
        f_rss = max(x.maxrss_kib for x in r.ffmpeg)
        records = [b.ours_overruns(x) for x in r.ours]
        lost = sum(o.total for o in records)
        xruns = sum(b.ffmpeg_overruns(x).xruns for x in r.ffmpeg)
        dropped = sum(d.dropped for d in delivered["keyframe"])
        reconnects = sum(d.reconnects for d in delivered["keyframe"])
        spec = b.INPUTS[r.job.input]

        def shown(cmd: list[str]) -> str:
            return shlex.join(cmd).replace(str(b.ROOT) + "/", "")

        last = {who: delivered[who][-1] for who in delivered}
        lines = [
            f"<!-- bench:{r.job.name} -->",
            f"### {r.job.name}",
            "",
            f"{r.job.what}. Source: {spec.description}, `{b.display(r.input_path)}`.",
            "",
            "| | median wall | median CPU (user+sys) | CPU range | CPU, % of one core (median) | peak RSS "
            "| file (min) | RTMP received (min) | Icecast received (min) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
            row("keyframe", r.ours, delivered["keyframe"]),
            row("ffmpeg", r.ffmpeg, delivered["ffmpeg"]),
            f"| keyframe / ffmpeg | {r.median_wall(r.ours) / r.median_wall(r.ffmpeg):.2f}× | **{r.ratio:.2f}×** | | "
            f"| {o_rss / f_rss:.2f}× | | | |",
            "",
            f"**{self.ratio_line(r)}**",
            "",
            f"- keyframe: `{shown(r.ours_cmd)}`",
            f"- ffmpeg: `{shown(r.ffmpeg_cmd)}`",
            f"- servers (started by the script, stopped at its end): nginx 1.22 with libnginx-mod-rtmp on "
            f"127.0.0.1:{rtmp_port} (`application live {{ live on; record all; }}`) and icecast2 on "
            f"127.0.0.1:{icecast_port} (as nobody, a `dump-file` per mount); free loopback ports picked per run of "
            "the job. Their CPU is not counted, for either tool.",
            "- same source, same settings: both capture ALSA device `pulse` (the null sink's monitor) at 48 kHz "
            "stereo for the same length and encode once with libavcodec's AAC-LC encoder at 128 kb/s and the "
            "`fast` coder (`record`'s default `--coder fast`, ffmpeg's `-aac_coder fast`); both send FLV over "
            "RTMP and ADTS over HTTP PUT to Icecast (`audio/aac`). keyframe's destinations are its own (RTMP, AMF0, "
            "SwiftNIO; Icecast PUT), each behind a bounded queue; ffmpeg's are libavformat's flv muxer and "
            "rtmp/icecast protocols on its one output thread (`onfail=ignore` on the network slaves, as a "
            "keyframe destination never stops the file; no `use_fifo`).",
            f"- checked on every run, or the job fails: the M4A's duration (ffprobe) and the AAC frames in the FLV "
            f"nginx recorded and in the ADTS icecast2 dumped (× 1024 / 48000) are each within {TOLERANCE:g} s of the "
            "recording's length; the table gives the smallest of the runs. Last run: keyframe "
            f"{last['keyframe'].rtmp_bytes} bytes received by nginx, {last['keyframe'].icecast_bytes} by icecast2; "
            f"ffmpeg {last['ffmpeg'].rtmp_bytes} and {last['ffmpeg'].icecast_bytes}",
            f"- overruns: keyframe {lost} (`record --json`'s device xruns, lost frames and queue overruns, summed), "
            f"{dropped} frames dropped and {reconnects} reconnects by its destinations; ffmpeg {xruns} \"ALSA buffer "
            "xrun\" warnings",
            "- CPU is GNU time's user+sys of the command (the PulseAudio daemon, the player and the servers are not "
            "counted); the wall ratio is ~1 by construction, the CPU ratio is the figure",
            f"- {len(r.ours)} run{'s' if len(r.ours) != 1 else ''} each of {self.seconds} s "
            "(`BENCH_PUBLISH_SECONDS`), alternating keyframe, ffmpeg, no warm-up; peak RSS is the largest of the "
            "runs, measured by GNU time (`%M`)",
            f"- {info['date']}, commit `{info['commit']}`, {info['machine']}, {info['ffmpeg']}, {info['swift']}",
            f"- produced by: `{invoked_as}`",
            f"<!-- /bench:{r.job.name} -->",
        ]
        return "\n".join(lines)
