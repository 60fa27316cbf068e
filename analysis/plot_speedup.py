#!/usr/bin/python3
"""Speedup over one worker as grouped bars: one group per worker (or node) count, one bar per
label (e.g. no overlap / WFBP / MG-WFBP), and the linear-speedup ideal as a marker.

usage: /usr/bin/python3 analysis/plot_speedup.py RESULTS... --out FILE.png
       [--label-by FIELD]... [--x workers|nodes] [--where FIELD=VALUE]... [--title T]

Speedup = workers x scaling.weak_efficiency = workers x (one worker's iteration time at the
same per-worker batch) / (the run's iteration time): the throughput gain over one worker.
Bars are labelled by the --label-by fields' values (default: the run directory's name up to
its last '-', so runs named none-2, none-4, wfbp-2 ... give the labels none, wfbp).
"""
import sgdsim_results as sr


def speedup_data(df, x="workers", label_by=None):
    """{label: {x: speedup}} in the order the labels first appear; what the figure shows."""
    sr.require(df, "scaling.weak_efficiency", "weak scaling efficiency")
    cols = [sr.column(df, f, "--label-by field") for f in label_by or []]
    data = {}
    for _, row in df.iterrows():
        label = ", ".join(sr.fmt(row[c]) for c in cols) if cols else row["run"].rsplit("-", 1)[0]
        data.setdefault(label, {})[int(row[x])] = row["workers"] * row["scaling.weak_efficiency"]
    return data


def main(argv=None):
    ap = sr.parser(__doc__)
    ap.add_argument("results", nargs="+", help="run dirs, summary.json, results.jsonl or sweep dirs")
    ap.add_argument("--out", required=True, help="PNG to write")
    ap.add_argument("--x", choices=("workers", "nodes"), default="workers", help="groups (default workers)")
    ap.add_argument("--label-by", action="append", default=[], metavar="FIELD",
                    help="label bars by this field's value; repeatable")
    sr.add_where_option(ap)
    ap.add_argument("--title", default="Speedup over one worker")
    args = ap.parse_args(argv)

    df = sr.select(sr.load_runs(args.results), args.where)
    data = speedup_data(df, args.x, args.label_by)
    xs = sorted({x for points in data.values() for x in points})
    fig, (ax,) = sr.new_figure()
    width = 0.8 / max(1, len(data))
    for i, (label, points) in enumerate(data.items()):
        pos = [k + (i - (len(data) - 1) / 2) * width for k in range(len(xs))]
        vals = [points.get(x, float("nan")) for x in xs]
        bars = ax.bar(pos, vals, width=width, label=label)
        ax.bar_label(bars, fmt="%.2f", fontsize=7, padding=1)
    ax.plot(range(len(xs)), xs, linestyle="none", marker="_", markersize=30, color="black",
            label="linear (ideal)")
    ax.set_xticks(range(len(xs)))
    ax.set_xticklabels([str(x) for x in xs])
    ax.set_xlabel(args.x)
    ax.set_ylabel("speedup over one worker (x)")
    ax.set_ylim(0, max(xs) * 1.12)
    ax.set_title(args.title)
    ax.legend()
    sr.save_figure(fig, args.out)
    return {"speedup": data, "out": args.out}


if __name__ == "__main__":
    main()
