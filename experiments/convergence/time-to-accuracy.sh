#!/usr/bin/env bash
# Time-to-accuracy in a communication-bound cluster (issue 5): sync against pseudo-sync
# (arrses, and without prediction) on experiments/convergence/time-to-accuracy.json; prints
# the simulated time each needs to reach 85 % test accuracy and writes a figure.
# usage: experiments/convergence/time-to-accuracy.sh [path/to/sgdsim] [out dir (default results/time-to-accuracy)]
set -euo pipefail
bin=${1:-./build/sgdsim}
out=${2:-results/time-to-accuracy}
base=experiments/convergence/time-to-accuracy.json
mkdir -p "$out"
runs=()
run() {
  local name=$1; shift
  "$bin" run "$base" --out "$out/$name" --quiet "$@"
  runs+=("$out/$name")
}
run sync
run pseudo_sync-arrses --set scheme.type=pseudo_sync --set scheme.predictor=arrses
run pseudo_sync-none --set scheme.type=pseudo_sync --set scheme.predictor=none
echo "| run | iteration time (s) | iterations to 85 % | time to 85 % (simulated s) |"
echo "|---|---|---|---|"
for r in "${runs[@]}"; do
  /usr/bin/python3 -c "
import json, os, sys
s = json.load(open(sys.argv[1] + '/summary.json'))
t = s['training']['time_to_target_s']
reached = t is not None
print(f\"| {os.path.basename(sys.argv[1])} | {s['iteration_time_s']['mean']:.3f} | \"
      f\"{s['iterations'] if reached else 'not reached in ' + str(s['iterations'])} | \"
      f\"{t:.1f} |\" if reached else f\"| {os.path.basename(sys.argv[1])} | {s['iteration_time_s']['mean']:.3f} | not reached in {s['iterations']} | - |\")" "$r"
done
/usr/bin/python3 analysis/plot_convergence.py "${runs[@]}" --out "$out/time-to-accuracy.png" \
  --title "Time to 85 %: 64 workers, ResNet-50 timing, 10 GbE (MLP on Fashion-MNIST)"
