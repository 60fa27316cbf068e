#!/usr/bin/python3
"""Scaling efficiency and throughput against workers (or nodes) for sgdsim runs or a sweep.

usage: /usr/bin/python3 analysis/plot_scaling.py RESULTS... --out FILE.png [--x workers|nodes]
       [--strong] [--group-by FIELD] [--where FIELD=VALUE]... [--reference "LABEL:X=Y,X=Y"]...
       [--no-throughput] [--title T]

RESULTS are run directories, summary.json files, results.jsonl files or sweep directories.
Left panel: summary.json scaling.weak_efficiency (one worker's iteration time over the
iteration time, same per-worker batch) or, with --strong, scaling.strong_efficiency, in %.
Right panel: throughput_samples_per_s. One line per scheme, or per --group-by FIELD (a summary
field, a swept parameter or a resolved-scenario field, e.g. collective or scheme.predictor).
Runs at the same x and group (repeats of a sweep) are averaged; a note on stderr names the
fields in which averaged runs differ. On the nodes axis, only the runs with the most workers
at each node count (fully used nodes) are drawn.
"""
import sys

import sgdsim_results as sr

EFFICIENCY = {False: ("scaling.weak_efficiency", "weak scaling efficiency (%)"),
              True: ("scaling.strong_efficiency", "strong scaling efficiency (%)")}
X_LABELS = {"workers": "workers (log scale)", "nodes": "nodes (log scale)"}


def parse_reference(text):
    """'Goyal et al.:8=100,64=93.4' -> ('Goyal et al.', [(8, 100.0), (64, 93.4)]).

    The label ends at the last ':' so labels may contain colons; y is in % like the plot."""
    label, sep, pairs = text.rpartition(":")
    points = []
    try:
        for pair in pairs.split(","):
            x, y = pair.split("=")
            points.append((float(x), float(y)))
    except ValueError:
        raise SystemExit(f"--reference '{text}': expected 'LABEL:X=Y,X=Y' (e.g. 'paper:64=93.4')")
    if not sep or not label.strip():
        raise SystemExit(f"--reference '{text}': missing 'LABEL:' before the points")
    return label.strip(), points


def scaling_data(df, x, strong=False, group_by="scheme"):
    """{group: DataFrame(x, efficiency_pct, throughput, runs)} sorted by x; what the figure shows."""
    metric, what = EFFICIENCY[strong]
    sr.require(df, metric, what)
    sr.require(df, "throughput_samples_per_s", "throughput")
    if x == "nodes" and df["nodes"].isna().any():
        bad = df[df["nodes"].isna()]["source"].iloc[0]
        sr.fail(bad, "nodes unknown: it needs workers.per_node (scenario.resolved.json next to "
                     "summary.json, or a swept workers.per_node)")
    group_col = sr.column(df, group_by, "--group-by field")
    if x == "nodes":
        # A node count reached with fewer workers (partly used nodes) is not a point of the
        # nodes curve: keep the runs with the most workers at each node count.
        most = df.groupby([group_col, "nodes"])["workers"].transform("max")
        if (df["workers"] < most).any():
            print("note: runs on partly used nodes left out of the nodes axis", file=sys.stderr)
        df = df[df["workers"] == most]
    data = {}
    averaged = set()
    for group in sr.ordered(df[group_col]):
        rows = df[df[group_col] == group]
        for _, same in rows.groupby(x):
            averaged.update(sr.varying(same))
        points = rows.groupby(x).agg(efficiency_pct=(metric, "mean"),
                                     throughput=("throughput_samples_per_s", "mean"),
                                     runs=("source", "count")).reset_index().sort_values(x)
        points["efficiency_pct"] *= 100
        data[str(group)] = points
    if averaged:
        print(f"note: points average runs that differ in {', '.join(sorted(averaged))} "
              "(select with --where, or split with --group-by)", file=sys.stderr)
    return data


def main(argv=None):
    ap = sr.parser(__doc__)
    ap.add_argument("results", nargs="+", help="run dirs, summary.json, results.jsonl or sweep dirs")
    ap.add_argument("--out", required=True, help="PNG to write")
    ap.add_argument("--x", choices=("workers", "nodes"), default="workers", help="x axis (log2; default workers)")
    ap.add_argument("--strong", action="store_true", help="strong instead of weak scaling efficiency")
    ap.add_argument("--group-by", default="scheme", help="one line per value of this field (default scheme)")
    ap.add_argument("--reference", action="append", default=[], metavar="LABEL:X=Y,...",
                    help="published efficiency points (%%) to overlay, e.g. 'Goyal et al.:64=93.4'; repeatable")
    sr.add_where_option(ap)
    ap.add_argument("--no-throughput", action="store_true", help="efficiency panel only")
    ap.add_argument("--title", default=None)
    args = ap.parse_args(argv)

    references = [parse_reference(r) for r in args.reference]
    df = sr.select(sr.load_runs(args.results), args.where)
    data = scaling_data(df, args.x, args.strong, args.group_by)

    fig, axes = sr.new_figure(1 if args.no_throughput else 2)
    eff_ax = axes[0]
    xs = set()
    for group, points in data.items():
        eff_ax.plot(points[args.x], points["efficiency_pct"], marker="o", label=group)
        if not args.no_throughput:
            axes[1].plot(points[args.x], points["throughput"], marker="o", label=group)
        xs.update(points[args.x])
    for label, points in references:
        eff_ax.plot([p[0] for p in points], [p[1] for p in points], linestyle="none", marker="*",
                    markersize=11, markeredgecolor="black", label=label)
        xs.update(p[0] for p in points)
    top = max([105.0] + [p["efficiency_pct"].max() + 5 for p in data.values()] +
              [y + 5 for _, pts in references for _, y in pts])
    eff_ax.set_ylim(0, top)
    eff_ax.set_ylabel(EFFICIENCY[args.strong][1])
    if not args.no_throughput:
        axes[1].set_ylabel("throughput (samples/s)")
        axes[1].set_title("throughput")
        axes[1].set_ylim(bottom=0)
        axes[1].legend()
    for ax in axes:
        ax.set_xscale("log", base=2)
        ticks = sorted(xs)
        ax.set_xticks(ticks)
        ax.set_xticklabels([f"{t:g}" for t in ticks])
        ax.minorticks_off()
        ax.set_xlabel(X_LABELS[args.x])
    eff_ax.legend(title=args.group_by)
    default_title = f"{'Strong' if args.strong else 'Weak'} scaling efficiency"
    if args.no_throughput:
        eff_ax.set_title(args.title or default_title)
    else:
        eff_ax.set_title("efficiency")
        fig.suptitle(args.title or default_title + " and throughput")
    sr.save_figure(fig, args.out)
    return {"efficiency": {g: list(zip(p[args.x], p["efficiency_pct"])) for g, p in data.items()},
            "throughput": {g: list(zip(p[args.x], p["throughput"])) for g, p in data.items()},
            "references": dict(references), "out": args.out}


if __name__ == "__main__":
    main()
