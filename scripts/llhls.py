#!/usr/bin/env python3
"""Low-latency HLS figures for BENCHMARKS.md (issue 13, item 3): `make llhls`.

Records from a PulseAudio null sink (bench.py's, the bench signal looped into it) with
`keyframe record --hls DIR --serve 127.0.0.1:PORT --segment-duration 6 --part-duration 1`, then:

1. Latency: a client follows the stream with blocking playlist reloads (RFC 8216bis 6.2.5.2) for
   the preload-hinted part, 30 parts in a row. For each, the capture time of the part's first
   sample is its segment's EXT-X-PROGRAM-DATE-TIME (the capture's start plus the samples before)
   plus the parts before it; the latency is the wall-clock time the blocking request returns,
   minus that. The target: at most the part duration + 150 ms. The program date-time is taken
   when the recording starts, before the device delivers its first period, so the figure errs
   long, never short.
2. Server CPU: the keyframe process's CPU time (user+sys, /proc) over 20 s with no client, then
   over 20 s with 10 concurrent clients each following the stream with blocking reloads.
"""
from __future__ import annotations

import datetime
import json
import os
import socket
import statistics
import subprocess
import sys
import shutil
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.read().decode()


def parse(text: str):
    """The playlist's segments (msn, program date-time, parts) and its preload hint."""
    sequence, segments, pending, date, hint = 0, [], [], None, None
    for line in text.splitlines():
        if line.startswith("#EXT-X-MEDIA-SEQUENCE:"):
            sequence = int(line.split(":")[1])
        elif line.startswith("#EXT-X-PROGRAM-DATE-TIME:"):
            date = datetime.datetime.fromisoformat(line.split(":", 1)[1].replace("Z", "+00:00")).timestamp()
        elif line.startswith("#EXT-X-PART:"):
            fields = dict(f.split("=", 1) for f in line.split(":", 1)[1].split(","))
            pending.append((fields["URI"].strip('"'), float(fields["DURATION"])))
        elif line.startswith("#EXT-X-PRELOAD-HINT:"):
            hint = line.split('URI="')[1].split('"')[0]
        elif line and not line.startswith("#"):
            segments.append({"date": date, "parts": pending})
            pending, date = [], None
    return sequence, segments, pending, hint


def follow(base: str, parts: int, latencies: list[float] | None, stop: threading.Event | None = None) -> None:
    text = get(base + "/index.m3u8")
    count = 0
    while (stop is None or not stop.is_set()) and count < parts:
        _, _, _, hint = parse(text)
        if hint is None:
            return
        segment, part = (int(x) for x in hint[len("segment-"):-len(".m4s")].split("."))
        text = get(f"{base}/index.m3u8?_HLS_msn={segment - 1}&_HLS_part={part - 1}")
        served = time.time()
        count += 1
        if latencies is None:
            continue
        sequence, segments, open_parts, _ = parse(text)
        # The part's segment: whole (listed) or the one being recorded (its parts after the last).
        index = segment - 1 - sequence
        if index < len(segments):
            start, listed = segments[index]["date"], segments[index]["parts"]
        elif not segments:
            continue  # no whole segment yet: its program date-time is not listed
        else:
            last = segments[-1]
            start = last["date"] + sum(d for _, d in last["parts"]) if last["date"] is not None else None
            listed = open_parts
        if start is None:
            continue
        before = sum(d for uri, d in listed[: part - 1])
        latencies.append(served - (start + before))


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    keyframe = bench.default_keyframe()
    out = ROOT / "bench-out" / "llhls"
    out.mkdir(parents=True, exist_ok=True)
    signal = out / "signal.wav"
    if not signal.exists():
        bench.make_test_wav(signal, bench.RECORD_RATE, bench.RECORD_LOOP_SECONDS)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    hls = out / "live"
    shutil.rmtree(hls, ignore_errors=True)  # record --hls refuses a directory holding a package
    with bench.pulse_null_sink(out, signal) as env:
        recorder = subprocess.Popen([keyframe, "record", "--hls", str(hls), "--serve", f"127.0.0.1:{port}",
                                     "--segment-duration", "6", "--part-duration", "1", "--device", "pulse",
                                     "--sample-rate", "48000"],
                                    env=dict(os.environ, **env), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            for _ in range(100):
                try:
                    if "PRELOAD-HINT" in get(base + "/index.m3u8"):
                        break
                except Exception:
                    pass
                if recorder.poll() is not None:
                    raise SystemExit(f"llhls: keyframe record ended: {recorder.stderr.read().decode(errors='replace')}")
                time.sleep(0.1)
            latencies: list[float] = []
            follow(base, 30, latencies)
            idle_start = cpu_seconds(recorder.pid)
            time.sleep(20)
            idle = cpu_seconds(recorder.pid) - idle_start
            stop = threading.Event()
            clients = [threading.Thread(target=follow, args=(base, 10_000, None, stop)) for _ in range(10)]
            busy_start = cpu_seconds(recorder.pid)
            for client in clients:
                client.start()
            time.sleep(20)
            busy = cpu_seconds(recorder.pid) - busy_start
            stop.set()
            for client in clients:  # each ends after its held request (one part) is answered
                client.join(timeout=10)
        finally:
            recorder.send_signal(2)
            recorder.wait(timeout=30)
    result = {
        "parts": len(latencies),
        "latency_median_ms": round(statistics.median(latencies) * 1000, 1),
        "latency_max_ms": round(max(latencies) * 1000, 1),
        "latency_min_ms": round(min(latencies) * 1000, 1),
        "target_ms": 1150,
        "cpu_idle_share": round(idle / 20, 4),
        "cpu_10_clients_share": round(busy / 20, 4),
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
