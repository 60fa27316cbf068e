#!/usr/bin/env python3
"""The test suite leaves nothing in the temporary folders: a ctest fixture around every test.

  tmp_check.py record --tmpdir DIR --state FILE    (FIXTURES_SETUP) empties DIR, the TMPDIR every
                                                   test runs with, and records /tmp's entries
  tmp_check.py compare --tmpdir DIR --state FILE   (FIXTURES_CLEANUP) fails listing what is left:
                                                   anything in DIR, and every /tmp entry named
                                                   sgdsim* that was not there at the start
  tmp_check.py --selftest                          the compare step fails on a planted leftover

Every test runs with TMPDIR=DIR (tests/CMakeLists.txt), so DIR must end empty whatever the name;
/tmp is checked for the names sgdsim and its tests give their files (a test or program that
ignores TMPDIR), not for other programs' files on a shared machine.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

SYSTEM_TMP = "/tmp"
PREFIX = "sgdsim"


def listing(folder):
    try:
        return sorted(os.listdir(folder))
    except FileNotFoundError:
        return []


def record(tmpdir, state, system_tmp=SYSTEM_TMP):
    shutil.rmtree(tmpdir, ignore_errors=True)
    os.makedirs(tmpdir)
    with open(state, "w") as f:
        json.dump({"tmp": listing(system_tmp)}, f)
    return 0


def compare(tmpdir, state, system_tmp=SYSTEM_TMP, out=sys.stdout):
    with open(state) as f:
        before = set(json.load(f)["tmp"])
    left = [os.path.join(tmpdir, n) for n in listing(tmpdir)]
    left += [os.path.join(system_tmp, n) for n in listing(system_tmp)
             if n.startswith(PREFIX) and n not in before]
    for path in left:
        name = os.path.basename(path)
        hint = ""
        if name.startswith("sgdsim-test-") and name[len("sgdsim-test-"):].isdigit():
            hint = (" (the scratch folder of test process " + name[len("sgdsim-test-"):] +
                    ", which ended without removing it: killed, as by a ctest timeout?)")
        print(f"tmp_check: left behind by the tests: {path}{hint}", file=out)
    if left:
        print(f"tmp_check: {len(left)} entries left in the temporary folders", file=out)
        return 1
    print(f"tmp_check: nothing left in {tmpdir} or {system_tmp}", file=out)
    return 0


def selftest():
    with tempfile.TemporaryDirectory() as d:
        tmpdir, fake_tmp, state = (os.path.join(d, n) for n in ("t", "sys", "state.json"))
        os.makedirs(fake_tmp)
        open(os.path.join(fake_tmp, "sgdsim-old"), "w").close()  # there before: not ours
        record(tmpdir, state, fake_tmp)
        sink = open(os.devnull, "w")
        ok = compare(tmpdir, state, fake_tmp, sink) == 0
        open(os.path.join(tmpdir, "tmp.x"), "w").close()
        caught_tmpdir = compare(tmpdir, state, fake_tmp, sink) == 1
        os.remove(os.path.join(tmpdir, "tmp.x"))
        os.makedirs(os.path.join(fake_tmp, "sgdsim-test-1-0-run"))
        open(os.path.join(fake_tmp, "other-program"), "w").close()
        caught_tmp = compare(tmpdir, state, fake_tmp, sink) == 1
    if ok and caught_tmpdir and caught_tmp:
        print("tmp_check selftest: clean passes, a leftover in TMPDIR and in /tmp fail")
        return 0
    print(f"tmp_check selftest failed: clean {ok}, TMPDIR {caught_tmpdir}, /tmp {caught_tmp}")
    return 1


def main():
    if sys.argv[1:] == ["--selftest"]:
        return selftest()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["record", "compare"])
    p.add_argument("--tmpdir", required=True)
    p.add_argument("--state", required=True)
    a = p.parse_args()
    return record(a.tmpdir, a.state) if a.mode == "record" else compare(a.tmpdir, a.state)


if __name__ == "__main__":
    sys.exit(main())
