#!/usr/bin/env bash
# The synthetic proxy task with headroom (issue 19): every scheme on
# experiments/convergence/synthetic.json (Gaussian mixture, 32 dimensions, overlap 4, 10 %
# label noise), and sync and pseudo-sync none on the default (easy) mixture for comparison,
# each over the seeds $SEEDS (default 1-5, see seeds.sh; the seed also draws the data); a
# table of final accuracy (mean and 95 % t-interval, gap to sync paired by seed) and a figure
# (first seed). $SYNTHETIC adds --set overrides of the hard mixture (e.g.
# "training.synthetic.overlap=5.5").
# usage: experiments/convergence/synthetic.sh [path/to/sgdsim] [out dir (default results/synthetic)]
set -euo pipefail
bin=${1:-./build/sgdsim}
out=${2:-results/synthetic}
base=experiments/convergence/synthetic.json
source experiments/convergence/seeds.sh
first=$(printf '%s\n' $SEEDS | head -1)
extra=()
for kv in ${SYNTHETIC:-}; do extra+=(--set "$kv"); done
mkdir -p "$out"
runs=()
run() {
  local name=$1; shift
  run_seeds "$out/$name" "$bin" "$base" "${extra[@]}" "$@"
  runs+=("$out/$name")
}
run sync
run pseudo_sync-arrses --set scheme.type=pseudo_sync --set scheme.predictor=arrses
run pseudo_sync-none --set scheme.type=pseudo_sync --set scheme.predictor=none
run ssp-2 --set scheme.type=ssp --set scheme.staleness=2
run async-16 --set scheme.type=async --set scheme.servers=16
easy='training.synthetic={"dimension": 32, "overlap": 1.5, "label_noise": 0}'
run easy-sync --set "$easy"
run easy-pseudo_sync-none --set "$easy" --set scheme.type=pseudo_sync --set scheme.predictor=none
/usr/bin/python3 experiments/convergence/accuracy_table.py "${runs[@]}"
hard=("${runs[@]:0:5}")
/usr/bin/python3 analysis/plot_convergence.py "${hard[@]/%//seed-$first}" \
  --out "$out/synthetic.png" --title "Synthetic mixture (overlap 4, 10 % label noise), 16 workers"
