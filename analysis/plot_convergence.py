#!/usr/bin/python3
"""Test accuracy against simulated time for several sgdsim runs (their convergence.csv).

usage: /usr/bin/python3 analysis/plot_convergence.py RESULT_DIR... --out FILE.png
Each run is labelled with its scheme (and predictor), read from its summary.json and
scenario.resolved.json.
"""
import argparse
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def label(run_dir):
    with open(os.path.join(run_dir, "scenario.resolved.json")) as f:
        scheme = json.load(f)["scheme"]
    text = scheme["type"]
    if "predictor" in scheme:
        text += f" ({scheme['predictor']})"
    if "servers" in scheme:
        text += f" ({scheme['servers']} servers)"
    if "staleness" in scheme:
        text += f" (s = {scheme['staleness']})"
    if "period" in scheme:
        text += f" (H = {scheme['period']})"
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--title", default="Test accuracy against simulated time")
    args = ap.parse_args()
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for run in args.runs:
        path = os.path.join(run, "convergence.csv")
        if not os.path.exists(path):
            sys.exit(f"{path}: not found (the run needs a training section)")
        with open(path) as f:
            rows = list(csv.DictReader(f))
        ax.plot([float(r["time_s"]) for r in rows], [100 * float(r["accuracy"]) for r in rows],
                marker="o", markersize=3, label=label(run))
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title(args.title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    tmp = args.out + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, args.out)
    print(args.out)


if __name__ == "__main__":
    main()
