#!/usr/bin/env bash
# Prints the README's NCCL-style collectives table: each pipelined algorithm x ranks x size,
# simulated at flow level on an ideal star (10 Gb/s, 5 us between nodes; 4 devices per node at
# 100 GB/s and 1 us where a row says so), beside its closed-form cost and the number of
# messages (SimGrid activities) of the 1 GB run.
# usage: experiments/collectives/nccl_table.sh [path/to/sgdsim]
set -euo pipefail
bin=${1:-./build/sgdsim}
sizes=(8B 1MB 1GB)
rows=(
  "ring|--algorithm ring --chunk-bytes 512KiB --channels 2"
  "double_binary_tree|--algorithm double_binary_tree"
  "double_binary_tree|--algorithm double_binary_tree --chunk-bytes 512KiB --channels 2"
  "hierarchical chain+dbt, 4/node|--algorithm hierarchical --intra-algorithm chain --inter-algorithm double_binary_tree --chunk-bytes 512KiB --devices-per-node 4"
  "nccl, 4/node|--algorithm nccl --chunk-bytes 512KiB --devices-per-node 4"
)
echo "| algorithm | options | ranks | ${sizes[0]}: simulated / formula | ${sizes[1]}: simulated / formula | ${sizes[2]}: simulated / formula | messages at ${sizes[2]} |"
echo "|---|---|---|---|---|---|---|"
for row in "${rows[@]}"; do
  name=${row%%|*}
  read -r -a opts <<< "${row#*|}"
  shown=$(echo "${row#*|}" | sed -e 's/--algorithm [a-z_]* *//' -e 's/--devices-per-node 4//' \
            -e 's/--intra-algorithm chain --inter-algorithm double_binary_tree//' -e 's/  */ /g' -e 's/^ //' -e 's/ $//')
  for ranks in 8 64; do
    line="| $name | ${shown:-none} | $ranks |"
    msgs=""
    for n in "${sizes[@]}"; do
      out=$("$bin" collective --ranks "$ranks" --bytes "$n" --bandwidth 10Gbps --latency 5us \
              --intra-bandwidth 100GBps --intra-latency 1us --network-model ideal --json "${opts[@]}")
      cell=$(echo "$out" | /usr/bin/python3 -c 'import json,sys
j=json.load(sys.stdin)
f=lambda s: "%.4g s" % s if s >= 1 else ("%.4g ms" % (s*1e3) if s >= 1e-3 else "%.4g us" % (s*1e6))
print(f(j["time_s"]) + " / " + f(j["formula_s"]))')
      msgs=$(echo "$out" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["activities"])')
      line+=" $cell |"
    done
    echo "$line $msgs |"
  done
done
