#!/usr/bin/env bash
# Pseudo-sync predictor comparison (issues 5, 6 and 19): every predictor on
# experiments/convergence/base.json beside sync, each over the seeds $SEEDS (default 1-5, see
# seeds.sh), a table of final accuracy (mean and 95 % t-interval) and a figure (first seed).
# $PREDICTORS (default every predictor) picks the predictors to run.
# usage: experiments/convergence/predictors.sh [path/to/sgdsim] [out dir (default results/predictors)]
set -euo pipefail
bin=${1:-./build/sgdsim}
out=${2:-results/predictors}
base=experiments/convergence/base.json
source experiments/convergence/seeds.sh
mkdir -p "$out"
runs=("$out/sync")
run_seeds "$out/sync" "$bin" "$base"
for p in ${PREDICTORS:-none ema arrses_level holt dc arrses}; do
  run_seeds "$out/pseudo_sync-$p" "$bin" "$base" \
    --set scheme.type=pseudo_sync --set scheme.predictor="$p"
  runs+=("$out/pseudo_sync-$p")
done
/usr/bin/python3 experiments/convergence/accuracy_table.py --update-ms "${runs[@]}"
first=$(printf '%s\n' $SEEDS | head -1)
/usr/bin/python3 analysis/plot_convergence.py "${runs[@]/%//seed-$first}" \
  --out "$out/predictors.png" --title "Pseudo-sync predictors, Fashion-MNIST MLP, 16 workers"
