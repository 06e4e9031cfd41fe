#!/usr/bin/env python3
"""Checks that each target of Package.swift declares what its files import, and imports what it
declares: a module imported but reached only through another dependency, or a dependency no file
imports, fails the check. A dependency kept on purpose (DocC resolves a symbol link only into a
direct dependency) is listed in KEPT with the reason.

Usage: scripts/check-imports.py [PACKAGE.json]   (default: runs `swift package dump-package`)
"""
import json
import os
import re
import subprocess
import sys

# The platform's and the toolchain's modules: not package dependencies.
SYSTEM = {
    "Foundation", "FoundationEssentials", "FoundationNetworking", "CoreFoundation", "Glibc", "Musl",
    "Darwin", "Android", "WinSDK", "ucrt", "Synchronization", "Dispatch", "_Concurrency", "Testing",
    "XCTest", "os", "RegexBuilder", "Observation",
}

# (target, dependency): why a dependency no file imports is declared.
KEPT = {
    ("MediaStreaming", "MP4"): "DocC links such as ``/MP4/MP4Muxer`` resolve only into a direct dependency",
}

# `import X`, `public import X`, `@_exported import X`, `import struct X.Y`: a top-level line
# (code quoted in a string, such as a Python snippet, is indented and not matched).
IMPORT = re.compile(
    r"^(?:@\w+\s+)*(?:(?:public|package|internal|private|fileprivate)\s+)?import\s+"
    r"(?:(?:struct|class|enum|func|protocol|typealias|var|let)\s+)?([A-Za-z_]\w*)")


def dependencies(target):
    names = set()
    for dependency in target["dependencies"]:
        for kind in ("byName", "target", "product"):
            if kind in dependency:
                names.add(dependency[kind][0])
    return names


def imports(path):
    found = set()
    for root, _, files in os.walk(path):
        for name in files:
            if name.endswith(".swift"):
                with open(os.path.join(root, name), encoding="utf-8", errors="replace") as file:
                    for line in file:
                        match = IMPORT.match(line)
                        if match:
                            found.add(match.group(1))
    return found


def main():
    if len(sys.argv) > 1:
        with open(sys.argv[1]) as file:
            package = json.load(file)
    else:
        package = json.loads(subprocess.run(["swift", "package", "dump-package"], check=True,
                                            capture_output=True, text=True).stdout)
    problems = []
    for target in package["targets"]:
        name = target["name"]
        if target["type"] in ("system", "binary", "plugin"):
            continue
        path = target.get("path") or os.path.join("Tests" if target["type"] == "test" else "Sources", name)
        if not os.path.isdir(path):
            continue
        declared = dependencies(target)
        used = imports(path) - SYSTEM
        for module in sorted(used - declared - {name}):
            problems.append(f"{name}: imports {module}, which it does not declare")
        for module in sorted(declared - used):
            if (name, module) not in KEPT:
                problems.append(f"{name}: declares {module}, which no file of it imports")
    for problem in problems:
        print(f"check-imports: {problem}")
    if problems:
        return 1
    print(f"check-imports: every import of {len(package['targets'])} targets is declared, every dependency imported")
    return 0


if __name__ == "__main__":
    sys.exit(main())
