#!/usr/bin/python3
"""Stacked bars of one worker's iteration time per run: compute, exposed communication, update.

usage: /usr/bin/python3 analysis/plot_breakdown.py RESULTS... --out FILE.png [--label-by FIELD]...
       [--where FIELD=VALUE]... [--title T]

RESULTS are run directories, summary.json files, results.jsonl files or sweep directories.
Each bar is the steady-state mean iteration time (summary.json iteration_time_s.mean) split
into compute_s_per_iter, exposed_comm_s_per_iter (communication not hidden behind compute,
including waiting for slower workers) and update_s_per_iter; "other" is what remains of the
mean when it exceeds their sum (per-worker averages need not add up exactly). The total
collective time comm_s_per_iter, hidden or not, is marked by a black tick at compute + comm:
what the iteration would take if no communication overlapped computation (runs that report
no collective time, such as async, get no tick).
Bars are labelled "scheme, N workers", or by the --label-by fields' values.
"""

import sgdsim_results as sr

# (summary field, legend label, colour); stacked bottom to top.
PARTS = [("compute_s_per_iter", "compute", "tab:blue"),
         ("exposed_comm_s_per_iter", "exposed communication", "tab:orange"),
         ("update_s_per_iter", "update", "tab:purple")]
OTHER_COLOR = "tab:gray"
# "other" smaller than this fraction of the iteration is rounding, not a part worth a bar.
OTHER_TOLERANCE = 1e-6


def breakdown_data(df, label_by=None):
    """[{label, compute, exposed communication, update, other, total, comm}] in ms, per run."""
    for field, label, _ in PARTS:
        sr.require(df, field, f"{label} time per iteration")
    sr.require(df, "iteration_time_s.mean", "mean iteration time")
    fields = [sr.column(df, f, "--label-by field") for f in label_by or []]
    bars = []
    for _, row in df.iterrows():
        bar = {"label": sr.row_label(row, fields), "source": row["source"]}
        for field, label, _ in PARTS:
            bar[label] = 1e3 * row[field]
        bar["total"] = 1e3 * row["iteration_time_s.mean"]
        rest = bar["total"] - sum(bar[label] for _, label, _ in PARTS)
        bar["other"] = rest if rest > OTHER_TOLERANCE * bar["total"] else 0.0
        comm = row.get("comm_s_per_iter")
        bar["comm"] = None if sr.isnan(comm) else 1e3 * comm
        bars.append(bar)
    return bars


def main(argv=None):
    ap = sr.parser(__doc__)
    ap.add_argument("results", nargs="+", help="run dirs, summary.json, results.jsonl or sweep dirs")
    ap.add_argument("--out", required=True, help="PNG to write")
    ap.add_argument("--label-by", action="append", default=[], metavar="FIELD",
                    help="label bars by this field (e.g. collective, scheme.fusion_bytes); repeatable")
    sr.add_where_option(ap)
    ap.add_argument("--title", default="Where the iteration time goes")
    args = ap.parse_args(argv)

    df = sr.select(sr.load_runs(args.results), args.where)
    bars = breakdown_data(df, args.label_by)
    width = max(sr.FIGSIZE[0], 0.6 * len(bars) + 2)
    fig, (ax,) = sr.new_figure(figsize=(width, sr.FIGSIZE[1]))
    ax.grid(axis="x", visible=False)
    xs = range(len(bars))
    bottom = [0.0] * len(bars)
    parts = PARTS + ([("", "other", OTHER_COLOR)] if any(b["other"] > 0 for b in bars) else [])
    for _, label, color in parts:
        heights = [b[label] for b in bars]
        ax.bar(xs, heights, bottom=bottom, color=color, label=label, width=0.7)
        bottom = [b + h for b, h in zip(bottom, heights)]
    comm = [(x, b["compute"] + b["comm"]) for x, b in zip(xs, bars) if b["comm"]]
    if comm:
        ax.plot([c[0] for c in comm], [c[1] for c in comm], linestyle="none", marker="_", markersize=18,
                markeredgewidth=2, color="black", label="compute + communication\nif nothing overlapped")
    ax.set_xticks(list(xs))
    rotate = len(bars) > 4 or max(len(b["label"]) for b in bars) > 16
    ax.set_xticklabels([b["label"] for b in bars], rotation=30 if rotate else 0, ha="right" if rotate else "center")
    ax.set_ylabel("time per iteration (ms)")
    ax.set_xlabel(", ".join(args.label_by) if args.label_by else "run")
    ax.set_title(args.title)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    sr.save_figure(fig, args.out)
    return {"bars": bars, "out": args.out}


if __name__ == "__main__":
    main()
