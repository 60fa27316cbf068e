#!/usr/bin/env bash
# Time-to-accuracy in a communication-bound cluster (issues 5 and 19): sync against
# pseudo-sync (arrses, and without prediction) on experiments/convergence/time-to-accuracy.json,
# each over the seeds $SEEDS (default 1-5, see seeds.sh); prints the iterations and simulated
# time each needs to reach 80, 83 and 85 % test accuracy (mean and 95 % t-interval over the
# seeds that reach it; the runs stop at 85 %) and writes a figure (first seed). $ONLY (default
# all) names the runs to make.
# usage: experiments/convergence/time-to-accuracy.sh [path/to/sgdsim] [out dir (default results/time-to-accuracy)]
set -euo pipefail
bin=${1:-./build/sgdsim}
out=${2:-results/time-to-accuracy}
base=experiments/convergence/time-to-accuracy.json
source experiments/convergence/seeds.sh
first=$(printf '%s\n' $SEEDS | head -1)
mkdir -p "$out"
runs=()
run() {
  local name=$1; shift
  [[ -z ${ONLY:-} || " $ONLY " == *" $name "* ]] || return 0
  run_seeds "$out/$name" "$bin" "$base" "$@"
  runs+=("$out/$name")
}
run sync
run pseudo_sync-arrses --set scheme.type=pseudo_sync --set scheme.predictor=arrses
run pseudo_sync-none --set scheme.type=pseudo_sync --set scheme.predictor=none
/usr/bin/python3 experiments/convergence/accuracy_table.py --targets 0.80,0.83,0.85 "${runs[@]}"
/usr/bin/python3 analysis/plot_convergence.py "${runs[@]/%//seed-$first}" \
  --out "$out/time-to-accuracy.png" \
  --title "Time to 85 %: 64 workers, ResNet-50 timing, 10 GbE (MLP on Fashion-MNIST)"
