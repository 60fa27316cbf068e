#!/usr/bin/python3
"""Runs (a sub-grid of) the pre-declared predictor study and prints its tables.

usage: run_predictor_study.py [--bin build/sgdsim] [--out results/predictor_study] [-j 1]
                              [--subgrid NAME] [--list]
The grid, the settings (sync, none, every predictor and variant) and the sub-grids are declared
in predictor_study_grid.json (beside this file); predictor_study.md says why. Without
--subgrid it runs the whole grid (its CPU time is estimated in predictor_study.md). It writes
one sgdsim sweep file per (model, dataset) into OUT/NAME/ and runs it there (the sweeps resume:
the same command finishes an interrupted study), then runs predictor_study_table.py on them.
--list prints the sweeps' run counts and runs nothing.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def sweeps(spec, sub):
    """[(name, sweep object)]: one per (model, dataset), grid axes in declaration order."""
    axes = dict(spec["axes"])
    axes.update(sub.get("axes", {}))
    names = sub.get("settings", list(spec["settings"]))
    seeds = sub.get("seeds", spec["seeds"])
    base = os.path.join(HERE, spec["base"])
    out = []
    for model in axes["training.model.type"]:
        for dataset in axes["training.dataset"]:
            if model == "cnn" and dataset != "fashion-mnist":
                continue  # excluded: the scenario refuses cnn without 28x28 images
            grid = {"training.model.type": [model], "training.dataset": [dataset]}
            own = sub.get("model_axes", {}).get(model, {})
            for k, v in axes.items():
                if k not in grid:
                    grid[k] = own.get(k, v)
            for k, v in sub.get("set", {}).items():
                grid[k] = [v]
            out.append((f"{model}-{dataset}", {
                "description": f"predictor study: {model} on {dataset} (run_predictor_study.py)",
                "base": base,
                "grid": grid,
                "list": [spec["settings"][n] for n in names],
                "repeat": seeds}))
    return out


def main(argv):
    opts = {"--bin": "build/sgdsim", "--out": "results/predictor_study", "-j": "1",
            "--subgrid": None}
    listing = False
    i = 0
    while i < len(argv):
        if argv[i] == "--list":
            listing = True
            i += 1
        elif argv[i] in opts:
            opts[argv[i]] = argv[i + 1]
            i += 2
        else:
            print(__doc__)
            return 2
    with open(os.path.join(HERE, "predictor_study_grid.json")) as f:
        spec = json.load(f)
    name = opts["--subgrid"] or "full"
    sub = spec["subgrids"][name] if opts["--subgrid"] else {}
    out = os.path.join(opts["--out"], name)
    os.makedirs(out, exist_ok=True)
    dirs = []
    for label, sweep in sweeps(spec, sub):
        path = os.path.join(out, f"{label}.sweep.json")
        with open(path, "w") as f:
            json.dump(sweep, f, indent=1)
        runs = len(sweep["list"]) * sweep["repeat"]
        for v in sweep["grid"].values():
            runs *= len(v)
        print(f"{label}: {runs} runs", flush=True)
        if listing:
            continue
        subprocess.run([opts["--bin"], "sweep", path, "--out", os.path.join(out, label), "-j",
                        opts["-j"], "--quiet"], check=True)
        dirs.append(os.path.join(out, label))
    if listing:
        return 0
    return subprocess.run(["/usr/bin/python3", os.path.join(HERE, "predictor_study_table.py"),
                           "--spec", os.path.join(HERE, "predictor_study_grid.json")] + dirs
                          ).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
