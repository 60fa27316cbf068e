#!/usr/bin/env python3
"""`sgdsim schema` validates every example scenario (and the scenario.resolved.json sgdsim
writes for each) and rejects bad ones: an unknown key, a misspelt choice, a wrong type.

usage: schema_check.py BIN   (BIN: the sgdsim binary; exit 1 on any failure)
"""
import copy
import glob
import json
import os
import subprocess
import sys
import tempfile

import jsonschema

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(binary):
    schema = json.loads(subprocess.run([binary, "schema"], check=True, capture_output=True,
                                       text=True).stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    failures = []
    examples = sorted(glob.glob(os.path.join(ROOT, "experiments/examples/*.json")))
    with tempfile.TemporaryDirectory() as out:
        for path in examples:
            scenario = json.load(open(path))
            for e in validator.iter_errors(scenario):
                failures.append(f"{os.path.basename(path)}: {e.json_path}: {e.message}")
            # The resolved scenario has every default filled in: all of it must be declared.
            name = os.path.splitext(os.path.basename(path))[0]
            subprocess.run([binary, "run", path, "--out", os.path.join(out, name), "--quiet",
                            "--set", "iterations=3", "--set", "warmup_iterations=1"],
                           check=True, cwd=ROOT, capture_output=True)
            resolved = json.load(open(os.path.join(out, name, "scenario.resolved.json")))
            for e in validator.iter_errors(resolved):
                failures.append(f"{name} resolved: {e.json_path}: {e.message}")
    base = json.load(open(os.path.join(ROOT, "experiments/examples/13-ssp.json")))
    bad = {"unknown key": ("scheme", "stalenes", 2), "misspelt choice": ("scheme", "type", "SSP"),
           "wrong type": ("workers", "count", "eight"),
           "unit missing": ("collective", "chunk_bytes", "1 megabyte")}
    for what, (section, key, value) in bad.items():
        s = copy.deepcopy(base)
        s.setdefault(section, {})[key] = value
        if validator.is_valid(s):
            failures.append(f"a scenario with a {what} ({section}.{key} = {value!r}) validates")
    for f in failures:
        print("schema_check:", f)
    print(f"schema_check: {len(examples)} examples and their resolved scenarios validate, "
          f"{len(bad)} bad ones are rejected" if not failures else "schema_check: FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/sgdsim")))
