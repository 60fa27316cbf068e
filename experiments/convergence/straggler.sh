#!/usr/bin/env bash
# The straggler case (issue 19): sync, pseudo-sync (arrses) and ssp (s = 2) on
# experiments/convergence/synthetic.json with and without one worker of 16 computing 2x slower
# (variability.stragglers), each over the seeds $SEEDS (default 1-5, see seeds.sh). With one
# replica per worker the math does not depend on who is slow: the accuracy table shows the same
# numbers with and without the straggler, the time table what the straggler costs each scheme
# (simulated time of the 300 iterations, the same at every seed here).
# usage: experiments/convergence/straggler.sh [path/to/sgdsim] [out dir (default results/straggler)]
set -euo pipefail
bin=${1:-./build/sgdsim}
out=${2:-results/straggler}
base=experiments/convergence/synthetic.json
source experiments/convergence/seeds.sh
first=$(printf '%s\n' $SEEDS | head -1)
slow='variability.stragglers={"fraction": 0.0625, "slowdown": 2}'
mkdir -p "$out"
runs=()
for s in "sync|scheme.type=sync" "pseudo_sync-arrses|scheme.type=pseudo_sync" \
         "ssp-2|scheme.type=ssp scheme.staleness=2"; do
  name=${s%%|*}
  sets=()
  for kv in ${s#*|}; do sets+=(--set "$kv"); done
  run_seeds "$out/$name" "$bin" "$base" "${sets[@]}"
  run_seeds "$out/$name-straggler" "$bin" "$base" "${sets[@]}" --set "$slow"
  runs+=("$out/$name" "$out/$name-straggler")
done
/usr/bin/python3 experiments/convergence/accuracy_table.py "${runs[@]}"
echo
echo "| run | simulated time of 300 iterations (s) | identical convergence math at every seed |"
echo "|---|---|---|"
for ((i = 0; i < ${#runs[@]}; i += 2)); do
  for r in "${runs[i]}" "${runs[i+1]}"; do
    /usr/bin/python3 - "$r" "${runs[i]}" $SEEDS <<'PY'
import json, os, sys
run, even, seeds = sys.argv[1], sys.argv[2], sys.argv[3:]
def math(d):  # convergence.csv without its time column
    return [line.split(",", 1)[1] for line in open(os.path.join(d, "convergence.csv"))]
same = all(math(f"{run}/seed-{s}") == math(f"{even}/seed-{s}") for s in seeds)
t = json.load(open(f"{run}/seed-{seeds[0]}/summary.json"))["simulated_time_s"]
print(f"| {os.path.basename(run)} | {t:.2f} | {'yes' if same else 'no'} |")
PY
  done
done
