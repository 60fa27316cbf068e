#!/usr/bin/env bash
# Does the pseudo-sync predictor carry over from the MLP to a CNN? experiments/convergence/
# base.json with the small CNN (conv 8 and 16 of kernel 5, dense 64) as the trained model:
# sync beside pseudo-sync with `arrses` and with no correction (`none`), a table and a figure.
# usage: experiments/convergence/cnn.sh [path/to/sgdsim] [out dir (default results/cnn)]
set -euo pipefail
bin=${1:-./build/sgdsim}
out=${2:-results/cnn}
base=experiments/convergence/base.json
cnn='training.model={"type": "cnn", "channels": [8, 16], "kernel": 5, "hidden": [64]}'
mkdir -p "$out"
"$bin" run "$base" --out "$out/sync" --quiet --set "$cnn"
runs=("$out/sync")
for p in none arrses; do
  "$bin" run "$base" --out "$out/pseudo_sync-$p" --quiet --set "$cnn" \
    --set scheme.type=pseudo_sync --set scheme.predictor="$p"
  runs+=("$out/pseudo_sync-$p")
done
/usr/bin/python3 experiments/convergence/accuracy_table.py "${runs[@]}"
/usr/bin/python3 analysis/plot_convergence.py "${runs[@]}" --out "$out/cnn.png" \
  --title "Pseudo-sync predictors, Fashion-MNIST CNN, 16 workers"
