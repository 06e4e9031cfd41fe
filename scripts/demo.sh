#!/usr/bin/env bash
# Four steps in a row (`make demo`): record 5 s of audio to raw PCM, ADTS and a gapless
# M4A with `keyframe record`; demux the M4A to ADTS; decode the M4A to WAV; probe each file and
# check it against ffprobe.
#
#   scripts/demo.sh KEYFRAME [OUT_DIR]        (OUT_DIR defaults to demo-out)
#
# The capture device:
#   - a sound card (`arecord -l` lists a capture device): ALSA device `default`;
#   - else a PulseAudio null sink that this script starts (headless, its own PULSE_RUNTIME_PATH
#     under OUT_DIR/pulse), with a 440 Hz (left) / 660 Hz (right) tone played into it by paplay
#     and captured through ALSA device `pulse`; the daemon is stopped on exit, also on failure;
#   - else (pulseaudio missing or cannot start) the ALSA `file` plugin reading the same tone,
#     defined in OUT_DIR/asound.conf and passed with --alsa-config (no clock: not real time).
# DEMO_SOURCE=card|pulse|file forces one. Exit status 0 only when every step worked.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 KEYFRAME [OUT_DIR]" >&2
    exit 2
fi
kf=$1
case $kf in */*) kf=$(cd "$(dirname "$kf")" && pwd)/$(basename "$kf") ;; esac   # we cd below
out=${2:-demo-out}
seconds=5
rate=44100
channels=2
source=${DEMO_SOURCE:-auto}

mkdir -p "$out"
out=$(cd "$out" && pwd)   # absolute: the asound.conf and the pulse socket need it
shown=${out#"$PWD"/}       # for messages
cd "$out"
rm -rf test.pcm test.aac test.m4a output.aac output.wav ./*.json ./*.log asound.conf tone.raw pulse

step() { printf '\n== %s\n' "$*"; }
fail() { echo "demo: $*" >&2; exit 1; }

# --- the capture device ---------------------------------------------------------------------------

pulse_pid=""
player_pid=""
pids=()   # the recordings running in the background
cleanup() {
    if [ ${#pids[@]} -gt 0 ]; then   # interrupted while recording: let them finish their files
        kill -TERM "${pids[@]}" 2>/dev/null || true
        wait "${pids[@]}" 2>/dev/null || true
        pids=()
    fi
    if [ -n "$player_pid" ]; then
        kill "$player_pid" 2>/dev/null || true
        wait "$player_pid" 2>/dev/null || true
    fi
    if [ -n "$pulse_pid" ] && kill "$pulse_pid" 2>/dev/null; then
        for _ in $(seq 50); do alive "$pulse_pid" || break; sleep 0.1; done
        if alive "$pulse_pid"; then kill -KILL "$pulse_pid" 2>/dev/null || true; fi
        echo "(stopped the demo's PulseAudio daemon)"
    fi
    return 0
}
# True while PID runs (a daemon is not our child: once it exits it can linger as a zombie).
alive() {
    local state=""
    { read -r _ _ state _ </proc/"$1"/stat; } 2>/dev/null || return 1
    [ "$state" != Z ] && [ "$state" != X ]
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The tone: 440 Hz left, 660 Hz right, -18 dBFS peak, raw s16le stereo to stdout.
tone() { # SECONDS
    ffmpeg -nostdin -v error -f lavfi -i "sine=frequency=440:sample_rate=$rate:duration=$1" \
        -f lavfi -i "sine=frequency=660:sample_rate=$rate:duration=$1" \
        -filter_complex "[0][1]join=inputs=2:channel_layout=stereo" -f s16le -c:a pcm_s16le -
}

# Starts a headless PulseAudio daemon with a null sink, and plays the tone into it. Fails quietly
# (the log is in pulse/log) when pulseaudio is missing or cannot start.
start_pulse() {
    command -v pulseaudio >/dev/null && command -v paplay >/dev/null && command -v pactl >/dev/null \
        || return 1
    export PULSE_RUNTIME_PATH="$out/pulse"
    export PULSE_SERVER="unix:$PULSE_RUNTIME_PATH/native"
    mkdir -p -m 700 "$PULSE_RUNTIME_PATH"
    pulseaudio -D -n --exit-idle-time=-1 --log-target="file:$PULSE_RUNTIME_PATH/log" \
        --load="module-native-protocol-unix auth-anonymous=1 socket=$PULSE_RUNTIME_PATH/native" \
        --load="module-null-sink sink_name=keyframe_demo rate=$rate channels=$channels" \
        2>>"$PULSE_RUNTIME_PATH/log" || return 1
    for _ in $(seq 50); do
        [ -s "$PULSE_RUNTIME_PATH/pid" ] && pactl info >/dev/null 2>&1 && break
        sleep 0.1
    done
    [ -s "$PULSE_RUNTIME_PATH/pid" ] || return 1
    pulse_pid=$(cat "$PULSE_RUNTIME_PATH/pid")
    pactl info >/dev/null 2>&1 || return 1
    pactl set-default-source keyframe_demo.monitor >/dev/null 2>&1 || return 1
    # Up to 2 minutes of tone; killed at the end (ffmpeg then stops on the broken pipe).
    # --latency-msec: with no low-latency stream the null sink renders in 2-s blocks, and a
    # recording's first data would wait up to 2 s for the next one.
    tone 120 2>/dev/null | paplay --raw --rate=$rate --channels=$channels --format=s16le --latency-msec=20 \
        --device=keyframe_demo 2>>"$PULSE_RUNTIME_PATH/log" &
    player_pid=$!   # paplay's (the last in the pipeline)
    sleep 0.3
    kill -0 "$player_pid" 2>/dev/null
}

# Stops what start_pulse started, after a failure half-way.
stop_pulse() {
    cleanup >/dev/null
    pulse_pid="" player_pid=""
    unset PULSE_SERVER PULSE_RUNTIME_PATH
}

has_card() { arecord -l 2>/dev/null | grep -q '^card '; }

device=default
alsa_args=()
concurrent=yes   # the three recordings at once (each its own stream), else one after another
case $source in
auto)
    if has_card; then source=card
    elif start_pulse; then source=pulse
    else stop_pulse; source=file
    fi ;;
card) ;;
pulse) start_pulse || fail "PulseAudio did not start (log: $shown/pulse/log)" ;;
file) ;;
*) fail "DEMO_SOURCE must be card, pulse or file, not '$source'" ;;
esac

step "KeyFrameKit demo: record, demux, decode, probe (files in $shown/)"
case $source in
card)
    # A card's 'default' may not share its input (no dsnoop): record one file after another.
    concurrent=no
    echo "Sound card found: recording from ALSA device 'default' (whatever its input hears)." ;;
pulse)
    echo "No sound card here ('arecord -l' lists no capture device), so this demo records from a"
    echo "VIRTUAL device: a PulseAudio null sink it started itself ($shown/pulse), fed a 440 Hz"
    echo "(left) / 660 Hz (right) tone by paplay, captured through ALSA device 'pulse' in real time."
    device=pulse ;;
file)
    [ "${DEMO_SOURCE:-auto}" = file ] || echo "(PulseAudio could not start; its log: $shown/pulse/log)"
    echo "No sound card here ('arecord -l' lists no capture device), so this demo records from a"
    echo "VIRTUAL device: the ALSA 'file' plugin reading a 440 Hz (left) / 660 Hz (right) tone,"
    echo "defined in $shown/asound.conf (--alsa-config). It has no clock, so it is not real time."
    tone $((seconds + 1)) >tone.raw
    cat >asound.conf <<EOF
# Written by scripts/demo.sh: a capture device that reads tone.raw (s16le, $rate Hz, $channels ch).
pcm.keyframe_demo {
    type file
    slave.pcm { type null }
    file "/dev/null"
    infile "$out/tone.raw"
    format "raw"
}
EOF
    device=keyframe_demo
    alsa_args=(--alsa-config "$out/asound.conf") ;;
esac

# The summaries: `report records` (what each `record --json` said), `report table` (the probes).
report() {
    python3 - "$1" "$seconds" "$rate" "$channels" <<'EOF'
import json, os, sys, wave

mode, seconds, rate, channels = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
frames = round(seconds * rate)


def load(name):
    with open(name) as f:
        return json.load(f)


def key(f):
    stem, ext = os.path.splitext(f)
    return f"{stem}-{ext[1:]}"


def db(values):  # silence is null (-inf dBFS)
    return "/".join("-inf" if x is None else f"{x:.1f}" for x in values)


problems = []
if mode == "records":
    for f in ("test.pcm", "test.aac", "test.m4a"):
        r = load("record-" + key(f) + ".json")
        lost = ", ".join(f"{name} {r.get(k, '?')}" for name, k in
                         (("xruns", "deviceXruns"), ("lost", "lostFrames"), ("overruns", "queueOverruns")))
        print(f"  {f}  {r['frames']} frames  {r['seconds']:.3f} s  by {r['stoppedBy']}  "
              f"peak L/R {db(r.get('peakDBFS', []))} dBFS  {lost}")
        if r["frames"] != frames:
            problems.append(f"{f}: {r['frames']} frames recorded, not {frames}")
        if r["stoppedBy"] != "duration":
            problems.append(f"{f}: stopped by {r['stoppedBy']}, not by the duration")
else:
    rows = []
    for f in ("test.pcm", "test.aac", "test.m4a", "output.aac", "output.wav"):
        size = os.path.getsize(f)
        if f.endswith(".pcm"):
            container, r, ch, n = "raw s16le", rate, channels, size // (2 * channels)
        elif f.endswith(".wav"):
            with wave.open(f) as w:
                container, r, ch, n = "WAV", w.getframerate(), w.getnchannels(), w.getnframes()
        else:
            p = load("probe-" + key(f) + ".json")
            t = p["tracks"][0]
            container = "ADTS" if p["format"] == "adts" else f"MP4 ({p.get('brand', '').strip()})"
            r, ch = t["sampleRate"], t["channels"]
            n = round(t["duration"] * r)
        s = load("ffprobe-" + key(f) + ".json")["streams"][0]
        pr, pch = int(s["sample_rate"]), int(s["channels"])
        # ffprobe estimates an ADTS file's duration from the bitrate: count its packets instead.
        pdur = int(s["nb_read_packets"]) * 1024 / pr if f.endswith(".aac") else float(s["duration"])
        agree = pr == r and pch == ch and abs(pdur - n / r) < 0.5 / r + 1e-6
        if not agree:
            problems.append(f"{f}: keyframe {n / r:.6f} s {r} Hz {ch} ch, "
                            f"ffprobe {pdur:.6f} s {pr} Hz {pch} ch")
        rows.append((f, container, f"{n / r:.6f} s", str(n), str(r), str(ch), f"{size:,}",
                     f"{s['codec_name']}, {pdur:.6f} s, {pr} Hz, {pch} ch: "
                     + ("agrees" if agree else "DIFFERS")))
    counts = {row[0]: int(row[3]) for row in rows}
    if counts["test.pcm"] != frames:
        problems.append(f"test.pcm holds {counts['test.pcm']} frames, not {frames}")
    if counts["output.wav"] != counts["test.pcm"]:
        problems.append(f"output.wav holds {counts['output.wav']} frames, test.pcm {counts['test.pcm']}")
    head = ("file", "container", "duration", "frames", "rate", "ch", "bytes", "ffprobe")
    widths = [max(len(row[i]) for row in rows + [head]) for i in range(len(head))]
    for row in [head] + rows:
        print("  " + "  ".join(c.rjust(w) if 2 <= i <= 6 else c.ljust(w)
                               for i, (c, w) in enumerate(zip(row, widths))).rstrip())
    if not problems:
        print(f"\n  The recordings hold exactly {frames} frames. ADTS cannot mark the encoder's priming\n"
              "  and padding, so the .aac files are longer; test.m4a's edit list trims them, so\n"
              "  output.wav has as many frames as test.pcm.")
if problems:
    print("\nPROBLEMS:\n  " + "\n  ".join(problems))
    sys.exit(1)
EOF
}

# --- 1. capture -------------------------------------------------------------------------------------

recordings=(test.pcm test.aac test.m4a)
record_args=(--duration "$seconds" --device "$device" "${alsa_args[@]}" --json)
log_of() { echo "record-${1/./-}"; }   # test.pcm -> record-test-pcm(.json|.log)
record_one() { # OUTPUT
    "$kf" record "$1" "${record_args[@]}" >"$(log_of "$1").json" 2>"$(log_of "$1").log" && return 0
    echo "FAILED (exit $?): keyframe record $1 ${record_args[*]}" >&2
    sed 's/^/    /' "$(log_of "$1").log" >&2
    return 1
}

step "record: $seconds s from '$device' to ${recordings[*]} ($([ $concurrent = yes ] \
    && echo "three streams at once" || echo "one after another"))"
echo "keyframe record test.{pcm,aac,m4a} --duration $seconds --device $device${alsa_args:+ --alsa-config $shown/asound.conf} --json"
status=0
if [ $concurrent = yes ]; then
    for f in "${recordings[@]}"; do record_one "$f" & pids+=($!); done
    for pid in "${pids[@]}"; do wait "$pid" || status=1; done
    pids=()
else
    for f in "${recordings[@]}"; do record_one "$f" || status=1; done
fi
[ $status = 0 ] || fail "recording failed"
if [ -n "$player_pid" ]; then
    kill "$player_pid" 2>/dev/null || true
    wait "$player_pid" 2>/dev/null || true
    player_pid=""
fi
report records

# --- 2. demux, 3. decode ----------------------------------------------------------------------------

step "demux test.m4a -> output.aac (ADTS, stream copy)"
echo "keyframe demux test.m4a -o output.aac"
"$kf" demux test.m4a -o output.aac 2>demux.log | sed 's/^/  /' || { cat demux.log >&2; fail "demux failed"; }

step "decode test.m4a -> output.wav (the gapless edit list applied: priming dropped, exact length)"
echo "keyframe decode test.m4a -o output.wav"
"$kf" decode test.m4a -o output.wav 2>decode.log | sed 's/^/  /' || { cat decode.log >&2; fail "decode failed"; }

# --- 4. probe ---------------------------------------------------------------------------------------

step "probe: keyframe probe (raw PCM and WAV: from their size), ffprobe as the peer"
for f in test.aac test.m4a output.aac; do
    "$kf" probe "$f" --json >"probe-${f/./-}.json" 2>"probe-${f/./-}.log" \
        || { cat "probe-${f/./-}.log" >&2; fail "keyframe probe $f failed"; }
done
for f in test.pcm test.aac test.m4a output.aac output.wav; do
    raw=()
    [ "${f##*.}" = pcm ] && raw=(-f s16le -ar "$rate" -ac "$channels")
    ffprobe -v error "${raw[@]}" -count_packets -of json \
        -show_entries stream=codec_name,sample_rate,channels,duration,nb_read_packets \
        "$f" >"ffprobe-${f/./-}.json" || fail "ffprobe $f failed"
done
report table

cleanup
pulse_pid="" player_pid=""
echo
if [ $source = card ]; then
    echo "demo: done (captured from the sound card)."
else
    echo "demo: done (captured from a virtual device: $([ $source = pulse ] \
        && echo "PulseAudio null sink" || echo "ALSA file plugin"), not a sound card)."
fi
