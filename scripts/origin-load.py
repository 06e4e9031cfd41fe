#!/usr/bin/env python3
"""The origin under load (issue 23, item 4): many listeners, slowloris, clients that hang up.

    python3 scripts/origin-load.py --keyframe .build/release/keyframe          # serves by itself
    python3 scripts/origin-load.py --url http://127.0.0.1:PORT --pid PID --dir DIR --header-deadline 2

With --keyframe it writes a 30-s 440 Hz tone (48 kHz stereo WAV), packages it with
`keyframe package tone.wav --hls DIR --segment-duration 10 --bitrate 256k` (three segments of
~300 KB) and runs `keyframe serve DIR` on a free loopback port, with KEYFRAME_HEADER_DEADLINE set
to --header-deadline; with --url, --pid and --dir it uses a server already running (the
OriginLoadTests do that). Then, in order (--scenarios picks some):

listeners   N clients at once (--listeners, 400), each on one keep-alive connection, fetch the
            playlist, the init segment and every segment, as a player does; every body is
            compared with the file on disk. Figures: wall time, the server's peak RSS (VmHWM).
slowloris   S connections (--slowloris, 300) send a request line, then half of them trickle header
            bytes one a second and half send nothing more. Meanwhile new listeners fetch a segment,
            one every 0.5 s; each one's delay (connect to last byte) is recorded. Every slow
            connection's time to be closed by the server is recorded (from its connect). A
            control connection that finishes its head within the deadline, a byte at a time, must
            still be answered. Five fetches of the same segment before the slow connections open
            give the delay to compare with.
disconnect  D clients (--disconnects, 50), each with a 4 KiB receive buffer, ask for the largest
            segment, many times pipelined (more than the server's socket send buffer holds:
            tcp_wmem's maximum, 4 MiB by default, which the kernel grows a loopback socket's to),
            read a few bytes and close (with unread bytes, Linux sends RST). The server is then
            mid-response with the segment open. Its open descriptors (/proc/PID/fd) are counted
            before, while they hang (and how many are the segment files), and after, polled up to
            --fd-wait seconds.

Prints a JSON object (--json) or a summary. Correctness (every byte, every request answered,
connections closed, fds back) is for the caller to judge from the JSON; nothing here fails on a
time. Standard library only (asyncio). The script raises its soft limit on open files to the
hard one (it holds up to N + S sockets at once); `keyframe-serve` raises its own the same way.
"""

from __future__ import annotations

import argparse
import array
import asyncio
import contextlib
import json
import math
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import wave
from pathlib import Path

CORRECTNESS_TIMEOUT = 60.0  # seconds for any one request of the listeners: a hang, not a figure


# --- a minimal HTTP/1.1 client --------------------------------------------------------------------


class Closed(Exception):
    """The server closed the connection before the response was complete."""


async def read_response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        parts = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                break
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)
        body = b"".join(parts)
    else:
        body = await reader.read()
    return status, headers, body


def request_bytes(host: str, path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: origin-load\r\n\r\n".encode()


def procfs(pid: int, field: str) -> int:
    """A kB field of /proc/PID/status (VmHWM, VmRSS), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return -1


def cpu_seconds(pid: int) -> float:
    """The process's user + system time so far (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fd_count(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def fds_on(pid: int, directory: Path) -> int:
    """How many of the server's descriptors are files in `directory` (responses being sent)."""
    count = 0
    for name in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{pid}/fd/{name}").startswith(str(directory.resolve()) + "/"):
                count += 1
    return count


# --- the package -----------------------------------------------------------------------------------


class Package:
    def __init__(self, directory: Path):
        self.directory = directory
        self.playlist = (directory / "index.m3u8").read_bytes()
        text = self.playlist.decode()
        self.init = re.search(r'#EXT-X-MAP:URI="([^"]+)"', text).group(1)
        self.segments = [line for line in text.splitlines() if line and not line.startswith("#")]
        self.files = {"index.m3u8": self.playlist}
        for name in [self.init] + self.segments:
            self.files[name] = (directory / name).read_bytes()

    @property
    def largest_segment(self) -> str:
        return max(self.segments, key=lambda name: len(self.files[name]))


# --- the scenarios ---------------------------------------------------------------------------------


async def listener(host: str, port: int, package: Package, results: dict) -> None:
    """A player: the playlist, the init segment and every segment on one connection."""
    writer = None
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), CORRECTNESS_TIMEOUT)
        for name in ["index.m3u8", package.init] + package.segments:
            writer.write(request_bytes(f"{host}:{port}", "/" + name))
            status, _, body = await asyncio.wait_for(read_response(reader), CORRECTNESS_TIMEOUT)
            results["requests"] += 1
            if status == 200 and body == package.files[name]:
                results["answered"] += 1
                results["bytes"] += len(body)
            else:
                results["wrong"].append(f"{name}: {status}, {len(body)} bytes (want {len(package.files[name])})")
    except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, asyncio.LimitOverrunError) as error:
        results["errors"].append(repr(error))
    finally:
        if writer:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


async def listeners_scenario(host: str, port: int, pid: int, package: Package, count: int) -> dict:
    rss_before = procfs(pid, "VmRSS")
    results = {"requests": 0, "answered": 0, "bytes": 0, "wrong": [], "errors": []}
    cpu = cpu_seconds(pid)
    started = time.monotonic()
    await asyncio.gather(*(listener(host, port, package, results) for _ in range(count)))
    wall = time.monotonic() - started
    cpu = cpu_seconds(pid) - cpu
    per_listener = 1 + 1 + len(package.segments)
    return {
        "listeners": count,
        "requests_expected": count * per_listener,
        "requests": results["requests"],
        "answered": results["answered"],
        "bytes": results["bytes"],
        "bytes_expected": count * sum(len(package.files[n]) for n in ["index.m3u8", package.init] + package.segments),
        "wrong": results["wrong"][:10],
        "errors": results["errors"][:10],
        "error_count": len(results["errors"]) + len(results["wrong"]),
        "wall_seconds": round(wall, 3),
        "server_cpu_seconds": round(cpu, 3),
        "rss_before_bytes": rss_before,
        "rss_peak_bytes": procfs(pid, "VmHWM"),
        "rss_after_bytes": procfs(pid, "VmRSS"),
    }


async def slow_connection(host: str, port: int, trickle: bool, horizon: float) -> dict:
    """A request line, then header bytes a second apart (trickle) or nothing; the time the server
    closes it, from the connect (None if it is still open after `horizon` seconds)."""
    started = time.monotonic()
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(b"GET /index.m3u8 HTTP/1.1\r\n")
    await writer.drain()

    async def trickler() -> None:
        header = b"X-Slow: " + b"a" * 10_000
        for byte in header:
            await asyncio.sleep(1)
            writer.write(bytes([byte]))
            await writer.drain()

    task = asyncio.create_task(trickler()) if trickle else None
    closed_after = None
    answered = False
    try:
        data = await asyncio.wait_for(reader.read(65536), horizon)
        answered = bool(data)  # a response to an unfinished head would be a bug
        closed_after = time.monotonic() - started
    except (ConnectionResetError, BrokenPipeError):
        closed_after = time.monotonic() - started
    except asyncio.TimeoutError:
        pass
    finally:
        if task:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()
    return {"closed_after": closed_after, "answered": answered, "trickle": trickle}


async def fetch_once(host: str, port: int, name: str, expected: bytes, timeout: float) -> dict:
    """A new listener: connect, one segment, the delay to its last byte."""
    started = time.monotonic()
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
        writer.write(request_bytes(f"{host}:{port}", "/" + name))
        status, _, body = await asyncio.wait_for(read_response(reader), timeout)
        writer.close()
        return {"seconds": round(time.monotonic() - started, 4), "ok": status == 200 and body == expected, "status": status}
    except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError) as error:
        return {"seconds": round(time.monotonic() - started, 4), "ok": False, "status": 0, "error": repr(error)}


async def slow_but_complete(host: str, port: int, delay: float) -> dict:
    """The control: a whole head sent a byte at a time within the deadline is answered."""
    reader, writer = await asyncio.open_connection(host, port)
    head = request_bytes(f"{host}:{port}", "/index.m3u8")
    pause = delay / len(head)
    for byte in head:
        writer.write(bytes([byte]))
        await writer.drain()
        await asyncio.sleep(pause)
    try:
        status, _, _ = await asyncio.wait_for(read_response(reader), 10)
    except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError):
        status = 0
    writer.close()
    return {"status": status, "seconds_to_send_head": delay}


async def slowloris_scenario(host: str, port: int, package: Package, count: int, deadline: float, probe_timeout: float) -> dict:
    horizon = deadline + 10
    segment = package.segments[0]
    quiet = [await fetch_once(host, port, segment, package.files[segment], probe_timeout) for _ in range(5)]
    slow = [asyncio.create_task(slow_connection(host, port, trickle=index % 2 == 0, horizon=horizon)) for index in range(count)]
    control = asyncio.create_task(slow_but_complete(host, port, min(deadline * 0.6, 5)))
    # New listeners while the slow connections hang: one every 0.5 s, up to the deadline.
    await asyncio.sleep(0.3)
    probes = []
    probe_started = time.monotonic()
    while time.monotonic() - probe_started < max(deadline * 0.8, 1):
        probes.append(await fetch_once(host, port, segment, package.files[segment], probe_timeout))
        await asyncio.sleep(0.5)
    outcomes = await asyncio.gather(*slow)
    closed = [o["closed_after"] for o in outcomes if o["closed_after"] is not None]
    return {
        "connections": count,
        "header_deadline_seconds": deadline,
        "closed": len(closed),
        "answered_unfinished": sum(o["answered"] for o in outcomes),
        "closed_after_min": round(min(closed), 3) if closed else None,
        "closed_after_max": round(max(closed), 3) if closed else None,
        "closed_after_max_trickling": round(max((o["closed_after"] or horizon) for o in outcomes if o["trickle"]), 3),
        "probe_delay_quiet_median": sorted(p["seconds"] for p in quiet)[len(quiet) // 2],
        "probes": probes,
        "probe_delay_max": max(p["seconds"] for p in probes),
        "probe_delay_median": sorted(p["seconds"] for p in probes)[len(probes) // 2],
        "probes_ok": sum(p["ok"] for p in probes),
        "control": await control,
    }


async def quiet_fd_count(pid: int, settle: float = 0.5, limit: float = 10) -> int:
    """The server's descriptor count once it has stopped changing."""
    count = fd_count(pid)
    started = time.monotonic()
    while time.monotonic() - started < limit:
        await asyncio.sleep(settle)
        now = fd_count(pid)
        if now == count:
            return count
        count = now
    return count


async def pipelined_clients(host: str, port: int, package: Package, count: int, pipelined: int) -> tuple[list, str, int, int]:
    """`count` clients that each ask for the largest segment `pipelined` times at once (by default
    enough to overflow the server's socket send buffer, so that the server is held mid-response
    with the file open) and read a few bytes: (connections, segment, requests each, bytes read)."""
    name = package.largest_segment
    if pipelined <= 0:
        # tcp_wmem's maximum: the kernel grows a loopback socket's send buffer to it.
        wmem_max = int(Path("/proc/sys/net/ipv4/tcp_wmem").read_text().split()[2])
        pipelined = max(8, math.ceil((wmem_max + 8 * 2**20) / len(package.files[name])))
    connections = []
    for _ in range(count):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, (host, port))
        reader, writer = await asyncio.open_connection(sock=sock, limit=4096)
        writer.write(request_bytes(f"{host}:{port}", "/" + name) * pipelined)
        await writer.drain()
        connections.append((reader, writer))
    read = 0
    for reader, _ in connections:
        read += len(await asyncio.wait_for(reader.read(64), CORRECTNESS_TIMEOUT))
    return connections, name, pipelined, read


async def wait_for_baseline(pid: int, baseline: int, wait: float) -> tuple[int, float]:
    """Polls the server's descriptors until they are back to `baseline` or `wait` seconds pass:
    (the count, the seconds it took)."""
    started = time.monotonic()
    after = fd_count(pid)
    while after > baseline and time.monotonic() - started < wait:
        await asyncio.sleep(0.1)
        after = fd_count(pid)
    return after, time.monotonic() - started


async def disconnect_scenario(host: str, port: int, pid: int, package: Package, count: int, pipelined: int, wait: float,
                              stall: bool = False) -> dict:
    """Clients held mid-response that hang up (or, with `stall`, stay connected and stop reading:
    the server's stall limit must let them go)."""
    baseline = await quiet_fd_count(pid)
    connections, name, pipelined, read = await pipelined_clients(host, port, package, count, pipelined)
    during = await quiet_fd_count(pid)  # each response is held once the socket's buffer is full
    files_open = fds_on(pid, package.directory)
    if not stall:
        for _, writer in connections:
            writer.transport.abort()  # no more reading; the socket is closed at once
    after, seconds = await wait_for_baseline(pid, baseline, wait)
    for _, writer in connections:
        writer.transport.abort()
    return {
        "clients": count,
        "segment": name,
        "segment_bytes": len(package.files[name]),
        "requests_each": pipelined,
        "bytes_read_each_about": read // max(count, 1),
        "fds_baseline": baseline,
        "fds_while_hanging": during,
        "segment_files_open_while_hanging": files_open,
        "fds_after": after,
        "seconds_to_baseline": round(seconds, 3) if after <= baseline else None,
    }


# --- running a server of its own -------------------------------------------------------------------


def write_tone(path: Path, seconds: int = 30, rate: int = 48000) -> None:
    samples = array.array("h")
    for index in range(seconds * rate):
        value = int(12000 * math.sin(2 * math.pi * 440 * index / rate))
        samples.append(value)
        samples.append(value)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(2)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(samples.tobytes())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def own_server(keyframe: str, deadline: float):
    scratch = Path(tempfile.mkdtemp(prefix="origin-load-"))
    try:
        write_tone(scratch / "tone.wav")
        directory = scratch / "hls"
        subprocess.run([keyframe, "package", str(scratch / "tone.wav"), "--hls", str(directory), "--segment-duration", "10",
                        "--bitrate", "256k"], check=True, stdout=subprocess.DEVNULL)
        port = free_port()
        environment = dict(os.environ, KEYFRAME_HEADER_DEADLINE=str(deadline))
        server = subprocess.Popen([keyframe, "serve", str(directory), "--address", f"127.0.0.1:{port}"], env=environment,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
                time.sleep(0.1)
            yield f"http://127.0.0.1:{port}", server.pid, directory
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


# --- main ------------------------------------------------------------------------------------------


async def run(arguments, url: str, pid: int, directory: Path) -> dict:
    match = re.fullmatch(r"http://([^:/]+):(\d+)/?", url)
    host, port = match.group(1), int(match.group(2))
    package = Package(directory)
    report: dict = {"segments": len(package.segments), "segment_bytes": [len(package.files[n]) for n in package.segments],
                    "fd_limit_client": resource.getrlimit(resource.RLIMIT_NOFILE)[0]}
    with contextlib.suppress(OSError):
        report["fd_limit_server"] = next(line.split()[3] for line in Path(f"/proc/{pid}/limits").read_text().splitlines()
                                         if line.startswith("Max open files"))
    scenarios = arguments.scenarios.split(",")
    if "listeners" in scenarios:
        report["listeners"] = await listeners_scenario(host, port, pid, package, arguments.listeners)
    if "slowloris" in scenarios:
        report["slowloris"] = await slowloris_scenario(host, port, package, arguments.slowloris, arguments.header_deadline,
                                                       arguments.probe_timeout)
    if "disconnect" in scenarios:
        report["disconnect"] = await disconnect_scenario(host, port, pid, package, arguments.disconnects, arguments.pipelined,
                                                         arguments.fd_wait)
    if "stalled" in scenarios:
        report["stalled"] = await disconnect_scenario(host, port, pid, package, arguments.disconnects, arguments.pipelined,
                                                      arguments.fd_wait, stall=True)
    return report


def summary(report: dict) -> str:
    lines = [f"package: {report['segments']} segments of {report['segment_bytes']} bytes"]
    if listeners := report.get("listeners"):
        lines.append(f"listeners: {listeners['listeners']} × (playlist, init, {report['segments']} segments): "
                     f"{listeners['answered']}/{listeners['requests_expected']} answered byte for byte, "
                     f"{listeners['bytes'] / 1e6:.1f} MB in {listeners['wall_seconds']:.2f} s "
                     f"(server CPU {listeners['server_cpu_seconds']:.2f} s); server RSS "
                     f"{listeners['rss_before_bytes'] / 2**20:.1f} MiB before, peak {listeners['rss_peak_bytes'] / 2**20:.1f} MiB")
    if slow := report.get("slowloris"):
        lines.append(f"slowloris: {slow['connections']} connections, deadline {slow['header_deadline_seconds']} s: "
                     f"{slow['closed']} closed after {slow['closed_after_min']}–{slow['closed_after_max']} s; "
                     f"a new listener's segment in {slow['probe_delay_median'] * 1000:.1f} ms median, "
                     f"{slow['probe_delay_max'] * 1000:.1f} ms max ({slow['probes_ok']}/{len(slow['probes'])} right; "
                     f"{slow['probe_delay_quiet_median'] * 1000:.1f} ms before the slow connections); "
                     f"a head sent a byte at a time within the deadline: {slow['control']['status']}")
    if gone := report.get("disconnect"):
        lines.append(f"disconnect: {gone['clients']} clients hung up mid-response ({gone['segment_files_open_while_hanging']} "
                     f"segment files open while they hung): fds {gone['fds_baseline']} → {gone['fds_while_hanging']} → "
                     f"{gone['fds_after']} (back in {gone['seconds_to_baseline']} s)")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keyframe", help="make a package and serve it with this keyframe")
    parser.add_argument("--url", help="a server already running (http://HOST:PORT)")
    parser.add_argument("--pid", type=int, help="its process id (for /proc)")
    parser.add_argument("--dir", help="the directory it serves")
    parser.add_argument("--scenarios", default="listeners,slowloris,disconnect")
    parser.add_argument("--listeners", type=int, default=400)
    parser.add_argument("--slowloris", type=int, default=300)
    parser.add_argument("--disconnects", type=int, default=50)
    parser.add_argument("--pipelined", type=int, default=0,
                        help="requests each disconnecting client sends at once (default: enough to fill the socket's send buffer)")
    parser.add_argument("--header-deadline", type=float, default=2.0, help="the server's header deadline, seconds")
    parser.add_argument("--probe-timeout", type=float, default=5.0, help="a new listener's correctness bound, seconds")
    parser.add_argument("--fd-wait", type=float, default=5.0, help="how long the fd count may take to come back, seconds")
    parser.add_argument("--json", action="store_true")
    arguments = parser.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = arguments.listeners + arguments.slowloris + 256
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(needed, soft)) if hard != resource.RLIM_INFINITY else needed, hard))

    if arguments.url and arguments.pid and arguments.dir:
        report = asyncio.run(run(arguments, arguments.url, arguments.pid, Path(arguments.dir)))
    elif arguments.keyframe:
        with own_server(arguments.keyframe, arguments.header_deadline) as (url, pid, directory):
            report = asyncio.run(run(arguments, url, pid, directory))
    else:
        parser.error("--keyframe, or --url with --pid and --dir")
    print(json.dumps(report, indent=1) if arguments.json else summary(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
