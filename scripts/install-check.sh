#!/usr/bin/env bash
# `make install-check`: installs a build into a temporary DESTDIR and runs smoke commands against
# the installed files only (never against .build*), then uninstalls and checks nothing is left.
#
#   scripts/install-check.sh            (from the repository root; MAKE, CONFIG, PREFIX may be set)
#
# Checks, each printed as it passes; the first failure stops the run (exit 1):
#   - `keyframe --version` and `keyframe --help` of the installed tool;
#   - ldd of the installed keyframe and keyframe-serve: no libswift*.so (the runtime is static
#     with CONFIG=release), nothing "not found"; the libraries are printed;
#   - every man page renders with `man --warnings -l` with no warning, `lexgrog` reads its NAME
#     line, and `man -w keyframe-convert` finds it through the installed MANPATH (man-db and
#     groff are installed when missing, like `make apt-deps`);
#   - the bash completion loads and completes `keyframe con` to `convert`; zsh's and fish's too,
#     where those shells are installed;
#   - `keyframe encode` of a generated WAV to M4A, then `keyframe probe` and ffprobe of it;
#   - `keyframe serve DIR` of a folder `keyframe package` made from it: it hands over to the
#     installed keyframe-serve, and curl gets every file byte for byte;
#   - peak RSS (/usr/bin/time -v, "Maximum resident set size") of `keyframe --version` and of
#     `keyframe demux` of a 1-hour M4A (made once with ffmpeg, kept in .build-release/install-check):
#     each under RSS_LIMIT_KB (default 20480 KiB, 20 MiB), else the check fails;
#   - `make uninstall` then leaves no file under DESTDIR.
# Prints the figures at the end: binary sizes, RSS, and how long `make install` took.
set -euo pipefail

MAKE=${MAKE:-make}
CONFIG=${CONFIG:-release}
PREFIX=${PREFIX:-/usr/local}
RSS_LIMIT_KB=${RSS_LIMIT_KB:-20480}
CACHE=${INSTALL_CHECK_CACHE:-.build-release/install-check}
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)

[ -f Package.swift ] && [ -f scripts/install-check.sh ] || { echo "install-check: run from the repository root" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/keyframe-install-check.XXXXXX")
server_pid=""
cleanup() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill -INT "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "install-check: FAILED: $*" >&2; exit 1; }
ok() { echo "install-check: ok: $*"; }

# Debian packages the check itself needs, installed only when missing.
need_packages() {
    local missing="" p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        echo "apt-get install$missing"
        $SUDO apt-get update -qq
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
    fi
}
need_packages man-db groff-base time curl ffmpeg

# --- install ----------------------------------------------------------------------------------------

root=$work/root
start=$SECONDS
$MAKE --no-print-directory install CONFIG="$CONFIG" PREFIX="$PREFIX" DESTDIR="$root"
install_seconds=$((SECONDS - start))
bin=$root$PREFIX/bin
share=$root$PREFIX/share
kf=$bin/keyframe
kfs=$bin/keyframe-serve
[ -x "$kf" ] && [ -x "$kfs" ] || fail "keyframe and keyframe-serve are not in $bin"
echo "install-check: installed into $root$PREFIX in $install_seconds s:"
(cd "$root" && find . -type f | sort | sed 's/^\./    /')

# --- the executables ----------------------------------------------------------------------------------

version=$("$kf" --version) || fail "keyframe --version"
ok "keyframe --version: $version"
help=$("$kf" --help) || fail "keyframe --help"
grep -q '^USAGE: keyframe' <<<"$help" || fail "keyframe --help printed no USAGE line"
ok "keyframe --help ($(wc -l <<<"$help") lines)"

for exe in "$kf" "$kfs"; do
    libs=$(ldd "$exe") || fail "ldd $exe"
    echo "install-check: ldd $(basename "$exe"):"
    sed 's/^/    /' <<<"$libs"
    if grep -q 'not found' <<<"$libs"; then fail "$(basename "$exe") needs a library that is not installed"; fi
    if [ "$CONFIG" = release ] && grep -q 'libswift\|libFoundation\|lib_FoundationICU\|libdispatch\|libBlocksRuntime' <<<"$libs"; then
        fail "$(basename "$exe") links the Swift runtime dynamically (expected --static-swift-stdlib)"
    fi
done
ok "ldd: no Swift runtime library, nothing missing"

# --- man pages ----------------------------------------------------------------------------------------

man1=$share/man/man1
[ -f "$man1/keyframe.1" ] && [ -f "$man1/keyframe-convert.1" ] || fail "no keyframe.1 / keyframe-convert.1 in $man1"
pages=0
for page in "$man1"/*.1; do
    # man-db's pipeline (preconv, tbl, groff) with every groff warning on, in a UTF-8 and an ASCII
    # terminal; anything on stderr is a warning.
    for locale in C.UTF-8 C; do
        if ! err=$(LC_ALL=$locale MANWIDTH=80 man --warnings=all -l "$page" 2>&1 >/dev/null) || [ -n "$err" ]; then
            fail "man -l $(basename "$page") (LC_ALL=$locale): ${err:-exit status}"
        fi
    done
    lexgrog "$page" >/dev/null 2>&1 || fail "lexgrog cannot read the NAME line of $(basename "$page")"
    pages=$((pages + 1))
done
found=$(MANPATH=$share/man man -w keyframe-convert) || fail "man -w keyframe-convert finds no page in $share/man"
[ "$found" = "$man1/keyframe-convert.1" ] || fail "man -w keyframe-convert gave $found"
rendered=$(LC_ALL=C.UTF-8 MANWIDTH=80 MANPATH=$share/man man keyframe-convert 2>/dev/null)
grep -q 'keyframe-convert - ' <<<"$rendered" || fail "man keyframe-convert has no NAME line"
grep -q -- '--bitrate' <<<"$rendered" || fail "man keyframe-convert does not list --bitrate"
ok "$pages man pages render without warnings (man --warnings=all, UTF-8 and ASCII); man keyframe-convert finds the installed page"

# --- completions ----------------------------------------------------------------------------------------

bash_completion=$share/bash-completion/completions/keyframe
zsh_completion=$share/zsh/site-functions/_keyframe
fish_completion=$share/fish/vendor_completions.d/keyframe.fish
for f in "$bash_completion" "$zsh_completion" "$fish_completion"; do [ -s "$f" ] || fail "missing or empty: $f"; done

# bash: load it, then ask its function for the completions of `keyframe con`.
words=$(PATH="$bin:$PATH" bash --norc --noprofile -c '
    [ -f /usr/share/bash-completion/bash_completion ] && . /usr/share/bash-completion/bash_completion
    . "$1"
    complete -p keyframe >/dev/null || exit 3
    fn=$(complete -p keyframe | sed -n "s/.*-F \([^ ]*\).*/\1/p")
    COMP_WORDS=(keyframe con); COMP_CWORD=1; COMP_LINE="keyframe con"; COMP_POINT=${#COMP_LINE}
    "$fn" keyframe con keyframe
    printf "%s\n" "${COMPREPLY[@]}"' bash "$bash_completion" 2>&1) || fail "bash completion: $words"
grep -qx 'convert' <<<"$words" || fail "bash completion of 'keyframe con' gave: $words"
ok "bash completion loads; 'keyframe con' completes to convert"

if command -v zsh >/dev/null; then
    out=$(PATH="$bin:$PATH" zsh -f -c '
        fpath=("$1" $fpath); autoload -Uz compinit; compinit -u -d "$2"
        autoload -Uz _keyframe; whence -w _keyframe' zsh "$(dirname "$zsh_completion")" "$work/zcompdump" 2>&1) \
        || fail "zsh completion: $out"
    grep -q '_keyframe: function' <<<"$out" || fail "zsh completion: $out"
    out=$(zsh -f -n "$zsh_completion" 2>&1) || fail "zsh -n $zsh_completion: $out"
    ok "zsh completion loads (_keyframe)"
else
    echo "install-check: zsh is not installed: its completion not loaded"
fi

if command -v fish >/dev/null; then
    out=$(PATH="$bin:$PATH" fish --no-config -c "source '$fish_completion'; complete -C 'keyframe con'" 2>&1) \
        || fail "fish completion: $out"
    grep -q '^convert' <<<"$out" || fail "fish completion of 'keyframe con' gave: $out"
    ok "fish completion loads; 'keyframe con' completes to convert"
else
    echo "install-check: fish is not installed: its completion not loaded"
fi

# --- encode, probe, package, serve ---------------------------------------------------------------------

ffmpeg -hide_banner -nostdin -loglevel error -y -f lavfi -i "sine=f=440:d=3:sample_rate=44100" -ac 2 -c:a pcm_s16le "$work/tone.wav"
"$kf" encode "$work/tone.wav" -o "$work/tone.m4a" >"$work/encode.log" 2>&1 || fail "keyframe encode: $(cat "$work/encode.log")"
"$kf" probe "$work/tone.m4a" >"$work/probe.log" 2>&1 || fail "keyframe probe: $(cat "$work/probe.log")"
grep -qi 'aac' "$work/probe.log" || fail "keyframe probe does not say AAC: $(cat "$work/probe.log")"
duration=$(ffprobe -v error -show_entries format=duration -of default=nw=1:nk=1 "$work/tone.m4a")
[ "$(printf '%.3f' "$duration")" = 3.000 ] || fail "ffprobe reads $duration s from the encoded M4A, not 3.000"
ok "keyframe encode of a 3-s WAV to M4A; keyframe probe and ffprobe read it (3.000 s)"

# serve: a folder `keyframe package` wrote (serve answers for .m3u8, .mpd, .mp4 and .m4s files).
"$kf" package "$work/tone.m4a" --hls "$work/www" --segment-duration 1 >"$work/package.log" 2>&1 \
    || fail "keyframe package: $(cat "$work/package.log")"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$kf" serve "$work/www" --address "127.0.0.1:$port" >"$work/serve.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
    curl -sf -o /dev/null "http://127.0.0.1:$port/index.m3u8" && break
    kill -0 "$server_pid" 2>/dev/null || fail "keyframe serve exited: $(cat "$work/serve.log")"
    sleep 0.1
done
served=0
for file in "$work"/www/*; do
    name=$(basename "$file")
    curl -sf -o "$work/got" "http://127.0.0.1:$port/$name" || fail "curl of $name: $(cat "$work/serve.log")"
    cmp -s "$file" "$work/got" || fail "$name as served differs from the file"
    served=$((served + 1))
done
[ "$served" -ge 3 ] || fail "keyframe package wrote only $served files"
exe=$(readlink "/proc/$server_pid/exe" || true)
[ "$exe" = "$kfs" ] || fail "keyframe serve runs $exe, not the installed $kfs"
kill -INT "$server_pid"
status=0; wait "$server_pid" || status=$?
server_pid=""
[ "$status" = 0 ] || [ "$status" = 130 ] || fail "keyframe serve ended with status $status on SIGINT: $(cat "$work/serve.log")"
ok "keyframe serve (the installed keyframe-serve, by hand-over): $served files of a package to curl, identical"

# --- peak memory ----------------------------------------------------------------------------------------

# peak_rss_kb LABEL COMMAND...: runs it under /usr/bin/time -v, prints the peak RSS in KiB.
peak_rss_kb() {
    local label=$1; shift
    local log=$work/time-$label.log
    /usr/bin/time -v "$@" >"$work/$label.out" 2>"$log" || fail "$label: $(tail -5 "$log")"
    sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$log"
}

mkdir -p "$CACHE"
hour=$CACHE/hour.m4a
if [ ! -s "$hour" ]; then
    echo "install-check: making a 1-hour M4A ($hour, kept for the next run)"
    ffmpeg -hide_banner -nostdin -loglevel error -y -f lavfi -i sine=f=440:d=3600 -ac 2 -c:a aac -b:a 96k "$hour.tmp.m4a"
    mv "$hour.tmp.m4a" "$hour"
fi
rss_version=$(peak_rss_kb version "$kf" --version)
rss_demux=$(peak_rss_kb demux "$kf" demux "$hour" -o "$work/hour.aac")
packets=$(ffprobe -v error -select_streams a -count_packets -show_entries stream=nb_read_packets -of default=nw=1:nk=1 "$hour")
frames=$(ffprobe -v error -count_packets -show_entries stream=nb_read_packets -of default=nw=1:nk=1 "$work/hour.aac")
[ "$packets" = "$frames" ] || fail "demux of the 1-hour M4A wrote $frames ADTS frames for $packets packets"

mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }
echo
echo "install-check: figures ($CONFIG, $version)"
printf '    %-34s %s\n' "make install (build included):" "$install_seconds s"
for exe in "$kf" "$kfs"; do
    size=$(stat -c %s "$exe")
    stripped=$(strip -o "$work/stripped" "$exe" && stat -c %s "$work/stripped")
    printf '    %-34s %s bytes (%s MiB; %s MiB stripped)\n' "$(basename "$exe") size:" "$size" \
        "$(awk -v b="$size" 'BEGIN { printf "%.1f", b / 1048576 }')" "$(awk -v b="$stripped" 'BEGIN { printf "%.1f", b / 1048576 }')"
done
printf '    %-34s %s KiB (%s)\n' "peak RSS, keyframe --version:" "$rss_version" "$(mib "$rss_version")"
printf '    %-34s %s KiB (%s), %s packets, %s s\n' "peak RSS, demux of a 1-h M4A:" "$rss_demux" "$(mib "$rss_demux")" "$packets" \
    "$(sed -n 's/^[[:space:]]*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time-demux.log")"
over=""
[ "$rss_version" -lt "$RSS_LIMIT_KB" ] || over="$over keyframe --version ($(mib "$rss_version"))"
[ "$rss_demux" -lt "$RSS_LIMIT_KB" ] || over="$over demux of a 1-h M4A ($(mib "$rss_demux"))"

# --- uninstall ------------------------------------------------------------------------------------------

$MAKE --no-print-directory uninstall CONFIG="$CONFIG" PREFIX="$PREFIX" DESTDIR="$root" >/dev/null
left=$(cd "$root" && find . -type f -o -type l)
[ -z "$left" ] || fail "make uninstall left: $left"
ok "make uninstall removed every installed file"

if [ -n "$over" ]; then
    fail "peak RSS over $(mib "$RSS_LIMIT_KB"):$over"
fi
echo "install-check: passed"
