#!/usr/bin/python3
"""Gantt chart of a few iterations of an sgdsim run, from its timeline.json (result files only).

usage: /usr/bin/python3 analysis/plot_timeline.py RESULT_DIR [--out FILE.png] [--workers K] [--iterations A B]
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"fwd": "tab:blue", "bwd": "tab:orange", "update": "black", "predict": "tab:purple",
          "io": "tab:gray", "apply": "tab:brown"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("result_dir")
    ap.add_argument("--out", default=None, help="PNG to write (default RESULT_DIR/timeline.png)")
    ap.add_argument("--workers", type=int, default=4, help="workers to show (default 4)")
    ap.add_argument("--iterations", type=int, nargs=2, default=None, metavar=("FIRST", "LAST"),
                    help="iterations to show (default: the last two)")
    args = ap.parse_args()
    path = os.path.join(args.result_dir, "timeline.json")
    if not os.path.exists(path):
        sys.exit(f"{path}: not found (run with output.timeline true)")
    with open(path) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    with open(os.path.join(args.result_dir, "summary.json")) as f:
        summary = json.load(f)
    last = max(e["args"]["iteration"] for e in events)
    first_it, last_it = args.iterations or (max(0, last - 1), last)
    shown = [e for e in events if e["pid"] < args.workers and first_it <= e["args"]["iteration"] <= last_it]
    fig, ax = plt.subplots(figsize=(11, 0.6 + 0.9 * args.workers))
    for e in shown:
        lane = e["pid"] * 3 + e["tid"]
        kind = e["name"].split("[")[0]
        color = COLORS.get(kind, "tab:green")
        ax.barh(lane, e["dur"] / 1e3, left=e["ts"] / 1e3, height=0.8, color=color, edgecolor="white", linewidth=0.3)
    lanes = sorted({e["pid"] * 3 + e["tid"] for e in shown})
    names = {0: "compute", 1: "communication", 2: "server applies"}
    ax.set_yticks(lanes)
    ax.set_yticklabels([f"worker {lane // 3} {names[lane % 3]}" for lane in lanes])
    ax.invert_yaxis()
    ax.set_xlabel("simulated time (ms)")
    ax.set_title(f"{summary['scenario']}: {summary['scheme']} SGD, {summary['workers']} workers, "
                 f"iterations {first_it}-{last_it}")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in list(COLORS.values()) + ["tab:green"]]
    ax.legend(handles, list(COLORS) + ["comm"], ncol=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), fontsize=8)
    fig.tight_layout()
    out = args.out or os.path.join(args.result_dir, "timeline.png")
    tmp = out + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, out)
    print(out)


if __name__ == "__main__":
    main()
