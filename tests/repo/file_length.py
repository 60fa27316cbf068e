#!/usr/bin/env python3
"""No source file in sim/ or models/ (.cpp, .hpp) is longer than --max lines (default 620): one
concept per file keeps files under about 600 lines, and the margin lets a file that holds one
concept grow a little before it has to be split, not a second concept move in.

usage: file_length.py ROOT [--max N]   (exit 1 and one line per long file)
       file_length.py --selftest       (shows the check fails on a planted long file)
"""
import pathlib
import sys
import tempfile

DEFAULT_MAX = 620


def check(root, limit):
    found = []
    for base in ("sim", "models"):
        for p in sorted((root / base).rglob("*")):
            if p.suffix not in (".cpp", ".hpp"):
                continue
            n = len(p.read_text().splitlines())
            if n > limit:
                found.append((n, p.relative_to(root).as_posix()))
    for n, where in sorted(found, reverse=True):
        print(f"file_length: {where}: {n} lines (max {limit}): split it, one concept per file")
    return 1 if found else 0


def selftest():
    with tempfile.TemporaryDirectory() as d:
        root = pathlib.Path(d)
        (root / "sim/x").mkdir(parents=True)
        (root / "models/learn").mkdir(parents=True)
        (root / "sim/x/ok.cpp").write_text("int x;\n" * DEFAULT_MAX)
        (root / "sim/x/notes.txt").write_text("text\n" * (2 * DEFAULT_MAX))
        if check(root, DEFAULT_MAX) != 0:
            print(f"selftest: a {DEFAULT_MAX}-line file (or a non-source file) was refused")
            return 1
        (root / "models/learn/long.hpp").write_text("int y;\n" * (DEFAULT_MAX + 1))
        if check(root, DEFAULT_MAX) == 0:
            print(f"selftest: a planted {DEFAULT_MAX + 1}-line header was not found")
            return 1
    print(f"selftest: file_length.py finds a planted {DEFAULT_MAX + 1}-line file")
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if args == ["--selftest"]:
        sys.exit(selftest())
    limit = int(args[args.index("--max") + 1]) if "--max" in args else DEFAULT_MAX
    sys.exit(check(pathlib.Path(args[0] if args else "."), limit))
