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
echo "| run | final test accuracy | gap to sync (points) | best accuracy | update + predict (ms/iter) |"
echo "|---|---|---|---|---|"
/usr/bin/python3 - "${runs[@]}" <<'PY'
import csv, json, os, sys
sync = json.load(open(os.path.join(sys.argv[1], "summary.json")))["training"]["final_accuracy"]
for run in sys.argv[1:]:
    s = json.load(open(os.path.join(run, "summary.json")))
    acc = s["training"]["final_accuracy"]
    best = max(float(r["accuracy"]) for r in csv.DictReader(open(os.path.join(run, "convergence.csv"))))
    print(f"| {os.path.basename(run)} | {100 * acc:.2f} % | {100 * (acc - sync):+.2f} | "
          f"{100 * best:.2f} % | {1e3 * s['update_s_per_iter']:.3f} |")
PY
/usr/bin/python3 analysis/plot_convergence.py "${runs[@]}" --out "$out/predictors.png" \
  --title "Pseudo-sync predictors, Fashion-MNIST MLP, 16 workers"
