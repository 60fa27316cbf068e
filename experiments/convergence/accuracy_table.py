#!/usr/bin/python3
"""Markdown table of final and best test accuracy of sgdsim training runs against the first.

usage: accuracy_table.py [--update-ms | --time-to-target] RUN_DIR...   (the first run is the
reference, e.g. sync)
A RUN_DIR is one run (summary.json, convergence.csv) or a directory of seed runs `seed-N/`
(see seeds.sh); with seeds every cell is the mean over seeds +- the half-width of a 95 %
Student-t interval, and the gap to the reference is paired by seed.
--update-ms adds the update + predict time per iteration from summary.json.
--time-to-target tabulates, instead, the iterations and simulated time to
training.target_accuracy over the seeds that reached it, and the time against the reference's
(paired by seed: negative is sooner). --targets 0.80,0.83,0.85 reads, instead, the first
evaluation at or above each target from convergence.csv (one table per target; a target
above the run's training.target_accuracy is missed by every run that stopped there).
"""
import csv
import json
import math
import os
import sys

# Two-sided 95 % quantiles of Student's t for 1..10 degrees of freedom.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228]


def interval(values):
    """(mean, half-width of the 95 % t-interval; None for one value)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, None
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    t = T975[n - 2] if n - 1 <= len(T975) else 1.96
    return mean, t * sd / math.sqrt(n)


def fmt(values, sign=False, unit=" %"):
    mean, half = interval(values)
    text = f"{mean:+.2f}" if sign else f"{mean:.2f}"
    return text + (f" ± {half:.2f}" if half is not None else "") + unit


def seed_runs(run):
    """{seed: run dir}: the seed-N subdirectories, or the run itself as seed None."""
    seeds = {}
    if os.path.isdir(run):
        for d in os.listdir(run):
            if d.startswith("seed-") and os.path.isfile(os.path.join(run, d, "summary.json")):
                seeds[int(d[5:])] = os.path.join(run, d)
    return dict(sorted(seeds.items())) if seeds else {None: run}


def measures(run):
    """{seed: (final accuracy %, best accuracy %, update ms)}."""
    out = {}
    for seed, d in seed_runs(run).items():
        s = json.load(open(os.path.join(d, "summary.json")))
        with open(os.path.join(d, "convergence.csv")) as f:
            best = max(float(r["accuracy"]) for r in csv.DictReader(f))
        out[seed] = (100 * s["training"]["final_accuracy"], 100 * best,
                     1e3 * s["update_s_per_iter"])
    return out


def targets(run):
    """{seed: (iteration time s, iterations, time to target s or None)}."""
    out = {}
    for seed, d in seed_runs(run).items():
        s = json.load(open(os.path.join(d, "summary.json")))
        out[seed] = (s["iteration_time_s"]["mean"], s["iterations"],
                     s["training"]["time_to_target_s"])
    return out


def first_reaching(run, target):
    """{seed: (iteration time s, iterations, simulated s at the first evaluation >= target)}."""
    out = {}
    for seed, d in seed_runs(run).items():
        s = json.load(open(os.path.join(d, "summary.json")))
        hit = None
        with open(os.path.join(d, "convergence.csv")) as f:
            for r in csv.DictReader(f):
                if float(r["accuracy"]) >= target:
                    hit = (int(r["iteration"]), float(r["time_s"]))
                    break
        out[seed] = (s["iteration_time_s"]["mean"], hit[0] if hit else None,
                     hit[1] if hit else None)
    return out


def target_table(runs, target=None):
    all_runs = [targets(r) if target is None else first_reaching(r, target) for r in runs]
    if target is not None:
        print(f"target {100 * target:g} %\n")
    reference = all_runs[0]
    print("| run | iteration time (s) | seeds reaching the target | iterations to target | "
          "time to target (simulated s) | time against the reference |")
    print("|---|---|---|---|---|---|")
    for run, m in zip(runs, all_runs):
        hit = {k: v for k, v in m.items() if v[2] is not None}
        paired = [100 * (v[2] / reference[k][2] - 1) for k, v in hit.items()
                  if k in reference and reference[k][2] is not None]
        cells = [fmt([v[1] for v in hit.values()], unit=""), fmt([v[2] for v in hit.values()],
                 unit="")] if hit else ["-", "-"]
        print(f"| {os.path.basename(run.rstrip('/'))} | "
              f"{sum(v[0] for v in m.values()) / len(m):.3f} | {len(hit)} of {len(m)} | "
              f"{cells[0]} | {cells[1]} | {fmt(paired, sign=True) if paired else '-'} |")


def main(argv):
    update_ms = "--update-ms" in argv
    if "--targets" in argv:
        i = argv.index("--targets")
        runs = argv[:i] + argv[i + 2:]
        for t in argv[i + 1].split(","):
            target_table(runs, float(t))
            print()
        return
    runs = [a for a in argv if a not in ("--update-ms", "--time-to-target")]
    if not runs:
        sys.exit(__doc__)
    if "--time-to-target" in argv:
        target_table(runs)
        return
    all_runs = [measures(r) for r in runs]
    reference = all_runs[0]
    seeds = sorted(k for k in reference if k is not None)
    if seeds:
        print(f"seeds {', '.join(map(str, seeds))}; mean ± half-width of the 95 % t-interval")
        print()
    header = "| run | final test accuracy | gap to sync (points) | best accuracy |"
    print(header + (" update + predict (ms/iter) |" if update_ms else ""))
    print("|---|---|---|---|" + ("---|" if update_ms else ""))
    for run, m in zip(runs, all_runs):
        common = [k for k in m if k in reference]
        final = [m[k][0] for k in m]
        gap = [m[k][0] - reference[k][0] for k in common]
        row = (f"| {os.path.basename(run.rstrip('/'))} | {fmt(final)} | "
               f"{fmt(gap, sign=True, unit='')} | {fmt([m[k][1] for k in m])} |")
        if update_ms:
            row += f" {sum(v[2] for v in m.values()) / len(m):.3f} |"
        print(row)


if __name__ == "__main__":
    main(sys.argv[1:])
