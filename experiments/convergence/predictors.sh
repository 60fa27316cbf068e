#!/usr/bin/env bash
# Pseudo-sync predictor comparison (issues 5 and 6): every predictor on
# experiments/convergence/base.json beside sync, a table of final accuracy and a figure.
# usage: experiments/convergence/predictors.sh [path/to/sgdsim] [out dir (default results/predictors)]
set -euo pipefail
bin=${1:-./build/sgdsim}
out=${2:-results/predictors}
base=experiments/convergence/base.json
mkdir -p "$out"
runs=("$out/sync")
"$bin" run "$base" --out "$out/sync" --quiet
for p in none ema arrses_level holt dc arrses; do
  "$bin" run "$base" --out "$out/pseudo_sync-$p" --quiet \
    --set scheme.type=pseudo_sync --set scheme.predictor="$p"
  runs+=("$out/pseudo_sync-$p")
done
/usr/bin/python3 experiments/convergence/accuracy_table.py --update-ms "${runs[@]}"
/usr/bin/python3 analysis/plot_convergence.py "${runs[@]}" --out "$out/predictors.png" \
  --title "Pseudo-sync predictors, Fashion-MNIST MLP, 16 workers"
