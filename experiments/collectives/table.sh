#!/usr/bin/env bash
# Prints the README's collectives table: every algorithm x ranks x size, simulated at flow
# level on an ideal star (10 Gb/s, 5 us host to host; 4 devices per node at 1 us / 16 GB/s for
# "hierarchical"; 4 server shards for "ps"), beside its closed-form cost.
# usage: experiments/collectives/table.sh [path/to/sgdsim]
set -euo pipefail
bin=${1:-./build/sgdsim}
sizes=(8B 1MB 1GB)
echo "| algorithm | ranks | ${sizes[0]}: simulated / formula | ${sizes[1]}: simulated / formula | ${sizes[2]}: simulated / formula |"
echo "|---|---|---|---|---|"
for algo in ring recursive_halving_doubling recursive_doubling tree hierarchical ps auto; do
  for ranks in 8 64; do
    row="| $algo | $ranks |"
    for n in "${sizes[@]}"; do
      extra=()
      [[ $algo == hierarchical ]] && extra=(--devices-per-node 4 --intra-latency 1us --intra-bandwidth 16GBps)
      [[ $algo == ps ]] && extra=(--servers 4)
      cell=$("$bin" collective --algorithm "$algo" --ranks "$ranks" --bytes "$n" --bandwidth 10Gbps \
               --latency 5us --network-model ideal --json "${extra[@]}" |
             /usr/bin/python3 -c 'import json,sys
j=json.load(sys.stdin)
f=lambda s: "%.4g s" % s if s >= 1 else ("%.4g ms" % (s*1e3) if s >= 1e-3 else "%.4g us" % (s*1e6))
print(f(j["time_s"]) + " / " + f(j["formula_s"]))')
      row+=" $cell |"
    done
    echo "$row"
  done
done
