#!/usr/bin/python3
"""Gantt chart of a few iterations of an sgdsim run, from its timeline.json (result files only).

usage: /usr/bin/python3 analysis/plot_timeline.py RESULT_DIR [--out FILE.png] [--workers K]
       [--iterations A B] [--title T]
"""
import os

import sgdsim_results as sr  # selects the headless Agg backend before pyplot loads

import matplotlib.pyplot as plt  # noqa: E402  (after the backend choice)

COLORS = {"fwd": "tab:blue", "bwd": "tab:orange", "update": "black", "predict": "tab:purple",
          "io": "tab:gray", "apply": "tab:brown"}
COMM_COLOR = "tab:green"  # every communication task (allreduce buckets, push, pull)
TRACKS = {0: "compute", 1: "communication", 2: "server applies"}  # the trace's tid values


def timeline_data(events, workers, iterations=None):
    """The events drawn: workers 0..workers-1, iterations FIRST..LAST (default the last two)."""
    last = int(events["iteration"].max())
    first_it, last_it = iterations or (max(0, last - 1), last)
    shown = events[(events["pid"] < workers) & events["iteration"].between(first_it, last_it)]
    return shown, (first_it, last_it)


def main(argv=None):
    ap = sr.parser(__doc__)
    ap.add_argument("result_dir")
    ap.add_argument("--out", default=None, help="PNG to write (default RESULT_DIR/timeline.png)")
    ap.add_argument("--workers", type=int, default=4, help="workers to show (default 4)")
    ap.add_argument("--iterations", type=int, nargs=2, default=None, metavar=("FIRST", "LAST"),
                    help="iterations to show (default: the last two)")
    ap.add_argument("--title", default=None)
    args = ap.parse_args(argv)

    events = sr.load_timeline(args.result_dir)
    summary = sr.load_summary(args.result_dir)
    shown, (first_it, last_it) = timeline_data(events, args.workers, args.iterations)
    if shown.empty:
        raise SystemExit(f"{args.result_dir}: no events for workers < {args.workers} in iterations {first_it}-{last_it}")
    # Wide rather than the usual 7 inches: a Gantt chart needs horizontal resolution.
    workers_shown = shown["pid"].nunique()
    fig, (ax,) = sr.new_figure(figsize=(11, 0.6 + 0.9 * workers_shown))
    ax.grid(axis="y", visible=False)
    for e in shown.itertuples():
        lane = e.pid * 3 + e.tid
        color = COLORS.get(e.name.split("[")[0], COMM_COLOR)
        ax.barh(lane, e.dur / 1e3, left=e.ts / 1e3, height=0.8, color=color, edgecolor="white", linewidth=0.3)
    lanes = sorted(set(shown["pid"] * 3 + shown["tid"]))
    ax.set_yticks(lanes)
    ax.set_yticklabels([f"worker {lane // 3} {TRACKS[lane % 3]}" for lane in lanes])
    ax.invert_yaxis()
    ax.set_xlabel("simulated time (ms)")
    ax.set_title(args.title or f"{summary['scenario']}: {summary['scheme']} SGD, {summary['workers']} workers, "
                               f"iterations {first_it}-{last_it}")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in list(COLORS.values()) + [COMM_COLOR]]
    ax.legend(handles, list(COLORS) + ["comm"], ncol=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), fontsize=8)
    out = args.out or os.path.join(args.result_dir, "timeline.png")
    sr.save_figure(fig, out)
    return {"events": shown, "iterations": (first_it, last_it), "out": out}


if __name__ == "__main__":
    main()
