internal import MediaCore

/// The player page an origin answers `/` with: an `<audio>` element fed by a small Media Source
/// Extensions loader of ours (Debian has no hls.js), for a package (VOD) and for a live
/// rendition (blocking playlist reload), falling back to the browser's own HLS where MSE is
/// missing.
///
/// Gapless from our own signals: the init segment's edit list moves the encoder's priming
/// before 0, where the source buffer's `appendWindowStart` (0) trims it; a finished playlist's
/// `EXTINF` sum is the priming plus the valid length (the last sample's `trun` duration ends
/// there), so that sum in the track's timescale less the edit's media time is the exact valid
/// length, which becomes `appendWindowEnd`. Chromium trims a frame at the window by how far the
/// frame's own end crosses it, so the loader gives the last sample its whole frame back before
/// appending it, and the padding is trimmed too. The page is plain HTML: labelled controls
/// (`aria-labelledby`: `<label for>` cannot name an `<audio>`, which is not labelable), a
/// chapter list of buttons (from `chapters.vtt` beside the playlist, when there is one), no
/// autoplay, and for a live stream the latency behind live announced politely (`aria-live`).
///
/// The page names what it plays from the init segment's iTunes items (`moov/udta/meta/ilst`,
/// which packaging copies from the input): `©nam` is the document's title, the heading and the
/// audio's name, `©ART` (else `aART`) the artist under it, and the first `covr` picture (type 13
/// JPEG, 14 PNG) an `<img>` from a Blob URL of that MIME type; without a title, the playlist's
/// file name. The boxes are read bounds-checked (a size of 1 is a largesize, 0 runs to the
/// parent's end, one that does not fit ends the list), text goes in by `textContent`, and a
/// damaged item list leaves the name to the file. Beside it, the bitrate of the rendition
/// playing: a ladder variant's `BANDWIDTH` and `AVERAGE-BANDWIDTH`, else a media playlist's
/// `EXT-X-BITRATE`, else its segments' bytes over their durations as they are fetched.
extension HLSOrigin {
    /// The playlist the page plays: the live playlist, else `master.m3u8` when the directory
    /// has one (a ladder), else ``playlistName``.
    var pagePlaylist: String {
        if publication == nil, FileSystemCalls.exists(directory.appending("master.m3u8")) { return "master.m3u8" }
        return playlistName
    }

    /// The page's HTML, playing `playlist` (a path relative to the page).
    public func playerPage(playing playlist: String? = nil) -> String {
        // A JavaScript string literal: quotes, backslashes and line terminators escaped, and `<`
        // so that no `</script>` ends the script.
        var source = ""
        for scalar in (playlist ?? pagePlaylist).unicodeScalars {
            switch scalar {
            case "\\": source += "\\\\"
            case "\"": source += "\\\""
            case "<": source += "\\u003C"
            case "\n": source += "\\n"
            case "\r": source += "\\r"
            case "\u{2028}": source += "\\u2028"
            case "\u{2029}": source += "\\u2029"
            default: source.unicodeScalars.append(scalar)
            }
        }
        return Self.pageTemplate.replacing("__PLAYLIST__", with: source)
    }

    /// `GET /`: the player page.
    func pageResponse() -> Response {
        let page = playerPage()
        return Response(status: 200, headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", cacheControl(.page)),
                                               ("ETag", Self.entityTag(text: page)), ("Content-Length", String(page.utf8.count))],
                        body: .text(page))
    }

    static let pageTemplate = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>KeyFrameKit player</title>
<style>
body { font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; color: #111; background: #fff; }
audio { width: 100%; }
button { font: inherit; padding: .25rem .5rem; }
button:focus-visible, audio:focus-visible { outline: 3px solid #1a5fb4; outline-offset: 2px; }
#chapters { padding-left: 1.5rem; }
.note { color: #444; }
#stream { display: flex; gap: 1rem; align-items: center; margin-bottom: 1rem; }
#stream h1 { margin: 0; overflow-wrap: anywhere; }
#stream p { margin: .25rem 0 0; overflow-wrap: anywhere; }
#cover { width: 8rem; height: 8rem; object-fit: contain; flex: none; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
</style>
</head>
<body>
<main>
<header id="stream">
<img id="cover" alt="" hidden>
<div>
<h1 id="stream-title">KeyFrameKit player</h1>
<p id="stream-artist" hidden></p>
<p id="bitrate" class="note">Bitrate: —</p>
</div>
</header>
<span id="player-label" class="visually-hidden"></span>
<audio id="player" controls preload="none" aria-labelledby="player-label"></audio>
<p id="latency" class="note" aria-live="polite" hidden></p>
<section id="chapters-section" aria-labelledby="chapters-heading" hidden>
<h2 id="chapters-heading">Chapters</h2>
<ol id="chapters"></ol>
</section>
<p id="status" class="note" role="status" aria-live="polite"></p>
</main>
<script>
"use strict";
const playlistPath = "__PLAYLIST__";
const audio = document.getElementById("player");
const statusLine = document.getElementById("status");
const latencyLine = document.getElementById("latency");
let mediaSource = null;
const report = window.keyframePlayer = {
  state: "loading", playlist: null, appended: 0, validLength: null, live: false, error: null,
  name: null, title: null, artist: null, cover: null, rendition: null, bitrate: null,
};
function say(text) { statusLine.textContent = text; }

// An attribute of a tag line (`NAME=value` or `NAME="value"`), its name whole: BANDWIDTH is not
// found in AVERAGE-BANDWIDTH.
function attribute(line, name) {
  const match = new RegExp('(?:^|[:,])' + name + '=("([^"]*)"|[^,]*)').exec(line);
  return match ? (match[2] !== undefined ? match[2] : match[1]) : null;
}

function parsePlaylist(text, base) {
  const result = { variants: [], segments: [], map: null, ended: false, sequence: 0, target: 6, canBlock: false, codecs: null };
  let duration = null, date = null, bitrate = null;
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line.startsWith("#EXT-X-STREAM-INF:")) {
      const uri = (lines[++i] || "").trim();
      result.variants.push({ uri: new URL(uri, base).href, bandwidth: +(attribute(line, "BANDWIDTH") || 0),
                             averageBandwidth: +(attribute(line, "AVERAGE-BANDWIDTH") || 0) || null, codecs: attribute(line, "CODECS") });
    } else if (line.startsWith("#EXT-X-MAP:")) { result.map = new URL(attribute(line, "URI"), base).href; }
    // Kilobits per second, for every segment up to the next EXT-X-BITRATE (RFC 8216bis 4.4.4.8).
    else if (line.startsWith("#EXT-X-BITRATE:")) { bitrate = +line.slice(15) > 0 ? +line.slice(15) * 1000 : null; }
    else if (line.startsWith("#EXT-X-MEDIA-SEQUENCE:")) { result.sequence = +line.slice(22); }
    else if (line.startsWith("#EXT-X-TARGETDURATION:")) { result.target = +line.slice(22); }
    else if (line.startsWith("#EXT-X-SERVER-CONTROL:")) { result.canBlock = attribute(line, "CAN-BLOCK-RELOAD") === "YES"; }
    else if (line.startsWith("#EXT-X-PROGRAM-DATE-TIME:")) { date = Date.parse(line.slice(25)); }
    else if (line.startsWith("#EXTINF:")) { duration = parseFloat(line.slice(8)); }
    else if (line === "#EXT-X-ENDLIST") { result.ended = true; }
    else if (line && !line.startsWith("#") && duration !== null) {
      result.segments.push({ uri: new URL(line, base).href, duration, date, bitrate, sequence: result.sequence + result.segments.length });
      duration = null; date = null;
    }
  }
  return result;
}

// A fetch that tries again, three times, half a second apart, after a network error or a
// server error (a busy origin's 503); a 4xx is final.
async function fetchOK(url, init) {
  for (let attempt = 0; ; attempt++) {
    let response = null;
    try { response = await fetch(url, init); } catch (error) { if (attempt >= 3) throw error; }
    if (response && response.ok) return response;
    if (response && (response.status < 500 || attempt >= 3)) throw new Error(url + ": HTTP " + response.status);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

// The seconds buffered ahead of the playhead, and what lies behind it is given back, so a long
// package never fills the browser's buffer (Chromium keeps about 12 MB of audio).
const ahead = 60, behind = 10;
function bufferedAhead(buffer) {
  const ranges = buffer.buffered;
  return ranges.length ? ranges.end(ranges.length - 1) - audio.currentTime : 0;
}
async function makeRoom(buffer) {
  while (bufferedAhead(buffer) > ahead) await new Promise((resolve) => setTimeout(resolve, 500));
  const ranges = buffer.buffered;
  if (ranges.length && audio.currentTime - ranges.start(0) > 2 * behind) {
    await new Promise((resolve) => {
      buffer.addEventListener("updateend", resolve, { once: true });
      buffer.remove(ranges.start(0), audio.currentTime - behind);
    });
  }
}

// Playback stalled in a hole (a live window that moved on while paused): on to the next range.
function skipHole(buffer) {
  const ranges = buffer.buffered, now = audio.currentTime;
  for (let i = 0; i < ranges.length; i++) {
    if (now >= ranges.start(i) && now < ranges.end(i) - 0.1) return;
    if (ranges.start(i) > now) { audio.currentTime = ranges.start(i); return; }
  }
}

// The base media decode time of a segment's first fragment (tfdt), in its track's timescale.
function decodeTimeOf(segment) {
  const view = new DataView(segment.buffer, segment.byteOffset, segment.byteLength);
  const moof = boxes(segment, 0, segment.length).find((box) => box[0] === "moof");
  const traf = moof && boxes(segment, moof[1], moof[2]).find((box) => box[0] === "traf");
  const tfdt = traf && boxes(segment, traf[1], traf[2]).find((box) => box[0] === "tfdt");
  if (!tfdt) return 0;
  return view.getUint8(tfdt[1]) === 1 ? Number(view.getBigUint64(tfdt[1] + 4)) : view.getUint32(tfdt[1] + 4);
}
const fetchText = async (url) => (await fetchOK(url, { cache: "no-cache" })).text();
const fetchBytes = async (url) => new Uint8Array(await (await fetchOK(url)).arrayBuffer());

function append(buffer, bytes) {
  return new Promise((resolve, reject) => {
    buffer.addEventListener("updateend", resolve, { once: true });
    buffer.addEventListener("error", () => reject(new Error("the browser refused a segment")), { once: true });
    buffer.appendBuffer(bytes);
  });
}

// The boxes of `data` between `start` and `end`: [type, payload start, box end]. A size of 1
// is a 64-bit largesize after the type, 0 a box to the end of its parent; a box that does not
// fit its parent (or its own header) ends the list there, so that a damaged or hostile file
// can neither make a reader leave its bounds nor loop.
function boxes(data, start, end) {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const found = [];
  end = Math.min(end, data.length);
  while (start + 8 <= end) {
    let size = view.getUint32(start), header = 8;
    if (size === 1) {
      if (start + 16 > end) break;
      const large = view.getBigUint64(start + 8);
      if (large > BigInt(end - start)) break;
      size = Number(large);
      header = 16;
    } else if (size === 0) {
      size = end - start;
    }
    if (size < header || start + size > end) break;
    found.push([String.fromCharCode(...data.subarray(start + 4, start + 8)), start + header, start + size]);
    start += size;
  }
  return found;
}

// The stream's tags in an init segment, from its iTunes item list (moov/udta/meta/ilst): the
// title (©nam), the artist (©ART, else aART) and the first cover (covr: a data atom of type 13,
// JPEG, or 14, PNG; an untyped one by its signature). Every box is bounds-checked (boxes), every
// read is inside the data atom it belongs to, and anything else wrong ends the reading with what
// was found: the tags never stop the stream from playing.
function tagsOf(init) {
  const tags = { title: null, artist: null, albumArtist: null, cover: null };
  try {
    const view = new DataView(init.buffer, init.byteOffset, init.byteLength);
    const child = (box, type) => box && boxes(init, box[1], box[2]).find((b) => b[0] === type);
    const meta = child(child(child([null, 0, init.length], "moov"), "udta"), "meta");
    if (!meta) return tags;
    // iTunes's meta is a full box (version and flags before its hdlr); QuickTime's is not.
    const bare = meta[1] + 8 <= meta[2] && String.fromCharCode(...init.subarray(meta[1] + 4, meta[1] + 8)) === "hdlr";
    const ilst = boxes(init, bare ? meta[1] : meta[1] + 4, meta[2]).find((b) => b[0] === "ilst");
    if (!ilst) return tags;
    const text = (bytes, kind) => {
      const value = new TextDecoder(kind === 2 ? "utf-16be" : "utf-8").decode(bytes)
        .replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ").trim().slice(0, 500);
      return value || null;
    };
    for (const item of boxes(init, ilst[1], ilst[2])) {
      const data = boxes(init, item[1], item[2]).find((b) => b[0] === "data");
      // The data atom: a version byte, a 24-bit type, a 4-byte locale, then the value.
      if (!data || data[1] + 8 > data[2]) continue;
      const kind = view.getUint32(data[1]) & 0xffffff;
      const value = init.subarray(data[1] + 8, data[2]);
      if (item[0] === "\u00a9nam" && tags.title === null && (kind === 1 || kind === 2)) tags.title = text(value, kind);
      else if (item[0] === "\u00a9ART" && tags.artist === null && (kind === 1 || kind === 2)) tags.artist = text(value, kind);
      else if (item[0] === "aART" && tags.albumArtist === null && (kind === 1 || kind === 2)) tags.albumArtist = text(value, kind);
      else if (item[0] === "covr" && tags.cover === null && value.length > 0) {
        const png = value.length >= 8 && value[0] === 0x89 && value[1] === 0x50 && value[2] === 0x4e && value[3] === 0x47;
        const jpeg = value.length >= 3 && value[0] === 0xff && value[1] === 0xd8 && value[2] === 0xff;
        const type = kind === 13 ? "image/jpeg" : kind === 14 ? "image/png"
          : kind === 0 && png ? "image/png" : kind === 0 && jpeg ? "image/jpeg" : null;
        if (type) tags.cover = { type, bytes: value };
      }
    }
  } catch (error) {
    tags.error = String(error);
  }
  tags.artist = tags.artist || tags.albumArtist;
  return tags;
}

// The stream's name on the page, its artist and its cover: from the init segment's tags, else
// the playlist's file name. Text is set as text (textContent), never parsed as markup; the
// cover is a Blob URL of the picture's bytes, with the MIME type of its kind.
const playlistName = (() => {
  try { return decodeURIComponent(new URL(playlistPath, location.href).pathname.split("/").pop()) || playlistPath; } catch { return playlistPath; }
})();
let coverURL = null;
function showStream(tags) {
  const title = tags.title || playlistName;
  report.name = title;
  report.title = tags.title;
  report.artist = tags.artist;
  if (tags.error) report.tagsError = tags.error;
  document.title = title;
  document.getElementById("stream-title").textContent = title;
  const artistLine = document.getElementById("stream-artist");
  artistLine.textContent = tags.artist || "";
  artistLine.hidden = !tags.artist;
  document.getElementById("player-label").textContent = tags.artist ? title + " \u2014 " + tags.artist : title;
  const image = document.getElementById("cover");
  if (coverURL) { URL.revokeObjectURL(coverURL); coverURL = null; }
  image.hidden = true;
  image.removeAttribute("src");
  report.cover = null;
  if (!tags.cover) return;
  const cover = tags.cover;
  const url = coverURL = URL.createObjectURL(new Blob([cover.bytes], { type: cover.type }));
  image.onload = () => {
    if (url !== coverURL) return;
    image.hidden = false;
    report.cover = { type: cover.type, bytes: cover.bytes.length, width: image.naturalWidth, height: image.naturalHeight };
  };
  image.onerror = () => {
    if (url !== coverURL) return;
    report.cover = { type: cover.type, bytes: cover.bytes.length, error: "the browser cannot show the cover" };
  };
  image.alt = "Cover art";
  image.src = url;
}

// The bitrate of the rendition playing: a ladder's, the variant's BANDWIDTH (its peak) and
// AVERAGE-BANDWIDTH from the master playlist; a single playlist's, its EXT-X-BITRATE, else the
// segments fetched so far (their bytes over their EXTINFs); "—" while nothing says it.
const bitrateLine = document.getElementById("bitrate");
const measured = { bytes: 0, seconds: 0 };
function kilobits(bits) { return (bits / 1000).toFixed(bits < 100000 ? 1 : 0) + " kb/s"; }
function showBitrate(bitrate) {
  report.bitrate = bitrate;
  if (!bitrate || !(bitrate.bitsPerSecond > 0)) { bitrateLine.textContent = "Bitrate: \u2014"; return; }
  let text = "Bitrate: " + kilobits(bitrate.bitsPerSecond);
  if (bitrate.source === "BANDWIDTH") text += " peak" + (bitrate.average ? ", " + kilobits(bitrate.average) + " average" : "");
  else if (bitrate.source === "segments") text += " (measured)";
  bitrateLine.textContent = text;
}
// The rendition the page plays from a master playlist (called again when it switches).
function useRendition(variant) {
  report.rendition = { uri: variant.uri, bandwidth: variant.bandwidth || null, averageBandwidth: variant.averageBandwidth || null };
  showBitrate(variant.bandwidth > 0
    ? { bitsPerSecond: variant.bandwidth, average: variant.averageBandwidth, source: "BANDWIDTH" }
    : null);
}
// A segment fetched from a single media playlist: its bitrate shown.
function measureSegment(segment, bytes) {
  if (report.rendition && report.rendition.bandwidth) return;
  if (segment.bitrate) { showBitrate({ bitsPerSecond: segment.bitrate, source: "EXT-X-BITRATE" }); return; }
  if (!(segment.duration > 0)) return;
  measured.bytes += bytes.length;
  measured.seconds += segment.duration;
  showBitrate({ bitsPerSecond: Math.round(measured.bytes * 8 / measured.seconds), source: "segments" });
}

// The last segment with its last sample lasting a whole frame again (the samples before it
// give its length). The package ends that sample at the valid length; Chromium's append window
// trims a frame by how far the frame's own end crosses the window, so the frame gets its whole
// length back and the window trims the padding.
function wholeLastFrame(segment) {
  const view = new DataView(segment.buffer, segment.byteOffset, segment.byteLength);
  const moof = boxes(segment, 0, segment.length).filter((box) => box[0] === "moof").pop();
  const traf = moof && boxes(segment, moof[1], moof[2]).find((box) => box[0] === "traf");
  const trun = traf && boxes(segment, traf[1], traf[2]).find((box) => box[0] === "trun");
  if (!trun) return segment;
  const flags = view.getUint32(trun[1]) & 0xffffff, count = view.getUint32(trun[1] + 4);
  if (!(flags & 0x100) || count < 1) return segment;
  const first = trun[1] + 8 + (flags & 1 ? 4 : 0) + (flags & 4 ? 4 : 0);
  const stride = [0x100, 0x200, 0x400, 0x800].filter((bit) => flags & bit).length * 4;
  const last = first + stride * (count - 1);
  // The frame: the samples before it, or AAC's 1024 when it is alone in its fragment.
  const frame = count > 1 ? view.getUint32(first) : 1024;
  if (last + 4 <= trun[2]) view.setUint32(last, Math.max(view.getUint32(last), frame));
  return segment;
}

// The init segment's track timescale (mdhd) and the media time its edit list starts at (elst:
// the encoder's priming), or null when it has no mdhd.
function editOf(init) {
  try { return editIn(init); } catch { return null; }
}
function editIn(init) {
  const view = new DataView(init.buffer, init.byteOffset, init.byteLength);
  const child = (box, type) => box && boxes(init, box[1], box[2]).find((b) => b[0] === type);
  const trak = child(child([null, 0, init.length], "moov"), "trak");
  const mdhd = child(child(trak, "mdia"), "mdhd");
  if (!mdhd) return null;
  const timescale = view.getUint32(mdhd[1] + (view.getUint8(mdhd[1]) === 1 ? 20 : 12));
  const elst = child(child(trak, "edts"), "elst");
  let mediaTime = 0;
  if (elst && view.getUint32(elst[1] + 4) > 0) {
    mediaTime = view.getUint8(elst[1]) === 1 ? Number(view.getBigInt64(elst[1] + 16)) : view.getInt32(elst[1] + 12);
  }
  return timescale > 0 ? { timescale, mediaTime: Math.max(0, mediaTime) } : null;
}

function clock(seconds) {
  const whole = Math.floor(seconds), minutes = Math.floor(whole / 60);
  return minutes + ":" + String(whole % 60).padStart(2, "0");
}

async function loadChapters(base) {
  let text;
  try { text = await fetchText(new URL("chapters.vtt", base).href); } catch { return; }
  const list = document.getElementById("chapters");
  const cue = /(\d+):(\d\d):(\d\d)\.(\d{3})\s+-->\s+\S+[^\n]*\n([^\n]+)/g;
  let match;
  while ((match = cue.exec(text)) !== null) {
    const start = +match[1] * 3600 + +match[2] * 60 + +match[3] + +match[4] / 1000;
    const item = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = match[5].trim() + " (" + clock(start) + ")";
    button.addEventListener("click", () => { audio.currentTime = start; });
    item.appendChild(button);
    list.appendChild(item);
  }
  if (list.children.length) document.getElementById("chapters-section").hidden = false;
}

async function start() {
  showStream({});
  let url = new URL(playlistPath, location.href).href;
  let playlist = parsePlaylist(await fetchText(url), url);
  let codecs = "mp4a.40.2";
  if (playlist.variants.length) {
    const best = playlist.variants.sort((a, b) => b.bandwidth - a.bandwidth)[0];
    url = best.uri;
    codecs = best.codecs || codecs;
    useRendition(best);
    playlist = parsePlaylist(await fetchText(url), url);
  }
  report.playlist = url;
  loadChapters(url);
  const type = 'audio/mp4; codecs="' + codecs + '"';
  if (!window.MediaSource || !MediaSource.isTypeSupported(type) || !playlist.map) {
    audio.src = url;
    report.state = "native";
    say("Playing with the browser's own HLS.");
    // The tags still name the stream (a failed fetch leaves the playlist's name).
    if (playlist.map) fetchBytes(playlist.map).then((init) => showStream(tagsOf(init)), () => {});
    return;
  }
  const media = mediaSource = new MediaSource();
  audio.src = URL.createObjectURL(media);
  await new Promise((resolve) => media.addEventListener("sourceopen", resolve, { once: true }));
  const buffer = media.addSourceBuffer(type);
  const init = await fetchBytes(playlist.map);
  showStream(tagsOf(init));
  await append(buffer, init);
  audio.addEventListener("waiting", () => skipHole(buffer));
  if (playlist.ended) {
    // Gapless: the priming lies before 0 (the edit list), the padding after the valid length.
    // The EXTINFs add up to the priming plus the valid length, each exact to the frame: summed
    // in the track's timescale (rounded, so the microseconds they are written to do not add
    // up), from the first listed segment's decode time (not 0 when a window dropped the first
    // segments), less the edit's media time, they give where the stream ends, to the frame.
    const edit = editOf(init);
    const segments = playlist.segments;
    const firstBytes = segments.length ? await fetchBytes(segments[0].uri) : new Uint8Array();
    if (segments.length) measureSegment(segments[0], firstBytes);
    const start = edit ? decodeTimeOf(firstBytes) : 0;
    const end = edit
      ? (start + segments.reduce((sum, segment) => sum + Math.round(segment.duration * edit.timescale), 0) - edit.mediaTime) / edit.timescale
      : segments.reduce((sum, segment) => sum + segment.duration, 0);
    report.validLength = edit ? end - Math.max(0, start - edit.mediaTime) / edit.timescale : end;
    buffer.appendWindowEnd = end;
    media.duration = end;
    for (const [index, segment] of segments.entries()) {
      await makeRoom(buffer);
      const bytes = index === 0 ? firstBytes : await fetchBytes(segment.uri);
      if (index > 0) measureSegment(segment, bytes);
      await append(buffer, index === segments.length - 1 ? wholeLastFrame(bytes) : bytes);
      report.appended += 1;
      if (index === 0 && buffer.buffered.length) {
        // Ready with the first segment: the rest follows as it plays.
        audio.currentTime = buffer.buffered.start(0);
        report.state = "ready";
        say("Ready: " + clock(report.validLength) + ".");
      }
    }
    media.endOfStream();
    report.state = "ready";
    return;
  }
  // Live: from three segments behind the end, then each new one as the playlist announces it
  // (a blocking reload where the server offers it).
  report.live = true;
  let next = playlist.segments.length ? playlist.segments[Math.max(0, playlist.segments.length - 3)].sequence : playlist.sequence;
  let first = true, lastDate = null, lastEnd = 0, lastSpoken = 0, lastSaid = null;
  for (;;) {
    // A window that moved past the next segment (a long pause): on from its first.
    if (playlist.segments.length && playlist.segments[0].sequence > next) next = playlist.segments[0].sequence;
    for (const segment of playlist.segments) {
      if (segment.sequence < next) continue;
      await makeRoom(buffer);
      const bytes = await fetchBytes(segment.uri);
      measureSegment(segment, bytes);
      await append(buffer, bytes);
      skipHole(buffer);
      report.appended += 1;
      next = segment.sequence + 1;
      if (segment.date) { lastDate = segment.date + segment.duration * 1000; lastEnd = buffer.buffered.end(buffer.buffered.length - 1); }
    }
    // Ready once the segments it starts from are buffered (not after the first of them).
    if (first && buffer.buffered.length) { audio.currentTime = buffer.buffered.start(0); first = false; report.state = "ready"; say("Live."); }
    if (playlist.ended) { media.endOfStream(); say("The stream has ended."); return; }
    if (lastDate !== null && Date.now() - lastSpoken > 5000) {
      const behind = (Date.now() - lastDate) / 1000 + (lastEnd - audio.currentTime);
      report.latency = behind;
      // Said again (politely) only when it moved by a second or half a minute has passed, so
      // a screen reader is not talked over every five seconds.
      if (lastSaid === null || Math.abs(behind - lastSaid) >= 1 || Date.now() - lastSpoken > 30000) {
        latencyLine.hidden = false;
        latencyLine.textContent = behind.toFixed(1) + " s behind live";
        lastSaid = behind;
        lastSpoken = Date.now();
      }
    }
    if (playlist.canBlock) {
      playlist = parsePlaylist(await fetchText(url + (url.includes("?") ? "&" : "?") + "_HLS_msn=" + next), url);
    } else {
      await new Promise((resolve) => setTimeout(resolve, playlist.target * 500));
      playlist = parsePlaylist(await fetchText(url), url);
    }
  }
}

start().catch((error) => {
  report.state = "failed";
  report.error = String(error);
  // A live stream that stops mid-way (its server gone): what is buffered still plays, to its
  // end, instead of stalling there.
  const playing = report.live && report.appended > 0;
  if (playing && mediaSource && mediaSource.readyState === "open") { try { mediaSource.endOfStream(); } catch {} }
  say((playing ? "The stream stopped: " : "Cannot play: ") + error.message);
});
</script>
</body>
</html>
"""#
}
