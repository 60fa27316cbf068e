#!/usr/bin/python3
"""Markdown table of final and best test accuracy of sgdsim training runs against the first.

usage: accuracy_table.py [--update-ms] RUN_DIR...   (the first run is the reference, e.g. sync)
--update-ms adds the update + predict time per iteration from summary.json.
"""
import csv
import json
import os
import sys


def main(argv):
    update_ms = "--update-ms" in argv
    runs = [a for a in argv if a != "--update-ms"]
    if not runs:
        sys.exit(__doc__)
    summaries = [json.load(open(os.path.join(run, "summary.json"))) for run in runs]
    reference = summaries[0]["training"]["final_accuracy"]
    header = "| run | final test accuracy | gap to sync (points) | best accuracy |"
    print(header + (" update + predict (ms/iter) |" if update_ms else ""))
    print("|---|---|---|---|" + ("---|" if update_ms else ""))
    for run, s in zip(runs, summaries):
        acc = s["training"]["final_accuracy"]
        with open(os.path.join(run, "convergence.csv")) as f:
            best = max(float(r["accuracy"]) for r in csv.DictReader(f))
        row = (f"| {os.path.basename(run)} | {100 * acc:.2f} % | {100 * (acc - reference):+.2f} | "
               f"{100 * best:.2f} % |")
        if update_ms:
            row += f" {1e3 * s['update_s_per_iter']:.3f} |"
        print(row)


if __name__ == "__main__":
    main(sys.argv[1:])
