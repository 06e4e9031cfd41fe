#!/usr/bin/env bash
# Runs the programs of Examples/ (`make examples`) on inputs ffmpeg makes, then checks each output
# with ffprobe: no warning (`-v warning` prints nothing) and the expected streams and duration.
#
#   scripts/examples.sh BIN_DIR [OUT_DIR]        (OUT_DIR defaults to examples-out)
#
#   record-m4a  3 s from the ALSA `file` plugin (a capture device that reads a raw tone, defined
#               in OUT_DIR/examples.conf, loaded in-process) → record.m4a: AAC, exactly 3.000 s
#   decode-mp4  input.mp4 (H.264 + AAC, 2 s) → decoded.wav: s16le, exactly 2.000 s (edit list)
#   mux-h264    audio.aac (ADTS) + video.h264 (Annex-B, 25 fps) → muxed.mp4: aac + h264, 50 frames
#   edit-m4a    book.m4a (3 s) split at 1.25 s, parts titled, joined → book.m4b: 2 chapters, 3.000 s,
#               the same samples as book.m4a
#   tee-capture 3 s from the `file` plugin, a LiveEncoding (one encoder, a tee) → tee.m4a (exactly 3.000 s), a live
#               HLS rendition in tee-live/ and a callback; file and rendition decode to the same samples
#   package-hls book.m4a → book-hls/ by stream copy with a DASH manifest, validated, with
#               MediaStreaming and MediaValidation alone (the binary links no ALSA, libavcodec, libebur128 or libFLAC)
#   serve-vapor 3 s from the `file` plugin as live low-latency HLS in live/, served by a Vapor app on
#               loopback: the ended playlist with its parts, HEAD and a byte range of a segment,
#               and ffprobe reading the stream over HTTP (3 s, every packet)
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 BIN_DIR [OUT_DIR]" >&2
    exit 2
fi
bin=$(cd "$1" && pwd)
out=${2:-examples-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)   # absolute: the ALSA configuration names the raw file by path
cd "$out"
rm -f ./*.out ./*.raw ./*.conf ./*.mp4 ./*.m4a ./*.m4b ./*.aac ./*.h264 ./*.wav ./*.log
rm -rf live tee-live book-hls

fail() { echo "examples: $*" >&2; exit 1; }
ff() { ffmpeg -hide_banner -nostdin -loglevel error -y "$@"; }

# ffprobe FILE ENTRIES: prints the entries (compact, one stream per line); fails on any warning.
probe() {
    local file=$1 entries=$2
    ffprobe -v warning -show_entries "$entries" -of compact "$file" 2>ffprobe.log || fail "ffprobe cannot read $file"
    [ ! -s ffprobe.log ] || fail "ffprobe warns about $file: $(cat ffprobe.log)"
}
# expect NAME ACTUAL EXPECTED
expect() { [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"; }

echo "== inputs (ffmpeg) in ${out#"$OLDPWD"/}"
ff -f lavfi -i "sine=frequency=440:sample_rate=44100:duration=4" -ac 2 -f s16le tone.raw
ff -f lavfi -i "testsrc=size=320x240:rate=25:duration=2" -f lavfi -i "sine=frequency=440:sample_rate=44100:duration=2" \
   -c:v libx264 -pix_fmt yuv420p -c:a aac -ac 2 -shortest input.mp4
ff -f lavfi -i "sine=frequency=660:sample_rate=44100:duration=2" -ac 2 -c:a aac -f adts audio.aac
ff -f lavfi -i "testsrc=size=320x240:rate=25:duration=2" -c:v libx264 -pix_fmt yuv420p -f h264 video.h264
ff -f lavfi -i "sine=frequency=330:sample_rate=44100:duration=3" -ac 2 -c:a aac -aac_pns 0 book.m4a
# ALSA's `file` plugin as a capture device: it reads tone.raw in the format opened (no clock).
printf 'pcm.examples { type file; slave.pcm { type null }; file "/dev/null"; infile "%s"; format "raw" }\n' \
    "$out/tone.raw" > examples.conf

echo "== record-m4a examples record.m4a examples.conf"
"$bin/record-m4a" examples record.m4a examples.conf
streams=$(probe record.m4a stream=codec_type,codec_name,sample_rate,channels,duration)
echo "$streams"
expect "record.m4a streams" "$streams" "stream|codec_name=aac|codec_type=audio|sample_rate=44100|channels=2|duration=3.000000"

echo "== decode-mp4 input.mp4 decoded.wav"
"$bin/decode-mp4" input.mp4 decoded.wav
streams=$(probe decoded.wav stream=codec_name,sample_rate,channels,duration_ts)
echo "$streams"
expect "decoded.wav streams" "$streams" "stream|codec_name=pcm_s16le|sample_rate=44100|channels=2|duration_ts=88200"

echo "== mux-h264 audio.aac video.h264 25 muxed.mp4"
"$bin/mux-h264" audio.aac video.h264 25 muxed.mp4
streams=$(probe muxed.mp4 stream=codec_type,codec_name,nb_frames | sort)
echo "$streams"
expect "muxed.mp4 streams" "$streams" "$(printf '%s\n' \
    "stream|codec_name=aac|codec_type=audio|nb_frames=$(ffprobe -v error -count_packets -show_entries stream=nb_read_packets -of csv=p=0 audio.aac)" \
    "stream|codec_name=h264|codec_type=video|nb_frames=50")"

echo "== edit-m4a book.m4a 1.25 book.m4b"
"$bin/edit-m4a" book.m4a 1.25 book.m4b
# -v error: ffprobe 5.1 says "Unsupported codec with id 98314" for a chapter text track whenever
# it opens the streams, FFmpeg's own M4A chapters included (the InputsTried article).
chapters=$(ffprobe -v error -show_entries chapter=start_time:chapter_tags=title -of csv=p=0 book.m4b)
echo "$chapters"
expect "book.m4b chapters" "$chapters" "$(printf '%s\n' "0.000000,Part 1" "1.250000,Part 2")"
format=$(ffprobe -v error -show_entries format=duration:format_tags=major_brand -of compact book.m4b)
expect "book.m4b format" "$format" "format|duration=3.000000|tag:major_brand=M4B "
"$bin/decode-mp4" book.m4a book-original.wav >/dev/null
"$bin/decode-mp4" book.m4b book-joined.wav >/dev/null
cmp -s book-original.wav book-joined.wav || fail "book.m4b does not decode to book.m4a's samples"

echo "== tee-capture examples tee.m4a tee-live examples.conf"
rm -rf tee-live
"$bin/tee-capture" examples tee.m4a tee-live examples.conf | tee tee-capture.out
streams=$(probe tee.m4a stream=codec_type,codec_name,sample_rate,channels,duration)
expect "tee.m4a streams" "$streams" "stream|codec_name=aac|codec_type=audio|sample_rate=44100|channels=2|duration=3.000000"
grep -q EXT-X-ENDLIST tee-live/index.m3u8 || fail "tee-capture: tee-live/index.m3u8 is not an ended playlist"
grep -q "131 AAC packets each, 131 seen by the callback; 132300 frames" tee-capture.out \
    || fail "tee-capture: the callback did not see every packet: $(cat tee-capture.out)"
"$bin/keyframe" decode tee.m4a -o tee-file.wav >/dev/null
"$bin/keyframe" decode tee-live/index.m3u8 -o tee-hls.wav >/dev/null
expect "tee-file.wav frames" "$(ffprobe -v error -show_entries stream=duration_ts -of csv=p=0 tee-file.wav)" "132300"
cmp -s tee-file.wav tee-hls.wav || fail "the M4A and the HLS rendition of one capture decode to different samples"

echo "== package-hls book.m4a book-hls (MediaStreaming and MediaValidation alone)"
rm -rf book-hls
"$bin/package-hls" book.m4a book-hls
libraries=$(ldd "$bin/package-hls")
for library in libasound libavcodec libebur128 libFLAC; do
    ! grep -q "$library" <<<"$libraries" || fail "package-hls links $library: MediaStreaming must not"
done
format=$(probe book-hls/index.m3u8 format=duration)
expect "book-hls duration" "$format" "format|duration=3.023220"
[ -f book-hls/manifest.mpd ] || fail "package-hls wrote no manifest.mpd"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "== serve-vapor examples live $port examples.conf"
"$bin/serve-vapor" examples live "$port" examples.conf >serve-vapor.log 2>&1 &
server=$!
trap 'kill -INT $server 2>/dev/null || true' EXIT
# http URL [RANGE]: prints the status, the Content-Length and Content-Range, and the body's size,
# for a GET (or a HEAD with RANGE "HEAD").
http() {
    python3 - "$@" <<'PY'
import sys, urllib.request, urllib.error
url, extra = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "")
request = urllib.request.Request(url, method="HEAD" if extra == "HEAD" else "GET")
if extra not in ("", "HEAD"): request.add_header("Range", extra)
try:
    with urllib.request.urlopen(request, timeout=10) as r:
        body = r.read()
        print(r.status, r.headers.get("Content-Length"), r.headers.get("Content-Range"), len(body))
        if url.endswith(".m3u8"): sys.stderr.write(body.decode())
except (urllib.error.URLError, ConnectionError) as error:
    print("error", getattr(error, "code", error))
PY
}
base="http://127.0.0.1:$port/live"
for _ in $(seq 100); do
    http "$base/index.m3u8" 2>playlist.log | grep -q '^200' && grep -q EXT-X-ENDLIST playlist.log && break
    sleep 0.1
done
grep -q EXT-X-ENDLIST playlist.log || fail "serve-vapor: no ended playlist at $base/index.m3u8: $(cat serve-vapor.log)"
grep -q '#EXT-X-PART:' playlist.log || fail "serve-vapor: the playlist lists no parts"
size=$(stat -c %s live/segment-00001.m4s)
expect "HEAD segment-00001.m4s" "$(http "$base/segment-00001.m4s" HEAD)" "200 $size None 0"
expect "GET segment-00001.m4s bytes=4-11" "$(http "$base/segment-00001.m4s" bytes=4-11)" "206 8 bytes 4-11/$size 8"
expect "GET ../tone.raw" "$(http "$base/../tone.raw")" "error 404"
format=$(probe "$base/index.m3u8" format=duration)
echo "$format"
# The priming and the 3 s, to the sample: the last sample ends at the valid length (issue 23).
expect "the served stream" "$format" "format|duration=3.023220"
kill -INT $server
wait $server || fail "serve-vapor did not end cleanly on SIGINT: $(cat serve-vapor.log)"
trap - EXIT

echo "== examples: 7 passed (outputs in ${out#"$OLDPWD"/})"
