#!/usr/bin/env bash
# Accuracy against simulated time for every scheme (issues 5 and 19): runs each scheme on
# experiments/convergence/base.json over the seeds $SEEDS (default 1-5, see seeds.sh), prints
# final accuracy (mean and 95 % t-interval), the simulated time and staleness (the timing does
# not depend on the seed here: no variability), and writes a figure (first seed). $ONLY
# (default all) names the runs to make; the others are read from OUT as an earlier run left them.
# usage: experiments/convergence/schemes.sh [path/to/sgdsim] [out dir (default results/convergence)]
set -euo pipefail
bin=${1:-./build/sgdsim}
out=${2:-results/convergence}
base=experiments/convergence/base.json
source experiments/convergence/seeds.sh
first=$(printf '%s\n' $SEEDS | head -1)
mkdir -p "$out"
runs=()
run() {
  local name=$1; shift
  if [[ -z ${ONLY:-} || " $ONLY " == *" $name "* ]]; then
    run_seeds "$out/$name" "$bin" "$base" "$@"
  fi
  runs+=("$out/$name")
}
run sync
run pseudo_sync-none --set scheme.type=pseudo_sync --set scheme.predictor=none
run pseudo_sync-arrses --set scheme.type=pseudo_sync --set scheme.predictor=arrses
run ssp-1 --set scheme.type=ssp --set scheme.staleness=1
run local_sgd-4 --set scheme.type=local_sgd --set scheme.period=4
run async-16 --set scheme.type=async --set scheme.servers=16
/usr/bin/python3 experiments/convergence/accuracy_table.py "${runs[@]}"
echo
echo "| run | simulated time (s) | iterations | mean staleness |"
echo "|---|---|---|---|"
for r in "${runs[@]}"; do
  /usr/bin/python3 -c "import json,sys,os; s=json.load(open(sys.argv[1]+'/seed-$first/summary.json')); st=s.get('staleness',{}).get('mean','-'); print(f\"| {os.path.basename(sys.argv[1])} | {s['simulated_time_s']:.2f} | {s['iterations']} | {st} |\")" "$r"
done
/usr/bin/python3 analysis/plot_convergence.py "${runs[@]/%//seed-$first}" \
  --out "$out/accuracy-vs-time.png" --title "Fashion-MNIST MLP, 16 workers (ResNet-50 timing, 25 Gb/s)"
