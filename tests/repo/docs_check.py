#!/usr/bin/env python3
"""Docs that do not drift: reruns the commands named in the Markdown files and compares.

A checked block names its command in an HTML comment (invisible on GitHub) and ends with
<!-- /docs-check -->:

    <!-- docs-check: experiments/collectives/table.sh build/sgdsim -->
    | algorithm | ranks | ... |          <- must equal the command's output, line by line
    <!-- /docs-check -->

Code fences (```) inside a block are ignored; a line "..." matches any number of output lines
(for wall times and long listings). Commands run with bash from the repository root;
`build/sgdsim` becomes --bin, and $OUT is a scratch folder whose path is shown as "results" in
the output (so `--out $OUT/demo` prints "results in results/demo").

    <!-- docs-check-runs -->
    ```sh
    build/sgdsim run ...               <- every command line must exit 0 (a tour of the CLI)
    ```
    <!-- /docs-check -->

runs each command (backslash continuations joined, comments skipped) in a scratch folder
that links the repository's top-level folders, so relative paths work and outputs stay there.

usage: tests/repo/docs_check.py [--bin build/sgdsim] [--update] [--list] [--times] [FILE.md ...]
       tests/repo/docs_check.py --print COMMAND [FILE.md ...]
  default files: README.md, docs/**/*.md and every other tracked *.md. --update rewrites each failing block with the fresh
  output (review the diff: it is how a README number is regenerated). Exit 1 on a difference.
  --print prints the body of the block whose command is COMMAND, as checked, and runs nothing:
  the validation ctests read their tables there instead of running the script a second time
  (Docs.Check holds the body equal to a fresh run); exit 1 if no block has it or the body
  elides lines ("...").
"""
import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OPEN = re.compile(r"^<!-- docs-check(-runs)?(?::\s*(.*?))?\s*-->\s*$")
CLOSE = "<!-- /docs-check -->"
BIN_TOKEN = re.compile(r"(?<![\w/.])build/sgdsim(?![\w])")


def markdown_files():
    """README.md, every page under docs/ (tracked or not yet) and every other tracked *.md."""
    found = set()
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "*.md"], check=True,
                             capture_output=True, text=True).stdout.split()
        found |= {os.path.join(ROOT, f) for f in out}
    except (OSError, subprocess.CalledProcessError):
        for d, dirs, files in os.walk(ROOT):
            dirs[:] = [x for x in dirs if not x.startswith(("build", ".", "results"))]
            found |= {os.path.join(d, f) for f in files if f.endswith(".md")}
    for d, _, files in os.walk(os.path.join(ROOT, "docs")):
        found |= {os.path.join(d, f) for f in files if f.endswith(".md")}
    readme = os.path.join(ROOT, "README.md")
    if os.path.exists(readme):
        found.add(readme)
    return sorted(found)


def blocks(path):
    """Yields (start line index, end line index, mode, command) for each marked block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = OPEN.match(lines[i])
        if m:
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == CLOSE), None)
            if end is None:
                raise SystemExit(f"{path}:{i + 1}: docs-check block without {CLOSE}")
            yield i, end, ("runs" if m.group(1) else "output"), (m.group(2) or "")
            i = end
        i += 1


def content(lines):
    """Block lines without code fences and trailing blanks."""
    body = [l.rstrip() for l in lines if not l.lstrip().startswith("```")]
    while body and not body[-1]:
        body.pop()
    while body and not body[0]:
        body.pop(0)
    return body


def matches(pattern, out):
    """Line glob: "..." matches any run of lines."""
    if not pattern:
        return not out
    if pattern[0].strip() == "...":
        return any(matches(pattern[1:], out[k:]) for k in range(len(out) + 1))
    return bool(out) and pattern[0] == out[0] and matches(pattern[1:], out[1:])


def run(cmd, binary, cwd, scratch, timeout_s=300):
    cmd = BIN_TOKEN.sub(binary, cmd)
    env = dict(os.environ, OUT=scratch, SGDSIM=binary)
    p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=cwd, env=env, text=True,
                       capture_output=True, timeout=timeout_s)
    out = p.stdout.replace(scratch, "results")
    return p.returncode, [l.rstrip() for l in out.rstrip("\n").split("\n")], p.stderr


def tour_commands(body):
    cmds, cur = [], ""
    for line in body:
        s = line.strip()
        if not cur and (not s or s.startswith("#")):
            continue
        cur += s[:-1] + " " if s.endswith("\\") else s
        if not s.endswith("\\"):
            cmds.append(cur)
            cur = ""
    return cmds


def check_block(path, lines, start, end, mode, cmd, binary, update):
    where = f"{os.path.relpath(path, ROOT)}:{start + 1}"
    body = content(lines[start + 1:end])
    with tempfile.TemporaryDirectory() as scratch:
        if mode == "runs":
            for top in os.listdir(ROOT):
                if not top.startswith((".", "build", "results")):
                    os.symlink(os.path.join(ROOT, top), os.path.join(scratch, top))
            failed = False
            for c in tour_commands(body):
                rc, _, err = run(c, binary, scratch, scratch)
                if rc != 0:
                    print(f"{where}: `{c}` exited {rc}: {err.strip()[-400:]}")
                    failed = True
            return not failed, None
        rc, out, err = run(cmd, binary, ROOT, scratch)
    if rc != 0:
        print(f"{where}: `{cmd}` exited {rc}: {err.strip()[-400:]}")
        return False, None
    if matches(body, out):
        return True, None
    print(f"{where}: the block differs from the output of `{cmd}`:")
    sys.stdout.writelines(difflib.unified_diff([l + "\n" for l in body], [l + "\n" for l in out],
                                               "docs block", "command output", n=1))
    if not update:
        return False, None
    # Keep the fences and a single "..." elision (same number of lines before and after it).
    raw = lines[start + 1:end]
    fence_open = [l for l in raw[:1] if l.lstrip().startswith("```")]
    fence_close = [l for l in raw[-1:] if l.lstrip().startswith("```")] if len(raw) > 1 else []
    new = out
    if body.count("...") == 1:
        k = body.index("...")
        tail = len(body) - k - 1
        new = out[:k] + ["  ..." if body[k].startswith(" ") else "..."] + (out[-tail:] if tail else [])
    return False, fence_open + new + fence_close


def print_block(cmd, files):
    """Prints the body of the first block whose command is `cmd`; 1 if none or it elides."""
    for path in files:
        lines = open(path, encoding="utf-8").read().split("\n")
        for start, end, mode, c in blocks(path):
            if mode != "output" or c.strip() != cmd.strip():
                continue
            body = content(lines[start + 1:end])
            if any(l.strip() == "..." for l in body):
                print(f"docs-check: the block of `{cmd}` in {os.path.relpath(path, ROOT)} elides "
                      "lines", file=sys.stderr)
                return 1
            print("\n".join(body))
            return 0
    print(f"docs-check: no block runs `{cmd}`", file=sys.stderr)
    return 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "sgdsim"))
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--shard", default="0/1", metavar="K/N",
                    help="check only the blocks whose running number is K modulo N (ctest runs "
                         "the shards in parallel)")
    ap.add_argument("--print", dest="print_cmd", metavar="COMMAND",
                    help="print the checked body of the block whose command is COMMAND")
    ap.add_argument("--times", action="store_true",
                    help="print each checked block's wall time to stderr (slowest last)")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args(argv)
    if a.print_cmd is not None:
        return print_block(a.print_cmd, [os.path.abspath(f) for f in a.files] or markdown_files())
    try:
        shard, shards = (int(x) for x in a.shard.split("/"))
        assert shards >= 1 and 0 <= shard < shards
    except (ValueError, AssertionError):
        ap.error(f"--shard {a.shard}: expected K/N with 0 <= K < N")
    binary = os.path.abspath(a.bin)
    files = [os.path.abspath(f) for f in a.files] or markdown_files()
    checked, bad, number = 0, 0, -1
    times = []
    for path in files:
        lines = open(path, encoding="utf-8").read().split("\n")
        replacements = []
        for start, end, mode, cmd in blocks(path):
            number += 1
            if number % shards != shard:
                continue
            if a.list:
                print(f"{os.path.relpath(path, ROOT)}:{start + 1}: {mode}: {cmd}")
                continue
            began = time.monotonic()
            ok, new = check_block(path, lines, start, end, mode, cmd, binary, a.update)
            times.append((time.monotonic() - began, f"{os.path.relpath(path, ROOT)}:{start + 1}"))
            checked += 1
            bad += not ok
            if new is not None:
                replacements.append((start, end, new))
        for start, end, new in reversed(replacements):
            lines[start + 1:end] = new
        if replacements:
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(lines))
            print(f"docs-check: rewrote {len(replacements)} block(s) of {os.path.relpath(path, ROOT)}")
    for seconds, where in sorted(times) if a.times else []:
        print(f"{seconds:8.2f} s  {where}", file=sys.stderr)
    if not a.list:
        print(f"docs-check: {checked - bad} of {checked} blocks match their commands")
    return 1 if bad and not a.update else 0


if __name__ == "__main__":
    sys.exit(main())
