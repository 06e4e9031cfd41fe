#!/usr/bin/env python3
"""What headless Chromium's decodeAudioData gives for one audio file, against a reference.

    browser-decode.py FILE REFERENCE.raw --rate HZ --channels N

FILE is served on 127.0.0.1 with the page of scripts/browser/ (browser-gapless.py's server and
driver: `chromium --headless=new` over the DevTools protocol); an OfflineAudioContext at HZ
decodes it (`decodeAudioData`, which resamples to the context's rate: give the file's own).
REFERENCE.raw is interleaved little-endian s16 at HZ with N channels: the source's samples (for
a lossy codec, the source at the codec's rate). Prints one JSON object:

- "frames", "sampleRate", "channels": what Chromium decoded.
- "exact": whether its samples, as 16-bit integers, are the reference's.
- "error": Chromium's words when it cannot decode the file (then nothing else).
- "snr": {lag: dB} of the decode against the reference for lags -2..2 frames over the frames
  both hold (the decode shifted by the lag): a decode that starts at the source's first sample
  is best at lag 0.
"""

import argparse
import base64
import functools
import http.server
import importlib.util
import json
import math
import os
import struct
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("browser_gapless", os.path.join(HERE, "browser-gapless.py"))
gapless = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gapless)

DECODE = """(async () => {
  const data = await (await fetch(%(url)s)).arrayBuffer();
  const context = new OfflineAudioContext(%(channels)d, 1, %(rate)d);
  const buffer = await context.decodeAudioData(data);
  const planes = [];
  for (let c = 0; c < buffer.numberOfChannels; c++) {
    const samples = buffer.getChannelData(c);
    const whole = new Int16Array(samples.length);
    for (let i = 0; i < samples.length; i++) whole[i] = Math.max(-32768, Math.min(32767, Math.round(samples[i] * 32768)));
    const bytes = new Uint8Array(whole.buffer);
    let text = "";
    for (let i = 0; i < bytes.length; i += 32768) text += String.fromCharCode.apply(null, bytes.subarray(i, i + 32768));
    planes.push(btoa(text));
  }
  return { frames: buffer.length, sampleRate: buffer.sampleRate, channels: buffer.numberOfChannels, planes };
})()"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file")
    parser.add_argument("reference")
    parser.add_argument("--rate", type=int, required=True)
    parser.add_argument("--channels", type=int, required=True)
    arguments = parser.parse_args()

    directory, name = os.path.split(os.path.abspath(arguments.file))
    handler = functools.partial(gapless.Handler, package=directory, source="/nonexistent")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    browser = None
    try:
        browser = gapless.Chromium()
        browser.open(base + "/gapless.html")
        try:
            decoded = browser.evaluate(DECODE % {"url": json.dumps("/package/" + name), "channels": arguments.channels, "rate": arguments.rate})
        except RuntimeError as error:
            print(json.dumps({"error": str(error).rsplit("\n", 1)[-1]}))
            return
    finally:
        if browser:
            browser.close()
        server.shutdown()

    planes = [struct.unpack(f"<{len(raw) // 2}h", raw) for raw in (base64.b64decode(p) for p in decoded.pop("planes"))]
    with open(arguments.reference, "rb") as f:
        raw = f.read()
    interleaved = struct.unpack(f"<{len(raw) // 2}h", raw)
    channels = arguments.channels
    reference = [interleaved[c::channels] for c in range(channels)]
    decoded["exact"] = len(planes) == channels and all(list(planes[c]) == list(reference[c]) for c in range(channels))
    snr = {}
    for lag in range(-2, 3):
        signal = noise = 0.0
        for c in range(min(channels, len(planes))):
            x, y = reference[c], planes[c]
            count = min(len(x), len(y)) - 8
            for i in range(8, count):
                a, b = x[i], y[i + lag]
                signal += a * a
                noise += (a - b) * (a - b)
        snr[str(lag)] = 10 * math.log10(signal / max(noise, 1)) if signal > 0 else None
    decoded["snr"] = snr
    print(json.dumps(decoded))


if __name__ == "__main__":
    main()
