#!/usr/bin/env python3
"""What headless Chromium hears of our own player page for a few seconds: a live stream (or a
package), with the page's own latency figure and chapter list.

    browser-page-live.py URL [--live] [--play SECONDS] [--rate HZ] [--ready-timeout SECONDS]
                         [--screenshot PAGE.png]

URL is the page an origin answers `/` with (`keyframe record --hls DIR --serve HOST:PORT`, or
`keyframe serve DIR`): http://HOST:PORT/. The driver is scripts/browser-page.py's (imported, and
through it browser-gapless.py's Chromium). It opens URL and waits until
`window.keyframePlayer.state` is "ready" (with --live: and `live` is true), or "failed", or
--ready-timeout passes. Then it puts the capture worklet (scripts/browser/capture.js) behind the
page's `<audio id="player">` in an AudioContext at --rate, plays for --play seconds (or until
`ended`), sampling the page every 250 ms, and measures what was heard: no reference, just
whether there was sound (frames not silent, RMS, peak, a zero-crossing frequency of the loud
part). Prints one JSON object:

- "player": `window.keyframePlayer` once ready; "playerAfter": after playing.
- "played": appended before and after playing (and their difference, "appendedWhilePlaying"),
  currentTime before and after, whether it ended, the element's error code.
- "heard": captured (frames), nonSilent (frames whose magnitude is at least one 16-bit step),
  firstNonSilent and lastNonSilent (frame indices), silentRuns ([first frame, frames] of the
  first 20 runs of at least 1 ms below that step) and silentRunCount (gaps: a stalled player,
  or a source with gaps of its own), rms and rmsDBFS (of the whole capture), loudRMSDBFS (from
  the first non-silent frame to the last), peak, frequency (Hz: the median over the blocks of
  0.1 s between those two frames without a silent run, frequencyBlocks of them, of their zero
  crossings).
- "latency": `keyframePlayer.latency` and the #latency line's text after playing, whether the
  line is shown, its aria-live, and the samples taken while playing ({t, latency, text,
  currentTime, appended, nowPlaying}: the title the page shows).
- "nowPlaying": the #now-playing line's text after playing, and the #timeline's marks (their
  class and left edge).
- "page": browser-page.py's facts (title, status, chapters: the #chapters buttons' text, ...),
  and chapterSeeks: the element's currentTime after clicking each chapter button in turn.
- "screenshot": with --screenshot, the PNG written after playing.

Playback is real time: keep --play short.
"""

import argparse
import base64
import importlib.util
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("browser_page", os.path.join(HERE, "browser-page.py"))
page = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(page)
gapless = page.gapless

# Runs in the player page once it is ready: the capture worklet behind the page's own <audio>,
# played for a while, the page sampled meanwhile, then what was heard.
LISTEN = """
(async () => {
  const sleep = (ms) => new Promise(resolve => setTimeout(resolve, ms));
  const player = window.keyframePlayer;
  const audio = document.getElementById('player');
  const line = document.getElementById('latency');
  const context = new AudioContext({sampleRate: %(rate)d});
  const module = URL.createObjectURL(new Blob([%(capture)s], {type: 'text/javascript'}));
  await context.audioWorklet.addModule(module);
  const node = new AudioWorkletNode(context, 'capture');
  context.createMediaElementSource(audio).connect(node);
  node.connect(context.destination);
  let ended = false;
  audio.addEventListener('ended', () => { ended = true; }, {once: true});
  const played = {appendedBefore: player.appended, currentTimeBefore: audio.currentTime};
  await Promise.race([audio.play(), sleep(10000).then(() => { throw new Error('play() did not start within 10 s'); })]);
  const started = performance.now(), samples = [];
  while (!ended && performance.now() - started < %(milliseconds)d) {
    await sleep(250);
    samples.push({t: (performance.now() - started) / 1000, latency: player.latency === undefined ? null : player.latency,
                  text: line ? line.textContent : null, currentTime: audio.currentTime, appended: player.appended,
                  nowPlaying: player.nowPlaying ? player.nowPlaying.title : null});
  }
  Object.assign(played, {seconds: (performance.now() - started) / 1000, appendedAfter: player.appended,
                         currentTimeAfter: audio.currentTime, ended, paused: audio.paused,
                         error: audio.error && audio.error.code});
  played.appendedWhilePlaying = played.appendedAfter - played.appendedBefore;
  await sleep(300);
  const chunks = await new Promise(resolve => { node.port.onmessage = e => resolve(e.data); node.port.postMessage(0); });
  audio.pause();
  await context.close();
  const heard = new Float32Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) { heard.set(c, at); at += c.length; }
  const step = 1 / 32768;
  // Silent runs: at least 1 ms of frames below one 16-bit step ([start, frames]).
  let nonSilent = 0, first = -1, last = -1, sum = 0, peak = 0, run = 0;
  const gaps = [];
  const minimumGap = Math.round(context.sampleRate / 1000);
  for (let i = 0; i <= heard.length; i++) {
    const x = i < heard.length ? Math.abs(heard[i]) : 1;
    if (x >= step) {
      if (run >= minimumGap) gaps.push([i - run, run]);
      run = 0;
      if (i < heard.length) { nonSilent++; if (first < 0) first = i; last = i; }
    } else { run++; }
    if (i < heard.length) { sum += heard[i] * heard[i]; peak = Math.max(peak, x); }
  }
  const dB = (v) => v > 0 ? 20 * Math.log10(v) : null;
  // The frequency: the median over blocks of 0.1 s (between the first frame not silent and the
  // last) of their zero crossings, counted between frames not silent (a frame below the step,
  // the tone's own zero, is passed over); a block with a silent run in it is left out.
  let loudSum = 0;
  for (let i = Math.max(first, 0); first >= 0 && i <= last; i++) loudSum += heard[i] * heard[i];
  const block = Math.round(context.sampleRate / 10), blockFrequencies = [];
  for (let start = Math.max(first, 0); first >= 0 && start + block <= last + 1; start += block) {
    if (gaps.some(([at, frames]) => at < start + block && at + frames > start)) continue;
    let crossings = 0, sign = 0;
    for (let i = start; i < start + block; i++) {
      if (Math.abs(heard[i]) < step) continue;
      const s = heard[i] < 0 ? -1 : 1;
      if (sign && s !== sign) crossings++;
      sign = s;
    }
    blockFrequencies.push(crossings / 2 / (block / context.sampleRate));
  }
  blockFrequencies.sort((a, b) => a - b);
  const loudFrames = first >= 0 ? last + 1 - first : 0;
  const rms = heard.length ? Math.sqrt(sum / heard.length) : 0;
  const loudRMS = loudFrames ? Math.sqrt(loudSum / loudFrames) : 0;
  return {
    played,
    heard: {captured: heard.length, rate: context.sampleRate, nonSilent, firstNonSilent: first, lastNonSilent: last, silentRuns: gaps.slice(0, 20),
            silentRunCount: gaps.length, rms, rmsDBFS: dB(rms),
            loudRMSDBFS: dB(loudRMS), peak, frequency: blockFrequencies.length ? blockFrequencies[blockFrequencies.length >> 1] : null,
            frequencyBlocks: blockFrequencies.length},
    latency: {value: player.latency === undefined ? null : player.latency, text: line ? line.textContent : null,
              shown: !!(line && !line.hidden), live: line && line.getAttribute('aria-live'), samples},
  };
})()
"""

NOW_PLAYING = """
({text: document.getElementById('now-playing').hidden ? null : document.getElementById('now-playing').textContent,
  live: document.getElementById('now-playing').getAttribute('aria-live'),
  timeline: [...document.querySelectorAll('#timeline span')].map(span => ({kind: span.className, left: span.style.left})),
  adBreaks: [...document.querySelectorAll('#marks li')].map(item => item.textContent)})
"""

CHAPTER_SEEKS = """
[...document.querySelectorAll('#chapters button')].map(button => { button.click(); return document.getElementById('player').currentTime; })
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="the player page, e.g. http://127.0.0.1:PORT/ (keyframe record --serve, keyframe serve)")
    parser.add_argument("--live", action="store_true", help="wait for keyframePlayer.live too (a live rendition)")
    parser.add_argument("--play", type=float, default=6, help="seconds to play (default 6)")
    parser.add_argument("--rate", type=int, default=48000, help="the capture's AudioContext rate (default 48000)")
    parser.add_argument("--ready-timeout", type=float, default=30, help="seconds to wait for the page to be ready")
    parser.add_argument("--screenshot", help="where to write a PNG of the page after playing")
    arguments = parser.parse_args()

    with open(os.path.join(gapless.PAGE, "capture.js")) as f:
        capture = f.read()
    report = {"url": arguments.url, "live": arguments.live}
    browser = None
    try:
        browser = gapless.Chromium()
        report["chromium"] = browser.version
        browser.open(arguments.url)
        deadline = time.monotonic() + arguments.ready_timeout
        while True:
            player = browser.evaluate("window.keyframePlayer ? JSON.parse(JSON.stringify(window.keyframePlayer)) : null")
            state = player and player.get("state")
            if state == "failed" or (state == "ready" and (player.get("live") or not arguments.live)):
                break
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        report["player"] = player
        report["readyAfter"] = round(arguments.ready_timeout - (deadline - time.monotonic()), 3)
        if player is not None and player.get("state") == "ready" and (player.get("live") or not arguments.live):
            listened = browser.evaluate(LISTEN % {"rate": arguments.rate, "capture": json.dumps(capture),
                                                  "milliseconds": int(arguments.play * 1000)})
            report.update(listened)
            report["playerAfter"] = browser.evaluate("JSON.parse(JSON.stringify(window.keyframePlayer))")
        report["page"] = browser.evaluate(page.FACTS)
        report["nowPlaying"] = browser.evaluate(NOW_PLAYING)
        # Each chapter button, clicked in turn: where the element was sent.
        report["page"]["chapterSeeks"] = browser.evaluate(CHAPTER_SEEKS)
        if arguments.screenshot:
            shot = browser.call("Page.captureScreenshot", format="png")
            data = base64.b64decode(shot["data"])
            with open(arguments.screenshot, "wb") as f:
                f.write(data)
            report["screenshot"] = {"path": os.path.abspath(arguments.screenshot), "bytes": len(data)}
    finally:
        if browser is not None:
            browser.close()
    json.dump(report, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
