#!/usr/bin/env bash
# The predictor grid of issue 19: sync, pseudo-sync without prediction and the default
# predictor (arrses) over lr {0.01, 0.02, 0.05, 0.1, 0.2} x momentum {0, 0.5, 0.9} on
# experiments/convergence/base.json (16 workers x 64, MLP 784-256-128-10, Fashion-MNIST, 300
# iterations), 5 seeds each (the sweeps' repeat: seeds 1-5), $JOBS (default 2) runs at a time
# per sweep; the sweeps resume, so the same command finishes an interrupted grid. Prints the
# grid table (final accuracy, gap to sync and to none with 95 % t-intervals, paired by seed)
# and writes grid.json and the figure grid.png beside the sweeps.
# 225 runs of about 15 s CPU each (37 min at 2 processes on an idle 2-core machine).
# ABLATION=1 also runs grid-ablation.json (the default, the previous default without the gate,
# each part switched back alone from there, the calibration slope on, all parts back; base
# cell and lr 0.2 x momentum 0.9; 70 runs)
# and prints its table beside the default's.
# usage: experiments/convergence/grid.sh [path/to/sgdsim] [out dir (default results/grid)]
set -euo pipefail
bin=${1:-./build/sgdsim}
out=${2:-results/grid}
here=experiments/convergence
jobs=${JOBS:-2}
mkdir -p "$out"
"$bin" sweep "$here/grid-baselines.json" --out "$out/baselines" -j "$jobs" --quiet
"$bin" sweep "$here/grid-predictor.json" --out "$out/predictor" -j "$jobs" --quiet
/usr/bin/python3 "$here/grid_table.py" --json "$out/grid.json" "$out/baselines" "$out/predictor"
/usr/bin/python3 "$here/plot_grid.py" "$out/grid.json" --out "$out/grid.png"
if [[ ${ABLATION:-0} == 1 ]]; then
  "$bin" sweep "$here/grid-ablation.json" --out "$out/ablation" -j "$jobs" --quiet
  /usr/bin/python3 "$here/grid_table.py" "$out/baselines" "$out/predictor" "$out/ablation"
fi
