#!/usr/bin/python3
"""Markdown tables of an lr x momentum grid of sgdsim sweeps (experiments/convergence/grid.sh).

usage: grid_table.py [--reference LABEL] [--against LABEL] [--json OUT] SWEEP_DIR...
Every run of the sweeps' results.jsonl is grouped by (learning rate, momentum, setting), the
setting being its other swept values except the seed, sorted by path ("scheme.type=sync"). Per cell and
setting: final test accuracy, mean over seeds +- the half-width of the 95 % Student-t
interval, and, paired by seed, the gap to --reference (default scheme.type=sync) and to
--against (default pseudo-sync without prediction). A run diverges when its final accuracy is
at most 20 % (chance is 10 %) or its loss is not finite. The summary line checks the claim of
issue 19 for each setting: no divergence where every seed of the reference converged, and
never worse than --against beyond the interval (the paired interval's upper end >= 0).
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from accuracy_table import interval  # noqa: E402

LR, MOM = "training.learning_rate", "training.momentum"


def label(params):
    rest = [f"{k}={v}" for k, v in sorted(params.items()) if k not in (LR, MOM, "seed")]
    return ",".join(rest) if rest else "base"


def load(dirs):
    """{(lr, m): {setting: {seed: (accuracy %, diverged)}}}."""
    cells = {}
    for d in dirs:
        with open(os.path.join(d, "results.jsonl")) as f:
            for line in f:
                r = json.loads(line)
                if r.get("status") != "ok":
                    continue
                p = r["params"]
                t = r["training"]
                acc = t.get("final_accuracy")
                loss = t.get("final_loss")
                acc = 0.0 if acc is None else 100 * acc
                diverged = acc <= 20 or loss is None or not math.isfinite(loss)
                cell = cells.setdefault((p[LR], p[MOM]), {})
                cell.setdefault(label(p), {})[p.get("seed", r.get("seed"))] = (acc, diverged)
    return cells


def show(values, sign=False):
    mean, half = interval(values)
    text = f"{mean:+.2f}" if sign else f"{mean:.2f}"
    return text + (f" ± {half:.2f}" if half is not None else "")


def paired(a, b):
    seeds = sorted(set(a) & set(b))
    return [a[s][0] - b[s][0] for s in seeds]


def main(argv):
    reference, against, out_json, dirs = "scheme.type=sync", \
        "scheme.predictor=none,scheme.type=pseudo_sync", None, []
    i = 0
    while i < len(argv):
        if argv[i] in ("--reference", "--against", "--json"):
            value = argv[i + 1]
            if argv[i] == "--reference":
                reference = value
            elif argv[i] == "--against":
                against = value
            else:
                out_json = value
            i += 2
        else:
            dirs.append(argv[i])
            i += 1
    cells = load(dirs)
    settings = []
    for cell in cells.values():
        for s in cell:
            if s not in settings:
                settings.append(s)
    others = [s for s in settings if s not in (reference, against)]
    print(f"Final test accuracy (%), mean ± 95 % t-interval over seeds; gaps paired by seed. "
          f"Reference: {reference}; against: {against}.\n")
    head = ["lr", "momentum", "sync", "none"]
    for s in others:
        head += [s, "gap to sync", "minus none"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    verdict = {s: {"diverged_where_reference_converged": [], "worse_than_against": [],
                   "cells": 0} for s in others}
    table = []
    for (lr, m) in sorted(cells):
        cell = cells[(lr, m)]
        ref, base = cell.get(reference, {}), cell.get(against, {})
        row = [f"{lr:g}", f"{m:g}"]
        for runs in (ref, base):
            vals = [v[0] for v in runs.values()]
            row.append(show(vals) + (" (div.)" if any(v[1] for v in runs.values()) else "")
                       if vals else "-")
        entry = {"lr": lr, "momentum": m, "settings": {}}
        if base and ref:
            gap = paired(base, ref)
            entry["settings"][against] = {
                "accuracy": interval([v[0] for v in base.values()]),
                "gap_to_reference": interval(gap) if gap else None, "minus_against": None,
                "diverged_seeds": [k for k, v in base.items() if v[1]], "seeds": sorted(base)}
        for s in others:
            runs = cell.get(s, {})
            if not runs:
                row += ["-", "-", "-"]
                continue
            vals = [v[0] for v in runs.values()]
            div = [seed for seed, v in runs.items() if v[1]]
            ref_ok = bool(ref) and not any(v[1] for v in ref.values())
            gap, minus = paired(runs, ref), paired(runs, base)
            row += [show(vals) + (f" (div. seeds {div})" if div else ""),
                    show(gap, True) if gap else "-", show(minus, True) if minus else "-"]
            v = verdict[s]
            v["cells"] += 1
            if div and ref_ok:
                v["diverged_where_reference_converged"].append((lr, m, div))
            if len(minus) > 1:
                mean, half = interval(minus)
                if mean + half < 0:
                    v["worse_than_against"].append((lr, m, round(mean, 2), round(half, 2)))
            entry["settings"][s] = {"accuracy": interval(vals), "gap_to_reference": interval(gap)
                                    if gap else None, "minus_against": interval(minus)
                                    if minus else None, "diverged_seeds": div,
                                    "seeds": sorted(runs)}
        table.append(entry)
        print("| " + " | ".join(row) + " |")
    print()
    for s, v in verdict.items():
        print(f"{s}: {v['cells']} cells; diverged where {reference} converged: "
              f"{v['diverged_where_reference_converged'] or 'never'}; worse than {against} "
              f"beyond the interval: {v['worse_than_against'] or 'never'}")
    if out_json:
        with open(out_json, "w") as f:
            json.dump({"cells": table, "verdict": verdict}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
