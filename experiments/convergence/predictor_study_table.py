#!/usr/bin/python3
"""Tables and the pre-declared decision rule of the predictor study (predictor_study.md).

usage: predictor_study_table.py --spec predictor_study_grid.json SWEEP_DIR...
Every ok run of the sweeps' results.jsonl is assigned to its setting (the spec's `settings`
entry all of whose values it has, the most specific one) and to its cell (its other swept
values except the seed). Per cell and setting: final test accuracy over seeds, mean +- the
half-width of the 95 % Student-t interval, and the gap to the reference (sync) and to the
baseline (none), paired by seed; a run diverged when its final accuracy is at most 20 % or its
loss is not finite. Time to the target (0.8) is the first evaluation at or above it in the run's
convergence.csv, in simulated seconds (a seed that never reaches it counts as infinite).
The rule: among the settings other than the reference that never diverge in a cell where no
seed of the reference diverged and are never below the baseline beyond the interval (the paired
interval's upper end < 0), the default is the one with the largest worst-cell mean gap to the
reference; gaps within 0.25 points of the best tie, and ties go to the smallest worst-cell
mean time to the target over the cells where every reference seed reached it.
"""
import csv
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from accuracy_table import interval  # noqa: E402

TIE_POINTS = 0.25


def setting_of(params, settings):
    best, size = None, -1
    for name, values in settings.items():
        if all(params.get(k) == v for k, v in values.items()) and len(values) > size:
            best, size = name, len(values)
    return best


def time_to(run_dir, target):
    path = os.path.join(run_dir, "convergence.csv")
    if not os.path.exists(path):
        return math.inf
    with open(path) as f:
        for row in csv.DictReader(f):
            if float(row["accuracy"]) >= target:
                return float(row["time_s"])
    return math.inf


def load(dirs, spec):
    """{cell: {setting: {seed: (accuracy %, diverged, time to target s)}}}."""
    keys = set()
    for values in spec["settings"].values():
        keys.update(values)
    cells = {}
    for d in dirs:
        with open(os.path.join(d, "results.jsonl")) as f:
            for line in f:
                r = json.loads(line)
                if r.get("status") != "ok":
                    continue
                p = r["params"]
                setting = setting_of(p, spec["settings"])
                cell = tuple(sorted((k, v) for k, v in p.items() if k not in keys and k != "seed"))
                t = r["training"]
                acc = 100 * (t.get("final_accuracy") or 0.0)
                loss = t.get("final_loss")
                diverged = acc <= 20 or loss is None or not math.isfinite(loss)
                tt = time_to(os.path.join(d, "runs", r["run"]), spec["target_accuracy"])
                seed = p.get("seed", r.get("seed"))
                cells.setdefault(cell, {}).setdefault(setting, {})[seed] = (acc, diverged, tt)
    return cells


def paired(a, b):
    return [a[s][0] - b[s][0] for s in sorted(set(a) & set(b))]


def show(values, sign=False):
    mean, half = interval(values)
    text = f"{mean:+.2f}" if sign else f"{mean:.2f}"
    return text + (f" ± {half:.2f}" if half is not None else "")


def cell_name(cell):
    short = {"training.model.type": "", "training.dataset": "", "batch_size": "b",
             "workers.count": "w", "training.learning_rate": "lr", "training.momentum": "m",
             "iterations": "it"}
    return " ".join(f"{short.get(k, k + '=')}{v}" for k, v in cell)


def summarize(cells, spec):
    ref, base = spec["reference"], spec["baseline"]
    rows = {}
    for name in spec["settings"]:
        if name == ref:
            continue
        r = {"diverged": 0, "below": 0, "worst": math.inf, "worst_cell": None, "gaps": [],
             "time": 0.0, "cells": 0, "timed": 0, "reached": 0, "below_cells": []}
        for cell, by in cells.items():
            if name not in by or ref not in by:
                continue
            r["cells"] += 1
            runs, sync = by[name], by[ref]
            if not any(v[1] for v in sync.values()) and any(v[1] for v in runs.values()):
                r["diverged"] += 1
            if base in by and name != base:
                d = paired(runs, by[base])
                mean, half = interval(d)
                if half is not None and mean + half < 0:
                    r["below"] += 1
                    r["below_cells"].append(f"{cell_name(cell)} ({show(d, True)})")
            gap = interval(paired(runs, sync))[0]
            r["gaps"].append(gap)
            if gap < r["worst"]:
                r["worst"], r["worst_cell"] = gap, cell
            if all(math.isfinite(v[2]) for v in sync.values()):
                times = [v[2] for v in runs.values()]
                r["time"] = max(r["time"], sum(times) / len(times))
                r["timed"] += 1
                r["reached"] += all(math.isfinite(x) for x in times)
        rows[name] = r
    return rows


def decide(rows):
    ok = [n for n, r in rows.items() if r["cells"] and not r["diverged"] and not r["below"]]
    if not ok:
        return None, ok
    best = max(rows[n]["worst"] for n in ok)
    tied = [n for n in ok if rows[n]["worst"] >= best - TIE_POINTS]
    return min(tied, key=lambda n: (rows[n]["time"], -rows[n]["worst"])), ok


def main(argv):
    if len(argv) < 3 or argv[0] != "--spec":
        print(__doc__)
        return 2
    with open(argv[1]) as f:
        spec = json.load(f)
    cells = load(argv[2:], spec)
    names = [n for n in spec["settings"] if any(n in by for by in cells.values())]
    ordered = sorted(cells)
    print("Final test accuracy (%), mean ± 95 % t-interval over seeds; cells as rows:\n")
    print("| cell | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for cell in ordered:
        by = cells[cell]
        entries = []
        for n in names:
            if n not in by:
                entries.append("")
                continue
            text = show([v[0] for v in by[n].values()])
            div = sum(v[1] for v in by[n].values())
            entries.append(text + (f" ({div} div.)" if div else ""))
        print(f"| {cell_name(cell)} | " + " | ".join(entries) + " |")
    rows = summarize(cells, spec)
    print(f"\nGap to {spec['reference']} (points, paired by seed) and the rule's inputs:\n")
    print("| setting | cells | diverged where sync converged | below none beyond the interval | "
          "worst-cell gap | worst cell | mean gap | worst-cell time to "
          f"{spec['target_accuracy']:.0%} (s) | cells where every seed reached it |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in names:
        if n not in rows:
            continue
        r = rows[n]
        mean_gap = sum(r["gaps"]) / len(r["gaps"]) if r["gaps"] else float("nan")
        worst_cell = cells[r["worst_cell"]] if r["worst_cell"] else None
        worst_text = (show(paired(worst_cell[n], worst_cell[spec["reference"]]), True)
                      if worst_cell else "")
        tt = "never" if math.isinf(r["time"]) else f"{r['time']:.3f}"
        print(f"| {n} | {r['cells']} | {r['diverged']} | {r['below']} | {worst_text} | "
              f"{cell_name(r['worst_cell']) if r['worst_cell'] else ''} | {mean_gap:+.2f} | {tt} | "
              f"{r['reached']} of {r['timed']} |")
    for n in names:
        if n in rows and rows[n]["below_cells"]:
            print(f"\n{n} below none beyond the interval (gap to none): "
                  + "; ".join(rows[n]["below_cells"]))
    pick, ok = decide(rows)
    print(f"\nEligible (never diverged where sync converged, never below none beyond the "
          f"interval): {', '.join(ok) if ok else 'none'}")
    print(f"Rule's pick: {pick}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
