#!/usr/bin/python3
"""Test accuracy against simulated time for several sgdsim runs (their convergence.csv).

usage: /usr/bin/python3 analysis/plot_convergence.py RESULT_DIR... --out FILE.png [--title T]

Each run is labelled with its scheme (and predictor, servers, staleness bound or period),
read from its scenario.resolved.json, else from its summary.json.
"""
import os

import sgdsim_results as sr


def label(run_dir):
    path = os.path.join(run_dir, sr.RESOLVED)
    if os.path.exists(path):
        scheme = sr.read_json(path).get("scheme")
        if isinstance(scheme, dict) and "type" in scheme:
            return sr.scheme_label(scheme)
    return sr.load_summary(run_dir)["scheme"]


def main(argv=None):
    ap = sr.parser(__doc__)
    ap.add_argument("runs", nargs="+", help="run directories with a convergence.csv")
    ap.add_argument("--out", required=True, help="PNG to write")
    ap.add_argument("--title", default="Test accuracy against simulated time")
    args = ap.parse_args(argv)

    curves = {}
    for run in args.runs:
        conv = sr.load_convergence(run)
        name = label(run)
        if name in curves:  # two runs of one scheme: tell them apart by directory
            name = f"{name} [{os.path.basename(os.path.normpath(run))}]"
        curves[name] = conv
    fig, (ax,) = sr.new_figure(figsize=(7.5, 4.5))
    for name, conv in curves.items():
        ax.plot(conv["time_s"], 100 * conv["accuracy"], marker="o", markersize=3, label=name)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title(args.title)
    ax.legend()
    sr.save_figure(fig, args.out)
    return {"curves": curves, "out": args.out}


if __name__ == "__main__":
    main()
