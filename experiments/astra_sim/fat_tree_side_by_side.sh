#!/usr/bin/env bash
# sgdsim and ASTRA-sim side by side on a multi-GPU workload: example 01 (ResNet-50 sync, WFBP,
# 25 MB buckets; 4-GPU nodes with 12 GB/s, 1 us links to the node's switch, 100 Gb/s, 2 us node
# links, a two-level fat tree of 4 nodes per leaf with 2 us uplinks, not oversubscribed) at GPUS
# GPUs, network model "ideal", the two-dimensional ring (hierarchical, ring inside nodes and
# among them: reduce-scatter in the node, each local rank's shard around the nodes, all-gather).
# `sgdsim dag --format chakra` writes its iteration 0 as per-rank Chakra ET files; ASTRA-sim
# runs them on Ring(4) x Switch(GPUS / 4) with ring collectives in both dimensions, one chunk,
# its local-memory model made free:
#   - the ring inside a node: 12 GB/s and 2 us a hop (two 1 us links in sgdsim);
#   - among nodes: a quarter of the node link per GPU (the four local shards share it), and
#     5 us per switch link (a message between leaves crosses 10 us of links in sgdsim: two GPU
#     links, two node links, two uplinks; within a leaf 6 us, which the ring's slowest hop hides);
#   - ASTRA-sim's GB/s is 2^30 bytes a second.
# sgdsim runs the same files (workload.chakra, 1 iteration; the export holds the update) at
# fidelity analytic, flow and flow with rotation by leaves. Prints simulated times and CPU
# seconds as a Markdown table. ASTRA_BIN "-" runs sgdsim only and leaves ASTRA-sim's inputs in
# OUT (side_by_side.sh says how the binary is built).
#
# usage: experiments/astra_sim/fat_tree_side_by_side.sh SGDSIM ASTRA_BIN|- OUT [GPUS...]
#        (GPUS default 64 256 1024)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# shellcheck source=experiments/astra_sim/side_by_side_lib.sh
source "$here/side_by_side_lib.sh"
side_by_side_args "64 256 1024" "$@"
scenario="$root/experiments/examples/01-resnet50-sync-fat-tree.json"
astra_inputs "$out" 2
common=(--set network_model=ideal --set collective.algorithm=hierarchical
  --set collective.intra_algorithm=ring --set collective.inter_algorithm=ring
  --set iterations=1 --set warmup_iterations=0 --set output.timeline=false)
for n in "${sizes[@]}"; do
  size=(--set "workers.count=$n" --set "platform.generate.nodes=$((n / 4))")
  "$sgdsim" dag "$scenario" --format chakra --out "$out/et/n$n/r" "${size[@]}" "${common[@]}" \
    >/dev/null
  /usr/bin/python3 - "$n" >"$out/astra/network_$n.yml" <<'PY'
import sys
n = int(sys.argv[1])
gib = 2 ** 30
print("topology: [ Ring, Switch ]")
print(f"npus_count: [ 4, {n // 4} ]")
print(f"bandwidth: [ {12e9 / gib!r}, {12.5e9 / 4 / gib!r} ]  # GB/s (2^30 B/s)")
print("latency: [ 2000.0, 5000.0 ]  # ns")
PY
  [ "$astra" = "-" ] || run_astra "$astra" "$out" "$n" "$out/et/n$n/r" "$out/astra/network_$n.yml"
  # The same scenario with the ET files as its workload (no model profile beside them).
  /usr/bin/python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); s.pop("model"); s["workload"] = {"chakra": sys.argv[2], "optimizer": "trace"}; json.dump(s, open(sys.argv[3], "w"), indent=1)' \
    "$scenario" "$out/et/n$n/r" "$out/chakra_$n.json"
  run_sgdsim_modes "$sgdsim" "$out/chakra_$n.json" "$out" "$n" "${size[@]}" "${common[@]}"
done
side_by_side_table "$out" "$astra" "GPUs (nodes) x 1 iteration" "{n:,} ({quarter})" "${sizes[@]}"
