#!/usr/bin/env python3
"""Hostile requests against a running `keyframe serve`, each on a raw socket.

Usage: origin-hostile.py --host 127.0.0.1 --port N --pid PID --dir SERVED_DIR [--json]

Every case is sent twice (the first pass warms the server up) and records what came back (the status line, whether
the body leaked a file from outside the served folder, whether the connection was closed), then
checks that the server still answers a plain GET. Around the cases it records the server's open
descriptors (/proc/PID/fd) and resident memory (/proc/PID/status VmRSS), and a digest of every
file under the served folder, so that a caller can assert the folder is unchanged and the
descriptors come back to their baseline.

Standard library only. The cases:
- traversal: dot segments plain, percent-encoded, double-encoded, with backslashes, with a NUL,
  absolute and doubled slashes;
- a symbolic link inside the folder that points at /etc/passwd;
- a 1 MB header line, and 10,000 headers;
- request smuggling: Content-Length with Transfer-Encoding, two different Content-Lengths;
- writing methods (PUT, POST, DELETE, PATCH, MKCOL, PROPFIND, MOVE, COPY) with bodies;
- 1,000 ranges in one Range header;
- hidden and partial files, and directories (no listing).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import socket
import sys
import time
from pathlib import Path

SECRET_MARK = b"root:"


def exchange(host: str, port: int, payload: bytes, timeout: float = 10.0, read_limit: int = 8 << 20) -> dict:
    """Sends `payload`, reads until the server closes or `timeout` passes; returns what came."""
    received = bytearray()
    closed = False
    error = None
    try:
        with socket.create_connection((host, port), timeout=timeout) as connection:
            try:
                connection.sendall(payload)
            except OSError as sent:  # the server may close before taking it all
                error = f"send: {sent}"
            deadline = time.monotonic() + timeout
            connection.settimeout(0.5)
            while time.monotonic() < deadline and len(received) < read_limit:
                try:
                    chunk = connection.recv(65536)
                except socket.timeout:
                    if received:
                        break
                    continue
                except OSError as failed:
                    error = f"recv: {failed}"
                    closed = True
                    break
                if not chunk:
                    closed = True
                    break
                received += chunk
    except OSError as failed:
        error = f"connect: {failed}"
    statuses = [int(line.split(b" ")[1]) for line in bytes(received).split(b"\r\n")
                if line.startswith(b"HTTP/1.1 ") and len(line.split(b" ")) > 1 and line.split(b" ")[1].isdigit()]
    return {"statuses": statuses, "bytes": len(received), "closed": closed, "error": error,
            "leaked": SECRET_MARK in received}


def request(path: str, method: str = "GET", headers: list[tuple[str, str]] | None = None, body: bytes = b"") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: origin.test"]
    lines += [f"{name}: {value}" for name, value in (headers or [])]
    if body and not any(name.lower() in ("content-length", "transfer-encoding") for name, _ in headers or []):
        lines.append(f"Content-Length: {len(body)}")
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def folder_digest(directory: Path) -> dict[str, str]:
    digest = {}
    for path in sorted(directory.rglob("*")):
        relative = str(path.relative_to(directory))
        if path.is_symlink():
            digest[relative] = "link:" + os.readlink(path)
        elif path.is_file():
            digest[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
        elif path.is_dir():
            digest[relative] = "dir"
    return digest


def descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def resident_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--json", action="store_true")
    arguments = parser.parse_args()
    host, port, served = arguments.host, arguments.port, arguments.dir

    # Things a package may hold that must never be served, and a way out of the folder.
    (served / ".hidden.m4s").write_bytes(b"hidden")
    (served / ".index.m3u8.partial-abc123").write_bytes(b"partial")
    (served / "take.partial.m4a").write_bytes(b"partial output")
    (served / "sub").mkdir(exist_ok=True)
    (served / "sub" / "inner.m4s").write_bytes(b"inner")
    escape = served / "escape.m3u8"
    if not escape.exists():
        escape.symlink_to("/etc/passwd")

    def plain_get() -> int:
        answer = exchange(host, port, request("/index.m3u8"))
        return answer["statuses"][0] if answer["statuses"] else 0

    baseline_ok = plain_get()
    before = folder_digest(served)

    cases: list[tuple[str, str, bytes]] = []
    for path in ["/../../../../etc/passwd", "/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/%252e%252e/%252e%252e/etc/passwd",
                 "/..%2f..%2f..%2fetc%2fpasswd", "/..\\..\\..\\etc\\passwd", "/%2e%2e%5c%2e%2e%5cetc%5cpasswd",
                 "/index.m3u8%00/../../../etc/passwd", "/./sub/../../../etc/passwd", "//etc/passwd",
                 "/%2F%2Fetc%2Fpasswd", "/sub/%2e%2e/%2e%2e/etc/passwd", "http://origin.test/../../etc/passwd"]:
        cases.append(("traversal", path, request(path)))
    cases.append(("symlink out of the folder", "/escape.m3u8", request("/escape.m3u8")))
    cases.append(("1 MB header line", "/index.m3u8", request("/index.m3u8", headers=[("X-Long", "a" * (1 << 20))])))
    cases.append(("10,000 headers", "/index.m3u8", request("/index.m3u8", headers=[(f"X-H{i}", "v") for i in range(10_000)])))
    smuggled = b"0\r\n\r\nGET /init.mp4 HTTP/1.1\r\nHost: origin.test\r\n\r\n"
    cases.append(("Content-Length with Transfer-Encoding", "/index.m3u8",
                  request("/index.m3u8", "POST", [("Content-Length", str(len(smuggled))), ("Transfer-Encoding", "chunked")], smuggled)))
    cases.append(("two Content-Lengths", "/index.m3u8",
                  request("/index.m3u8", "POST", [("Content-Length", "5"), ("Content-Length", "40")], b"hello" + b"x" * 35)))
    for method in ["PUT", "POST", "DELETE", "PATCH", "MKCOL", "PROPFIND", "MOVE", "COPY"]:
        cases.append((f"writing method {method}", "/index.m3u8",
                      request("/index.m3u8", method, [("Destination", "/moved.m3u8")], b"overwritten")))
    cases.append(("writing method PUT of a new file", "/new.m4s", request("/new.m4s", "PUT", body=b"new file")))
    ranges = ",".join(f"{i}-{i}" for i in range(1000))
    cases.append(("1,000 ranges", "/init.mp4", request("/init.mp4", headers=[("Range", f"bytes={ranges}")])))
    for path in ["/.hidden.m4s", "/.index.m3u8.partial-abc123", "/take.partial.m4a", "/sub/", "/sub", "/.", "/sub/."]:
        cases.append(("hidden, partial or a directory", path, request(path)))

    def run_all() -> list[dict]:
        results = []
        for kind, path, payload in cases:
            answer = exchange(host, port, payload)
            answer.update({"case": kind, "path": path, "alive": plain_get() == baseline_ok})
            results.append(answer)
        return results

    # A first pass warms the server (what it allocates once, on first use, is not a leak); the
    # baseline is taken after it, and the second pass is the one reported.
    run_all()
    time.sleep(0.5)
    baseline_descriptors = descriptors(arguments.pid)
    baseline_rss = resident_kib(arguments.pid)
    results = run_all()

    # Descriptors back to the baseline: a connection the server answered with 400 and then
    # held half-closed is let go at its header deadline (10 s by default).
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and descriptors(arguments.pid) > baseline_descriptors:
        time.sleep(0.1)
    after = folder_digest(served)
    report = {
        "baselineStatus": baseline_ok,
        "cases": results,
        "descriptors": {"before": baseline_descriptors, "after": descriptors(arguments.pid)},
        "residentKiB": {"before": baseline_rss, "after": resident_kib(arguments.pid)},
        "folderUnchanged": before == after,
        "folderChanges": sorted(set(before.items()) ^ set(after.items())),
    }
    if arguments.json:
        print(json.dumps(report, indent=1))
    else:
        for result in results:
            print(f"{result['case']:40} {result['path'][:40]:40} {result['statuses']} closed={result['closed']} "
                  f"leaked={result['leaked']} alive={result['alive']}")
        print(json.dumps({key: value for key, value in report.items() if key != "cases"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
