#!/usr/bin/env python3
"""Every measurement set under data/ is listed in its SOURCES.md and parses.

A set is a folder of data/calibration/ or data/validation/ (licenses/ holds licence texts,
not a set). Its SOURCES.md must have a heading "## <folder>/ ..."; a folder without one fails,
and so does a heading without a folder. Then every file of a set must read as what it is:
nccl-tests logs through `sgdsim trace --format nccl-tests` (a log without rank lines gets its
ranks from RANKS below), OSU allreduce logs through `--format osu` (ranks from a trailing
number of the file name), CSV files as a header and rows of
that many cells with a number in every column whose name carries a unit or count.

usage: tests/repo/data_check.py SGDSIM [DATA_DIR]     (default DATA_DIR: the checkout's data/)
"""
import csv
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# nccl-tests tables quoted without their "# Rank" lines: ranks from the source's description.
RANKS = {"nccl-sockets-100gbe-v100/issue-450-comment-2021-01-06.txt": 32}
# Columns that must hold numbers, by a unit or count in their name.
PARSED = []  # logs read through sgdsim trace
NUMERIC = re.compile(r"(_bytes|_Gbps|_GBps|_per_s|^gpus|^nodes|^servers|_per_node|_per_server"
                     r"|_perthread|_nthreads|speedup)")


def sets(data):
    """(kind folder, set name) of every set."""
    for kind in ("calibration", "validation"):
        base = os.path.join(data, kind)
        for name in sorted(os.listdir(base)):
            if os.path.isdir(os.path.join(base, name)) and name != "licenses":
                yield kind, name


def listed(sources):
    """Set names that SOURCES.md gives a heading."""
    return {m.group(1) for m in re.finditer(r"^## ([\w.-]+)/", open(sources).read(), re.M)}


def check_sources(data):
    errors = []
    for kind in ("calibration", "validation"):
        sources = os.path.join(data, kind, "SOURCES.md")
        names = {n for k, n in sets(data) if k == kind}
        heads = listed(sources)
        errors += [f"{kind}/{n}/ has no '## {n}/' entry in {kind}/SOURCES.md"
                   for n in sorted(names - heads)]
        errors += [f"{kind}/SOURCES.md lists {n}/, which is not a folder"
                   for n in sorted(heads - names)]
    return errors


def nccl_tests(path):
    with open(path, errors="replace") as f:
        text = f.read()
    return "out-of-place" in text and re.search(r"^\s*\d+\s+\d+\s+float\s", text, re.M)


def check_file(sgdsim, data, kind, name, path):
    rel = os.path.relpath(path, os.path.join(data, kind))
    if path.endswith(".csv"):
        rows = list(csv.reader(open(path)))
        if len(rows) < 2:
            return [f"{rel}: no rows"]
        errors = [f"{rel}: row {i + 1} has {len(r)} cells, the header {len(rows[0])}"
                  for i, r in enumerate(rows[1:], 1) if len(r) != len(rows[0])]
        for c, col in enumerate(rows[0]):
            if NUMERIC.search(col):
                for i, r in enumerate(rows[1:], 1):
                    try:
                        float(r[c])
                    except (ValueError, IndexError):
                        errors.append(f"{rel}: row {i + 1}, column {col}: not a number")
        return errors
    if not path.endswith((".log", ".txt")):
        return []
    if nccl_tests(path):
        args = [sgdsim, "trace", path, "--format", "nccl-tests", "--json"]
        if rel in RANKS:
            args += ["--ranks", str(RANKS[rel])]
    elif "# OSU MPI Allreduce" in open(path, errors="replace").read():
        # B-Caffe's allreduceN.log: N ranks, one per node.
        ranks = re.search(r"(\d+)\.log$", path)
        args = [sgdsim, "trace", path, "--format", "osu", "--json"]
        args += ["--ranks", ranks.group(1)] if ranks else []
    else:
        return []
    PARSED.append(rel)
    p = subprocess.run(args, capture_output=True, text=True)
    return [] if p.returncode == 0 else [f"{rel}: {p.stderr.strip()}"]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sgdsim = sys.argv[1]
    data = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "data")
    errors = check_sources(data)
    checked = 0
    for kind, name in sets(data):
        for folder, _, files in os.walk(os.path.join(data, kind, name)):
            for f in sorted(files):
                errors += check_file(sgdsim, data, kind, name, os.path.join(folder, f))
                checked += 1
    for e in errors:
        print(e)
    print(f"{checked} files in {len(list(sets(data)))} sets ({len(PARSED)} logs read by sgdsim "
          f"trace), {len(errors)} problems")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
