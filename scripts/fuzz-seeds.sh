#!/usr/bin/env bash
# Writes seed inputs for one fuzz target into a directory.
#
#   scripts/fuzz-seeds.sh adts|asc|esds|wav|mp4|h264|hevc|annexb|ics|ilst|chapters DIR
#
# adts: short ADTS files made with ffmpeg, plus the ADTS files of ../shared/corpus when it is there.
# asc:  AudioSpecificConfigs, from a list and from the esds boxes of the files below.
# esds: ES_Descriptors (the esds box payload after version/flags) from M4A files made with ffmpeg
#       and from ../shared/corpus, plus an Apple-style one with 4-byte size fields.
# wav:  0.05 s WAV files made with ffmpeg (5.1 and 96 kHz shorter, to stay under -max_len): every
#       PCM sample format, mono to 5.1, RF64, LIST metadata, a bext chunk, and the streaming
#       header ffmpeg writes to a pipe.
# h264: short H.264 Annex B streams made with ffmpeg's libx264 (under -max_len): CAVLC and CABAC,
#       B-frames with and without pyramid (pic_order_cnt_type 0 and 2), MBAFF, 4:4:4, 10-bit,
#       several slices, access unit delimiters, VUI timing and HRD; some without x264's SEI.
# hevc: the same with libx265: B-frames, open GOP, 10-bit, 4:4:4, slices, WPP, AUD, HRD.
# annexb: both sets, plus a few hand-made edge cases (empty units, zero runs, no start code).
# ilst: the ilst payloads of M4A files tagged by ffmpeg and by mutagen (text, numbers, freeform,
#       covers).
# chapters: the chpl payloads and chapter text samples of M4A files with chapters from ffmpeg
#       (ASCII and UTF-8 titles, 1 and 40 chapters); mp4 also gets such a file.
# ics:  raw data blocks (ADTS frames without their headers) of mono, stereo and 5.1 AAC made with
#       ffmpeg from a signal with clicks (short windows), 40 per file.
# sbr:  SBR frames (sbr_extension_data) from the tests' generator, committed under
#       Tests/AACBitstreamTests/Regressions/sbr.
# ps:   PS frames (SBR bs_extended_data holding ps_data) from the tests' generator, committed
#       under Tests/AACBitstreamTests/Regressions/ps.
# rdb:  the sampling index byte, then a raw data block, of AAC made with ffmpeg (mono, stereo, 5.1;
#       8 to 48 kHz; clicks for short windows; twoloop and fast coders; PNS, intensity, TNS on
#       and off), 20 per file.
# mpd:  the MPDs of ffmpeg's dash muxer (SegmentTimeline, $Number$ templates, SegmentList, audio +
#       video, low-latency), a hand-made one with the XML the reader skips or decodes (DOCTYPE,
#       comments, PIs, CDATA, references, prefixes), plus the .mpd files of ../shared/corpus.
# ts:   MPEG-TS with AAC made by ffmpeg's mpegts muxer (mono, stereo, tables on every PES packet,
#       one cut to an SRT message's 7 packets).
# playlist: a small fMP4 HLS package from ffmpeg, and hostile folders (a directory, a FIFO, a loop
#       of links, a missing name, a device, one segment named 200 times), as the playlist target
#       reads them (see Sources/FuzzTargets/PlaylistFuzzTarget.swift).
# rtmp: transcripts of what an RTMP server says to a publisher (handshake, control messages,
#       _result and onStatus commands), and bare AMF0 payloads.
# Corpus files are copied into DIR (a build folder), never into the repository.
set -euo pipefail

usage() { echo "usage: $0 adts|asc|esds|wav|mp4|h264|hevc|annexb|ics|rdb|sbr|ps|ilst|chapters|mpd|ts|rtmp|playlist|url|codecconfig|mp3|ogg|flac DIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
target=$1
dir=$2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus=$root/../shared/corpus

mkdir -p "$dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 0.2 s of AAC made by ffmpeg: make_aac RATE CHANNELS BITRATE FORMAT(adts|ipod) OUTPUT
make_aac() {
    ffmpeg -nostdin -v error -y -f lavfi -i "sine=frequency=440:sample_rate=$1:duration=0.2" \
        -ac "$2" -c:a aac -b:a "$3" -f "$4" "$5"
}

# The esds payloads (after the 4-byte version/flags) of the given MP4 files, each written to
# OUTDIR/PREFIX-N.bin; with --asc, the DecoderSpecificInfo (AudioSpecificConfig) inside instead.
extract_esds() {
    python3 - "$@" <<'PY'
import os, sys

args = sys.argv[1:]
want_asc = args[0] == "--asc"
if want_asc:
    args = args[1:]
outdir, prefix, files = args[0], args[1], args[2:]

def descriptor(data, pos):
    """(tag, body start, body end) of the descriptor at pos, or None."""
    if pos >= len(data):
        return None
    tag, pos, size = data[pos], pos + 1, 0
    for _ in range(4):
        if pos >= len(data):
            return None
        b = data[pos]; pos += 1
        size = size << 7 | (b & 0x7F)
        if not b & 0x80:
            break
    return tag, pos, min(pos + size, len(data))

def asc_of(es):
    d = descriptor(es, 0)
    if not d or d[0] != 0x03:
        return None
    _, pos, end = d
    flags = es[pos + 2]; pos += 3
    if flags & 0x80: pos += 2
    if flags & 0x40: pos += 1 + es[pos]
    if flags & 0x20: pos += 2
    d = descriptor(es, pos)
    if not d or d[0] != 0x04:
        return None
    d = descriptor(es, d[1] + 13)
    if not d or d[0] != 0x05:
        return None
    return es[d[1]:d[2]]

seen, n = set(), 0
for path in files:
    data = open(path, "rb").read()
    at = data.find(b"esds")
    while at >= 4:
        size = int.from_bytes(data[at - 4:at], "big")
        payload = data[at + 8:at - 4 + size]  # after size, type and version/flags
        blob = asc_of(payload) if want_asc else payload
        if blob and blob not in seen:
            seen.add(blob)
            n += 1
            with open(os.path.join(outdir, f"{prefix}-{n}.bin"), "wb") as f:
                f.write(blob)
        at = data.find(b"esds", at + 4)
PY
}

# hex strings -> binary files DIR/PREFIX-HEX.bin
write_hex() {
    local prefix=$1; shift
    local hex
    for hex in "$@"; do
        python3 -c 'import sys; open(sys.argv[1], "wb").write(bytes.fromhex(sys.argv[2]))' \
            "$dir/$prefix-${hex:0:24}.bin" "$hex"
    done
}

# Makes a few M4A files and sets `files` to them and the MP4 files of the corpus.
m4a_files() {
    make_aac 8000 1 24k ipod "$work/mono8k.m4a"
    make_aac 48000 2 128k ipod "$work/stereo48k.m4a"
    make_aac 44100 2 96k ipod "$work/stereo44k.m4a"
    files=("$work"/*.m4a)
    if [[ -d $corpus ]]; then
        local more
        mapfile -t more < <(find "$corpus" -type f \( -name '*.mp4' -o -name '*.m4a' -o -name '*.m4s' -o -name '*.mov' \) | sort)
        files+=("${more[@]}")
    fi
}

# Short Annex B video streams: make_video CODEC(h264|hevc) NAME SIZE FRAMES [ffmpeg output options]
# (testsrc at 10 fps; "-bsf:v filter_units=remove_types=6" and the like drop SEI to stay small).
make_video() {
    local format=$1 name=$2 size=$3 frames=$4; shift 4
    ffmpeg -nostdin -v error -y -f lavfi -i "testsrc=size=$size:rate=10" -frames:v "$frames" -pix_fmt yuv420p "$@" \
        -f "$format" "$dir/$name.$format"
}

h264_seeds() {
    local x264=(-c:v libx264 -preset ultrafast)
    local nosei=(-bsf:v filter_units=remove_types=6)
    make_video h264 ultrafast 32x32 4 "${x264[@]}"
    make_video h264 cavlc-nosei 32x32 4 "${x264[@]}" -coder 0 "${nosei[@]}"
    make_video h264 bf2-pyramid 32x32 8 -c:v libx264 -preset veryfast -bf 2 -b-pyramid normal "${nosei[@]}"
    make_video h264 bf1-nopyramid 48x32 6 -c:v libx264 -preset veryfast -bf 1 -b-pyramid none -weightp 2 "${nosei[@]}"
    make_video h264 mbaff 32x64 4 "${x264[@]}" -flags +ildct+ilme -x264-params interlaced=1:tff=1 "${nosei[@]}"
    make_video h264 yuv444 32x32 3 "${x264[@]}" -pix_fmt yuv444p "${nosei[@]}"
    make_video h264 10bit 32x32 3 "${x264[@]}" -pix_fmt yuv420p10le "${nosei[@]}"
    make_video h264 slices 64x64 3 "${x264[@]}" -slices 4 "${nosei[@]}"
    make_video h264 aud-vui 32x32 4 "${x264[@]}" -x264-params aud=1:nal-hrd=vbr:force-cfr=1 -b:v 50k -bufsize 100k \
        -maxrate 60k "${nosei[@]}"
    make_video h264 cropped 40x24 3 "${x264[@]}" "${nosei[@]}"
    make_video h264 gray 32x32 3 "${x264[@]}" -pix_fmt gray "${nosei[@]}" 2>/dev/null || true
}

hevc_seeds() {
    local x265=(-c:v libx265 -preset ultrafast)
    local params=log-level=error
    local nosei=(-bsf:v filter_units=remove_types=39)
    make_video hevc default 32x32 3 "${x265[@]}" -x265-params "$params"
    make_video hevc bf3-nosei 32x32 8 -c:v libx265 -preset veryfast -x265-params "$params:bframes=3" "${nosei[@]}"
    make_video hevc opengop 32x32 7 "${x265[@]}" -x265-params "$params:bframes=2:keyint=4:min-keyint=4:open-gop=1" "${nosei[@]}"
    make_video hevc 10bit 32x32 3 "${x265[@]}" -pix_fmt yuv420p10le -x265-params "$params" "${nosei[@]}"
    make_video hevc yuv444 32x32 3 "${x265[@]}" -pix_fmt yuv444p -x265-params "$params" "${nosei[@]}"
    make_video hevc slices-wpp 64x64 2 "${x265[@]}" -x265-params "$params:slices=2:wpp=1" "${nosei[@]}"
    make_video hevc aud-hrd 32x32 3 "${x265[@]}" -b:v 50k \
        -x265-params "$params:aud=1:hrd=1:vbv-bufsize=100:vbv-maxrate=60:repeat-headers=1" "${nosei[@]}"
    make_video hevc cropped 72x40 2 "${x265[@]}" -x265-params "$params" "${nosei[@]}"
}

case $target in
h264)
    h264_seeds
    ;;
hevc)
    hevc_seeds
    ;;
annexb)
    h264_seeds
    hevc_seeds
    # Empty units, a long zero run, a 3- and a 4-byte start code, a unit cut by the end, and
    # bytes before the first start code.
    write_hex annexb 000001000001 00000000000000000165 0000016588 000000016742 0000014201 \
        00000001 ff000001 0000000000
    ;;
adts)
    make_aac 8000 1 24k adts "$dir/ffmpeg-mono-8k.aac"
    make_aac 8000 2 32k adts "$dir/ffmpeg-stereo-8k.aac"
    make_aac 48000 1 64k adts "$dir/ffmpeg-mono-48k.aac"
    make_aac 48000 2 128k adts "$dir/ffmpeg-stereo-48k.aac"
    if [[ -d $corpus ]]; then
        find "$corpus" -type f \( -name '*.aac' -o -name '*.adts' \) -exec cp -f {} "$dir/" \;
        chmod u+w "$dir"/*
    fi
    ;;
ilst)
    ffmpeg -nostdin -v error -y -f lavfi -i "sine=duration=0.1" -c:a aac -metadata title=Title -metadata artist=Artist \
        -metadata track=3/12 -metadata disc=1/2 -metadata comment=Comment -metadata genre=Jazz "$work/tagged.m4a"
    python3 - "$work/tagged.m4a" "$dir" <<'PY'
import struct, sys
def boxes(data, start, end):
    while start + 8 <= end:
        size, kind = struct.unpack(">I4s", data[start:start + 8])
        if size < 8: return
        yield kind, start, start + size
        start += size
def find(data, start, end, path):
    for kind, s, e in boxes(data, start, end):
        if kind == path[0]:
            inner = s + 8 + (4 if kind == b"meta" else 0)
            return (inner, e) if len(path) == 1 else find(data, inner, e, path[1:])
data = open(sys.argv[1], "rb").read()
found = find(data, 0, len(data), [b"moov", b"udta", b"meta", b"ilst"])
if found:
    payload = data[found[0]:found[1]]
    open(sys.argv[2] + "/ffmpeg-ilst.bin", "wb").write(payload)
    # A freeform item and a small cover added by hand.
    def box(kind, body): return struct.pack(">I", 8 + len(body)) + kind + body
    free = box(b"----", box(b"mean", b"\0\0\0\0com.apple.iTunes") + box(b"name", b"\0\0\0\0ISRC") + box(b"data", b"\0\0\0\1\0\0\0\0USRC1"))
    covr = box(b"covr", box(b"data", b"\0\0\0\x0d\0\0\0\0\xff\xd8\xff\xe0") + box(b"data", b"\0\0\0\x0e\0\0\0\0\x89PNG"))
    open(sys.argv[2] + "/more-ilst.bin", "wb").write(payload + free + covr)
PY
    ;;
chapters)
    {
        echo ";FFMETADATA1"
        for i in $(seq 0 39); do printf '[CHAPTER]\nTIMEBASE=1/1000\nSTART=%d\nEND=%d\ntitle=Chapter %d — ü\n' $((i * 10)) $((i * 10 + 10)) "$i"; done
    } > "$work/meta.txt"
    printf ';FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=400\ntitle=Only\n' > "$work/one.txt"
    for name in meta one; do
        ffmpeg -nostdin -v error -y -f lavfi -i "sine=duration=0.4" -i "$work/$name.txt" -map 0 -map_chapters 1 -c:a aac "$work/$name.m4a"
        python3 - "$work/$name.m4a" "$dir/$name" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
at = data.find(b"chpl")
if at >= 4:
    size = struct.unpack(">I", data[at - 4:at])[0]
    open(sys.argv[2] + "-chpl.bin", "wb").write(data[at + 4:at - 4 + size])
at = data.find(b"encd")
if at >= 0:
    # the first text sample: 16-bit length, the title, then the 12-byte encd box
    open(sys.argv[2] + "-text.bin", "wb").write(data[max(0, at - 40):at + 8])
PY
    done
    ;;
ics)
    for layout in mono stereo 5.1; do
        ffmpeg -nostdin -v error -y -f lavfi \
            -i "aevalsrc='0.3*sin(2*PI*440*t)+0.6*(2*random(0)-1)*lt(mod(t,0.1),0.003)':s=48000:d=1" \
            -af "aformat=channel_layouts=$layout" -c:a aac -b:a 96k -f adts "$work/ics-$layout.aac"
        python3 - "$work/ics-$layout.aac" "$dir/block-$layout" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
offset, index = 0, 0
while offset + 7 <= len(data) and index < 40:
    length = ((data[offset + 3] & 3) << 11) | (data[offset + 4] << 3) | (data[offset + 5] >> 5)
    header = 7 if data[offset + 1] & 1 else 9
    open(f"{sys.argv[2]}-{index}.bin", "wb").write(data[offset + header:offset + length])
    offset += length
    index += 1
PY
    done
    ;;
rdb)
    # name  rate  layout  bitrate  encoder options
    while read -r name rate layout bitrate options; do
        # shellcheck disable=SC2086
        ffmpeg -nostdin -v error -y -f lavfi \
            -i "aevalsrc='0.3*sin(2*PI*440*t)+0.2*(2*random(0)-1)+0.6*(2*random(0)-1)*lt(mod(t,0.1),0.003)':s=$rate:d=1" \
            -af "aformat=channel_layouts=$layout" -c:a aac -b:a "$bitrate" $options -f adts "$work/rdb-$name.aac"
        python3 - "$work/rdb-$name.aac" "$dir/rdb-$name" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
offset, index = 0, 0
while offset + 7 <= len(data) and index < 20:
    length = ((data[offset + 3] & 3) << 11) | (data[offset + 4] << 3) | (data[offset + 5] >> 5)
    header = 7 if data[offset + 1] & 1 else 9
    config = (data[offset + 2] >> 2) & 0xF | ((data[offset + 2] & 1) << 6 | (data[offset + 3] >> 6) << 4)
    open(f"{sys.argv[2]}-{index}.bin", "wb").write(bytes([config]) + data[offset + header:offset + length])
    offset += length
    index += 1
PY
    done <<'LIST'
mono48 48000 mono 64k
stereo44 44100 stereo 128k -aac_coder fast
stereo22 22050 stereo 32k -aac_pns 1 -aac_is 1
surround 48000 5.1 256k -aac_tns 1
mono8 8000 mono 16k -aac_tns 0 -aac_pns 0
LIST
    ;;
sbr)
    # Streams of sbr_extension_data() in the sbr target's format (a selector byte, then
    # length-prefixed frames), made by the tests' frame generator (SBRExtensionDataTests.seedInputs)
    # and committed under Tests/AACBitstreamTests/Regressions/sbr: every rate, SCE and CPE.
    cp "$root"/Tests/AACBitstreamTests/Regressions/sbr/* "$dir"/
    ;;
ps)
    # Streams of SBR bs_extended_data with ps_data() in the ps target's format (a flags byte, then
    # length-prefixed frames), made by the tests' generator (ParametricStereoFrameTests.seedInputs)
    # and committed under Tests/AACBitstreamTests/Regressions/ps: every mode, both frame classes.
    cp "$root"/Tests/AACBitstreamTests/Regressions/ps/* "$dir"/
    ;;
asc)
    # LC 44.1 kHz stereo; LC 44.1 kHz stereo + explicit no-SBR extension (FFmpeg's extradata);
    # 0x2B7 sync extensions; LC 48 kHz mono; escape-coded object type; LC with a PCE.
    write_hex asc 1210 121056e500 2b920800 eb8a0800 1190 f8e85000 1408 1588 \
        1390 2b8a0800 11b056e598 0a1a 1200050800 \
        12000000000000
    m4a_files
    extract_esds --asc "$dir" asc-mp4 "${files[@]}"
    ;;
esds)
    write_hex esds 038080802200000004808080144015000000000001f4000001f40005808080021210068080800102
    m4a_files
    extract_esds "$dir" esds-mp4 "${files[@]}"
    ;;
wav)
    # make_wav NAME CODEC RATE CHANNELS [ffmpeg output options]
    make_wav() {
        local name=$1 codec=$2 rate=$3 channels=$4; shift 4
        ffmpeg -nostdin -v error -y -f lavfi -i "sine=frequency=440:sample_rate=$rate:duration=0.05" \
            -ac "$channels" -c:a "$codec" "$@" "$dir/$name"
    }
    make_wav u8-mono.wav pcm_u8 8000 1
    make_wav s16-stereo.wav pcm_s16le 8000 2
    make_wav s24-stereo.wav pcm_s24le 8000 2
    make_wav s32-mono.wav pcm_s32le 8000 1
    make_wav f32-mono.wav pcm_f32le 8000 1
    make_wav f64-mono.wav pcm_f64le 8000 1
    make_wav s16-5.1.wav pcm_s16le 8000 6 -t 0.02
    make_wav s16-rf64.wav pcm_s16le 8000 1 -rf64 always
    make_wav s16-rf64-auto.wav pcm_s16le 8000 1 -rf64 auto -fflags +bitexact
    make_wav u8-title.wav pcm_u8 8000 1 -metadata title=x -metadata artist=y
    make_wav s16-96k.wav pcm_s16le 96000 1 -t 0.01
    make_wav s16-bext.wav pcm_s16le 8000 1 -write_bext 1 -fflags +bitexact
    ffmpeg -nostdin -v error -y -f lavfi -i "sine=frequency=440:sample_rate=8000:duration=0.05" \
        -c:a pcm_s16le -f wav - >"$dir/s16-streamed.wav"
    ;;
mp4)
    # Small files of every shape the demuxer reads: progressive (with and without faststart),
    # fragmented, QuickTime, video + audio, and the corpus files under 32 KiB (the fuzzer's
    # -max_len keeps inputs small; bigger seeds are cut).
    src=(-f lavfi -i "sine=frequency=440:sample_rate=8000:duration=0.3")
    ffmpeg -nostdin -v error -y "${src[@]}" -c:a aac -b:a 16k "$dir/aac.m4a"
    ffmpeg -nostdin -v error -y "${src[@]}" -c:a aac -b:a 16k -movflags +faststart "$dir/aac-faststart.m4a"
    ffmpeg -nostdin -v error -y "${src[@]}" -c:a aac -b:a 16k -movflags frag_keyframe+empty_moov+default_base_moof         -frag_duration 100000 "$dir/aac-fragmented.mp4"
    ffmpeg -nostdin -v error -y "${src[@]}" -c:a aac -b:a 16k "$dir/aac.mov"
    printf ';FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=100\ntitle=A\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=100\nEND=300\ntitle=B\n' > "$work/chapters.txt"
    ffmpeg -nostdin -v error -y "${src[@]}" -i "$work/chapters.txt" -map 0 -map_chapters 1 -c:a aac -b:a 16k "$dir/aac-chapters.m4a"
    ffmpeg -nostdin -v error -y -f lavfi -i "testsrc=size=32x32:rate=5:duration=0.4" "${src[@]}"         -c:v libx264 -preset ultrafast -g 2 -bf 1 -c:a aac -b:a 16k -shortest "$dir/h264-aac.mp4"
    # A CMAF track as validate reads it: FFmpeg's HLS init segment and media segments (styp,
    # sidx, moof, mdat) end to end.
    mkdir -p "$work/hls"
    ffmpeg -nostdin -v error -y "${src[@]}" -c:a aac -b:a 16k -f hls -hls_segment_type fmp4 -hls_time 0.1 "$work/hls/index.m3u8"
    cat "$work/hls/init.mp4" "$work/hls/index0.m4s" "$work/hls/index1.m4s" > "$dir/cmaf-sequence.mp4"
    if [[ -d $corpus ]]; then
        find "$corpus" -type f \( -name '*.mp4' -o -name '*.m4a' \) -size -32k -exec cp -f {} "$dir/" \;
        chmod u+w "$dir"/*
    fi
    ;;
mpd)
    src=(-f lavfi -i "sine=frequency=440:sample_rate=8000:duration=0.6")
    dash=(-c:a aac -b:a 16k -f dash -seg_duration 0.2)
    # mpd_seed NAME [ffmpeg options]: the MPD alone is kept.
    mpd_seed() {
        local name=$1; shift
        mkdir -p "$work/$name"
        ffmpeg -nostdin -v error -y "$@" "$work/$name/manifest.mpd"
        cp "$work/$name/manifest.mpd" "$dir/ffmpeg-$name.mpd"
    }
    mpd_seed timeline "${src[@]}" "${dash[@]}"
    mpd_seed number "${src[@]}" "${dash[@]}" -use_timeline 0
    mpd_seed list "${src[@]}" "${dash[@]}" -use_template 0 -use_timeline 0
    mpd_seed ldash "${src[@]}" "${dash[@]}" -streaming 1 -ldash 1 -window_size 2 -utc_timing_url "https://time.example/?iso"
    mpd_seed av -f lavfi -i "testsrc=size=32x32:rate=5:duration=0.6" "${src[@]}" -c:v libx264 -preset ultrafast "${dash[@]}"
    cat > "$dir/hand-made.mpd" <<'XML'
<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<!DOCTYPE MPD SYSTEM "urn:example:mpd.dtd" [ <!ELEMENT MPD ANY> <!ATTLIST MPD type CDATA "static"> <!-- a comment --> ]>
<?xml-stylesheet href="mpd.xsl"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" xmlns:cenc="urn:mpeg:cenc:2013" type='dynamic' minBufferTime="PT2S">
  <!-- text & <markup> in a comment -->
  <BaseURL><![CDATA[http://cdn.example/a&b/]]></BaseURL>
  <Period id="p&amp;0" start="PT0S">
    <AdaptationSet mimeType="audio/mp4" codecs="mp4a.40.2" segmentAlignment="true">
      <ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011" cenc:default_KID="00000000-0000-0000-0000-000000000000"><cenc:pssh>AAAA&#x41;&#65;</cenc:pssh></ContentProtection>
      <Representation id="r&lt;1&gt;" bandwidth="64000" audioSamplingRate="48000">
        <SegmentTemplate timescale="48000" media="$RepresentationID$/$Number$.m4s" initialization="$RepresentationID$/init.mp4">
          <SegmentTimeline><S t="0" d="96256" r="-1"/></SegmentTimeline>
        </SegmentTemplate>
      </Representation>
    </AdaptationSet>
  </Period>
</MPD>
<!-- after the root -->
XML
    if [[ -d $corpus ]]; then
        find "$corpus" -type f -name '*.mpd' -exec cp -f {} "$dir/" \;
        chmod -R u+w "$dir"
    fi
    ;;
ts)
    # MPEG-TS with AAC (what an SRT publisher sends), made by ffmpeg's mpegts muxer: mono and
    # stereo, with and without the tables repeated on every PES packet, and a cut one.
    ffmpeg -nostdin -v error -y -f lavfi -i "sine=frequency=440:sample_rate=8000:duration=0.3" -c:a aac -b:a 16k -f mpegts "$dir/aac-mono-8k.ts"
    ffmpeg -nostdin -v error -y -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=0.1" -ac 2 -c:a aac -b:a 64k \
        -pes_payload_size 0 -mpegts_flags resend_headers -f mpegts "$dir/aac-stereo-48k.ts"
    head -c 1316 "$dir/aac-stereo-48k.ts" > "$dir/aac-seven-packets.ts"
    ;;
rtmp)
    # What an RTMP server says to a publisher, as nginx-rtmp says it: the handshake (S0 S1 S2),
    # Window Acknowledgement Size, Set Peer Bandwidth, Set Chunk Size, connect's _result,
    # createStream's _result, onStatus NetStream.Publish.Start; one more transcript ends in
    # BadName, one in a Ping Request; and bare AMF0 command payloads.
    python3 - "$dir" <<'PY'
import struct, sys
out = sys.argv[1]
def amf(v):
    if v is None: return b"\x05"
    if isinstance(v, bool): return b"\x01" + bytes([v])
    if isinstance(v, (int, float)): return b"\x00" + struct.pack(">d", v)
    if isinstance(v, str): b = v.encode(); return b"\x02" + struct.pack(">H", len(b)) + b
    if isinstance(v, dict):
        body = b"".join(struct.pack(">H", len(k)) + k.encode() + amf(x) for k, x in v.items())
        return b"\x03" + body + b"\x00\x00\x09"
def chunk(csid, kind, payload, stream=0, size=128):
    head = bytes([csid]) + b"\x00\x00\x00" + struct.pack(">I", len(payload))[1:] + bytes([kind]) + struct.pack("<I", stream)
    parts = [payload[i:i + size] for i in range(0, len(payload), size)] or [b""]
    return head + parts[0] + b"".join(bytes([0xC0 | csid]) + p for p in parts[1:])
def command(*values, stream=0): return chunk(3, 20, b"".join(amf(v) for v in values), stream, 4096)
handshake = b"\x03" + bytes(1536) + bytes(1536)
control = chunk(2, 5, struct.pack(">I", 5000000)) + chunk(2, 6, struct.pack(">IB", 5000000, 2)) + chunk(2, 1, struct.pack(">I", 4096))
connected = command("_result", 1, {"fmsVer": "FMS/3,0,1,123", "capabilities": 31},
                    {"level": "status", "code": "NetConnection.Connect.Success", "description": "Connection succeeded.", "objectEncoding": 0})
created = command("_result", 4, None, 1)
def status(code, text): return command("onStatus", 0, None, {"level": "status" if "Start" in code else "error", "code": code, "description": text}, stream=1)
open(f"{out}/publish-start.bin", "wb").write(handshake + control + connected + created + status("NetStream.Publish.Start", "Start publishing"))
open(f"{out}/publish-badname.bin", "wb").write(handshake + control + connected + created + status("NetStream.Publish.BadName", "Already publishing"))
open(f"{out}/ping.bin", "wb").write(handshake + control + chunk(2, 4, struct.pack(">HI", 6, 123456)))
open(f"{out}/amf0-result.bin", "wb").write(b"".join(amf(v) for v in ("_result", 1, None, {"level": "status", "code": "NetConnection.Connect.Success"})))
PY
    ;;
playlist)
    # A small fMP4 HLS package from ffmpeg (0.5 s segments at 24 kb/s mono, so each input stays
    # short), packed with the folder entries the playlist target reads: the package itself, and
    # the hostile folders (a directory, a FIFO, a loop of links, a missing name, one segment
    # named 200 times) as inputs of the same format.
    ffmpeg -nostdin -v error -y -f lavfi -i "sine=frequency=440:sample_rate=22050:duration=1.2" -ac 1 -c:a aac -b:a 24k \
        -f hls -hls_segment_type fmp4 -hls_time 0.5 -hls_playlist_type vod -hls_fmp4_init_filename init.mp4 \
        -hls_segment_filename "$work/seg%d.m4s" "$work/index.m3u8"
    python3 - "$work" "$dir" <<'PY'
import os, struct, sys
work, out = sys.argv[1], sys.argv[2]
def entry(kind, name, body=b""):
    name = name.encode()
    return bytes([kind, len(name)]) + name + struct.pack("<H", len(body)) + body
def pack(entries, playlist):
    return bytes([len(entries)]) + b"".join(entries) + playlist
files = sorted(n for n in os.listdir(work) if n.endswith((".mp4", ".m4s")))
package = [entry(0, n, open(os.path.join(work, n), "rb").read()) for n in files][:8]
playlist = open(os.path.join(work, "index.m3u8"), "rb").read()
def media(map_uri, segments):
    text = "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:1\n#EXT-X-MAP:URI=\"%s\"\n" % map_uri
    text += "".join("#EXTINF:0.5,\n%s\n" % s for s in segments) + "#EXT-X-ENDLIST\n"
    return text.encode()
init = [e for e in package if b"init.mp4" in e[:12]]
seg0 = [e for e in package if b"seg0.m4s" in e[:12]]
seeds = {
    "package.bin": pack(package, playlist),
    "map-is-a-directory.bin": pack([entry(1, "folder")] + seg0, media("folder", ["seg0.m4s"])),
    "map-is-root.bin": pack(seg0, media("/", ["seg0.m4s"])),
    "segment-is-a-fifo.bin": pack(init + [entry(3, "fifo")], media("init.mp4", ["fifo"])),
    "map-is-a-fifo.bin": pack([entry(3, "fifo")] + seg0, media("fifo", ["seg0.m4s"])),
    "link-loop.bin": pack(init + [entry(2, "a", b"b"), entry(2, "b", b"a")], media("init.mp4", ["a", "seg0.m4s"])),
    "missing-segment.bin": pack(init + seg0, media("init.mp4", ["seg0.m4s", "gone.m4s"])),
    "link-to-dev-zero.bin": pack(init + [entry(2, "zero", b"/dev/zero")], media("init.mp4", ["zero"])),
    "one-segment-200-times.bin": pack(init + seg0, media("init.mp4", ["seg0.m4s"] * 200)),
}
for name, data in seeds.items():
    open(os.path.join(out, name), "wb").write(data)
PY
    ;;
url)
    # Destination URLs as users write them: each scheme, userinfo with escapes and an @ in the
    # password, IPv6 in brackets, SRT's streamid query, and the refused forms.
    i=0
    for url in 'rtmp://live.example/app/key' 'rtmps://user:p%40ss@live.example:443/app/k@y?token=a' \
               'icecast://source:pa/ss?w@radio.example:8000/live.aac' 'icecasts://source:x@[::1]:8443/m#1' \
               'srt://[fe80::1%25eth0]:9000?streamid=#!::r=live,m=publish&passphrase=0123456789' \
               'srt://host:65535' 'srt://host:65536' 'srt://[::1:9000' 'rtmp:/host' '://host' 'srt://host:٣٣'; do
        printf '%s' "$url" > "$dir/url-$i.txt"
        i=$((i + 1))
    done
    ;;
codecconfig)
    # The configurations libavcodec's encoders write (OpusHead, STREAMINFO, the ALAC cookie),
    # and the boxes FFmpeg's MP4 muxer puts them in (dOps, dfLa, alac).
    wav="$dir/.in.wav"
    ffmpeg -nostdin -v error -y -f lavfi -i "sine=frequency=440:sample_rate=44100:duration=0.5" -ac 2 "$wav"
    for c in libopus flac alac; do
        ffmpeg -nostdin -v error -y -i "$wav" -c:a "$c" -strict -2 "$dir/.x.mp4"
        python3 - "$dir/.x.mp4" "$dir/$c" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
for box in (b"dOps", b"dfLa", b"alac"):
    at = data.find(box, data.find(b"stsd"))
    if box == b"alac" and at > 0:
        at = data.find(box, at + 4)  # the box inside the sample entry of the same name
    if at > 4:
        size = struct.unpack(">I", data[at - 4:at])[0]
        open(sys.argv[2] + "-" + box.decode() + ".bin", "wb").write(data[at + 4:at - 4 + size])
PY
        rm -f "$dir/.x.mp4"
    done
    rm -f "$wav"
    ;;
mp3)
    # The heads of MP3 files as LAME and FFmpeg write them: an ID3v2.4 tag with FFmpeg's text
    # frames, an Info frame, the first audio frames; and an ID3v2.3 tag before mono MPEG-2 frames.
    ffmpeg -nostdin -v error -y -f lavfi -i "sine=frequency=440:sample_rate=44100:duration=0.3" -ac 2 \
        -metadata title=Seed -c:a libmp3lame -b:a 128k "$dir/.x.mp3"
    ffmpeg -nostdin -v error -y -f lavfi -i "sine=frequency=440:sample_rate=22050:duration=0.3" -ac 1 \
        -id3v2_version 3 -metadata artist=Seed -c:a libmp3lame -b:a 32k "$dir/.y.mp3"
    head -c 4096 "$dir/.x.mp3" > "$dir/ffmpeg-stereo.mp3"
    head -c 4096 "$dir/.y.mp3" > "$dir/ffmpeg-mono-v23.mp3"
    rm -f "$dir/.x.mp3" "$dir/.y.mp3"
    ;;
ogg)
    # Ogg Opus as opus-tools and FFmpeg write it: OpusHead, OpusTags with a tag, audio pages.
    wav="$dir/.in.wav"
    ffmpeg -nostdin -v error -y -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=0.3" -ac 2 "$wav"
    opusenc --quiet --title Seed "$wav" "$dir/.x.opus"
    ffmpeg -nostdin -v error -y -i "$wav" -metadata title=Seed -c:a libopus "$dir/.y.opus"
    head -c 4096 "$dir/.x.opus" > "$dir/opusenc.opus"
    head -c 4096 "$dir/.y.opus" > "$dir/ffmpeg.opus"
    rm -f "$wav" "$dir/.x.opus" "$dir/.y.opus"
    ;;
flac)
    # Native FLAC as flac and FFmpeg write it: fLaC, STREAMINFO, a Vorbis comment, padding, frames
    # of fixed and of variable block size, 16 and 24 bits.
    wav="$dir/.in.wav"
    ffmpeg -nostdin -v error -y -f lavfi -i "sine=frequency=440:sample_rate=44100:duration=0.3" -ac 2 "$wav"
    flac --silent -f --tag=TITLE=Seed -o "$dir/.x.flac" "$wav"
    ffmpeg -nostdin -v error -y -i "$wav" -ar 48000 -sample_fmt s32 -c:a flac -bits_per_raw_sample 24 "$dir/.y.flac"
    ffmpeg -nostdin -v error -y -i "$wav" -c:a flac -frame_size 1000 -lpc_type none -ch_mode indep "$dir/.z.flac"
    head -c 8192 "$dir/.x.flac" > "$dir/flac.flac"
    head -c 8192 "$dir/.y.flac" > "$dir/ffmpeg-24bit.flac"
    head -c 8192 "$dir/.z.flac" > "$dir/ffmpeg-odd-blocks.flac"
    rm -f "$wav" "$dir/.x.flac" "$dir/.y.flac" "$dir/.z.flac"
    ;;
*)
    usage
    ;;
esac
