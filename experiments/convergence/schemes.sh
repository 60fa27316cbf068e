#!/usr/bin/env bash
# Accuracy against simulated time for every scheme (issue 5): runs each scheme on
# experiments/convergence/base.json, prints a table and writes a figure.
# usage: experiments/convergence/schemes.sh [path/to/sgdsim] [out dir (default results/convergence)]
set -euo pipefail
bin=${1:-./build/sgdsim}
out=${2:-results/convergence}
base=experiments/convergence/base.json
mkdir -p "$out"
runs=()
run() {
  local name=$1; shift
  "$bin" run "$base" --out "$out/$name" --quiet "$@"
  runs+=("$out/$name")
}
run sync
run pseudo_sync-none --set scheme.type=pseudo_sync --set scheme.predictor=none
run pseudo_sync-arrses --set scheme.type=pseudo_sync --set scheme.predictor=arrses
run ssp-1 --set scheme.type=ssp --set scheme.staleness=1
run local_sgd-4 --set scheme.type=local_sgd --set scheme.period=4
run async-16 --set scheme.type=async --set scheme.servers=16
echo "| run | simulated time (s) | iterations | final test accuracy | mean staleness |"
echo "|---|---|---|---|---|"
for r in "${runs[@]}"; do
  /usr/bin/python3 -c "import json,sys,os; s=json.load(open(sys.argv[1]+'/summary.json')); st=s.get('staleness',{}).get('mean','-'); print(f\"| {os.path.basename(sys.argv[1])} | {s['simulated_time_s']:.2f} | {s['iterations']} | {100*s['training']['final_accuracy']:.1f} % | {st} |\")" "$r"
done
/usr/bin/python3 analysis/plot_convergence.py "${runs[@]}" --out "$out/accuracy-vs-time.png" \
  --title "Fashion-MNIST MLP, 16 workers (ResNet-50 timing, 25 Gb/s)"
