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
echo "| run | final test accuracy | gap to sync (points) | best accuracy |"
echo "|---|---|---|---|"
/usr/bin/python3 - "${runs[@]}" <<'PY'
import csv, json, os, sys
sync = json.load(open(os.path.join(sys.argv[1], "summary.json")))["training"]["final_accuracy"]
for run in sys.argv[1:]:
    s = json.load(open(os.path.join(run, "summary.json")))
    acc = s["training"]["final_accuracy"]
    best = max(float(r["accuracy"]) for r in csv.DictReader(open(os.path.join(run, "convergence.csv"))))
    print(f"| {os.path.basename(run)} | {100 * acc:.2f} % | {100 * (acc - sync):+.2f} | {100 * best:.2f} % |")
PY
/usr/bin/python3 analysis/plot_convergence.py "${runs[@]}" --out "$out/cnn.png" \
  --title "Pseudo-sync predictors, Fashion-MNIST CNN, 16 workers"
