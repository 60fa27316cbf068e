#!/usr/bin/python3
"""Heatmaps of an lr x momentum grid (grid_table.py --json): the mean final-accuracy gap to
sync per cell for each pseudo-sync setting, annotated with the 95 % half-width.

usage: plot_grid.py GRID.json --out FIGURE.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(argv):
    grid = json.load(open(argv[0]))
    out = argv[argv.index("--out") + 1]
    cells = grid["cells"]
    lrs = sorted({c["lr"] for c in cells})
    moms = sorted({c["momentum"] for c in cells})
    settings = sorted({s for c in cells for s in c["settings"]})
    fig, axes = plt.subplots(1, len(settings), figsize=(5.2 * len(settings), 3.6), squeeze=False)
    for ax, s in zip(axes[0], settings):
        data = [[float("nan")] * len(lrs) for _ in moms]
        text = [[""] * len(lrs) for _ in moms]
        for c in cells:
            e = c["settings"].get(s)
            if not e or not e["gap_to_reference"]:
                continue
            mean, half = e["gap_to_reference"]
            i, j = moms.index(c["momentum"]), lrs.index(c["lr"])
            data[i][j] = mean
            text[i][j] = f"{mean:+.1f}\n±{half:.1f}" if half is not None else f"{mean:+.1f}"
            if e["diverged_seeds"]:
                text[i][j] += "\ndiv."
        im = ax.imshow(data, cmap="RdBu", vmin=-10, vmax=10, origin="lower", aspect="auto")
        for i in range(len(moms)):
            for j in range(len(lrs)):
                ax.text(j, i, text[i][j], ha="center", va="center", fontsize=7)
        ax.set_xticks(range(len(lrs)), [f"{v:g}" for v in lrs])
        ax.set_yticks(range(len(moms)), [f"{v:g}" for v in moms])
        ax.set_xlabel("learning rate")
        ax.set_ylabel("momentum")
        ax.set_title(s.replace(",scheme.type=pseudo_sync", "").replace("scheme.", "") + ": gap to sync",
                     fontsize=8)
        fig.colorbar(im, ax=ax, label="points (mean over seeds)")
    fig.tight_layout()
    fig.savefig(out, dpi=120)


if __name__ == "__main__":
    main(sys.argv[1:])
