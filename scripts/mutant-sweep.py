#!/usr/bin/env python3
"""Seeded mutants of six kinds of input through probe, validate, decode and demux.

    scripts/mutant-sweep.py KEYFRAME [--count 300] [--seed 1] [--out DIR]

Makes one clean input of each kind with ffmpeg and KEYFRAME (an HLS media playlist with its
segments, a DASH MPD with its segments, an M4A, a fragmented M4A, ADTS, WAV), then COUNT
mutants of each, seeded so that a run can be repeated: bytes flipped, runs overwritten with
0x00/0xFF/random bytes, bytes inserted and deleted, a chunk duplicated, the file cut short; a
playlist or an MPD is mutated as text (lines dropped, duplicated, swapped, numbers changed)
or as bytes, its segments left whole. Each mutant goes through the four commands, each run
with a 10 s limit, its peak resident set taken from wait4(2).

A run fails on a trap (a signal: SIGILL, SIGTRAP, SIGSEGV, SIGABRT, SIGBUS, SIGFPE), on a
command still running after 10 s, or on a peak over 200 MB; each failing mutant is kept in
OUT/findings with the command that failed on it. Exit status 1 when any run failed.
"""
import argparse, os, random, re, resource, shutil, signal, subprocess, sys, tempfile, time

LIMIT_SECONDS = 10
LIMIT_RSS_KB = 200 * 1024
COMMANDS = ("probe", "validate", "decode", "demux")


def run(argv, cwd=None):
    """Runs argv with the time limit; (status or -signal or None on timeout, peak KB, seconds)."""
    started = time.monotonic()
    child = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = started + LIMIT_SECONDS
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
            return code, usage.ru_maxrss, time.monotonic() - started
        if time.monotonic() > deadline:
            os.killpg(child.pid, signal.SIGKILL)
            _, _, usage = os.wait4(child.pid, 0)
            return None, usage.ru_maxrss, time.monotonic() - started
        time.sleep(0.005)


def make_inputs(keyframe, folder):
    def ffmpeg(*args):
        subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args], check=True)
    wav = os.path.join(folder, "clean.wav")
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=4", "-ac", "2", wav)
    for arguments in (["encode", wav, "-o", os.path.join(folder, "clean.m4a")],
                      ["encode", wav, "-o", os.path.join(folder, "clean-fragmented.m4a"), "--fragmented"],
                      ["encode", wav, "-o", os.path.join(folder, "clean.aac")],
                      ["package", wav, "--hls", os.path.join(folder, "hls"), "--dash", "--segment-duration", "1"]):
        subprocess.run([keyframe, *arguments], check=True, stdout=subprocess.DEVNULL)
    mpds = [n for n in os.listdir(os.path.join(folder, "hls")) if n.endswith(".mpd")]
    return {
        "hls": os.path.join(folder, "hls", "index.m3u8"),
        "dash": os.path.join(folder, "hls", mpds[0]),
        "m4a": os.path.join(folder, "clean.m4a"),
        "fragmented": os.path.join(folder, "clean-fragmented.m4a"),
        "adts": os.path.join(folder, "clean.aac"),
        "wav": wav,
    }


def mutate_bytes(data, rng):
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if not data:
            data += bytes(rng.randrange(256) for _ in range(8))
        kind = rng.randrange(7)
        at = rng.randrange(len(data))
        if kind == 0:
            for _ in range(rng.randint(1, 16)):
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        elif kind == 1:
            span = rng.randint(1, 8)
            data[at:at + span] = bytes([rng.choice((0x00, 0xFF, 0x7F, 0x80))]) * span
        elif kind == 2:
            span = rng.randint(1, 64)
            data[at:at + span] = bytes(rng.randrange(256) for _ in range(span))
        elif kind == 3:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 32)))
        elif kind == 4:
            del data[at:at + rng.randint(1, 64)]
        elif kind == 5:
            span = rng.randint(8, 4096)
            data[at:at] = data[rng.randrange(len(data)):][:span]
        else:
            del data[rng.randint(0, len(data)):]
    return bytes(data)


def mutate_text(text, rng):
    lines = text.split("\n")
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(5)
        at = rng.randrange(len(lines))
        if kind == 0 and len(lines) > 1:
            del lines[at]
        elif kind == 1:
            lines[at:at] = [lines[rng.randrange(len(lines))]] * rng.choice((1, 2, 50, 5000))
        elif kind == 2:
            other = rng.randrange(len(lines))
            lines[at], lines[other] = lines[other], lines[at]
        elif kind == 3:
            lines[at] = re.sub(r"\d+", lambda m: rng.choice(("0", "-1", "4294967296", "99999999999999999999", m.group(0) * 3)),
                               lines[at], count=1)
        else:
            lines[at] = rng.choice(("", "/", "..", "folder", "/dev/zero", "#EXT-X-MAP:URI=\"/\"", "segment-00001.m4s", lines[at] + lines[at]))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("keyframe")
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default="mutants-out")
    options = parser.parse_args()
    keyframe = os.path.abspath(options.keyframe)
    out = os.path.abspath(options.out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "findings"))
    inputs = make_inputs(keyframe, out)
    failures = []
    totals = {}
    for kind, clean in inputs.items():
        data = open(clean, "rb").read()
        folder = os.path.dirname(clean)
        extension = os.path.splitext(clean)[1]
        worst_rss, worst_seconds, runs = 0, 0.0, 0
        for number in range(options.count):
            rng = random.Random(f"{options.seed}-{kind}-{number}")
            if kind in ("hls", "dash") and rng.random() < 0.7:
                mutant = mutate_text(data.decode("utf-8", "replace"), rng).encode()
            else:
                mutant = mutate_bytes(data, rng)
            path = os.path.join(folder, f"mutant{extension}")
            with open(path, "wb") as handle:
                handle.write(mutant)
            for command in COMMANDS:
                argv = [keyframe, command, path]
                if command == "decode":
                    argv += ["-o", os.path.join(out, "decoded.wav")]
                elif command == "demux":
                    argv += ["-o", os.path.join(out, "demuxed.aac")]
                code, rss, seconds = run(argv)
                runs += 1
                worst_rss, worst_seconds = max(worst_rss, rss), max(worst_seconds, seconds)
                problem = None
                if code is None:
                    problem = f"still running after {LIMIT_SECONDS} s"
                elif code < 0:
                    problem = f"ended by signal {-code}"
                elif rss > LIMIT_RSS_KB:
                    problem = f"peak resident set {rss // 1024} MB"
                if problem:
                    kept = os.path.join(out, "findings", f"{kind}-{number}{extension}")
                    shutil.copy(path, kept)
                    failures.append(f"{kind} mutant {number} ({kept}): {command}: {problem}")
                    print(failures[-1], flush=True)
            for name in ("decoded.wav", "demuxed.aac"):
                try:
                    os.unlink(os.path.join(out, name))
                except FileNotFoundError:
                    pass
        totals[kind] = (runs, worst_rss, worst_seconds)
        print(f"{kind}: {options.count} mutants, {runs} runs, peak {worst_rss // 1024} MB, slowest {worst_seconds:.2f} s", flush=True)
    print(f"mutants: {len(failures)} failing runs of {sum(t[0] for t in totals.values())}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
