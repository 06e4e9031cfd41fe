#!/usr/bin/env python3
"""What headless Chromium plays of our own player page (issue 23, item 2), measured against the
source frame by frame, and a screenshot of the page.

    browser-page.py URL SOURCE.wav --screenshot PAGE.png [--ready-timeout SECONDS]

URL is the page an origin answers `/` with (`keyframe serve DIR --address 127.0.0.1:PORT`:
http://127.0.0.1:PORT/), not a page of this harness. The driver is scripts/browser-gapless.py's
(imported): `chromium --headless=new --no-sandbox` with a temporary profile and the autoplay
policy flag, over the DevTools protocol. It opens URL, waits for `window.keyframePlayer.state`
to leave "loading", puts the capture worklet (scripts/browser/capture.js, as a Blob URL module)
behind `createMediaElementSource(document.getElementById('player'))`, plays until `ended` and
compares what was heard with SOURCE.wav with gapless.html's own `analyse` (its script, wrapped in
a function so that none of its names reach the page's globals). The source is served to the page
by a server of this harness on 127.0.0.1 with CORS `*`. Prints one JSON object:

- "player": `window.keyframePlayer` once ready (state, appended, validLength, live, error, ...).
- "heard": captured, first, last, span, sourceAt, heardBefore, heardAfter, correlation, snr,
  leastBlockSNR (as browser-gapless.py's paths), duration (the element's).
- "page": facts to check cheaply: the title, the audio element's controls, autoplay attribute and
  preload, its label (aria-labelledby or <label>) and its accessible name (Chromium's
  accessibility tree), the status line's
  text, role and aria-live, the latency line's aria-live, the chapter buttons, the heading, the
  artist line (null when hidden), the cover (its natural size, whether a Blob URL; null when
  hidden), the bitrate line and how many images the page holds.
- "screenshot": the path and size of the PNG written (Page.captureScreenshot, after playing).

The source must be at the package's sample rate (the AudioContext runs at it: no resampling).
Playback is real time: keep it short.
"""

import argparse
import base64
import functools
import http.server
import importlib.util
import json
import os
import re
import sys
import threading
import time
import wave

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("browser_gapless", os.path.join(HERE, "browser-gapless.py"))
gapless = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gapless)


class SourceHandler(gapless.Handler):
    """The harness's server (only /source.wav is asked for), readable from the page's origin."""

    def end_headers(self):
        self.send_header("Access-Control-Allow-Origin", "*")
        super().end_headers()


def harness_functions():
    """gapless.html's script (source, analyse, sleep, ...) in a function of its own: its names
    stay out of the page's globals (the player page has a `boxes` and a `wholeLastFrame` too)."""
    with open(os.path.join(gapless.PAGE, "gapless.html")) as f:
        script = re.search(r"<script>(.*)</script>", f.read(), re.S).group(1)
    return f"window.__keyframeHarness = (() => {{ {script}\n return {{source, analyse, sleep}}; }})(); true"


# Runs in the player page once it is ready: the capture worklet behind the page's own <audio>,
# played to its end, then what was heard against the source.
PLAY = """
(async () => {
  const {source, analyse, sleep} = window.__keyframeHarness;
  const src = await source(%(source)s, %(rate)d);
  const audio = document.getElementById('player');
  const context = new AudioContext({sampleRate: %(rate)d});
  const module = URL.createObjectURL(new Blob([%(capture)s], {type: 'text/javascript'}));
  await context.audioWorklet.addModule(module);
  const node = new AudioWorkletNode(context, 'capture');
  context.createMediaElementSource(audio).connect(node);
  node.connect(context.destination);
  const ended = new Promise(resolve => audio.addEventListener('ended', resolve, {once: true}));
  await audio.play();
  const limit = sleep(1000 * (src.length / %(rate)d + 15)).then(() => {
    throw new Error(`not ended: currentTime ${audio.currentTime}, error ${audio.error && audio.error.code}`);
  });
  await Promise.race([ended, limit]);
  // The last render quanta reach the worklet after 'ended'.
  await sleep(300);
  const chunks = await new Promise(resolve => { node.port.onmessage = e => resolve(e.data); node.port.postMessage(0); });
  await context.close();
  const heard = new Float32Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) { heard.set(c, at); at += c.length; }
  return Object.assign(analyse(heard, src), {duration: audio.duration});
})()
"""

FACTS = """
(() => {
  const audio = document.getElementById('player');
  const labelledBy = audio && audio.getAttribute('aria-labelledby');
  const label = labelledBy ? labelledBy.split(/\s+/).map(id => (document.getElementById(id) || {}).textContent || '').join(' ').trim()
                           : audio && audio.labels && audio.labels[0] ? audio.labels[0].textContent.trim() : null;
  const status = document.getElementById('status');
  const latency = document.getElementById('latency');
  const artist = document.getElementById('stream-artist');
  const cover = document.getElementById('cover');
  const bitrate = document.getElementById('bitrate');
  return {
    title: document.title,
    lang: document.documentElement.lang,
    audio: !!audio,
    controls: !!(audio && audio.controls),
    autoplayAttribute: !!(audio && audio.hasAttribute('autoplay')),
    preload: audio && audio.getAttribute('preload'),
    label,
    status: status ? status.textContent : null,
    statusRole: status && status.getAttribute('role'),
    statusLive: status && status.getAttribute('aria-live'),
    latencyLive: latency && latency.getAttribute('aria-live'),
    chapters: [...document.querySelectorAll('#chapters button')].map(b => b.textContent),
    playlist: typeof playlistPath === 'string' ? playlistPath : null,
    heading: (document.querySelector('h1') || {}).textContent || null,
    artist: artist && !artist.hidden ? artist.textContent : null,
    cover: cover && !cover.hidden && cover.complete ? {naturalWidth: cover.naturalWidth, naturalHeight: cover.naturalHeight,
                                                      blob: cover.src.startsWith('blob:'), alt: cover.alt} : null,
    bitrate: bitrate ? bitrate.textContent : null,
    images: document.images.length,
  };
})()
"""


def accessible_name(browser, selector):
    """The accessible name Chromium computes for the element `selector` selects, or None."""
    try:
        browser.call("Accessibility.enable")
        root = browser.call("DOM.getDocument", depth=0)["root"]["nodeId"]
        node = browser.call("DOM.querySelector", nodeId=root, selector=selector)["nodeId"]
        if not node:
            return None
        nodes = browser.call("Accessibility.getPartialAXTree", nodeId=node, fetchRelatives=False)["nodes"]
        names = [n.get("name", {}).get("value") for n in nodes if not n.get("ignored")]
        return next((name for name in names if name is not None), None)
    except RuntimeError:
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="the player page, e.g. http://127.0.0.1:PORT/ (keyframe serve)")
    parser.add_argument("source", help="the source WAV, at the package's sample rate")
    parser.add_argument("--screenshot", required=True, help="where to write the PNG of the page")
    parser.add_argument("--ready-timeout", type=float, default=30, help="seconds to wait for the page to leave \"loading\"")
    parser.add_argument("--no-mse", action="store_true", help="open the page as a browser without Media Source Extensions would")
    parser.add_argument("--load-only", type=float, metavar="SECONDS",
                        help="do not play: wait SECONDS after the page is ready and report what it buffered (a long package)")
    arguments = parser.parse_args()

    with wave.open(arguments.source) as w:
        rate, frames = w.getframerate(), w.getnframes()
    with open(os.path.join(gapless.PAGE, "capture.js")) as f:
        capture = f.read()

    handler = functools.partial(SourceHandler, package="/nonexistent", source=os.path.abspath(arguments.source))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    source_url = f"http://127.0.0.1:{server.server_address[1]}/source.wav"
    report = {"sourceFrames": frames, "rate": rate, "url": arguments.url}
    browser = None
    try:
        browser = gapless.Chromium()
        report["chromium"] = browser.version
        if arguments.no_mse:
            # As a browser without MSE: the page must fall back to the browser's own HLS.
            browser.call("Page.addScriptToEvaluateOnNewDocument", source="delete window.MediaSource; delete window.ManagedMediaSource;")
        browser.open(arguments.url)
        deadline = time.monotonic() + arguments.ready_timeout
        while True:
            player = browser.evaluate("window.keyframePlayer ? JSON.parse(JSON.stringify(window.keyframePlayer)) : null")
            if player is not None and player.get("state") != "loading":
                break
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        report["player"] = player
        if browser.media_log:
            report["mediaErrors"] = browser.media_log
        if arguments.load_only is not None:
            time.sleep(arguments.load_only)
            report["loaded"] = browser.evaluate(
                "(() => { const a = document.getElementById('player'); const b = a.buffered; const r = [];"
                " for (let i = 0; i < b.length; i++) r.push([b.start(i), b.end(i)]);"
                " return { player: JSON.parse(JSON.stringify(window.keyframePlayer)), buffered: r, duration: a.duration }; })()")
        elif player is not None and player.get("state") in ("ready", "native"):
            browser.evaluate(harness_functions())
            report["heard"] = browser.evaluate(PLAY % {"source": json.dumps(source_url), "rate": rate, "capture": json.dumps(capture)})
            report["playerAfter"] = browser.evaluate("JSON.parse(JSON.stringify(window.keyframePlayer))")
        facts = browser.evaluate(FACTS)
        facts["accessibleName"] = accessible_name(browser, "#player")
        report["page"] = facts
        shot = browser.call("Page.captureScreenshot", format="png")
        data = base64.b64decode(shot["data"])
        with open(arguments.screenshot, "wb") as f:
            f.write(data)
        report["screenshot"] = {"path": os.path.abspath(arguments.screenshot), "bytes": len(data)}
    finally:
        if browser is not None:
            browser.close()
        server.shutdown()
        server.server_close()
    json.dump(report, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
