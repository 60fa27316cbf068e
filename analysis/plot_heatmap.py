#!/usr/bin/python3
"""Heat map of one result field over two swept parameters, one panel per value of a third.

usage: /usr/bin/python3 analysis/plot_heatmap.py RESULTS... --x FIELD --y FIELD --out FILE.png
       [--value FIELD] [--panel FIELD] [--where FIELD=VALUE]... [--title T]

RESULTS are usually a sweep's results.jsonl (or its directory); run directories work too.
--x, --y and --panel name swept parameters as in the sweep file (workers.count,
scheme.fusion_bytes, scheme.type), summary fields (scheme, collective) or resolved-scenario
fields. --value is a summary field, default scaling.weak_efficiency; efficiencies and
accuracies are shown in %, times per iteration in ms. Cells with several runs (repeats) show
their mean; combinations that were not run are grey. Numeric axis values are sorted,
others (e.g. "25MB") keep the sweep's order.
"""
import sys

import matplotlib
import numpy as np
import pandas as pd

import sgdsim_results as sr  # also selects the headless Agg backend


def heatmap_data(df, x, y, value, panel=None):
    """{panel value (or ""): DataFrame indexed by y values, columns x values} of the
    displayed (scaled) value, and (factor, unit) of the scaling."""
    x_col, y_col = sr.column(df, x, "--x field"), sr.column(df, y, "--y field")
    value_col = sr.column(df, value, "--value field")
    sr.require(df, value_col, "--value")
    panel_col = sr.column(df, panel, "--panel field") if panel else None
    factor, unit = sr.value_scale(value)
    grids = {}
    averaged = set()
    for key in sr.ordered(df[panel_col]) if panel_col else [""]:
        rows = df[df[panel_col] == key] if panel_col else df
        xs, ys = sr.ordered(rows[x_col]), sr.ordered(rows[y_col])
        grid = np.full((len(ys), len(xs)), np.nan)
        for i, yv in enumerate(ys):
            for j, xv in enumerate(xs):
                cell = rows[(rows[x_col] == xv) & (rows[y_col] == yv)]
                if len(cell):
                    averaged.update(sr.varying(cell))
                    grid[i, j] = factor * cell[value_col].astype(float).mean()
        grids[sr.fmt(key)] = pd.DataFrame(grid, index=[sr.fmt(v) for v in ys], columns=[sr.fmt(v) for v in xs])
    if averaged:
        print(f"note: cells average runs that differ in {', '.join(sorted(averaged))} "
              "(select with --where, or use --panel)", file=sys.stderr)
    return grids, (factor, unit)


def main(argv=None):
    ap = sr.parser(__doc__)
    ap.add_argument("results", nargs="+", help="results.jsonl, sweep dirs, run dirs or summary.json")
    ap.add_argument("--out", required=True, help="PNG to write")
    ap.add_argument("--x", required=True, help="field on the horizontal axis (e.g. workers.count)")
    ap.add_argument("--y", required=True, help="field on the vertical axis (e.g. scheme.fusion_bytes)")
    ap.add_argument("--value", default="scaling.weak_efficiency",
                    help="field shown by colour (default scaling.weak_efficiency)")
    ap.add_argument("--panel", default=None, help="one panel per value of this field (e.g. scheme)")
    sr.add_where_option(ap)
    ap.add_argument("--title", default=None)
    args = ap.parse_args(argv)

    df = sr.select(sr.load_runs(args.results), args.where)
    grids, (_, unit) = heatmap_data(df, args.x, args.y, args.value, args.panel)
    values = np.concatenate([g.to_numpy().ravel() for g in grids.values()])
    vmin, vmax = np.nanmin(values), np.nanmax(values)
    if vmin == vmax:  # a flat colour scale would divide by zero
        vmin, vmax = vmin - 0.5, vmax + 0.5
    n = len(grids)
    fig, axes = sr.new_figure(n, figsize=(max(sr.FIGSIZE[0], 3.6 * n + 1.8), sr.FIGSIZE[1]), layout="constrained")
    cmap = matplotlib.colormaps["viridis"].copy()
    cmap.set_bad("lightgrey")
    for ax, (key, grid) in zip(axes, grids.items()):
        ax.grid(False)
        data = np.ma.masked_invalid(grid.to_numpy())
        image = ax.imshow(data, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", origin="lower")
        ax.set_xticks(range(grid.shape[1]), grid.columns)
        ax.set_yticks(range(grid.shape[0]), grid.index)
        ax.set_xlabel(args.x)
        ax.set_ylabel(args.y)
        if key:
            ax.set_title(f"{args.panel} = {key}")
        for (i, j), v in np.ndenumerate(grid.to_numpy()):
            # Light text on the dark (low) end of viridis, dark text on the bright end.
            shade = (v - vmin) / (vmax - vmin) if v == v else 1
            ax.text(j, i, "–" if v != v else f"{v:.1f}" if unit == "%" else f"{v:.4g}",
                    ha="center", va="center", fontsize=8, color="white" if shade < 0.6 else "black")
    bar = fig.colorbar(image, ax=axes, shrink=0.9)
    bar.set_label(f"{args.value} ({unit})" if unit else args.value)
    fig.suptitle(args.title or f"{args.value} by {args.x} and {args.y}")
    sr.save_figure(fig, args.out, tight=False)
    return {"grids": grids, "unit": unit, "out": args.out}


if __name__ == "__main__":
    main()
