#!/usr/bin/python3
"""Staleness histograms of sgdsim runs (summary.json staleness.histogram), side by side.

usage: /usr/bin/python3 analysis/plot_staleness.py RESULTS... --out FILE.png [--counts]
       [--label-by FIELD]... [--where FIELD=VALUE]... [--title T]

RESULTS are run directories, summary.json files, results.jsonl files or sweep directories.
Staleness is how many model versions older than the current one a gradient was computed on:
measured for async (parameter server), s for ssp, 1 for pseudo_sync; sync and local_sgd
runs have no histogram and are skipped with a note. Bars show each run's share of gradients
(%) at each staleness, or raw counts with --counts; a dashed line marks each run's mean.
"""
import sys

import sgdsim_results as sr


def parse_histogram(histogram, source):
    """{"7": 260, ...} (JSON keys are strings) -> {7: 260} sorted by staleness."""
    if not isinstance(histogram, dict) or not histogram:
        sr.fail(source, "staleness.histogram must be a non-empty object {staleness: count}")
    parsed = {}
    for key, count in histogram.items():
        try:
            staleness, n = int(key), int(count)
        except (TypeError, ValueError):
            sr.fail(source, f"staleness.histogram: bad entry {key!r}: {count!r} (expected integer: count)")
        if staleness < 0 or n < 0:
            sr.fail(source, f"staleness.histogram: negative entry {key!r}: {count!r}")
        parsed[staleness] = n
    if sum(parsed.values()) == 0:
        sr.fail(source, "staleness.histogram: all counts are zero")
    return dict(sorted(parsed.items()))


def staleness_data(df, label_by=None, counts=False):
    """[{label, histogram {staleness: count}, values {staleness: % or count}, mean, max}] per run
    that has a histogram."""
    fields = [sr.column(df, f, "--label-by field") for f in label_by or []]
    runs = []
    for _, row in df.iterrows():
        histogram = row.get("staleness.histogram")
        if sr.isnan(histogram):  # absent: the scheme defines no staleness
            print(f"note: {row['source']}: no staleness histogram ({row['scheme']}), skipped", file=sys.stderr)
            continue
        histogram = parse_histogram(histogram, row["source"])
        total = sum(histogram.values())
        values = histogram if counts else {k: 100 * n / total for k, n in histogram.items()}
        mean = row.get("staleness.mean")
        runs.append({"label": sr.row_label(row, fields), "source": row["source"], "histogram": histogram,
                     "values": values,
                     "mean": sum(k * n for k, n in histogram.items()) / total if sr.isnan(mean) else mean,
                     "max": max(histogram)})
    if not runs:
        raise SystemExit("no run has a staleness histogram (async, ssp and pseudo_sync runs do)")
    return runs


def main(argv=None):
    ap = sr.parser(__doc__)
    ap.add_argument("results", nargs="+", help="run dirs, summary.json, results.jsonl or sweep dirs")
    ap.add_argument("--out", required=True, help="PNG to write")
    ap.add_argument("--counts", action="store_true", help="raw gradient counts instead of shares (%%)")
    ap.add_argument("--label-by", action="append", default=[], metavar="FIELD",
                    help="label runs by this field (e.g. scheme.servers); repeatable")
    sr.add_where_option(ap)
    ap.add_argument("--title", default="Staleness of applied gradients")
    args = ap.parse_args(argv)

    df = sr.select(sr.load_runs(args.results), args.where)
    runs = staleness_data(df, args.label_by, args.counts)
    fig, (ax,) = sr.new_figure()
    ax.grid(axis="x", visible=False)
    width = 0.8 / len(runs)
    for i, run in enumerate(runs):
        offset = (i - (len(runs) - 1) / 2) * width
        bars = ax.bar([k + offset for k in run["values"]], list(run["values"].values()), width=width,
                      label=f"{run['label']} (mean {run['mean']:.2f})")
        ax.axvline(run["mean"], color=bars.patches[0].get_facecolor(), linestyle="--", linewidth=1)
    top = max(max(run["histogram"]) for run in runs)
    # Integer staleness values: one tick each while that stays readable.
    ax.set_xticks(range(0, top + 1, max(1, (top + 1) // 16 + 1)))
    ax.set_xlim(-0.6, top + 0.6)
    ax.set_xlabel("staleness (model versions behind)")
    ax.set_ylabel("gradients" if args.counts else "share of gradients (%)")
    ax.set_title(args.title)
    ax.plot([], [], color="gray", linestyle="--", linewidth=1, label="mean staleness")
    ax.legend(fontsize=8)
    sr.save_figure(fig, args.out)
    return {"runs": runs, "out": args.out}


if __name__ == "__main__":
    main()
