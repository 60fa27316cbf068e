#!/usr/bin/env python3
"""Docs that fit the site: checks README.md and the pages under docs/ against mkdocs.yml.

- README.md has at most 200 lines (a table of contents into docs/, not the manual);
- no user page (README.md, docs/**/*.md) names a tracker issue ("issue 12") or carries machine
  state or history ("main's binary", "load average", "this machine", "previous session");
- every docs/**/*.md page is in the nav of mkdocs.yml, and every nav entry exists;
- every page of docs/measurements/ but its index gives the date (YYYY-MM-DD), the commit
  (hex) and the command of its numbers, as lines "Date: ...", "Commit: ...", "Command: ...".

usage: tests/repo/docs_lint.py [--root DIR] | --selftest
  --selftest plants one violation of each rule in a scratch copy and requires each reported.
Exit 1 and one line per violation ("FILE:LINE: what") when a rule is broken.
"""
import argparse
import os
import re
import shutil
import sys
import tempfile

import yaml

README_MAX_LINES = 200
BANNED = [(re.compile(r"\bissues?\s+#?\d", re.I), "names a tracker issue"),
          (re.compile(r"main's binary", re.I), "machine state: main's binary"),
          (re.compile(r"load average", re.I), "machine state: a load average"),
          (re.compile(r"\bthis machine\b", re.I), "machine state: this machine"),
          (re.compile(r"previous session", re.I), "history: a previous session"),
          (re.compile(r"^(<{7}|>{7}) ", re.M), "a git merge conflict marker")]
STAMPS = [(re.compile(r"^Date: \d{4}-\d\d-\d\d\b", re.M), "Date: YYYY-MM-DD"),
          (re.compile(r"^Commit: [0-9a-f]{7,40}\b", re.M), "Commit: <hex>"),
          (re.compile(r"^Command: ", re.M), "Command: ...")]


def pages(root):
    """docs/**/*.md relative to docs/, sorted."""
    docs = os.path.join(root, "docs")
    out = []
    for d, dirs, files in os.walk(docs):
        dirs.sort()
        out += [os.path.relpath(os.path.join(d, f), docs) for f in files if f.endswith(".md")]
    return sorted(out)


def nav_files(nav):
    """Every file named in a MkDocs nav (nested lists of {title: file or list})."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [f for item in nav for f in nav_files(item)]
    if isinstance(nav, dict):
        return [f for v in nav.values() for f in nav_files(v)]
    return []


def lint(root):
    problems = []
    readme = os.path.join(root, "README.md")
    with open(readme, encoding="utf-8") as f:
        n = len(f.read().splitlines())
    if n > README_MAX_LINES:
        problems.append(f"README.md:{n}: {n} lines, at most {README_MAX_LINES}")
    for rel in ["README.md"] + [os.path.join("docs", p) for p in pages(root)]:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        for i, line in enumerate(text.split("\n"), 1):
            problems += [f"{rel}:{i}: {why}" for rx, why in BANNED if rx.search(line)]
        base = os.path.basename(rel)
        if rel.startswith(os.path.join("docs", "measurements", "")) and base != "index.md":
            problems += [f"{rel}:1: no line {want}" for rx, want in STAMPS if not rx.search(text)]
    with open(os.path.join(root, "mkdocs.yml"), encoding="utf-8") as f:
        nav = nav_files(yaml.safe_load(f).get("nav", []))
    on_disk = set(pages(root))
    problems += [f"docs/{p}:1: not in the nav of mkdocs.yml" for p in sorted(on_disk - set(nav))]
    problems += [f"mkdocs.yml:1: nav names {p}, which is not in docs/" for p in nav
                 if p not in on_disk and not re.match(r"^[a-z]+://", p)]
    return problems


def selftest():
    """Each planted violation is reported, and a clean copy passes."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "docs", "measurements"))
        shutil.copy(os.path.join(here, "mkdocs.yml"), d)
        with open(os.path.join(d, "mkdocs.yml"), "w") as f:
            f.write("nav:\n  - Home: index.md\n  - M: measurements/bench.md\n")
        stamp = "Date: 2026-12-02\nCommit: 8e71277\nCommand: `make bench`\n"
        files = {"README.md": "# x\n", "docs/index.md": "# Home\n",
                 "docs/measurements/bench.md": "# Bench\n" + stamp}
        for rel, text in files.items():
            with open(os.path.join(d, rel), "w") as f:
                f.write(text)
        if lint(d):
            print("selftest: a clean tree fails:", lint(d))
            return 1
        plants = [("README.md", "# x\n" + "line\n" * README_MAX_LINES, "lines, at most"),
                  ("docs/index.md", "# Home\nAs issue 12 asked.\n", "tracker issue"),
                  ("docs/index.md", "# Home\nFaster than main's binary.\n", "main's binary"),
                  ("docs/index.md", "# Home\nAt a load average of 7.\n", "load average"),
                  ("docs/index.md", "# Home\n<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> b\n",
                   "conflict marker"),
                  ("docs/orphan.md", "# Orphan\n", "not in the nav"),
                  ("docs/measurements/bench.md", "# Bench\nDate: 2026-12-02\nCommand: x\n",
                   "Commit:")]
        for rel, text, want in plants:
            path = os.path.join(d, rel)
            old = open(path).read() if os.path.exists(path) else None
            with open(path, "w") as f:
                f.write(text)
            found = lint(d)
            if not any(want in p for p in found):
                print(f"selftest: planted {rel!r} ({want}) not reported: {found}")
                return 1
            if old is None:
                os.remove(path)
            else:
                with open(path, "w") as f:
                    f.write(old)
    print(f"selftest: docs_lint.py reports each of {len(plants)} planted violations")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args(argv)
    if a.selftest:
        return selftest()
    problems = lint(a.root)
    for p in problems:
        print(p)
    print(f"docs_lint: {len(problems)} problem(s) in README.md, docs/ and mkdocs.yml")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
