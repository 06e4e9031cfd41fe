#!/usr/bin/env python3
"""What headless Chromium plays of an HLS package (issue 23, item 1): each way a page can play
it, measured against the source, frame by frame.

    browser-gapless.py PACKAGE_DIR SOURCE.wav [--playlist index.m3u8] [--paths decode,buffered,mse-window,native]
                       [--window-end SECONDS]

Serves PACKAGE_DIR, SOURCE.wav and the page (scripts/browser/gapless.html, capture.js) on
127.0.0.1 (a port of its own), starts `chromium --headless=new` with a temporary profile and
its DevTools port on 127.0.0.1, runs the page's functions over the DevTools protocol and prints
one JSON object:

- "decode" (decodeAudioData of the init segment and the segments): frames, sampleRate.
- "buffered" (MSE, segments appended, no append window): ranges [[start, end]] in seconds, duration.
- "mseWindow" (MSE with appendWindowEnd = the source's length, or --window-end), "msePlayer"
  (the same window, the last segment's last sample given its whole frame back first, as a
  player that trims with the window must), "mse" (no window), "native" (<audio src=PLAYLIST>,
  Chromium's own HLS): played in real time through an
  AudioWorklet that keeps every frame; first/last non-zero frame captured, span, sourceAt (where
  the source's first frame lies, by cross-correlation), heardBefore/heardAfter (frames heard
  before the source's first and after its last), snr/leastBlockSNR (dB, per 1024 frames).

The source must be at the package's sample rate (the AudioContext runs at it: no resampling).
Keep it short: playback is real time. Needs `chromium` (Debian) and websocket-client (the venv:
`make deps`); the rest is the standard library.
"""

import argparse
import functools
import http.server
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import wave

try:
    import websocket
except ImportError:
    raise SystemExit("browser-gapless.py: websocket-client is missing: run `make deps` and use the venv's python (.venv/bin/python)")

PAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "browser")
TYPES = {".m3u8": "application/vnd.apple.mpegurl", ".m4s": "video/iso.segment", ".mp4": "audio/mp4", ".mpd": "application/dash+xml",
         ".js": "text/javascript", ".html": "text/html; charset=utf-8", ".wav": "audio/wav"}


class Handler(http.server.SimpleHTTPRequestHandler):
    """/ is the page's directory, /package/ the package, /source.wav the source."""

    extensions_map = TYPES

    def __init__(self, *args, package, source, **kwargs):
        self.package, self.source = package, source
        super().__init__(*args, directory=PAGE, **kwargs)

    def translate_path(self, path):
        path = path.split("?", 1)[0].split("#", 1)[0]
        if path == "/source.wav":
            return self.source
        if path.startswith("/package/"):
            relative = os.path.normpath(path[len("/package/"):]).lstrip("/")
            if relative.startswith(".."):
                return "/nonexistent"
            return os.path.join(self.package, relative)
        return super().translate_path(path)

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, *args):
        pass


class Chromium:
    """A headless Chromium with a temporary profile, driven over one page's DevTools socket."""

    def __init__(self):
        if shutil.which("chromium") is None:
            raise SystemExit("browser-gapless.py: chromium is missing: run `make deps`")
        self.profile = tempfile.mkdtemp(prefix="keyframe-chromium-")
        # --no-sandbox: Chromium refuses to run as root with its sandbox (CI, containers).
        self.process = subprocess.Popen(
            ["chromium", "--headless=new", "--no-sandbox", "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
             f"--user-data-dir={self.profile}", "--autoplay-policy=no-user-gesture-required", "--no-first-run",
             "--no-default-browser-check", "--disable-gpu", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.ids = 0
        try:
            port = self._port()
            for _ in range(100):
                targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5))
                pages = [t for t in targets if t.get("type") == "page"]
                if pages:
                    break
                time.sleep(0.1)
            else:
                raise RuntimeError("chromium opened no page")
            self.socket = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=180, suppress_origin=True)
            self.version = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/version", timeout=5)).get("Browser", "")
            self.call("Page.enable")
            self.call("Runtime.enable")
            # The media pipeline's own errors (a segment the demuxer refuses says why here only).
            self.media_log = []
            self.call("Media.enable")
        except BaseException:
            self.close()
            raise

    def _port(self):
        """The DevTools port Chromium chose: the first line of DevToolsActivePort in the profile."""
        path = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"chromium exited with status {self.process.returncode}")
            try:
                with open(path) as f:
                    line = f.readline().strip()
                if line:
                    return int(line)
            except (FileNotFoundError, ValueError):
                pass
            time.sleep(0.1)
        raise RuntimeError("chromium did not open its DevTools port within 30 s")

    def call(self, method, wait_for=None, **params):
        """Sends a command; returns its result (and, with `wait_for`, waits for that event too)."""
        self.ids += 1
        ident = self.ids
        self.socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        result, seen = None, wait_for is None
        while result is None or not seen:
            message = json.loads(self.socket.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result = message.get("result", {})
            elif wait_for is not None and message.get("method") == wait_for:
                seen = True
            elif message.get("method") in ("Media.playerErrorsRaised", "Media.playerMessagesLogged"):
                params_ = message.get("params", {})
                for entry in params_.get("errors", []) + [m for m in params_.get("messages", []) if m.get("level") == "error"]:
                    if len(self.media_log) < 20:
                        self.media_log.append(entry.get("message") or entry.get("errorType") or json.dumps(entry))
        return result

    def open(self, url):
        """A fresh document at `url`, loaded."""
        self.call("Page.navigate", wait_for="Page.loadEventFired", url=url)

    def evaluate(self, expression):
        """The value of `expression` (awaited when a promise); a page exception is raised."""
        result = self.call("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise RuntimeError(f"{expression}: {text}")
        return result["result"].get("value")

    def close(self):
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("package", help="the package directory (a media playlist, its init segment and segments)")
    parser.add_argument("source", help="the source WAV, at the package's sample rate")
    parser.add_argument("--playlist", default="index.m3u8", help="the media playlist in PACKAGE (default index.m3u8)")
    parser.add_argument("--paths", default="decode,buffered,mse-window,native",
                        help="what to measure, of decode, buffered, mse-window, mse-player, mse, native")
    parser.add_argument("--window-end", type=float, help="MSE's appendWindowEnd in seconds (default: the source's length)")
    arguments = parser.parse_args()

    with wave.open(arguments.source) as w:
        rate, frames = w.getframerate(), w.getnframes()
    window_end = arguments.window_end if arguments.window_end is not None else frames / rate

    handler = functools.partial(Handler, package=os.path.abspath(arguments.package), source=os.path.abspath(arguments.source))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    playlist = json.dumps(f"{origin}/package/{arguments.playlist}")
    report = {"sourceFrames": frames, "rate": rate, "windowEnd": window_end}
    browser = None
    try:
        browser = Chromium()
        report["chromium"] = browser.version
        for path in arguments.paths.split(","):
            browser.open(f"{origin}/gapless.html")
            if path == "decode":
                report["decode"] = browser.evaluate(f"decodeSegments({playlist}, {rate})")
            elif path == "buffered":
                report["buffered"] = browser.evaluate(f"bufferedByMSE({playlist})")
            elif path == "mse-window":
                report["mseWindow"] = browser.evaluate(f"play('mse', {playlist}, '/source.wav', {rate}, {window_end!r})")
            elif path == "mse-player":
                report["msePlayer"] = browser.evaluate(f"play('mse-whole', {playlist}, '/source.wav', {rate}, {window_end!r})")
            elif path == "mse":
                report["mse"] = browser.evaluate(f"play('mse', {playlist}, '/source.wav', {rate}, null)")
            elif path == "native":
                report["native"] = browser.evaluate(f"play('native', {playlist}, '/source.wav', {rate}, null)")
            else:
                raise SystemExit(f"unknown path {path!r}")
    finally:
        if browser is not None:
            browser.close()
        server.shutdown()
        server.server_close()
    json.dump(report, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
