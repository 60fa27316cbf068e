#!/usr/bin/python3
"""Runs the settings of experiments/studies/families.json cell by cell, resumably.

usage: families.py [--sgdsim build/sgdsim] [--out results/families] [-j 2]
                   [--cells mlp-16,mlp-64,cnn-16,cnn-64] [--settings NAME,...] [--dry-run]

A cell is one training model x one (workers, batch) pair of the sweep file's grid and zip;
its platforms are the grid's bandwidths (10Gbps, 100Gbps). Every run goes to
OUT/<cell>/<platform>/<setting>/seed-N (the layout accuracy_table.py reads) and is skipped
when that folder holds summary.json; a run is written to seed-N.tmp and renamed only when it
succeeded, so an interrupted runner loses only the runs in flight: re-run the same command.
Each run's CPU time (user + system, seconds) is written to its folder as `cpu_s`.
--settings runs only the named settings, in that order (default: all, in the sweep's order).

The saving (declared in families_study.md): a setting whose math does not depend on the
timing (all but TIMING_DEPENDENT) trains on the first platform only; on the others it gets
one clock run (seed 1, the softmax proxy, which changes nothing in the timing) into
OUT/<cell>/<platform>-clock/<setting>/seed-1, and families_table.py reads the time of each
iteration there. In the CHECK_CELL, the CHECK settings also train at seed 1 on the other
platforms, so that families_table.py --check can compare the files byte for byte.
RANKING_ONLY settings run only in the RANKING (cell, platform) pairs.
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SWEEP = os.path.join(HERE, "..", "studies", "families.json")
TIMING_DEPENDENT = {"adpsgd-ring", "async-16"}
RANKING_ONLY = {"pseudo_sync-arrses", "async-16"}
# The ranking's cell, and its fallback if the first has not run in full (families_study.md).
RANKING = [("mlp-64", "10gbps"), ("mlp-16", "10gbps")]
CHECK_CELL = "mlp-16"
CHECK = {"sync", "topk-ef", "powersgd-2", "dpsgd-ring", "diloco-8"}
CLOCK_MODEL = {"type": "softmax"}


def load_sweep(path=SWEEP):
    """(base scenario path, cells {name: overrides}, platforms {name: overrides}, settings,
    seeds)."""
    sweep = json.load(open(path))
    base = os.path.normpath(os.path.join(os.path.dirname(path), sweep["base"]))
    zipped = sweep["zip"]
    pairs = list(zip(zipped["workers.count"], zipped["batch_size"]))
    cells = {}
    for model in sweep["grid"]["training.model"]:
        for workers, batch in pairs:
            cells[f"{model['type']}-{workers}"] = {
                "training.model": model, "workers.count": workers, "batch_size": batch}
    bandwidths = sweep["grid"]["platform.generate.node_link.bandwidth"]
    platforms = {b.lower(): {"platform.generate.node_link.bandwidth": b} for b in bandwidths}
    settings = {s["name"]: s for s in sweep["list"]}
    seeds = list(range(1, sweep.get("repeat", 1) + 1))
    return base, cells, platforms, settings, seeds


def set_args(overrides):
    args = []
    for key, value in overrides.items():
        text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
        args += ["--set", f"{key}={text}"]
    return args


def jobs_for_cell(cell, cells, platforms, settings, seeds):
    """[(run dir, overrides, seed)] of one cell in the declared order."""
    first, *others = platforms
    jobs = []
    for platform in platforms:
        for name, setting in settings.items():
            if name in RANKING_ONLY and (cell, platform) not in RANKING:
                continue
            over = {**cells[cell], **platforms[platform], **setting}
            trains = platform == first or name in TIMING_DEPENDENT
            if trains:
                jobs += [(f"{cell}/{platform}/{name}/seed-{s}", over, s) for s in seeds]
                continue
            clock = {**over, "training.model": CLOCK_MODEL}
            jobs.append((f"{cell}/{platform}-clock/{name}/seed-1", clock, 1))
            if cell == CHECK_CELL and name in CHECK:
                jobs.append((f"{cell}/{platform}/{name}/seed-1", over, 1))
    return jobs


def run_all(jobs, sgdsim, base, out, parallel, dry_run):
    todo = [j for j in jobs if not os.path.isfile(os.path.join(out, j[0], "summary.json"))]
    print(f"{len(jobs) - len(todo)} of {len(jobs)} runs done, {len(todo)} to run", flush=True)
    if dry_run:
        for d, _, _ in todo:
            print(d)
        return 0
    running, failed = {}, 0
    while todo or running:
        while todo and len(running) < parallel:
            d, over, seed = todo.pop(0)
            final = os.path.join(out, d)
            tmp = final + ".tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            os.makedirs(os.path.dirname(final), exist_ok=True)
            cmd = ["nice", "-n", "19", sgdsim, "run", base, "--out", tmp, "--quiet",
                   "--set", f"seed={seed}"] + set_args(over)
            running[subprocess.Popen(cmd).pid] = (final, tmp)
        pid, status, usage = os.wait4(-1, 0)
        final, tmp = running.pop(pid)
        if status == 0 and os.path.isfile(os.path.join(tmp, "summary.json")):
            with open(os.path.join(tmp, "cpu_s"), "w") as f:
                f.write(f"{usage.ru_utime + usage.ru_stime:.2f}\n")
            os.rename(tmp, final)
            print(f"done {final} ({usage.ru_utime + usage.ru_stime:.1f} s CPU)", flush=True)
        else:
            failed += 1
            print(f"FAILED {final} (status {status}); outputs in {tmp}", flush=True)
    return 1 if failed else 0


def main(argv):
    opts = {"--sgdsim": "build/sgdsim", "--out": "results/families", "-j": "2",
            "--cells": "mlp-16,mlp-64,cnn-16,cnn-64", "--settings": ""}
    dry_run = "--dry-run" in argv
    argv = [a for a in argv if a != "--dry-run"]
    if len(argv) % 2 or any(a not in opts for a in argv[::2]):
        sys.exit(__doc__)
    opts.update(zip(argv[::2], argv[1::2]))
    base, cells, platforms, settings, seeds = load_sweep()
    if opts["--settings"]:
        names = opts["--settings"].split(",")
        unknown = [n for n in names if n not in settings]
        if unknown:
            sys.exit(f"families.py: unknown setting {unknown[0]}; expected one of "
                     f"{', '.join(settings)}")
        settings = {n: settings[n] for n in names}
    jobs = []
    for cell in opts["--cells"].split(","):
        if cell not in cells:
            sys.exit(f"families.py: unknown cell {cell}; expected one of {', '.join(cells)}")
        jobs += jobs_for_cell(cell, cells, platforms, settings, seeds)
    return run_all(jobs, opts["--sgdsim"], base, opts["--out"], int(opts["-j"]), dry_run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
