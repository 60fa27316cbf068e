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
sgdsim="$(realpath "$1")"
astra="$2"
out="$3"
shift 3
gpus=("$@")
[ ${#gpus[@]} -gt 0 ] || gpus=(64 256 1024)
scenario="$root/experiments/examples/01-resnet50-sync-fat-tree.json"
mkdir -p "$out/astra"
cat >"$out/astra/system.json" <<'JSON'
{
  "scheduling-policy": "LIFO",
  "endpoint-delay": 10,
  "active-chunks-per-dimension": 1,
  "preferred-dataset-splits": 1,
  "all-reduce-implementation": ["ring", "ring"],
  "all-gather-implementation": ["ring", "ring"],
  "reduce-scatter-implementation": ["ring", "ring"],
  "all-to-all-implementation": ["ring", "ring"],
  "collective-optimization": "localBWAware",
  "local-mem-bw": 1000000000,
  "boost-mode": 0,
  "roofline-enabled": 0,
  "peak-perf": 900
}
JSON
printf '{\n  "memory-type": "NO_MEMORY_EXPANSION"\n}\n' >"$out/astra/memory.json"

timed() {
  local file="$1"
  shift
  /usr/bin/time -f "%U %S %M" -o "$file.time" "$@" >"$file.stdout" 2>"$file.stderr"
  awk '{printf "%.2f %d\n", $1 + $2, $3}' "$file.time"
}

common=(--set network_model=ideal --set collective.algorithm=hierarchical
  --set collective.intra_algorithm=ring --set collective.inter_algorithm=ring
  --set iterations=1 --set warmup_iterations=0 --set output.timeline=false)
for n in "${gpus[@]}"; do
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
  if [ "$astra" != "-" ]; then
    timed "$out/astra_$n" "$astra" --workload-configuration="$out/et/n$n/r" \
      --system-configuration="$out/astra/system.json" \
      --remote-memory-configuration="$out/astra/memory.json" \
      --network-configuration="$out/astra/network_$n.yml" >"$out/astra_$n.cpu"
    grep -o 'sys\[0\] finished, [0-9]* cycles' "$out/astra_$n.stdout" | grep -o '[0-9]* cycles' |
      cut -d' ' -f1 >"$out/astra_$n.ns"
  fi
  # The same scenario with the ET files as its workload (no model profile beside them).
  /usr/bin/python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); s.pop("model"); s["workload"] = {"chakra": sys.argv[2], "optimizer": "trace"}; json.dump(s, open(sys.argv[3], "w"), indent=1)' \
    "$scenario" "$out/et/n$n/r" "$out/chakra_$n.json"
  for mode in analytic flow rotation; do
    sets=("${size[@]}" "${common[@]}")
    case $mode in
      analytic) sets+=(--set fidelity=analytic) ;;
      rotation) sets+=(--set flow_symmetry=rotation) ;;
    esac
    timed "$out/sgdsim_${mode}_$n" "$sgdsim" run "$out/chakra_$n.json" --out "$out/run_${mode}_$n" \
      --overwrite --quiet --force "${sets[@]}" >"$out/sgdsim_${mode}_$n.cpu"
  done
done

/usr/bin/python3 - "$out" "$astra" "${gpus[@]}" <<'PY'
import json, sys
out, astra, gpus = sys.argv[1], sys.argv[2] != "-", sys.argv[3:]
cpu = lambda f: [float(x) for x in open(f"{out}/{f}.cpu").read().split()]
sim_ns = lambda m, n: json.load(open(f"{out}/run_{m}_{n}/summary.json"))["simulated_time_s"] * 1e9
print("| GPUs (nodes) x 1 iteration | ASTRA-sim: simulated, CPU (peak RSS) | sgdsim flow: simulated | sgdsim analytic: CPU | flow: CPU | flow, rotation: CPU | flow / ASTRA-sim CPU |")
print("|---|---|---|---|---|---|---|")
for n in gpus:
    s = {m: sim_ns(m, n) for m in ("analytic", "flow", "rotation")}
    assert abs(s["flow"] - s["rotation"]) <= 1e-9 * s["flow"], s
    c = {m: cpu(f"sgdsim_{m}_{n}") for m in s}
    a, ratio, gap = "not run", "", ""
    if astra:
        a_ns = float(open(f"{out}/astra_{n}.ns").read())
        a_cpu, a_rss = cpu(f"astra_{n}")
        a = f"{a_ns:,.0f} ns, {a_cpu:.2f} s ({a_rss / 1024:.0f} MiB)"
        ratio = f"x{c['flow'][0] / a_cpu:.2f}"
        gap = f" ({100 * (s['flow'] / a_ns - 1):+.4f} %)"
    print(f"| {int(n):,} ({int(n) // 4}) | {a} | {s['flow']:,.0f} ns{gap} | {c['analytic'][0]:.2f} s "
          f"| {c['flow'][0]:.2f} s ({c['flow'][1] / 1024:.0f} MiB) | {c['rotation'][0]:.2f} s | {ratio} |")
PY
