#!/usr/bin/env python3
"""Public symbols of the library modules that have no doc comment.

    python3 scripts/doc-coverage.py [--no-dump] [--symbol-graphs DIR] [FILE-PREFIX ...]

Runs `swift package dump-symbol-graph --minimum-access-level public` (unless --no-dump), reads the
symbol graphs of the library modules (not the tests, the fuzz driver or the C shims), and prints
`path:line: kind name` for each public symbol declared in Sources/ without a `///` comment.
Synthesized members (Equatable's `!=`, an OptionSet's set algebra, ...) and members inherited from
protocols declared elsewhere are not ours to document and are left out. With FILE-PREFIX
arguments, only symbols declared under those paths are listed.

The exit status is 1 when a symbol is listed, 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

sys.dont_write_bytecode = True

ROOT = Path(__file__).resolve().parent.parent
MODULES = ["MediaCore", "AACBitstream", "PCMAudio", "VideoBitstream", "MP4", "MediaFormats", "MediaStreaming", "MediaValidation", "AudioCodec", "AudioIO",
           "KeyFrameKit", "HLSServer", "Publishing", "MPEGTS", "RTMP"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-dump", action="store_true", help="use the symbol graphs already in .build")
    parser.add_argument("--symbol-graphs", type=Path, help="where the *.symbols.json files are")
    parser.add_argument("prefixes", nargs="*", help="only symbols declared under these paths (from the package root)")
    args = parser.parse_args()

    if not args.no_dump:
        subprocess.run(["swift", "package", "dump-symbol-graph", "--minimum-access-level", "public"],
                       cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    directory = args.symbol_graphs
    if directory is None:
        found = sorted(ROOT.glob(".build/*/symbolgraph"))
        if not found:
            print("no symbol graphs under .build/*/symbolgraph", file=sys.stderr)
            return 2
        directory = found[0]

    missing: list[tuple[str, int, str, str]] = []
    seen: set[str] = set()
    for module in MODULES:
        # The module's own graph plus its extensions of other modules' types (Module@Other).
        for graph in [directory / f"{module}.symbols.json", *sorted(directory.glob(f"{module}@*.symbols.json"))]:
            if not graph.exists():
                continue
            for symbol in json.loads(graph.read_text())["symbols"]:
                precise = symbol["identifier"]["precise"]
                if "::SYNTHESIZED::" in precise or precise in seen:
                    continue
                seen.add(precise)
                if symbol.get("accessLevel") not in ("public", "open") or symbol.get("docComment"):
                    continue
                location = symbol.get("location")
                if not location:
                    continue
                path = Path(unquote(urlparse(location["uri"]).path))
                try:
                    relative = path.resolve().relative_to(ROOT)
                except ValueError:
                    continue  # declared outside the package: inherited, not ours
                if relative.parts[0] != "Sources":
                    continue
                if args.prefixes and not any(str(relative).startswith(prefix) for prefix in args.prefixes):
                    continue
                kind = symbol["kind"]["displayName"]
                name = ".".join(symbol["pathComponents"])
                missing.append((str(relative), location["position"]["line"] + 1, kind, name))

    for path, line, kind, name in sorted(missing):
        print(f"{path}:{line}: {kind} {name}")
    print(f"{len(missing)} public symbol(s) without a doc comment", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
