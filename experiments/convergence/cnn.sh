#!/usr/bin/env bash
# Does the pseudo-sync predictor carry over from the MLP to a CNN? experiments/convergence/
# base.json with the small CNN (conv 8 and 16 of kernel 5, dense 64) as the trained model:
# sync beside pseudo-sync with `arrses` and with no correction (`none`), each over the seeds
# $SEEDS (default 1-5, see seeds.sh), a table (mean and 95 % t-interval) and a figure (first seed).
# usage: experiments/convergence/cnn.sh [path/to/sgdsim] [out dir (default results/cnn)]
set -euo pipefail
bin=${1:-./build/sgdsim}
out=${2:-results/cnn}
base=experiments/convergence/base.json
source experiments/convergence/seeds.sh
first=$(printf '%s\n' $SEEDS | head -1)
cnn='training.model={"type": "cnn", "channels": [8, 16], "kernel": 5, "hidden": [64]}'
mkdir -p "$out"
run_seeds "$out/sync" "$bin" "$base" --set "$cnn"
runs=("$out/sync")
for p in none arrses; do
  run_seeds "$out/pseudo_sync-$p" "$bin" "$base" --set "$cnn" \
    --set scheme.type=pseudo_sync --set scheme.predictor="$p"
  runs+=("$out/pseudo_sync-$p")
done
/usr/bin/python3 experiments/convergence/accuracy_table.py "${runs[@]}"
/usr/bin/python3 analysis/plot_convergence.py "${runs[@]/%//seed-$first}" --out "$out/cnn.png" \
  --title "Pseudo-sync predictors, Fashion-MNIST CNN, 16 workers"
